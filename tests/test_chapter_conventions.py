"""The book's conventions, checked on every chapter notebook (CONTRIBUTING.md lists them).

Chapter 1 fixed the form every later chapter copies; these tests hold each
chapter listed in ``_toc.yml`` to it:

* exercises and predictions are committed empty (``answer = None``,
  ``prediction = None``), a prediction follows every teaching section, and
  each chapter asks one or two "what happens if" questions;
* 1,500-2,500 words of prose; equations labelled and referenced; glued
  numbers never bold; no helper cells hidden on the site (they show in Binder);
* one "On your server" box, version-dependent facts in the version box style,
  predictions in the prediction style, one reconciliation-with-the-sources
  dropdown;
* every chart follows ``kvsim.book.charts.THEME``: text of at least 12 px, a title,
  a unit in every axis title, the colour-blind-safe palette.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from kvsim.book import charts, exercises

from notebook_helpers import glue_references, glued, quoted_above_their_glue

ROOT = Path(__file__).resolve().parents[1]


def _chapters() -> list[Path]:
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = re.findall(r"book/ch\d\d-[\w-]+", json.dumps(toc))
    return [ROOT / (f + ".ipynb") for f in files if (ROOT / (f + ".ipynb")).exists()]


CHAPTERS = _chapters()
IDS = [p.stem for p in CHAPTERS]


def _nb(path):
    return nbformat.read(path, as_version=4)


def _markdown(nb) -> str:
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _prefix(path: Path) -> str:
    return path.stem[:4]                     # "ch01"


def prose_words(markdown: str) -> int:
    """Words a reader reads: code blocks, math, directive options and roles' targets left out."""
    text = re.sub(r"```.*?\n(.*?)```", lambda m: "" if "{code-cell}" in m.group(0) else m.group(1),
                  markdown, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$(\s*\([\w-]+\))?", " ", text, flags=re.S)
    text = re.sub(r"^\s*:[\w-]+:.*$", " ", text, flags=re.M)        # directive options
    text = re.sub(r"^`{3,}.*$", " ", text, flags=re.M)               # fences
    text = re.sub(r"\{eval\}`[^`]*`|\{eq\}`[^`]*`", " N ", text)    # a number, an equation
    text = re.sub(r"\{[\w:-]+\}`([^`<]*)(<[^>]*>)?`", r" \1 ", text)  # roles: keep the shown text
    return len(re.findall(r"[A-Za-z0-9][\w'’.,%/-]*", text))


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_exercises_and_predictions_are_committed_empty(path):
    nb = _nb(path)
    checks = predicts = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if "exercises.check(" in cell.source:
            checks += 1
            assert re.search(r"^answer = None\b", cell.source, re.M), cell.source
        if "exercises.predict(" in cell.source:
            predicts += 1
            assert re.search(r"^prediction = None\b", cell.source, re.M), cell.source
    labels = re.findall(r":label: ex-([\w-]+)", _markdown(nb))
    assert checks == len(labels) >= 5
    prefix = _prefix(path)
    assert set(labels) == {i for i in exercises.list_exercises() if i.startswith(prefix + "-")}
    assert 1 <= sum("whatif" in label for label in labels) <= 2, "one or two 'what happens if' questions"
    assert predicts == len([p for p in exercises.list_predictions() if p.startswith(prefix + "-")])


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_a_prediction_follows_every_teaching_section(path):
    nb = _nb(path)
    section, found = None, {}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for m in re.finditer(r"^## (.+)$", cell.source, re.M):
                section = m.group(1).strip()
                found.setdefault(section, 0)
        elif section and "exercises.predict(" in cell.source:
            found[section] += 1
    exempt = {"Exercises", "Key points"}
    missing = [s for s, n in found.items() if n == 0 and s not in exempt and not s.startswith("Try it")]
    assert not missing, f"sections without a predict-first prompt: {missing}"
    # the prompt says what to predict, in the prediction box style, before the cell
    assert _markdown(nb).count(":class: kvbook-predict") == sum(found.values())


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_prose_length(path):
    words = prose_words(_markdown(_nb(path)))
    assert 1_500 <= words <= 2_500, f"{path.name}: {words} words of prose (1,500-2,500)"


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_equations_are_labelled_and_referenced(path):
    md = _markdown(_nb(path))
    labels = re.findall(r"\$\$\s*\((eq-[\w-]+)\)", md)
    assert len(labels) >= 2, "derive with labelled equations"
    unreferenced = [label for label in labels if f"{{eq}}`{label}`" not in md]
    assert not unreferenced, f"equations never referenced: {unreferenced}"


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_glued_numbers_are_not_bold_and_no_helper_cell_hides(path):
    nb = _nb(path)
    md = _markdown(nb)
    bold = re.findall(r"\*\*[^*\n]*\{eval\}`glued[^*\n]*\*\*", md)
    assert not bold, f"bold glued numbers: {bold[:3]}"
    hidden = [c.source.splitlines()[0] for c in nb.cells if c.cell_type == "code"
              and {"remove-cell", "remove_cell", "remove-input", "remove_input"}
              & set(c.get("metadata", {}).get("tags", []))]
    assert not hidden, f"cells hidden on the site but shown in Binder: {hidden}"
    uses_glue = "{eval}`glued(" in md
    assert not uses_glue or any("glue_numbers(" in c.source for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_one_server_box_version_boxes_and_one_reconciliation(path):
    md = _markdown(_nb(path))
    assert md.count(":class: kvbook-server") == 1, "one 'On your server' box per chapter"
    titles = re.findall(r"\{admonition\}\s*(.+)\n:class: ([\w-]+)", md)
    for title, cls in titles:
        if title.startswith("Version"):
            assert cls == "kvbook-version", title
        if title.startswith("On your server"):
            assert cls == "kvbook-server", title
        if title.startswith("Predict"):
            assert cls == "kvbook-predict", title
    assert any(t.startswith("Version") for t, _ in titles), "no version box"
    dropdowns = re.findall(r"\{dropdown\}\s*(.+)", md)
    assert sum("source" in d for d in dropdowns) == 1, f"one reconciliation dropdown: {dropdowns}"
    for line in ("GPU KV cache size", "--kv-cache-tokens") if _prefix(path) == "ch01" else ():
        assert line in md


def _chart_specs(nb) -> list[dict]:
    specs = []
    decoder = json.JSONDecoder()
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            html = "".join(out.get("data", {}).get("text/html", ""))
            if "altair-viz-" not in html:
                continue
            i = html.index("})(", html.index("function(spec, embedOpt)")) + 3
            specs.append(decoder.raw_decode(html, i)[0])
    return specs


def _walk(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield path + (k,), v
            yield from _walk(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, path + (i,))


ALLOWED_COLOURS = {c.lower() for c in charts.PALETTE} | {charts.NEUTRAL.lower(), "black", "#000000", "white"}


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_every_chart_follows_the_theme(path):
    specs = _chart_specs(_nb(path))
    assert specs, f"{path.name} has no chart"
    for spec in specs:
        assert spec.get("config") == charts.THEME, "chart not drawn in the book's theme"
        title = spec.get("title")
        assert title and (title if isinstance(title, str) else title.get("text")), "a title states the finding"
        for keypath, value in _walk(spec):
            key = keypath[-1]
            if key in ("fontSize", "labelFontSize", "titleFontSize", "subtitleFontSize") and isinstance(value, (int, float)):
                assert value >= charts.MIN_FONT_PX, f"{'.'.join(map(str, keypath))} = {value}"
            if key in ("color", "fill", "stroke") and isinstance(value, str) and value.startswith("#"):
                assert value.lower() in ALLOWED_COLOURS, f"colour {value} outside the palette"
            if key == "range" and isinstance(value, list) and value and isinstance(value[0], str) and value[0].startswith("#"):
                assert {v.lower() for v in value} <= ALLOWED_COLOURS, value
            if key in ("x", "y") and isinstance(value, dict) and value.get("type") == "quantitative" and "field" in value:
                axis_title = value.get("title")
                assert axis_title and "(" in axis_title, f"axis {value['field']} needs a unit: {axis_title!r}"
            if key == "width" and value not in ("container",) and isinstance(value, (int, float)):
                assert value <= 700, f"a chart {value} px wide is shrunk below 12 px text on the page"


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_charts_name_the_kv_dtype_each_model_really_uses(path):
    """A chart that calls an fp16 cache "bf16" is wrong about it (chapter 1's first edition)."""
    import kvsim

    for spec in _chart_specs(_nb(path)):
        values = []
        for keypath, value in _walk(spec):
            if keypath[-1] == "values" and isinstance(value, list):
                values += [v for v in value if isinstance(v, dict)]
        for row in values:
            model = row.get("model")
            dtype = row.get("kv_dtype") or (row.get("kv", "").split(" ")[0] if row.get("kv") else None)
            if model in kvsim.list_models() and dtype in ("fp16", "bf16", "fp32"):
                assert dtype == kvsim.get_model(model).dtype, (model, dtype)


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_every_glue_reference_in_the_prose_is_defined(path):
    nb = _nb(path)
    used = glue_references(nb)
    assert used, "the chapter quotes no glued numbers"
    assert used <= set(glued(nb)), sorted(used - set(glued(nb)))


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_every_number_is_glued_above_the_prose_that_quotes_it(path):
    """JupyterLab evaluates a markdown cell's numbers when a run reaches it (make execute's
    client evaluates them all at the end, so only this order test sees the difference): a number
    glued below its prose would read ``…`` there, or, in a Predict box, take the question's own
    number away (CONTRIBUTING.md, *Numbers*)."""
    late = quoted_above_their_glue(_nb(path))
    assert not late, [f"cell {i} quotes {name}, glued in cell {j}" for i, name, j in late][:12]


def malformed_eval_roles(markdown: str) -> list[str]:
    """Lines with an ``{eval}`` role whose content holds a ``}`` or is not closed on the line."""
    bad = []
    for line in markdown.splitlines():
        for m in re.finditer(r"(?<!`)\{eval\}`", line):     # not inside inline code
            rest = line[m.end():]
            close = rest.find("`")
            if close < 0 or "}" in rest[:close]:
                bad.append(line.strip())
    return bad


def test_malformed_eval_roles_are_caught():
    assert malformed_eval_roles('{eval}`glued("x:.2f")} times') == ['{eval}`glued("x:.2f")} times']
    assert malformed_eval_roles('a {eval}`glued("x:.2f")') == ['a {eval}`glued("x:.2f")']
    assert malformed_eval_roles('{eval}`glued("x:.2f")` and {eval}`glued("y:,d")` ms') == []
    assert malformed_eval_roles("the `{eval}` role") == []


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_eval_roles_are_well_formed(path):
    """``{eval}`glued("name:fmt")}`` (a brace for the closing backtick) renders as raw text."""
    bad = malformed_eval_roles(_markdown(_nb(path)))
    assert not bad, bad


def _title_lines(spec: dict) -> list[str]:
    """A chart's title, one string per line (Vega-Lite takes a string or a list of lines)."""
    title = spec.get("title")
    text = title.get("text", "") if isinstance(title, dict) else title or ""
    return list(text) if isinstance(text, list) else [text]


def _cell_chart_specs(cell) -> list[dict]:
    return _chart_specs(nbformat.from_dict({"cells": [cell]}))


def answering_titles(nb) -> list[tuple[int, str]]:
    """``(cell index, title)`` of each chart after a prediction cell (up to the next markdown
    cell) whose title states something instead of asking: no line of it ends with "?"."""
    found, after_prediction = [], False
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            after_prediction = False
        elif "exercises.predict(" in cell.source:
            after_prediction = True
        elif after_prediction:
            for spec in _cell_chart_specs(cell):
                if not any(line.rstrip().endswith("?") for line in _title_lines(spec)):
                    found.append((index, " ".join(_title_lines(spec))))
    return found


def test_answering_titles_are_found():
    def chart_cell(title):
        html = ('<div id="altair-viz-0"></script><script>(function(spec, embedOpt){})('
                + json.dumps({"title": title}) + ")</script>")
        return nbformat.v4.new_code_cell("chart()", outputs=[nbformat.v4.new_output(
            "display_data", {"text/html": html})])

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell('prediction = None\nexercises.predict("ch09-predict-x", prediction)'),
        chart_cell({"text": "25 fit"}),
        chart_cell({"text": ["How many fit", "at 600 tokens?"], "subtitle": "a pool"}),
        chart_cell("How many fit?"),
        nbformat.v4.new_markdown_cell("Text."),
        chart_cell("Not after a prediction"),
    ])
    assert answering_titles(nb) == [(1, "25 fit")]


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_a_chart_right_after_a_predict_box_asks_the_question(path):
    """Design §6: the title asks the question; the finding shows once the reader has guessed."""
    found = answering_titles(_nb(path))
    assert not found, f"charts after a prediction cell that state the answer (cell, title): {found}"


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_no_dollar_sign_opens_inline_math_before_a_glued_number(path):
    """MyST's dollarmath reads ``$`` ... ``$`` as inline math, so two prices written
    ``${eval}...`` in one paragraph render as raw roles on the site (found in chapter 6):
    a dollar sign before a glued number is written ``\\$``."""
    assert not re.findall(r"(?<!\\)\$\{eval\}", _markdown(_nb(path))), path.name
