"""kvsim speed benchmarks: medians and ratios, never pass/fail.

    python benchmarks/run.py            # or: make bench
    python benchmarks/run.py --quick    # fewer repeats
    python benchmarks/run.py --dask     # only kvsim.sweep on a Dask LocalCluster (~30 s)
    python benchmarks/run.py --plan     # only kvsim.plan on a Dask LocalCluster, and the costing
                                        # of a 10^4-configuration study (~30 s)
    python benchmarks/run.py --exporter # only kvsim exporter under load (~10 s)
    python benchmarks/run.py --loop     # only the test loop: make unit's CPU time (~1 min)
    python benchmarks/run.py --tier     # only the host tiers on the long-prompt storm (~10 s)
    python benchmarks/run.py --goals [--against REV|none]  # only the engine's goals (goals.py)
    python benchmarks/run.py --peer     # only kvsim against another simulator, sched-sim (peer.py)

Goals (issue 33; goals.py measures them first, in calibration units, met or not met):
* the 2-minute Belgavi workload (cold server, 1.5 req/s)  <= 3 ms
* the one-hour Azure conversation trace on h100-80gb      <= 0.4 s
* time per simulated request flat within 15% from 10^2 to 10^5 requests
* memory of a run of 10^5 requests                        <= 300 MB
* start-up, import kvsim to the first result              <= 0.1 s
* the pure-Python path (KVSIM_PURE=1) within 2x of the fastest (the compiled engine)
Then kvsim against another simulator, sched-sim from PyPI, whole process, at 3,000 and 30,000
requests (peer.py: it installs sched-sim into a virtual environment of its own under .cache/).
Targets, on the project's 2-core machine, with prefix caching on:
* every chapter executed top to bottom in a fresh kernel          <= 3 minutes
* make unit (lint, types, the unit tests), the run cache cold      <= 60 s of CPU
The rows that follow include a sliding-window model (gemma-2-9b) with the prefix cache off
and on: its exact request-by-request path against the closed form.
It also prints the cost model's calibration against the measured kernel
timings in ../shared/data/vidur-profiling (when present), and kvsim's KV pool
against published vLLM start-up logs (startup_logs.py).
For scale: a well-known research simulator takes ~1.9 s in its loop for the
300-request version of the Belgavi workload.
"""
from __future__ import annotations

import argparse
import functools
import http.client
import logging
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import goals
import peer
import startup_logs

import kvsim
from kvsim.lab import missions
from kvsim.observe.exporter import CONNECTION_TIMEOUT_S, LISTEN_BACKLOG, MetricsServer
from kvsim.observe.series import run_metrics
from kvsim.runs.sweeps import chunk_size_for
from kvsim.traffic.lengths import Geometric
from kvsim.traffic.workload import Workload
from kvsim.units import GiB

ROOT = Path(__file__).resolve().parents[1]
#: The exporter's goal: the p99 of one scrape in a burst of 200 simultaneous ones, on
#: loopback on the project's 2-core machine (issue 30).
EXPORTER_P99_GOAL_S = 1.0
SHARED = ROOT.parent / "shared" / "data"
TRACE = SHARED / "AzureLLMInferenceTrace_conv.csv"
PROFILES = SHARED / "vidur-profiling"


def median_time(fn, repeats: int) -> float:
    fn()  # warm caches and imports
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def row(name, seconds, target=None, extra=""):
    ratio = f"{seconds / target:5.2f} x target ({target * 1e3:,.0f} ms)" if target else ""
    print(f"{name:<48} {seconds * 1e3:10.1f} ms   {ratio} {extra}")


class _Counted:
    """An executor that counts the tasks submitted through it (everything else: the inner one's)."""

    def __init__(self, inner):
        self.inner, self.tasks = inner, 0

    def submit(self, fn, *args, **kwargs):
        self.tasks += 1
        return self.inner.submit(fn, *args, **kwargs)

    def __getattr__(self, name):          # the worker count kvsim.sweep reads, say
        return getattr(self.inner, name)


