"""Checks that run only when what they depend on changes: fingerprints and their stamps.

A few checks prove a use of the book at a cost out of proportion to how often
their inputs change: Binder's environment (a fresh venv, every pin installed,
every chapter executed) changes only with ``binder/``, the pins and what the
code imports. Such a check fingerprints its inputs (:func:`fingerprint`: the
bytes of named files, plus any facts it adds, such as the third-party modules
the code imports) and, when it passes, records the fingerprint in
:data:`STAMPS` (``tests/stamps.json``, committed). The next run whose inputs
give the same fingerprint skips, saying when and at what fingerprint the check
passed; any change to an input runs it again. ``KVBOOK_FULL=1`` runs every such
check whatever the stamps say (``make test-full``).

Commit ``tests/stamps.json`` with the change that made the check run: a stale
or missing stamp costs a run, never a wrong pass.
"""
from __future__ import annotations

import ast
import datetime
import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAMPS = ROOT / "tests" / "stamps.json"


def fingerprint(files: list[str], facts: dict | None = None) -> str:
    """A hex digest of ``files`` (paths under the repository, by content; a missing file counts
    as missing) and ``facts`` (any JSON value)."""
    h = hashlib.sha256()
    for name in sorted(files):
        path = ROOT / name
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
        h.update(f"{name}\0{digest}\n".encode())
    h.update(json.dumps(facts or {}, sort_keys=True).encode())
    return h.hexdigest()


def _read() -> dict:
    try:
        return json.loads(STAMPS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def verified(check: str, digest: str) -> str | None:
    """Why ``check`` may skip (it passed at ``digest``), or ``None`` when it must run."""
    if os.environ.get("KVBOOK_FULL", "") == "1":
        return None
    stamp = _read().get(check)
    if not stamp or stamp.get("fingerprint") != digest:
        return None
    return (f"{check}: passed on {stamp['passed']} at these inputs (fingerprint {digest[:12]} in "
            f"tests/stamps.json: {', '.join(stamp['inputs'])}); any change to them runs it again, "
            f"and KVBOOK_FULL=1 (make test-full) runs it now")


def record(check: str, digest: str, inputs: list[str]) -> None:
    """``check`` passed at ``digest``: write its stamp (the other checks' stamps are kept)."""
    stamps = _read()
    stamps[check] = {"fingerprint": digest, "inputs": inputs,
                     "passed": datetime.date.today().isoformat()}
    tmp = STAMPS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(stamps, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, STAMPS)


def third_party_imports(python_files: list[Path], notebooks: list[Path]) -> list[str]:
    """The top-level modules that ``python_files`` and the code cells of ``notebooks`` import,
    other than the standard library's and kvsim's, sorted."""
    sources = [p.read_text(encoding="utf-8") for p in python_files]
    for nb in notebooks:
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            if cell["cell_type"] == "code":
                text = "".join(cell["source"])
                # IPython's shell and magic lines are not Python
                sources.append("\n".join("" if line.lstrip().startswith(("!", "%")) else line
                                         for line in text.splitlines()))
    names: set[str] = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return sorted(n for n in names if n not in sys.stdlib_module_names and n != "kvsim"
                  and not n.startswith("_"))
