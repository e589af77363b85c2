"""The compiled engine: which modules mypyc compiles, and when the compiled build is used.

The engine's hot modules (:data:`COMPILED_MODULES`, chosen by measurement: the ones the
run loop spends its time in, book/engine-reference.md) can be compiled with mypyc, with no
change to their source, to run the same code about twice as fast with byte-identical results
(tests/test_compiled_engine.py). The build (``setup.py``: ``pip install .`` or
``pip install -e .`` on a machine with a C compiler; ``make compile`` rebuilds it in a
checkout) keeps its extension modules apart from the sources, in ``kvsim/_compiled/``, with a
stamp (:data:`STAMP_FILE`, written by :func:`take_stamp` and :func:`write_stamp`): the digest
of every source file the compiled code was built from or reads types from (:data:`STAMPED`,
the engine and the layers below it), and each file's size and modification time.

:func:`install` (run by ``kvsim/engine/__init__.py``, before any engine module is imported)
puts the compiled modules in front of the pure ones only when that stamp matches the sources
on disk, all of them or none: a developer who edits an engine module runs the edited Python,
never the stale build, until ``make compile`` rebuilds it. A file whose size and modification
time are the stamp's is not read (so a start-up hashes nothing); any other is hashed, so an
edit is always caught and a ``touch`` or a fresh checkout of the same bytes keeps the build.
``KVSIM_PURE=1`` forces the pure path. :func:`compiled` says which path runs,
:func:`build_note` why, in one line.

Standard library only: ``setup.py`` loads this file by its path, before kvsim is installed.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import time
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

__all__ = ["BUILD_DIR", "COMPILED_MODULES", "GROUP", "PURE_VAR", "SETTLED_NS", "STAMPED", "STAMP_FILE",
           "build_note", "compiled", "extension_path", "extension_suffix", "install", "source_digests",
           "stale_reason", "take_stamp", "write_stamp"]

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
#: How long before the stamp is taken a file must have last changed for the stamp to record its
#: size and modification time (which then vouch for its bytes): a file changed later could be
#: edited again within the file system's timestamp granularity keeping both (git's "racily
#: clean" case), so it is hashed at every check instead.
SETTLED_NS = 2 * 10**9

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


def _stamped_files(package: Path) -> dict[str, str]:
    """Each stamped source file: its path under kvsim's folder (``engine/loop.py``) and on disk
    (found with ``os.walk`` and kept as strings: ``Path.rglob`` took most of a check's time)."""
    files = {}
    root = os.fspath(package)
    for name in STAMPED:
        layer = os.path.join(root, name)
        if os.path.isfile(layer):
            files[name] = layer
        for folder, subfolders, names in os.walk(layer):
            subfolders[:] = [sub for sub in subfolders if sub != "__pycache__"]
            prefix = os.path.relpath(folder, root).replace(os.sep, "/")
            files.update((f"{prefix}/{file}", os.path.join(folder, file))
                         for file in names if file.endswith(".py"))
    return dict(sorted(files.items()))


def _digest(path: str) -> str:
    with open(path, "rb") as source:
        return hashlib.sha256(source.read()).hexdigest()


def source_digests(package: Path = _PACKAGE) -> dict[str, str]:
    """Each stamped source file (a path under kvsim's folder) and the sha256 of its bytes."""
    return {name: _digest(path) for name, path in _stamped_files(package).items()}


def take_stamp(package: Path = _PACKAGE) -> dict[str, object]:
    """The stamp of the sources in ``package`` as they are now (``setup.py`` takes it before
    mypyc reads them and writes it once the build succeeded): the compiled modules, this
    Python's extension suffix, each stamped file's sha256 and, for each file last changed
    :data:`SETTLED_NS` or more before now, its ``[size, mtime_ns]``."""
    settled_before = time.time_ns() - SETTLED_NS
    stats: dict[str, list[int]] = {}
    # Taken before the digests: an edit in between makes a file look changed, never unchanged.
    for name, path in _stamped_files(package).items():
        status = os.stat(path)
        if status.st_mtime_ns < settled_before:
            stats[name] = [status.st_size, status.st_mtime_ns]
    return {"modules": list(COMPILED_MODULES), "suffix": extension_suffix(),
            "sources": source_digests(package), "stats": stats}


def write_stamp(path: Path, stamp: dict[str, object]) -> None:
    """Write ``stamp`` (from :func:`take_stamp`) to ``path``."""
    path.write_text(json.dumps(stamp, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _changed_sources(package: Path, sources: dict[str, str], stats: dict[str, list[int]]) -> list[str]:
    """The stamped files that are new, gone or hold other bytes than the stamp's digest says.
    A file whose size and mtime are the ones the stamp recorded is not read."""
    files = _stamped_files(package)
    changed = set(files) ^ set(sources)
    for name, path in files.items():
        if name in sources:
            status = os.stat(path)
            if stats.get(name) != [status.st_size, status.st_mtime_ns] and _digest(path) != sources[name]:
                changed.add(name)
    return sorted(changed)


class _CompiledEngineFinder:
    """Finds the compiled modules (and mypyc's shared library) in the build's folder: a meta
    path finder (a class with ``find_spec``; not a subclass of ``importlib.abc.MetaPathFinder``,
    whose module imports ``importlib.resources`` and ``tempfile``, a cost at every start-up)."""

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
        built_stats = dict(stamp.get("stats", {}))   # a stamp without them: every file is hashed
    except (ValueError, KeyError, TypeError):
        return f"the compiled build's {BUILD_DIR}/{STAMP_FILE} is unreadable; `make compile` rebuilds it"
    if built_modules != list(COMPILED_MODULES) or stamp.get("suffix") != extension_suffix():
        return "the compiled build is for another module list or Python; `make compile` rebuilds it"
    changed = _changed_sources(package, built_sources, built_stats)
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
