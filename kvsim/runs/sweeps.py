"""Sweeps: a grid of settings, each run for several seeds, summaries as rows.

Explained in chapter 2 (the collapse and the headroom band are sweeps) and
used by the static twins and the lab's scoring::

    table = kvsim.sweep("belgavi", {"gpu_memory_utilization": [0.55, 0.60, 0.65],
                                    "output_mean": [250, 600]}, seeds=range(5))
    table["preemptions_per_1k"]          # one value per (point, seed), in grid order

``base`` names a scenario (``kvsim scenarios``) or is a mapping: either
``{"scenario": name, **overrides}``, or ``{"workload": w, "model": ..., "gpu":
..., **engine options}`` as :func:`kvsim.simulate` takes them. ``grid`` maps a
scenario parameter or an engine option to the values to try; the points are
the cartesian product, first key slowest. ``seeds`` sets the scenario's
``seed`` (its traffic and the engine's), one run per seed per point.

Any :class:`concurrent.futures.Executor` runs the points: ``None`` runs them
here, one after another; a ``ProcessPoolExecutor`` uses this machine's cores;
a Dask cluster's executor (``distributed.Client(...).get_executor()``) or
Ray's ``concurrent.futures`` bridge spreads them over a cluster unchanged. The
table is the same whatever runs it and in whatever order the runs finish:
every run is fully determined by its settings and seed, and rows are put back
in grid order.

On an executor the runs travel in batches, ``chunk_size`` runs per task,
because a cluster's scheduler pays a fixed cost per task (12-14 ms of CPU
reported for a Dask cluster's scheduler, 1.5-2.5 ms measured on a 2-worker
``LocalCluster`` by ``benchmarks/run.py --dask``), while a two-minute Belgavi
run takes some 10-25 ms: one task per run leaves the workers waiting on the
scheduler. ``chunk_size=None`` (the default) measures: the first run (up to
:data:`MEASURE_RUNS` of them, for about :data:`MEASURE_S` at most) runs here,
in this process, timed, and its summary is kept, so no work is lost (a sweep
of a few quick runs may thus run here entirely). The rest go out in chunks
lasting about :data:`TASK_TARGET_S` each, but never so few that a worker gets
fewer than :data:`TASKS_PER_WORKER` tasks, unless the cluster is so big that
one scheduler could not keep up with its workers otherwise (see
:func:`chunk_size_for`); their number is a multiple of the workers and their
sizes differ by one run at most (:func:`balanced_chunks`). An integer ``chunk_size`` is used as given (1: one
task per run, as before batching), with nothing timed. With
``executor=None`` everything runs here and ``chunk_size`` only has to be
valid. The table is byte for byte the same whatever the chunk size.

With ``KVSIM_RUN_CACHE`` naming a folder (``cache=None``, the default), runs
of a named scenario are looked up first in the run cache of
:mod:`kvsim.runs.summary_cache`, keyed by the engine's code, the settings and
the seed, and only the others run (and are stored): the lab's grids and the
book's sweeps then cost one run per change of the engine. ``cache=False``
makes every run. The table is the same either way.

A sweep of 8 runs or more shows its progress: a bar on stderr in a terminal,
an updating line in Jupyter (``progress=False`` turns it off, ``True`` on).
On an executor it advances as each chunk comes back, by the runs it holds.
"""
from __future__ import annotations

import concurrent.futures as cf
import itertools
import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any, NamedTuple, Protocol, TypeAlias, TypeVar

import numpy as np
from numpy.typing import NDArray

from kvsim.engine.costs import CostModel
from kvsim.engine.loop import simulate
from kvsim.engine.options import ENGINE_DEFAULTS
from kvsim.engine.result import SUMMARY_KEYS, Table
from kvsim.errors import KvsimError, check_int

from .scenarios import SimulateKwargs, get_scenario
from .summary_cache import Summary, SummaryCache, from_environment, run_key

__all__ = ["sweep", "sweep_points", "run_batch", "check_seeds", "check_chunk_size", "column",
           "chunk_size_for", "balanced_chunks", "MAX_GRID_VALUES", "MAX_SWEEP_RUNS"]

#: Runs from which a sweep shows its progress unless told not to.
PROGRESS_FROM = 8

