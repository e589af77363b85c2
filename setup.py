"""kvsim's build: pyproject.toml declares the package; this adds the compiled engine.

On a machine with a C compiler and Python's headers, ``pip install .`` (a wheel) and
``pip install -e .`` (a checkout, in place) compile the engine's hot modules with mypyc
(the list is kvsim/engine/native.py's ``COMPILED_MODULES``) into ``kvsim/_compiled/``, beside
a stamp of the sources they were built from; kvsim uses them only while that stamp matches
(kvsim/engine/native.py). Without a compiler, when mypyc or the compiler fails, or with
``KVSIM_PURE=1``, the build says so in one line and installs the pure-Python engine, which
gives the same results byte for byte.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def _native():
    """kvsim/engine/native.py, loaded by its path (kvsim itself is not importable here)."""
    spec = importlib.util.spec_from_file_location("_kvsim_native", ROOT / "kvsim" / "engine" / "native.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _say(message: str) -> None:
    print(f"kvsim build: {message}", file=sys.stderr, flush=True)


NATIVE = _native()
#: The setuptools commands that compile extensions (pip's other steps only read metadata).
_BUILDS = {"bdist_wheel", "build", "build_ext", "editable_wheel", "develop", "install"}
#: The stamp of the sources the extensions are generated from (taken before mypyc reads them;
#: its format is native.take_stamp's).
STAMP: dict[str, object] = {}


def _mypyc_extensions() -> list:
    """mypyc's extensions for the compiled modules, placed under kvsim/_compiled/ (empty,
    with a one-line reason, when the pure engine is asked for or mypyc fails)."""
    if os.environ.get(NATIVE.PURE_VAR, "") == "1":
        _say(f"{NATIVE.PURE_VAR}=1: the pure-Python engine only")
        return []
    if not _BUILDS & set(sys.argv[1:]):   # pip's metadata and requirements steps: no C needed
        return []
    try:
        from mypyc.build import mypycify
    except ImportError as exc:
        _say(f"mypyc is not installed ({exc}): the pure-Python engine only")
        return []
    STAMP.update(NATIVE.take_stamp(ROOT / "kvsim"))
    paths = [f"kvsim/engine/{m.replace('.', '/')}.py" for m in NATIVE.COMPILED_MODULES]
    started = time.perf_counter()
    try:
        extensions = mypycify(
            # No config file (pyproject's [tool.mypy] is make typecheck's, strict, and its
            # unused-section note would stop mypyc).
            ["--config-file=", "--cache-dir=build/mypyc/cache", *paths],
            opt_level="3", group_name=NATIVE.GROUP, target_dir="build/mypyc")
    except (Exception, SystemExit) as exc:  # noqa: BLE001 -- any failure falls back to pure
        _say(f"mypyc could not compile the engine ({type(exc).__name__}: {exc}): "
             "the pure-Python engine only")
        return []
    _say(f"mypyc generated C for {len(paths)} modules in {time.perf_counter() - started:.1f} s")
    for ext in extensions:   # kvsim.engine.x -> kvsim._compiled.engine.x (apart from the sources)
        ext.name = (f"kvsim.{NATIVE.BUILD_DIR}.{ext.name}" if ext.name.startswith(NATIVE.GROUP)
                    else f"kvsim.{NATIVE.BUILD_DIR}.{ext.name.removeprefix('kvsim.')}")
    return extensions


class BuildCompiledEngine(build_ext):
    """build_ext that falls back to the pure engine on any compiler failure, and writes the
    stamp last (no stamp, no compiled engine)."""

    def _stamp_path(self) -> Path:
        shared = Path(self.get_ext_fullpath(f"kvsim.{NATIVE.BUILD_DIR}.{NATIVE.GROUP}__mypyc"))
        return shared.parent / NATIVE.STAMP_FILE

    def _compiler_problem(self) -> str | None:
        """Why this machine cannot compile an extension (``None``: it can)."""
        with tempfile.TemporaryDirectory() as tmp:
            probe = Path(tmp) / "probe.c"
            probe.write_text("#include <Python.h>\nint kvsim_probe(void) { return 0; }\n")
            try:
                self.compiler.compile([str(probe)], output_dir=tmp,
                                      include_dirs=self.include_dirs)
            except Exception as exc:  # noqa: BLE001 -- CompileError, a missing gcc: OSError
                return f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else exc}"
        return None

    built = ""   # the stamp written by a successful build (build_ext builds out of place first)

    def build_extensions(self) -> None:
        if not self.extensions:
            return
        self._stamp_path().unlink(missing_ok=True)
        problem = self._compiler_problem()
        if problem is not None:
            _say(f"no working C compiler ({problem}): the pure-Python engine only")
            return
        started = time.perf_counter()
        try:
            super().build_extensions()
        except Exception as exc:  # noqa: BLE001 -- any compiler failure falls back to pure
            for ext in self.extensions:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            _say(f"compiling the engine failed ({type(exc).__name__}: {exc}): "
                 "the pure-Python engine only")
            return
        path = self._stamp_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        NATIVE.write_stamp(path, STAMP)
        self.built = str(path)
        _say(f"compiled the engine ({len(NATIVE.COMPILED_MODULES)} modules) in "
             f"{time.perf_counter() - started:.0f} s")

    def copy_extensions_to_source(self) -> None:
        """In place (``pip install -e .``, ``make compile``): the extensions into the
        checkout's kvsim/_compiled/, the stamp last; the old stamp goes first, whatever
        happens (a failed rebuild leaves the pure engine, never a stale one)."""
        build_py = self.get_finalized_command("build_py")
        targets = {ext.name: Path(self._get_inplace_equivalent(build_py, ext)[0])
                   for ext in self.extensions}
        shared = targets.get(f"kvsim.{NATIVE.BUILD_DIR}.{NATIVE.GROUP}__mypyc")
        stamp = shared.parent / NATIVE.STAMP_FILE if shared is not None else None
        for target in targets.values():
            target.parent.mkdir(parents=True, exist_ok=True)
        if stamp is not None:
            stamp.unlink(missing_ok=True)
        if not self.built:
            return
        super().copy_extensions_to_source()
        self.copy_file(self.built, str(stamp), level=self.verbose)


setup(ext_modules=_mypyc_extensions(), cmdclass={"build_ext": BuildCompiledEngine})
