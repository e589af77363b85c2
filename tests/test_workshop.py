"""Timings live in one place: each chapter's front matter.

The chapter's overview box, the workshop plan and the instructor notes are all
drawn from it by ``book/_ext/kvbook_workshop.py``; these tests check the
metadata against the chapters themselves, the plan's arithmetic, that no page
writes minutes by hand, and (on a built site) that the pages show the numbers.
"""
from __future__ import annotations

import dataclasses
import html
import importlib.util
import itertools
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
#: The chapters the workshop's plans teach (chapter 6 is timed, but outside the plans).
PLANNED = [t for t in TIMINGS if t.number in W.WORKSHOP_CHAPTERS]


def _longest_stretch(blocks: list[int], cut: tuple[int, ...]) -> int:
    """The longest run of minutes between breaks placed after the blocks numbered ``cut``."""
    bounds = (0, *cut, len(blocks))
    return max(sum(blocks[i:j]) for i, j in itertools.pairwise(bounds))


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
        assert all(a.start + a.minutes == b.start for a, b in itertools.pairwise(mine)), "gap or overlap"
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


def test_the_missions_lab_closes_the_full_plan_in_its_front_matter_parts():
    slots = W.plan("full", TIMINGS)
    _check_plan(slots, PLANNED, **{k: W.PLANS["full"][k] for k in ("session_minutes",
                                                                   "break_after")})
    lab = next(t for t in TIMINGS if t.lab)
    parts = W.missions_hour(TIMINGS, slots)
    assert [p for p, _, _ in parts] == [p for p, _ in lab.lab]
    mine = [s for s in slots if s.title.startswith(W.MISSIONS_TITLE)]
    assert [s.minutes for s in mine] == [m for _, m in lab.lab]
    last = max(s.session for s in slots if s.docname)
    assert {s.session for s in mine} == {last}
    # nothing from a chapter comes after the lab (the two days end on the learners' servers)
    assert all(s.docname is None for s in slots if (s.session, s.start) > (last, mine[0].start))
    assert [s.title for s in slots if s.session == last + 1 and s.kind in ("lab", "discussion")] == \
        [title for _, title, _ in W.OWN_SERVER_SESSION]


def test_the_short_version_keeps_each_chapters_core_and_closes_with_a_mission():
    assert all(t.short for t in TIMINGS), "every chapter names its core sections"
    chapters = PLANNED
    slots = W.plan("short", TIMINGS)
    opts = W.PLANS["short"]
    assert {s.session for s in slots} == {1}, "the short version is one session"
    assert sum(s.minutes for s in slots) == opts["session_minutes"]
    assert slots[-1].kind == "wrap-up" and slots[-2].kind == "mission"
    closing = [t for t in TIMINGS if t.closing]
    assert len(closing) == 1 and slots[-2].docname == closing[0].docname
    assert slots[-2].minutes == closing[0].short_teaching_minutes
    for t in chapters:
        got = {s.kind: s.minutes for s in slots if s.docname == t.docname}
        assert got.get("teaching", got.get("mission")) == sum(t.teaching[x] for x in t.short)
        assert got.get("exercises", 0) == t.short_exercises
        names = dict(t.exercise_titles)
        assert all(x in names for x in t.short_set)


def _stretches_of(session):
    out, run = [], 0
    for s in session:
        if s.kind == "break":
            out.append(run)
            run = 0
        else:
            run += s.minutes
    return out + [run]


@pytest.mark.parametrize("name", sorted(W.PLANS))
def test_breaks_are_as_few_and_as_evenly_spaced_as_the_blocks_allow(name):
    import itertools

    opts = W.PLANS[name]
    slots = W.plan(name, TIMINGS)
    for n in {s.session for s in slots}:
        mine = [s for s in slots if s.session == n]
        got = _stretches_of(mine)
        assert max(got) <= opts["break_after"], (n, got)
        blocks = [s.minutes for s in mine if s.kind != "break"]
        k = len(got) - 1
        if k:
            assert min(got) >= 30, (n, got)         # no two breaks close together
            # no placement of k breaks at the block boundaries is more even
            assert max(got) == min(_longest_stretch(blocks, cut) for cut in
                                   itertools.combinations(range(1, len(blocks)), k)), (n, got)
            assert max(got) - min(got) <= 30, (n, got)
            # one break fewer (its minutes going to the wrap-up) would leave a stretch too long
            longer = blocks[:-1] + [blocks[-1] + opts["break_minutes"]]
            for c in itertools.combinations(range(1, len(longer)), k - 1):
                b = (0, *c, len(longer))
                assert max(sum(longer[i:j]) for i, j in itertools.pairwise(b)) > opts["break_after"]


