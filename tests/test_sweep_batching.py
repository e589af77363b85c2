"""kvsim.sweep's batching: runs travel in chunks, sized from a measured run time.

No test here times anything for real: the clock the sweep measures with is
replaced by a fake one, so "a slow run" and "a fast run" are exactly what the
test says they are (speed itself is measured in benchmarks/run.py).
"""
from __future__ import annotations

import itertools
import json
import subprocess
import sys
from concurrent.futures import Executor, Future, ProcessPoolExecutor

import pytest

import kvsim
from kvsim.engine.result import SUMMARY_KEYS
from kvsim.runs import sweeps

#: Every run here is made, none read back from the run cache: these tests count runs per task.
pytestmark = pytest.mark.usefixtures("no_run_cache")

# Short runs: 8 (point, seed) pairs, so a chunk of 3 leaves a short last chunk (3, 3, 2).
BASE = {"scenario": "belgavi", "duration_s": 60.0, "warmup_s": 0.0}
GRID = {"gpu_memory_utilization": [0.55, 0.60], "output_mean": [250, 600]}
SEEDS = [0, 1]
RUNS = 8


def _identical(a, b) -> bool:
    """Every column the same name, dtype and bytes (NaN included), in the same order."""
    return a.columns == b.columns and all(
        a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes()
        for k in a.columns)


class _Counting(Executor):
    """Runs each task at submit time, here, and records how many runs each task held."""

    def __init__(self, workers: int | None = None):
        if workers is not None:
            self._max_workers = workers      # as ProcessPoolExecutor keeps it
        self.chunks: list[int] = []

    def submit(self, fn, *args):
        assert fn is sweeps._run_chunk and args[0] is sweeps._run and len(args) == 2
        self.chunks.append(len(args[1]))
        f = Future()
        f.set_result(fn(*args))
        return f


class _FakeClock:
    """A clock that moves on by ``step`` seconds each time it is read (powers of two: exact)."""

    def __init__(self, step: float):
        self.step, self.reads = step, 0

    def __call__(self) -> float:
        self.reads += 1
        return self.reads * self.step


def _no_clock():
    raise AssertionError("the sweep timed a run although chunk_size was given")


@pytest.fixture(scope="module")
def serial():
    return kvsim.sweep(BASE, GRID, seeds=SEEDS)


def test_the_serial_table_is_the_one_every_run_gives(serial):
    assert serial.num_rows == RUNS
    assert serial.columns == ["gpu_memory_utilization", "output_mean", "seed", *SUMMARY_KEYS]


@pytest.mark.parametrize("chunk_size", [1, 3, None, 1000])
def test_the_table_is_byte_identical_whatever_the_chunk_size(serial, chunk_size):
    here = kvsim.sweep(BASE, GRID, seeds=SEEDS, chunk_size=chunk_size)
    assert _identical(here, serial)
    with ProcessPoolExecutor(2) as pool:
        there = kvsim.sweep(BASE, GRID, seeds=SEEDS, executor=pool, chunk_size=chunk_size)
    assert _identical(there, serial)


def test_chunks_come_back_in_any_order_and_rows_stay_in_grid_order(serial, monkeypatch):
    import concurrent.futures as cf

    real = cf.as_completed
    monkeypatch.setattr(cf, "as_completed", lambda fs: list(reversed(list(real(fs)))))
    assert _identical(kvsim.sweep(BASE, GRID, seeds=SEEDS, executor=_Counting(), chunk_size=3),
                      serial)


@pytest.mark.parametrize("chunk_size, chunks", [(1, [1] * 8), (3, [3, 3, 2]), (8, [8]),
                                                 (1000, [8])])
def test_an_explicit_chunk_size_is_honoured_and_nothing_is_timed(serial, monkeypatch, chunk_size,
                                                                  chunks):
    monkeypatch.setattr(sweeps, "_clock", _no_clock)
    pool = _Counting(workers=2)
    table = kvsim.sweep(BASE, GRID, seeds=SEEDS, executor=pool, chunk_size=chunk_size)
    assert pool.chunks == chunks
    assert _identical(table, serial)


def test_a_slow_run_gives_chunks_of_one(serial, monkeypatch):
    monkeypatch.setattr(sweeps, "MEASURE_S", 0.05)
    monkeypatch.setattr(sweeps, "TASK_TARGET_S", 0.3)
    clock = _FakeClock(step=1.0)                 # every run "takes" 1 s: far over the target
    monkeypatch.setattr(sweeps, "_clock", clock)
    pool = _Counting(workers=1)
    table = kvsim.sweep(BASE, GRID, seeds=SEEDS, executor=pool)
    # One run timed here (1 s > MEASURE_S), kept; the 7 others one per task.
    assert clock.reads == 2 and pool.chunks == [1] * 7
    assert _identical(table, serial)


