"""kvsim's speed goals (issue 33), measured as ratios that carry from one machine to another.

    python benchmarks/run.py --goals                  # the goals only (~7 minutes)
    python benchmarks/run.py --goals --against main   # against main instead of HEAD~1
    python benchmarks/run.py --goals --against none   # no comparison (~5 minutes)

(valgrind's counts of instructions, for the flatness goal and the pure path's, are about 3
of those minutes, and are skipped when valgrind is not installed.) Times are CPU time.
Each is read in *calibration units*: the time of a fixed pure-Python loop
(:func:`calibration_loop`) measured in the same process, so that a faster or slower machine
(or a busier one) moves both alike. The goals in
seconds were set on the project's 2-core machine, where that loop takes
:data:`CALIBRATION_REFERENCE_S`; a goal in units is its seconds divided by that. The
flatness and memory goals are ratios and bytes already. The speed against another
revision (by default ``HEAD~1``, the previous one) comes from ``benchmarks/compare.py``
(fresh processes, interleaved, so that both see the same load).

The engine's two paths (kvsim/engine/native.py): every goal is measured on the path this
process runs (the compiled engine when it is built; ``KVSIM_PURE=1`` for the pure one), and
the pure path's goal compares the two in fresh processes: the pure engine's time over the
compiled one's, on the Belgavi day and the Azure hour, at most :data:`PURE_LIMIT`.

Every goal is read over rounds of fresh processes (interleaved where two things are
compared), each round's least disturbed run kept, and judged on the **median** of its
rounds: met or not met. The rounds' range prints beside it; when it straddles the limit the
verdict says so (within this machine's noise: on the project's shared VM one round differs
from the next by up to 1.7x), so that a goal read at its limit is not mistaken for a goal met
or missed. Goals are never tests (a busy machine would fail them).
"""
from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "data" / "AzureLLMInferenceTrace_conv.csv"

#: The calibration loop's CPU time on the project's 2-core machine, the machine the goals
#: in seconds were set on (Python 3.11.7, 2026-12-04): the best of 15 runs was 18.1-19.6 ms
#: in 5 of 10 fresh processes, 20.5-22.3 ms in 2, and 33-35 ms in 3 that ran while the host
#: was slow (in one process 6% of the loop's calls are 1.3-1.9x slower, in spells). Before the
#: loop kept its memory (see calibration_loop) this read 26.3 ms, page faults included, on a
#: day when the engine's runs took what they take now (the Belgavi day 2.0-2.2 ms).
CALIBRATION_REFERENCE_S = 0.0185
#: Request counts of the flatness goal, and its limit: the largest time per request over
#: the smallest.
FLAT_SIZES = (100, 1_000, 10_000, 100_000)
FLAT_LIMIT = 1.15
#: Rounds of the flatness goal: every size once per round, in a fresh process, the sizes
#: interleaved so that a load that comes and goes falls on all of them; each round's max/min
#: over the sizes is one reading of the goal (on this noisy machine one round moved a size
#: by up to 1.7x).
FLAT_ROUNDS = 3
FLAT_ROUNDS_QUICK = 2
#: Timed runs of every size in each round's process: the same number at every size, since
#: the least of more runs is lower on a busy machine (30 runs of 10^2 requests against one of
#: 10^5 made the small sizes look cheaper than they are).
FLAT_REPEATS = 3
#: The memory goal: what a run of 10^5 requests adds to its process's peak resident memory.
MEMORY_LIMIT_BYTES = 300 * 2**20
#: The pure-Python engine (KVSIM_PURE=1: Binder without a compiler, any platform without one)
#: at most this many times the fastest path's time, on each reference run.
PURE_LIMIT = 2.0
#: Rounds of fresh processes for the Belgavi day, the Azure hour and the pure path's goal (a
#: round runs both engine paths when the compiled one is built, one after the other), and
#: for start-up.
PATH_ROUNDS = 5
PATH_ROUNDS_QUICK = 3
STARTUP_ROUNDS = 5
STARTUP_ROUNDS_QUICK = 3


