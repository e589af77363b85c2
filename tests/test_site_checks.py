"""The static site's exercise checks are the kernel's: one definition, the same verdicts.

``checks.js`` (in ``book/_ext/static/kvbook/``) runs kvsim's check rules in the
browser on ``checks-data.js``, which ``scripts/site_data.py`` writes from
:func:`kvsim.book.exercises.site_data`. These tests:

* run the browser's functions under Node and kvsim's on the same answers, and
  compare every message: the right answer, each trap, answers far off, at the
  tolerance's edges, with thousands separators; every option of a choice; and
  predictions close, above, below and far off;
* compare Python's ``plain()`` and the browser's on thousands of numbers, ties
  to the even digit included;
* check that the committed data file is what kvsim computes now.

Node runs the page's own script (no copy of its logic here). Without Node the
module skips, and fails under ``KVBOOK_REQUIRE_SITE=1`` (``make test``).
"""
from __future__ import annotations

import json
import math
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from kvsim.book import checks_site, exercises
from kvsim.book.exercises import plain

ROOT = Path(__file__).resolve().parents[1]
CHECKS_JS = ROOT / "book" / "_ext" / "static" / "kvbook" / "checks.js"
DRIVER = r"""
const fs = require("fs");
const C = require(process.argv[2]);
const data = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const cases = JSON.parse(fs.readFileSync(process.argv[4], "utf8"));
const out = cases.map((c) => {
  if (c.kind === "plain") return C.plain(c.x, c.isInt);
  if (c.kind === "exercise") return C.evaluate(data, c.id, c.text);
  return C.judgePrediction(data, c.id, c.text);
});
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def node():
    path = shutil.which("node")
    if path is None:
        message = "node is not installed: the browser's checks are run under Node (apt-get install nodejs)"
        if os.environ.get("KVBOOK_REQUIRE_SITE", "") == "1":
            pytest.fail(message + " (KVBOOK_REQUIRE_SITE=1)", pytrace=False)
        pytest.skip(message)
    return path


def run_in_node(node, tmp_path, data, cases) -> list:
    driver, data_file, cases_file = (tmp_path / "driver.js", tmp_path / "data.json",
                                     tmp_path / "cases.json")
    driver.write_text(DRIVER)
    data_file.write_text(json.dumps(data))
    cases_file.write_text(json.dumps(cases))
    proc = subprocess.run([node, str(driver), str(CHECKS_JS), str(data_file), str(cases_file)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def as_kernel_value(text: str):
    """What a notebook's ``answer = <text>`` holds (thousands separators as the site takes them)."""
    t = text.replace(",", "")
    return int(t) if not any(c in t for c in ".eE") else float(t)


def number_cases(exercise_id: str, entry: dict) -> list[str]:
    """Answers to try: the right one, every trap, the range's inside and edges, far off."""
    target = entry["expected"]
    values = [target, target * 3 + 7, -target, 0, target * (1 + 2 * entry["rel_tol"]) + 1]
    if entry["between"]:
        low, high = entry["between"]
        values += [low, high, (low + high) / 2, low - 1, high + 1]
    else:
        edge = max(entry["abs_tol"], entry["rel_tol"] * abs(target))
        values += [target + edge, target - edge, target + 2 * edge + 1]
    values += [trap for trap, _ in entry["traps"]]
    texts = []
    for v in values:
        if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
            texts.append(str(int(v)))
            texts.append(f"{int(v):,}")
        else:
            texts.append(repr(float(v)))
    return texts


@pytest.fixture(scope="module")
def data():
    return checks_site.site_data()


