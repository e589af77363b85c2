"""kvsim side by side with another simulator of LLM serving, whole process (issue 33, item 5).

    python benchmarks/run.py --peer      # or: make bench (after the goals)

The peer is sched-sim (:data:`PEER`, from PyPI: a pure-Python discrete-event simulator of LLM
serving schedulers with a paged KV cache, continuous batching and preemption). It is installed
on first use into a virtual environment of its own under ``.cache/`` (never into kvsim's), so
neither project's dependencies touch the other's. BLIS (Go), the peer the issue names first,
cannot be built on the project's machine: it needs Go 1.25 (Debian 12 has 1.19) and modules
from proxy.golang.org, which the machine cannot reach. Vidur's PyPI release downloads its
kernel profiles from the Hugging Face hub at run time, which the machine cannot reach either.

Both simulators replay the same requests (a Poisson workload at 5 requests per second,
1,000-token prompts, geometric outputs of mean 200 tokens, seed 1; the flatness goal's shape)
from a file, Llama-3-8B on one A100 80 GB: kvsim's ``llama-3.1-8b`` on ``a100-80gb`` at
vLLM's default ``gpu_memory_utilization`` of 0.9 with its V1 defaults, and sched-sim's ``a100``
preset (Meta-Llama-3-8B-Instruct, fp16) with its FCFS continuous-batching scheduler. Each run
is a fresh process that imports its simulator, reads the file, simulates and prints what it
simulated; its CPU time (user + system, from the kernel's accounting of the finished child)
is the measure, the two simulators interleaved round by round, the least of each kept. The
engines are not the same engine: each prints its simulated duration and its number of engine
steps beside its time, so a reader can see the two did comparable work.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The peer, pinned: what pip installs into its own environment.
PEER = "sched-sim==0.2.1"
#: Its environment, kvsim's cache folder (git-ignored); a file there marks a finished install.
PEER_ENV = ROOT / ".cache" / "bench-peer" / PEER.replace("==", "-")
_INSTALLED = "installed"
#: Request counts compared (the issue's), and the interleaved rounds of each.
SIZES = (3_000, 30_000)
ROUNDS = 3
ROUNDS_QUICK = 1

# A fresh kvsim process: import, read the CSV, simulate, say what it simulated.
_KVSIM_RUN = r"""
import json, sys
import kvsim
from kvsim import Workload
result = kvsim.simulate(Workload.from_trace(sys.argv[1]), model="llama-3.1-8b", gpu="a100-80gb",
                        gpu_memory_utilization=0.9)
summary = result.summary()
print(json.dumps({"requests": int(summary["requests_finished"]), "simulated_s": summary["simulated_s"],
                  "steps": result.timeline.num_rows}))
"""

# A fresh sched-sim process, through its public API: the same, from the JSON its trace
# loader reads.
_PEER_RUN = r"""
import json, sys
from sched_sim.core.event_engine import Simulator
from sched_sim.hardware.presets import get_hardware_profile
from sched_sim.schedulers.factory import create_scheduler
from sched_sim.workloads.trace_loader import load_trace_file
hardware = get_hardware_profile("a100")
simulator = Simulator(hardware, create_scheduler("fcfs", hardware))
simulator.submit_workload(load_trace_file(sys.argv[1]))
metrics = simulator.run()
print(json.dumps({"requests": metrics.completed_requests, "simulated_s": metrics.simulation_duration_s,
                  "steps": metrics.total_iterations}))