def _session_sums(slots):
    return {n: sum(s.minutes for s in slots if s.session == n) for n in {s.session for s in slots}}


@pytest.mark.parametrize("name", sorted(W.PLANS))
def test_every_plan_adds_up_with_set_up_breaks_and_wrap_up(name):
    opts = W.PLANS[name]
    slots = W.plan(name, TIMINGS)
    assert set(_session_sums(slots).values()) == {opts["session_minutes"]}, _session_sums(slots)
    for n in {s.session for s in slots}:
        mine = [s for s in slots if s.session == n]
        assert mine[0].start == 0 and mine[0].kind == "setup" and mine[-1].kind == "wrap-up"
        assert all(a.start + a.minutes == b.start for a, b in itertools.pairwise(mine)), "gap or overlap"
        assert _stretches(mine) <= opts["break_after"]
    # every break tells a Binder room to save first (a session idle ~10 minutes is deleted)
    assert all("On Binder, save first" in s.title and "--export" in s.title
               for s in slots if s.kind == "break")


def test_the_half_days_the_day_and_the_two_days_take_what_their_format_says():
    by_number = {t.number: t for t in TIMINGS}

    def taught(name):
        return {s.docname: s.minutes for s in W.plan(name, TIMINGS) if s.kind == "teaching"}

    # half a day on chapters 1-3, half a day on 4-5 and the lab: each chapter's core, in one session
    for name, numbers in (("foundations", (1, 2, 3)), ("practice", (4, 5))):
        slots = W.plan(name, TIMINGS)
        assert {s.session for s in slots} == {1}
        assert taught(name) == {by_number[n].docname: by_number[n].core_teaching_minutes for n in numbers}
        assert all(not t.startswith(W.TRY_IT) for n in numbers for t in by_number[n].core)
        assert f"chapter {numbers[0]}" in slots[0].title
    practice = W.plan("practice", TIMINGS)
    lab = next(t for t in TIMINGS if t.lab)
    assert [p for p, _, _ in W.missions_hour(TIMINGS, practice)] == \
        [p for p, _ in lab.lab if not p.startswith("set-up")]            # chapter 5 ran just before
    assert "foundations" in W.PLAN_TITLES and all(name in W.PLAN_TITLES for name in W.PLANS)
    # a day: both halves, a morning and an afternoon
    day = W.plan("day", TIMINGS)
    assert max(s.session for s in day) == 2
    assert taught("day") == {**taught("foundations"), **taught("practice")}
    # two days: every chapter whole (teaching and exercises), then the learners' own servers
    full = W.plan("full", TIMINGS)
    assert taught("full") == {t.docname: t.teaching_minutes for t in PLANNED}
    assert max(s.session for s in full) == 4


@pytest.mark.parametrize("name", sorted(W.PLANS))
def test_what_to_cut_when_late_is_never_a_core_section(name):
    slots = W.plan(name, TIMINGS)
    cuts = W.cuts_when_late(slots, TIMINGS, name)
    for session, items in cuts.items():
        taught = {s.docname for s in slots if s.session == session and s.kind == "teaching"}
        assert all(ch.docname in taught and title not in ch.short and title != "Key points"
                   for ch, title, _ in items), (session, items)
        minutes = [m for _, _, m in items]
        assert sum(minutes[:-1]) < W.LATE_MINUTES, "one cut more than it takes"
    if name != "short":        # the short plan is its chapters' cores already
        assert cuts, f"{name}: nothing to cut in any session"


def test_no_session_is_mostly_filler():
    slots = W.plan("full", TIMINGS)
    for n in {s.session for s in slots}:
        fill = sum(s.minutes for s in slots if s.session == n and s.kind in
                   ("discussion", "review"))
        assert fill <= 30, (n, fill)


NOTES = ROOT / "book" / "instructor-notes"


