"""The chapters in a real JupyterLab, driven in Debian's chromium with the network closed.

Binder, a learner's laptop and a workshop room all open the chapters in
JupyterLab, not on the static site. This module starts the pinned JupyterLab
(with ``jupyterlab-myst``, from requirements.txt) on 127.0.0.1 over a copy of
``book/``, opens every chapter in headless chromium through Playwright with
every non-local request aborted, and for each chapter:

* before any kernel runs, the prose already shows its numbers (the results
  ``make execute`` saved with each markdown cell);
* runs all cells (Run > Run All Cells), then reads the rendered page: no MyST
  source shows (``{glue``, ``{eval}``, ``{exercise``, ``{solution``,
  ``{term}``, ``:class:``, ``:::``, an unknown directive or an error); each
  Predict box is an admonition titled "Predict"; each exercise is rendered as
  one, and each solution is a folded dropdown whose body is not visible;
* spot-checks three sentences with glued numbers against the static site: the
  paragraph reads the same, word for word, in JupyterLab and on the built page;
* every chart draws, with no request leaving 127.0.0.1 once the set-up cell
  has run (before that, the committed charts ask a CDN for Vega, and wait);
* saves, reloads the tab (the kernel lives on), runs the set-up cell again and
  one chart cell: every chart still draws, still offline
  (``KVSIM_OFFLINE_CHARTS=1``, as a workshop room without Wi-Fi runs it).

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

from browser_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    SITE,
    require_site_and_chromium,
    serve,
    skip_or_fail,
)

pytestmark = pytest.mark.jupyterlab

require_site_and_chromium()
if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
    skip_or_fail("jupyterlab is not installed next to this Python: pip install -r requirements.txt")
try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    skip_or_fail("playwright is not installed: pip install -r requirements.txt")

sys.path.insert(0, str(ROOT / "book" / "_ext"))
from kvbook_workshop import toc_docnames  # noqa: E402  (the book's one reader of _toc.yml)

CHAPTERS = [ROOT / (d + ".ipynb") for d in toc_docnames(ROOT)
            if re.search(r"/ch\d\d-", d) and (ROOT / (d + ".ipynb")).exists()]

#: MyST source that must never reach a reader's eyes.
RAW = ["{glue", "{eval}", "{exercise", "{solution", "{term}", "{eq}", "{cite", "{doc}", ":class:", ":::",
       "Unknown Directive", "NameError", "Traceback"]

#: Console errors that are not the book's: jupyterlab-myst resolves {term} only
#: against a glossary in the same notebook; the book's glossary is its own page,
#: so in JupyterLab a term shows as plain text and the extension logs this.
CONSOLE_ALLOW = [re.compile(r"^(Cross reference target was not found: term-[^\n]+\n?)+$")]

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
    for name, values in SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = _free_port(), os.urandom(12).hex()
    env = dict(os.environ, KVSIM_OFFLINE_CHARTS="1", JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTER_DATA_DIR=str(home / "data"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               IPYTHONDIR=str(home / "ipython"),
               JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"))
    # As the learner set-up page says (and Binder's postBuild does): trust the
    # book's notebooks once, so that their saved charts draw after a reload.
    subprocess.run([str(Path(sys.executable).parent / "jupyter"), "trust", *sorted(str(p) for p in (home / "book").glob("*.ipynb"))],
                   env=env, check=True, capture_output=True)
    log = open(home / "jupyterlab.log", "w")
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
    log.close()


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
        h or re.fullmatch(r"\[\d+\]:", p) for p, h in zip(prompts, hidden))


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


@pytest.mark.parametrize("notebook", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_reads_in_jupyterlab_as_on_the_site(lab, browser, site_url, notebook):
    sentences = _site_sentences(browser, site_url, notebook)
    want = _source_counts(notebook)
    blocked, errors = [], []
    context = _offline_context(browser, blocked, errors)
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    try:
        _open(page, lab, notebook)
        before = page.evaluate(LAB_STATE)
        missing = [s for s in sentences if s not in before["paragraphs"]]
        assert not missing, f"{notebook.name}, freshly opened: the saved numbers do not read as on the site: {missing}"

        # Opened trusted, the committed chart outputs ask a CDN for Vega (they were
        # saved without the offline runtime, which the site ships separately); with
        # the network closed they wait for the set-up cell. Nothing else goes out.
        early = [u for u in blocked if not re.match(r"https://cdn\.jsdelivr\.net/npm/vega(-lite|-embed)?@", u)]
        assert not early, f"{notebook.name}: requests that left 127.0.0.1 on opening: {early[:5]}"
        blocked.clear()
        errors.clear()            # the same failed CDN loads, as the console reports them

        _menu(page, "Run", "Run All Cells")
        _wait_until_run(page, notebook)
        page.wait_for_timeout(2000)            # the markdown cells' expressions come back last
        state = page.evaluate(LAB_STATE)

        shown = [raw for raw in RAW if raw in state["text"]]
        assert not shown, f"{notebook.name}: MyST source or errors visible in JupyterLab: {shown}"
        missing = [s for s in sentences if s not in state["paragraphs"]]
        assert not missing, f"{notebook.name}, after Run All: sentences that differ from the site: {missing}"
        assert state["predict"] == state["predictClassed"] == want["predict"] > 0, (
            f"{notebook.name}: {state['predict']} Predict boxes rendered, the chapter has {want['predict']}")
        assert state["exercises"] == want["exercises"] > 0, (
            f"{notebook.name}: {state['exercises']} exercises rendered, the chapter has {want['exercises']}")
        assert state["solutions"] == want["solutions"] == want["exercises"], state["solutionTitles"]
        assert state["solutionsOpen"] == state["solutionBodiesVisible"] == 0, (
            f"{notebook.name}: solutions shown before the reader asks: {state['solutionTitles']}")
        assert all(t.startswith("Solution to Exercise") for t in state["solutionTitles"]), state["solutionTitles"]
        if want["timing"]:
            assert re.search(r"Teaching: \d+ min · Exercises: \d+ min", state["text"]), "the overview's timing"

        saved = _saved_charts(notebook)
        _assert_charts_draw(page, f"{notebook.name} after Run All", saved)

        # A reload of the tab: the kernel lives on, the page's Vega runtime is gone.
        saved_file = lab["root"] / notebook.name
        before_save = saved_file.stat().st_mtime_ns
        page.locator(".jp-NotebookPanel .jp-Cell").first.click()
        page.keyboard.press("Escape")
        page.keyboard.press("Control+s")
        deadline = time.monotonic() + 30
        while saved_file.stat().st_mtime_ns == before_save:
            assert time.monotonic() < deadline, f"{notebook.name}: Ctrl+S saved nothing in 30 s"
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
        _assert_charts_draw(page, f"{notebook.name} after a reload", saved)
    finally:
        context.close()

    assert not blocked, f"{notebook.name}: requests that left 127.0.0.1: {blocked[:5]}"
    unexpected = [e for e in errors if not any(rx.match(e) for rx in CONSOLE_ALLOW)]
    assert not unexpected, f"{notebook.name}: console errors in JupyterLab: {unexpected[:5]}"
