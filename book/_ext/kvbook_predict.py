"""Sphinx extension: on the site, a Predict box's answer shows only once the reader has guessed.

Every teaching section asks the reader to predict a value before the cell that
shows it (CONTRIBUTING.md, *Predict first*): a ``kvbook-predict`` admonition,
then a cell::

    prediction = None   # your guess, in ms
    exercises.predict("ch03-predict-recompute", prediction)

In a kernel the answer comes after the prediction cell runs. On the static
site nothing runs, so the outputs after that cell would answer the box at
once (design §6: a Predict box is never answered by the next thing on the
page). This extension, at build time (an HTML post-transform, so the
notebooks are never touched):

* marks each prediction cell with the class ``kvbook-prediction-cell``;
* appends to its Predict box a guess form (:func:`guess_form_html`): a number
  input labelled with the unit the cell's comment names, a "Commit my guess"
  button and a "Show the answer without guessing" button. The form is
  ``hidden``: with JavaScript off it never shows, and nothing is veiled.

``predict-reveal.js`` (in ``static/kvbook/``, added to every page) then veils,
with a visible note, what follows the prediction cell up to the next Predict
box or section, and lifts the veil when the reader commits a guess or skips;
the guess is kept per page and prediction in the browser's localStorage, as
``missions.js`` keeps the missions' guesses, so the page opens revealed next
time. A prediction cell with no Predict box before it stops the build (``-W``).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: Files, relative to ``_static/`` (from ``book/_ext/static/``).
REVEAL_JS = "kvbook/predict-reveal.js"
REVEAL_CSS = "kvbook/predict-reveal.css"
#: After sphinx's and the theme's scripts (default priority 500), beside missions.js.
REVEAL_PRIORITY = 800
#: The class the prediction cell's container gets, and the Predict box's own.
CELL_CLASS = "kvbook-prediction-cell"
BOX_CLASS = "kvbook-predict"

_CALL = re.compile(r"""exercises\.predict\(\s*["'](ch\d\d-predict-[\w-]+)["']""")
_COMMENT = re.compile(r"^prediction\s*=\s*None\s*#\s*your guess\b(.*)$", re.M | re.I)


@dataclass(frozen=True)
class PredictionCell:
    """What the guess form needs from a prediction cell's source."""

    id: str
    #: The input's label: "Your guess, in ms" (the comment, capitalised).
    label: str
    #: What follows the number when the guess is shown ("ms"), or "" when the
    #: comment names no unit ("your guess: the engine step").
    unit: str
    #: The comment's description when it is not a unit ("the engine step"), else "".
    note: str


def prediction_cell(source: str) -> PredictionCell | None:
    """The prediction in a cell's ``source``, or ``None`` when it is not a prediction cell.

    The unit comes from the cell's comment: ``# your guess, in KiB per token``
    gives the unit "KiB per token"; any other wording (``# your guess: the
    engine step``, ``# your guess, a ratio``) is kept as a note shown beside
    the number. A cell without the comment gets the plain label "Your guess".
    """
    call = _CALL.search(source)
    if not call:
        return None
    comment = _COMMENT.search(source)
    rest = comment.group(1).strip() if comment else ""
    description = rest.lstrip(",:").strip()
    unit = description[3:].strip() if description.startswith("in ") else ""
    label = "Your guess" + (" " if rest[:1].isalnum() else "") + rest
    return PredictionCell(call.group(1), label, unit, "" if unit else description)


def guess_form_html(cell: PredictionCell) -> str:
    """The (hidden) guess form appended to the cell's Predict box."""
    e = html.escape
    field = f"kvbook-guess-{cell.id}"
    return (
        f'<form class="kvbook-guess" data-prediction="{e(cell.id)}" data-unit="{e(cell.unit)}" '
        f'data-note="{e(cell.note)}" hidden>\n'
        f'<label for="{e(field)}">{e(cell.label)}</label>\n'
        f'<span class="kvbook-guess-controls">'
        f'<input type="number" step="any" inputmode="decimal" id="{e(field)}" name="guess" '
        f'aria-describedby="{e(field)}-message">'
        f'<button type="submit">Commit my guess</button>'
        f'<button type="button" class="kvbook-guess-skip">Show the answer without guessing</button>'
        f'</span>\n'
        f'<span class="kvbook-guess-message" id="{e(field)}-message" aria-live="polite"></span>\n'
        f'</form>\n'
    )


def _is_code_cell(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


def cell_source(cell: nodes.container) -> str:
    """A myst-nb code cell's source (its first literal block)."""
    blocks = list(cell.findall(nodes.literal_block))
    return blocks[0].astext() if blocks else ""


def predict_box_before(cell: nodes.container) -> nodes.Element | None:
    """The Predict box among the cell's earlier siblings, with no other cell in between."""
    parent = cell.parent
    for sibling in reversed(parent.children[: parent.index(cell)]):
        if isinstance(sibling, nodes.admonition) and BOX_CLASS in sibling["classes"]:
            return sibling
        if _is_code_cell(sibling) or isinstance(sibling, nodes.section):
            return None
    return None


class PredictionForms(SphinxPostTransform):
    """Mark each prediction cell and give its Predict box the guess form."""

    default_priority = 800
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for cell in list(self.document.findall(_is_code_cell)):
            found = prediction_cell(cell_source(cell))
            if found is None:
                continue
            box = predict_box_before(cell)
            if box is None:
                logger.warning(f"kvbook_predict: prediction cell {found.id!r} has no "
                               f"`{BOX_CLASS}` admonition right before it", location=cell)
                continue
            cell["classes"].append(CELL_CLASS)
            box += nodes.raw("", guess_form_html(found), format="html")


def _config_inited(app: Sphinx, config: Config) -> None:
    static = str(Path(__file__).parent / "static")
    if static not in config.html_static_path:
        config.html_static_path = [*config.html_static_path, static]


def _builder_inited(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.add_css_file(REVEAL_CSS)
        app.add_js_file(REVEAL_JS, priority=REVEAL_PRIORITY)


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.add_post_transform(PredictionForms)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
