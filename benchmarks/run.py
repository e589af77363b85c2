"""kvsim speed benchmarks: medians and ratios, never pass/fail.

    python benchmarks/run.py            # or: make bench
    python benchmarks/run.py --quick    # fewer repeats

Targets (kvsim 2), on the project's 2-core machine, with prefix caching on:
* the 2-minute Belgavi workload (cold server, 1.5 req/s)  <= 10 ms
* the one-hour Azure conversation trace on h100-80gb      <= 1 s
* time per simulated request flat from 10^2 to 10^5 requests
* every chapter executed top to bottom in a fresh kernel          <= 3 minutes
It also prints the cost model's calibration against the measured kernel
timings in ../shared/data/vidur-profiling (when present).
For scale: a well-known research simulator takes ~1.9 s in its loop for the
300-request version of the Belgavi workload.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import kvsim
from kvsim.traffic.lengths import Geometric
from kvsim.traffic.workload import Workload

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats, skip 10^5 requests")
    args = ap.parse_args(argv)
    rep = 3 if args.quick else 9

    print(f"kvsim {kvsim.__version__} | Python {sys.version.split()[0]} | medians of {rep} runs\n")
    cold = Workload.poisson(1.5, 120, prompt=850, output=Geometric(250), seed=0)
    belgavi = dict(model="llama-2-7b", gpu="a40-48gb", gpu_memory_utilization=0.60)
    row("Belgavi, 2 minutes from cold (seed 0)", median_time(lambda: kvsim.simulate(cold, **belgavi), rep), 0.010,
        f"[{len(cold)} requests]")
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
    for u in (40, 120):
        row(f"scenario load-test-{u} (closed loop, 10 min)",
            median_time(lambda: kvsim.run_scenario(f"load-test-{u}"), max(3, rep // 3)))

    if TRACE.exists():
        trace = Workload.from_trace(TRACE)
        r = kvsim.simulate(trace, model="llama-3.1-8b", gpu="h100-80gb")
        row("Azure conversation trace, 1 h, llama-3.1-8b/h100",
            median_time(lambda: kvsim.simulate(trace, model="llama-3.1-8b", gpu="h100-80gb"),
                        max(3, rep // 3)), 1.0,
            f"[{len(trace):,} requests, {r.timeline.num_rows:,} steps]")
    else:
        print(f"(trace not found at {TRACE}: skipped)")

    print("\nTime per simulated request (Poisson 5 req/s, llama-3.1-8b on h100-80gb):")
    sizes = [100, 1_000, 10_000] + ([] if args.quick else [100_000])
    per = {}
    for n in sizes:
        wl = Workload.poisson(5.0, n / 5.0, prompt=1000, output=Geometric(200), seed=1)
        t = median_time(lambda: kvsim.simulate(wl, model="llama-3.1-8b", gpu="h100-80gb"),
                        3 if n < 100_000 else 1)
        per[n] = t / len(wl)
        print(f"  {len(wl):>8,} requests  {t * 1e3:10.1f} ms   {per[n] * 1e6:7.1f} us/request")
    lo, hi = min(per.values()), max(per.values())
    print(f"  max/min time per request: {hi / lo:.2f} (flat = 1.00)")

    print("\nkvsim.sweep: 16 runs of Belgavi (2 minutes each), serial against a process pool:")
    grid = {"output_mean": [200, 300, 400, 600], "gpu_memory_utilization": [0.55, 0.60]}
    base = {"scenario": "belgavi", "duration_s": 120.0, "warmup_s": 0.0}
    one = median_time(lambda: kvsim.sweep(base, grid, seeds=[0, 1], progress=False), 1)
    print(f"  serial      {one:6.2f} s")
    from concurrent.futures import ProcessPoolExecutor
    for workers in sorted({2, os.cpu_count() or 1}):
        if workers < 2:
            continue
        with ProcessPoolExecutor(workers) as pool:
            pool.submit(int).result()              # start the workers before timing
            t = median_time(lambda: kvsim.sweep(base, grid, seeds=[0, 1], executor=pool,
                                                progress=False), 1)
        print(f"  {workers} workers   {t:6.2f} s   speed-up {one / t:.2f}x")

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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