#: Seconds one task (a chunk of runs) should last when ``chunk_size=None``.
#: A Dask cluster's scheduler spends up to 10-15 ms of CPU per task, whatever
#: the task does: at 0.3 s a task, that overhead is 3-5 % of the work (against
#: 50 % with a task per 24 ms run). Longer tasks buy little more on a few workers and make
#: the end of a sweep (when some workers already idle) and the progress bar
#: coarser. (On a big cluster :data:`SCHEDULER_LOAD` asks for longer ones.)
TASK_TARGET_S = 0.3

#: The scheduler's CPU per task that the chunk size budgets for: the top of
#: what Dask's is reported to cost on a cluster (benchmarks/run.py --dask
#: measures it on a LocalCluster: 1.5-2.5 ms on the project's 2-core VM) ...
SCHEDULER_COST_S = 0.015
#: ... and the share of one scheduler core the tasks may take. One scheduler
#: feeds ``W`` workers with tasks of ``c`` runs of ``r`` seconds at a load of
#: ``W * SCHEDULER_COST_S / (c * r)``; at 1 the scheduler, not the workers,
#: sets the pace. So a chunk is never shorter than that load allows (80 runs
#: of 24 ms on 64 workers: 1.9 s tasks), even if workers get fewer tasks.
SCHEDULER_LOAD = 0.5

#: With ``chunk_size=None``, every worker gets at least this many tasks (when
#: the executor tells how many workers it has), so that a worker that draws
#: the slow points of a grid does not hold up the sweep while others idle.
TASKS_PER_WORKER = 4

#: Workers assumed when the executor does not say how many it has (a Ray
#: bridge, a wrapper): a middle-sized cluster, so chunks stay small enough to
#: spread over one.
FALLBACK_WORKERS = 8

#: ``chunk_size=None`` times the first runs here: at most this many ...
MEASURE_RUNS = 5
#: ... and no more once this many seconds are spent (at least one run is timed).
#: The per-run time is the median of those timed, so a first run that warms
#: caches does not count for more than one.
MEASURE_S = 0.05

#: The largest ``chunk_size`` accepted (a million runs in one task is already one task).
CHUNK_SIZE_MAX = 1_000_000
#: The most values one grid key may take (the CLI's ``--grid key=v1,v2,...`` too).
MAX_GRID_VALUES = 1_000
#: The most runs one sweep may make, grid points times seeds: at Belgavi's 10-25 ms a run,
#: 100,000 runs are half an hour of one core.
MAX_SWEEP_RUNS = 100_000

#: The clock that times the runs measured here (module-level so a test can
#: put a fake one in its place).
_clock = time.perf_counter

#: One point of a grid: option name to its value there.
GridPoint: TypeAlias = dict[str, object]
#: One task of :func:`run_batch`, whatever its caller makes of it (a sweep's run, a plan's).
Task = TypeVar("Task")


class _SweepRun(NamedTuple):
    """One run of a sweep: the scenario (or None), the fixed settings, the point, the seed."""

    scenario: str | None
    fixed: SimulateKwargs
    point: GridPoint
    seed: int | None


def _base_kwargs(base: object) -> tuple[str | None, SimulateKwargs]:
    """``(scenario or None, fixed settings)`` from ``base``."""
    if isinstance(base, str):
        return base, {}
    if isinstance(base, Mapping):
        fixed = dict(base)
        scenario = fixed.pop("scenario", None)
        if scenario is None and "workload" not in fixed:
            raise KvsimError("sweep: base must name a scenario ('belgavi', or "
                             "{'scenario': 'belgavi', ...}) or carry a 'workload' with "
                             "'model' and 'gpu', as kvsim.simulate takes them")
        if scenario is not None and not isinstance(scenario, str):
            raise KvsimError(f"sweep: base['scenario'] = {scenario!r}: expected a scenario name")
        return scenario, fixed
    raise KvsimError(f"sweep: base = {base!r} is a {type(base).__name__}: expected a scenario "
                     f"name or a mapping")


