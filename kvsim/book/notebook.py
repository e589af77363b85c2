"""Notebook set-up shared by every chapter of the book.

Each chapter calls :func:`setup` in its first code cell::

    import kvsim.book.notebook
    kvsim.book.notebook.setup()

What it does, and why:

* **Altair renders as HTML with the "universal" template.** That output is a
  ``<div>`` plus a small script which draws the chart with ``vegaEmbed`` if the
  page already has the Vega runtime, and only otherwise fetches it from a CDN.
  The book's static site ships the runtime once per site (see
  ``book/_ext/kvbook_offline.py`` and ``scripts/vendor_assets.py``), so the
  published pages draw every chart, and every bound slider works, with the
  network closed. In Binder or a local Jupyter with network, the CDN is used.
* **The book's chart theme** (:data:`kvsim.book.charts.THEME`: 12 px text and up,
  the Okabe-Ito palette) is registered as Altair's ``"kvbook"`` theme and
  enabled, so a chapter's own charts look like ``kvsim.book.charts``' charts.
* **No actions menu** under a chart (it narrows the chart and links to an
  online editor).
* **No row limit** on chart data (``disable_max_rows``): the book's charts are
  built from simulation results and precomputed sweeps that may exceed Altair's
  default 5,000 rows; the data is inlined in the chart spec, so the saved
  notebook, the static page and the nbval comparison all hold the same values.
* **Plain numpy scalars** in printed output (numpy's 1.25 print mode), so
  ``print(x)`` and cell results show ``0.5`` instead of ``np.float64(0.5)``.
* **Saved floats do not depend on the CPU.** Every float in a chart's spec
  (its data, scale domains, rules) is rounded to :data:`SAVED_DIGITS`
  significant digits before the chart becomes HTML, and each inline dataset
  is named after its rounded values. numpy picks different machine code on
  different CPUs (AVX-512 or AVX2 loops), which can move the last bits of a
  float; a saved notebook must not change with the machine that ran it
  (strict nbval compares chart HTML byte for byte).
* **Offline charts inside Jupyter** (optional, for workshop rooms without
  Wi-Fi): ``setup(offline=True)``, or the environment variable
  ``KVSIM_OFFLINE_CHARTS=1``, displays the same Vega runtime in the set-up
  cell's output every time the cell runs, so charts need no CDN. The runtime
  lives in the browser page, not in the kernel: after a reload of the tab the
  saved set-up output brings it back, and running the cell again does too.
  The committed notebooks are executed without it (the static site carries
  the runtime itself).

Calling it twice changes nothing, but for showing the offline runtime again.

**Numbers in the prose.** :func:`glue_numbers` records the numbers a chapter's
prose quotes, in the cell that computes them, and the prose shows each with an
inline expression, ``{eval}`glued("b_kv_gb:.2f")``` (a recorded name, then a
Python format spec). In JupyterLab, ``jupyterlab-myst`` evaluates the
expression in the kernel when the markdown cell runs, and shows the result
saved in the cell's metadata before that; the static site shows the result
``make execute`` saved there (``book/_ext/kvbook_eval.py``). Each recorded
number is also written to its code cell's outputs, as a record JupyterLab does
not display, so that strict nbval checks a fresh run against the saved numbers.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from kvsim.errors import KvsimError
from kvsim.runs.summary_cache import CACHE_VAR

from .charts import theme

if TYPE_CHECKING:
    from altair.utils.display import MimeBundleType

__all__ = ["setup", "glue_numbers", "glued", "chapter_timing", "portable", "vega_runtime_js",
           "runtime_versions", "OFFLINE_ENV_VAR", "SAVED_DIGITS"]

#: Environment variable that turns on :func:`setup`'s offline runtime.
OFFLINE_ENV_VAR = "KVSIM_OFFLINE_CHARTS"
#: Where a learner copy's kernels keep their runs when ``KVSIM_RUN_CACHE`` names no folder
#: (Binder's image fills it at build time: binder/postBuild).
LEARNER_RUN_CACHE = Path.home() / ".cache" / "kvsim-runs"

_TRUE = {"1", "true", "yes", "on"}

#: Significant digits kept of every float a notebook saves (chart specs, glued
#: numbers). Different CPUs may differ in a float's last bits (numpy's AVX-512
#: and AVX2 loops); at 6 digits two such values round alike unless they sit
#: within a few units in the last place of a rounding boundary (odds about
#: 1e-9 per value). Six digits are more than any chart or sentence shows.
SAVED_DIGITS = 6


def portable(value: object) -> object:
    """``value`` with every float rounded to :data:`SAVED_DIGITS` significant digits.

    Lists, tuples and dicts are rounded element by element (tuples become
    lists, as JSON has them); ints, bools, strings and ``None`` pass unchanged,
    as do NaN and the infinities.
    """
    if isinstance(value, float):  # numpy float64 is a float subclass
        return _portable_float(value)
    if isinstance(value, dict):
        return _portable_dict(value)
    if isinstance(value, (list, tuple)):
        return [portable(v) for v in value]
    return value


def _portable_float(value: float) -> float:
    """A float to :data:`SAVED_DIGITS` significant digits (NaN and the infinities as they are)."""
    if not math.isfinite(value):
        return value
    return float(f"{value:.{SAVED_DIGITS}g}")


def _portable_dict(value: Mapping[str, object]) -> dict[str, object]:
    """A dict with every value :func:`portable`."""
    return {k: portable(v) for k, v in value.items()}


def _portable_spec(spec: Mapping[str, object]) -> dict[str, object]:
    """A chart spec with portable floats, each inline dataset named after its rounded rows.

    Altair names a dataset ``data-<hash>`` from its unrounded values, so a last
    bit that moves would also rename it; the name is recomputed here the same way.
    """
    rounded = _portable_dict(spec)
    datasets = rounded.get("datasets")
    if not datasets or not isinstance(datasets, dict):
        return rounded
    renamed = {}
    for old, rows in datasets.items():
        digest = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:32]
        renamed[old] = "data-" + digest
    rounded["datasets"] = {renamed[k]: v for k, v in datasets.items()}

    def rename(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "name" and isinstance(value, str) and value in renamed:
                    node[key] = renamed[value]
                else:
                    rename(value)
        elif isinstance(node, list):
            for item in node:
                rename(item)

    for key, value in rounded.items():
        if key != "datasets":
            rename(value)
    return rounded


def _portable_html_renderer(spec: dict[str, object], **metadata: object) -> MimeBundleType:
    """Altair's HTML renderer ("universal" template), fed a portable spec."""
    from altair.vegalite.v6.display import html_renderer

    return html_renderer(_portable_spec(spec), **metadata)


