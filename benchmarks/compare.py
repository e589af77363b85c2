"""Compare kvsim's speed at two revisions, interleaved, on the same machine.

    python benchmarks/compare.py                 # HEAD against the working tree
    python benchmarks/compare.py v2.0 --rounds 5 # a tag (or any revision) against it
    make bench-compare REV=HEAD~3

On a shared virtual machine the absolute times of ``benchmarks/run.py`` move
by a third from one hour to the next, more than most changes to the engine.
Runs of the two versions alternate here, each in a fresh process, so that
both see the same load. The report gives each workload's best time per version
(the least disturbed run) and the ratio of the medians of the per-round ratios,
with their spread: a change is real when the spread does not straddle 1.

The other revision is checked out with ``git worktree`` in a temporary
directory and removed afterwards; the working tree is used as it is,
uncommitted changes included. Both run the same engine: when the working tree
runs the compiled one (kvsim/engine/native.py), the other revision's is built
too (``pip wheel``, an isolated build that leaves this environment's kvsim
alone, its ``kvsim/_compiled/`` unpacked into the checkout: about a minute); a
revision from before the compiled engine, or ``--pure``, compares the two pure
engines (``KVSIM_PURE=1``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "data" / "AzureLLMInferenceTrace_conv.csv"

# One round in a fresh interpreter: each workload once to warm up, then timed (CPU time, s).
_ROUND = r"""
import json, sys, time
from pathlib import Path
import kvsim, kvsim.engine
from kvsim import Geometric, Workload      # the public names: the same at every revision

cold = Workload.poisson(1.5, 120, prompt=850, output=Geometric(250), seed=0)
jobs = {"belgavi-2min": (lambda: kvsim.simulate(cold, model="llama-2-7b", gpu="a40-48gb",
                                                gpu_memory_utilization=0.60), 20),
        "belgavi-scenario": (lambda: kvsim.run_scenario("belgavi"), 3),
        # the result read once: the timeline's columns are expanded when first read
        "belgavi-2min+summary": (lambda: kvsim.simulate(cold, model="llama-2-7b", gpu="a40-48gb",
                                                        gpu_memory_utilization=0.60).summary(), 20)}
trace = Path(sys.argv[1])
if trace.is_file():
    azure = Workload.from_trace(trace)
    jobs["azure-hour"] = (lambda: kvsim.simulate(azure, model="llama-3.1-8b", gpu="h100-80gb"), 1)
    jobs["azure-hour+summary"] = (lambda: kvsim.simulate(azure, model="llama-3.1-8b",
                                                         gpu="h100-80gb").summary(), 1)
out = {}
for name, (run, repeats) in jobs.items():
    run()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        run()
        best = min(best, time.process_time() - t0)
    out[name] = best
# which engine ran (a revision from before the compiled engine has only the pure one)
print(json.dumps({"compiled": getattr(kvsim.engine, "compiled", lambda: False)(), "times": out}))
"""

_ENGINE = "import json, kvsim.engine as e; print(json.dumps(getattr(e, 'compiled', lambda: False)()))"


def _run(tree: Path, code: str, pure: bool, *args: str) -> object:
    """What a fresh process running ``code`` with ``tree``'s kvsim printed last, as JSON."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
    env.pop("KVSIM_RUN_CACHE", None)
    if pure:
        env["KVSIM_PURE"] = "1"
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"compare: the run in {tree} failed: "
                         f"{(proc.stderr.strip().splitlines() or ['no output'])[-1]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _round(tree: Path, pure: bool) -> dict:
    """One round's best times in ``tree``, after checking which engine ran."""
    said = _run(tree, _ROUND, pure, str(TRACE))
    assert isinstance(said, dict)
    if said["compiled"] == pure:
        raise SystemExit(f"compare: {tree} ran the {'compiled' if pure else 'pure'} engine, "
                         f"not the {'pure' if pure else 'compiled'} one")
    return said["times"]


def _compile(tree: Path, scratch: Path) -> bool:
    """Build ``tree``'s compiled engine beside its sources; False when it has none (a
    revision from before kvsim/engine/native.py, or a build that fell back to pure)."""
    if not (tree / "kvsim" / "engine" / "native.py").is_file():
        return False
    print("(building the compiled engine of the other revision, about a minute)", flush=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                           "--disable-pip-version-check", "-w", str(scratch), str(tree)],
                          capture_output=True, text=True, timeout=1800)
    wheels = sorted(scratch.glob("kvsim-*.whl"))
    if proc.returncode != 0 or not wheels:
        return False
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(tree, [m for m in wheel.namelist() if m.startswith("kvsim/_compiled/")])
    return _run(tree, _ENGINE, False) is True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", nargs="?", default="HEAD",
                    help="the revision to compare the working tree with (default HEAD)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds, 1-50 (default 3)")
    ap.add_argument("--pure", action="store_true",
                    help="compare the pure-Python engines (KVSIM_PURE=1), even where compiled")
    args = ap.parse_args(argv)
    if not 1 <= args.rounds <= 50:
        ap.error(f"--rounds {args.rounds} is out of range: expected 1 to 50")
    check = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{args.rev}^{{commit}}"],
                           cwd=ROOT, capture_output=True, text=True)
    if check.returncode != 0:
        ap.error(f"revision {args.rev!r} is not a commit of this repository")
    with tempfile.TemporaryDirectory(prefix="kvsim-compare-") as tmp:
        other = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(other), args.rev],
                       cwd=ROOT, check=True)
        try:
            pure = args.pure or _run(ROOT, _ENGINE, False) is not True
            if not pure and not _compile(other, Path(tmp) / "wheel"):
                print(f"({args.rev} has no compiled engine here: both engines compared pure)")
                pure = True
            rounds = []
            for i in range(args.rounds):
                base, new = _round(other, pure), _round(ROOT, pure)
                rounds.append((base, new))
                print(f"round {i + 1}/{args.rounds}: " + ", ".join(
                    f"{k} {base[k] * 1e3:,.1f} -> {new[k] * 1e3:,.1f} ms" for k in base))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT,
                           check=False)
    print(f"\n{args.rev} against the working tree ({args.rounds} rounds, CPU time, both "
          f"{'pure' if pure else 'compiled'}; ratio < 1: the working tree is faster)")
    for name in rounds[0][0]:
        ratios = [new[name] / base[name] for base, new in rounds]
        best_base = min(base[name] for base, _ in rounds)
        best_new = min(new[name] for _, new in rounds)
        print(f"  {name:<18} {best_base * 1e3:10.1f} ms -> {best_new * 1e3:10.1f} ms   ratio "
              f"{statistics.median(ratios):.2f} (from {min(ratios):.2f} to {max(ratios):.2f})")
    if not TRACE.is_file():
        print(f"  (the Azure hour needs {TRACE}: skipped)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
