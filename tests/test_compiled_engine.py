"""The compiled engine (kvsim/engine/native.py): the same results as the pure one, byte for
byte, and never a stale build.

* Every scenario and a set of fuzzed configurations (every engine, admission policy,
  scheduling policy, swap, prefix cache, batch budget; and the step-by-step snapshots) run in
  two fresh processes, one on the compiled engine and one with ``KVSIM_PURE=1``, and every
  table, counter and snapshot must hash the same. Skipped, saying why, when this checkout has
  no usable compiled build (``KVSIM_REQUIRE_COMPILED=1``, as CI sets it, fails instead).
* The build is used only while its stamp matches the sources: in a copy of the package, an
  edited engine module (or a module of a layer below) runs as Python, a missing extension or
  an unreadable stamp leaves the pure engine, ``KVSIM_PURE=1`` forces it and a wrong value is
  a one-line error. These run with or without a compiler (a fake build shows the finder would
  have loaded it).
* The check reads no file whose size and mtime are the stamp's, and hashes any other: an edit
  is caught even when it keeps the size, a ``touch`` keeps the build.
"""
from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from kvsim.engine import native

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kvsim"
REQUIRE_VAR = "KVSIM_REQUIRE_COMPILED"

# Run in a fresh process: one line per run, its digest; the first line says which engine ran.
_DIGESTS = r"""
import hashlib, random
import numpy as np
import kvsim
import kvsim.engine
from kvsim.engine.loop import build_engine
from kvsim.runs.scenarios import list_scenarios, run_scenario

def digest(res):
    h = hashlib.sha256()
    for name in ("requests", "timeline", "pauses", "events"):
        table = getattr(res, name)
        for col in table.columns:
            a = np.asarray(table[col])
            h.update(col.encode()); h.update(str(a.dtype).encode()); h.update(a.tobytes())
    h.update(repr(sorted(res.counters.items())).encode())
    h.update(repr(sorted(res.summary().items())).encode())
    return h.hexdigest()[:20]

print("compiled" if kvsim.engine.compiled() else "pure")
for name in list_scenarios():
    print(name, digest(run_scenario(name)))
rng = random.Random(20261203)
for i in range(60):
    size = rng.choice([1, 4, 16])
    longest = rng.choice([40, 120, 400])
    reqs = [kvsim.Request(round(rng.uniform(0, 3.0), 3), rng.randint(1, longest), rng.randint(1, 80),
                          rng.randint(0, 2)) for _ in range(rng.randint(5, 60))]
    wl = kvsim.Workload.from_requests(reqs)
    fit = -(-(longest + 80) // size)
    engine = rng.choice(["v1", "v0"])
    opts = dict(engine=engine, block_size=size, num_gpu_blocks=rng.randint(fit, fit * 6),
                admission=rng.choice(["optimistic", "guaranteed", "sglang", "max_utilization",
                                      "static_batch"]),
                max_num_seqs=rng.randint(1, 32), scheduling_policy=rng.choice(["fcfs", "priority"]),
                enable_prefix_caching=rng.random() < 0.5, check=True)
    if engine == "v0" and rng.random() < 0.5:
        opts["preemption_mode"] = "swap"
    if rng.random() < 0.3:
        opts["max_num_batched_tokens"] = rng.choice([64, 256, 2048])
    try:
        print(f"fuzz{i}", digest(kvsim.simulate(wl, model="llama-2-7b", gpu="a100-80gb", **opts)))
        if i % 4 == 0:
            snaps = []
            eng = build_engine(wl, "llama-2-7b", "a100-80gb", dict(opts, step_by_step=True))
            eng.run(lambda e: snaps.append((e.steps, e.snapshot())))
            print(f"snap{i}", hashlib.sha256(repr(snaps).encode()).hexdigest()[:20])
    except kvsim.KvsimError as exc:
        print(f"fuzz{i} refused: {exc}")
# Sliding-window models (the window frees; with the prefix cache, the block-by-block manager):
# multi-turn conversations, so that later turns hit the cache.
for i in range(12):
    wl = kvsim.Workload.closed_loop(users=rng.randint(1, 4), duration_s=rng.choice([4, 8]),
                                    prompt=kvsim.Uniform(200, 6000), output=kvsim.Uniform(20, 400),
                                    turns=kvsim.Uniform(1, 3), followup=kvsim.Uniform(20, 200),
                                    seed=i)
    opts = dict(num_gpu_blocks=rng.choice([900, 3000]), enable_prefix_caching=i % 2 == 0,
                prefix_cache_retention_interval=rng.choice([0, "dense"]), check=True)
    model = rng.choice(["mistral-7b", "gemma-2-9b"])
    try:
        print(f"window{i}", digest(kvsim.simulate(wl, model=model, gpu="a100-80gb", **opts)))
    except kvsim.KvsimError as exc:
        print(f"window{i} refused: {exc}")
"""

