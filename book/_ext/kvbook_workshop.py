"""Sphinx extension: every chapter's minutes in one place, and the pages built from them.

Each chapter notebook states its timings in its front matter (the notebook's
metadata), and nowhere else::

    "kvbook": {"timing": {
        "teaching": [{"section": "What one token costs", "minutes": 9},
                     {"section": "The memory budget", "minutes": 7}, ...],
        "exercises": 25
    }}

``teaching`` lists each ``##`` section of the chapter but "Exercises", in
order, with its minutes (a list: notebooks are saved with sorted keys, so a
mapping would lose the order); ``exercises`` is the exercise time. A chapter's
overview box quotes them with ``{eval}`chapter_timing("chNN-....ipynb")```
(:func:`kvsim.book.notebook.chapter_timing`, which renders in JupyterLab too). Two
directives read them:

``{workshop-plan}``
    One of the workshop's timed plans (``:plan:`` one of :data:`PLANS`: the
    formats teachers run, from a 90-minute slot to two days), with what to cut
    when a session runs late: the chapters in book order, packed into
    sessions of ``:session-minutes:`` (180) with a break whenever
    ``:break-after:`` (75) minutes would pass without one, a set-up check
    first and a wrap-up last. Time a session has left over goes to the
    "your own server" lab (when it gets at least ``:lab-minutes:``) and a
    discussion of the frequently argued points; a chapter that does not fit
    moves to the next session. Chapters appear as they land: a notebook
    without timings is not a chapter yet.
    With ``:missions-minutes: N`` the chapter-5 missions close the plan as
    its last block; with ``:short:`` each chapter contributes only the
    sections its front matter names under ``"short": {"sections": [...],
    "exercises": n}`` (a chapter without it is left out): the short version.
``{timing-table} <chapter>``
    An instructor-notes table: one row per section with its minute range,
    from the chapter's metadata, and what to do in the room, from the
    directive's body (``Section title | what to do``, one per line, plus an
    ``Exercises | ...`` line). A title the chapter does not have, or a
    section the notes leave out, stops the build.

So the overview, the plan and the notes cannot disagree: they are all drawn
import itertools
from the same numbers (``tests/test_workshop.py`` checks the metadata against
the chapters' headings).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

#: Where a notebook keeps its timings: ``metadata[KEY]["timing"]``.
KEY = "kvbook"


@dataclass(frozen=True)
class ChapterTiming:
    """One chapter's minutes, read from its notebook."""

    docname: str           # "book/ch01-bytes-and-capacity"
    title: str             # the notebook's first "# " heading
    teaching: dict         # section title -> minutes, in order
    exercises: int
    order: tuple = ()      # every timed section and "Exercises", in the chapter's order
    short: tuple = ()      # the sections a short workshop keeps (their minutes as above)
    short_exercises: int = 0
    short_set: tuple = ()  # the exercises (ids, "ch01-gqa-bytes") the short workshop gives
    closing: bool = False  # the short workshop's closing mission is this chapter's short part
    lab: tuple = ()        # (part, minutes) of the missions' lab hour, closing the full plan
    exercise_titles: tuple = ()   # (id, title) of every exercise of the chapter, in order

    @property
    def parts(self) -> list[tuple[str, int]]:
        """``(section, minutes)`` in the chapter's order, "Exercises" where it stands."""
        order = self.order or tuple(self.teaching) + ("Exercises",)
        return [(t, self.exercises if t == "Exercises" else self.teaching[t]) for t in order]

    @property
    def teaching_minutes(self) -> int:
        return sum(self.teaching.values())

    @property
    def total_minutes(self) -> int:
        return self.teaching_minutes + self.exercises

    @property
    def short_teaching_minutes(self) -> int:
        return sum(self.teaching[t] for t in self.short)

    @property
    def number(self) -> int:
        """The chapter's number, from its file name (``book/ch04-...`` is 4)."""
        m = re.search(r"ch(\d\d)-", self.docname)
        return int(m.group(1)) if m else 0

    @property
    def core(self) -> tuple:
        """The sections a compact plan keeps: every timed one but the "Try it" widgets."""
        return tuple(t for t in self.teaching if not t.startswith(TRY_IT))

    @property
    def core_teaching_minutes(self) -> int:
        return sum(self.teaching[t] for t in self.core)


