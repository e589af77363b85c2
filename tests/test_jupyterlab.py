"""The chapters in a real JupyterLab, driven in Debian's chromium with the network closed.

Binder, a learner's laptop and a workshop room all open the chapters in
JupyterLab, not on the static site, and all open *learner copies*
(:mod:`kvsim.book.learner`; Binder's ``postBuild`` makes them in place). This
module does the same: it starts the pinned JupyterLab (with
``jupyterlab-myst``, from requirements.txt) on 127.0.0.1 over a copy of
``book/`` turned into learner copies as ``postBuild`` turns it, with no
environment variable set, opens every chapter in headless chromium through
Playwright with every non-local request aborted, and for each chapter:

* opened fresh, the chapter is not marked modified, nothing leaves 127.0.0.1,
  every saved chart draws (the chart library comes with the copy), no MyST
  source, raw citation key, glossary role or unresolved equation label shows,
  and no Predict box is answered: each region after a prediction cell (what the
  site veils) shows no output and none of the numbers its prose quotes;
* *Run All* stops at the first prediction cell, with the note that it waits for
  a guess, and still no Predict box is answered;
* a guess committed in that cell prints kvsim's feedback sentence (the kernel's
  own, word for word), its region's numbers and outputs appear, and the run
  goes on to the next prediction, where ``prediction = "skip"`` shows the answer
  without a guess; so through the whole chapter;
* then: each Predict box and exercise renders as one, solutions are folded,
  three sentences with glued numbers read word for word as on the static site,
  every chart draws, still offline, and again after a save, a reload of the
  tab and the set-up cell run again.

Needs the built site (for the comparison) and chromium: ``make test`` builds
first. Run alone, the module skips when either is missing, unless
``KVBOOK_REQUIRE_SITE=1`` (set by ``make test`` and ``.ci/run``) turns every
skip into a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest

from kvsim.book import exercises
from kvsim.book.learner import predict_regions

from browser_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    SITE,
    require_site_and_chromium,
    serve,
    skip_or_fail,
)
from notebook_helpers import glued_where

pytestmark = pytest.mark.jupyterlab

require_site_and_chromium()
if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
    skip_or_fail("jupyterlab is not installed next to this Python: pip install -r requirements.txt")
try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    skip_or_fail("playwright is not installed: pip install -r requirements.txt")

sys.path.insert(0, str(ROOT / "book" / "_ext"))
from kvbook_workshop import toc_docnames  # the book's one reader of _toc.yml

CHAPTERS = [ROOT / (d + ".ipynb") for d in toc_docnames(ROOT)
            if re.search(r"/ch\d\d-", d) and (ROOT / (d + ".ipynb")).exists()]

#: MyST source, raw references and errors that must never reach a reader's eyes.
RAW = ["{glue", "{eval}", "{exercise", "{solution", "{term}", "{eq}", "{cite", "{doc}", ":class:", ":::",
       "Unknown Directive", "NameError", "Traceback", "KvsimError", "Citation Not Found", "(eq-",
       "glued("]

#: Console errors that are not the book's. When a cell raises (here: a prediction that waits
#: for its guess), the kernel aborts the requests queued behind it, jupyterlab-myst's requests
#: for the prose's numbers below among them, and jupyterlab-myst leaves that rejection
#: unhandled; the prose keeps what it showed ("…"), and nothing shows on the page.
CONSOLE_ALLOW = [re.compile(r"^uncaught: Kernel response was not OK$")]

#: What a prediction cell shows while the run waits for a guess
#: (kvsim.book.exercises.predict in a learner copy).
HOLD = "Waiting for your guess"
#: What a cell below it shows instead of running (kvsim.book.exercises.not_run_note).
NOT_RUN = "Not run: the run waits for your guess"

#: User settings for the test's JupyterLab: every cell in the DOM (no windowing,
#: so the page can be read whole), no news or update checks (they go online).
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                        "checkForUpdates": False},
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------
# Fixtures: a JupyterLab over a copy of book/, the built site, one browser.


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    home = tmp_path_factory.mktemp("jupyterlab")
    shutil.copytree(ROOT / "book", home / "book", ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints"))
    shutil.copy2(ROOT / "_toc.yml", home / "_toc.yml")
    for name, values in SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = _free_port(), os.urandom(12).hex()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTER_DATA_DIR=str(home / "data"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               IPYTHONDIR=str(home / "ipython"),
               JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"))
    for name in ("KVSIM_OFFLINE_CHARTS", "KVBOOK_PREDICT_HOLD"):     # nothing set, as a learner
        env.pop(name, None)
    # As Binder's postBuild does: the chapters become learner copies, signed (trusted).
    subprocess.run([sys.executable, "-m", "kvsim.book.learner", "--in-place", "--book", str(home / "book")],
                   env=env, check=True, capture_output=True)
    with open(home / "jupyterlab.log", "w") as log:    # closed however the fixture ends
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "jupyter-lab"), "--no-browser", "--allow-root",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={home / 'book'}"],
            stdout=log, stderr=subprocess.STDOUT, env=env)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    server.kill()
                    pytest.fail(f"JupyterLab did not start: see {home / 'jupyterlab.log'}:\n"
                                + (home / "jupyterlab.log").read_text()[-2000:], pytrace=False)
                time.sleep(0.5)
        yield {"base": base, "token": token, "log": home / "jupyterlab.log", "root": home / "book"}
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()


@pytest.fixture(scope="module")
def site_url():
    with serve(SITE) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


def _offline_context(browser, blocked: list, errors: list):
    context = browser.new_context(viewport={"width": 1280, "height": 900})

    def route(route):
        if urlparse(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    return context


# --------------------------------------------------------------------------
# JavaScript run in the pages.

NORMALISE = r"""(t) => t.replace(/[\u2018\u2019]/g, "'").replace(/[\u201c\u201d]/g, '"')
                          .replace(/\u00a0/g, ' ').replace(/\s+/g, ' ').trim()"""

#: On the static site: paragraphs that quote a glued number and nothing a
#: JupyterLab renders differently (links, equation numbers, math, citations).
SITE_SENTENCES = f"""() => {{
    const norm = {NORMALISE};
    return Array.from(document.querySelectorAll('article p'))
        .filter(p => p.querySelector('span.output.text_plain') && !p.closest('.admonition, details, table')
                     && !p.querySelector('a, .math, mjx-container, span.math'))
        .map(p => norm(p.textContent));
}}"""

LAB_STATE = f"""() => {{
    const norm = {NORMALISE};
    const prose = Array.from(document.querySelectorAll('.jp-MarkdownCell .lm-Widget.myst'));
    const text = prose.map(m => m.textContent).join('\\n');
    const headers = Array.from(document.querySelectorAll('.jp-MarkdownCell .myst-admonition-header-text'));
    const solutions = Array.from(document.querySelectorAll('.jp-MarkdownCell details.myst-exercise'));
    const exercises = Array.from(document.querySelectorAll('.jp-MarkdownCell .myst-exercise:not(details)'))
        .filter(e => /^Exercise/.test(norm(e.querySelector('.myst-exercise-title')?.textContent || '')));
    // a folded body is not rendered: checkVisibility() is false and innerText leaves it out
    const visible = el => !!el && (el.checkVisibility({{visibilityProperty: true, opacityProperty: true}})
        || (norm(el.textContent).length > 0 && norm(el.closest('details').innerText).includes(norm(el.textContent))));
    return {{
        text,
        paragraphs: prose.flatMap(m => Array.from(m.querySelectorAll('p'))).map(p => norm(p.textContent)),
        predict: headers.filter(h => norm(h.textContent) === 'Predict').length,
        predictClassed: document.querySelectorAll('.jp-MarkdownCell aside.kvbook-predict').length,
        exercises: exercises.length,
        solutions: solutions.length,
        solutionsOpen: solutions.filter(d => d.open).length,
        solutionBodiesVisible: solutions.filter(d => visible(d.querySelector('.details-body, .myst-exercise-body'))).length,
        solutionTitles: solutions.map(d => norm(d.querySelector('summary').textContent)),
    }};
}}"""

CHARTS = """() => Array.from(document.querySelectorAll('.jp-OutputArea div[id^="altair-viz-"]')).map(el => ({
    id: el.id,
    drawn: !!el.querySelector('svg, canvas'),
    error: /Error loading script|JavaScript Error|Javascript Error/.test(el.innerText),
}))"""

PROMPTS = """() => Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')).map(e => e.textContent.trim())"""


