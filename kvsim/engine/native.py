"""The compiled engine: which modules mypyc compiles, and when the compiled build is used.

The engine's hot modules (:data:`COMPILED_MODULES`, chosen by measurement: the ones the
run loop spends its time in, book/engine-reference.md) can be compiled with mypyc, with no
change to their source, to run the same code about twice as fast with byte-identical results
(tests/test_compiled_engine.py). The build (``setup.py``: ``pip install .`` or
``pip install -e .`` on a machine with a C compiler; ``make compile`` rebuilds it in a
checkout) keeps its extension modules apart from the sources, in ``kvsim/_compiled/``, with a
stamp (:data:`STAMP_FILE`): the digest of every source file the compiled code was built from
or reads types from (:data:`STAMPED`, the engine and the layers below it).

:func:`install` (run by ``kvsim/engine/__init__.py``, before any engine module is imported)
puts the compiled modules in front of the pure ones only when that stamp matches the sources
on disk, all of them or none: a developer who edits an engine module runs the edited Python,
never the stale build, until ``make compile`` rebuilds it. ``KVSIM_PURE=1`` forces the pure
path. :func:`compiled` says which path runs, :func:`build_note` why, in one line.

Standard library only: ``setup.py`` loads this file by its path, before kvsim is installed.
"""
from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

__all__ = ["BUILD_DIR", "COMPILED_MODULES", "GROUP", "PURE_VAR", "STAMPED", "STAMP_FILE", "build_note",
           "compiled", "extension_path", "extension_suffix", "install", "source_digests", "stale_reason"]

#: The modules mypyc compiles, under ``kvsim.engine``: where a run spends its time (the
#: scheduler, the loop, the block layer, the recorder, the step-time formula ``step_cost``)
#: and the classes they pass between them; a module with a class that subclasses a compiled
#: one must be compiled too (tests/test_compiled_engine.py checks it). The rest stays
#: interpreted: the cold modules (options, the result's assembly in numpy, calibration, fits,
#: invariant checks); ``waiting`` (``FCFSQueue`` subclasses ``collections.deque``, which
#: crashes compiled); and the modules that take the user's values and check them, so that a
#: wrong type gets its one-line error, never a compiled signature's ``TypeError``:
#: ``cost_model`` (``CostModel``, the user's constants) and ``costs`` (chapter 3's functions).
COMPILED_MODULES: tuple[str, ...] = (
    "loop", "scheduler", "plan", "timeline", "requests", "policies", "swapping",
    "suspension", "step_cost", "blocks.counting", "blocks.decode_group", "blocks.manager",
    "blocks.pool", "blocks.window_frees", "blocks.host_tier", "blocks.block_queue",
    "blocks.window_cache", "blocks.window_retention",
)
#: mypyc's group: its shared library is the top-level module ``kvsim_engine__mypyc``, which
#: only this module's finder loads.
GROUP = "kvsim_engine"
#: The environment variable that forces the pure-Python engine: ``1`` (at import, and for a
#: build: ``KVSIM_PURE=1 pip install .`` builds a pure wheel); ``0`` or unset, the default.
PURE_VAR = "KVSIM_PURE"
#: The files whose bytes the stamp holds, under ``kvsim/``: the engine and the layers it
#: imports (tests/test_layers.py keeps it from importing anything above).
STAMPED = ("errors.py", "units.py", "model", "traffic", "engine")
#: The build's folder and stamp, under ``kvsim/``.
BUILD_DIR = "_compiled"
STAMP_FILE = "stamp.json"

_PACKAGE = Path(__file__).resolve().parents[1]
_state: dict[str, str] = {}


def extension_suffix() -> str:
    """The file suffix of this Python's extension modules (``.cpython-311-x86_64-linux-gnu.so``)."""
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def extension_path(module: str, package: Path = _PACKAGE) -> Path:
    """Where the build keeps ``module`` (a name in :data:`COMPILED_MODULES`, or the shared
    library ``GROUP + "__mypyc"``), under ``package`` (kvsim's folder)."""
    if module == f"{GROUP}__mypyc":
        return package / BUILD_DIR / f"{module}{extension_suffix()}"
    return package / BUILD_DIR / "engine" / (module.replace(".", "/") + extension_suffix())


