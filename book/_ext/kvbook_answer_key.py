"""Sphinx extension: the instructor's answer key to chapter 5's missions, computed at build time.

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
        table = nodes.table(classes=["kvbook-answer-key"])
        group = nodes.tgroup(cols=len(header))
        table += group
        for w in (16, 24, 20, 8, 18, 14):
            group += nodes.colspec(colwidth=w)
        head, body = nodes.thead(), nodes.tbody()
        group += head
        group += body
        for target, cells in ((head, [header]), (body, answer_rows(missions.answer_key()))):
            for cells_row in cells:
                row = nodes.row()
                for cell in cells_row:
                    entry = nodes.entry()
                    entry += nodes.paragraph(text=cell)
                    row += entry
                target += row
        return [table]


def setup(app: Sphinx) -> dict:
    app.add_directive("answer-key", AnswerKeyDirective)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
