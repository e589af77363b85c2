"""Sphinx extension: the prose's inline expressions, from the results saved with the notebook.

The chapters quote their numbers with MyST's inline expressions,
``{eval}`glued("b_kv_gb:.2f")```, the one syntax both renderers of the book
understand:

* in JupyterLab, ``jupyterlab-myst`` evaluates each expression in the kernel
  when its markdown cell runs, and saves the result in the cell's metadata
  (``metadata.user_expressions``: a list of ``{"expression", "result"}``);
* ``make execute`` (``scripts/execute_notebooks.py``) evaluates them the same
  way, in order, after the code cells above them, and saves them the same way;
* on the static site this extension reads those saved results: the build never
  runs a kernel (``execute_notebooks: "off"``).

myst-nb renders ``{eval}`` only while it executes a notebook itself
(MyST-NB issue #596: with execution off it warns "This document does not have
a running kernel"). Here its client for unexecuted notebooks answers from the
saved metadata instead, so myst-nb's own role renders the result (plain text,
quotes of a string stripped).

NOTE: this replaces ``myst_nb.core.execute.base.NotebookClientBase.eval_variable``
(myst-nb 1.4), a method that only raises ``NotImplementedError``; clients that
execute (``inline`` mode) override it and are unaffected.

A missing, failed or ambiguous saved result stops the build (``-W``): an
expression nobody evaluated, one that raised, or one that gave two different
results in two cells (the book glues each name once).
"""

from __future__ import annotations

import copy

from sphinx.application import Sphinx

#: Where a markdown cell keeps the results of its inline expressions (jupyterlab-myst's key).
USER_EXPRESSIONS = "user_expressions"


def saved_results(notebook) -> dict[str, dict]:
    """``{expression: result}`` over every markdown cell of ``notebook``.

    Raises ``ValueError`` when one expression was saved with two different results.
    """
    found: dict[str, dict] = {}
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        for entry in cell.get("metadata", {}).get(USER_EXPRESSIONS, []):
            expression, result = entry.get("expression"), entry.get("result", {})
            if expression in found and found[expression] != result:
                raise ValueError(f"cell {index}: {expression!r} was saved with two different results "
                                 f"({found[expression].get('data')} and {result.get('data')})")
            found[expression] = result
    return found


def _saved_eval_variable(self, name: str) -> list[dict]:
    """``NotebookClientBase.eval_variable`` for a notebook that is not executed here."""
    results = saved_results(self.notebook)
    if name not in results:
        raise ValueError(f"{name!r} has no saved result in the notebook's metadata: "
                         "run `make execute` (or run the cell in JupyterLab and save)")
    result = copy.deepcopy(results[name])   # myst-nb writes render options into what it gets
    if result.get("status") != "ok":
        return [{"output_type": "error", "ename": result.get("ename", "error"),
                 "evalue": result.get("evalue", str(result.get("status")))}]
    return [{"output_type": "execute_result", "data": result.get("data", {}),
             "metadata": result.get("metadata", {}), "execution_count": None}]


def setup(app: Sphinx) -> dict:
    from myst_nb.core.execute.base import NotebookClientBase

    NotebookClientBase.eval_variable = _saved_eval_variable
    return {"parallel_read_safe": True, "parallel_write_safe": True}