@pytest.mark.parametrize("timing", TIMINGS, ids=[t.docname for t in TIMINGS])
def test_each_chapters_notes_quote_the_short_plan_from_the_same_front_matter(timing):
    text = (NOTES / (Path(timing.docname).name[:4] + ".md")).read_text()
    assert re.findall(r"```\{short-slot\}\s+(\S+)", text) == [timing.docname]
    slots = W.plan("short", TIMINGS)
    line = W.short_slot_text(timing, slots)
    mine = [s for s in slots if s.docname == timing.docname]
    if timing not in PLANNED:                # outside the plans: the notes say it is left out
        assert not mine and "left out" in line
        return
    assert mine and all(f"minutes {s.start}-{s.start + s.minutes}" in line for s in mine)
    names = dict(timing.exercise_titles)
    assert all(names[x] in line for x in timing.short_set)
    assert ("no exercises" in line) == (not timing.short_exercises and not timing.closing)
    assert ("closing mission" in line) == timing.closing


#: What a hand-written slot looks like: "For a 45-minute slot", "the last hour",
#: "35 minutes on missions 2 to 4". The plans and the notes' slots are directives.
HAND_SLOT = re.compile(r"\b\d+[- ]minute (slot|plan|version|session|block|lab)|\blast hour\b|"
                       r"\blab hour\b|\b\d+ minutes (to|on|for) |\b\d+-minute version", re.I)


def test_no_note_or_plan_page_states_slot_minutes_by_hand():
    offenders = []
    for path in [ROOT / "book" / "workshop.md", *sorted(NOTES.glob("*.md"))]:
        text = path.read_text()
        offenders += [f"{path.name}: {m.group(0)!r}" for m in HAND_SLOT.finditer(text)]
    assert not offenders, offenders
    page = (ROOT / "book" / "workshop.md").read_text()
    assert re.findall(r"^:plan:\s*(\S+)", page, re.M) == list(W.PLANS)
    assert not re.search(r"^:(session|break|setup|wrap-up|lab|missions)-minutes:", page, re.M)


def test_chapter_5s_notes_draw_the_lab_hour_and_the_answer_key():
    text = (NOTES / "ch05.md").read_text()
    assert "```{missions-hour}" in text and "```{answer-key}" in text
    key = text[text.index("## Answer key"):]
    key = key[:key.index("When a pair is stuck")]
    assert not re.search(r"\b0\.\d+\b", key), "answer-key numbers typed by hand"


def test_the_answer_key_cells_come_from_the_rows():
    spec = importlib.util.spec_from_file_location(
        "kvbook_answer_key", ROOT / "book" / "_ext" / "kvbook_answer_key.py")
    ak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ak)
    row = dict(mission=4, title="A burst", prediction={"band": (0.04, 0.06)},
               cause_text="admission fills the cache", expert={"watermark": 0.04},
               expert_stars=3, ticket={"watermark": 0.0}, ticket_stars=0, ticket_days=1,
               days=5, trap={"watermark": 0.05}, trap_warm_days=5)
    assert ak.answer_rows([row]) == [[
        "4. A burst", "the band 0.04 to 0.06 (admission fills the cache)", "watermark=0.04",
        "3 stars", "watermark=0: 0 stars (1 of 5 days)", "watermark=0.05: 5 of 5 days warm"]]
    assert ak.answer_rows([dict(row, trap=None)])[0][-1] == "nothing on the grid"
    cause = dict(row, prediction={"cause": "headroom"}, trap=dict(row["expert"]))
    assert ak.answer_rows([cause])[0][1] == "headroom (admission fills the cache)"
    assert ak.answer_rows([cause])[0][-1] == "the expert settings too (5 of 5 days warm)"


def test_a_short_set_exercise_the_chapter_lacks_is_refused(tmp_path):
    nb = json.loads((ROOT / (CHAPTERS[0] + ".ipynb")).read_text())
    nb["metadata"]["kvbook"]["timing"]["short"]["set"] = ["ch01-no-such"]
    bad = tmp_path / "ch99-bad.ipynb"
    bad.write_text(json.dumps(nb))
    with pytest.raises(ExtensionError, match="exercise 'ch01-no-such' is not in the chapter"):
        W.read_timing(bad)
    nb["metadata"]["kvbook"]["timing"]["short"]["set"] = []
    bad.write_text(json.dumps(nb))
    with pytest.raises(ExtensionError, match="expected minutes exactly when the set"):
        W.read_timing(bad)


def test_a_short_section_the_chapter_lacks_is_refused(tmp_path):
    nb = json.loads((ROOT / (CHAPTERS[0] + ".ipynb")).read_text())
    nb["metadata"]["kvbook"]["timing"]["short"] = {"sections": ["No such section"]}
    bad = tmp_path / "ch99-bad.ipynb"
    bad.write_text(json.dumps(nb))
    with pytest.raises(ExtensionError, match="'No such section' is not in teaching"):
        W.read_timing(bad)