@dataclass(frozen=True)
class Rounds:
    """One goal's reading: a value per round (a fresh process, or an interleaved round of
    them), lower is better; the goal is judged on their median."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def span(self, fmt: str) -> str:
        """The rounds' range, each end formatted with ``fmt``: ``5 rounds 1.90-2.40``."""
        return f"{len(self.values)} rounds {min(self.values):{fmt}}-{max(self.values):{fmt}}"

    def verdict(self, limit: float) -> str:
        """Met or not met on the median; and whether the rounds fall on both sides of ``limit``
        (the verdict is then within this machine's noise, not a measured margin)."""
        word = _met(self.median <= limit)
        if min(self.values) <= limit < max(self.values):
            return f"{word} (rounds on both sides of the limit: within the noise)"
        return word


@dataclass(frozen=True)
class TimeGoal:
    """A CPU-time goal set on the reference machine, compared in calibration units."""

    label: str
    goal_s: float

    def verdict(self, seconds: Rounds, units: Rounds) -> str:
        """One line: the median round's CPU time and units, the rounds' range, the goal."""
        goal_units = self.goal_s / CALIBRATION_REFERENCE_S
        there = units.median * CALIBRATION_REFERENCE_S
        return (f"  {self.label:<42} {seconds.median * 1e3:8.1f} ms {units.median:7.2f} u "
                f"({units.span('.2f')} u)   goal <= {goal_units:5.2f} u ({self.goal_s * 1e3:,.0f} ms "
                f"there; this median {there * 1e3:,.1f} ms)   {units.verdict(goal_units)}")


BELGAVI_GOAL = TimeGoal("the 2-minute Belgavi day (cold server)", 0.003)
AZURE_GOAL = TimeGoal("the one-hour Azure conversation trace", 0.4)
STARTUP_GOAL = TimeGoal("start-up: import kvsim to the first result", 0.1)   # wall time


def calibration_loop(iterations: int = 200_000) -> float:
    """A fixed pure-Python workload of the engine's kind: a call, float arithmetic, a dict
    and a list update per iteration. Its result only keeps the work from being skipped.
    Its memory stays put: an earlier form appended every value to a list (6 MB a call),
    whose fresh pages cost this VM 0-8 ms of kernel time a call (250 to 2,000 page faults),
    so the yardstick moved between 20 and 35 ms; this one's best is the same (0.96-1.04x,
    interleaved, the best of 15 each, 2026-12-04), and its calls agree within 4% outside
    the host's slow spells (see CALIBRATION_REFERENCE_S)."""
    latest: dict[int, float] = {}
    ends = [0.0] * 4096

    def step(i: int, t: float) -> float:
        return t + 1e-3 * (i % 17)

    t = 0.0
    for i in range(iterations):
        t = step(i, t)
        latest[i & 4095] = t
        ends[i & 4095] = t
    return t + len(ends) + len(latest)


def cpu_s(fn) -> float:
    """The CPU time of one call of ``fn``."""
    c0 = time.process_time()
    fn()
    return time.process_time() - c0


def calibration_s() -> float:
    """The calibration loop's CPU time now: the least of two runs."""
    return min(cpu_s(calibration_loop) for _ in range(2))


def in_units(fn, repeats: int) -> tuple[float, float]:
    """``(seconds, units)`` of the least disturbed of ``repeats`` calls of ``fn``: each call's
    CPU time over the mean of the calibration loop's times just before and just after it, so
    that a load that comes and goes weighs on both alike. Each timed call follows an untimed
    one: the calibration loop's 200,000-entry list leaves the CPU's caches cold, which made a
    2 ms run about 13% slower right after it (a long run hardly). A child process measures
    itself with this same code (``_CHILD_TIMING``): a process that waits for a child is not a
    fair clock for it (its loop then ran up to 1.7x slower)."""
    before = calibration_s()
    best = (float("inf"), float("inf"))
    for _ in range(repeats):
        fn()                      # the calibration loop left the caches cold: warm them again
        took = cpu_s(fn)
        after = calibration_s()
        if took / ((before + after) / 2) < best[1]:
            best = (took, took / ((before + after) / 2))
        before = after
    return best


#: What a measuring child process times with, inserted at its ``TIMING`` line: the source of
#: :func:`calibration_loop`, :func:`cpu_s`, :func:`calibration_s` and :func:`in_units`.
_CHILD_TIMING = "\n\n".join(inspect.getsource(f)
                             for f in (calibration_loop, cpu_s, calibration_s, in_units))


