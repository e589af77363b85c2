"""The run cache (kvsim/runs/summary_cache.py): a sweep reads back exactly what it would run.

What it must never do is give a different table: the cached sweep is compared
with an uncached one column by column, in this process and in a fresh one;
the key must change with every setting, the seed and the engine's code (and
with numpy's CPU features turned off, so the CPU-independence check runs its
runs); and what the key cannot see (a workload object, a file path) is never
cached.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kvsim
from kvsim.errors import KvsimError
from kvsim.runs import summary_cache, sweeps
from kvsim.runs.summary_cache import CACHE_VAR, KEEP_FINGERPRINTS, SummaryCache, fingerprint, run_key

ROOT = Path(__file__).resolve().parents[1]
SHORT = {"scenario": "belgavi", "duration_s": 20.0, "warmup_s": 10.0}
GRID = {"gpu_memory_utilization": [0.55, 0.6]}


def same(a, b) -> bool:
    return a.columns == b.columns and all(
        a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f")
        for k in a.columns)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "runs"
    monkeypatch.setenv(CACHE_VAR, str(folder))
    return folder


def _files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.json"))


def test_a_cached_sweep_is_the_uncached_table(cache_dir, monkeypatch):
    fresh = kvsim.sweep(SHORT, GRID, seeds=[0, 1], cache=False)
    assert not cache_dir.exists()                        # cache=False neither reads nor writes
    first = kvsim.sweep(SHORT, GRID, seeds=[0, 1])
    assert len(_files(cache_dir)) == 4                   # one file per run
    assert same(first, fresh)

    def no_runs(task):
        raise AssertionError(f"ran {task} instead of reading it back")

    monkeypatch.setattr(sweeps, "_run", no_runs)
    again = kvsim.sweep(SHORT, GRID, seeds=[0, 1])
    assert same(again, fresh)
    # a wider grid runs only the new point, and keeps the table's order
    monkeypatch.undo()
    monkeypatch.setenv(CACHE_VAR, str(cache_dir))
    wider = kvsim.sweep(SHORT, {"gpu_memory_utilization": [0.5, 0.55, 0.6]}, seeds=[0, 1])
    assert len(_files(cache_dir)) == 6
    assert same(wider, kvsim.sweep(SHORT, {"gpu_memory_utilization": [0.5, 0.55, 0.6]},
                                   seeds=[0, 1], cache=False))


def test_another_process_reads_the_same_bytes(cache_dir):
    kvsim.sweep(SHORT, GRID, seeds=[0])
    script = ("import json, kvsim\n"
              "t = kvsim.sweep({'scenario': 'belgavi', 'duration_s': 20.0, 'warmup_s': 10.0},\n"
              "                {'gpu_memory_utilization': [0.55, 0.6]}, seeds=[0])\n"
              "print(json.dumps({k: t[k].tolist() for k in t.columns}))")
    env = dict(os.environ, **{CACHE_VAR: str(cache_dir)})
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=300)
    fresh = kvsim.sweep(SHORT, GRID, seeds=[0], cache=False)
    assert json.loads(out.stdout) == json.loads(json.dumps({k: fresh[k].tolist() for k in fresh.columns}))
    # and what is on disk is the summary itself, exactly
    stored = [json.loads(p.read_text()) for p in _files(cache_dir)]
    runs = [kvsim.run_scenario("belgavi", duration_s=20.0, warmup_s=10.0, seed=0,
                               gpu_memory_utilization=u).summary() for u in (0.55, 0.6)]
    assert sorted(map(json.dumps, stored)) == sorted(map(json.dumps, runs))


def test_every_setting_and_the_seed_are_in_the_key():
    base = run_key("belgavi", {"gpu_memory_utilization": 0.6, "duration_s": 20.0}, 0)
    assert base == run_key("belgavi", {"duration_s": 20.0, "gpu_memory_utilization": 0.6}, 0)
    assert base == run_key("belgavi", {"gpu_memory_utilization": np.float64(0.6),
                                       "duration_s": 20.0}, 0)
    others = [run_key("belgavi", {"gpu_memory_utilization": 0.6, "duration_s": 20.0}, 1),
              run_key("belgavi-long", {"gpu_memory_utilization": 0.6, "duration_s": 20.0}, 0),
              run_key("belgavi", {"gpu_memory_utilization": 0.61, "duration_s": 20.0}, 0),
              run_key("belgavi", {"gpu_memory_utilization": 0.6, "duration_s": 20}, 0),
              run_key("belgavi", {"gpu_memory_utilization": 0.6}, 0),
              run_key("belgavi", {"gpu_memory_utilization": 0.6, "duration_s": 20.0,
                                  "max_tokens": None}, 0)]
    assert len({base, *others}) == 1 + len(others)


def test_what_the_key_cannot_see_is_never_cached(cache_dir, tmp_path):
    config = tmp_path / "config.json"
    config.write_text("{}")
    assert run_key("belgavi", {"model": str(config)}, 0) is None
    assert run_key("belgavi", {"model": "models/llama"}, 0) is None
    assert run_key("belgavi", {"workload": kvsim.Workload.poisson(1.0, 10.0, prompt=10, output=5,
                                                                  seed=0)}, 0) is None
    # a simulate-style base (a workload object) sweeps as before, and stores nothing
    base = {"workload": kvsim.Workload.poisson(1.0, 10.0, prompt=100, output=20, seed=0),
            "model": "llama-2-7b", "gpu": "a40-48gb"}
    table = kvsim.sweep(base, {"gpu_memory_utilization": [0.6]})
    assert table.num_rows == 1 and not cache_dir.exists()


def _copy_of_kvsim(tmp_path: Path) -> Path:
    copy = tmp_path / "kvsim"
    shutil.copytree(Path(kvsim.__file__).parent, copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_the_fingerprint_follows_the_engines_code_and_only_it(tmp_path, monkeypatch):
    copy = _copy_of_kvsim(tmp_path)
    assert fingerprint(copy) == fingerprint()            # the same bytes, the same fingerprint

    def after(edit: str) -> str:
        summary_cache._fingerprints.clear()
        path = copy / edit
        path.write_bytes(path.read_bytes() + b"\n# an edit\n")
        return fingerprint(copy)

    seen = {fingerprint(copy)}
    for edit in ("engine/costs.py", "traffic/workload.py", "model/hardware.py", "runs/scenarios.py",
                 "errors.py"):
        now = after(edit)
        assert now not in seen, f"an edit to kvsim/{edit} left the fingerprint as it was"
        seen.add(now)
    unchanged = fingerprint(copy)
    for edit in ("book/charts/theme.py", "lab/missions.py", "observe/metrics.py", "cli/__init__.py"):
        assert after(edit) == unchanged, f"an edit to kvsim/{edit} (above the runs) changed it"
    summary_cache._fingerprints.clear()
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", "AVX512F")
    assert fingerprint(copy) != unchanged                # SIMD off: its own runs


def test_a_damaged_entry_is_run_again_and_replaced(cache_dir):
    first = kvsim.sweep(SHORT, None, seeds=[3])
    (entry,) = _files(cache_dir)
    entry.write_text('{"requests_arrived": 1')           # cut short
    again = kvsim.sweep(SHORT, None, seeds=[3])
    assert same(again, first)
    assert json.loads(entry.read_text())["requests_arrived"] == int(first["requests_arrived"][0])


def test_old_fingerprints_are_pruned(cache_dir):
    cache_dir.mkdir()
    old = []
    for i in range(KEEP_FINGERPRINTS + 2):
        folder = cache_dir / f"{i:032x}"
        folder.mkdir()
        os.utime(folder, (1_000_000 + i, 1_000_000 + i))
        old.append(folder)
    mine = cache_dir / "not-a-fingerprint"
    mine.mkdir()
    kvsim.sweep(SHORT, None, seeds=[0])
    kept = sorted(p.name for p in cache_dir.iterdir())
    assert SummaryCache(cache_dir).folder.name in kept
    assert [p.name for p in old if p.name in kept] == [p.name for p in old[-(KEEP_FINGERPRINTS - 1):]]
    assert mine.name in kept                              # nothing of anyone else's is touched


def test_a_cache_that_cannot_be_written_only_costs_the_runs(cache_dir):
    """A file (someone else's) where the fingerprint's folder would go: the sweep runs, the cache
    is skipped, and the file is left as it was."""
    cache_dir.mkdir()
    blocker = SummaryCache(cache_dir).folder
    blocker.write_text("not kvsim's")
    assert same(kvsim.sweep(SHORT, None, seeds=[0]), kvsim.sweep(SHORT, None, seeds=[0], cache=False))
    assert blocker.read_text() == "not kvsim's"
    assert sorted(p.name for p in cache_dir.iterdir()) == [blocker.name]


@pytest.mark.parametrize("setup, kwargs, words", [
    ("file", {}, [CACHE_VAR, "is not a directory"]),
    ("unset", {"cache": True}, ["cache=True", CACHE_VAR]),
    ("unset", {"cache": "yes"}, ["cache = 'yes'", "None, True or False"]),
])
def test_bad_cache_settings_are_one_line_errors(tmp_path, monkeypatch, setup, kwargs, words):
    monkeypatch.delenv(CACHE_VAR, raising=False)
    if setup == "file":
        path = tmp_path / "a-file"
        path.write_text("mine")
        monkeypatch.setenv(CACHE_VAR, str(path))
    with pytest.raises(KvsimError) as info:
        kvsim.sweep(SHORT, None, seeds=[0], **kwargs)
    message = str(info.value)
    assert "\n" not in message and all(w in message for w in words), message
    if setup == "file":
        assert path.read_text() == "mine"
