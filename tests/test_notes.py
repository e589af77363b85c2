"""Every deliberate difference from the engines kvsim models is marked where it is made.

``book/engine-reference.md`` (the book's *How kvsim models a serving engine*)
tags each difference ``NOTE(tag)``; the line of kvsim that makes it carries
the same ``NOTE(tag)``. Both ways: a difference the page lists has its line,
and a NOTE in the code is on the page. A bare ``NOTE`` without a tag is not
allowed (nobody could find its page entry).
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "book" / "engine-reference.md"
TAG = re.compile(r"\bNOTE\(([a-z0-9-]+)\)")
BARE = re.compile(r"\bNOTE\b(?!\()")


def _code_notes() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "kvsim").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for tag in TAG.findall(line):
                found.setdefault(tag, []).append(f"{path.relative_to(ROOT)}:{n}")
    return found


def _page_tags() -> set[str]:
    return set(TAG.findall(REFERENCE.read_text(encoding="utf-8")))


def test_every_difference_on_the_page_is_marked_in_the_code():
    missing = sorted(_page_tags() - set(_code_notes()))
    assert not missing, f"book/engine-reference.md lists NOTE tags no kvsim line carries: {missing}"


def test_every_note_in_the_code_is_on_the_page():
    unlisted = {t: w for t, w in _code_notes().items() if t not in _page_tags()}
    assert not unlisted, f"NOTEs in kvsim that book/engine-reference.md does not list: {unlisted}"


def test_every_bullet_of_the_differences_section_has_its_tag():
    text = REFERENCE.read_text(encoding="utf-8")
    section = text.split("## Where kvsim differs on purpose", 1)[1].split("\n## ", 1)[0]
    bullets = re.split(r"\n(?=- )", section[section.index("\n- "):].strip())
    untagged = [b.splitlines()[0] for b in bullets if not TAG.search(b)]
    assert len(bullets) >= 8 and not untagged, f"differences without a NOTE(tag): {untagged}"


def test_no_bare_note_in_kvsim():
    bare = [f"{p.relative_to(ROOT)}:{n}" for p in sorted((ROOT / "kvsim").rglob("*.py"))
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if BARE.search(line) and "NOTE(tag)" not in line]
    assert not bare, f"NOTE without a tag (write NOTE(tag) and list it in the reference): {bare}"