def sweep_points(grid: object) -> list[GridPoint]:
    """The cartesian product of ``grid``, first key slowest, as a list of dicts."""
    if grid is None:
        return [{}]
    if not isinstance(grid, Mapping):
        raise KvsimError(f"sweep: grid = {grid!r} is a {type(grid).__name__}: expected a mapping "
                         f"of option name to a list of values")
    names: list[str] = []
    values: list[list[object]] = []
    total = 1
    for name, given in grid.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise KvsimError(f"sweep: grid key {name!r:.60} is not an option name")
        if name == "seed":
            raise KvsimError("sweep: grid key 'seed': pass seeds=... instead")
        if isinstance(given, (str, bytes)) or not isinstance(given, Iterable):
            raise KvsimError(f"sweep: grid[{name!r}] = {given!r:.60}: expected a list of values")
        vals = list(itertools.islice(given, MAX_GRID_VALUES + 1))   # an endless iterator ends
        if not vals:
            raise KvsimError(f"sweep: grid[{name!r}] is empty: expected at least one value")
        if len(vals) > MAX_GRID_VALUES:
            raise KvsimError(f"sweep: grid[{name!r}] has more than {MAX_GRID_VALUES:,} values: "
                             f"expected at most {MAX_GRID_VALUES:,}")
        total *= len(vals)
        if total > MAX_SWEEP_RUNS:
            raise KvsimError(f"sweep: the grid has more than {MAX_SWEEP_RUNS:,} points "
                             f"(through {name!r}): expected at most {MAX_SWEEP_RUNS:,} runs")
        names.append(name)
        values.append(vals)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]


def check_seeds(seeds: object, caller: str = "sweep") -> list[int | None]:
    """``seeds`` as a list of distinct seeds (``[None]`` for ``None``); errors name ``caller``."""
    if seeds is None:
        return [None]
    return [*seed_values(seeds, caller)]


def seed_values(seeds: object, caller: str) -> list[int]:
    """``seeds`` (one seed or an iterable of them, not None) as a list of distinct seeds."""
    given: Iterable[object] = seeds if isinstance(seeds, Iterable) and not isinstance(
        seeds, (str, bytes)) else [seeds]
    seed_list = list(itertools.islice(given, MAX_SWEEP_RUNS + 1))    # an endless iterator ends
    if len(seed_list) > MAX_SWEEP_RUNS:
        raise KvsimError(f"{caller}: more than {MAX_SWEEP_RUNS:,} seeds: expected at most "
                         f"{MAX_SWEEP_RUNS:,} runs")
    out = [check_int("seed", s, min=0, max=2**63 - 1) for s in seed_list]
    if not out:
        none_too = " (or None)" if caller == "sweep" else ""
        raise KvsimError(f"{caller}: seeds is empty: expected at least one seed{none_too}")
    if len(set(out)) != len(out):
        raise KvsimError(f"{caller}: seeds {out} repeat a seed: expected each once")
    return out


def _run(task: _SweepRun) -> Summary:
    """One run, in whatever process the executor chose: its summary (module-level: picklable)."""
    scenario, fixed, point, seed = task
    settings = dict(fixed)
    settings.update(point)
    if seed is not None:
        settings["seed"] = seed
    kwargs = dict(get_scenario(scenario, **settings) if scenario is not None else settings)
    workload = kwargs.pop("workload")
    return simulate(workload, **kwargs).summary()


def _run_chunk(run_one: Callable[[Task], Summary], tasks: list[Task]) -> list[Summary]:
    """Several runs in one task, in order: their summaries (module-level: picklable)."""
    return [run_one(task) for task in tasks]


def _worker_count(executor: Executor) -> int | None:
    """How many runs ``executor`` runs at once, where it says; else None.

    The standard library's pools keep it in ``_max_workers``; a Dask
    ``ClientExecutor`` holds its client, whose ``nthreads()`` maps each worker
    to its threads. Both are read defensively: nothing here is public API.
    """
    n = getattr(executor, "_max_workers", None)
    if isinstance(n, int) and not isinstance(n, bool) and n > 0:
        return n
    client = getattr(executor, "_client", None)
    nthreads = getattr(client, "nthreads", None)
    if callable(nthreads):
        try:
            n = sum(nthreads().values())
        # a closed or unreachable client raises whatever its transport does (no public list):
        # fall back, and the submit will tell
        except Exception:  # noqa: BLE001
            return None
        return n if n > 0 else None
    return None