def best_cpu_s(fn, repeats: int) -> float:
    """The least CPU time of ``repeats`` calls of ``fn``, after one to warm up."""
    fn()
    return min(cpu_s(fn) for _ in range(repeats))


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


# A fresh process: import kvsim, build the Belgavi day, simulate it; its wall time, the wait a
# user sees, in units of the calibration loop's CPU time measured in the same process just
# before and after (in the process that waited for it, the loop then ran up to 1.7x slower: a
# core left idle, this machine's CPU is slow for a while, which read start-up as 57 ms
# "there"). Wall, not CPU time: the CPU time also counts the threads OpenBLAS starts when
# numpy is imported, which spin on the other core (106-165 ms of CPU against 60-100 ms of
# wall for numpy's import alone on the project's machine).
_STARTUP = r"""
import json, time
TIMING
before = calibration_s()
c0, w0 = time.process_time(), time.perf_counter()
import kvsim
from kvsim import Geometric, Workload
day = Workload.poisson(1.5, 120, prompt=850, output=Geometric(250), seed=0)
kvsim.simulate(day, model="llama-2-7b", gpu="a40-48gb", gpu_memory_utilization=0.60)
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
after = calibration_s()
print(json.dumps({"cpu_s": cpu, "wall_s": wall, "units": wall / ((before + after) / 2)}))
"""

# A fresh process: what a run of N requests adds to the peak RSS, then the run timed REPEATS
# more times in calibration units (in_units), the least disturbed kept, and REPEATS more read
# as user and kernel CPU time with their minor page faults (getrusage). A warm-up run of 100
# requests goes first, so that the measured peak does not carry the first call's lazy
# imports. Every size runs this way in a process of its own, so that none runs in a process
# the Azure hour left large (that made small runs look dearer per request). The peak is the
# kernel's VmHWM, not getrusage's ru_maxrss, which Linux carries over an exec from the parent
# (this benchmark's own process, after the Azure hour, is larger).
_SIZED_RUN = r"""
import json, sys, time
SIZED
TIMING

def peak_rss_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise SystemExit("goals: no VmHWM in /proc/self/status (Linux only)")

def cpu_split(fn, repeats):
    # (user s, kernel s, minor page faults) of the call of fn, of repeats, that took the
    # least CPU time: the kernel's share is mostly the page faults of the run's fresh memory
    import resource
    best = None
    for _ in range(repeats):
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        fn()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        split = (r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime,
                 r1.ru_minflt - r0.ru_minflt)
        if best is None or split[0] + split[1] < best[0] + best[1]:
            best = split
    return best

n, repeats = int(sys.argv[1]), int(sys.argv[2])
wl = sized(n)
run(sized(100))                       # warm-up
before = peak_rss_bytes()
result = run(wl)
peak = peak_rss_bytes()
steps = result.timeline.num_rows
result.summary()                      # reads most timeline columns: they are expanded now
read_peak = peak_rss_bytes()
del result
cpu, units = in_units(lambda: run(wl), repeats)
user, kernel, faults = cpu_split(lambda: run(wl), repeats)
print(json.dumps({"requests": len(wl), "steps": steps, "cpu_s": cpu, "units": units,
                  "user_s": user, "kernel_s": kernel, "faults": faults,
                  "before_bytes": before, "peak_bytes": peak, "read_peak_bytes": read_peak}))
"""


# A fresh process that runs a workload of N requests RUNS times (0 or 1) after the same warm-up
# as _SIZED_RUN's, under valgrind's callgrind: a run's instructions are the difference between
# the process that runs it once and the one that stops before it.
_COUNTED_RUN = r"""
import sys
SIZED
n, runs = int(sys.argv[1]), int(sys.argv[2])
wl = sized(n)
run(sized(100))                       # warm-up
for _ in range(runs):
    run(wl)
print(len(wl))
"""

#: What both sized children run, inserted at their ``SIZED`` line: the flatness goal's
#: workload of ``n`` requests (Poisson 5/s, so 10^5 requests are about 5.6 hours) and its run.
_SIZED = r"""
import kvsim
from kvsim import Geometric, Workload

def sized(n):
    return Workload.poisson(5.0, n / 5.0, prompt=1000, output=Geometric(200), seed=1)

def run(workload):
    return kvsim.simulate(workload, model="llama-3.1-8b", gpu="h100-80gb")
"""


