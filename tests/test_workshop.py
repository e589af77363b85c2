"""Timings live in one place: each chapter's front matter.

The chapter's overview box, the workshop plan and the instructor notes are all
drawn from it by ``book/_ext/kvbook_workshop.py``; these tests check the
metadata against the chapters themselves, the plan's arithmetic, that no page
writes minutes by hand, and (on a built site) that the pages show the numbers.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"


def _load():
    spec = importlib.util.spec_from_file_location("kvbook_workshop", ROOT / "book" / "_ext" / "kvbook_workshop.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


W = _load()
CHAPTERS = [d for d in W.toc_docnames(ROOT) if re.match(r"book/ch\d\d-", d)]
TIMINGS = W.chapter_timings(ROOT)


def test_every_chapter_states_its_timings():
    assert CHAPTERS, "no chapters in _toc.yml"
    assert [t.docname for t in TIMINGS] == CHAPTERS


@pytest.mark.parametrize("timing", TIMINGS, ids=[t.docname for t in TIMINGS])
def test_the_timed_sections_are_the_chapters_sections(timing):
    headings = W.section_titles(ROOT / (timing.docname + ".ipynb"))
    assert "Exercises" in headings, f"{timing.docname} has no '## Exercises' section"
    assert list(timing.teaching) == [h for h in headings if h != "Exercises"], (
        f"{timing.docname}: the front matter times {list(timing.teaching)}, the chapter has {headings}")
    assert 20 <= timing.teaching_minutes <= 60 and 10 <= timing.exercises <= 40


@pytest.mark.parametrize("timing", TIMINGS, ids=[t.docname for t in TIMINGS])
def test_each_chapter_has_instructor_notes_drawn_from_its_timings(timing):
    notes = ROOT / "book" / "instructor-notes" / (Path(timing.docname).name[:4] + ".md")
    assert notes.exists(), f"no instructor notes for {timing.docname} at {notes.relative_to(ROOT)}"
    text = notes.read_text()
    block = re.search(r"```\{timing-table\}\s+(\S+)\n(.*?)```", text, re.S)
    assert block and block.group(1) == timing.docname, f"{notes.name} has no timing-table for its chapter"
    rows = [line.split("|", 1)[0].strip() for line in block.group(2).splitlines() if line.strip()]
    assert W.notes_mismatch(timing, rows) is None, W.notes_mismatch(timing, rows)


def test_notes_that_disagree_with_the_chapter_are_refused():
    t = TIMINGS[0]
    titles = [title for title, _ in t.parts]
    assert titles.index("Exercises") == W.section_titles(ROOT / (t.docname + ".ipynb")).index("Exercises")
    assert W.notes_mismatch(t, titles) is None
    assert "missing" in W.notes_mismatch(t, titles[1:])
    assert "not in the chapter" in W.notes_mismatch(t, titles + ["Lunch"])
    assert "order" in W.notes_mismatch(t, list(reversed(titles)))


def test_no_page_writes_minutes_by_hand():
    """Minutes come from the directives; a hand-written "Teaching: 40 min" would drift."""
    pattern = re.compile(r"(Teaching|Exercises)\s*:?\*{0,2}\s*\d+\s*min|\b\d+\s*\+\s*\d+\s*min", re.I)
    offenders = []
    for path in list((ROOT / "book").rglob("*.md")) + list((ROOT / "book").rglob("*.ipynb")):
        if "_build" in path.parts or "_vendor" in path.parts:
            continue
        text = path.read_text()
        if path.suffix == ".ipynb":
            import nbformat

            text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                             if c.cell_type == "markdown")
        offenders += [f"{path.relative_to(ROOT)}: {m.group(0)!r}" for m in pattern.finditer(text)]
    assert not offenders, offenders


def _stretches(slots):
    run = longest = 0
    for s in slots:
        run = 0 if s.kind == "break" else run + s.minutes
        longest = max(longest, run)
    return longest


def _check_plan(slots, chapters, session_minutes=180, break_after=75):
    for session in {s.session for s in slots}:
        mine = [s for s in slots if s.session == session]
        assert mine[0].kind == "setup" and mine[-1].kind == "wrap-up"
        assert mine[0].start == 0 and sum(s.minutes for s in mine) == session_minutes
        assert all(a.start + a.minutes == b.start for a, b in zip(mine, mine[1:])), "gap or overlap"
        assert _stretches(mine) <= break_after, [(s.start, s.kind) for s in mine]
        assert sum(s.kind == "break" for s in mine) >= 1
    placed = [(s.docname, s.kind) for s in slots if s.docname]
    assert placed == [(c.docname, k) for c in chapters for k in ("teaching", "exercises")]


def test_the_plan_fills_three_hours_with_breaks_from_the_chapters_minutes():
    slots = W.workshop_plan(TIMINGS)
    _check_plan(slots, TIMINGS)
    for t in TIMINGS:
        got = {s.kind: s.minutes for s in slots if s.docname == t.docname}
        assert got == {"teaching": t.teaching_minutes, "exercises": t.exercises}


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_the_plan_stays_valid_as_chapters_land(n):
    base = TIMINGS[0]
    chapters = [dataclasses.replace(base, docname=f"book/ch{i:02d}-x", title=f"chapter {i}")
                for i in range(1, n + 1)]
    slots = W.workshop_plan(chapters)
    _check_plan(slots, chapters)
    assert max(s.session for s in slots) >= (n * base.total_minutes) // 180


def test_the_missions_are_the_last_hour_of_the_whole_plan():
    slots = W.workshop_plan(TIMINGS, missions_minutes=60)
    _check_plan(slots, TIMINGS)
    missions = [s for s in slots if s.title == W.MISSIONS_TITLE]
    assert len(missions) == 1 and missions[0].minutes == 60 and missions[0].kind == "lab"
    # nothing from a chapter comes after it
    assert all(s.docname is None for s in slots if (s.session, s.start) > (missions[0].session,
                                                                           missions[0].start))
    assert missions[0].session == max(s.session for s in slots)


def test_the_short_version_keeps_each_chapters_core_sections_in_90_minutes():
    chapters = [t for t in TIMINGS if t.short]
    assert len(chapters) == len(TIMINGS), "every chapter names its core sections"
    slots = W.workshop_plan(TIMINGS, session_minutes=90, break_after=90, setup_minutes=5,
                            wrap_up_minutes=5, short=True)
    assert {s.session for s in slots} == {1}, "the short version is one session"
    assert sum(s.minutes for s in slots) == 90 and slots[-1].kind == "wrap-up"
    for t in chapters:
        got = {s.kind: s.minutes for s in slots if s.docname == t.docname}
        assert got["teaching"] == sum(t.teaching[x] for x in t.short)
        assert got.get("exercises", 0) == t.short_exercises


def test_a_short_section_the_chapter_lacks_is_refused(tmp_path):
    nb = json.loads((ROOT / (CHAPTERS[0] + ".ipynb")).read_text())
    nb["metadata"]["kvbook"]["timing"]["short"] = {"sections": ["No such section"]}
    bad = tmp_path / "ch99-bad.ipynb"
    bad.write_text(json.dumps(nb))
    with pytest.raises(ExtensionError, match="'No such section' is not in teaching"):
        W.read_timing(bad)


def _page_plans() -> list[dict]:
    """The options of every {workshop-plan} directive in book/workshop.md, as keyword arguments."""
    text = (ROOT / "book" / "workshop.md").read_text()
    plans = []
    for block in re.findall(r"```\{workshop-plan\}\n(.*?)```", text, re.S):
        options = {}
        for name, value in re.findall(r"^:([\w-]+):\s*(\S*)", block, re.M):
            key = name.replace("-", "_")
            options[key] = True if key == "short" else int(value)
        plans.append(options)
    return plans


@pytest.mark.skipif(not (SITE / "book" / "workshop.html").exists(), reason="site not built (make book)")
def test_the_built_pages_show_the_front_matter_minutes():
    t = TIMINGS[0]
    chapter = (SITE / (t.docname + ".html")).read_text()
    assert f"Teaching: {t.teaching_minutes} min · Exercises: {t.exercises} min" in chapter
    plan = (SITE / "book" / "workshop.html").read_text()
    plans = _page_plans()
    assert len(plans) == 2, "the whole book and the 90-minute version"
    for options in plans:
        for s in W.workshop_plan(TIMINGS, **options):
            assert f"{s.start}-{s.start + s.minutes}" in plan
    notes = (SITE / "book" / "instructor-notes" / (Path(t.docname).name[:4] + ".html")).read_text()
    assert f"Total: {t.total_minutes} min" in notes
    start = 0
    for title, minutes in t.parts:
        assert f"{start}-{start + minutes}" in notes
        start += minutes