def test_the_browser_judges_every_exercise_as_the_kernel_does(node, tmp_path, data):
    cases, expected = [], []
    for ex_id, entry in data["exercises"].items():
        texts = entry["options"] + ["  " + entry["options"][0].upper() + " "] \
            if entry["kind"] == "choice" else number_cases(ex_id, entry)
        for text in texts:
            cases.append({"kind": "exercise", "id": ex_id, "text": text})
            answer = text if entry["kind"] == "choice" else as_kernel_value(text)
            expected.append(exercises.evaluate(ex_id, answer))
    got = run_in_node(node, tmp_path, data, cases)
    mismatches = [(c["id"], c["text"], e.message, g["message"])
                  for c, e, g in zip(cases, expected, got, strict=True)
                  if (e.status, e.message) != (g["status"], g["message"])]
    assert not mismatches, "\n".join(map(str, mismatches[:10]))
    statuses = {g["status"] for g in got}
    assert statuses == {"right", "wrong"}, statuses          # both verdicts were exercised
    # every trap that can fire fired in the browser with its own hint
    for ex_id, entry in data["exercises"].items():
        for _trap, hint in entry["traps"]:
            assert any(c["id"] == ex_id and hint in g["message"]
                       for c, g in zip(cases, got, strict=True)), (ex_id, hint)


def test_the_browser_gives_a_prediction_the_kernels_sentence(node, tmp_path, data):
    cases, expected = [], []
    for p_id, entry in data["predictions"].items():
        v = entry["value"]
        for guess in (v, v * 1.05, v * 0.5, v * 1.5, v * 3, v / 4, v * 2.25, 0, -1, 7):
            text = repr(float(guess)) if not float(guess).is_integer() else str(int(guess))
            cases.append({"kind": "prediction", "id": p_id, "text": text})
            expected.append(exercises.judge_prediction(p_id, as_kernel_value(text)))
    got = run_in_node(node, tmp_path, data, cases)
    mismatches = [(c["id"], c["text"], e.message, g["message"])
                  for c, e, g in zip(cases, expected, got, strict=True)
                  if (e.status, e.message) != (g["status"], g["message"])]
    assert not mismatches, "\n".join(map(str, mismatches[:10]))
    assert {g["status"] for g in got} == {"close", "off"}


def test_numbers_print_as_the_kernel_prints_them(node, tmp_path):
    rng = random.Random(7)
    xs = [0.125, 0.375, 2.5, 1234.25, 1234.35, 999.95, 9.9995, 0.00012345, 0.0001, 1000.0, 1e15,
          1e15 + 2, 123456789.0, 5e-5, -0.5, -1234.25, 1 / 3, 2 / 3, 0.1 + 0.2, 1e21, 1.5e22]
    xs += [rng.uniform(-1e6, 1e6) for _ in range(1500)]
    xs += [round(rng.uniform(0, 100), rng.randint(0, 4)) for _ in range(1500)]   # ties included
    xs += [rng.randint(0, 10**6) + 0.5 for _ in range(300)]
    xs += [10.0 ** e for e in range(-4, 7)] + [10.0 ** e * 0.99995 for e in range(-3, 6)]
    cases = [{"kind": "plain", "x": x, "isInt": False} for x in xs]
    ints = [0, 7, 1735, -1735, 10**15, 2**53 - 1, 196_608]     # whole numbers a double holds
    cases += [{"kind": "plain", "x": i, "isInt": True} for i in ints]
    got = run_in_node(node, tmp_path, {}, cases)
    want = [plain(float(x)) for x in xs] + [plain(i) for i in ints]
    mismatches = [(c["x"], w, g) for c, w, g in zip(cases, want, got, strict=True) if w != g]
    assert not mismatches, mismatches[:10]
    assert all(math.isfinite(x) for x in xs)


def test_the_committed_data_is_what_kvsim_computes_now(data):
    committed = checks_site.read_site_data((ROOT / checks_site.DATA_PATH).read_text(encoding="utf-8"))
    assert committed == json.loads(json.dumps(data)), (
        f"{checks_site.DATA_PATH} is out of date: run python scripts/site_data.py checks "
        f"(make site-data) and commit it")


def test_the_data_file_is_read_back_or_refused_in_one_line():
    text = checks_site.site_data_js({"format": "kvbook-checks", "x": [0.87]})
    assert checks_site.read_site_data(text) == {"format": "kvbook-checks", "x": [0.87]}
    with pytest.raises(ValueError, match="scripts/site_data.py") as info:
        checks_site.read_site_data('{"format": 1}')
    assert "\n" not in str(info.value)
