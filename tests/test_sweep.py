"""kvsim.sweep: a grid of settings times seeds, the same table on any executor."""
from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import Executor, Future, ProcessPoolExecutor

import numpy as np
import pytest

import kvsim
from kvsim.engine.result import SUMMARY_KEYS
from kvsim.runs.sweeps import _worker_count

#: Every run here is made, none read back from the run cache: these tests are about running.
pytestmark = pytest.mark.usefixtures("no_run_cache")

GRID = {"gpu_memory_utilization": [0.55, 0.60], "output_mean": [250, 600]}
SHORT = {"scenario": "belgavi", "duration_s": 120.0, "warmup_s": 30.0}


def _same(a, b) -> bool:
    return a.columns == b.columns and all(
        np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f") for k in a.columns)


@pytest.fixture(scope="module")
def serial():
    return kvsim.sweep(SHORT, GRID, seeds=[0, 1])


def test_one_row_per_point_and_seed_in_grid_order(serial):
    assert serial.num_rows == 2 * 2 * 2
    assert serial.columns == ["gpu_memory_utilization", "output_mean", "seed", *SUMMARY_KEYS]
    assert serial["gpu_memory_utilization"].tolist() == [0.55] * 4 + [0.60] * 4      # first key slowest
    assert serial["output_mean"].tolist() == [250, 250, 600, 600] * 2
    assert serial["seed"].tolist() == [0, 1] * 4


def test_each_row_is_the_run_it_names(serial):
    i = 5                                                # 0.60, 250, seed 1
    row = {k: serial[k][i] for k in ("gpu_memory_utilization", "output_mean", "seed")}
    assert row == {"gpu_memory_utilization": 0.60, "output_mean": 250, "seed": 1}
    one = kvsim.run_scenario("belgavi", duration_s=120.0, warmup_s=30.0, seed=1,
                             gpu_memory_utilization=0.60, output_mean=250).summary()
    for key in SUMMARY_KEYS:
        got, want = serial[key][i], one[key]
        assert got == want or (isinstance(want, float) and np.isnan(want) and np.isnan(got)), key


def test_a_process_pool_gives_the_same_table(serial):
    with ProcessPoolExecutor(2) as pool:
        assert _same(kvsim.sweep(SHORT, GRID, seeds=[0, 1], executor=pool), serial)


class _Backwards(Executor):
    """Runs each task at submit time but hands the futures back in reverse order."""

    def __init__(self):
        self.futures = []

    def submit(self, fn, *args):
        f = Future()
        f.set_result(fn(*args))
        self.futures.append(f)
        return f


def test_the_order_runs_finish_in_does_not_matter(serial, monkeypatch):
    import concurrent.futures as cf

    real = cf.as_completed
    monkeypatch.setattr(cf, "as_completed", lambda fs: list(reversed(list(real(fs)))))
    assert _same(kvsim.sweep(SHORT, GRID, seeds=[0, 1], executor=_Backwards()), serial)


def test_a_dask_cluster_gives_the_same_table(serial):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        executor = client.get_executor()
        assert _worker_count(executor) == 2              # the chunk size's cap knows the cluster
        table = kvsim.sweep(SHORT, GRID, seeds=[0, 1], executor=executor)
        batched = kvsim.sweep(SHORT, GRID, seeds=[0, 1], executor=executor, chunk_size=3)
    assert _same(table, serial) and _same(batched, serial)


def test_a_simulate_style_base_sweeps_engine_options():
    w = kvsim.Workload.poisson(2.0, 60.0, prompt=850, output=250, seed=3)
    t = kvsim.sweep({"workload": w, "model": "llama-2-7b", "gpu": "a40-48gb",
                     "gpu_memory_utilization": 0.6}, {"max_num_seqs": [8, 64]})
    assert t["max_num_seqs"].tolist() == [8, 64] and "seed" not in t.columns
    assert t["mean_running"][0] <= 8 < t["mean_running"][1]      # the cap binds at 8, not at 64
    assert t["ttft_p95_s"][0] > t["ttft_p95_s"][1]                 # and queues what it keeps out


@pytest.mark.parametrize("base, grid, seeds, words", [
    ("belgavi", {"nope": [1]}, None, "'nope' is not known"),
    ("belgavi", {"output_mean": []}, None, "is empty"),
    ("belgavi", {"output_mean": "250"}, None, "expected a list"),
    ("belgavi", [("output_mean", [1])], None, "expected a mapping"),
    ("belgavi", {"seed": [1, 2]}, None, "pass seeds="),
    ("belgavi", None, [1, 1], "repeat a seed"),
    ("belgavi", None, [-1], "seed"),
    (42, None, None, "expected a scenario name"),
    ({"model": "llama-2-7b"}, None, None, "workload"),
])
def test_bad_sweeps_are_one_line_errors(base, grid, seeds, words):
    with pytest.raises(kvsim.KvsimError, match=words) as info:
        kvsim.sweep(base, grid, seeds=seeds)
    assert "\n" not in str(info.value)


def test_an_object_that_is_not_an_executor_is_refused():
    with pytest.raises(kvsim.KvsimError, match="submit"):
        kvsim.sweep(SHORT, None, executor=object())


def test_progress_on_a_terminal(capsys):
    kvsim.sweep(SHORT, {"output_mean": [250, 600]}, progress=True)
    err = capsys.readouterr().err
    assert "2/2 runs" in err and err.endswith("\n")
    kvsim.sweep(SHORT, {"output_mean": [250, 600]}, progress=False)
    assert capsys.readouterr().err == ""


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "kvsim", *args], capture_output=True, text=True,
                          timeout=300)


def test_cli_sweep_prints_rows_and_agrees_with_workers():
    args = ["sweep", "--scenario", "belgavi", "--set", "duration_s=60", "--set", "warmup_s=0",
            "--grid", "output_mean=250,600", "--seeds", "0-1"]
    text = _cli(*args)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split()[:3] == ["output_mean", "seed", "preemptions_per_1k"] and len(lines) == 5
    one, two = _cli(*args, "--json"), _cli(*args, "--json", "--workers", "2")
    assert one.returncode == two.returncode == 0 and json.loads(one.stdout) == json.loads(two.stdout)
    assert len(json.loads(one.stdout)) == 4
    csv = _cli(*args, "--csv")
    assert csv.stdout.splitlines()[0].startswith("output_mean,seed,requests_arrived")


@pytest.mark.parametrize("args, words", [
    (["--grid", "output_mean"], "--grid 'output_mean' is malformed"),
    (["--seeds", "a-b"], "--seeds 'a-b' is malformed"),
    (["--workers", "0"], "workers"),
    (["--grid", "output_mean=1", "--set", "output_mean=2"], "both given"),
])
def test_cli_sweep_bad_input_is_one_line(args, words):
    r = _cli("sweep", "--scenario", "belgavi", *args)
    assert r.returncode == 2 and words in r.stderr and r.stderr.count("\n") == 1


def test_importing_the_module_never_hides_the_function():
    """The module is ``kvsim.runs.sweeps``: a submodule named ``sweep`` would rebind
    ``kvsim.sweep`` to itself once imported (in a pool's worker, say)."""
    import importlib

    importlib.import_module("kvsim.runs.sweeps")
    assert callable(kvsim.sweep) and kvsim.sweep is importlib.import_module("kvsim.runs.sweeps").sweep