def test_a_fast_run_gives_chunks_of_target_over_run_time(monkeypatch):
    for name, value in [("MEASURE_RUNS", 5), ("MEASURE_S", 0.05), ("TASKS_PER_WORKER", 4),
                        ("FALLBACK_WORKERS", 8), ("SCHEDULER_COST_S", 0.0)]:
        monkeypatch.setattr(sweeps, name, value)
    ms = 2.0**-10                                # about a millisecond, exact in binary
    clock = _FakeClock(step=ms)                  # every run "takes" 1 ms
    monkeypatch.setattr(sweeps, "_clock", clock)
    monkeypatch.setattr(sweeps, "TASK_TARGET_S", 2 * ms)     # so: 2 runs per task
    pool = _Counting(workers=1)
    grid = {"output_mean": [200, 250, 300, 350, 400, 450, 500, 600]}
    table = kvsim.sweep(BASE, grid, seeds=[0, 1, 2], executor=pool)       # 24 runs
    # 5 ms < MEASURE_S: the first 5 runs are timed here (6 clock reads); 19 go out, 2 per task.
    assert clock.reads == 6
    assert pool.chunks == [2] * 9 + [1]
    assert table.num_rows == 24
    # A longer target, longer chunks: up to the cap that leaves the one worker 4 tasks.
    monkeypatch.setattr(sweeps, "TASK_TARGET_S", 1.0)
    monkeypatch.setattr(sweeps, "_clock", _FakeClock(step=ms))
    pool = _Counting(workers=1)
    assert _identical(kvsim.sweep(BASE, grid, seeds=[0, 1, 2], executor=pool), table)
    assert pool.chunks == [4, 4, 4, 4, 3]        # 1 s / 1 ms = 1024, capped at 19 // (4 * 1) = 4
    # The same with no worker count: 8 workers assumed, 19 // 32 = 0, so chunks of 1.
    monkeypatch.setattr(sweeps, "_clock", _FakeClock(step=ms))
    pool = _Counting(workers=None)
    kvsim.sweep(BASE, grid, seeds=[0, 1, 2], executor=pool)
    assert pool.chunks == [1] * 19


@pytest.mark.parametrize("per_run_s, runs, workers, chunk", [
    (1.0, 100, 2, 1),          # a run longer than the target: one per task
    (0.024, 40, 2, 5),         # 12 by time, 40 // (4 * 2) = 5 by balance
    (0.024, 1000, 2, 12),      # 0.3 s / 24 ms = 12
    (0.024, 1000, 64, 16),     # balance says 3, the scheduler 80: one task per worker
    (0.025, 1000, 2, 12),      # 0.3 / 0.025 is 11.999... in floating point: still 12
    (0.002, 100_000, None, 150),  # 150 by time; no worker count: 100,000 // (4 * 8) = 3125
    (0.002, 1000, None, 120),  # balance 31, but 8 * 15 ms / 0.5 / 2 ms = 120 for the scheduler
    (0.002, 100, None, 13),    # the same, short of one task per (assumed) worker: 100 / 8
    (0.0, 40, 1, 10),          # a run too quick to measure: the balance cap decides
    (0.5, 3, 4, 1),            # fewer runs than workers: one each
    (0.024, 100_000, 64, 80),  # 64 workers: a task lasts 64 * 15 ms / 0.5 = 1.92 s, 80 runs
    (0.024, 100_000, 10, 13),  # 10 workers: 0.3 s / 24 ms = 12.5, rounded up for the scheduler
    (0.024, 100_000, 20, 25),  # 20 workers: 0.6 s
    (0.024, 100_000, 5, 12),   # 5 workers: the target decides
])
def test_chunk_size_for(per_run_s, runs, workers, chunk, monkeypatch):
    monkeypatch.setattr(sweeps, "TASK_TARGET_S", 0.3)
    monkeypatch.setattr(sweeps, "TASKS_PER_WORKER", 4)
    monkeypatch.setattr(sweeps, "FALLBACK_WORKERS", 8)
    monkeypatch.setattr(sweeps, "SCHEDULER_COST_S", 0.015)
    monkeypatch.setattr(sweeps, "SCHEDULER_LOAD", 0.5)
    assert sweeps.chunk_size_for(per_run_s, runs, workers) == chunk