def _page_plans() -> list[str]:
    """The ``:plan:`` of every {workshop-plan} directive in book/workshop.md."""
    text = (ROOT / "book" / "workshop.md").read_text()
    return [re.search(r"^:plan:\s*(\S+)", block, re.M).group(1)
            for block in re.findall(r"```\{workshop-plan\}\n(.*?)```", text, re.S)]


@pytest.mark.skipif(not (SITE / "book" / "workshop.html").exists(), reason="site not built (make book)")
def test_the_built_pages_show_the_front_matter_minutes():
    t = TIMINGS[0]
    chapter = (SITE / (t.docname + ".html")).read_text()
    assert f"Teaching: {t.teaching_minutes} min · Exercises: {t.exercises} min" in chapter
    plan = (SITE / "book" / "workshop.html").read_text()
    plans = _page_plans()
    assert plans == list(W.PLANS), "every format the page offers"
    for name in plans:
        for s in W.plan(name, TIMINGS):
            assert f"{s.start}-{s.start + s.minutes}" in plan
        shown = html.unescape(plan).replace("\u2019", "'")       # Sphinx's smart apostrophes
        for items in W.cuts_when_late(W.plan(name, TIMINGS), TIMINGS, name).values():
            assert all(f"\u201c{title.replace('`', '')}\u201d" in shown for _, title, _ in items), items
    assert plan.count("Running late: cut, in this order") >= len(plans) - 1
    notes = (SITE / "book" / "instructor-notes" / (Path(t.docname).name[:4] + ".html")).read_text()
    assert f"Total: {t.total_minutes} min" in notes
    start = 0
    for _title, minutes in t.parts:
        assert f"{start}-{start + minutes}" in notes
        start += minutes


def _answer_key_module():
    spec = importlib.util.spec_from_file_location(
        "kvbook_answer_key", ROOT / "book" / "_ext" / "kvbook_answer_key.py")
    ak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ak)
    return ak


@pytest.mark.parametrize("timing", TIMINGS, ids=[t.docname for t in TIMINGS])
def test_each_chapters_notes_carry_its_answer_key_from_the_checks(timing):
    """One page per chapter: every exercise answered as its check judges it, every slip the
    check names, every Predict box's value, from the data the site's checks run on."""
    from kvsim.book import checks_site

    text = (NOTES / (Path(timing.docname).name[:4] + ".md")).read_text()
    assert re.findall(r"```\{chapter-key\}\s+(\S+)", text) == [timing.docname]
    data = checks_site.read_site_data((ROOT / checks_site.DATA_PATH).read_text(encoding="utf-8"))
    ak = _answer_key_module()
    nb = json.loads((ROOT / (timing.docname + ".ipynb")).read_text())
    predictions = re.findall(r'exercises\.predict\("([\w-]+)"',
                             "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"))
    ex_rows, pr_rows = ak.chapter_key_rows(data, list(timing.exercise_titles), predictions)
    assert len(ex_rows) == len(timing.exercise_titles) >= 5 and len(pr_rows) == len(predictions) >= 1
    for (ex_id, title), row in zip(timing.exercise_titles, ex_rows, strict=True):
        entry = data["exercises"][ex_id]
        assert title in row[0] and row[2] == entry["why"]
        assert all(hint in row[3] for _, hint in entry["traps"])
    built = SITE / "book" / "instructor-notes" / (Path(timing.docname).name[:4] + ".html")
    if built.exists():
        page = html.unescape(re.sub(r"<[^>]+>", " ", built.read_text()))
        assert all(row[1] in page for row in ex_rows), "an answer the built key does not show"


def test_an_answer_reads_as_the_check_accepts_it():
    ak = _answer_key_module()
    base = {"kind": "int", "unit": "bytes", "expected": 196608, "abs_tol": 0.0, "rel_tol": 0.0,
            "between": None, "traps": [], "why": "w"}
    assert ak.answer_text(base) == "196,608 bytes"
    assert ak.answer_text(dict(base, kind="float", unit="GiB", expected=9.131, abs_tol=0.02)) == \
        "9.131 GiB (\u00b10.02)"
    assert ak.answer_text(dict(base, kind="float", unit="ms", between=[229.5, 4403.0])) == \
        "between 229.5 and 4,403 ms"
    assert ak.answer_text(dict(base, kind="choice", expected="swap")) == "\u201cswap\u201d"
