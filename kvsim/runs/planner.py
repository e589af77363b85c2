"""The capacity planner: the highest request rate each configuration sustains under an SLO.

A planner's question is not a grid of runs but "for each GPU, model, memory
setting and engine, how much traffic holds my SLO, and which is cheapest for
my load?"::

    plan = kvsim.plan({"model": "llama-2-7b"},
                      {"gpu": ["a40-48gb", "h100-80gb"], "gpu_memory_utilization": [0.6, 0.9]},
                      slo={"ttft_p99_s": 2.0, "preemptions_per_1k": 10},
                      output=kvsim.Geometric(250), seeds=range(3),
                      prices={"a40-48gb": 0.8, "h100-80gb": 2.5})
    plan.table()["rate_per_s"]          # one sustainable rate per configuration
    plan.cheapest(20.0)                 # replicas and dollars for 20 req/s
    plan.pareto()                       # rate against dollars per million requests

**The SLO** maps summary keys to limits: upper limits on ``ttft_p50_s``,
``ttft_p95_s``, ``ttft_p99_s``, ``itl_p50_s``, ``itl_p99_s``, ``max_gap_s``,
``share_paused_over_1s`` and ``preemptions_per_1k``, and a lower limit on
``goodput_fraction`` (the answer tokens delivered in the measurement window
over those of the requests that arrived in it, at most 1). A run that refuses any request
(one that can never fit, see :mod:`kvsim.engine.fit`) fails whatever its
latencies: the configuration cannot serve that traffic.

**Each run** is ``warmup_s`` seconds of traffic at rate ``r`` followed by
``duration_s`` measured seconds of the same traffic; the summary leaves the
warm-up out, so the start from an empty server does not decide. The traffic
is generated (Poisson arrivals, ``prompt`` and ``output`` lengths, the seed's
draw) or a trace rescaled to rate ``r`` (see :mod:`kvsim.runs.planner_traffic`).

**The search**, for every configuration and every seed separately: from
``start_rate_per_s``, the rate doubles while the SLO holds (halves while it
fails) until a passing and a failing rate bracket the threshold, then
bisects until the bracket is narrower than ``rel_tol`` of its lower end. The
seed's threshold is that lower end. A configuration's sustainable rate is the
lowest threshold over its seeds: **the SLO holds on every seed**, the
cautious reading of a few draws of the same traffic. The spread (min, median,
max over seeds) is reported beside it, and a final round runs every seed at
the configuration's rate, which gives the metrics there and names any seed
that fails it (a seed whose SLO is not monotone in the rate). The search
stops at ``max_rate_per_s`` (the rate is then a lower bound, ``capped``)
and at ``min_rate_per_s``, below which nothing is sustainable: the
configuration is then infeasible, and the result says why:

* ``capacity``: some request can never run (the engine refused it);
* ``preemption``: at the lowest rate the SLO fails with preemptions;
* ``queueing``: at the lowest rate the SLO fails with no preemption.

**At scale**: every round advances all searches by one rate and sends all
their runs through :func:`kvsim.runs.sweeps.run_batch`, the engine of
:func:`kvsim.sweep`: any ``concurrent.futures`` executor (a process pool, a
Dask cluster's), runs batched per task, the same result whatever runs them,
and, with ``KVSIM_RUN_CACHE`` set, each run looked up in the run cache of
:mod:`kvsim.runs.summary_cache` (keyed by the engine's code, the
configuration, the traffic's content, the rate and the seed): a rerun costs
no run, a changed engine or setting runs again. ``Plan.runs`` counts the
runs the search used, ``Plan.runs_made`` those not read back.
"""
from __future__ import annotations

import math
import os
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeAlias

from numpy.typing import NDArray

from kvsim.engine.loop import simulate
from kvsim.engine.options import resolve_options
from kvsim.engine.result import Table
from kvsim.errors import KvsimError, check_float
from kvsim.traffic.workload import LengthsLike, Workload

from .planner_costs import Replicas, check_prices, gpu_hours_per_million, pareto_front, replicas_for
from .planner_traffic import GeneratedTraffic, ReplayedTraffic, as_traffic
from .scenarios import SimulateKwargs
from .summary_cache import Summary, SummaryCache, SummaryValue, run_key
from .sweeps import (
    GridPoint,
    check_chunk_size,
    column,
    run_batch,
    run_cache,
    seed_values,
    sweep_points,
)

