"""A disk cache of run summaries, keyed by the code that computes them.

A run of a named scenario is fully determined by kvsim's engine code, the
scenario's settings and its seed (the engine draws no random numbers; the
workload is seeded). So a summary computed once can be looked up the next time
the same run is asked for, in any process, as long as that code has not
changed. :func:`kvsim.sweep` does this when the cache is switched on: the
lab's mission grids, the chapters' sweeps and the tests that re-score them then
cost one run each per change of the engine instead of one per process.

The cache is off unless ``KVSIM_RUN_CACHE`` names a directory (``make unit``,
``make test`` and ``make execute`` set it to ``.cache/kvsim-runs`` in the
repository). Inside it, one folder per :func:`fingerprint` holds one small
JSON file per run; a new fingerprint prunes all but the newest
:data:`KEEP_FINGERPRINTS` folders.

What the key holds, and so what invalidates an entry:

* :func:`fingerprint`: the bytes of every file of the layers a run depends on
  (``kvsim/errors.py``, ``kvsim/units.py``, ``kvsim/model/``,
  ``kvsim/traffic/``, ``kvsim/engine/``, ``kvsim/runs/``; the layer test keeps
  them from importing anything above), numpy's version, Python's
  ``major.minor`` and numpy's dispatched CPU features that are turned off
  (``NPY_DISABLE_CPU_FEATURES``): a check that the same run gives the same
  bytes with numpy's SIMD code off must run it, not read it back;
* the scenario's name, every setting and the seed.

A run whose settings are not plain JSON values (a :class:`kvsim.Workload`, a
``ModelSpec``), or name a file (a ``config.json`` path, whose content the key
would not see), is never cached. Summaries are plain ``int``, ``float``,
``str`` and ``bool`` values; JSON gives them back exactly (a float's ``repr``
round-trips), NaN and infinities included.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TypeAlias

from kvsim.errors import KvsimError

__all__ = ["CACHE_VAR", "KEEP_FINGERPRINTS", "SummaryCache", "fingerprint", "from_environment",
           "Summary", "SummaryValue"]

#: One value of a run's summary: a count, a measure or a name (``kvsim.SimResult.summary``).
SummaryValue: TypeAlias = float | int | str
#: A run's summary, key to value, as :meth:`kvsim.SimResult.summary` returns it (and as it
#: comes back from the cache's JSON).
Summary: TypeAlias = dict[str, SummaryValue]
#: What :func:`run_key` puts in a key for one setting: plain JSON data.
_PlainValue: TypeAlias = bool | int | float | str | None

#: The environment variable naming the cache's directory (unset or empty: no cache).
CACHE_VAR = "KVSIM_RUN_CACHE"

#: Fingerprint folders kept: the newest few (a branch switched back and forth keeps both).
KEEP_FINGERPRINTS = 4

_PACKAGE = Path(__file__).resolve().parents[1]
#: The files and folders of kvsim whose bytes decide a run (the layers up to runs/).
RUN_LAYERS = ("errors.py", "units.py", "model", "traffic", "engine", "runs")

_fingerprints: dict[tuple[str, str], str] = {}


def fingerprint(package: str | os.PathLike[str] | None = None) -> str:
    """A hex digest of everything that decides a run's summary besides its settings (see the
    module docstring), for kvsim's own files or those of the ``package`` folder given.
    Computed once per process."""
    import numpy as np

    root = Path(package) if package is not None else _PACKAGE
    disabled = " ".join(sorted(os.environ.get("NPY_DISABLE_CPU_FEATURES", "").split()))
    memo = (str(root), disabled)
    if memo not in _fingerprints:
        h = hashlib.sha256()
        for name in RUN_LAYERS:
            layer = root / name
            files = [layer] if layer.is_file() else sorted(
                p for p in layer.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                and p.suffix not in (".pyc", ".pyo"))
            for path in files:
                h.update(path.relative_to(root).as_posix().encode() + b"\0")
                h.update(hashlib.sha256(path.read_bytes()).digest())
        h.update(f"numpy {np.__version__}; python {sys.version_info[0]}.{sys.version_info[1]}; "
                 f"numpy features off: {disabled}".encode())
        _fingerprints[memo] = h.hexdigest()
    return _fingerprints[memo]


def _plain(value: object) -> _PlainValue:
    """``value`` as a JSON value, numpy scalars as Python ones; ``None`` if it is not plain data
    (then the run is not cached). Raises ``TypeError`` for what cannot be keyed."""
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if isinstance(value, str):
        if os.path.sep in value or os.path.exists(value):
            raise TypeError("a path: its content is not in the key")
        return value
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        return _plain(item())
    raise TypeError(f"{type(value).__name__} is not plain data")


def run_key(scenario: str, settings: Mapping[str, object], seed: int | None) -> str | None:
    """The key of one run of ``scenario``, or ``None`` when the run cannot be cached."""
    try:
        plain = {str(k): _plain(v) for k, v in settings.items()}
    except TypeError:
        return None
    text = json.dumps({"scenario": scenario, "settings": plain, "seed": seed}, sort_keys=True,
                      allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


class SummaryCache:
    """Run summaries under ``directory / fingerprint()``, one JSON file per run."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        base = Path(directory)
        if base.exists() and not base.is_dir():
            raise KvsimError(f"{CACHE_VAR}={str(base)!r} is not a directory: expected a folder "
                             f"for kvsim's run cache (or unset it to turn the cache off)")
        self.base = base
        self.folder = base / fingerprint()[:32]

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> Summary | None:
        """The summary stored under ``key``, or ``None`` (absent, or unreadable: then it is run)."""
        try:
            with open(self._path(key), encoding="utf-8") as f:
                value = json.load(f)
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, summary: Mapping[str, SummaryValue]) -> None:
        """Store ``summary`` under ``key`` (atomically: a reader sees the old file or the new one).
        A cache that cannot be written is skipped, never an error: the run is done either way."""
        path = self._path(key)
        try:
            new_folder = not self.folder.exists()
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(dict(summary), f, allow_nan=True)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
            if new_folder:
                self._prune()
        except OSError:
            return

    def _prune(self) -> None:
        """Keep the newest :data:`KEEP_FINGERPRINTS` fingerprint folders (by modification time)."""
        folders = sorted((p for p in self.base.iterdir()
                          if p.is_dir() and len(p.name) == 32 and all(c in "0123456789abcdef"
                                                                      for c in p.name)),
                         key=lambda p: p.stat().st_mtime, reverse=True)
        for old in folders[KEEP_FINGERPRINTS:]:
            if old != self.folder:
                shutil.rmtree(old, ignore_errors=True)


def from_environment() -> SummaryCache | None:
    """The cache ``KVSIM_RUN_CACHE`` names, or ``None`` when it is unset or empty."""
    directory = os.environ.get(CACHE_VAR, "")
    return SummaryCache(directory) if directory else None