def source_digests(package: Path = _PACKAGE) -> dict[str, str]:
    """Each stamped source file (a path under kvsim's folder) and the sha256 of its bytes."""
    digests = {}
    for name in STAMPED:
        layer = package / name
        files = [layer] if layer.is_file() else sorted(
            p for p in layer.rglob("*.py") if "__pycache__" not in p.parts)
        for path in files:
            digests[path.relative_to(package).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


class _CompiledEngineFinder(importlib.abc.MetaPathFinder):
    """Finds the compiled modules (and mypyc's shared library) in the build's folder."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(file))
        return importlib.util.spec_from_file_location(fullname, file, loader=loader)


def _pure_requested() -> bool:
    value = os.environ.get(PURE_VAR, "")
    if value not in ("", "0", "1"):
        from kvsim.errors import KvsimError

        raise KvsimError(f"{PURE_VAR}={value!r}: expected 1 (the pure-Python engine) or 0 or unset "
                         "(the compiled engine when it is built)")
    return value == "1"


def stale_reason(package: Path) -> str | None:
    """Why the build in ``package`` cannot be used (``None``: it can)."""
    stamp_path = package / BUILD_DIR / STAMP_FILE
    if not stamp_path.is_file():
        return "no compiled build (`make compile`, or pip install on a machine with a C compiler)"
    try:
        stamp = json.loads(stamp_path.read_text(encoding="utf-8"))
        built_sources, built_modules = dict(stamp["sources"]), list(stamp["modules"])
    except (ValueError, KeyError, TypeError):
        return f"the compiled build's {BUILD_DIR}/{STAMP_FILE} is unreadable; `make compile` rebuilds it"
    if built_modules != list(COMPILED_MODULES) or stamp.get("suffix") != extension_suffix():
        return "the compiled build is for another module list or Python; `make compile` rebuilds it"
    now = source_digests(package)
    changed = sorted(set(now) ^ set(built_sources) | {f for f in now if built_sources.get(f) != now[f]})
    if changed:
        more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
        return (f"the compiled build is stale (kvsim/{changed[0]}{more} changed since it was built); "
                "`make compile` rebuilds it")
    missing = [m for m in (*COMPILED_MODULES, f"{GROUP}__mypyc") if not extension_path(m, package).is_file()]
    if missing:
        return f"the compiled build lacks {missing[0]}; `make compile` rebuilds it"
    return None


def install(package: Path = _PACKAGE) -> None:
    """Use the compiled engine if it is built from the sources on disk and not turned off;
    else leave the pure modules in place. Once per process (the first call decides)."""
    if _state:
        return
    if _pure_requested():
        _state.update(path="pure", note=f"pure Python ({PURE_VAR}=1)")
        return
    reason = stale_reason(package)
    if reason is not None:
        _state.update(path="pure", note=f"pure Python: {reason}")
        return
    names = [f"kvsim.engine.{m}" for m in COMPILED_MODULES]
    early = [n for n in names if n in sys.modules]
    if early:
        _state.update(path="pure", note=f"pure Python: {early[0]} was imported before the compiled build")
        return
    files = {n: extension_path(m, package) for n, m in zip(names, COMPILED_MODULES, strict=True)}
    files[f"{GROUP}__mypyc"] = extension_path(f"{GROUP}__mypyc", package)
    sys.meta_path.insert(0, _CompiledEngineFinder(files))
    _state.update(path="compiled", note=f"compiled (mypyc; {len(COMPILED_MODULES)} modules)")


def compiled() -> bool:
    """Whether this process runs the compiled engine."""
    install()
    return _state["path"] == "compiled"


def build_note() -> str:
    """Which engine this process runs, and why, in one line."""
    install()
    return _state["note"]