#: The renderer :func:`setup` registers and enables.
RENDERER = "kvbook-html"


def runtime_versions() -> dict[str, str]:
    """The Vega library versions Altair's HTML template checks, by template key.

    Altair's "universal" template skips loading a library when
    ``VEGA_DEBUG["<lib>_version"]`` already equals the version it expects;
    the vendored runtime presets exactly these values.
    """
    import altair as alt

    return {
        "vega_version": str(alt.VEGA_VERSION),
        "vegalite_version": str(alt.VEGALITE_VERSION),
        "vegaembed_version": str(alt.VEGAEMBED_VERSION),
    }


def _vegalite_minor() -> str:
    import altair as alt

    major, minor = str(alt.VEGALITE_VERSION).split(".")[:2]
    return f"{major}.{minor}"


def vega_runtime_js() -> str:
    """Return the offline Vega runtime (vega, vega-lite, vega-embed) as one script.

    The bundle comes from ``vl-convert-python`` (no network needed) for the
    Vega-Lite version Altair targets. It is wrapped so that:

    * its top-level names live inside a function scope (no clashes with other
      scripts on the page) and module loaders on the page (require.js on widget
      pages) do not see it as an anonymous module;
    * it publishes ``window.vega``, ``window.vegaLite`` and ``window.vegaEmbed``;
    * it presets the ``VEGA_DEBUG`` version globals Altair's template checks, so
      the template never fetches the libraries from a CDN;
    * where an AMD loader (require.js) is already on the page when it runs, the
      three libraries are registered as named modules ``vega``, ``vega-lite``
      and ``vega-embed``, which is what Altair's template asks require.js for
      (the book's Sphinx extension loads this script after any require.js).
    """
    import vl_convert

    # vl-convert's stub makes the snippet required; its runtime default (the globals) is the one
    bundle = vl_convert.javascript_bundle(vl_version=_vegalite_minor())  # type: ignore[call-arg]
    versions = json.dumps(runtime_versions(), sort_keys=True)
    return (
        "/* Vega, Vega-Lite and Vega-Embed for the KV-pressure book, bundled offline by\n"
        "   vl-convert-python. Generated by scripts/vendor_assets.py; do not edit. */\n"
        "(function () {\n"
        "  if (window.vegaEmbed && window.__kvbookVegaRuntime) { return; }\n"
        "  (function (define, module, exports, require) {\n"
        + bundle
        + "\n  }).call(window);\n"
        "  window.__kvbookVegaRuntime = true;\n"
        "  var versions = " + versions + ";\n"
        "  window.VEGA_DEBUG = window.VEGA_DEBUG || {};\n"
        "  for (var k in versions) { window.VEGA_DEBUG[k] = versions[k]; }\n"
        "  function registerAmd() {\n"
        "    var d = window.define;\n"
        "    if (typeof d !== 'function' || !d.amd || window.__kvbookVegaAmd) { return !!window.__kvbookVegaAmd; }\n"
        "    window.__kvbookVegaAmd = true;\n"
        "    d('vega', [], function () { return window.vega; });\n"
        "    d('vega-lite', [], function () { return window.vegaLite; });\n"
        "    d('vega-embed', [], function () { return window.vegaEmbed; });\n"
        "    return true;\n"
        "  }\n"
        "  registerAmd();\n"
        "})();\n"
    )