"""


def peer_python() -> Path | None:
    """The peer environment's interpreter, installing it on first use; None (with one line
    saying why) when it cannot be installed here, e.g. with no route to PyPI."""
    python = PEER_ENV / "bin" / "python"
    if (PEER_ENV / _INSTALLED).exists():
        return python
    if PEER_ENV.exists():                 # an install that did not finish: ours to redo
        shutil.rmtree(PEER_ENV)
    print(f"(installing the peer {PEER} into {PEER_ENV.relative_to(ROOT)}, once)", flush=True)
    try:
        venv.create(PEER_ENV, with_pip=True)
        pip = subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                              "--disable-pip-version-check", PEER],
                             capture_output=True, text=True, timeout=900)
        last = (pip.stderr.strip().splitlines() or ["no output"])[-1] if pip.returncode else ""
    except (OSError, subprocess.SubprocessError) as exc:   # no venv or pip here, or a hung install
        last = str(exc) or type(exc).__name__
    if last:
        shutil.rmtree(PEER_ENV, ignore_errors=True)
        print(f"(the peer {PEER} could not be installed here: {last}; skipped)")
        return None
    (PEER_ENV / _INSTALLED).write_text(PEER + "\n")
    return python


def write_workloads(folder: Path, sizes: tuple[int, ...] = SIZES) -> dict[int, tuple[Path, Path]]:
    """Each size's requests, as kvsim's trace CSV and as the peer's JSON list
    (tests/test_bench_peer.py: both hold the same requests)."""
    from kvsim.traffic.lengths import Geometric
    from kvsim.traffic.workload import Workload

    files = {}
    for n in sizes:
        workload = Workload.poisson(5.0, n / 5.0, prompt=1000, output=Geometric(200), seed=1)
        ours, theirs = folder / f"requests-{n}.csv", folder / f"requests-{n}.json"
        workload.to_csv(ours)
        theirs.write_text(json.dumps([
            {"id": f"r{i}", "timestamp": float(arrival), "prompt_tokens": int(prompt),
             "output_tokens": int(output)}
            for i, (arrival, prompt, output) in enumerate(
                zip(workload.arrival_s, workload.prompt_tokens, workload.output_tokens,
                    strict=True))]))
        files[n] = (ours, theirs)
    return files


def whole_process(python: str | Path, code: str, path: Path) -> tuple[float, dict]:
    """``(CPU seconds, what it printed)`` of one fresh process running ``code`` on ``path``
    (kvsim this checkout's, never a run read back from its run cache)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KVSIM_RUN_CACHE")}
    if python == sys.executable:
        env["PYTHONPATH"] = str(ROOT)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([str(python), "-c", code, str(path)], cwd=path.parent, env=env,
                          capture_output=True, text=True, timeout=1800)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit("peer: a measured process failed: "
                         f"{(proc.stderr.strip().splitlines() or ['no output'])[-1]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(proc.stdout.strip().splitlines()[-1])


def report(quick: bool = False) -> None:
    """Print, per size, both simulators' least CPU time and the ratio."""
    python = peer_python()
    if python is None:
        return
    print(f"kvsim against {PEER} (PyPI), whole process, CPU time, the least of "
          f"{ROUNDS_QUICK if quick else ROUNDS} interleaved rounds:")
    with tempfile.TemporaryDirectory(prefix="kvsim-peer-") as tmp:
        files = write_workloads(Path(tmp))
        best: dict[tuple[str, int], tuple[float, dict]] = {}
        for _ in range(ROUNDS_QUICK if quick else ROUNDS):
            for n, (ours, theirs) in files.items():
                for name, interpreter, code, path in (("kvsim", sys.executable, _KVSIM_RUN, ours),
                                                      ("peer", python, _PEER_RUN, theirs)):
                    cpu, said = whole_process(interpreter, code, path)
                    if cpu < best.get((name, n), (float("inf"), {}))[0]:
                        best[name, n] = (cpu, said)
    for n in SIZES:
        (ours, kv), (theirs, peer) = best["kvsim", n], best["peer", n]
        print(f"  {kv['requests']:,} requests: kvsim {ours:6.2f} s ({kv['steps']:,} steps, "
              f"{kv['simulated_s']:,.0f} s simulated), sched-sim {theirs:6.2f} s ({peer['steps']:,} "
              f"steps, {peer['simulated_s']:,.0f} s simulated): kvsim {theirs / ours:.1f}x faster "
              f"({(theirs / peer['steps']) / (ours / kv['steps']):.1f}x per step)")


if __name__ == "__main__":
    report(quick="--quick" in sys.argv[1:])