__all__ = ["plan", "Plan", "ConfigPlan", "SLO_UPPER_LIMITS", "SLO_LOWER_LIMITS",
           "INFEASIBLE_REASONS", "GROWTH"]

#: SLO keys whose value must stay at or below the limit, and the limit's range.
SLO_UPPER_LIMITS = {
    "ttft_p50_s": "seconds", "ttft_p95_s": "seconds", "ttft_p99_s": "seconds",
    "itl_p50_s": "seconds", "itl_p99_s": "seconds", "max_gap_s": "seconds",
    "share_paused_over_1s": "a share", "preemptions_per_1k": "preemptions per 1,000 requests",
}
#: SLO keys whose value must stay at or above the limit.
SLO_LOWER_LIMITS = {"goodput_fraction": "a share of the answer tokens offered"}
#: Why a configuration sustains no rate at all (``ConfigPlan.infeasible``).
INFEASIBLE_REASONS = ("capacity", "queueing", "preemption")
#: The factor by which the search grows (or shrinks) the rate until it brackets the threshold.
GROWTH = 2.0
#: Settings the planner decides itself: they cannot be in ``base`` or ``grid``.
PLANNER_SETTINGS = ("workload", "seed", "warmup_s", "until_s")
#: The most seeds a plan may search over (each seed is a search of its own).
MAX_SEEDS = 1_000
#: The bounds of the rates searched (requests per second).
RATE_RANGE = (1e-6, 1e6)
#: The range of ``rel_tol``.
REL_TOL_RANGE = (1e-4, 1.0)
#: The cache key's name for the planner's runs (the run cache's "scenario").
CACHE_NAME = "kvsim.plan"

#: The traffic a plan's runs replay at each rate.
Traffic: TypeAlias = GeneratedTraffic | ReplayedTraffic
#: One run the search asks for: ``(configuration index, seed, rate)``.
RunPoint: TypeAlias = tuple[int, int, float]
#: One configuration: its grid point and every setting :func:`kvsim.simulate` gets.
Configuration: TypeAlias = tuple[GridPoint, SimulateKwargs]


class _PlannedRun(NamedTuple):
    """One run of the search, as :func:`_run_planned` takes it (picklable)."""

    settings: SimulateKwargs
    traffic: Traffic
    rate: float
    seed: int
    duration_s: float
    warmup_s: float


def _measure(summary: Mapping[str, SummaryValue], key: str) -> float:
    """A number of ``summary`` (a count or a measure; every key the planner reads is one)."""
    value = summary[key]
    if isinstance(value, str):
        raise KvsimError(f"summary[{key!r}] = {value!r:.40} is a name: expected a summary key "
                         f"that holds a number")
    return value


def _run_planned(task: _PlannedRun) -> Summary:
    """One run of the search (module-level: an executor pickles it): the summary, plus
    ``offered_output_tok_s`` and ``goodput_fraction``."""
    settings, traffic, rate, seed, duration_s, warmup_s = task
    span = warmup_s + duration_s
    workload = traffic.at(rate, seed, span)
    result = simulate(workload, **settings, seed=seed, warmup_s=warmup_s, until_s=span)
    # A run that ended before the warm-up did (every request done, none to come) has no
    # measurement window: it is measured whole (it held whatever it was sent).
    start = warmup_s if result.simulated_s > warmup_s else 0.0
    summary = result.summary(warmup_s=start)
    window = _measure(summary, "simulated_s") - start
    columns = workload.open_columns("the planner's traffic")
    offered = int(columns.output_tokens[columns.arrival_s >= start].sum())
    delivered = _measure(summary, "goodput_tok_s") * window
    summary["offered_output_tok_s"] = offered / window if window > 0 else 0.0
    summary["goodput_fraction"] = min(1.0, delivered / offered) if offered else 1.0
    return summary


def misses(summary: Mapping[str, SummaryValue], slo: Mapping[str, float]) -> list[str]:
    """The SLO keys ``summary`` fails, in the SLO's order (``requests_rejected`` first when the
    engine refused a request)."""
    out = ["requests_rejected"] if _measure(summary, "requests_rejected") > 0 else []
    for key, limit in slo.items():
        value = _measure(summary, key)
        if (value < limit) if key in SLO_LOWER_LIMITS else (value > limit):
            out.append(key)
    return out