# A fresh process on one engine path: the least disturbed run of the Belgavi day and of the
# Azure hour (when the trace is there), as (seconds, units), and which path ran.
_PATH_TIMES = r"""
import json, sys, time
import kvsim.engine
REFERENCE
TIMING

def best(fn, repeats):
    fn()
    return in_units(fn, repeats)

runs = reference_runs(sys.argv[2])
repeats = {"belgavi": int(sys.argv[1]), "azure": int(sys.argv[3])}
times = {name: best(run, repeats[name]) for name, run in runs.items()}
print(json.dumps({"compiled": kvsim.engine.compiled(), "times": times}))
"""

# A fresh process on one engine path that runs one reference run (NAME, given the trace's path
# or "") RUNS times (0 or more) after a Belgavi day that warms it up, under valgrind's
# callgrind (see _COUNTED_RUN); it prints which path ran.
_COUNTED_PATH = r"""
import sys
import kvsim.engine
REFERENCE
name, trace, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
run = reference_runs(trace)[name]
reference_runs("")["belgavi"]()       # warm-up: the first call's imports
for _ in range(runs):
    run()
print(kvsim.engine.compiled())
"""

#: What both reference-run children run, inserted at their ``REFERENCE`` line: the Belgavi
#: day and (given the trace's path) the Azure hour, each a call that simulates it once.
_REFERENCE = r"""
import kvsim
from kvsim import Geometric, Workload

def reference_runs(trace_path):
    day = Workload.poisson(1.5, 120, prompt=850, output=Geometric(250), seed=0)
    runs = {"belgavi": lambda: kvsim.simulate(day, model="llama-2-7b", gpu="a40-48gb",
                                              gpu_memory_utilization=0.60)}
    if trace_path:
        trace = Workload.from_trace(trace_path)
        runs["azure"] = lambda: kvsim.simulate(trace, model="llama-3.1-8b", gpu="h100-80gb")
    return runs
"""


#: Each engine path's rounds: per reference run ("belgavi", "azure"), its (seconds, units)
#: in each round.
PathRounds = dict[str, dict[str, list[tuple[float, float]]]]


def path_rounds(quick: bool) -> PathRounds:
    """The Belgavi day and the Azure hour (when the trace is here) in rounds of fresh
    processes, on the compiled engine when it is built and on the pure one, interleaved: each
    round runs both paths, one after the other, so that a load that comes and goes falls on
    both."""
    import kvsim.engine

    paths = [("pure", "1")] + ([("compiled", "0")] if kvsim.engine.compiled() else [])
    args = ("20", str(TRACE) if TRACE.exists() else "", "1" if quick else "2")
    rounds: PathRounds = {path: {} for path, _ in paths}
    for _ in range(PATH_ROUNDS_QUICK if quick else PATH_ROUNDS):
        for path, flag in paths:
            run = _child(_PATH_TIMES, *args, env={"KVSIM_PURE": flag})
            if run["compiled"] != (path == "compiled"):
                raise SystemExit(f"goals: KVSIM_PURE={flag} ran the {path!r} path's opposite")
            for name, (seconds, units) in run["times"].items():
                rounds[path].setdefault(name, []).append((seconds, units))
    return rounds


def _split(pairs: list[tuple[float, float]]) -> tuple[Rounds, Rounds]:
    """``(seconds, units)`` pairs, one per round, as the seconds' rounds and the units'."""
    return Rounds(tuple(s for s, _ in pairs)), Rounds(tuple(u for _, u in pairs))


def pure_path_goal(rounds: PathRounds) -> None:
    """The pure-Python engine against the compiled one (the fastest path): per reference run,
    the ratio of their units in each round (both paths ran in it), judged on the median."""
    import kvsim.engine

    if "compiled" not in rounds:
        print(f"  {'the pure path within 2x of the fastest':<42} only the pure path here "
              f"({kvsim.engine.build_note()}): nothing to compare")
        return
    for name, label in (("belgavi", "the Belgavi day"), ("azure", "the Azure hour")):
        if name not in rounds["pure"]:
            continue
        pure, pure_units = _split(rounds["pure"][name])
        fast, fast_units = _split(rounds["compiled"][name])
        ratios = Rounds(tuple(p / f for p, f in zip(pure_units.values, fast_units.values,
                                                    strict=True)))
        print(f"  {'pure path / compiled, ' + label:<42} {pure.median * 1e3:8.1f} / "
              f"{fast.median * 1e3:.1f} ms, median ratio {ratios.median:4.2f}x "
              f"({ratios.span('.2f')})   goal <= {PURE_LIMIT:.1f}x   {ratios.verdict(PURE_LIMIT)}")


