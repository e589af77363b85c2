"""The Predict boxes' guess forms on the site (``book/_ext/kvbook_predict.py``), read from the notebooks.

The browser side (the veil, the reveal, localStorage) is tested in
``tests/test_site.py``; here, without a build: every prediction cell of every
chapter is found, with an id kvsim registers and a label naming what to type.
"""
from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

from kvsim.book import exercises

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("kvbook_predict", ROOT / "book" / "_ext" / "kvbook_predict.py")
kvbook_predict = importlib.util.module_from_spec(_spec)
sys.modules["kvbook_predict"] = kvbook_predict            # dataclasses look their module up
_spec.loader.exec_module(kvbook_predict)


def _chapters() -> list[Path]:
    import yaml

    toc = json.dumps(yaml.safe_load((ROOT / "_toc.yml").read_text()))
    return [ROOT / (f + ".ipynb") for f in re.findall(r"book/ch\d\d-[\w-]+", toc)
            if (ROOT / (f + ".ipynb")).exists()]


CHAPTERS = _chapters()


def test_the_comment_names_the_unit_or_what_to_type():
    cell = kvbook_predict.prediction_cell
    assert cell('prediction = None   # your guess, in KiB per token\n'
                'exercises.predict("ch01-predict-gqa", prediction)') == kvbook_predict.PredictionCell(
        "ch01-predict-gqa", "Your guess, in KiB per token", "KiB per token", "")
    step = cell('prediction = None   # your guess: the engine step\n'
                "exercises.predict('ch02-predict-first-preemption', prediction)")
    assert (step.id, step.label, step.unit, step.note) == (
        "ch02-predict-first-preemption", "Your guess: the engine step", "", "the engine step")
    plain = cell('prediction = None\nexercises.predict("ch09-predict-x", prediction)')
    assert (plain.label, plain.unit, plain.note) == ("Your guess", "", "")
    assert cell('answer = None\nexercises.check("ch01-gqa-bytes", answer)') is None
    assert cell('lab.commit_guess(1, prediction)') is None


def test_the_form_is_hidden_until_the_script_shows_it_and_escapes_what_it_quotes():
    form = kvbook_predict.guess_form_html(kvbook_predict.PredictionCell(
        "ch09-predict-x", 'Your guess, in "quotes" & <tags>', '"quotes" & <tags>', ""))
    assert form.startswith('<form class="kvbook-guess" data-prediction="ch09-predict-x"')
    assert ' hidden>' in form.splitlines()[0]
    assert "<tags>" not in form and "&lt;tags&gt;" in form and "&quot;quotes&quot;" in form
    field = re.search(r'<input [^>]*id="([^"]+)"', form).group(1)
    assert f'<label for="{field}">' in form, "the input is labelled"
    assert "Commit my guess" in form and "Show the answer without guessing" in form


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_prediction_cell_gets_a_form_with_a_registered_id(path):
    nb = nbformat.read(path, as_version=4)
    found = [kvbook_predict.prediction_cell(c.source) for c in nb.cells
             if c.cell_type == "code" and "exercises.predict(" in c.source]
    assert found and None not in found
    assert {p.id for p in found} == {i for i in exercises.list_predictions() if i.startswith(path.stem[:4])}
    for p in found:
        assert p.unit or p.note, f"{p.id}: the cell's comment names no unit (# your guess, in <unit>)"


def test_a_prediction_cell_pairs_with_the_predict_box_just_before_it():
    from docutils import nodes

    def code_cell(source):
        cell = nodes.container(nb_element="cell_code", classes=["cell"])
        cell += nodes.literal_block(source, source)
        return cell

    source = 'prediction = None   # your guess, in ms\nexercises.predict("ch09-predict-x", prediction)'
    box = nodes.admonition("", classes=["kvbook-predict"])
    paired = code_cell(source)
    nodes.section("", box, nodes.paragraph("", "Put your guess in the cell."), paired)
    assert kvbook_predict.predict_box_before(paired) is box
    assert kvbook_predict.prediction_cell(kvbook_predict.cell_source(paired)).id == "ch09-predict-x"

    orphan = code_cell(source)             # another cell between: not this box's cell
    nodes.section("", nodes.admonition("", classes=["kvbook-predict"]), code_cell("x = 1"), orphan)
    assert kvbook_predict.predict_box_before(orphan) is None
    other_box = code_cell(source)          # a box of another kind is no Predict box
    nodes.section("", nodes.admonition("", classes=["kvbook-version"]), other_box)
    assert kvbook_predict.predict_box_before(other_box) is None