@dataclass
class _Search:
    """One configuration's search on one seed."""

    config: int
    seed: int
    rate: float
    low: float | None = None              # the highest rate seen to pass
    high: float | None = None             # the lowest rate seen to fail
    done: bool = False
    limited_by: str = ""                  # what failed at ``high``

    def record(self, passed: bool, failed_keys: list[str], bounds: tuple[float, float],
               rel_tol: float) -> None:
        """Take the outcome at ``self.rate``; set the next rate, or ``done``."""
        lowest, highest = bounds
        if passed:
            self.low = self.rate
        else:
            self.high, self.limited_by = self.rate, failed_keys[0]
        if self.low is None:
            if self.rate <= lowest:
                self.done = True
            else:
                self.rate = max(self.rate / GROWTH, lowest)
        elif self.high is None:
            if self.rate >= highest:
                self.done = True
            else:
                self.rate = min(self.rate * GROWTH, highest)
        elif self.high - self.low <= rel_tol * self.low:
            self.done = True
        else:
            self.rate = (self.low + self.high) / 2


@dataclass(frozen=True)
class ConfigPlan:
    """What the search found for one configuration (see the module docstring).

    ``point``: its grid values; ``settings``: everything :func:`kvsim.simulate`
    got; ``rate_per_s``: the sustainable rate (0.0 when infeasible);
    ``failing_rate_per_s``: the lowest rate seen to fail on the seed that set
    it (``None`` when ``capped``); ``seed_rates``: each seed's threshold (the
    lower end of its bracket), ``seed_failing_rates`` the upper end;
    ``limited_by``: the SLO key that failed above the rate; ``at_rate``: the
    median over seeds of the SLO's keys (and TTFT p99, preemptions per 1,000,
    goodput fraction) at ``rate_per_s``; ``failing_seeds``: seeds that fail
    at ``rate_per_s`` although their own threshold is higher; ``runs``: runs
    its searches used.
    """

    point: GridPoint
    settings: SimulateKwargs
    rate_per_s: float
    failing_rate_per_s: float | None
    seed_rates: tuple[float, ...]
    seed_failing_rates: tuple[float | None, ...]
    capped: bool
    limited_by: str
    infeasible: str | None
    reason: str
    runs: int
    gpu: str
    gpus_per_replica: int
    at_rate: dict[str, float] = field(default_factory=dict)
    failing_seeds: tuple[int, ...] = ()

    @property
    def spread(self) -> tuple[float, float, float]:
        """The seeds' thresholds: (min, median, max)."""
        return (min(self.seed_rates), float(statistics.median(self.seed_rates)),
                max(self.seed_rates))

    @property
    def gpu_hours_per_million(self) -> float:
        return gpu_hours_per_million(self.rate_per_s, self.gpus_per_replica)