_WHICH = r"""
import kvsim.engine, kvsim.engine.scheduler as s
print(kvsim.engine.compiled()); print(kvsim.engine.build_note()); print(s.__file__)
"""


def _python(code: str, *, pythonpath: Path = ROOT, pure: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("KVSIM_RUN_CACHE", native.PURE_VAR)}
    env["PYTHONPATH"] = str(pythonpath)
    if pure is not None:
        env[native.PURE_VAR] = pure
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=600, cwd=pythonpath)


def _usable_build() -> str | None:
    """Why this checkout's compiled build cannot be compared (``None``: it can)."""
    return native.stale_reason(PACKAGE)


def test_the_build_pins_the_developers_mypy():
    """pyproject's build requirement and requirements.txt name the same mypy (mypyc)."""
    build = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]
    pinned = [r for r in build["requires"] if r.startswith("mypy")]
    dev = [line.strip() for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
           if re.match(r"mypy==", line.strip())]
    assert pinned == dev and len(dev) == 1, (pinned, dev)


@pytest.mark.slow
def test_compiled_and_pure_engines_give_byte_identical_results():
    reason = _usable_build()
    if reason is not None:
        if os.environ.get(REQUIRE_VAR) == "1":
            pytest.fail(f"{REQUIRE_VAR}=1 but {reason}", pytrace=False)
        pytest.skip(f"no compiled engine to compare: {reason}")
    compiled = _python(_DIGESTS, pure="0")
    pure = _python(_DIGESTS, pure="1")
    assert compiled.returncode == 0, compiled.stderr[-2000:]
    assert pure.returncode == 0, pure.stderr[-2000:]
    c_lines, p_lines = compiled.stdout.splitlines(), pure.stdout.splitlines()
    assert (c_lines[0], p_lines[0]) == ("compiled", "pure")
    assert len(c_lines) > 60 and sum("refused" in line for line in c_lines) < len(c_lines) // 2
    assert c_lines[1:] == p_lines[1:]


def test_no_interpreted_engine_class_subclasses_a_compiled_one():
    """A compiled class refuses an interpreted subclass (a TypeError when it is built, on the
    compiled engine only): a module with such a class must be on the list too."""
    compiled = {f"kvsim.engine.{m}" for m in native.COMPILED_MODULES}
    names = [f"kvsim.engine.{p.relative_to(PACKAGE / 'engine').with_suffix('').as_posix().replace('/', '.')}"
             for p in sorted((PACKAGE / "engine").rglob("*.py")) if p.name != "__init__.py"]
    assert compiled <= set(names), sorted(compiled - set(names))
    wrong = []
    for name in sorted(set(names) - compiled):
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == name:
                wrong += [f"{name}.{cls.__name__} subclasses {base.__module__}.{base.__name__}"
                          for base in cls.__mro__[1:] if base.__module__ in compiled]
    assert wrong == []


# --- staleness: a copy of the package, with the real build or a fake one ------------------

def _copy_package(tmp_path: Path, *, with_build: bool) -> Path:
    dest = tmp_path / "tree"
    shutil.copytree(PACKAGE, dest / "kvsim", ignore=shutil.ignore_patterns(
        "__pycache__", "*.py[cod]", *(() if with_build else (native.BUILD_DIR,))))
    return dest