def _enabled(value: object) -> bool:
    if value is None:
        return os.environ.get(OFFLINE_ENV_VAR, "").strip().lower() in _TRUE
    return bool(value)


#: A cell that runs even while a learner copy's run waits for a guess: a prediction (which
#: is how the wait ends) and the set-up.
_GATE_PASSES = ("exercises.predict(", "kvsim.book.notebook.setup(")


def _gate(lines: list[str]) -> list[str]:
    """IPython input transformer of a learner copy: while the run waits for a guess
    (:func:`kvsim.book.exercises.waiting_for_guess`), a cell below the prediction shows
    :func:`kvsim.book.exercises.not_run_note` instead of running, so *Run All* cannot answer a
    Predict box before the guess. (The kernel decides, in the order it runs cells: a cell that
    raised would stop *Run All* only for the requests the kernel had already queued.)"""
    from kvsim.book.exercises import waiting_for_guess

    source = "".join(lines)
    if waiting_for_guess() is None or any(p in source for p in _GATE_PASSES):
        return lines
    return ["import sys as _kvbook_sys, kvsim.book.exercises as _kvbook_ex\n",
            "print(_kvbook_ex.not_run_note(), file=_kvbook_sys.stderr)\n"]


def _install_gate() -> None:
    try:
        from IPython import get_ipython
    except ImportError:                      # not in IPython: nothing runs cells in order
        return
    shell = get_ipython()
    if shell is not None and _gate not in shell.input_transformers_post:
        shell.input_transformers_post.append(_gate)


def setup(offline: bool | None = None, *, learner: bool = False) -> None:
    """Configure Altair and numpy for the book's notebooks (see the module docstring).

    Parameters
    ----------
    offline:
        ``True`` displays the Vega runtime in this cell's output so that charts
        in a live Jupyter session need no network; ``None`` (default) reads the
        ``KVSIM_OFFLINE_CHARTS`` environment variable (on in a learner copy
        unless it says ``0``); ``False`` never does.
    learner:
        A learner copy's set-up (:mod:`kvsim.book.learner`): the charts draw
        offline, and a prediction not yet made holds the run: the cells below
        it wait until the guess (:func:`kvsim.book.exercises.hold_unmade_predictions`).
    """
    import altair as alt
    import numpy as np


    # No actions menu: it takes width from the chart, and its "Open in Vega
    # Editor" link leads off the (possibly offline) page.
    alt.renderers.register(RENDERER, _portable_html_renderer)
    alt.renderers.enable(RENDERER, embed_options={"actions": False})
    alt.theme.register("kvbook", enable=True)(theme)
    alt.data_transformers.disable_max_rows()
    np.set_printoptions(legacy="1.25")

    if learner:
        from kvsim.book.exercises import hold_unmade_predictions

        global _learner
        _learner = True
        hold_unmade_predictions(True)
        _install_gate()
        # A learner's kernels keep their runs (kvsim.runs.summary_cache): chapter 5's first run
        # computes the missions' grids (minutes of one core), every later one reads them back.
        os.environ.setdefault(CACHE_VAR, str(LEARNER_RUN_CACHE))
        if offline is None and os.environ.get(OFFLINE_ENV_VAR, "").strip() != "0":
            offline = True
    if _enabled(offline):
        # Every time: the runtime belongs to the browser page, which a reload
        # empties while the kernel (and any flag kept in it) lives on.
        from IPython.display import HTML, display

        # (IPython's display() and HTML() have no annotations)
        display(HTML("<script>" + vega_runtime_js() + "</script>"))  # type: ignore[no-untyped-call]