@dataclass(frozen=True)
class Plan:
    """Every configuration's sustainable rate, and the costing built on them.

    ``configs``: one :class:`ConfigPlan` per grid point, in grid order; ``runs``: the
    distinct runs the searches used; ``runs_made``: those made, not read back from the
    run cache; ``rounds``: the batches sent (the searches' rounds, then the one that
    runs every seed at its configuration's rate); ``prices``: as given, checked.
    """

    configs: tuple[ConfigPlan, ...]
    slo: dict[str, float]
    seeds: tuple[int, ...]
    rel_tol: float
    runs: int
    runs_made: int
    rounds: int
    prices: dict[str, float] | None = None

    def dollars_per_million(self, index: int) -> float | None:
        """Dollars per million requests for configuration ``index`` at its rate (``None``
        without prices)."""
        cfg = self.configs[index]
        if self.prices is None:
            return None
        return cfg.gpu_hours_per_million * self.prices[cfg.gpu]

    def cheapest(self, target_rate_per_s: float) -> Replicas | None:
        """The configuration that carries ``target_rate_per_s`` for the fewest dollars an hour
        (GPU-hours without prices), in replicas of its sustainable rate; ``None`` when no
        configuration sustains any rate."""
        target = check_float("target_rate_per_s", target_rate_per_s, min=0, max=RATE_RANGE[1],
                             min_open=True, why="requests per second")
        options = self.replicas(target)
        if not options:
            return None
        return min(options, key=lambda o: (o.dollars_per_hour if o.dollars_per_hour is not None
                                           else o.gpu_hours_per_hour, o.index))

    def replicas(self, target_rate_per_s: float) -> list[Replicas]:
        """Every feasible configuration's replicas for ``target_rate_per_s``, in grid order."""
        target = check_float("target_rate_per_s", target_rate_per_s, min=0, max=RATE_RANGE[1],
                             min_open=True, why="requests per second")
        return [replicas_for(target, c.rate_per_s, c.gpus_per_replica,
                             self.prices[c.gpu] if self.prices else None, i)
                for i, c in enumerate(self.configs) if c.rate_per_s > 0]

    def pareto(self, against: str = "cost") -> list[int]:
        """Indices of the configurations on the Pareto front of rate (higher is better) against
        ``against``: ``"cost"`` (dollars per million requests, GPU-hours per million without
        prices) or ``"ttft"`` (p99 TTFT at the rate, median over seeds); by rising rate."""
        if against not in ("cost", "ttft"):
            raise KvsimError(f"against={against!r} is not known: expected 'cost' or 'ttft'")
        points: list[tuple[int, float, float]] = []
        for i, c in enumerate(self.configs):
            if c.rate_per_s <= 0:
                continue
            if against == "ttft":
                cost = c.at_rate["ttft_p99_s"]
            else:
                dollars = self.dollars_per_million(i)
                cost = dollars if dollars is not None else c.gpu_hours_per_million
            points.append((i, c.rate_per_s, cost))
        return pareto_front(points)

    def table(self) -> Table:
        """One row per configuration: its grid values, the rate and its bracket, the seeds'
        spread, why it is infeasible, runs, the metrics at the rate and its cost."""
        rows = self.configs
        nan = math.nan
        cols: dict[str, NDArray[Any]] = {}
        for name in rows[0].point:
            cols[name] = column([c.point[name] for c in rows])
        spreads = [c.spread for c in rows]
        cols.update({
            "rate_per_s": column([float(c.rate_per_s) for c in rows]),
            "failing_rate_per_s": column([float(c.failing_rate_per_s)
                                           if c.failing_rate_per_s is not None else nan
                                           for c in rows]),
            "seed_rate_min": column([float(s[0]) for s in spreads]),
            "seed_rate_median": column([float(s[1]) for s in spreads]),
            "seed_rate_max": column([float(s[2]) for s in spreads]),
            "capped": column([c.capped for c in rows]),
            "limited_by": column([c.limited_by for c in rows]),
            "infeasible": column([c.infeasible or "" for c in rows]),
            "runs": column([c.runs for c in rows]),
        })
        for key in _reported_keys(self.slo):
            cols[key] = column([float(c.at_rate.get(key, nan)) for c in rows])
        cols["gpu_hours_per_million"] = column([float(c.gpu_hours_per_million) for c in rows])
        dollars = [self.dollars_per_million(i) for i in range(len(rows))]
        cols["dollars_per_million"] = column([float(d) if d is not None else nan
                                               for d in dollars])
        return Table(cols)


def _reported_keys(slo: Mapping[str, float]) -> list[str]:
    keys = list(slo)
    for extra in ("ttft_p99_s", "preemptions_per_1k", "goodput_fraction"):
        if extra not in keys:
            keys.append(extra)
    return keys


def _check_slo(slo: object) -> dict[str, float]:
    if not isinstance(slo, Mapping) or not slo:
        raise KvsimError(f"slo={slo!r:.60}: expected a non-empty mapping of summary key to "
                         f"limit, e.g. {{'ttft_p99_s': 2.0, 'preemptions_per_1k': 10}}")
    out = {}
    for key, limit in slo.items():
        if key in SLO_UPPER_LIMITS:
            hi = 1.0 if key == "share_paused_over_1s" else None
            out[key] = check_float(f"slo[{key!r}]", limit, min=0, max=hi,
                                   why=SLO_UPPER_LIMITS[key])
        elif key in SLO_LOWER_LIMITS:
            out[key] = check_float(f"slo[{key!r}]", limit, min=0, max=1, min_open=True,
                                   why=SLO_LOWER_LIMITS[key])
        else:
            raise KvsimError(f"slo key {key!r} is not known: expected one of "
                             f"{', '.join([*SLO_UPPER_LIMITS, *SLO_LOWER_LIMITS])}")
    return out