def chunk_size_for(per_run_s: float, runs: int, workers: int | None) -> int:
    """Runs per task for ``runs`` runs of ``per_run_s`` seconds each on ``workers``.

    Three bounds, in this order of precedence:

    * a task lasts about :data:`TASK_TARGET_S` (``TASK_TARGET_S / per_run_s``
      runs), so the per-task overhead is a few per cent of it;
    * but each worker gets :data:`TASKS_PER_WORKER` tasks when there are runs
      enough (at most ``runs // (TASKS_PER_WORKER * workers)`` runs a task);
    * and, above both, no chunk is so short that one scheduler would be busy
      more than :data:`SCHEDULER_LOAD` of the time at :data:`SCHEDULER_COST_S`
      a task (at least ``workers * SCHEDULER_COST_S / (SCHEDULER_LOAD *
      per_run_s)`` runs), short of one task per worker.

    ``workers=None`` (the executor does not say) counts as
    :data:`FALLBACK_WORKERS`. For example, runs of 24 ms: 40 of them on 2
    workers make chunks of 5 (8 tasks), not 12 (4 tasks, 2 per worker);
    100,000 of them on 64 workers chunks of 80 (1.9 s tasks).
    """
    workers = workers or FALLBACK_WORKERS
    if per_run_s <= 0:               # too quick to measure: only the balance decides
        return max(1, runs // (TASKS_PER_WORKER * workers))
    # (+-1e-9: 0.3 / 0.025 is 11.999... in floating point; the chunk is 12.)
    by_time = int(TASK_TARGET_S / per_run_s + 1e-9)
    by_balance = runs // (TASKS_PER_WORKER * workers)
    by_scheduler = math.ceil(workers * SCHEDULER_COST_S / (SCHEDULER_LOAD * per_run_s) - 1e-9)
    one_task_each = max(1, math.ceil(runs / workers))
    return min(max(1, by_scheduler, min(by_time, by_balance)), one_task_each)


def run_cache(cache: object, caller: str = "sweep") -> SummaryCache | None:
    """The run cache a sweep (or a plan) reads and fills: ``None`` the one ``KVSIM_RUN_CACHE``
    names, if any; ``False`` none; ``True`` that one, which must be set."""
    if cache not in (None, True, False):
        raise KvsimError(f"{caller}: cache = {cache!r}: expected None, True or False")
    store = from_environment() if cache is not False else None
    if cache is True and store is None:
        raise KvsimError(f"{caller}: cache=True but KVSIM_RUN_CACHE is not set: expected it to "
                         "name a directory for the run cache")
    return store


def balanced_chunks(runs: int, chunk_size: int, workers: int | None) -> list[int]:
    """The sizes of the tasks that carry ``runs`` runs in chunks of about ``chunk_size``.

    The number of tasks, ``ceil(runs / chunk_size)``, is rounded up to a multiple of
    ``workers`` (when the executor says how many it has and there are runs enough), and the
    runs are spread evenly over them (sizes differ by one at most), so the last round of
    tasks keeps every worker busy: 40 runs in chunks of 12 on 2 workers are 4 tasks of 10
    (each worker busy for 20 runs), not 12, 12, 12 and 4 (one worker busy for 24).
    """
    tasks = math.ceil(runs / chunk_size)
    if tasks == 0:
        return []
    if workers and tasks > workers:
        tasks = min(runs, math.ceil(tasks / workers) * workers)
    size, longer = divmod(runs, tasks)
    return [size + 1] * longer + [size] * (tasks - longer)


def check_chunk_size(chunk_size: object) -> int | None:
    if chunk_size is None:
        return None
    return check_int("chunk_size", chunk_size, min=1, max=CHUNK_SIZE_MAX)


def _in_jupyter() -> bool:
    """True inside a Jupyter kernel (not in a plain IPython terminal or under pytest)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return type(shell).__name__ == "ZMQInteractiveShell"


class _DisplayHandle(Protocol):
    """What IPython's ``display(..., display_id=True)`` returns: a line to update."""

    def update(self, obj: object, *, raw: bool = False) -> None: ...


class _Progress:
    """A progress line: a bar on a terminal's stderr, an updating text in Jupyter."""

    def __init__(self, total: int, enabled: bool | None, label: str = "sweep") -> None:
        self.total, self.done, self.start = total, 0, time.perf_counter()
        self.label = label
        self.handle: _DisplayHandle | None = None
        self.tty = False
        if enabled is False or (enabled is None and total < PROGRESS_FROM):
            return
        if _in_jupyter():
            from IPython.display import display

            # (IPython's display() has no annotations; with display_id it returns the handle)
            self.handle = display(self._text(), display_id=True)  # type: ignore[no-untyped-call]
        else:
            self.tty = enabled is True or (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())

    def _text(self) -> str:
        return f"{self.label}: {self.done} of {self.total} runs"

    def step(self, runs: int = 1) -> None:
        """``runs`` more runs are done (a chunk's worth on an executor)."""
        self.done += runs
        if self.handle is not None:
            if self.done < self.total:
                self.handle.update(self._text())
            else:    # done: the line gives way to nothing, so a saved notebook shows no stale bar
                self.handle.update({"text/html": ""}, raw=True)
        elif self.tty:
            width = 30
            filled = int(width * self.done / self.total)
            secs = time.perf_counter() - self.start
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                             f"runs, {secs:.0f} s ({self.label})")
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def sweep(base: str | Mapping[str, object], grid: Mapping[str, Iterable[object]] | None = None, *,
          seeds: Iterable[int] | int | None = None, executor: Executor | None = None,
          progress: bool | None = None, chunk_size: int | None = None,
          cache: bool | None = None) -> Table:
    """Run every point of ``grid`` for every seed; one row per run (see the module docstring).

    Columns: the grid's keys, ``seed`` (when ``seeds`` is given), then every
    key of :meth:`kvsim.SimResult.summary`. A setting that a scenario or
    :func:`kvsim.simulate` does not know fails before anything runs, in one
    line naming it. ``chunk_size``: runs per task on an executor (None: chosen
    from the time of the first runs, measured here; an integer from 1 to
    1,000,000: that many). ``cache``: look runs of a named scenario up in the
    run cache of :mod:`kvsim.runs.summary_cache`, and store the ones made here
    (``None``: when ``KVSIM_RUN_CACHE`` names one; ``False``: never, every run
    is made; ``True``: that cache, which must be set). The table is the same
    either way.
    """
    chunk_size = check_chunk_size(chunk_size)
    store = run_cache(cache)
    scenario, fixed = _base_kwargs(base)
    points = sweep_points(grid)
    seed_list = check_seeds(seeds)
    if len(points) * len(seed_list) > MAX_SWEEP_RUNS:
        raise KvsimError(f"sweep: {len(points):,} grid points x {len(seed_list):,} seeds = "
                         f"{len(points) * len(seed_list):,} runs: expected at most "
                         f"{MAX_SWEEP_RUNS:,}")
    if scenario is None and seed_list != [None] and "seed" in fixed:
        raise KvsimError("sweep: base sets 'seed' and seeds=... is given: expected one of them")
    # Validate every setting once, here, before any run (one line, no traceback in a worker).
    if scenario is not None:
        for point in points[:1]:
            get_scenario(scenario, **dict(fixed, **point))
    else:
        known = set(ENGINE_DEFAULTS) | set(CostModel.names()) | {"workload", "model", "gpu"}
        unknown = [k for k in list(fixed) + list(points[0]) if k not in known]
        if unknown:
            raise KvsimError(f"sweep: {unknown[0]!r} is not an option of kvsim.simulate")
    all_tasks = [_SweepRun(scenario, fixed, point, seed) for point in points for seed in seed_list]
    keys = [run_key(task.scenario, {**task.fixed, **task.point}, task.seed)
            if task.scenario is not None and store is not None else None for task in all_tasks]
    summaries = run_batch(_run, all_tasks, keys, executor=executor, chunk_size=chunk_size,
                          progress=progress, store=store)
    columns: dict[str, NDArray[Any]] = {}
    for name in points[0]:
        columns[name] = column([p[name] for p in points for _ in seed_list])
    if seed_list != [None]:
        columns["seed"] = np.array([s for _ in points for s in seed_list], dtype=np.int64)
    for key in SUMMARY_KEYS:
        columns[key] = column([s[key] for s in summaries])
    return Table(columns)