def _positive(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ExtensionError(f"{where} = {value!r}: expected a whole number of minutes above 0")
    return value


def read_timing(path: Path, docname: str | None = None) -> ChapterTiming | None:
    """The timings in a notebook's metadata, or ``None`` when it has none."""
    nb = json.loads(Path(path).read_text())
    block = nb.get("metadata", {}).get(KEY, {}).get("timing")
    if block is None:
        return None
    where = f"{path.name}: metadata.{KEY}.timing"
    parts = block.get("teaching")
    if (not isinstance(parts, list) or not parts
            or not all(isinstance(p, dict) and set(p) == {"section", "minutes"} for p in parts)):
        raise ExtensionError(f"{where}.teaching = {parts!r}: expected a list of "
                             f'{{"section": title, "minutes": n}} in the order of the chapter')
    teaching = _teaching(parts, where)
    exercises = _positive(block.get("exercises"), f"{where}.exercises")
    short, short_exercises, short_set, closing = _short_part(block, teaching, where)
    lab = _lab_hour(block, where)
    title = _chapter_title(nb)
    order = tuple(t for t in section_titles(path) if t in teaching or t == "Exercises")
    titles = exercise_titles(path)
    missing = [x for x in short_set if x not in dict(titles)]
    if missing:
        raise ExtensionError(f"{where}.short.set: exercise {missing[0]!r} is not in the "
                             f"chapter: expected one of {', '.join(x for x, _ in titles)}")
    return ChapterTiming(docname or str(path.with_suffix("")), title, teaching, exercises, order,
                         short, short_exercises, short_set, closing, lab, titles)


def _teaching(parts: list, where: str) -> dict[str, int]:
    """The teaching sections' minutes by title, in the chapter's order."""
    teaching = {}
    for i, part in enumerate(parts):
        title = str(part["section"])
        if title in teaching:
            raise ExtensionError(f"{where}.teaching[{i}]: section {title!r} is listed twice")
        teaching[title] = _positive(part["minutes"], f"{where}.teaching[{i}].minutes")
    return teaching


def _short_part(block: dict, teaching: dict[str, int], where: str
                ) -> tuple[tuple, int, tuple, bool]:
    """``(sections, exercise minutes, exercise set, closing mission)`` of the short version
    (empty, 0, empty and False when the chapter has none)."""
    if "short" not in block:
        return (), 0, (), False
    spec = block["short"]
    if not isinstance(spec, dict) or not isinstance(spec.get("sections"), list) \
            or not spec["sections"]:
        raise ExtensionError(f"{where}.short = {spec!r}: expected "
                             '{"sections": [titles from teaching], "exercises": n}')
    unknown = [t for t in spec["sections"] if t not in teaching]
    if unknown:
        raise ExtensionError(f"{where}.short: section {unknown[0]!r} is not in teaching: "
                             f"expected one of {', '.join(teaching)}")
    unknown_keys = sorted(set(spec) - {"sections", "exercises", "set", "closing_mission"})
    if unknown_keys:
        raise ExtensionError(f"{where}.short: unknown field {unknown_keys[0]!r}: expected "
                             "sections, exercises, set, closing_mission")
    short = tuple(str(t) for t in spec["sections"])
    short_exercises = spec.get("exercises", 0)
    if short_exercises:
        short_exercises = _positive(short_exercises, f"{where}.short.exercises")
    short_set = tuple(spec.get("set", ()))
    if bool(short_set) != bool(short_exercises):
        raise ExtensionError(f"{where}.short: exercises = {short_exercises!r} with set = "
                             f"{list(short_set)!r}: expected minutes exactly when the set "
                             f"names exercises")
    closing = spec.get("closing_mission", False)
    if not isinstance(closing, bool):
        raise ExtensionError(f"{where}.short.closing_mission = {closing!r}: expected true "
                             f"or false")
    return short, short_exercises, short_set, closing


def _lab_hour(block: dict, where: str) -> tuple:
    """The missions' lab hour, ``((part, minutes), ...)`` (empty when the chapter has none)."""
    if "missions" not in block:
        return ()
    spec = block["missions"]
    if not isinstance(spec, list) or not spec or not all(
            isinstance(p, dict) and set(p) == {"part", "minutes"} for p in spec):
        raise ExtensionError(f"{where}.missions = {spec!r}: expected a list of "
                             '{"part": what, "minutes": n} (the lab hour, in order)')
    return tuple((str(p["part"]), _positive(p["minutes"], f"{where}.missions[{i}].minutes"))
                 for i, p in enumerate(spec))


def _chapter_title(nb: dict) -> str:
    """The notebook's first level-1 heading ("" when it has none)."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            m = re.search(r"^# (.+)$", "".join(cell.get("source", "")), re.M)
            if m:
                return m.group(1).strip()
    return ""


def exercise_titles(path: Path) -> tuple:
    """``(id, title)`` of every ``{exercise}`` of a notebook (``:label: ex-<id>``), in order."""
    nb = json.loads(Path(path).read_text())
    found = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            text = "".join(cell.get("source", ""))
            for m in re.finditer(r"```\{exercise\}[ \t]*(.*)\n:label: ex-([\w-]+)", text):
                found.append((m.group(2), m.group(1).strip()))
    return tuple(found)


def section_titles(path: Path) -> list[str]:
    """The ``##`` headings of a notebook's markdown cells, in order (code spans unwrapped)."""
    nb = json.loads(Path(path).read_text())
    titles = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            for m in re.finditer(r"^## (.+)$", "".join(cell.get("source", "")), re.M):
                titles.append(m.group(1).strip())
    return titles


def toc_docnames(root: Path) -> list[str]:
    """Every ``file`` of ``_toc.yml``, in book order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    found: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("file", "root") and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return found


def chapter_timings(root: Path) -> list[ChapterTiming]:
    """The chapters with timings, in book order."""
    out = []
    for docname in toc_docnames(root):
        path = root / (docname + ".ipynb")
        if path.exists():
            timing = read_timing(path, docname)
            if timing is not None:
                out.append(timing)
    return out


@dataclass(frozen=True)
class Slot:
    session: int
    start: int
    minutes: int
    kind: str              # "setup", "teaching", "exercises", "break", "lab", "wrap-up"
    title: str
    docname: str | None = None


#: What fills a session once its chapters are placed: (kind, title, most minutes).
FILLS = [
    ("lab", "Your own server: size it with kvsim, check it against its log", 50),
    ("discussion", "The frequently argued points, argued", 30),
    ("review", "Review: each pair re-runs a prediction they missed and explains the gap", 30),
]
#: The shortest block worth scheduling, in minutes.
SHORTEST = 10


#: The missions of chapter 5's lab, as the workshop's last block (one row per part).
MISSIONS_TITLE = "The missions (chapter 5's lab)"

#: The sessions of a day or of half a day: what every plan but the short one packs into.
_SESSIONS = dict(session_minutes=180, break_after=75, break_minutes=10, setup_minutes=15,
                 recap_minutes=10, wrap_up_minutes=10, lab_minutes=20)

#: The closing session of the two-day plan: the labs on the learners' own servers.
OWN_SERVER_SESSION = (
    ("lab", "Your own server: size it with kvsim, check it against its log", 55),
    ("lab", "Your own dashboards: kvsim twin on a scrape of your server, kvsim lint-rules "
            "on your alert rules", 60),
    ("discussion", "What each learner changes first: one setting, one alert, one panel", 20),
)

#: The plans the workshop page shows, and the instructor notes quote: one place. The
#: formats teachers run: a conference slot (short), a half day on chapters 1-3
#: (foundations) or on chapters 4-5 and the lab (practice), a day (both halves), and two
#: days (every chapter whole, the lab, and an afternoon on the learners' own servers).
#: ``core``: each chapter without its "Try it" sections (a widget to explore at home) and
#: with its short exercise set; ``lab_skip``: the lab hour's parts a plan drops because its
#: session already did them (its set-up, when chapter 5 runs just before it).
#: The chapters the plans teach. Chapter 6 (planning capacity) is outside them: two days
#: hold chapters 1-5 whole, the lab and the learners' own servers, and no more; its own
#: front matter and instructor notes time it as a session of its own or for self-study.
WORKSHOP_CHAPTERS = (1, 2, 3, 4, 5)
PLANS = {
    "short": dict(session_minutes=90, break_after=90, break_minutes=10, setup_minutes=5,
                  wrap_up_minutes=5, lab_minutes=20, short=True, only=WORKSHOP_CHAPTERS),
    "foundations": dict(_SESSIONS, only=(1, 2, 3), core=True),
    "practice": dict(_SESSIONS, only=(4, 5), core=True, missions=True, lab_skip=("set-up",)),
    "day": dict(_SESSIONS, core=True, missions=True, lab_skip=("set-up",),
                only=WORKSHOP_CHAPTERS),
    "full": dict(_SESSIONS, missions=True, final_session=OWN_SERVER_SESSION,
                 only=WORKSHOP_CHAPTERS),
}

#: How each plan is named where it is offered.
PLAN_TITLES = {
    "short": "90 minutes: a conference slot",
    "foundations": "Half a day on chapters 1-3: bytes, admission, swap",
    "practice": "Half a day on chapters 4-5: detection, Belgavi's store and the lab",
    "day": "A day: the core of chapters 1-5 and the lab",
    "full": "Two days: chapters 1-5 whole, the lab, and the learners' own servers",
}

#: A section title that marks a widget to explore, which a compact plan leaves for home.
TRY_IT = "Try it"

#: What a break tells a room on Binder (a session idle for about ten minutes is deleted).
BINDER_BREAK = ("Break. On Binder, save first: File \u25b8 Download for a notebook you changed, "
                "and your mission progress with python -m kvsim missions --export (then download "
                "the file)")


def closing_title(ch: ChapterTiming) -> str:
    """The short plan's closing mission: the chapter's short sections."""
    return f"Closing mission: {ch.title}, {', '.join(ch.short)}"


def _even_breaks(items: list[Slot], k: int, break_minutes: int) -> list[Slot]:
    """``items`` (one session, no breaks) with ``k`` breaks at the boundaries that make the
    stretches between them most even: the longest as short as it can be, then the shortest
    as long as it can be (the first such choice on a tie)."""
    import itertools

    if k == 0:
        return items
    sizes = [s.minutes for s in items]

    def stretches(cut):
        bounds = (0, *cut, len(sizes))
        return [sum(sizes[a:b]) for a, b in itertools.pairwise(bounds)]
    best = min(itertools.combinations(range(1, len(sizes)), k),
               key=lambda cut: (max(stretches(cut)), -min(stretches(cut))))
    out, clock = [], 0
    for i, s in enumerate(items):
        if i in best:
            out.append(Slot(s.session, clock, break_minutes, "break", BINDER_BREAK))
            clock += break_minutes
        out.append(Slot(s.session, clock, s.minutes, s.kind, s.title, s.docname))
        clock += s.minutes
    return out


def workshop_plan(chapters: list[ChapterTiming], *, session_minutes: int = 180,
                  break_after: int = 75, break_minutes: int = 15, setup_minutes: int = 15,
                  recap_minutes: int | None = None, wrap_up_minutes: int = 10,
                  lab_minutes: int = 20, missions: bool = False,
                  short: bool = False, core: bool = False, only: tuple = (),
                  lab_skip: tuple = (), final_session: tuple = ()) -> list[Slot]:
    """Pack the chapters into sessions (see the module docstring); every session is full.

    A session gets the fewest breaks that keep every stretch within
    ``break_after`` minutes, spaced as evenly as its blocks allow
    (:func:`_even_breaks`); a chapter's teaching and exercises stay in one
    session. A session's remaining time goes to :data:`FILLS` (each once in the
    plan; the lab only when it gets at least ``lab_minutes``), and what is left
    of it to the wrap-up. Sessions after the first open with a recap of
    ``recap_minutes`` (default ``setup_minutes``). With ``missions`` the
    missions' lab hour (the ``missions`` parts of a chapter's front matter)
    closes the plan; with ``short`` each chapter gives only its ``short``
    sections (and short exercises), chapters without them are left out, and a
    chapter whose short part is its ``closing_mission`` comes last as that.
    ``only`` keeps the chapters of those numbers; ``core`` gives each chapter's
    teaching without its "Try it" sections and only its short exercise set;
    ``lab_skip`` drops the lab hour's parts whose name starts with one of its
    words; ``final_session`` adds a last session of those ``(kind, title,
    minutes)`` blocks (after a recap, with its breaks and wrap-up).
    """
    if only:
        chapters = [c for c in chapters if c.number in only]
    recap = setup_minutes if recap_minutes is None else recap_minutes
    packer = _Packer(session_minutes=session_minutes, break_after=break_after,
                     break_minutes=break_minutes, wrap_up_minutes=wrap_up_minutes,
                     lab_minutes=lab_minutes)
    first = chapters[0].number if chapters else 1
    packer.add("setup", f"Set-up check: everyone runs the first cell of chapter {first}",
               setup_minutes)
    units, tail = _chapter_units(chapters, short=short, core=core, missions=missions,
                                 lab_skip=lab_skip)
    if missions and not short and not tail:
        raise ExtensionError("missions: no chapter's front matter has a 'missions' lab hour")
    for ch, parts in units:
        for kind, minutes in parts:
            if minutes > break_after:
                raise ExtensionError(f"{ch.docname}: {minutes} minutes of {kind} in one block "
                                     f"exceed break_after={break_after}: split the chapter")
        if not packer.fits([m for _, m in parts]):
            packer.close_session()
            packer.add("setup", "Recap of the last session", recap)
        for kind, minutes in parts:
            packer.place(kind, ch.title, minutes, ch.docname)
    if tail and not packer.fits([m for _, m, *_ in tail]):
        packer.close_session()
        packer.add("setup", "Recap of the last session", recap)
    packer.close_session(tail)
    if final_session:
        packer.add("setup", "Recap of the last session", recap)
        for kind, title, minutes in final_session:
            packer.used.add(title)
            packer.place(kind, title, minutes)
        packer.close_session()
    out = []
    for n in sorted({s.session for s in packer.slots}):
        mine = [s for s in packer.slots if s.session == n]
        rest = [s for s in mine if s.kind != "break"]
        out += _even_breaks(rest, len(mine) - len(rest), break_minutes)
    return out


def _chapter_units(chapters: list[ChapterTiming], *, short: bool, core: bool, missions: bool,
                   lab_skip: tuple) -> tuple[list, tuple]:
    """``(units, tail)``: each chapter's ``(chapter, [(kind, minutes), ...])`` blocks that stay
    in one session, and the parts that close the plan (a closing mission, the lab hour)."""
    units, tail = [], ()
    for ch in chapters:
        if short and ch.short and ch.closing:
            tail = (("mission", ch.short_teaching_minutes, closing_title(ch), ch.docname),)
            continue
        if short:
            parts = [("teaching", ch.short_teaching_minutes)] if ch.short else []
            if ch.short and ch.short_exercises:
                parts.append(("exercises", ch.short_exercises))
        elif core:
            parts = [("teaching", ch.core_teaching_minutes)]
            if ch.short_exercises:
                parts.append(("exercises", ch.short_exercises))
        else:
            parts = [("teaching", ch.teaching_minutes), ("exercises", ch.exercises)]
        if parts:
            units.append((ch, parts))
        if missions and not short and ch.lab:
            tail = tuple(("lab", m, f"{MISSIONS_TITLE}: {part}", None) for part, m in ch.lab
                         if not part.startswith(lab_skip or ("\0",)))
    return units, tail


class _Packer:
    """The plan's slots as they are laid, session by session: the clock of the session, the
    minutes since its last break, and the fills already used (each once in a plan)."""

    def __init__(self, *, session_minutes: int, break_after: int, break_minutes: int,
                 wrap_up_minutes: int, lab_minutes: int) -> None:
        self.session_minutes, self.break_after = session_minutes, break_after
        self.break_minutes, self.wrap_up_minutes = break_minutes, wrap_up_minutes
        self.lab_minutes = lab_minutes
        self.slots: list[Slot] = []
        self.session, self.clock, self.since_break = 1, 0, 0
        self.used: set[str] = set()

    def add(self, kind: str, title: str, minutes: int, docname: str | None = None) -> None:
        self.slots.append(Slot(self.session, self.clock, minutes, kind, title, docname))
        self.clock += minutes
        self.since_break = 0 if kind == "break" else self.since_break + minutes

    def need_break(self, minutes: int) -> bool:
        return self.since_break > 0 and self.since_break + minutes > self.break_after

    def fits(self, minutes: list[int]) -> bool:
        """Would these blocks (with the breaks they need) and the wrap-up fit this session?"""
        c, since = self.clock, self.since_break
        for m in minutes:
            if since > 0 and since + m > self.break_after:
                c, since = c + self.break_minutes, 0
            c, since = c + m, since + m
        if since > 0 and since + self.wrap_up_minutes > self.break_after:
            c += self.break_minutes
        return c + self.wrap_up_minutes <= self.session_minutes

    def place(self, kind: str, title: str, minutes: int, docname: str | None = None) -> None:
        if self.need_break(minutes):
            self.add("break", "Break", self.break_minutes)
        self.add(kind, title, minutes, docname)

    def _fill(self, reserve: int, last_part: bool) -> None:
        """The :data:`FILLS` not yet used, in what is left of the session but ``reserve``
        minutes; ``last_part``: nothing but the wrap-up follows them."""
        for kind, title, most in FILLS:
            if title in self.used:       # each fill once in a plan: the lab is not repeated
                continue
            left = self.session_minutes - self.clock - self.wrap_up_minutes - reserve
            minutes = min(most, left)
            last = minutes == left and last_part
            if self.need_break(minutes + (self.wrap_up_minutes if last else 0)):
                if left - self.break_minutes < SHORTEST:
                    break
                self.add("break", "Break", self.break_minutes)
                minutes = min(most, left - self.break_minutes)
            if minutes < (self.lab_minutes if kind == "lab" else SHORTEST):
                continue
            self.add(kind, title, minutes)
            self.used.add(title)

    def close_session(self, tail: tuple = ()) -> None:
        """Fill what is left (keeping room for the ``tail`` parts and a break), then the
        ``tail`` parts, then the wrap-up."""
        need = sum(m for _, m, *_ in tail)
        self._fill(need + self.break_minutes if tail else 0, not tail)
        for kind, minutes, title, docname in tail:
            self.place(kind, title, minutes, docname)
        rest = self.session_minutes - self.clock
        if self.need_break(rest) and rest - self.break_minutes >= self.wrap_up_minutes:
            self.add("break", "Break", self.break_minutes)  # the wrap-up counts as time without one
        self.add("wrap-up", "Questions and wrap-up: key points, what each learner takes home",
                 self.session_minutes - self.clock)
        self.session, self.clock, self.since_break = self.session + 1, 0, 0


def plan(name: str, chapters: list[ChapterTiming]) -> list[Slot]:
    """One of :data:`PLANS` (``"short"``, ``"foundations"``, ``"practice"``, ``"day"``,
    ``"full"``) for ``chapters``."""
    if name not in PLANS:
        raise ExtensionError(f"plan {name!r} is not known: expected one of {', '.join(PLANS)}")
    return workshop_plan(chapters, **PLANS[name])


#: What a late room cuts first, per session: at least this many minutes of it.
LATE_MINUTES = 15


def cuts_when_late(slots: list[Slot], chapters: list[ChapterTiming], name: str) -> dict[int, list]:
    """``{session: [(chapter, section, minutes), ...]}``: what to cut, in order, when a session
    runs late: the sections its chapters teach that are not their core (the short plan's
    ``short`` sections), the session's last chapter first, until :data:`LATE_MINUTES`."""
    opts = PLANS[name]
    by_doc = {c.docname: c for c in chapters}
    out: dict[int, list] = {}
    for session in sorted({s.session for s in slots}):
        taught = [by_doc[s.docname] for s in slots
                  if s.session == session and s.kind == "teaching" and s.docname in by_doc]
        candidates = []
        for ch in reversed(taught):
            kept = ch.short if opts.get("short") else (ch.core if opts.get("core") else tuple(ch.teaching))
            for title in reversed(kept):
                if title not in ch.short and title not in ("Key points",):
                    candidates.append((ch, title, ch.teaching[title]))
        chosen, total = [], 0
        for item in candidates:
            if total >= LATE_MINUTES:
                break
            chosen.append(item)
            total += item[2]
        if chosen:
            out[session] = chosen
    return out


