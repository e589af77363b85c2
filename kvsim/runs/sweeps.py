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

A sweep of 8 runs or more shows its progress: a bar on stderr in a terminal,
an updating line in Jupyter (``progress=False`` turns it off, ``True`` on).
"""
from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from kvsim.engine.costs import CostModel
from kvsim.engine.loop import simulate
from kvsim.engine.options import ENGINE_DEFAULTS
from kvsim.engine.result import SUMMARY_KEYS, Table
from kvsim.errors import KvsimError, check_int

from .scenarios import get_scenario

__all__ = ["sweep", "sweep_points"]

#: Runs from which a sweep shows its progress unless told not to.
PROGRESS_FROM = 8


def _base_kwargs(base) -> tuple[str | None, dict]:
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


def sweep_points(grid: Mapping[str, Iterable] | None) -> list[dict]:
    """The cartesian product of ``grid``, first key slowest, as a list of dicts."""
    if grid is None:
        return [{}]
    if not isinstance(grid, Mapping):
        raise KvsimError(f"sweep: grid = {grid!r} is a {type(grid).__name__}: expected a mapping "
                         f"of option name to a list of values")
    names, values = [], []
    for name, vals in grid.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise KvsimError(f"sweep: grid key {name!r} is not an option name")
        if name == "seed":
            raise KvsimError("sweep: grid key 'seed': pass seeds=... instead")
        if isinstance(vals, (str, bytes)) or not isinstance(vals, Iterable):
            raise KvsimError(f"sweep: grid[{name!r}] = {vals!r}: expected a list of values")
        vals = list(vals)
        if not vals:
            raise KvsimError(f"sweep: grid[{name!r}] is empty: expected at least one value")
        names.append(name)
        values.append(vals)
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def _check_seeds(seeds) -> list[int]:
    if seeds is None:
        return [None]
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        seeds = [seeds]
    out = [check_int("seed", s, min=0, max=2**63 - 1) for s in seeds]
    if not out:
        raise KvsimError("sweep: seeds is empty: expected at least one seed (or None)")
    if len(set(out)) != len(out):
        raise KvsimError(f"sweep: seeds {out} repeat a seed: expected each once")
    return out


def _run(task: tuple) -> dict:
    """One run, in whatever process the executor chose: its summary (module-level: picklable)."""
    scenario, fixed, point, seed = task
    settings = dict(fixed)
    settings.update(point)
    if seed is not None:
        settings["seed"] = seed
    if scenario is not None:
        kwargs = get_scenario(scenario, **settings)
    else:
        kwargs = settings
    kwargs = dict(kwargs)
    workload = kwargs.pop("workload")
    return simulate(workload, **kwargs).summary()


def _in_jupyter() -> bool:
    """True inside a Jupyter kernel (not in a plain IPython terminal or under pytest)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return type(shell).__name__ == "ZMQInteractiveShell"


class _Progress:
    """A progress line: a bar on a terminal's stderr, an updating text in Jupyter."""

    def __init__(self, total: int, enabled: bool | None):
        self.total, self.done, self.start = total, 0, time.perf_counter()
        self.handle = None
        self.tty = False
        if enabled is False or (enabled is None and total < PROGRESS_FROM):
            return
        if _in_jupyter():
            from IPython.display import display

            self.handle = display(self._text(), display_id=True)
        else:
            self.tty = enabled is True or (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())

    def _text(self) -> str:
        return f"sweep: {self.done} of {self.total} runs"

    def step(self) -> None:
        self.done += 1
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
                             f"runs, {secs:.0f} s")
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def sweep(base, grid: Mapping[str, Iterable] | None = None, *, seeds=None, executor=None,
          progress: bool | None = None) -> Table:
    """Run every point of ``grid`` for every seed; one row per run (see the module docstring).

    Columns: the grid's keys, ``seed`` (when ``seeds`` is given), then every
    key of :meth:`kvsim.SimResult.summary`. A setting that a scenario or
    :func:`kvsim.simulate` does not know fails before anything runs, in one
    line naming it.
    """
    scenario, fixed = _base_kwargs(base)
    points = sweep_points(grid)
    seed_list = _check_seeds(seeds)
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
    tasks = [(scenario, fixed, point, seed) for point in points for seed in seed_list]
    bar = _Progress(len(tasks), progress)
    if executor is None:
        summaries = []
        for task in tasks:
            summaries.append(_run(task))
            bar.step()
    else:
        if not hasattr(executor, "submit"):
            raise KvsimError(f"sweep: executor = {executor!r} has no submit(): expected a "
                             f"concurrent.futures.Executor (or a Dask client's get_executor())")
        from concurrent.futures import as_completed

        futures = {executor.submit(_run, task): i for i, task in enumerate(tasks)}
        summaries = [None] * len(tasks)
        for future in as_completed(futures):
            summaries[futures[future]] = future.result()
            bar.step()
    columns: dict[str, Any] = {}
    for name in points[0]:
        columns[name] = _column([p[name] for p in points for _ in seed_list])
    if seed_list != [None]:
        columns["seed"] = np.array([s for _ in points for s in seed_list], dtype=np.int64)
    for key in SUMMARY_KEYS:
        columns[key] = _column([s[key] for s in summaries])
    return Table(columns)


def _column(values: list) -> np.ndarray:
    """A numpy column: ints as int64, other numbers as float64, anything else as str."""
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return np.array(values, dtype=bool)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
           for v in values):
        return np.array(values, dtype=np.float64)
    return np.array([str(v) for v in values])