def run_batch(run_one: Callable[[Task], Summary], tasks: Sequence[Task], keys: Sequence[str | None],
              *, executor: Executor | None = None, chunk_size: int | None = None,
              progress: bool | None = None, store: SummaryCache | None = None,
              label: str = "sweep", stats: dict[str, int] | None = None) -> list[Summary]:
    """Every task's summary, in task order: the engine under :func:`sweep` and the planner.

    ``run_one`` (a module-level function, so an executor can pickle it) makes one
    run's summary from one task; ``keys`` holds each task's run-cache key
    (``None``: not cached). Tasks found in ``store`` are read back; the rest run
    here (``executor=None``) or on ``executor`` in chunks of ``chunk_size``
    runs (``None``: sized from the first runs, timed here; see the module
    docstring), and are stored. ``label`` names the progress line; ``stats``, when
    given, gets ``runs`` (the tasks) and ``made`` (those run, not read back).
    """
    if executor is not None and not hasattr(executor, "submit"):
        raise KvsimError(f"{label}: executor = {executor!r} has no submit(): expected a "
                         f"concurrent.futures.Executor (or a Dask client's get_executor())")
    bar = _Progress(len(tasks), progress, label)
    found, to_run = _look_up(store, tasks, keys)
    if stats is not None:
        stats.update(runs=len(tasks), made=len(to_run))
    if len(to_run) < len(tasks):
        bar.step(len(tasks) - len(to_run))
    if executor is None or not to_run:
        summaries = []
        for task in to_run:
            summaries.append(run_one(task))
            bar.step()
    else:
        summaries = _run_on(executor, run_one, to_run, chunk_size, bar)
    return _merge(store, found, keys, summaries)