def _fake_build(tree: Path) -> None:
    """A stamp of the copy's sources and empty 'extensions': the finder would load them."""
    package = tree / "kvsim"
    shutil.rmtree(package / native.BUILD_DIR, ignore_errors=True)
    for module in (*native.COMPILED_MODULES, f"{native.GROUP}__mypyc"):
        path = native.extension_path(module, package)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    native.write_stamp(package / native.BUILD_DIR / native.STAMP_FILE, native.take_stamp(package))


def _which(tree: Path, pure: str | None = None) -> tuple[bool, str, str]:
    proc = _python(_WHICH, pythonpath=tree, pure=pure)
    assert proc.returncode == 0, proc.stderr[-2000:]
    is_compiled, note, file = proc.stdout.splitlines()
    return is_compiled == "True", note, file


def _edit(path: Path) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited after the build\n", encoding="utf-8")


def test_a_fresh_fake_build_would_be_loaded(tmp_path):
    """The control: with a matching stamp the finder takes the build (the empty file then
    fails to load, which proves it was chosen over the .py)."""
    tree = _copy_package(tmp_path, with_build=False)
    _fake_build(tree)
    proc = _python(_WHICH, pythonpath=tree)
    assert proc.returncode != 0
    assert native.BUILD_DIR in proc.stderr


@pytest.mark.parametrize("edited", ["engine/scheduler.py", "engine/blocks/pool.py",
                                    "engine/waiting.py", "model/memory.py", "units.py"])
def test_an_edited_source_runs_as_python_not_the_stale_build(tmp_path, edited):
    tree = _copy_package(tmp_path, with_build=False)
    _fake_build(tree)
    _edit(tree / "kvsim" / edited)
    is_compiled, note, file = _which(tree)
    assert not is_compiled
    assert f"stale (kvsim/{edited} changed" in note and "make compile" in note
    assert file == str(tree / "kvsim" / "engine" / "scheduler.py")


def test_a_new_source_file_makes_the_build_stale(tmp_path):
    tree = _copy_package(tmp_path, with_build=False)
    _fake_build(tree)
    (tree / "kvsim" / "engine" / "new_module.py").write_text("X = 1\n", encoding="utf-8")
    is_compiled, note, _ = _which(tree)
    assert not is_compiled and "kvsim/engine/new_module.py" in note


def test_a_missing_extension_or_unreadable_stamp_leaves_the_pure_engine(tmp_path):
    tree = _copy_package(tmp_path, with_build=False)
    _fake_build(tree)
    native.extension_path("blocks.manager", tree / "kvsim").unlink()
    is_compiled, note, _ = _which(tree)
    assert not is_compiled and "lacks blocks.manager" in note
    (tree / "kvsim" / native.BUILD_DIR / native.STAMP_FILE).write_text("{not json", encoding="utf-8")
    is_compiled, note, _ = _which(tree)
    assert not is_compiled and "unreadable" in note


def test_no_build_and_kvsim_pure_give_the_pure_engine(tmp_path):
    tree = _copy_package(tmp_path, with_build=False)
    assert _which(tree)[:2] == (False, "pure Python: no compiled build (`make compile`, or pip "
                                       "install on a machine with a C compiler)")
    _fake_build(tree)
    assert _which(tree, pure="1")[:2] == (False, f"pure Python ({native.PURE_VAR}=1)")


def test_a_wrong_kvsim_pure_value_is_a_one_line_error(tmp_path):
    proc = _python("import kvsim.engine", pure="yes")
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last == ("kvsim.errors.KvsimError: KVSIM_PURE='yes': expected 1 (the pure-Python engine) "
                    "or 0 or unset (the compiled engine when it is built)")