def _check_rate(name: str, value: object) -> float:
    return check_float(name, value, min=RATE_RANGE[0], max=RATE_RANGE[1],
                       why="requests per second")


def _configurations(base: object, grid: object) -> list[Configuration]:
    """``(grid point, full settings)`` per configuration, each validated as the engine would."""
    if base is None:
        base = {}
    if not isinstance(base, Mapping):
        raise KvsimError(f"plan: base = {base!r:.60} is a {type(base).__name__}: expected a "
                         f"mapping of settings, e.g. {{'model': 'llama-2-7b', 'gpu': 'a40-48gb'}}")
    points = sweep_points(grid)
    out = []
    for point in points:
        settings: SimulateKwargs = {**base, **point}
        owned = [k for k in settings if k in PLANNER_SETTINGS]
        if owned:
            raise KvsimError(f"plan: {owned[0]!r} is set by the planner: expected it out of base "
                             f"and grid (the traffic comes from prompt/output or trace, the "
                             f"warm-up from warmup_s, the seeds from seeds)")
        for needed in ("model", "gpu"):
            if needed not in settings:
                raise KvsimError(f"plan: no {needed!r} in base or grid: expected one, e.g. "
                                 f"{{'model': 'llama-2-7b', 'gpu': 'a40-48gb'}}")
        options = {k: v for k, v in settings.items() if k not in ("model", "gpu")}
        resolve_options(settings["model"], settings["gpu"], options)
        out.append((point, settings))
    return out


def _gpu_name(gpu: object) -> str:
    return gpu if isinstance(gpu, str) else str(getattr(gpu, "name", gpu))


def plan(base: Mapping[str, object] | None = None, grid: Mapping[str, Iterable[object]] | None = None,
         *, slo: Mapping[str, float | str], seeds: Iterable[int] | int = (0, 1, 2),
         prompt: LengthsLike = 850, output: LengthsLike = 250,
         trace: Workload | str | os.PathLike[str] | None = None,
         duration_s: float = 120.0, warmup_s: float = 30.0, start_rate_per_s: float = 1.0,
         min_rate_per_s: float = 0.05, max_rate_per_s: float = 200.0, rel_tol: float = 0.05,
         prices: Mapping[str, float | str] | None = None, executor: Executor | None = None,
         chunk_size: int | None = None,
         progress: bool | None = None, cache: bool | None = None) -> Plan:
    """The highest sustainable rate of every configuration of ``grid`` (see the module docstring).

    ``base``: settings every configuration shares (``model``, ``gpu``, engine options, as
    :func:`kvsim.simulate` takes them); ``grid``: option name to the values to try, the
    configurations being their cartesian product (first key slowest). ``slo``: summary key to
    limit. Traffic: ``trace`` (a :class:`kvsim.Workload` read from a trace, or a trace file
    path), else Poisson arrivals with ``prompt`` and ``output`` lengths (token counts or
    distributions). Each run: ``warmup_s`` unmeasured then ``duration_s`` measured seconds.
    The search: from ``start_rate_per_s`` within ``[min_rate_per_s, max_rate_per_s]`` to a
    bracket narrower than ``rel_tol`` of the rate. ``prices``: GPU name to dollars per
    GPU-hour (every GPU planned, or none). ``executor``, ``chunk_size``, ``progress``,
    ``cache``: as :func:`kvsim.sweep` takes them.
    """
    slo = _check_slo(slo)
    if seeds is None:
        raise KvsimError(f"plan: seeds = {seeds!r:.60}: expected 1 to {MAX_SEEDS:,} seeds")
    seed_list = seed_values(seeds, "plan")
    if len(seed_list) > MAX_SEEDS:
        raise KvsimError(f"plan: seeds = {seeds!r:.60}: expected 1 to {MAX_SEEDS:,} seeds")
    duration_s = check_float("duration_s", duration_s, min=0, max=10**7, min_open=True,
                             why="measured seconds per run")
    warmup_s = check_float("warmup_s", warmup_s, min=0, max=10**7, why="seconds per run")
    start = _check_rate("start_rate_per_s", start_rate_per_s)
    lowest = _check_rate("min_rate_per_s", min_rate_per_s)
    highest = _check_rate("max_rate_per_s", max_rate_per_s)
    if not lowest <= start <= highest:
        raise KvsimError(f"start_rate_per_s={start:g} is out of range: expected a rate in "
                         f"[min_rate_per_s, max_rate_per_s] = [{lowest:g}, {highest:g}]")
    rel_tol = check_float("rel_tol", rel_tol, min=REL_TOL_RANGE[0], max=REL_TOL_RANGE[1],
                          why="the bracket's width over the rate")
    chunk_size = check_chunk_size(chunk_size)
    store = run_cache(cache, "plan")
    traffic = as_traffic(trace, prompt, output)
    configs = _configurations(base, grid)
    gpus = [_gpu_name(settings["gpu"]) for _, settings in configs]
    checked_prices = check_prices(prices, gpus)

    searcher = _Searcher(configs, traffic, slo, seed_list, duration_s, warmup_s, store,
                         _BatchOptions(executor, chunk_size, progress))
    searches = [_Search(i, seed, start) for i in range(len(configs)) for seed in seed_list]
    seeds_of = [searches[i * len(seed_list):(i + 1) * len(seed_list)] for i in range(len(configs))]
    while True:
        live = [s for s in searches if not s.done]
        if not live:
            break
        outcomes = searcher.evaluate([(s.config, s.seed, s.rate) for s in live])
        for s, summary in zip(live, outcomes, strict=True):
            if s.done:           # ended by another seed's refused request in this round
                continue
            failed = misses(summary, slo)
            if "requests_rejected" in failed:       # a request never fits: no rate helps
                searcher.refused.setdefault(s.config, (s.rate, s.seed, summary))
                for other in seeds_of[s.config]:
                    other.done = True
                continue
            s.record(not failed, failed, (lowest, highest), rel_tol)
    results = searcher.conclude(searches, gpus, (lowest, highest))
    return Plan(tuple(results), dict(slo), tuple(seed_list), rel_tol, len(searcher.memo),
                searcher.made, searcher.batches, checked_prices)