@pytest.mark.parametrize("runs, chunk, workers, sizes", [
    (40, 12, 2, [10] * 4),               # 4 tasks already a multiple of 2: evened out (not 12,12,12,4)
    (50, 4, 3, [4] * 5 + [3] * 10),      # 13 tasks -> 15: each worker 5 tasks, 16-17 runs
    (19, 4, 1, [4, 4, 4, 4, 3]),         # one worker: the count stays, the sizes even out
    (19, 2, 1, [2] * 9 + [1]),
    (7, 1, 4, [1] * 7),                  # one run a task, however many workers
    (0, 5, 2, []),                       # every run made here while timing
    (3, 2, 4, [2, 1]),                   # fewer tasks than workers: no rounding
    (100, 30, None, [25] * 4),           # workers unknown: the count from the chunk alone
    (10, 3, 3, [2] * 4 + [1] * 2),       # 4 tasks -> 6: each worker 2 tasks, 3-4 runs
])
def test_balanced_chunks(runs, chunk, workers, sizes):
    got = sweeps.balanced_chunks(runs, chunk, workers)
    assert got == sizes and sum(got) == runs and max(got, default=0) - min(got, default=0) <= 1
    if workers and len(got) > workers:
        assert len(got) % workers == 0 or len(got) == runs


def test_automatic_chunks_give_every_worker_the_same_number_of_tasks(serial, monkeypatch):
    for name, value in [("MEASURE_RUNS", 1), ("TASKS_PER_WORKER", 1), ("SCHEDULER_COST_S", 0.0)]:
        monkeypatch.setattr(sweeps, name, value)
    monkeypatch.setattr(sweeps, "_clock", _FakeClock(step=2.0**-10))
    monkeypatch.setattr(sweeps, "TASK_TARGET_S", 2 * 2.0**-10)   # 2 runs a task by time
    pool = _Counting(workers=3)
    table = kvsim.sweep(BASE, GRID, seeds=SEEDS, executor=pool)   # 8 runs: 1 timed here, 7 out
    # Chunks of 2 would be 4 tasks (2, 2, 2, 1: one worker twice as long); 6 tasks: 2 each.
    assert pool.chunks == [2, 1, 1, 1, 1, 1] and _identical(table, serial)


def test_a_process_pool_and_a_wrapper_say_how_many_workers():
    with ProcessPoolExecutor(3) as pool:
        assert sweeps._worker_count(pool) == 3
    assert sweeps._worker_count(_Counting()) is None
    assert sweeps._worker_count(object()) is None


@pytest.mark.parametrize("bad, words", [
    (0, "chunk_size=0 is out of range: expected an integer [1, 1000000]"),
    (-3, "chunk_size=-3 is out of range"),
    (10**7, "chunk_size=10000000 is out of range"),
    (2.5, "chunk_size=2.5 is not a whole number: expected an integer [1, 1000000]"),
    ("many", "chunk_size='many' is not a whole number"),
    (True, "chunk_size=True is not a whole number"),
])
@pytest.mark.parametrize("executor", [None, "counting"])
def test_a_bad_chunk_size_is_a_one_line_error_before_any_run(bad, words, executor, monkeypatch):
    monkeypatch.setattr(sweeps, "_run", lambda task: pytest.fail("a run started"))
    pool = _Counting() if executor else None
    with pytest.raises(kvsim.KvsimError) as info:
        kvsim.sweep(BASE, GRID, seeds=SEEDS, executor=pool, chunk_size=bad)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_progress_advances_by_chunk(capsys):
    kvsim.sweep(BASE, GRID, seeds=SEEDS, executor=_Counting(), chunk_size=3, progress=True)
    err = capsys.readouterr().err
    done = [int(s.split()[1].split("/")[0]) for s in err.strip().split("\r") if s]
    steps = sorted(b - a for a, b in itertools.pairwise([0, *done]))     # chunks finish in any order
    assert steps == [2, 3, 3] and done[-1] == 8


def test_progress_counts_the_runs_timed_here_one_by_one(capsys, monkeypatch):
    monkeypatch.setattr(sweeps, "_clock", _FakeClock(step=1.0))
    kvsim.sweep(BASE, GRID, seeds=SEEDS, executor=_Counting(workers=1), progress=True)
    err = capsys.readouterr().err
    assert [s.split()[1] for s in err.strip().split("\r") if s] == [f"{i}/8" for i in range(1, 9)]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "kvsim", *args], capture_output=True, text=True,
                          timeout=300)


def test_cli_chunk_size_gives_the_same_rows():
    args = ["sweep", "--scenario", "belgavi", "--set", "duration_s=60", "--set", "warmup_s=0",
            "--grid", "output_mean=250,600", "--seeds", "0-2", "--json"]
    one = _cli(*args)
    three = _cli(*args, "--workers", "2", "--chunk-size", "4")
    assert one.returncode == three.returncode == 0, three.stderr
    assert json.loads(one.stdout) == json.loads(three.stdout) and len(json.loads(one.stdout)) == 6


def test_cli_bad_chunk_size_is_one_line():
    r = _cli("sweep", "--scenario", "belgavi", "--workers", "2", "--chunk-size", "0")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "chunk_size=0 is out of range: expected an integer [1, 1000000]" in r.stderr