def test_the_real_build_is_used_until_a_source_changes(tmp_path):
    """With this checkout's own build: the copy runs it, then runs Python once a module changes."""
    reason = _usable_build()
    if reason is not None:
        pytest.skip(f"no compiled engine in this checkout: {reason}")
    tree = _copy_package(tmp_path, with_build=True)
    is_compiled, _, file = _which(tree)
    assert is_compiled and file.endswith(native.extension_suffix())
    _edit(tree / "kvsim" / "engine" / "costs.py")
    is_compiled, note, file = _which(tree)
    assert not is_compiled and "kvsim/engine/costs.py" in note and file.endswith("scheduler.py")


# --- the stamp's fast path: size and mtime vouch for the bytes, anything else is hashed ----

def _settle(package: Path) -> None:
    """Every source file's mtime in 2023, long settled: the stamp records its size and mtime."""
    past = (1_700_000_000_000_000_000, 1_700_000_000_000_000_000)
    for path in package.rglob("*.py"):
        os.utime(path, ns=past)


def _hashed_by_the_check(package: Path, monkeypatch) -> tuple[str | None, list[str]]:
    """``stale_reason`` of ``package``, and the files it hashed to find it."""
    hashed: list[str] = []
    digest = native._digest

    def counting(path: str) -> str:
        hashed.append(Path(path).relative_to(package).as_posix())
        return digest(path)

    monkeypatch.setattr(native, "_digest", counting)
    return native.stale_reason(package), hashed


def test_a_fresh_build_is_checked_without_hashing_and_an_edit_is_still_caught(tmp_path, monkeypatch):
    tree = _copy_package(tmp_path, with_build=False)
    package = tree / "kvsim"
    _settle(package)
    _fake_build(tree)
    assert _hashed_by_the_check(package, monkeypatch) == (None, [])

    scheduler = package / "engine" / "scheduler.py"
    os.utime(scheduler)                         # same bytes, a new mtime: hashed, still fresh
    assert _hashed_by_the_check(package, monkeypatch) == (None, ["engine/scheduler.py"])

    # The same size, another byte, a new mtime: the digest catches it.
    text = scheduler.read_text(encoding="utf-8")
    scheduler.write_text(text[:-1] + ("#" if text[-1] != "#" else "\n"), encoding="utf-8")
    assert scheduler.stat().st_size == len(text.encode())
    reason, hashed = _hashed_by_the_check(package, monkeypatch)
    assert "stale (kvsim/engine/scheduler.py changed" in reason and hashed == ["engine/scheduler.py"]

    _edit(package / "model" / "memory.py")      # a new size and mtime
    reason, _ = _hashed_by_the_check(package, monkeypatch)
    assert "stale (kvsim/engine/scheduler.py and 1 more changed" in reason


def test_a_file_changed_just_before_the_stamp_is_always_hashed(tmp_path, monkeypatch):
    """Its mtime could survive an edit within the file system's timestamp granularity, so
    the stamp does not let its size and mtime vouch for it."""
    tree = _copy_package(tmp_path, with_build=False)
    package = tree / "kvsim"
    _settle(package)
    os.utime(package / "units.py")              # now: not settled when the stamp is taken
    _fake_build(tree)
    stamp = json.loads((package / native.BUILD_DIR / native.STAMP_FILE).read_text(encoding="utf-8"))
    assert "units.py" in stamp["sources"] and "units.py" not in stamp["stats"]
    assert _hashed_by_the_check(package, monkeypatch) == (None, ["units.py"])


def test_a_stamp_without_sizes_and_mtimes_hashes_every_file(tmp_path, monkeypatch):
    """A build stamped before they were recorded stays usable: every file is hashed."""
    tree = _copy_package(tmp_path, with_build=False)
    package = tree / "kvsim"
    _fake_build(tree)
    stamp_path = package / native.BUILD_DIR / native.STAMP_FILE
    stamp = json.loads(stamp_path.read_text(encoding="utf-8"))
    del stamp["stats"]
    stamp_path.write_text(json.dumps(stamp), encoding="utf-8")
    reason, hashed = _hashed_by_the_check(package, monkeypatch)
    assert reason is None and sorted(hashed) == sorted(stamp["sources"])