class _BatchOptions(NamedTuple):
    """How :func:`kvsim.runs.sweeps.run_batch` runs a round: as :func:`plan` was told."""

    executor: Executor | None
    chunk_size: int | None
    progress: bool | None


class _Searcher:
    """Runs the searches' rates in batches, each distinct run once (memo), through the cache."""

    def __init__(self, configs: list[Configuration], traffic: Traffic, slo: dict[str, float],
                 seeds: list[int], duration_s: float, warmup_s: float, store: SummaryCache | None,
                 batch_options: _BatchOptions) -> None:
        self.configs, self.traffic, self.slo, self.seeds = configs, traffic, slo, seeds
        self.duration_s, self.warmup_s, self.store = duration_s, warmup_s, store
        self.batch_options = batch_options
        self.digest = traffic.digest()
        # (config, seed, rate) -> the summary's keys the verdicts read (a study of 10^4
        # configurations holds some 250,000 of them: not whole summaries)
        self.memo: dict[RunPoint, dict[str, SummaryValue]] = {}
        self.made = 0
        self.batches = 0                   # rounds that ran (or read back) something
        self.refused: dict[int, tuple[float, int, dict[str, SummaryValue]]] = {}

    def _key(self, config: int, seed: int, rate: float) -> str | None:
        if self.store is None:
            return None
        settings = {**self.configs[config][1], "rate_per_s": rate, "duration_s": self.duration_s,
                    "warmup_s": self.warmup_s, "traffic": self.digest}
        return run_key(CACHE_NAME, settings, seed)

    def evaluate(self, wanted: list[RunPoint]) -> list[dict[str, SummaryValue]]:
        """The summaries of the ``(config, seed, rate)`` runs, running only those not yet run
        (in one batch: a round)."""
        new = sorted({w for w in wanted if w not in self.memo})
        if new:
            self.batches += 1
            label = f"plan round {self.batches}"
            tasks = [_PlannedRun(self.configs[c][1], self.traffic, rate, seed, self.duration_s,
                                 self.warmup_s) for c, seed, rate in new]
            keys = [self._key(c, seed, rate) for c, seed, rate in new]
            stats: dict[str, int] = {}
            options = self.batch_options
            summaries = run_batch(_run_planned, tasks, keys, executor=options.executor,
                                  chunk_size=options.chunk_size, progress=options.progress,
                                  store=self.store, label=label, stats=stats)
            self.made += stats["made"]
            kept = ["requests_rejected", *_reported_keys(self.slo)]
            for run, summary in zip(new, summaries, strict=True):
                self.memo[run] = {k: summary[k] for k in kept}
        return [self.memo[w] for w in wanted]

    def conclude(self, searches: list[_Search], gpus: list[str],
                 bounds: tuple[float, float]) -> list[ConfigPlan]:
        by_config: dict[int, list[_Search]] = {}
        for s in searches:
            by_config.setdefault(s.config, []).append(s)
        rates = {i: min((s.low or 0.0) for s in group) for i, group in by_config.items()}
        confirm = [(i, seed, rate) for i, rate in rates.items() if rate > 0
                   and i not in self.refused for seed in self.seeds]
        self.evaluate(confirm)
        runs_of = Counter(c for c, _, _ in self.memo)
        out = []
        for i, group in sorted(by_config.items()):
            point, settings = self.configs[i]
            rate = rates[i] if i not in self.refused else 0.0
            setter = min(group, key=lambda s: (s.low or 0.0, s.seed))
            runs = runs_of[i]
            at_rate: dict[str, float] = {}
            failing: tuple[int, ...] = ()
            if rate > 0:
                there = [self.memo[(i, seed, rate)] for seed in self.seeds]
                at_rate = {k: float(statistics.median(float(s[k]) for s in there))
                           for k in _reported_keys(self.slo)}
                failing = tuple(seed for seed, s in zip(self.seeds, there, strict=True)
                                if misses(s, self.slo))
            infeasible, reason = self._why_not(i, setter, rate, bounds)
            if failing:
                reason += (f"; but seed(s) {', '.join(map(str, failing))} fail at it (their SLO "
                           f"is not monotone in the rate)")
            capped = rate > 0 and setter.high is None
            out.append(ConfigPlan(
                point=dict(point), settings=dict(settings), rate_per_s=rate,
                failing_rate_per_s=setter.high if i not in self.refused else None,
                seed_rates=tuple((s.low or 0.0) if i not in self.refused else 0.0
                                 for s in group),
                seed_failing_rates=tuple(s.high for s in group),
                capped=capped, limited_by=setter.limited_by if i not in self.refused
                else "requests_rejected", infeasible=infeasible, reason=reason, runs=runs,
                gpu=gpus[i], gpus_per_replica=int(settings.get("tensor_parallel_size", 1)),
                at_rate=at_rate, failing_seeds=failing))
        return out

    def _why_not(self, config: int, setter: _Search, rate: float,
                 bounds: tuple[float, float]) -> tuple[str | None, str]:
        """``(infeasible kind or None, one line)`` for a configuration."""
        if config in self.refused:
            at, seed, summary = self.refused[config]
            return "capacity", (f"capacity: {summary['requests_rejected']} request(s) at "
                                f"{at:g} req/s (seed {seed}) can never run in this "
                                f"configuration (the pool or max_model_len is too small)")
        if rate > 0:
            if setter.high is None:
                return None, (f"holds the SLO up to max_rate_per_s={bounds[1]:g} req/s on every "
                              f"seed (the rate is a lower bound)")
            return None, (f"{rate:g} req/s on every seed; {setter.high:g} req/s fails "
                          f"{setter.limited_by} (seed {setter.seed})")
        assert setter.high is not None, "a search that never passed failed at some rate"
        summary = self.memo[(config, setter.seed, setter.high)]
        key = misses(summary, self.slo)[0]
        limit = self.slo[key]
        side = "<" if key in SLO_LOWER_LIMITS else ">"
        preempted = _measure(summary, "preemptions_per_1k")
        kind = "preemption" if preempted > 0 else "queueing"
        with_what = ("" if key == "preemptions_per_1k" else
                     f" with {preempted:.0f} preemptions per 1,000" if preempted > 0
                     else " with no preemption")
        return kind, (f"{kind}: at the lowest rate searched, {setter.high:g} req/s (seed "
                      f"{setter.seed}), {key} = {float(summary[key]):.3g} {side} {limit:g}"
                      f"{with_what}")