def notes_mismatch(timing: ChapterTiming, titles: list[str]) -> str | None:
    """Why instructor notes with rows ``titles`` disagree with the chapter, or ``None``.

    The notes need one row per timed section and one ``Exercises`` row, in the
    chapter's order, and nothing else.
    """
    expected = [t for t, _ in timing.parts]
    if titles == expected:
        return None
    missing = [t for t in expected if t not in titles]
    extra = [t for t in titles if t not in expected]
    if not missing and not extra:
        return f"rows {titles} are not in the chapter's order {expected}"
    return (f"the notes and the chapter disagree: missing {missing}, not in the chapter "
            f"{extra}; the chapter's sections are {expected}")


def _minutes(start: int, minutes: int) -> str:
    return f"{start}-{start + minutes}"


def _table(header: list[str], rows: list[list], widths: list[int]) -> nodes.table:
    table = nodes.table(classes=["kvbook-timing"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for w in widths:
        group += nodes.colspec(colwidth=w)
    head = nodes.thead()
    group += head
    body = nodes.tbody()
    group += body
    for target, cells in ((head, [header]), (body, rows)):
        for cells_row in cells:
            row = nodes.row()
            for cell in cells_row:
                entry = nodes.entry()
                entry += cell if isinstance(cell, nodes.Node) else nodes.paragraph(text=str(cell))
                row += entry
            target += row
    return table


class _Base(SphinxDirective):
    def root(self) -> Path:
        return Path(self.env.app.confdir)

    def doc_link(self, docname: str, text: str) -> nodes.Node:
        from sphinx.addnodes import pending_xref

        para = nodes.paragraph()
        ref = pending_xref("", refdomain="std", reftype="doc", reftarget="/" + docname,
                           refexplicit=True, refwarn=True)
        ref += nodes.inline(text=text)
        para += ref
        return para


def slot_detail(slot: Slot, chapters: list[ChapterTiming], short: bool) -> str:
    """What a plan's row covers beyond the chapter's title: in the short plan, the
    sections a teaching row keeps and the exercises an exercises row gives."""
    ch = next((c for c in chapters if c.docname == slot.docname), None)
    if ch is None or not short:
        return ""
    if slot.kind in ("teaching", "mission"):
        return _names(ch.short)
    if slot.kind == "exercises":
        names = dict(ch.exercise_titles)
        return _names(names[x] for x in ch.short_set)
    return ""


def _names(titles) -> str:
    """``"A"``, ``"A" and "B"``, ``"A", "B" and "C"``."""
    quoted = [f"\u201c{t}\u201d" for t in titles]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def short_slot_text(timing: ChapterTiming, slots: list[Slot]) -> str:
    """One sentence: what the short plan (``slots``) gives ``timing``'s chapter, with its
    minutes, sections and exercises, read from the same plan the workshop page shows."""
    mine = [s for s in slots if s.docname == timing.docname]
    total = sum(s.minutes for s in slots if s.session == 1)
    head = f"In the workshop's short plan (one session of {total} minutes)"
    if not mine:
        return f"{head} this chapter is left out."
    parts = []
    for s in mine:
        where = f"(minutes {_minutes(s.start, s.minutes)})"
        if s.kind == "mission":
            parts.append(f"{_names(timing.short)} is the closing mission {where}")
        elif s.kind == "teaching":
            parts.append(f"this chapter keeps {_names(timing.short)} {where}")
        else:
            names = dict(timing.exercise_titles)
            parts.append(f"then the exercises {_names(names[x] for x in timing.short_set)} "
                         f"{where}")
    if not any(s.kind == "exercises" for s in mine) and not timing.closing:
        parts.append("no exercises: give them for after the session")
    return f"{head}, {'; '.join(parts)}."


def missions_hour(chapters: list[ChapterTiming], slots: list[Slot]) -> list[tuple[str, int, int]]:
    """``(part, session, start)`` of each part of the missions' lab hour in ``slots``."""
    return [(s.title.split(": ", 1)[1], s.session, s.start) for s in slots
            if s.kind == "lab" and s.title.startswith(MISSIONS_TITLE)]


class WorkshopPlanDirective(_Base):
    """``{workshop-plan}``: the timed plan (``:plan: full`` or ``short``, :data:`PLANS`),
    generated from the chapters' minutes."""

    has_content = False
    option_spec = {"plan": directives.unchanged_required}

    def run(self):
        root = self.root()
        for docname in toc_docnames(root):
            if (root / (docname + ".ipynb")).exists():
                self.env.note_dependency(str(root / (docname + ".ipynb")))
        name = self.options.get("plan", "full")
        if name not in PLANS:
            raise self.error(f"workshop-plan: plan {name!r} is not known: expected one of "
                             f"{', '.join(PLANS)}")
        chapters = chapter_timings(root)
        slots = plan(name, chapters)
        short = PLANS[name].get("short", False)
        late = cuts_when_late(slots, chapters, name)
        out: list[nodes.Node] = []
        for session in sorted({s.session for s in slots}):
            rows = []
            for s in (x for x in slots if x.session == session):
                detail = slot_detail(s, chapters, short)
                text = s.title if s.kind != "mission" else "Closing mission"
                label = f"{text}: {detail}" if detail and s.kind != "mission" else text
                what = label if s.docname is None else self.doc_link(s.docname, label)
                if s.kind == "mission" and s.docname:
                    what = self.doc_link(s.docname, s.title)
                notes = ""
                if s.docname:
                    notes = self.doc_link("book/instructor-notes/" + Path(s.docname).name[:4],
                                          "instructor notes")
                rows.append([_minutes(s.start, s.minutes), s.kind, what, notes])
            total = sum(s.minutes for s in slots if s.session == session)
            title = nodes.rubric(text=f"Session {session} ({total} minutes)")
            out += [title, _table(["minutes", "part", "what", "notes"], rows, [12, 12, 56, 20])]
            if session in late:
                cut = "; ".join(f"\u201c{t.replace('`', '')}\u201d ({ch.title}, {m} min)"
                                for ch, t, m in late[session])
                out.append(nodes.paragraph(text=f"Running late: cut, in this order, {cut}. Learners "
                                                f"read what was cut on the site afterwards."))
        return out


class ShortSlotDirective(_Base):
    """``{short-slot} <chapter>``: what the short plan gives the chapter (generated), then
    the directive's body (what to do, in words: no minutes)."""

    required_arguments = 1
    has_content = True

    def run(self):
        root = self.root()
        docname = self.arguments[0].strip().removesuffix(".ipynb")
        chapters = chapter_timings(root)
        timing = next((c for c in chapters if c.docname == docname), None)
        if timing is None:
            raise self.error(f"short-slot: {docname} is not a chapter with timings")
        for c in chapters:
            self.env.note_dependency(str(root / (c.docname + ".ipynb")))
        para = nodes.paragraph()
        para += nodes.strong(text=short_slot_text(timing, plan("short", chapters)))
        out: list[nodes.Node] = [para]
        if self.content:
            body = nodes.container()
            self.state.nested_parse(self.content, self.content_offset, body)
            out += body.children
        return out


class MissionsHourDirective(_Base):
    """``{missions-hour}``: the missions' lab hour as the full plan places it (session and
    minutes of each part, from the chapter's ``missions`` front matter)."""

    has_content = False

    def run(self):
        root = self.root()
        chapters = chapter_timings(root)
        for c in chapters:
            self.env.note_dependency(str(root / (c.docname + ".ipynb")))
        slots = plan("full", chapters)
        rows = [[f"session {s.session}, {_minutes(s.start, s.minutes)}", s.title.split(": ", 1)[1]]
                for s in slots if s.kind == "lab" and s.title.startswith(MISSIONS_TITLE)]
        if not rows:
            raise self.error("missions-hour: the full plan has no missions' lab hour")
        return [_table(["minutes", "part"], rows, [30, 70])]


class TimingTableDirective(_Base):
    """``{timing-table} <chapter>``: minute ranges from the chapter, what to do from the body."""

    required_arguments = 1
    has_content = True

    def run(self):
        docname = self.arguments[0].strip().removesuffix(".ipynb")
        path = self.root() / (docname + ".ipynb")
        if not path.exists():
            raise self.error(f"timing-table: {docname}.ipynb does not exist")
        self.env.note_dependency(str(path))
        timing = read_timing(path, docname)
        if timing is None:
            raise self.error(f"timing-table: {path.name} has no metadata.{KEY}.timing")
        notes: dict[str, str] = {}
        for line in self.content:
            if not line.strip():
                continue
            if "|" not in line:
                raise self.error(f"timing-table: line {line!r} is not 'Section title | what to do'")
            title, what = (part.strip() for part in line.split("|", 1))
            notes[title] = what
        problem = notes_mismatch(timing, list(notes))
        if problem:
            raise self.error(f"timing-table {docname}: {problem}")
        rows, clock = [], 0
        for title, minutes in timing.parts:
            para = nodes.paragraph()
            self.state.nested_parse(_string_list(notes[title], self.content.source(0)),
                                    self.content_offset, para)
            rows.append([_minutes(clock, minutes), title, para.children[0] if
                         len(para.children) == 1 else para])
            clock += minutes
        summary = nodes.paragraph(text=(f"Teaching: {timing.teaching_minutes} min · Exercises: "
                                        f"{timing.exercises} min · Total: {timing.total_minutes} min"
                                        " (from the chapter's front matter)."))
        return [_table(["minutes", "part", "what to do"], rows, [12, 28, 60]), summary]


def _string_list(text: str, source: str):
    from docutils.statemachine import StringList

    return StringList([text], source=source)


def setup(app: Sphinx) -> dict:
    app.add_directive("workshop-plan", WorkshopPlanDirective)
    app.add_directive("timing-table", TimingTableDirective)
    app.add_directive("short-slot", ShortSlotDirective)
    app.add_directive("missions-hour", MissionsHourDirective)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
