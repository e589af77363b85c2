"""The engine: the scheduler driven against a simulated clock, step by step (and jump by jump).

``simulate(workload, model=..., gpu=..., **engine_options)`` runs the
scheduler of design §3 (:mod:`kvsim.engine.scheduler`) until every arrived request
has finished (or ``until_s``). Explained in chapter 2, *Optimistic admission
and preemption*.

The loop: the scheduler takes the requests that have arrived
(:mod:`kvsim.traffic.arrivals`) and plans the step
(:meth:`kvsim.engine.scheduler.Scheduler.schedule`: its running requests, then
admission, as a :class:`kvsim.engine.plan.StepPlan`); the cost model prices the
plan (:meth:`kvsim.engine.costs.StepCost.plan_s`, one formula for every batch:
decodes, prefill chunks, swap copies); the scheduler applies it for that long
(its tokens, finishes, and the step's record in :mod:`kvsim.engine.timeline`).
The engine owns no request state: it reads the scheduler's only through
:meth:`Engine.snapshot` and the ``steps`` and ``t`` properties.

Speed: between events (an arrival, a finish, a block shortage, a prefill)
every step is a pure decode step whose effect is known in closed form
(:mod:`kvsim.engine.blocks.decode_group`), so the engine executes runs of them at once ("event
jumps", :meth:`Engine._time_decode_run`). ``step_by_step=True`` turns jumps off;
the tests prove both give byte-identical results, and match an independent
reference engine (tests/reference_engine.py).
"""
from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from kvsim.errors import KvsimError
from kvsim.traffic.arrivals import make_arrivals
from kvsim.traffic.workload import Request, Workload
from kvsim.units import UNLIMITED

from .options import ENGINE_DEFAULTS, resolve_options
from .plan import DECODE_RUN, LOAD_WAIT, StepPlan
from .result import SimResult, build_result, host_tier_table
from .scheduler import Scheduler, SchedulerSnapshot
from .step_cost import StepCost
from .timeline import Recorder, RunTiming

if TYPE_CHECKING:
    from kvsim.model.hardware import GPUSpec
    from kvsim.model.spec import ModelSpec
    from kvsim.traffic.arrivals import ClosedArrivals, OpenArrivals

    from .costs import GPULike, ModelLike
    from .options import EngineConfig

__all__ = ["simulate", "build_engine", "Engine", "ENGINE_DEFAULTS"]

_INF = math.inf


def simulate(workload: Workload | Request | Sequence[Request], *, model: ModelLike, gpu: GPULike,
             **engine_options: Any) -> SimResult:
    """Run ``workload`` on one engine serving ``model`` on ``gpu``.

    Args:
        workload: a :class:`kvsim.Workload` or a list of :class:`kvsim.Request`.
        model: a preset name, a :class:`kvsim.ModelSpec` or a ``config.json`` path.
        gpu: a preset name or a :class:`kvsim.GPUSpec`.
        **engine_options: see :data:`ENGINE_DEFAULTS` (``engine="v1"`` or
            ``"v0"`` decides the defaults) and the cost-model constants of
            :class:`kvsim.CostModel`. The engine draws no random numbers: the
            same workload and options give byte-identical results; ``seed`` is
            recorded in ``result.config``, randomness lives in the workload.

    Raises:
        KvsimError: a bad option, or a request that can never fit the pool
            or the model's context (named, with its sizes and the limit).

    Explained in chapter 2, *Optimistic admission and preemption*.
    """
    if isinstance(workload, (list, tuple)):
        workload = Workload.from_requests(workload)
    elif isinstance(workload, Request):
        workload = Workload.from_requests([workload])
    if not isinstance(workload, Workload):
        raise KvsimError(f"workload={type(workload).__name__} is not supported: expected a "
                         "kvsim.Workload or a list of kvsim.Request")
    return build_engine(workload, model, gpu, engine_options).run()


def build_engine(workload: Workload, model: ModelLike, gpu: GPULike,
                 engine_options: Mapping[str, Any]) -> Engine:
    """The engine :func:`simulate` runs, not yet started (:mod:`kvsim.runs.stepper` watches it step)."""
    model, gpu, budget, cost_model, cfg = resolve_options(model, gpu, engine_options)
    cost = StepCost(model, gpu, cost_model, tensor_parallel_size=cfg.tensor_parallel_size,
                    kv_bytes_per_token=cfg.kv_bytes_per_token, engine=cfg.engine,
                    async_scheduling=cfg.async_scheduling)
    return Engine(workload, model, gpu, cost, cfg)


