"""Sphinx extension: the instructor's answer keys, from kvsim, never typed.

``{chapter-key} book/chNN-...`` renders a chapter's one-page key for its
instructor notes: each exercise's answer as the checks judge it (the value
and its unit, the range, or the choice), kvsim's reason, the slips the check
names with their hints, and each Predict box's value and reason. It reads the
data the site's checks run on (``book/_ext/static/kvbook/checks-data.js``,
written by ``scripts/site_data.py`` from :func:`kvsim.book.exercises.site_data`),
so the key, the site and the kernel cannot disagree.

``{example-code}`1``` writes a real one-star completion code of mission 1
(:func:`kvsim.lab.codes.example_code`), for the pages that show what a code
looks like.

``{answer-key}`` renders one row per mission from
:func:`kvsim.lab.missions.answer_key`: the prediction that earns the third
star, the expert settings and the stars :func:`~kvsim.lab.missions.score`
gives them, the ticket's own settings and theirs, and what a cold two-minute
replay would have passed. Nothing in it is typed in: the build scores the
missions (about a minute on two cores), so the key cannot drift from the
scoring the learners' codes are checked against.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def _value(v) -> str:
    if v is None:
        return "none"
    return f"{v:g}" if isinstance(v, float) else str(v)


def settings_text(settings) -> str:
    """``name=value, ...`` as a learner passes them to ``missions.score``."""
    return ", ".join(f"{k}={_value(v)}" for k, v in settings.items())


def _stars(n: int) -> str:
    return f"{n} star{'s' if n != 1 else ''}"


def answer_rows(rows: list[dict]) -> list[list[str]]:
    """The table's cells, one list per mission (:func:`kvsim.lab.missions.answer_key` rows)."""
    out = []
    for r in rows:
        pred = r["prediction"]
        if "band" in pred:
            lo, hi = pred["band"]
            guess = f"the band {_value(lo)} to {_value(hi)} ({r['cause_text']})"
        else:
            guess = f"{pred['cause']} ({r['cause_text']})"
        if r["trap"] is None:
            trap = "nothing on the grid"
        elif r["trap"] == r["expert"]:
            trap = f"the expert settings too ({r['trap_warm_days']} of {r['days']} days warm)"
        else:
            trap = (f"{settings_text(r['trap'])}: {r['trap_warm_days']} of {r['days']} "
                    f"days warm")
        out.append([f"{r['mission']}. {r['title']}", guess, settings_text(r["expert"]),
                    _stars(r["expert_stars"]),
                    f"{settings_text(r['ticket'])}: {_stars(r['ticket_stars'])} "
                    f"({r['ticket_days']} of {r['days']} days)", trap])
    return out


class AnswerKeyDirective(SphinxDirective):
    """``{answer-key}``: the missions' answer key, scored by kvsim while the site builds."""

    has_content = False

    def run(self):
        from kvsim.lab import missions

        header = ["mission", "the prediction for the third star", "expert settings",
                  "score()", "the ticket's own settings", "a cold replay passes"]
        return [_grid(header, answer_rows(missions.answer_key()), (16, 24, 20, 8, 18, 14),
                      "kvbook-answer-key")]


def answer_text(entry: dict) -> str:
    """An exercise's answer as its check accepts it, with the unit."""
    from kvsim.book.exercises import plain

    if entry["kind"] == "choice":
        return f"\u201c{entry['expected']}\u201d"
    if entry.get("between"):
        lo, hi = entry["between"]
        return f"between {plain(lo)} and {plain(hi)} {entry['unit']}"
    tol = max(entry["abs_tol"], entry["rel_tol"] * abs(entry["expected"]))
    within = f" (\u00b1{plain(tol)})" if tol else ""
    return f"{plain(entry['expected'])} {entry['unit']}{within}"


