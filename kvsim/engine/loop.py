"""The engine: the scheduler driven against a simulated clock, step by step (and jump by jump).

``simulate(workload, model=..., gpu=..., **engine_options)`` runs the
scheduler of design §3 (:mod:`kvsim.engine.scheduler`) until every arrived request
has finished (or ``until_s``). Explained in chapter 2, *Optimistic admission
and preemption*.

The loop: pull the requests that have arrived (:mod:`kvsim.traffic.arrivals`), let
the scheduler decide the step (its running requests, then admission), give
the step its duration from :class:`kvsim.engine.costs.StepCost` (one formula for
every batch: decodes, prefill chunks, swap copies), advance the clock, let the
scheduler apply the step's tokens, record the step (:mod:`kvsim.engine.timeline`).

Speed: between events (an arrival, a finish, a block shortage, a prefill)
every step is a pure decode step whose effect is known in closed form
(:mod:`kvsim.engine.decoding`), so the engine executes runs of them at once ("event
jumps", :meth:`_Engine._decode_run`). ``step_by_step=True`` turns jumps off;
the tests prove both give byte-identical results, and match an independent
reference engine (tests/reference_engine.py).
"""
from __future__ import annotations

import math
from bisect import bisect_left
from itertools import accumulate

from kvsim.errors import KvsimError
from kvsim.traffic.arrivals import make_arrivals
from kvsim.traffic.workload import Request, Workload
from kvsim.units import UNLIMITED

from .costs import StepCost, attention_pairs
from .fit import check_requests_fit
from .invariants import check_finished, check_invariants
from .options import ENGINE_DEFAULTS, resolve_options
from .result import SimResult, build_result
from .scheduler import Scheduler
from .timeline import Recorder

__all__ = ["simulate", "ENGINE_DEFAULTS"]

_INF = math.inf



def simulate(workload, *, model, gpu, **engine_options) -> SimResult:
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


def build_engine(workload: Workload, model, gpu, engine_options: dict) -> "_Engine":
    """The engine :func:`simulate` runs, not yet started (:mod:`kvsim.runs.stepper` watches it step)."""
    model, gpu, budget, cost_model, cfg = resolve_options(model, gpu, engine_options)
    cost = StepCost(model, gpu, cost_model, tensor_parallel_size=cfg.tensor_parallel_size,
                    kv_bytes_per_token=cfg.kv_bytes_per_token, engine=cfg.engine)
    return _Engine(workload, model, gpu, cost, cfg)


