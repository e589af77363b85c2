"""Sphinx extension: on the site, every exercise has an answer box and the kernel's check.

Each exercise is followed by a cell (CONTRIBUTING.md, *Exercises*)::

    answer = None   # bytes per token
    exercises.check("ch01-gqa-bytes", answer)

In a kernel the reader sets ``answer`` and runs it. On the static site nothing
runs, so this extension, at build time (an HTML post-transform: the notebooks
are never touched), marks each such cell with ``kvbook-check-cell`` and puts a
hidden ``form.kvbook-answer`` after it. ``checks.js`` fills the form (a box, or
one button per choice, and *Check*) and judges the answer with the same rules
as the kernel, on the data kvsim computed for the site (``checks-data.js``,
written by ``scripts/site_data.py``; see :mod:`kvsim.book.checks_site`); it
also gives a committed Predict guess the kernel's sentence
(``predict-reveal.js``). With JavaScript off the forms stay hidden and the
cells' saved outputs show.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.transforms.post_transforms import SphinxPostTransform

#: Files, relative to ``_static/`` (from ``book/_ext/static/``): the data, the script, the style.
DATA_JS = "kvbook/checks-data.js"
CHECKS_JS = "kvbook/checks.js"
CHECKS_CSS = "kvbook/checks.css"
#: Before predict-reveal.js (800), which asks the checks for a guess's sentence.
DATA_PRIORITY, CHECKS_PRIORITY = 780, 790
#: The class the check cell's container gets.
CELL_CLASS = "kvbook-check-cell"

_CALL = re.compile(r"""exercises\.check\(\s*["'](ch\d\d-[\w-]+)["']\s*,\s*answer\s*\)""")


def check_id(source: str) -> str | None:
    """The exercise a check cell's ``source`` checks, or ``None`` for any other cell."""
    found = _CALL.search(source)
    return found.group(1) if found else None


def answer_form_html(exercise_id: str) -> str:
    """The (hidden, empty) form checks.js fills for one exercise."""
    return (f'<form class="kvbook-answer" data-exercise="{html.escape(exercise_id)}" '
            f'aria-label="Check your answer" hidden></form>\n')


def _is_code_cell(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


class AnswerForms(SphinxPostTransform):
    """Mark each check cell and put an answer form after it."""

    default_priority = 800
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for cell in list(self.document.findall(_is_code_cell)):
            blocks = list(cell.findall(nodes.literal_block))
            found = check_id(blocks[0].astext()) if blocks else None
            if found is None:
                continue
            cell["classes"].append(CELL_CLASS)
            parent = cell.parent
            parent.insert(parent.index(cell) + 1,
                          nodes.raw("", answer_form_html(found), format="html"))


def _config_inited(app: Sphinx, config: Config) -> None:
    static = str(Path(__file__).parent / "static")
    if static not in config.html_static_path:
        config.html_static_path = [*config.html_static_path, static]


def _builder_inited(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.add_css_file(CHECKS_CSS)
        app.add_js_file(DATA_JS, priority=DATA_PRIORITY)
        app.add_js_file(CHECKS_JS, priority=CHECKS_PRIORITY)


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.add_post_transform(AnswerForms)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
