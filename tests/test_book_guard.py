"""Guards for the book's pipeline: what strict nbval and the build cannot see.

Strict nbval passes a notebook saved without outputs (there is nothing to
compare), and jupyter-book only builds what the TOC lists. These tests make
such mistakes fail the suite:

* every TOC entry exists, every notebook under book/ is in the TOC;
* every TOC notebook was executed top to bottom (execution counts 1..N in
  order, no unexecuted code cell), carries outputs, shows no errors, uses the
  ``python3`` kernel, calls ``kvsim.book.notebook.setup()`` first, and was saved by
  ``make execute`` (normalised: re-normalising changes nothing);
* every Altair output is HTML that the site's vendored Vega runtime can draw,
  and no output embeds the runtime itself;
* no notebook saves a widget (state or view): it would answer on the static
  site with no kernel behind it; widget cells are tagged ``kvbook-live-widget``;
* the prose's inline expressions were evaluated and saved by ``make execute``:
  each is a glued number (formatted as the saved record says) or the chapter's
  own timing, and each name is glued once;
* the vendored runtime matches the installed Altair's versions;
* the build configuration keeps notebooks unexecuted at build time and the
  repository URL in one place.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
REPO_URL = CONFIG["repository"]["url"].rstrip("/")


def _load_executor():
    spec = importlib.util.spec_from_file_location("execute_notebooks", ROOT / "scripts" / "execute_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXECUTOR = _load_executor()


def toc_files() -> list[str]:
    return EXECUTOR.toc_files(ROOT)


def _source(entry: str) -> Path | None:
    for ext in (".ipynb", ".md"):
        if (ROOT / (entry + ext)).exists():
            return ROOT / (entry + ext)
    return None


TOC = toc_files()
TOC_NOTEBOOKS = [p for p in (_source(e) for e in TOC) if p is not None and p.suffix == ".ipynb"]


def _code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]


def _tags(cell) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _ids(paths):
    return [str(p.relative_to(ROOT)) for p in paths]


def test_toc_lists_only_existing_pages():
    missing = [e for e in TOC if _source(e) is None]
    assert not missing, f"_toc.yml lists pages that do not exist: {missing}"
    assert len(set(TOC)) == len(TOC), "_toc.yml lists a page twice"


def test_every_notebook_is_in_the_toc():
    listed = {(ROOT / e).with_suffix(".ipynb").resolve() for e in TOC}
    notebooks = [
        p
        for p in BOOK.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts and not any(part.startswith("_") for part in p.relative_to(BOOK).parts)
    ]
    orphans = [str(p.relative_to(ROOT)) for p in notebooks if p.resolve() not in listed]
    assert not orphans, f"notebooks missing from _toc.yml (unfinished work belongs outside book/): {orphans}"


def test_toc_has_the_required_pages():
    for page in ("book/intro", "book/glossary", "book/references"):
        assert page in TOC, f"{page} missing from _toc.yml"


@pytest.mark.parametrize("path", TOC_NOTEBOOKS, ids=_ids(TOC_NOTEBOOKS))
def test_notebook_executed_in_order_with_outputs(path):
    nb = nbformat.read(path, as_version=4)
    cells = _code_cells(nb)
    assert cells, f"{path.name} has no code cells"
    counts = [c.execution_count for c in cells]
    unexecuted = [i for i, n in enumerate(counts) if n is None]
    assert not unexecuted, (
        f"{path.name}: code cells {unexecuted} were never executed; run `make execute` "
        "(a notebook without outputs would pass strict nbval without testing anything)"
    )
    assert counts == list(range(1, len(cells) + 1)), (
        f"{path.name}: execution counts {counts} are not 1..{len(cells)} in order; run `make execute`"
    )
    with_outputs = [c for c in cells if c.outputs]
    assert len(with_outputs) >= max(1, len(cells) // 4), (
        f"{path.name}: only {len(with_outputs)} of {len(cells)} code cells have outputs; run `make execute`"
    )
    for i, cell in enumerate(cells):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if errors and "raises-exception" not in _tags(cell):
            pytest.fail(f"{path.name}: code cell {i} saved with an error: {errors[0].get('ename')}")


@pytest.mark.parametrize("path", TOC_NOTEBOOKS, ids=_ids(TOC_NOTEBOOKS))
def test_notebook_kernel_and_setup(path):
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernel must be python3"
    first = _code_cells(nb)[0].source
    assert "kvsim.book.notebook" in first and "setup(" in first, (
        f"{path.name}: the first code cell must call kvsim.book.notebook.setup() (offline-ready charts)"
    )


@pytest.mark.parametrize("path", TOC_NOTEBOOKS, ids=_ids(TOC_NOTEBOOKS))
def test_notebook_saved_by_make_execute(path):
    nb = nbformat.read(path, as_version=4)
    again = EXECUTOR.normalise(nbformat.from_dict(json.loads(json.dumps(nb))), seed=path.stem)
    assert json.dumps(again, sort_keys=True) == json.dumps(nb, sort_keys=True), (
        f"{path.name} was not saved by `make execute` (random ids or run metadata left in); run `make execute`"
    )


@pytest.mark.parametrize("path", TOC_NOTEBOOKS, ids=_ids(TOC_NOTEBOOKS))
def test_charts_are_static_site_ready(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(_code_cells(nb)):
        for out in cell.outputs:
            data = out.get("data", {})
            vega_only = [k for k in data if k.startswith(("application/vnd.vegalite", "application/vnd.vega."))]
            assert not vega_only or "text/html" in data, (
                f"{path.name}: cell {i} shows a chart only as {vega_only[0]}, which the static site "
                "cannot draw; call kvsim.book.notebook.setup() first"
            )
            html = "".join(data.get("text/html", ""))
            assert "__kvbookVegaRuntime" not in html, (
                f"{path.name}: cell {i} embeds the Vega runtime; execute with KVSIM_OFFLINE_CHARTS unset"
            )
            if "altair-viz-" in html:
                assert "VEGA_DEBUG" in html and "vegaEmbed" in html, (
                    f"{path.name}: cell {i} has Altair HTML from a template the vendored runtime does not serve"
                )


@pytest.mark.parametrize("path", TOC_NOTEBOOKS, ids=_ids(TOC_NOTEBOOKS))
def test_no_widget_is_saved(path):
    nb = nbformat.read(path, as_version=4)
    assert "widgets" not in nb.metadata, f"{path.name} saves widget state; run `make execute`"
    for i, cell in enumerate(_code_cells(nb)):
        views = [o for o in cell.outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
        assert not views, f"{path.name}: cell {i} saves a widget view; tag it {EXECUTOR.LIVE_WIDGET_TAG!r}"
        if EXECUTOR.LIVE_WIDGET_TAG in _tags(cell):
            assert not cell.outputs and "nbval-ignore-output" in _tags(cell), (
                f"{path.name}: live widget cell {i} must be committed without outputs, nbval-ignore-output")


def test_vendored_runtime_matches_altair():
    from kvsim.book.notebook import runtime_versions

    runtime = (BOOK / "_vendor" / "kvbook" / "vega-runtime.js").read_text()
    declared = re.search(r"var versions = (\{[^}]*\});", runtime)
    assert declared, "vega-runtime.js lacks its version block; run python scripts/vendor_assets.py"
    assert json.loads(declared.group(1)) == runtime_versions(), (
        "the vendored Vega runtime was made for another Altair; run python scripts/vendor_assets.py"
    )
    manifest = json.loads((BOOK / "_vendor" / "kvbook" / "VENDORED.json").read_text())
    import hashlib

    for folder in ("widgets/", "mathjax/"):
        for name, digest in manifest[folder]["files"].items():
            got = hashlib.sha256((BOOK / "_vendor" / "kvbook" / folder / name).read_bytes()).hexdigest()
            assert got == digest, f"book/_vendor/kvbook/{folder}{name} differs from VENDORED.json"


def test_build_never_executes_notebooks():
    assert CONFIG["execute"]["execute_notebooks"] == "off"
    assert CONFIG.get("only_build_toc_files") is True


def test_repository_url_in_one_place():
    assert REPO_URL.startswith("https://github.com/")
    sources = [p for p in BOOK.rglob("*") if p.suffix in {".md", ".ipynb", ".yml", ".py", ".bib"}]
    sources += [ROOT / "_toc.yml"]
    owner_repo = REPO_URL.removeprefix("https://github.com/")
    offenders = [str(p.relative_to(ROOT)) for p in sources if owner_repo in p.read_text(errors="replace")]
    assert not offenders, f"the repository URL belongs in _config.yml only, also found in {offenders}"


def test_the_top_level_documents_link_the_configured_repository():
    """README.md, CONTRIBUTING.md (its Binder link) and CHANGELOG.md name no other repository."""
    owner_repo = REPO_URL.removeprefix("https://github.com/")
    found = {}
    for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md"):
        text = (ROOT / name).read_text()
        mentioned = set(re.findall(r"(?:github\.com|mybinder\.org/v2/gh)/([\w.-]+/[\w.-]+)", text))
        found[name] = {m.removesuffix(".git") for m in mentioned
                       if not m.startswith(("Azure/", "vllm-project/"))}
        assert found[name] <= {owner_repo}, (
            f"{name} links to {found[name] - {owner_repo}}; _config.yml says {owner_repo}")
    assert found["CONTRIBUTING.md"] == {owner_repo}, "CONTRIBUTING.md lost its Binder link"


def test_setup_makes_offline_ready_html_charts():
    import altair as alt

    import kvsim.book.notebook

    kvsim.book.notebook.setup(offline=False)
    assert alt.renderers.active == kvsim.book.notebook.RENDERER
    rows = [{"x": i, "y": i % 7} for i in range(6_000)]  # above Altair's default 5,000-row limit
    chart = alt.Chart(alt.Data(values=rows)).mark_point().encode(x="x:Q", y="y:Q")
    html = _html(chart)
    versions = kvsim.book.notebook.runtime_versions()
    assert "VEGA_DEBUG" in html and f'"{versions["vegalite_version"]}"' in html


def _html(chart) -> str:
    bundle = chart._repr_mimebundle_()
    bundle = bundle[0] if isinstance(bundle, tuple) else bundle
    return EXECUTOR.ALTAIR_ID.sub("altair-viz-ID", bundle["text/html"])


def test_saved_charts_do_not_depend_on_the_last_bits_of_a_float():
    """The goodput an AVX2 CPU computed one unit in the last place lower than an AVX-512 one."""
    import altair as alt
    import numpy as np

    import kvsim.book.notebook

    kvsim.book.notebook.setup(offline=False)
    here, there = 9.197981530198314, 9.197981530198312
    assert np.nextafter(there, 10) == here

    def chart(v):
        data = alt.InlineData(values=[{"case": "budget 512 tokens", "v": v, "t": 0.1 + 0.2}])
        return alt.Chart(data).mark_bar().encode(x=alt.X("v:Q", scale=alt.Scale(domain=[0, v])), y="case:N")

    a, b = _html(chart(here)), _html(chart(there))
    assert a == b
    assert '"v": 9.19798' in a and '"t": 0.3' in a and "9.1979815" not in a
    assert kvsim.book.notebook.portable(here) == kvsim.book.notebook.portable(there) == 9.19798
    assert kvsim.book.notebook.portable({"n": 3, "xs": (1.0 / 3, float("inf"))}) == {"n": 3, "xs": [0.333333, float("inf")]}


def test_setup_offline_shows_the_runtime_every_time(monkeypatch):
    """The runtime lives in the browser page: a reload empties it while the kernel lives on."""
    import IPython.display

    import kvsim.book.notebook

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    kvsim.book.notebook.setup(offline=True)
    kvsim.book.notebook.setup(offline=True)
    assert len(shown) == 2 and all("__kvbookVegaRuntime" in s.data for s in shown)
    monkeypatch.setenv(kvsim.book.notebook.OFFLINE_ENV_VAR, "0")
    kvsim.book.notebook.setup()
    monkeypatch.setenv(kvsim.book.notebook.OFFLINE_ENV_VAR, "1")
    kvsim.book.notebook.setup()
    assert len(shown) == 3


# --------------------------------------------------------------------------
# The prose's inline expressions ({eval}), as make execute saves them.

GLUED_CALL = re.compile(r'^glued\("([^":]+)(?::([^"]*))?"\)$')
TIMING_CALL = re.compile(r'^chapter_timing\("([^"]+)"\)$')


def _records(nb) -> dict:
    """{name: [saved values]} of every number the notebook glued (its record outputs)."""
    import ast

    import kvsim.book.notebook

    found: dict = {}
    for cell in _code_cells(nb):
        for out in cell.outputs:
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                found.setdefault(name, []).append(ast.literal_eval(out["data"][kvsim.book.notebook.GLUE_MIME]))
    return found


@pytest.mark.parametrize("path", TOC_NOTEBOOKS, ids=_ids(TOC_NOTEBOOKS))
def test_prose_numbers_were_saved_by_make_execute(path, monkeypatch):
    import kvsim.book.notebook

    nb = nbformat.read(path, as_version=4)
    records = _records(nb)
    twice = sorted(n for n, values in records.items() if len(values) > 1)
    assert not twice, f"{path.name}: glued more than once (the prose would show the last): {twice}"
    monkeypatch.chdir(path.parent)
    used = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        assert not re.search(r"\{glue(:\w+)?\}", cell.source), (
            f"{path.name}: markdown cell {index} uses {{glue}}, which JupyterLab cannot show; "
            'write {eval}`glued("name:spec")`')
        expressions = EXECUTOR.inline_expressions(cell.source)
        saved = cell.metadata.get("user_expressions", [])
        assert [e["expression"] for e in saved] == expressions, (
            f"{path.name}: markdown cell {index}: saved expressions differ from the text; run `make execute`")
        for entry in saved:
            expression, result = entry["expression"], entry["result"]
            assert result["status"] == "ok", f"{path.name}: cell {index}: {expression} saved as an error"
            shown = result["data"]["text/plain"]
            glue, timing = GLUED_CALL.match(expression), TIMING_CALL.match(expression)
            if glue:
                name, spec = glue.group(1), glue.group(2) or ""
                assert name in records, f"{path.name}: cell {index}: {expression} quotes a name nobody glued"
                want = format(records[name][0], spec)
                used += 1
            elif timing:
                assert timing.group(1) == path.name, f"{path.name}: cell {index} quotes another chapter's timing"
                want = kvsim.book.notebook.chapter_timing(path.name)
            else:
                pytest.fail(f"{path.name}: cell {index}: {{eval}}`{expression}`: the prose quotes glued numbers "
                            'only (glued("name:spec")) or chapter_timing("<this notebook>")')
            assert shown == repr(want), (
                f"{path.name}: cell {index}: {expression} saved {shown}, the record gives {want!r}; "
                "run `make execute`")
    assert used or not records, f"{path.name} glues numbers its prose never quotes"


def test_make_execute_clears_live_widgets_and_refuses_untagged_ones():
    view = {"output_type": "display_data", "metadata": {},
            "data": {"text/plain": "VBox()", "application/vnd.jupyter.widget-view+json": {"model_id": "x"}}}
    live = nbformat.v4.new_code_cell("capacity_calculator()", metadata={"tags": [EXECUTOR.LIVE_WIDGET_TAG]},
                                     outputs=[nbformat.from_dict(view)])
    nb = nbformat.v4.new_notebook(cells=[live], metadata={"widgets": {"state": {}}})
    nb = EXECUTOR.drop_live_widgets(nb)
    assert nb.cells[0].outputs == [] and "widgets" not in nb.metadata
    untagged = nbformat.v4.new_code_cell("w", outputs=[nbformat.from_dict(view)])
    with pytest.raises(SystemExit, match="kvbook-live-widget"):
        EXECUTOR.drop_live_widgets(nbformat.v4.new_notebook(cells=[untagged]))