class Engine:
    """A clock, a cost model and a loop around a :class:`kvsim.engine.scheduler.Scheduler`.

    ``run(after_step)`` calls ``after_step(engine)`` after every step, which
    may read ``engine.steps``, ``engine.t`` and ``engine.snapshot()``.
    """

    def __init__(self, wl: Workload, model: ModelSpec, gpu: GPUSpec, cost: StepCost,
                 cfg: EngineConfig) -> None:
        self.cfg, self.model, self.gpu, self.cost = cfg, model, gpu, cost
        self.until = cfg.until_s if cfg.until_s is not None else math.inf
        self.arrivals: OpenArrivals | ClosedArrivals = make_arrivals(
            wl, until_s=self.until, max_tokens=cfg.max_tokens, max_model_len=cfg.max_model_len)
        self.scheduler = Scheduler(cfg, model, self.arrivals, Recorder(), transfer_s=cost.transfer_s)
        self._fixed_s: dict[int, float] = {}    # step time of n decodes, without attention
        # asynchronous scheduling: per batch size, _async_step_costs
        self._async_costs: dict[int, tuple[float, float, int]] = {}
        self._decode_slope = cost.decode_s_per_unit
        self._async = cost.async_scheduling

    @property
    def steps(self) -> int:
        """Steps executed so far."""
        return self.scheduler.step

    @property
    def t(self) -> float:
        """Simulated time (s) at the end of the last step."""
        return self.scheduler.now_s

    def snapshot(self) -> SchedulerSnapshot:
        """The scheduler's state now, read-only (:meth:`kvsim.engine.scheduler.Scheduler.snapshot`)."""
        return self.scheduler.snapshot()

    # ------------------------------------------------------------------ run
    def run(self, after_step: Callable[[Engine], object] | None = None) -> SimResult:
        """Run to the end; ``after_step(engine)``, when given, is called after every step."""
        sched, arrivals, until, check = self.scheduler, self.arrivals, self.until, self.cfg.check
        if check:                  # imported when asked for, not at every run's start-up
            from .invariants import check_finished, check_invariants
        schedule, apply, apply_decode_run = sched.schedule, sched.apply, sched.apply_decode_run
        cost = self.cost        # compiled, a direct call of its plan_s (not a bound method)
        # the decode runs' timing, chosen once (the two forms take the same arguments)
        time_run = self._time_async_decode_run if self._async else self._time_sync_decode_run
        running, waiting, swapped = sched.running, sched.waiting, sched.swapped  # never rebound
        loading = sched.loading
        while True:
            arrival = arrivals.next_time()
            if not (running or waiting or swapped or loading):
                if arrival == math.inf or arrival >= until:
                    break
                sched.idle_until(arrival)
            t = sched.now_s
            if t >= until:
                break
            if arrival <= t:
                sched.pull_arrivals(t)
                if not (running or waiting or swapped or loading):
                    continue                   # every request that arrived was refused
            # one step: plan it, price it, apply it (a decode run: several identical steps)
            plan = schedule()
            if plan.kind == DECODE_RUN:
                ends, timing = time_run(sched.now_s, plan.n_group, plan.max_steps,
                                        plan.context_tokens, plan.context_growth)
                apply_decode_run(plan, ends, timing)
            elif plan.kind == LOAD_WAIT:          # no step until a load or an arrival
                sched.idle_until(min(plan.wait_until_s, arrival, until))
                continue
            else:
                apply(plan, cost.plan_s(plan))
            if check:
                check_invariants(sched)
            if after_step is not None:
                after_step(self)
        sched.pull_arrivals(min(sched.now_s, math.nextafter(until, 0.0)))
        if check:
            check_finished(sched)
        sched.end_run()
        config = dict(self.cfg.to_dict(), model=self.model.name, gpu=self.gpu.name)
        tier = None if sched.tier is None else host_tier_table(
            sched.tier_log, self.cfg.block_bytes, self.cost.pcie_bytes_per_s)
        return build_result(sched.requests, sched.rec, config, sched.counters(), tier)

    def _time_decode_run(self, plan: StepPlan) -> tuple[list[float], RunTiming]:
        """End times of the decode steps that run (at most ``plan.max_steps``, and none that
        starts at or after the next arrival or ``until_s``) and what their durations follow
        from (:data:`kvsim.engine.timeline.RunTiming`: the recorder keeps that, not the
        durations)."""
        time_run = self._time_async_decode_run if self._async else self._time_sync_decode_run
        return time_run(self.scheduler.now_s, plan.n_group, plan.max_steps, plan.context_tokens,
                        plan.context_growth)

    def _time_sync_decode_run(self, t0: float, n: int, k: int, context: int,
                              growth: int) -> tuple[list[float], RunTiming]:
        """:meth:`_time_decode_run` of ``k`` steps of ``n`` sequences from ``t0``, the first
        attending to ``context`` (the cost model's units, :class:`kvsim.engine.costs.AttentionSpan`)
        and each the next ``growth`` more, without asynchronous scheduling: each step lasts
        ``fixed + slope * context``, the sum :meth:`StepCost.step_s` makes step by step."""
        fixed = self._fixed_s.get(n)
        if fixed is None:
            fixed = self._fixed_s[n] = self.cost.fixed_s(n, n)
        slope = self._decode_slope
        timing = (context, growth, fixed, slope, 0.0, 0)   # never CPU-bound
        first = fixed + slope * context
        if k == 1:                                 # one step (the commonest case)
            return [t0 + first], timing
        lim = self.arrivals.next_time()        # no step starts at or after it, nor until_s
        if self.until < lim:
            lim = self.until
        if lim < _INF:
            # Steps only lengthen as the context grows, so no more than (lim - t0) / (first
            # step's time) of them end before lim: + 1 for the step that straddles lim, + 1
            # for the division's rounding. The exact cut is the bisect below.
            kt = int((lim - t0) / first) + 2
            if kt < k:
                k = kt
        # the same sum, step by step, that single steps make (byte-identical times)
        if growth:
            dts = [fixed + slope * c for c in range(context, context + k * growth, growth)]
        else:                                  # every member at its window (every layer sliding)
            dts = [first] * k
        ends = list(accumulate(dts, initial=t0))
        del ends[0]
        if lim < _INF and k > 1:               # keep the steps that start before lim
            del ends[1 + bisect_left(ends, lim, 0, k - 1):]
        return ends, timing

    def _time_async_decode_run(self, t0: float, n: int, k: int, context: int,
                               growth: int) -> tuple[list[float], RunTiming]:
        """:meth:`_time_sync_decode_run` under asynchronous scheduling: each step lasts the
        larger of its GPU time and its CPU time, the sum :meth:`StepCost.step_s` makes step
        by step."""
        costs = self._async_costs.get(n)
        if costs is None:
            costs = self._async_costs[n] = self._async_step_costs(n)
        gpu_fixed, cpu, gpu_bound_from = costs
        slope = self._decode_slope
        timing = (context, growth, gpu_fixed, slope, cpu, gpu_bound_from)
        first = gpu_fixed + slope * context
        if first < cpu:
            first = cpu
        if k == 1:
            return [t0 + first], timing
        lim = self.arrivals.next_time()        # no step starts at or after it, nor until_s
        if self.until < lim:
            lim = self.until
        if lim < _INF:
            kt = int((lim - t0) / first) + 2     # steps only lengthen: as in the sync form
            if kt < k:
                k = kt
        # The step whose context reaches gpu_bound_from is the first the GPU's time decides:
        # the steps before it last cpu, so no per-step max (a third of the run's timing).
        stop = context + k * growth
        if not growth:                         # every member at its window (every layer sliding)
            dts = [first] * k
        elif context >= gpu_bound_from:
            dts = [gpu_fixed + slope * c for c in range(context, stop, growth)]
        elif stop - growth < gpu_bound_from:
            dts = [cpu] * k
        else:
            cpu_steps = -(-(gpu_bound_from - context) // growth)
            dts = [cpu] * cpu_steps
            dts += [gpu_fixed + slope * c for c in range(context + cpu_steps * growth, stop, growth)]
        ends = list(accumulate(dts, initial=t0))
        del ends[0]
        if lim < _INF and k > 1:
            del ends[1 + bisect_left(ends, lim, 0, k - 1):]
        return ends, timing

    def _async_step_costs(self, n: int) -> tuple[float, float, int]:
        """A decode step of ``n`` sequences under asynchronous scheduling: its GPU time without
        attention, its CPU time, and the least context (units) from which the GPU's time
        ``gpu_fixed + slope * context`` is at least the CPU's (``UNLIMITED`` if it never is)."""
        gpu_fixed, cpu, slope = self.cost.fixed_gpu_s(n, n), self.cost.cpu_s(n), self._decode_slope
        if gpu_fixed >= cpu:
            return gpu_fixed, cpu, 0
        if slope <= 0.0:
            return gpu_fixed, cpu, UNLIMITED
        # the quotient's rounding may be off by a token either way: settle it with the
        # comparison the step makes (monotone in the context)
        context = max(0, math.floor((cpu - gpu_fixed) / slope))
        while gpu_fixed + slope * context < cpu:
            context += 1
        while context > 0 and gpu_fixed + slope * (context - 1) >= cpu:
            context -= 1
        return gpu_fixed, cpu, context