def _run_on(executor: Executor, run_one: Callable[[Task], Summary], to_run: list[Task],
            chunk_size: int | None, bar: _Progress) -> list[Summary]:
    """``to_run``'s summaries, in order, made on ``executor`` in chunks of ``chunk_size`` runs
    (``None``: the first runs are made here, timed, and size the chunks)."""
    made: dict[int, Summary] = {}                 # task index -> its summary
    start = 0
    if chunk_size is None:
        # Time the first runs here (their summaries are kept), then size the chunks.
        stamps = [_clock()]
        while start < min(MEASURE_RUNS, len(to_run)) and (
                start == 0 or stamps[-1] - stamps[0] < MEASURE_S):
            made[start] = run_one(to_run[start])
            stamps.append(_clock())
            start += 1
            bar.step()
        per_run = float(np.median(np.diff(stamps)))
        workers = _worker_count(executor)
        sizes = balanced_chunks(len(to_run) - start,
                                chunk_size_for(per_run, len(to_run) - start, workers), workers)
    else:
        sizes = [chunk_size] * (len(to_run) // chunk_size) + (
            [len(to_run) % chunk_size] if len(to_run) % chunk_size else [])
    firsts = list(itertools.accumulate(sizes, initial=start))
    futures = {executor.submit(_run_chunk, run_one, to_run[first:first + size]): first
               for first, size in zip(firsts[:-1], sizes, strict=True)}
    for future in cf.as_completed(futures):
        done = future.result()
        made.update(enumerate(done, start=futures[future]))
        bar.step(len(done))
    return [made[i] for i in range(len(to_run))]


def _look_up(store: SummaryCache | None, tasks: Sequence[Task], keys: Sequence[str | None]
             ) -> tuple[dict[int, Summary], list[Task]]:
    """Split ``tasks`` into the summaries ``store`` already holds under their ``keys`` (by
    index) and the tasks to run."""
    if store is None:
        return {}, list(tasks)
    found: dict[int, Summary] = {}
    to_run = []
    for i, key in enumerate(keys):
        summary = store.get(key) if key is not None else None
        if summary is None:
            to_run.append(tasks[i])
        else:
            found[i] = summary
    return found, to_run


def _merge(store: SummaryCache | None, found: dict[int, Summary], keys: Sequence[str | None],
           made: list[Summary]) -> list[Summary]:
    """Every task's summary in task order: the ones found, and the ones ``made`` here (stored)."""
    if store is None:
        return made
    out, fresh = [], iter(made)
    for i, key in enumerate(keys):
        if i in found:
            out.append(found[i])
        else:
            summary = next(fresh)
            if key is not None:
                store.put(key, summary)
            out.append(summary)
    return out


def column(values: Sequence[object]) -> NDArray[Any]:
    """A numpy column: ints as int64, other numbers as float64, anything else as str."""
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return np.array(values, dtype=bool)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
           for v in values):
        return np.array(values, dtype=np.float64)
    return np.array([str(v) for v in values])
