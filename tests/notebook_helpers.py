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
    """{name: value} of every number the notebook glued (myst-nb's scrapbook outputs)."""
    values = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                values[name] = ast.literal_eval(out["data"]["application/papermill.record/text/plain"])
    return values


def glue_references(nb) -> set[str]:
    """Names the notebook's prose quotes with ``{glue:text}`` (or ``{glue}``)."""
    used = set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for ref in re.findall(r"\{glue(?::text)?\}`([^`]+)`", cell.source):
                used.add(ref.rsplit(":", 1)[0] if ":" in ref else ref)
    return used