def _child_command(code: str, *args: str,
                   env: dict[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The command and environment of a fresh process running ``code``, as a user's runs:
    this checkout's kvsim, no run cache, and Python's bytecode cache written and read (an
    inherited PYTHONDONTWRITEBYTECODE would compile every module without a fresh .pyc from
    source at each start-up: about 50 ms more)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    env.pop("KVSIM_RUN_CACHE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = code.replace("\nTIMING\n", "\n" + _CHILD_TIMING + "\n")
    code = code.replace("\nSIZED\n", "\n" + _SIZED + "\n")
    code = code.replace("\nREFERENCE\n", "\n" + _REFERENCE + "\n")
    return [sys.executable, "-c", code, *args], env


def _output(proc: subprocess.CompletedProcess[str]) -> str:
    """A measuring process's last line of output; one line naming its error if it failed
    (the last line of its stderr that is not valgrind's own, ``==pid== ...``)."""
    if proc.returncode != 0:
        said = [line for line in proc.stderr.strip().splitlines() if not line.startswith("==")]
        raise SystemExit(f"goals: a measuring process failed: {(said or ['no output'])[-1]}")
    return proc.stdout.strip().splitlines()[-1]


def _child(code: str, *args: str, env: dict[str, str] | None = None) -> dict:
    """What a fresh process running ``code`` (:func:`_child_command`) printed last, as JSON."""
    command, env = _child_command(code, *args, env=env)
    return json.loads(_output(subprocess.run(command, cwd=ROOT, env=env, capture_output=True,
                                             text=True, timeout=900)))


def _counted_process(code: str, *args: str, env: dict[str, str] | None = None,
                     counted: bool = True) -> subprocess.Popen[str]:
    """A fresh process running ``code`` under callgrind, started (:func:`_counted`
    collects it). With one OpenBLAS thread (the threads numpy starts spin for as long as the
    scheduler lets them; kvsim does no linear algebra), a fixed hash seed and Python's bytecode
    cache already written, the same process counts the same to within a few hundred
    instructions in 643 million, whatever else the machine runs (two at once among them),
    and a run's count (a difference of two) repeats to 0.1%.
    ``counted=False`` runs it without valgrind: it writes that cache."""
    command, env = _child_command(code, *args, env={"OPENBLAS_NUM_THREADS": "1",
                                                    "PYTHONHASHSEED": "0", **(env or {})})
    valgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    return subprocess.Popen([*(valgrind if counted else []), *command], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _counted(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """``(instructions, last line)`` of a process :func:`_counted_process` started: what
    valgrind counted (0 without valgrind), and what the process printed last."""
    stdout, stderr = proc.communicate(timeout=3600)
    line = _output(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
    count = re.search(r"Collected : (\d+)", stderr)
    if count is None:
        if proc.args[0] == "valgrind":
            raise SystemExit("goals: callgrind printed no instruction count")
        return 0, line
    return int(count.group(1)), line


def _run_instructions(code: str, args: tuple[str, ...], runs: int,
                      env: dict[str, str] | None = None) -> tuple[float, str]:
    """A run's instructions: ``code`` run ``runs`` times in one process, less the same process
    that stops before it (args, then the count of runs), per run; and what it printed. The
    two processes run at once (a count does not depend on the load)."""
    base = _counted_process(code, *args, "0", env=env)
    once = _counted_process(code, *args, str(runs), env=env)
    try:
        (counted, line), (before, _) = _counted(once), _counted(base)
    finally:                               # one failed: the other is not left running
        for proc in (once, base):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return (counted - before) / runs, line


def _have_valgrind(what: str) -> bool:
    """Whether valgrind is here; if not, one line says that ``what`` is skipped."""
    if shutil.which("valgrind") is None:
        print(f"  ({what}: valgrind is not installed, skipped)")
        return False
    return True


def instruction_flatness(sizes: tuple[int, ...]) -> None:
    """The flatness goal read in instructions (callgrind): the engine's work per request at
    each size, which the machine's load and clock do not move (the same count run after run);
    what it leaves out, and time does not, is the memory system (caches, page faults)."""
    if not _have_valgrind("instructions per request"):
        return
    _counted(_counted_process(_COUNTED_RUN, str(min(sizes)), "0", counted=False))  # the .pyc
    per_request = []
    for n in sizes:
        per_run, requests = _run_instructions(_COUNTED_RUN, (str(n),), 1)
        per_request.append(per_run / int(requests))
    spread = max(per_request) / min(per_request)
    print("    instructions per request (callgrind: the load does not move it): "
          + " / ".join(f"{v / 1e3:,.1f}k" for v in per_request)
          + f"   max/min {spread:.2f}, goal <= {FLAT_LIMIT:.2f}   {_met(spread <= FLAT_LIMIT)}")


def instruction_ratio(quick: bool) -> None:
    """The pure path's goal read in instructions (callgrind): the pure engine's over the
    compiled one's, on the Belgavi day (10 runs a process) and, without ``quick``, the Azure
    hour (one run). What it leaves out, and time does not, is how fast a CPU runs each
    engine's instructions: on the project's AMD EPYC in December 2026 the pure engine's ran
    1.3-1.6x slower each than the compiled engine's."""
    import kvsim.engine

    if not kvsim.engine.compiled() or not _have_valgrind("the pure path in instructions"):
        return
    names = [("belgavi", "the Belgavi day", 10)]
    if TRACE.exists() and not quick:
        names.append(("azure", "the Azure hour", 1))
    for name, label, runs in names:
        per_run = {}
        for path, flag in (("pure", "1"), ("compiled", "0")):
            per_run[path], ran = _run_instructions(
                _COUNTED_PATH, (name, str(TRACE) if name == "azure" else ""), runs,
                env={"KVSIM_PURE": flag})
            if ran != str(path == "compiled"):
                raise SystemExit(f"goals: KVSIM_PURE={flag} ran the {path!r} path's opposite")
        ratio = per_run["pure"] / per_run["compiled"]
        print(f"    in instructions (callgrind), {label}: {per_run['pure'] / 1e6:,.1f} / "
              f"{per_run['compiled'] / 1e6:,.1f} M = {ratio:4.2f}x   goal <= {PURE_LIMIT:.1f}x   "
              f"{_met(ratio <= PURE_LIMIT)}")


def flatness_goal(sizes: tuple[int, ...], rounds: int) -> dict | None:
    """The flatness goal: every size in a fresh process (:data:`_SIZED_RUN`), the sizes
    interleaved, ``rounds`` times; judged on the median of each round's max/min of the CPU
    time per request. Then the same time split in two (medians over the rounds): user-mode
    CPU time (kvsim, Python and numpy at work) and the kernel's, mostly the page faults of
    the memory a run touches for the first time (the kernel samples which of the two a
    clock tick falls in). On the project's VM, three runs on 2026-12-04: the kernel's share
    0.9-5.8 us per request at 10^5 requests (0.4 faults per request), under 1 us at the
    smaller sizes; user-mode time within 1.11-1.32x from the cheapest size to the dearest,
    the dearest not the same size from one run to the next. Returns the 10^5-request run's
    reading (the memory goal's), or None."""
    per_round: list[dict[int, dict]] = []      # each size's reading, in each round
    for _ in range(rounds):
        per_round.append({n: _child(_SIZED_RUN, str(n), str(FLAT_REPEATS)) for n in sizes})

    def median(key: str, n: int) -> float:       # per request, over the rounds
        return statistics.median(run[n][key] / run[n]["requests"] for run in per_round)

    def listed(values: list[float], fmt: str) -> str:
        return " / ".join(f"{v:{fmt}}" for v in values)

    # a round's spread compares sizes measured minutes apart at most, one after the other
    spreads = Rounds(tuple(max(run[n]["units"] / run[n]["requests"] for n in sizes)
                           / min(run[n]["units"] / run[n]["requests"] for n in sizes)
                           for run in per_round))
    there = [median("units", n) * CALIBRATION_REFERENCE_S * 1e6 for n in sizes]
    print(f"  cost per request at {listed(list(sizes), ',')} requests: {listed(there, '.1f')} us "
          f"there (medians); max/min in each round, median {spreads.median:.2f} "
          f"({spreads.span('.2f')}), goal <= {FLAT_LIMIT:.2f}   {spreads.verdict(FLAT_LIMIT)}")
    user = [median("user_s", n) * 1e6 for n in sizes]
    kernel = [median("kernel_s", n) * 1e6 for n in sizes]
    faults = [median("faults", n) for n in sizes]
    print(f"    split (getrusage, medians): user-mode {listed(user, '.1f')} us per request, "
          f"max/min {max(user) / min(user):.2f}; the kernel's {listed(kernel, '.1f')} us, with "
          f"{listed(faults, '.2f')} minor page faults per request")
    # The steps per request are not flat (a short run is more of an empty server's ramp-up,
    # in smaller batches), but decode runs fuse steps: the instructions per request are.
    steps = [median("steps", n) for n in sizes]
    print(f"    (the runs take {listed(steps, '.1f')} engine steps per request)")
    return per_round[0][sizes[-1]] if sizes[-1] >= 100_000 else None


def report(quick: bool = False, against: str | None = None) -> None:
    """Measure and print every goal, met or not met (``quick``: fewer rounds and repeats, and
    the flatness and memory goals stop at 10^4 requests)."""
    import kvsim.engine

    print(f"Engine: {kvsim.engine.build_note()} (the goals below are measured on it; "
          "KVSIM_PURE=1 measures the pure path)")
    print(f"Goals (issue 33), CPU time (start-up: wall time) in units (u): each run over the "
          f"calibration loop's CPU time around it ({CALIBRATION_REFERENCE_S * 1e3:.1f} ms on the "
          f"reference machine, \"there\"); each round a fresh process and its least disturbed "
          "run, the goal judged on the rounds' median:")
    rounds = path_rounds(quick)
    fastest = rounds["compiled" if "compiled" in rounds else "pure"]
    print(BELGAVI_GOAL.verdict(*_split(fastest["belgavi"])))
    if "azure" in fastest:
        print(AZURE_GOAL.verdict(*_split(fastest["azure"])))
    else:
        print(f"  (the Azure hour needs {TRACE}: skipped)")
    startups = [_child(_STARTUP) for _ in range(STARTUP_ROUNDS_QUICK if quick else STARTUP_ROUNDS)]
    print(STARTUP_GOAL.verdict(Rounds(tuple(run["wall_s"] for run in startups)),
                               Rounds(tuple(run["units"] for run in startups))))

    sizes = FLAT_SIZES[:-1] if quick else FLAT_SIZES
    large = flatness_goal(sizes, FLAT_ROUNDS_QUICK if quick else FLAT_ROUNDS)
    instruction_flatness(sizes)
    if large is not None:
        grown = large["peak_bytes"] - large["before_bytes"]
        print(f"  {'memory of a run of 10^5 requests':<42} {grown / 2**20:8.0f} MB added to the "
              f"process's peak ({large['peak_bytes'] / 2**20:.0f} MB in all)   goal <= "
              f"{MEMORY_LIMIT_BYTES / 2**20:.0f} MB   {_met(grown <= MEMORY_LIMIT_BYTES)}")
        read = large["read_peak_bytes"] - large["before_bytes"]
        print(f"  {'  and once its summary read the timeline':<42} {read / 2**20:8.0f} MB "
              "(the columns are expanded when first read)")
    else:
        print("  (memory at 10^5 requests: skipped with --quick)")
    pure_path_goal(rounds)
    instruction_ratio(quick)
    if against is None:
        return
    known = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{against}^{{commit}}"],
                           cwd=ROOT, capture_output=True, text=True).returncode == 0
    if not known:
        print(f"\n(revision {against!r} is not in this repository: no comparison)")
        return
    import compare
    print(f"\nAgainst {against} (benchmarks/compare.py: fresh processes, interleaved):")
    compare.main([against, "--rounds", "3"])


def calibrate(repeats: int = 15) -> None:
    """Print the calibration loop's time here (the figure CALIBRATION_REFERENCE_S records)."""
    runs = [best_cpu_s(calibration_loop, repeats) for _ in range(3)]
    print(f"calibration loop: best {min(runs) * 1e3:.2f} ms, median of bests "
          f"{statistics.median(runs) * 1e3:.2f} ms")