@contextmanager
def two_worker_cluster(distributed):
    """A Dask LocalCluster of 2 single-threaded worker processes, both up: ``(client, executor)``.

    ``silence_logs=CRITICAL``: a worker's heartbeat that races the shutdown logs a traceback
    otherwise; ``pure=False``: Dask would otherwise give a task the result of an identical one
    still in memory (the same runs, repeated), and the repeats would time nothing."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=logging.CRITICAL) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        yield client, client.get_executor(pure=False)


def sweep_on_dask(rep: int) -> None:
    """A 2-worker Dask LocalCluster: the cost of one task, and batching's speed-up.

    The per-task cost is the wall time of many trivial tasks divided by their
    number (all submitted at once, so it is the throughput limit of the
    scheduler and the client, not a latency), and the CPU this process spends
    on them: the LocalCluster's scheduler runs in this process, with the
    client. README.md derives its cluster projection from these lines.
    """
    print("\nkvsim.sweep on a Dask LocalCluster (2 worker processes, 1 thread each):")
    try:
        # Imported here, not at the top: dask is an optional extra (kvsim[cluster])
        # and takes a second to import; the other benchmarks do not need it.
        import distributed
    except ImportError:
        print("  (distributed is not installed: skipped; pip install -r requirements.txt)")
        return
    base = {"scenario": "belgavi", "duration_s": 120.0, "warmup_s": 0.0}
    grid = {"output_mean": [200, 250, 300, 350, 400, 450, 500, 550, 600, 650]}
    seeds = [0, 1, 2, 3]
    runs = len(grid["output_mean"]) * len(seeds)
    serial = median_time(lambda: kvsim.sweep(base, grid, seeds=seeds, progress=False),
                         max(3, rep // 3))
    per_run = serial / runs
    with two_worker_cluster(distributed) as (_client, ex):
        n = 200
        walls, cpus = [], []
        for _ in range(max(3, rep // 2) + 1):
            c0, t0 = time.process_time(), time.perf_counter()
            futures = [ex.submit(int, i) for i in range(n)]
            for f in futures:
                f.result()
            walls.append((time.perf_counter() - t0) / n)
            cpus.append((time.process_time() - c0) / n)
        wall, cpu = statistics.median(walls[1:]), statistics.median(cpus[1:])   # first: warm-up
        times, tasks = {}, {}
        for chunk in (1, None):
            counted = _Counted(ex)
            kvsim.sweep(base, grid, seeds=seeds, executor=counted, chunk_size=chunk,
                        progress=False)                               # warm the workers
            tasks[chunk] = counted.tasks
            times[chunk] = median_time(functools.partial(kvsim.sweep, base, grid, seeds=seeds,
                                                         executor=ex, chunk_size=chunk,
                                                         progress=False),
                                       max(5, rep // 2))
    print(f"  per task ({n} trivial tasks at once)  {wall * 1e3:7.2f} ms wall   "
          f"{cpu * 1e3:7.2f} ms CPU of the scheduler + client process")
    print(f"  {runs} runs of belgavi (2 min, no warm-up), no executor  {serial:6.2f} s   "
          f"[{per_run * 1e3:.1f} ms a run]")
    for chunk, label in ((1, "chunk_size=1   "), (None, "chunk_size=None")):
        print(f"  {runs} runs, {label} {tasks[chunk]:3d} tasks          {times[chunk]:6.2f} s   "
              f"speed-up {serial / times[chunk]:.2f}x over no executor")
    print(f"  chunk_size=None against chunk_size=1: {times[1] / times[None]:.2f}x as fast")
    # The README's projection: a scheduler of CPU s per task, runs of r s, chunks of c runs
    # and W workers is busy W * s / (c * r) of the time; at 1 it sets the pace.
    for workers in (2, 64):
        chunks = [1, chunk_size_for(per_run, 100_000, workers)]
        print(f"  projected scheduler load, {workers:2d} workers: " + ", ".join(
            f"chunk {c} {workers * cpu / (c * per_run):.2f}" for c in chunks)
            + "   (W * s / (c * r), s = CPU per task, r = a run; >= 1: saturated)")


def _scrape(port: int, start: threading.Barrier) -> tuple[float, str | None]:
    """One scrape of /metrics, released with the others: (seconds, failure or None)."""
    start.wait()
    t0 = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/metrics")
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        failure = None if resp.status == 200 and b"vllm:num_preemptions_total" in body \
            else f"status {resp.status}"
    except OSError as exc:                     # refused, reset, timed out
        failure = type(exc).__name__
    return time.perf_counter() - t0, failure


def exporter_load(bursts: int = 3, clients: int = 200, idle: int = 300) -> None:
    """kvsim exporter (the CLI, in its own process) under bursts of simultaneous scrapes.

    Each burst releases ``clients`` threads at once, each opening its own connection on
    127.0.0.1: the failures (must be 0; with socketserver's default backlog of 5 a third
    of them failed) and the time of one scrape, p50 and p99 over all bursts. Then, on a
    server in this process with a 1 s deadline, the threads ``idle`` connections that
    send nothing hold right away and once the deadline has passed.
    """
    print(f"\nkvsim exporter under load (backlog {LISTEN_BACKLOG}, connection deadline "
          f"{CONNECTION_TIMEOUT_S:g} s):")
    proc = subprocess.Popen([sys.executable, "-m", "kvsim", "exporter", "--scenario",
                             "incident-day", "--speed", "20", "--port", "0"], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+) ", line)
        if m is None:
            print(f"  (the exporter did not start: {line.strip()!r}; skipped)")
            return
        port = int(m.group(1))
        _scrape(port, threading.Barrier(1))                 # warm up
        times, failures, walls = [], [], []
        with ThreadPoolExecutor(clients) as pool:
            for _ in range(bursts):
                start = threading.Barrier(clients)
                t0 = time.perf_counter()
                scrapes = [pool.submit(_scrape, port, start) for _ in range(clients)]
                results = [scrape.result() for scrape in scrapes]
                walls.append(time.perf_counter() - t0)
                times += [t for t, _ in results]
                failures += [f for _, f in results if f is not None]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    q = statistics.quantiles(times, n=100)
    print(f"  {bursts} bursts of {clients} simultaneous scrapes: {len(failures)} failed "
          f"of {len(times)}{' ' + str(sorted(set(failures))) if failures else ''}")
    print(f"  one scrape   p50 {q[49] * 1e3:7.1f} ms   p99 {q[98] * 1e3:7.1f} ms   "
          f"(a burst: median {statistics.median(walls):.2f} s)")
    # The goal (issue 30): on loopback, a fleet's burst is answered within a second, because
    # the exposition is rendered once per change of the simulated state, not per scrape.
    row(f"exporter: {clients} simultaneous scrapes, p99", q[98], EXPORTER_P99_GOAL_S,
        "(goal: <= 1 x; " + ("met" if q[98] <= EXPORTER_P99_GOAL_S else "NOT met") + ")")

    srv = MetricsServer(run_metrics(kvsim.run_scenario("mission-1-storm")), port=0,
                        timeout_s=1.0)
    srv.start()
    try:
        base = threading.active_count()
        conns = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(idle)]
        time.sleep(0.3)
        held = threading.active_count() - base
        time.sleep(1.5)
        after = threading.active_count() - base
        for c in conns:
            c.close()
    finally:
        srv.close()
    print(f"  {idle} idle connections, 1 s deadline: {held} threads held at 0.3 s, "
          f"{after} at 1.8 s")


def unit_loop() -> None:
    """``make unit``'s CPU time (its processes and theirs), from a cold run cache and then warm."""
    import shutil
    import tempfile

    print("\nThe test loop: make unit (lint, types, the tests not marked slow; target 60 s of CPU):")
    cache = Path(tempfile.mkdtemp(prefix="kvsim-bench-runs-"))
    try:
        for label in ("run cache cold", "run cache warm"):
            before, t0 = os.times(), time.perf_counter()
            proc = subprocess.run(["make", "-s", "unit", f"RUN_CACHE={cache}", f"PYTHON={sys.executable}"],
                                  cwd=ROOT, capture_output=True, text=True)
            after, wall = os.times(), time.perf_counter() - t0
            cpu = (after.children_user - before.children_user) + (after.children_system
                                                                  - before.children_system)
            if proc.returncode != 0:
                print(f"  {label:<16} make unit failed (exit {proc.returncode}): run it to see why")
                return
            # make unit runs pytest twice (the pure_engine tests again on the pure engine):
            # its pytest summaries, joined
            said = [ln.strip("= ") for ln in proc.stdout.splitlines() if re.search(r"\d+ passed", ln)]
            print(f"  {label:<16} {cpu:6.1f} s CPU  {wall:6.1f} s wall   {cpu / 60:.2f} x target (60 s)"
                  f"   [{'; '.join(said)}]")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def host_tier(rep: int) -> None:
    """vLLM's host tier (kv_offloading_size), then TensorRT-LLM V2's (host_cache_size), on the
    long-prompt storm: what each saves, per size
    (tokens recomputed, loaded instead, prefilled in all), the tail and the goodput (answer
    tokens per second in the scenario's measured window), and what it costs the simulator."""
    print("\nThe host tier on scenario belgavi-long (vLLM's kv_offloading_size, GiB):")
    print(f"  {'tier':>8} {'recomputed':>12} {'loaded':>12} {'prefilled':>12} {'p99 TTFT':>10} "
          f"{'goodput':>10} {'dropped':>8} {'time':>9}")
    for size in (None, 0.5, 2.0, 8.0, 32.0):
        opts = {} if size is None else {"kv_offloading_size": size}
        r = kvsim.run_scenario("belgavi-long", **opts)
        q, s = r.requests, r.summary()
        loaded = int(q["loaded_tokens"].sum()) if "loaded_tokens" in q else 0
        took = median_time(functools.partial(kvsim.run_scenario, "belgavi-long", **opts),
                           max(3, rep // 3))
        prefilled = int(r.timeline["prefill_tokens"].sum())
        print(f"  {'off' if size is None else f'{size:g} GiB':>8} {int(q['recomputed_tokens'].sum()):>12,} "
              f"{loaded:>12,} {prefilled:>12,} {s['ttft_p99_s']:>9.1f}s {s['goodput_tok_s']:>10,.0f} "
              f"{r.counters.get('kv_offload_allocation_failures', 0):>8,} {took * 1e3:>7.1f}ms")
    print("  TensorRT-LLM V2 (admission='max_utilization', use_kv_cache_manager_v2=True): its "
          "host tier takes suspended requests (host_cache_size, GiB; auto: the GPU pool's size)")
    print(f"  {'tier':>8} {'recomputed':>12} {'resumed':>12} {'suspended':>12} {'p99 TTFT':>10} "
          f"{'goodput':>10} {'':>8} {'time':>9}")
    for gib in (0, 0.25, 1.0, None):
        opts = {"admission": "max_utilization", "use_kv_cache_manager_v2": True,
                "host_cache_size": None if gib is None else int(gib * GiB)}
        r = kvsim.run_scenario("belgavi-long", **opts)
        q, s = r.requests, r.summary()
        took = median_time(functools.partial(kvsim.run_scenario, "belgavi-long", **opts),
                           max(3, rep // 3))
        print(f"  {'auto' if gib is None else f'{gib:g} GiB':>8} {int(q['recomputed_tokens'].sum()):>12,} "
              f"{int(q['loaded_tokens'].sum()):>12,} {r.counters['trtllm_suspensions']:>12,} "
              f"{s['ttft_p99_s']:>9.1f}s {s['goodput_tok_s']:>10,.0f} {'':>8} {took * 1e3:>7.1f}ms")


#: The planning study make bench measures: 4 configurations of a 7B model (GPU, memory share),
#: three seeds of Belgavi's traffic, a measured minute after 15 s of warm-up.
PLAN_BASE = {"model": "llama-2-7b"}
PLAN_GRID = {"gpu": ["a40-48gb", "h100-80gb"], "gpu_memory_utilization": [0.6, 0.9]}
PLAN_SLO = {"ttft_p99_s": 2.0, "preemptions_per_1k": 10}
PLAN_KWARGS = dict(output=Geometric(250), seeds=[0, 1, 2], duration_s=60.0, warmup_s=15.0,
                   rel_tol=0.05, cache=False, progress=False)
#: The study the costing projects to, and the cluster sizes it is costed for (workers).
STUDY_CONFIGS = 10_000
STUDY_WORKERS = (2, 16, 64, 256)


def plan_on_dask(rep: int) -> None:
    """kvsim.plan serially and on a 2-worker Dask LocalCluster, then a 10^4-configuration study
    costed from the measured figures (runs per search, CPU per run, rounds, round overhead).

    The projection: a study of C configurations makes ``C * k`` runs (``k`` measured runs per
    configuration, all seeds), ``R`` rounds (the longest search); on ``W`` workers it takes
    about ``C * k * r / W`` (``r``: CPU per run) plus ``R`` times the overhead of a round
    measured here (the 2-worker wall time less half the serial time, per round: the
    round's last chunk, the scheduler, the client).
    """
    print(f"\nkvsim.plan: the highest rate under an SLO, 4 configurations x 3 seeds "
          f"(llama-2-7b; runs of 15 s + 60 s; load average {os.getloadavg()[0]:.1f}):")
    configs = 1
    for values in PLAN_GRID.values():
        configs *= len(values)
    result, cpus = {}, []

    def serial_plan():
        c0 = time.process_time()
        result["plan"] = kvsim.plan(PLAN_BASE, PLAN_GRID, slo=PLAN_SLO, **PLAN_KWARGS)
        cpus.append(time.process_time() - c0)

    serial = median_time(serial_plan, max(1, rep // 3))
    plan = result["plan"]
    cpu_per_run = statistics.median(cpus[1:]) / plan.runs          # cpus[0]: the warm-up
    per_config = plan.runs / configs
    print(f"  serial                 {serial:6.2f} s   {plan.runs} runs ({per_config:.1f} per "
          f"configuration, {per_config / 3:.1f} per seed's search), {plan.rounds} rounds, "
          f"{cpu_per_run * 1e3:.1f} ms CPU a run")
    for i in plan.pareto():
        c = plan.configs[i]
        print(f"    on the Pareto front: {c.point} {c.rate_per_s:.2f} req/s "
              f"(seeds {c.spread[0]:.2f}-{c.spread[2]:.2f}), {c.gpu_hours_per_million:.0f} "
              f"GPU-hours per million requests")
    try:
        # Imported here: dask is an optional extra (kvsim[cluster]), slow to import.
        import distributed
    except ImportError:
        print("  (distributed is not installed: the cluster run and the costing are skipped)")
        return
    with two_worker_cluster(distributed) as (_client, ex):
        kvsim.plan(PLAN_BASE, PLAN_GRID, slo=PLAN_SLO, executor=ex, **PLAN_KWARGS)  # warm up
        clustered = median_time(lambda: kvsim.plan(PLAN_BASE, PLAN_GRID, slo=PLAN_SLO,
                                                   executor=ex, **PLAN_KWARGS),
                                max(3, rep // 3))
    round_overhead = max(0.0, clustered - serial / 2) / plan.rounds
    print(f"  2 Dask workers         {clustered:6.2f} s   speed-up {serial / clustered:.2f}x; "
          f"overhead {round_overhead * 1e3:.0f} ms a round")
    runs = STUDY_CONFIGS * per_config
    print(f"  a study of {STUDY_CONFIGS:,} configurations: {runs:,.0f} runs, "
          f"{runs * cpu_per_run / 3600:.1f} CPU-hours; on a cluster of")
    for workers in STUDY_WORKERS:
        minutes = (runs * cpu_per_run / workers + plan.rounds * round_overhead) / 60
        print(f"    {workers:4d} workers: {minutes:8.1f} minutes")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats, skip 10^5 requests")
    ap.add_argument("--dask", action="store_true",
                    help="only kvsim.sweep on a Dask LocalCluster (the README's projection)")
    ap.add_argument("--plan", action="store_true",
                    help="only kvsim.plan on a Dask LocalCluster and the 10^4-configuration costing")
    ap.add_argument("--exporter", action="store_true",
                    help="only kvsim exporter under bursts of simultaneous scrapes")
    ap.add_argument("--loop", action="store_true", help="only make unit's CPU time")
    ap.add_argument("--tier", action="store_true",
                    help="only the host tiers' effect on the long-prompt storm, per size")
    ap.add_argument("--goals", action="store_true",
                    help="only the engine's speed and memory goals, met or not met (goals.py)")
    ap.add_argument("--peer", action="store_true",
                    help="only kvsim against sched-sim from PyPI, whole process, at 3,000 and "
                         "30,000 requests (peer.py; installs it into .cache/ on first use)")
    ap.add_argument("--against", metavar="REV", default="HEAD~1",
                    help="the revision the goals' speed is compared with, interleaved "
                         "(default HEAD~1, the previous one; 'none': no comparison)")
    args = ap.parse_args(argv)
    against = None if args.against == "none" else args.against
    # Every run here is timed: none is read back from the run cache (kvsim/runs/summary_cache.py),
    # here or in the notebook kernels below.
    os.environ.pop("KVSIM_RUN_CACHE", None)
    if args.loop:
        unit_loop()
        return 0
    rep = 3 if args.quick else 9
    if args.goals:
        print(f"kvsim {kvsim.__version__} | Python {sys.version.split()[0]}")
        goals.report(quick=args.quick, against=against)
        return 0
    if args.peer:
        print(f"kvsim {kvsim.__version__} | Python {sys.version.split()[0]}")
        peer.report(quick=args.quick)
        return 0
    if args.dask:
        print(f"kvsim {kvsim.__version__} | Python {sys.version.split()[0]} | medians")
        sweep_on_dask(rep)
        return 0
    if args.plan:
        print(f"kvsim {kvsim.__version__} | Python {sys.version.split()[0]} | medians")
        plan_on_dask(rep)
        return 0
    if args.exporter:
        print(f"kvsim {kvsim.__version__} | Python {sys.version.split()[0]}")
        exporter_load()
        return 0
    if args.tier:
        print(f"kvsim {kvsim.__version__} | Python {sys.version.split()[0]} | medians")
        host_tier(rep)
        return 0

    print(f"kvsim {kvsim.__version__} | Python {sys.version.split()[0]} | medians of {rep} runs\n")
    goals.report(quick=args.quick, against=against)
    print()
    peer.report(quick=args.quick)
    print()
    cold = Workload.poisson(1.5, 120, prompt=850, output=Geometric(250), seed=0)
    belgavi = dict(model="llama-2-7b", gpu="a40-48gb", gpu_memory_utilization=0.60)
    row("Belgavi, 2 minutes from cold (seed 0)", median_time(lambda: kvsim.simulate(cold, **belgavi), rep),
        goals.BELGAVI_GOAL.goal_s, f"[{len(cold)} requests]")
    row("Belgavi 2 min, engine='v0'", median_time(lambda: kvsim.simulate(cold, engine="v0", **belgavi), rep))
    row("scenario belgavi (2 min warm-up + 10 min)", median_time(lambda: kvsim.run_scenario("belgavi"), rep))
    row("scenario belgavi-long (storm)", median_time(lambda: kvsim.run_scenario("belgavi-long"), rep))
    ref = dict(belgavi, step_by_step=True)
    plain = median_time(lambda: kvsim.simulate(cold, **ref), rep)
    row("Belgavi 2 min, step_by_step=True (no jumps)", plain)
    checked = median_time(lambda: kvsim.simulate(cold, check=True, **ref), rep)
    row("  the same with check=True (invariants)", checked, extra=f"[{checked / plain:.2f} x unchecked]")
    jumps = median_time(lambda: kvsim.simulate(cold, **belgavi), rep)
    jumps_checked = median_time(lambda: kvsim.simulate(cold, check=True, **belgavi), rep)
    row("Belgavi 2 min with jumps, check=True", jumps_checked, extra=f"[{jumps_checked / jumps:.2f} x unchecked]")
    # A sliding-window model: its window frees in closed form with the prefix cache off, and
    # request by request (the exact path, book/engine-reference.md) with it on, vLLM's default.
    gemma = dict(belgavi, model="gemma-2-9b")
    closed = median_time(lambda: kvsim.simulate(cold, enable_prefix_caching=False, **gemma), rep)
    row("Belgavi 2 min on gemma-2-9b, prefix cache off", closed)
    exact = median_time(lambda: kvsim.simulate(cold, enable_prefix_caching=True, **gemma), rep)
    row("  the same with the prefix cache on (exact path)", exact,
        extra=f"[{exact / closed:.1f} x the cache off]")
    for u in (40, 120):
        row(f"scenario load-test-{u} (closed loop, 10 min)",
            median_time(functools.partial(kvsim.run_scenario, f"load-test-{u}"), max(3, rep // 3)))

    if TRACE.exists():
        trace = Workload.from_trace(TRACE)
        r = kvsim.simulate(trace, model="llama-3.1-8b", gpu="h100-80gb")
        row("Azure conversation trace, 1 h, llama-3.1-8b/h100",
            median_time(lambda: kvsim.simulate(trace, model="llama-3.1-8b", gpu="h100-80gb"),
                        max(3, rep // 3)), goals.AZURE_GOAL.goal_s,
            f"[{len(trace):,} requests, {r.timeline.num_rows:,} steps]")
    else:
        print(f"(trace not found at {TRACE}: skipped)")

    host_tier(rep)

    print("\nkvsim.sweep: 16 runs of Belgavi (2 minutes each), serial against a process pool:")
    grid = {"output_mean": [200, 300, 400, 600], "gpu_memory_utilization": [0.55, 0.60]}
    base = {"scenario": "belgavi", "duration_s": 120.0, "warmup_s": 0.0}
    one = median_time(lambda: kvsim.sweep(base, grid, seeds=[0, 1], progress=False), 1)
    print(f"  serial      {one:6.2f} s")
    for workers in sorted({2, os.cpu_count() or 1}):
        if workers < 2:
            continue
        with ProcessPoolExecutor(workers) as pool:
            pool.submit(int).result()              # start the workers before timing
            t = median_time(lambda: kvsim.sweep(base, grid, seeds=[0, 1], executor=pool,
                                                progress=False), 1)
        print(f"  {workers} workers   {t:6.2f} s   speed-up {one / t:.2f}x")
    sweep_on_dask(rep)
    plan_on_dask(rep)
    exporter_load()

    days = ", ".join(f"{n}: {missions.mission_day(n)['warmup_s'] / 60:.0f} + "
                     f"{missions.mission_day(n)['duration_s'] / 60:.0f} min"
                     for n in missions.list_missions())
    print(f"\nLab missions (chapter 5; warm-up + scored minutes: {days}; 5 seeds). A "
          "session's\nfirst attempt runs the grid points up to the answer (serial); later ones "
          "are look-ups:")
    for n in missions.list_missions():
        m = missions.get_mission(n)
        t0 = time.perf_counter()
        missions.score(n, m.start)
        first = time.perf_counter() - t0
        expert = missions.expert_settings(n)
        later = median_time(functools.partial(missions.score, n, expert), rep)
        row(f"  mission {n}: first attempt of a session", first)
        row(f"  mission {n}: a later attempt", later, extra=f"[{m.resource}="
            f"{expert[m.resource]}]")
    t0 = time.perf_counter()
    runs = len(missions.search(3))
    full = time.perf_counter() - t0
    row("  mission 3: the whole search (its static twin)", full,
        extra=f"[{runs} runs, {full / runs * 1e3:.0f} ms each]")

    print("\nThe whole book, top to bottom (every chapter in a fresh kernel; target 180 s):")
    import nbformat
    from nbclient import NotebookClient

    root = Path(__file__).resolve().parents[1]
    total = 0.0
    for path in sorted((root / "book").glob("ch[0-9][0-9]-*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        t0 = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        dt = time.perf_counter() - t0
        total += dt
        print(f"  {path.name:<42} {dt:6.1f} s")
    print(f"  {'all chapters':<42} {total:6.1f} s   {total / 180:.2f} x target (180 s)")

    if PROFILES.is_dir():
        from kvsim.engine import calibration
        rows = calibration.read_profiles(PROFILES)
        print(f"\nCost model against {len(rows):,} measured per-layer matmul timings "
              f"(|relative error|; kvsim.engine.calibration):")
        print(calibration.format_error_table(calibration.error_table(rows)))
    else:
        print(f"(profiles not found at {PROFILES}: calibration table skipped)")
    from kvsim.engine import attention_profiles
    print(f"\nAttention kernels against {len(attention_profiles.ATTENTION_MEASURED)} measured "
          f"per-layer medians ({attention_profiles.ATTENTION_SOURCE}; "
          f"kvsim.engine.attention_profiles):")
    print(attention_profiles.format_attention_table(attention_profiles.attention_error_table()))
    startup_logs.main()
    unit_loop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