class _Engine(Scheduler):
    """The scheduler (:class:`kvsim.engine.scheduler.Scheduler`) with a clock, a cost model and a loop."""

    def __init__(self, wl: Workload, model, gpu, cost: StepCost, cfg):
        until = cfg.until_s if cfg.until_s is not None else math.inf
        arrivals = make_arrivals(wl, until_s=until, max_tokens=cfg.max_tokens,
                                 max_model_len=cfg.max_model_len)
        super().__init__(cfg, model, arrivals, Recorder())
        self.gpu, self.cost, self.until = gpu, cost, until
        self.max_jump = 1 if cfg.step_by_step else UNLIMITED
        self.max_prefill = self.kv.most_blocks_alone    # the most one request may ever hold
        self.closed_loop = wl.is_closed_loop
        if not wl.is_closed_loop:               # every request is known: check and table them
            check_requests_fit(cfg, model.name, arrivals.prompt, arrivals.output,
                               max_blocks=self.max_prefill)
            self.requests.add_all(arrivals.times, arrivals.prompt, arrivals.output,
                                  arrivals.priority)
        self._policy_counts_steps = self.policy.counts_steps
        self._policy_stays_blocked = self.policy.stays_blocked
        self._policy_acts_before_step = self.policy.acts_before_step
        self._swapping = cfg.preemption_mode == "swap"
        self._fixed_s: dict[int, float] = {}    # step time of n decodes, without attention
        self._decode_slope = cost.decode_s_per_token

    # ------------------------------------------------------------- arrivals
    def _pull_arrivals(self, t: float) -> None:
        arrivals = self.arrivals
        if not self.closed_loop:                # their columns are filled: register them
            first = self.requests.count
            self.requests.count = end = arrivals.pull_until(t)
            for rid in range(first, end):
                self.add_request(rid, *arrivals.prefix_of(rid), -(rid + 1))
            return
        for req, user in arrivals.pull(t):
            check_requests_fit(self.cfg, self.model.name, [req.prompt_tokens],
                               [req.output_tokens], first=req.index, max_blocks=self.max_prefill)
            rid = self.requests.add(req.arrival_s, req.prompt_tokens, req.output_tokens,
                                    req.priority)
            arrivals.bind(rid, user)
            self.add_request(rid, req.prefix_group, req.prefix_tokens,
                             req.session if req.session >= 0 else -(rid + 1))

    # ------------------------------------------------------------------ run
    def run(self, after_step=None) -> SimResult:
        """Run to the end; ``after_step(engine)``, when given, is called after every step."""
        arrivals, until, check = self.arrivals, self.until, self.cfg.check
        while True:
            arrival = arrivals.next_time()
            if not (self.running or self.waiting or self.swapped):
                if arrival == math.inf or arrival >= until:
                    break
                if arrival > self.t:
                    self.t = arrival
            if self.t >= until:
                break
            if arrival <= self.t:
                self._pull_arrivals(self.t)
            self.step()
            if check:
                check_invariants(self)
            if after_step is not None:
                after_step(self)
        self._pull_arrivals(min(self.t, math.nextafter(self.until, 0.0)))
        if check:
            check_finished(self)
        return self._result()

    def step(self) -> None:
        """Schedule step ``T``; execute it, or a run of identical decode steps."""
        cfg, kv, group = self.cfg, self.kv, self.decoding
        self.step_preemptions = self.step_recomputed = 0
        if self._swapping:
            self.swap.new_step()
        if self._policy_acts_before_step:
            self.policy.before_step()
        n_group = group.size
        if n_group and not self.prefilling and not self.waiting and not self.swapped \
                and not self.unstalled and n_group <= cfg.max_num_batched_tokens:
            need = group.new_blocks(self.T)
            if need <= kv.free:                    # the common case: only decodes, all fit
                kv.take(need)
                self._decode_run(self.t)
                return
        # 1. running requests; 2. admission, only if nothing was preempted
        chunks, solo, budget = self._schedule_running(cfg.max_num_batched_tokens)
        n_group = group.size
        resumed = ()
        admitted = False
        if self.step_preemptions == 0 and (self.swapped or self.waiting):
            if self.swapped:                       # V0: swapped requests come back first
                resumed, budget = self.swap.swap_in(self, budget)
            admitted = self._admit(chunks, budget)
        if chunks or solo or resumed:
            self._execute(chunks, solo, resumed, n_group)
        elif n_group:
            if admitted or self.step_preemptions or self.stalled or self.unstalled:
                self._execute(chunks, solo, resumed, n_group)
            else:
                self._decode_run(self.t)
        elif self.step_preemptions:
            # Everything that could run was evicted: a step that computes
            # nothing and lasts as long as its swap copies, if any.
            dt = self.cost.swap_s(self.swap.out_bytes, self.swap.copies)
            self.step_tokens = 0
            self.t, self.T = self.t + dt, self.T + 1
            self._requeue_stalled()
            self._record(self.t, dt, dt, 0, 0, 0, 0)
        else:
            raise RuntimeError("kvsim engine made no progress (internal error): "
                               f"t={self.t}, waiting={len(self.waiting)}, free={kv.free}")

    def _execute(self, chunks: list, solo: list, resumed, n_group: int) -> None:
        """Steps 3 and 4: the scheduled batch's duration, then its tokens."""
        reqs, group = self.requests, self.decoding
        t0, T = self.t, self.T
        # 3. the step's duration: one formula for the whole batch
        decode_seqs = n_group + len(solo) + len(resumed)
        context = group.context(T) if n_group else 0
        if solo:
            context += sum(self._stored(r) + 1 for r in solo)
        if resumed:
            context += sum(reqs.prompt[r] + reqs.generated[r] for r in resumed)
        pairs = kv_tokens = prefill_tokens = 0
        for _, start, c in chunks:
            pairs += attention_pairs(start, c)
            kv_tokens += start + c
            prefill_tokens += c
        swap = self.swap
        self.step_tokens = decode_seqs + prefill_tokens
        dt = self.cost.step_s(decode_seqs + prefill_tokens, decode_seqs + len(chunks), context,
                              pairs, kv_tokens, swap.out_bytes + swap.in_bytes, swap.copies)
        t1 = t0 + dt
        self.t, self.T = t1, T + 1

        # 4. effects
        self.stall_ends = 0
        emitted = decode_seqs
        for rid in resumed:
            self._emit(rid, t1)
        for rid in solo:
            self._emit(rid, t1)
            self.rec.stint(rid, T, T + 1)
        computed, target, prefilling = reqs.computed, reqs.target, self.prefilling
        for rid, start, c in chunks:
            if reqs.high[rid] > start:
                self._recomputed(rid, start, c)
            computed[rid] = start + c
            if computed[rid] >= target[rid]:
                del prefilling[rid]
                emitted += 1
                self._emit(rid, t1)
        if n_group:
            if self.unstalled:
                for rid in self.unstalled:         # their first token after the stall
                    if rid in group:
                        self._end_pause(rid, t1)
                self.unstalled = []
            if group.next_finish_step() <= T:
                self._finish_decoders(T, t1)
        else:
            self.unstalled = []
        if self.stalled:
            self._requeue_stalled()
        if self._policy_counts_steps:
            self.policy.stepped(1)
        self._record(t1, dt, t1 - t0, n_group + len(solo) - self.stall_ends, prefill_tokens,
                     decode_seqs, emitted)

    # ------------------------------------------------------ decode runs
    def _decode_run(self, t0: float) -> None:
        """Execute k >= 1 pure decode steps (the blocks of the first are taken).

        Stops at the first finish, before the first step that needs more
        blocks than are free, before the first step that starts at or after
        the next arrival or ``until_s``, and after one step when the policy
        might admit a waiting request in the next step.
        """
        kv, group, bs = self.kv, self.decoding, self.bs
        pool = kv.pool
        T, n = self.T, group.size
        self.step_tokens = n                       # each of the k steps: one token per member
        k = group.next_finish()[0] - T + 1
        if k > self.max_jump or ((self.waiting or self.swapped) and not self._policy_stays_blocked):
            k = 1
        blank0, cached0 = pool.blank, pool.cached_free
        free = blank0 + cached0
        if k > 1 and free < n * ((k - 2) // bs + 1):   # the free blocks might not last k steps
            k = 1 + group.steps_until_short(T + 1, free, k - 1)
        context = group.offset_sum + n * (T + 1)
        fixed = self._fixed_s.get(n)
        if fixed is None:
            fixed = self._fixed_s[n] = self.cost.fixed_s(n, n)
        slope = self._decode_slope
        lim = self.arrivals.next_time()
        if self.until < lim:
            lim = self.until
        if k > 1 and lim < _INF:
            # Steps only lengthen as the context grows, so no more than (lim - t0) / (first
            # step's time) of them end before lim: + 1 for the step that straddles lim, + 1
            # for the division's rounding. The exact cut is the bisect below.
            kt = int((lim - t0) / (fixed + slope * context)) + 2
            if kt < k:
                k = kt
        # the same sum, step by step, that single steps make (byte-identical times)
        dts = [fixed + slope * c for c in range(context, context + k * n, n)]
        ends = accumulate(dts, initial=t0)
        next(ends)
        ends = list(ends)
        if lim < _INF and k > 1:               # keep the steps that start before lim
            k = 1 + bisect_left(ends, lim, 0, k - 1)
            del dts[k:], ends[k:]
        t1 = ends[-1]
        crossings = group.crossings.copy()         # before this run's finishes change it
        if k > 1:                                  # the blocks of steps T+1 .. T+k-1
            pool.take(group.new_blocks_between(T + 1, T + k))
        self.t, self.T = t1, T + k
        if self._policy_counts_steps:
            self.policy.stepped(k)
        waiting, swapped = len(self.waiting), len(self.swapped)
        used0 = kv.num_blocks - free
        if group.next_finish_step() <= T + k - 1:
            self._finish_decoders(T + k - 1, t1)
        self.rec.decode_run(t0, ends, dts, T, crossings, used0, blank0, cached0,
                            kv.num_blocks - pool.blank - pool.cached_free, pool.cached_free,
                            n, waiting, swapped, len(self.running),
                            waiting + self.arrivals.arrived_by(t1))

    def _record(self, t1, dt, gap, decoding, prefill_tokens, decode_tokens, emitted) -> None:
        pool, swap = self.kv.pool, self.swap
        self.rec.step(t1, dt, gap, self.kv.num_blocks - pool.blank - pool.cached_free,
                      pool.cached_free,
                      (len(self.running), len(self.waiting) + self.arrivals.arrived_by(t1),
                       len(self.swapped), self.step_preemptions, decoding, prefill_tokens,
                       decode_tokens, emitted, swap.out_bytes, swap.in_bytes,
                       self.step_recomputed))

    # --------------------------------------------------------------- result
    def _result(self) -> SimResult:
        for rid in list(self.decoding.offset):     # requests still decoding: materialise them
            self.requests.last_token[rid] = self.t
            self._leave_decoding(rid)
        return build_result(self)
