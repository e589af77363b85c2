#!/usr/bin/env python3
"""Re-execute the book's notebooks in place and normalise them for clean diffs.

    python scripts/execute_notebooks.py                 # every notebook in _toc.yml
    python scripts/execute_notebooks.py book/ch01-*.ipynb

(`make execute` runs the first form.) Each notebook runs top to bottom in a fresh
``python3`` kernel with its own folder as working directory, a fixed hash seed
and a fixed time zone; a cell error stops the run (tag a cell
``raises-exception`` when the error is the lesson).

The prose's inline expressions (``{eval}`glued("name:.2f")```) are evaluated
as JupyterLab's ``jupyterlab-myst`` evaluates them: in the kernel, once the
code cells have run (see :class:`BookClient`). Their results go into the
cell's ``metadata.user_expressions`` (jupyterlab-myst's format), where the
static site (``book/_ext/kvbook_eval.py``) and a freshly opened notebook find
them. An expression that raises stops the run.

Widgets are never saved. A saved widget on the static site (or in a freshly
opened notebook) keeps its controls but has no kernel behind them, so it would
show numbers it did not compute. A cell that draws a widget is tagged
``kvbook-live-widget``: it runs (so a broken widget still fails the run), and
its outputs are then cleared; no widget state goes into the notebook. Its
static twin, a chart over precomputed data, is what the site shows.

Then the notebook is normalised, so that re-running an unchanged notebook gives
an unchanged file:

* kernelspec ``python3``; ``language_info`` without the Python patch version;
* no per-cell execution timings; consecutive stream chunks merged (where the
  kernel splits printed text depends on timing);
* Altair's random ``altair-viz-<hex>`` element ids replaced by ids derived from
  the notebook name and their order.

The committed outputs are what ``pytest`` compares (strict nbval) and what the
book shows (the build never executes notebooks).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
from kvbook_workshop import toc_docnames  # the book's one reader of _toc.yml

ROOT = Path(__file__).resolve().parents[1]
KERNEL = "python3"
KERNELSPEC = {"name": KERNEL, "display_name": "Python 3 (ipykernel)", "language": "python"}
ALTAIR_ID = re.compile(r"altair-viz-[0-9a-f]{32}")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: MyST's inline expression role, with one or two backticks: {eval}`expr` or {eval}``expr``.
EVAL_ROLE = re.compile(r"\{eval\}(`+)(.+?)\1", re.S)


def inline_expressions(markdown: str) -> list[str]:
    """The ``{eval}`` expressions of a markdown cell, in order, each once."""
    seen: dict[str, None] = {}
    for match in EVAL_ROLE.finditer(markdown):
        seen.setdefault(match.group(2).strip(), None)
    return list(seen)


class BookClient(NotebookClient):
    """nbclient's executor, which also evaluates the markdown cells' inline expressions.

    They are evaluated once every code cell has run, in the kernel's final
    state, as JupyterLab's "Run All" ends up doing with ``jupyterlab-myst`` (it
    sends each markdown cell's expressions after the code cells' requests); a
    chapter glues each name once, so the final state is every cell's state.
    That also lets the overview box, above the set-up cell, quote the timing.
    """

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        if cell_index == len(self.nb.cells) - 1:
            for index, markdown in enumerate(self.nb.cells):
                if markdown.cell_type == "markdown":
                    await self._evaluate_expressions(markdown, index)
        return cell

    async def _evaluate_expressions(self, cell, cell_index) -> None:
        expressions = inline_expressions(cell.source)
        cell.metadata.pop("user_expressions", None)
        if not expressions:
            return
        msg_id = self.kc.execute("", silent=False, store_history=False,
                                 user_expressions={e: e for e in expressions})
        reply = await self.async_wait_for_reply(msg_id, cell)
        results = reply["content"].get("user_expressions", {})
        saved = []
        for expression in expressions:
            result = results.get(expression, {"status": "error", "ename": "NoResult",
                                              "evalue": "the kernel returned nothing"})
            if result.get("status") != "ok":
                raise SystemExit(f"markdown cell {cell_index}: {{eval}}`{expression}` failed: "
                                 f"{result.get('ename')}: {result.get('evalue')}")
            saved.append({"expression": expression,
                          "result": {"data": dict(result.get("data", {})),
                                     "metadata": dict(result.get("metadata", {})),
                                     "status": "ok"}})
        cell.metadata["user_expressions"] = saved

def toc_files(root: Path = ROOT) -> list[str]:
    """Every ``file``/``root`` entry of _toc.yml (paths without suffix), in order."""
    return toc_docnames(root)


def toc_notebooks(root: Path = ROOT) -> list[Path]:
    """Notebooks listed in _toc.yml, in order."""
    files = toc_files(root)
    return [root / (f + ".ipynb") for f in files if (root / (f + ".ipynb")).exists()]


def _stable_hex(seed: str, n: int) -> str:
    return hashlib.md5(f"{seed}:{n}".encode()).hexdigest()


def normalise(nb: nbformat.NotebookNode, seed: str) -> nbformat.NotebookNode:
    """Make a freshly executed notebook byte-stable (see the module docstring)."""
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    info = nb.metadata.get("language_info")
    if info:
        info.pop("version", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.metadata.pop("collapsed", None)
            cell.outputs = _coalesce_streams(cell.outputs)

    # Altair element ids, in order of first appearance.
    text = json.dumps(nb, sort_keys=True)
    mapping: dict[str, str] = {}
    for found in ALTAIR_ID.findall(text):
        if found not in mapping:
            mapping[found] = "altair-viz-" + _stable_hex(seed + ":altair", len(mapping))
    return nbformat.from_dict(json.loads(_replace(text, mapping)))


def _coalesce_streams(outputs: list) -> list:
    """Merge consecutive stdout (or stderr) chunks: where the kernel split a
    stream is a matter of timing, not of what the cell printed."""
    merged: list = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (
            out.get("output_type") == "stream"
            and prev is not None
            and prev.get("output_type") == "stream"
            and prev.get("name") == out.get("name")
        ):
            prev["text"] = "".join(prev["text"]) + "".join(out["text"])
        else:
            merged.append(out)
    return merged


def _replace(text: str, mapping: dict[str, str]) -> str:
    if not mapping:
        return text
    pattern = re.compile("|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True)))
    return pattern.sub(lambda m: mapping[m.group(0)], text)


#: Tag of a cell that draws a live widget (outputs cleared after the run).
LIVE_WIDGET_TAG = "kvbook-live-widget"


def drop_live_widgets(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Clear the outputs of ``kvbook-live-widget`` cells and drop saved widget state.

    A widget view left in any other cell is an error: the page would show a
    control with no kernel behind it.
    """
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if LIVE_WIDGET_TAG in cell.get("metadata", {}).get("tags", []):
            cell.outputs = []
        elif any(WIDGET_VIEW in out.get("data", {}) for out in cell.get("outputs", [])):
            raise SystemExit(f"cell {i} draws a widget but is not tagged {LIVE_WIDGET_TAG!r}: "
                             "tag it, and give the page a static twin")
    nb.metadata.pop("widgets", None)
    return nb


def execute(path: Path, timeout: int) -> float:
    """Execute one notebook in place; return seconds taken."""
    nb = nbformat.read(path, as_version=4)
    client = BookClient(
        nb,
        kernel_name=KERNEL,
        timeout=timeout,
        record_timing=False,
        store_widget_state=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    nb = normalise(drop_live_widgets(nb), seed=path.stem)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Re-execute notebooks in place.")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook in _toc.yml")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    args = parser.parse_args(argv)

    # What the kernel inherits: deterministic hashing and time zone, and the
    # committed outputs never carry the optional in-notebook Vega runtime.
    os.environ["PYTHONHASHSEED"] = "0"
    os.environ["TZ"] = "UTC"
    os.environ.pop("KVSIM_OFFLINE_CHARTS", None)

    paths = [p.resolve() for p in args.notebooks] or toc_notebooks()
    if not paths:
        print("no notebooks to execute (none listed in _toc.yml)")
        return 0
    for path in paths:
        if not path.exists():
            print(f"no such notebook: {path}", file=sys.stderr)
            return 2
        seconds = execute(path, args.timeout)
        try:
            shown = path.relative_to(ROOT)
        except ValueError:
            shown = path
        print(f"executed {shown} in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