def _hidden_code_cells(notebook: Path) -> list[bool]:
    """Per code cell: is its source folded (``jupyter.source_hidden``)? JupyterLab then shows no
    execution count for it, so its run is seen in the cells after it."""
    return [bool(c.metadata.get("jupyter", {}).get("source_hidden"))
            for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"]


def _done(prompts: list[str], hidden: list[bool]) -> bool:
    return len(prompts) == len(hidden) and all(
        h or re.fullmatch(r"\[\d+\]:", p) for p, h in zip(prompts, hidden, strict=True))


def _wait_until_run(page, notebook: Path, seconds: int = 300) -> None:
    hidden = _hidden_code_cells(notebook)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _done(page.evaluate(PROMPTS), hidden):
            return
        page.wait_for_timeout(500)
    pytest.fail(f"cells still running or never run after {seconds} s: {page.evaluate(PROMPTS)}")


def _menu(page, menu: str, item: str) -> None:
    page.locator(f".lm-MenuBar-itemLabel:text-is('{menu}')").click()
    page.locator(f".lm-Menu-itemLabel:text-is('{item}')").click()


def _open(page, lab, notebook: Path) -> None:
    # a workspace of its own, reset: only this notebook open, whatever ran before
    page.goto(f"{lab['base']}/lab/workspaces/{notebook.stem}/tree/{notebook.name}?reset&token={lab['token']}",
              wait_until="load", timeout=120_000)
    page.wait_for_selector(".jp-NotebookPanel .jp-MarkdownCell .lm-Widget.myst", timeout=120_000)
    # every markdown cell rendered by MyST (the prose, the boxes, the exercises)
    page.wait_for_function(
        "(n) => document.querySelectorAll('.jp-MarkdownCell .lm-Widget.myst').length >= n",
        arg=sum(1 for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "markdown"),
        timeout=60_000)
    page.wait_for_timeout(1500)


def _source_counts(notebook: Path) -> dict:
    md = "\n".join(c.source for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "markdown")
    return {"predict": md.count(":class: kvbook-predict"),
            "exercises": len(re.findall(r"^`{3,}\{exercise\}", md, re.M)),
            "solutions": len(re.findall(r"^`{3,}\{solution\}", md, re.M)),
            "timing": re.search(r"\{eval\}`chapter_timing", md) is not None}


def _site_sentences(browser, site_url, notebook: Path) -> list[str]:
    page = browser.new_page()
    try:
        page.goto(f"{site_url}/book/{notebook.stem}.html", wait_until="load")
        sentences = page.evaluate(SITE_SENTENCES)
    finally:
        page.close()
    assert len(sentences) >= 3, f"{notebook.name}: fewer than three plain sentences with glued numbers on the site"
    return [sentences[0], sentences[len(sentences) // 2], sentences[-1]]


def _assert_charts_draw(page, where: str, at_least: int) -> None:
    page.wait_for_function(
        """(n) => { const c = document.querySelectorAll('.jp-OutputArea div[id^="altair-viz-"]');
                    return c.length >= n && Array.from(c).every(el => el.querySelector('svg, canvas')
                           || /Error loading script/.test(el.innerText)); }""",
        arg=at_least, timeout=60_000)
    charts = page.evaluate(CHARTS)
    assert len(charts) >= at_least, f"{where}: {len(charts)} charts, the saved notebook has {at_least}"
    assert not [c for c in charts if c["error"]], f"{where}: chart error boxes {charts}"
    assert all(c["drawn"] for c in charts), f"{where}: charts not drawn: {[c['id'] for c in charts if not c['drawn']]}"


def _saved_charts(notebook: Path) -> int:
    nb = nbformat.read(notebook, as_version=4)
    return sum("altair-viz-" in "".join(o.get("data", {}).get("text/html", ""))
               for c in nb.cells if c.cell_type == "code" for o in c.outputs)


# --------------------------------------------------------------------------
# Predict regions: what must not show before the guess.

CELL_STATE = """(i) => {
    const c = document.querySelectorAll('.jp-NotebookPanel .jp-Cell')[i];
    return {code: c.classList.contains('jp-CodeCell'),
            text: (c.querySelector('.lm-Widget.myst') || {}).textContent || '',
            outputs: c.querySelectorAll('.jp-OutputArea-output').length,
            out: (c.querySelector('.jp-OutputArea') || {}).textContent || ''};
}"""

HOLDING = """(hold) => Array.from(document.querySelectorAll('.jp-NotebookPanel .jp-Cell'))
    .map((c, i) => [i, (c.querySelector('.jp-OutputArea') || {}).textContent || ''])
    .filter(x => x[1].includes(hold)).map(x => x[0])"""


def _unquote(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


def _regions(notebook: Path) -> list[dict]:
    """Each prediction of the chapter: its id, its cell, its region's cells and, per markdown cell
    of the region, the numbers its prose quotes that the cells after the prediction compute
    (the answer: its saved inline results, unless the cell's own words also write them)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    glued_at = glued_where(nbformat.read(notebook, as_version=4))
    out = []
    for pid, region in predict_regions(cells):
        cell = next(i for i, c in enumerate(cells) if c["cell_type"] == "code"
                    and f'"{pid}"' in "".join(c["source"]))
        numbers = {}
        for j in region:
            if cells[j]["cell_type"] != "markdown":
                continue
            words = re.sub(r"\{eval\}`+[^`]+`+", " ", "".join(cells[j]["source"]))
            found = []
            for e in cells[j].get("metadata", {}).get("user_expressions", []):
                name = re.match(r"""glued\(["']([^"':]+)""", e["expression"])
                if name and glued_at.get(name.group(1), -1) > cell:
                    found.append(_unquote(e["result"]["data"].get("text/plain", "")))
            numbers[j] = sorted({n for n in found if re.search(r"\d", n) and n not in words})
        out.append({"id": pid, "cell": cell, "region": region, "numbers": numbers})
    return out


def _assert_unanswered(page, name: str, regions: list[dict]) -> None:
    for r in regions:
        for j in r["region"]:
            state = page.evaluate(CELL_STATE, j)
            if state["code"]:         # nothing, or the note that it waits for the guess
                assert state["outputs"] == 0 or state["out"].strip().startswith(NOT_RUN), (
                    f"{name}: {r['id']} answered by cell {j}'s output: {state['out'][:120]}")
            else:
                shown = [n for n in r["numbers"][j] if n in state["text"]]
                assert not shown, f"{name}: {r['id']} answered in cell {j}'s prose before a guess: {shown}"


def _answered(page, name: str, region: dict) -> None:
    for j, numbers in region["numbers"].items():
        text = page.evaluate(CELL_STATE, j)["text"]
        assert all(n in text for n in numbers), f"{name}: {region['id']}'s numbers after the guess: {numbers} in {text[:200]!r}"


def _wait_for_hold(page, notebook: Path, seconds: int = 300) -> int | None:
    """Wait until nothing runs; the cell that waits for a guess, or None when the run went through."""
    hidden = _hidden_code_cells(notebook)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        prompts = page.evaluate(PROMPTS)
        if "[*]:" not in prompts:
            holding = page.evaluate(HOLDING, HOLD)
            if holding:
                return holding[0]
            if _done(prompts, hidden):
                return None
        page.wait_for_timeout(500)
    pytest.fail(f"{notebook.name}: still running after {seconds} s: {page.evaluate(PROMPTS)}")


def _answer_and_run_on(page, cell: int, prediction_id: str, guess) -> None:
    """Type the guess into the prediction cell, as a learner does, and run it and the cells below."""
    editor = page.locator(".jp-NotebookPanel .jp-Cell").nth(cell).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.type(f'prediction = {guess!r}\nexercises.predict("{prediction_id}", prediction)')
    page.keyboard.press("Escape")
    _menu(page, "Run", "Run Selected Cell and All Below")
    page.wait_for_timeout(500)


@pytest.mark.parametrize("notebook", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_a_learner_copy_waits_for_each_guess_and_reads_as_on_the_site(lab, browser, site_url, notebook):
    sentences = _site_sentences(browser, site_url, notebook)
    want = _source_counts(notebook)
    regions = _regions(notebook)
    assert regions, f"{notebook.name}: no prediction"
    saved = _saved_charts(notebook)
    blocked, errors = [], []
    context = _offline_context(browser, blocked, errors)
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    name = notebook.name
    try:
        # Opened fresh: nothing to save, charts drawn offline, references resolved, no answer.
        _open(page, lab, notebook)
        page.wait_for_timeout(2000)
        assert page.locator(".jp-NotebookPanel .jp-mod-dirty, .lm-TabBar-tab.jp-mod-dirty").count() == 0, (
            f"{name}: marked modified on opening")
        # (the copy's own saved charts: those that answer a Predict box are blank until the guess)
        _assert_charts_draw(page, f"{name} freshly opened", _saved_charts(lab["root"] / notebook.name))
        opened = page.evaluate(LAB_STATE)
        shown = [raw for raw in RAW if raw in opened["text"]]
        assert not shown, f"{name}, freshly opened: MyST source or raw references visible: {shown}"
        _assert_unanswered(page, f"{name} freshly opened", regions)

        # Run All: it holds at the first prediction, and still nothing is answered.
        _menu(page, "Run", "Run All Cells")
        held = _wait_for_hold(page, notebook)
        assert held == regions[0]["cell"], f"{name}: Run All stopped at cell {held}, not the first prediction"
        _assert_unanswered(page, f"{name} after Run All", regions)

        # A guess: the kernel's feedback, this region's answer, then on to the next prediction.
        first = regions[0]
        value = exercises.PREDICTIONS[first["id"]].solve()[0]
        guess = round(2 * value + 1)
        _answer_and_run_on(page, first["cell"], first["id"], guess)
        held = _wait_for_hold(page, notebook)
        feedback = page.evaluate(CELL_STATE, first["cell"])["out"].strip()
        assert feedback == exercises.judge_prediction(first["id"], guess).message, (name, feedback)
        _answered(page, name, first)
        _assert_unanswered(page, f"{name} after the first guess", regions[1:])
        for r in regions[1:]:
            assert held == r["cell"], f"{name}: the run stopped at cell {held}, not at {r['id']}"
            _answer_and_run_on(page, r["cell"], r["id"], "skip")
            held = _wait_for_hold(page, notebook)
            feedback = page.evaluate(CELL_STATE, r["cell"])["out"].strip()
            assert feedback == exercises.judge_prediction(r["id"], "skip").message, (name, feedback)
            _answered(page, name, r)
        assert held is None, f"{name}: the run still waits at cell {held} with every prediction made"
        page.wait_for_timeout(2000)            # the markdown cells' expressions come back last

        state = page.evaluate(LAB_STATE)
        shown = [raw for raw in RAW if raw in state["text"]]
        assert not shown, f"{name}: MyST source or errors visible in JupyterLab: {shown}"
        missing = [s for s in sentences if s not in state["paragraphs"]]
        assert not missing, f"{name}, after the run: sentences that differ from the site: {missing}"
        assert state["predict"] == state["predictClassed"] == want["predict"] == len(regions), (
            f"{name}: {state['predict']} Predict boxes rendered, the chapter has {want['predict']}")
        assert state["exercises"] == want["exercises"] > 0, (
            f"{name}: {state['exercises']} exercises rendered, the chapter has {want['exercises']}")
        assert state["solutions"] == want["solutions"] == want["exercises"], state["solutionTitles"]
        assert state["solutionsOpen"] == state["solutionBodiesVisible"] == 0, (
            f"{name}: solutions shown before the reader asks: {state['solutionTitles']}")
        assert all(t.startswith("Solution to Exercise") for t in state["solutionTitles"]), state["solutionTitles"]
        if want["timing"]:
            assert re.search(r"Teaching: \d+ min · Exercises: \d+ min", state["text"]), "the overview's timing"
        _assert_charts_draw(page, f"{name} after the run", saved)

        # A reload of the tab: the kernel lives on, the page's Vega runtime is gone.
        saved_file = lab["root"] / notebook.name
        before_save = saved_file.stat().st_mtime_ns
        page.locator(".jp-NotebookPanel .jp-Cell").first.click()
        page.keyboard.press("Escape")
        page.keyboard.press("Control+s")
        deadline = time.monotonic() + 30
        while saved_file.stat().st_mtime_ns == before_save:
            assert time.monotonic() < deadline, f"{name}: Ctrl+S saved nothing in 30 s"
            page.wait_for_timeout(250)
        page.wait_for_timeout(1000)
        page.reload(wait_until="load")
        _open(page, lab, notebook)
        page.locator(".jp-CodeCell .jp-InputPrompt").first.click()
        _menu(page, "Run", "Run Selected Cell")
        # ...and one chart cell run again after it
        code = [c for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"]
        first_chart = next(i for i, c in enumerate(code)               # one whose source shows
                           if not c.metadata.get("jupyter", {}).get("source_hidden")
                           and any("altair-viz-" in str(o.get("data", {}).get("text/html", ""))
                                   for o in c.get("outputs", [])))
        chart_cell = page.locator(".jp-CodeCell").nth(first_chart)
        chart_cell.locator(".jp-InputPrompt").first.click()
        _menu(page, "Run", "Run Selected Cell")
        page.wait_for_timeout(1000)
        _wait_until_run(page, notebook, 120)
        _assert_charts_draw(page, f"{name} after a reload", saved)
    finally:
        context.close()

    assert not blocked, f"{name}: requests that left 127.0.0.1: {blocked[:5]}"
    unexpected = [e for e in errors if not any(rx.match(e) for rx in CONSOLE_ALLOW)]
    assert not unexpected, f"{name}: console errors in JupyterLab: {unexpected[:5]}"


# --------------------------------------------------------------------------
# The lab in JupyterLab: a mission's panel commits, scores every day, gives a code.

def test_a_missions_panel_commits_scores_every_day_and_gives_a_code_that_verifies(lab, browser):
    """As Binder serves it (issue 29): in a notebook, lab_panel(mission=1) takes a committed
    root cause, scores the expert's settings on all the mission's days in the kernel, and
    shows three stars and a completion code that `kvsim missions --verify` accepts."""
    from kvsim.lab import missions

    m = missions.get_mission(1)
    levers = {lv.name for lv in m.levers}
    expert = {k: v for k, v in missions.expert_settings(1).items() if k in levers}
    progress = lab["root"] / "panel-progress.json"
    notebook = lab["root"] / "mission-panel.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(
        "from kvsim.book.lab_panel import lab_panel\n"
        f"lab_panel(mission=1, progress_file={progress.name!r}, **{expert!r})")]
    nbformat.write(nb, notebook)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{lab['base']}/lab/workspaces/panel/tree/{notebook.name}?reset&token={lab['token']}",
                  wait_until="load", timeout=120_000)
        page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=120_000)
        page.wait_for_timeout(1500)
        _menu(page, "Run", "Run All Cells")
        page.get_by_role("button", name="Commit prediction").wait_for(timeout=180_000)
        cause = page.locator(".widget-dropdown", has_text="Root cause").locator("select")
        cause.select_option(label=m.causes[m.cause])
        page.get_by_role("button", name="Commit prediction").click()
        page.get_by_text("counts toward the third star").wait_for(timeout=60_000)
        assert cause.is_disabled()                    # a committed guess is locked, as on the site
        page.get_by_role("button", name=f"Score on all {len(missions.SEEDS)} days").click()
        page.get_by_text("of 3 stars for these settings").wait_for(timeout=300_000)
        shown = page.locator(".jp-NotebookPanel .jp-Cell-outputArea").first.inner_text()
    finally:
        context.close()
    assert "\u2605\u2605\u2605 3 of 3 stars" in shown, shown
    code = re.search(r"completion code (M1/\S+?) \(", shown)
    assert code, shown
    stored = json.loads(progress.read_text())["missions"]["1"]
    assert stored["code"] == code.group(1) and stored["stars"] == 3
    verified = subprocess.run([sys.executable, "-m", "kvsim", "missions", "--verify", code.group(1)],
                              capture_output=True, text=True, timeout=300,
                              env={k: v for k, v in os.environ.items() if k != "KVSIM_ROOM_KEY"})
    assert verified.returncode == 0, verified.stdout + verified.stderr