#: Where glued numbers go in a code cell's outputs: myst-nb's ``glue`` record
#: format (a mimetype JupyterLab has no renderer for, so it shows nothing).
GLUE_MIME = "application/papermill.record/text/plain"

#: The numbers glued so far in this kernel, by name (portable values).
_GLUED: dict[str, float] = {}

#: A learner copy's kernel (``setup(learner=True)``): a number not glued yet reads as
#: :data:`NOT_YET` instead of an error. The run waits at a prediction, but JupyterLab still
#: renders the prose below it: the numbers computed after the prediction are its answer.
_learner = False
#: What such a number shows until the cell that computes it has run.
NOT_YET = "…"


def glue_numbers(**values: object) -> None:
    """Record each number under its name, for the prose (see the module docstring).

    Numbers only (ints, floats, numpy scalars); floats are kept to
    :data:`SAVED_DIGITS` significant digits. Names that are not identifiers
    (an exercise id such as ``ch01-qwen-bytes``) go in with
    ``glue_numbers(**{"ch01-qwen-bytes": n})``.
    """
    from numbers import Integral, Real

    from IPython.display import display


    checked: dict[str, float] = {}
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, Real):
            raise KvsimError(f"glue_numbers({name}={value!r}): expected a number, got a "
                             f"{type(value).__name__}; quote text in the prose itself")
        checked[name] = int(value) if isinstance(value, Integral) else _portable_float(float(value))
    for name, value in checked.items():
        _GLUED[name] = value
        # (IPython's display() has no annotations)
        display({GLUE_MIME: repr(value)}, raw=True,  # type: ignore[no-untyped-call]
                metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_MIME.rsplit("/", 2)[0] + "/"}})


def glued(reference: str) -> str:
    """The recorded number ``name`` formatted as ``spec``, for ``reference = "name:spec"``.

    ``glued("b_blocks:,d")`` gives ``"1,735"``; without a spec the number's
    ``str``. The prose calls it in ``{eval}`` expressions. A name not glued yet is an
    error, except in a learner copy, where it reads ``…`` until its cell runs.
    """

    name, _, spec = str(reference).partition(":")
    if _learner and name not in _GLUED:
        return NOT_YET
    if name not in _GLUED:
        import difflib

        near = difflib.get_close_matches(name, _GLUED, n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else "; glue it first with glue_numbers()"
        raise KvsimError(f"glued({reference!r}): no number named {name!r} was glued in this kernel{hint}")
    try:
        return format(_GLUED[name], spec)
    except (ValueError, TypeError) as exc:
        raise KvsimError(f"glued({reference!r}): format spec {spec!r} does not fit "
                         f"{_GLUED[name]!r} ({exc})") from None


def chapter_timing(notebook: str | os.PathLike[str]) -> str:
    """A chapter's overview line, "Teaching: 30 min · Exercises: 25 min".

    Read from the notebook's own metadata (``metadata.kvbook.timing``, the one
    place a chapter states its minutes): ``notebook`` is the chapter's file
    name, relative to the working directory, which Jupyter sets to the
    notebook's folder. The workshop plan and the instructor notes are built
    from the same metadata (``book/_ext/kvbook_workshop.py``).
    """

    path = Path(notebook)
    try:
        meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError) as exc:
        raise KvsimError(f"chapter_timing({str(notebook)!r}): cannot read the notebook "
                         f"from {Path.cwd()} ({exc.__class__.__name__})") from None
    timing = meta.get("kvbook", {}).get("timing") or {}
    try:
        teaching = sum(int(part["minutes"]) for part in timing["teaching"])
        exercises = int(timing["exercises"])
    except (KeyError, TypeError, ValueError):
        raise KvsimError(f"chapter_timing({str(notebook)!r}): no metadata.kvbook.timing with "
                         "teaching minutes and exercises in the notebook") from None
    return f"Teaching: {teaching} min · Exercises: {exercises} min"
