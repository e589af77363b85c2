"""Reading a committed chapter notebook in tests: the notebook, and the numbers it glued."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"


def read_chapter(path: Path):
    """The notebook at ``path`` (skips the test when it is absent)."""
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return nbformat.read(path, as_version=4)


def glued(nb) -> dict:
    """{name: value} of every number the notebook glued (its record outputs, myst-nb's scrapbook format)."""
    values = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                values[name] = ast.literal_eval(out["data"]["application/papermill.record/text/plain"])
    return values


def glue_references(nb) -> set[str]:
    """Names the notebook's prose quotes with ``{eval}`glued("name:spec")```."""
    used = set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for ref in re.findall(r'\{eval\}`glued\("([^"]+)"\)`', cell.source):
                used.add(ref.split(":", 1)[0])
    return used


def glued_where(nb) -> dict[str, int]:
    """{name: index of the cell whose outputs glued it} (the first, if several did)."""
    where: dict[str, int] = {}
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                where.setdefault(name, i)
    return where


def quoted_above_their_glue(nb) -> list[tuple[int, str, int]]:
    """``(markdown cell, name, cell that glues it)`` for each number the prose quotes above the
    cell that computes it (JupyterLab shows ``…`` there until the prose is run again)."""
    where = glued_where(nb)
    late = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for ref in re.findall(r'\{eval\}`+glued\("([^"]+)"\)`+', cell.source):
                name = ref.split(":", 1)[0]
                if where.get(name, -1) > i:
                    late.append((i, name, where[name]))
    return late