def chapter_key_rows(data: dict, exercises: list[tuple[str, str]],
                     predictions: list[str]) -> tuple[list[list[str]], list[list[str]]]:
    """``(exercise rows, prediction rows)`` of a chapter's key: ``exercises`` are ``(id, title)``
    in the chapter's order, ``predictions`` ids in order; the cells from the checks' data."""
    from kvsim.book.exercises import plain

    ex_rows = []
    for n, (ex_id, title) in enumerate(exercises, 1):
        entry = data["exercises"][ex_id]
        slips = "; ".join(f"{plain(v) if not isinstance(v, str) else v}: {hint}"
                          for v, hint in entry["traps"]) or "none named"
        ex_rows.append([f"{n}. {title}" + (" (derive)" if entry.get("derive") else ""),
                        answer_text(entry), entry["why"], slips])
    pr_rows = []
    for p_id in predictions:
        p = data["predictions"][p_id]
        shown = f"{p['value_text']} {p['unit']}"
        if "band" in p:            # an answer that is a band: the guesses inside it count
            shown += f" ({p['band_label']}: {p['band_text'][0]} to {p['band_text'][1]})"
        pr_rows.append([p["question"], shown, p["why"]])
    return ex_rows, pr_rows


def _grid(header: list[str], rows: list[list[str]], widths: tuple, cls: str) -> nodes.table:
    table = nodes.table(classes=[cls])
    group = nodes.tgroup(cols=len(header))
    table += group
    for w in widths:
        group += nodes.colspec(colwidth=w)
    head, body = nodes.thead(), nodes.tbody()
    group += head
    group += body
    for target, cells in ((head, [header]), (body, rows)):
        for cells_row in cells:
            row = nodes.row()
            for cell in cells_row:
                entry = nodes.entry()
                entry += nodes.paragraph(text=cell)
                row += entry
            target += row
    return table


class ChapterKeyDirective(SphinxDirective):
    """``{chapter-key} <chapter>``: a chapter's exercises and predictions, answered (module docstring)."""

    required_arguments = 1

    def run(self):
        import json
        import re
        from pathlib import Path

        from kvsim.book import checks_site

        from kvbook_workshop import exercise_titles

        root = Path(self.env.app.confdir)
        docname = self.arguments[0].strip().removesuffix(".ipynb")
        notebook = root / (docname + ".ipynb")
        data_file = root / checks_site.DATA_PATH
        if not notebook.exists():
            raise self.error(f"chapter-key: {docname}.ipynb does not exist")
        self.env.note_dependency(str(notebook))
        self.env.note_dependency(str(data_file))
        data = checks_site.read_site_data(data_file.read_text(encoding="utf-8"))
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        predictions = [m.group(1) for c in cells if c["cell_type"] == "code"
                       for m in [re.search(r"""exercises\.predict\(\s*["']([\w-]+)["']""",
                                           "".join(c["source"]))] if m]
        titles = list(exercise_titles(notebook))
        missing = [x for x, _ in titles if x not in data["exercises"]] + \
                  [p for p in predictions if p not in data["predictions"]]
        if missing:
            raise self.error(f"chapter-key {docname}: no check for {missing[0]!r} in "
                             f"{checks_site.DATA_PATH}: run python scripts/site_data.py checks")
        ex_rows, pr_rows = chapter_key_rows(data, titles, predictions)
        return [nodes.rubric(text="Exercises"),
                _grid(["exercise", "answer", "why (kvsim)", "slips the check names"], ex_rows,
                      (22, 16, 32, 30), "kvbook-chapter-key"),
                nodes.rubric(text="Predict boxes"),
                _grid(["question", "kvsim shows", "why"], pr_rows, (34, 16, 50),
                      "kvbook-chapter-key")]


def example_code_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{example-code}`1``: a real one-star completion code of that mission, as literal text
    (:func:`kvsim.lab.codes.example_code`): it verifies with ``kvsim missions --verify``."""
    from kvsim.errors import KvsimError
    from kvsim.lab import codes

    try:
        code = codes.example_code(int(text.strip()))
    except (KvsimError, ValueError) as e:
        msg = inliner.reporter.error(f"example-code {text!r}: {e}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [nodes.literal(rawtext, code)], []


def setup(app: Sphinx) -> dict:
    app.add_role("example-code", example_code_role)
    app.add_directive("answer-key", AnswerKeyDirective)
    app.add_directive("chapter-key", ChapterKeyDirective)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
