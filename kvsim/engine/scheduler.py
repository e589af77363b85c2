"""The scheduler: which requests run in the next step, and what their tokens change.

Explained in chapter 2, *Optimistic admission and preemption*. It follows
vLLM's ``Scheduler`` (V1 by default, vllm/v1/core/sched/scheduler.py;
``engine="v0"`` for vllm/core/scheduler.py): :meth:`Scheduler.schedule` is its
``schedule()`` and returns a :class:`kvsim.engine.plan.StepPlan` (its
``SchedulerOutput``); :meth:`Scheduler.apply` is its ``update_from_output()``.
The step's duration (the cost model prices the plan) and the jumps over
identical decode steps are the engine's (:mod:`kvsim.engine.loop`). The
scheduler asks the KV cache manager for blocks and never counts them itself;
a policy reads it through :class:`kvsim.engine.policies.SchedulerView`.

One step:

1. **Running requests**, in admission order (V0: decodes first, then prefill
   chunks). Each asks the KV cache manager (:mod:`kvsim.engine.blocks`) for the
   blocks of its next tokens: one decode token, or a prefill chunk of
   ``min(remaining, long_prefill_token_threshold, budget)``. When none are
   free, the policy's victim (:mod:`kvsim.engine.policies`; vLLM: the last admitted)
   is preempted, possibly the request itself, which ends the pass. A victim is
   swapped out (V0, ``preemption_mode="swap"``, :mod:`kvsim.engine.swapping`) or its
   blocks are freed (and stay cached) and it goes to the *front* of the
   waiting queue (:mod:`kvsim.engine.waiting`).
2. **Admission**, only if nothing was preempted in this step: V0 brings
   swapped requests back first; then waiting requests in order, while
   ``max_num_seqs`` and the token budget allow and the policy admits them. A
   request that does not fit stops admission (nobody skips ahead). V1 looks
   up the prefix cache first and allocates the first chunk's blocks, gating on
   the whole prompt fitting (``scheduler_reserve_full_isl``); V0 allocates
   the whole prompt.
3. **After the step**, decoding requests emit one token; a request whose
   prefill completes emits its first token (or, after a recompute, its next
   one); a request that has its last token finishes and frees its blocks.

Decoding requests live in a :class:`kvsim.engine.blocks.decode_group.DecodeGroup` (their
stored tokens follow from the step counter ``step``); every other request's state
is in :class:`kvsim.engine.requests.RequestTable`. Where kvsim deliberately differs
from the engine it models, the line carries a ``NOTE(tag)`` that
``book/engine-reference.md`` lists.

Legend: ``step`` the engine's step counter (steps executed), ``now_s`` its clock;
in a method, ``T`` is a copy of ``step`` (``T_next``, ``T_last``: other steps),
``t0``/``t1`` a step's start and end, ``c`` a chunk's tokens, ``rid`` a request.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

from kvsim.units import UNLIMITED

from .blocks import IN_DECODE_GROUP, KVCacheManager, WindowCacheManager, block_position, blocks_for
from .blocks.host_tier import HICACHE_LOAD_BACK_THRESHOLD, HostTier, TierOp
from .blocks.pool import NO_HIT
from .costs import transfer_copies
from .fit import check_requests_fit, unfit_reasons
from .plan import BATCH, DECODE_RUN, EVICTED, LOAD_WAIT, StepPlan
from .policies import make_policy
from .requests import RequestTable
from .step_cost import AttentionSpan
from .suspension import deadlock_error, may_resume
from .swapping import SwapSpace
from .waiting import make_waiting_queue

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from kvsim.model.spec import ModelSpec

    from .blocks.pool import Hit
    from .options import EngineConfig
    from .plan import Chunk
    from .timeline import Recorder, RunTiming

#: The request source: :class:`kvsim.traffic.arrivals.OpenArrivals` or ``ClosedArrivals``. Any,
#: not their union: the scheduler calls each one's own methods after testing ``closed_loop``,
#: which a type checker cannot narrow on (a precise type needs one source interface).
Arrivals: TypeAlias = Any

__all__ = ["Scheduler", "SchedulerSnapshot", "RequestView", "REQUEST_STATES", "PauseMode", "RECOMPUTE", "SWAP",
           "STALL"]

class PauseMode(IntEnum):
    """Why a request pauses: the ``mode`` of ``SimResult.pauses`` and ``events`` rows."""

    RECOMPUTE = 0   #: preempted, its KV freed: prefilled again
    SWAP = 1        #: preempted, its KV copied to CPU memory (V0)
    STALL = 2       #: running, but given no token in a step (out of budget or blocks)


RECOMPUTE, SWAP, STALL = PauseMode.RECOMPUTE, PauseMode.SWAP, PauseMode.STALL

#: States of a request in a :class:`SchedulerSnapshot`, in the order a request meets them.
REQUEST_STATES = ("not arrived", "waiting", "prefilling", "decoding", "preempted", "swapped",
                  "finished")


def _kv_manager(cfg: EngineConfig) -> KVCacheManager:
    """The run's KV manager: block counts, or, for sliding windows with the prefix cache on,
    block by block (:class:`kvsim.engine.blocks.WindowCacheManager`)."""
    window = cfg.sliding_window if cfg.kv_window_groups else 0
    lag = 1 if cfg.async_scheduling else 0
    if cfg.kv_window_groups and cfg.enable_prefix_caching:
        return WindowCacheManager(
            cfg.num_gpu_blocks, cfg.block_size, watermark_blocks=cfg.watermark_blocks,
            watermark_when_alone=cfg.watermark_when_alone, window=window,
            groups=cfg.kv_cache_groups, window_groups=cfg.kv_window_groups, window_lag=lag,
            window_cap=cfg.window_cap_blocks,
            retention_interval=cfg.prefix_cache_retention_interval)
    return KVCacheManager(cfg.num_gpu_blocks, cfg.block_size,
                          prefix_caching=cfg.enable_prefix_caching,
                          watermark_blocks=cfg.watermark_blocks,
                          watermark_when_alone=cfg.watermark_when_alone, window=window,
                          groups=cfg.kv_cache_groups, window_groups=cfg.kv_window_groups,
                          window_lag=lag, window_cap=cfg.window_cap_blocks)


class Scheduler:
    """The scheduler: its requests, queues, blocks and policy (see the module docstring).

    The engine (:mod:`kvsim.engine.loop`) drives it: :meth:`pull_arrivals`,
    then :meth:`schedule` (a :class:`kvsim.engine.plan.StepPlan`, its blocks
    taken), then, once the cost model has priced the plan, :meth:`apply` (or
    :meth:`apply_decode_run` for a run of identical decode steps). Its clock is
    the engine's: ``step`` steps executed, ``now_s`` seconds, advanced only by the
    ``apply`` methods. ``arrivals`` is where requests come from, and it hears
    when each one finishes (a closed loop's user then sends the next); ``rec``
    records the steps, pauses, preemptions and decoding stints.
    :meth:`snapshot` is the read-only view for whoever watches it step.
    """

    def __init__(self, cfg: EngineConfig, model: ModelSpec, arrivals: Arrivals, rec: Recorder,
                 transfer_s: Callable[[int], float] | None = None) -> None:
        self.cfg, self.model, self.arrivals, self.rec = cfg, model, arrivals, rec
        self.block_size = cfg.block_size
        self.now_s = 0.0
        self.step = 0
        self.kv = _kv_manager(cfg)
        self.decoding = self.kv.decoding       # the decoding requests (their blocks: kv)
        #: what each kind of layer attends to: the decode context is counted in its units
        self.span = AttentionSpan.of(model)
        if self.span.window:
            self.decoding.attend_window(self.span.window)
        self.requests = reqs = RequestTable(cfg.max_model_len)
        self.running: dict[int, None] = {}      # admission order
        self.prefilling: dict[int, None] = {}   # running, still in prefill (same order)
        self.waiting = make_waiting_queue(cfg.scheduling_policy, reqs.priority, reqs.arrival)
        # TensorRT-LLM's V2 manager suspends victims to its host tier (kvsim.engine.suspension):
        # V0's swap space, sized by host_cache_size, recomputing what does not fit
        self._suspends = cfg.use_kv_cache_manager_v2
        self.swap = SwapSpace(cfg.suspend_host_blocks if self._suspends else cfg.swap_space_blocks,
                              cfg.block_bytes, transfer_copies(1, model.kv_layers, model.kv_tensors),
                              "recompute" if self._suspends else cfg.swap_space_full)
        self.swapped = self.swap.queue
        # A host tier: vLLM V1's (kv_offloading_size) loads in the background, the request
        # waiting (vLLM's WAITING_FOR_REMOTE_KVS) and holding its blocks until the copy is done;
        # SGLang's HiCache (enable_hierarchical_cache) loads in the step that admits it
        self.tier = HostTier(cfg.host_tier_blocks, cfg.host_block_bytes) \
            if cfg.host_tier is not None else None
        self._loads_in_step = cfg.host_tier == "sglang"
        self.host_load_bytes = 0                # what this step loads from SGLang's tier
        #: what the tier did, ``(t_s, request, TierOp, blocks)`` (``result.host_tier``)
        self.tier_log: list[tuple[float, int, int, int]] = []
        self.transfer_s = transfer_s            # seconds a copy of n bytes over PCIe takes
        self.loading: dict[int, float] = {}     # rid -> when its load is done (s), in order
        self.loaded: set[int] = set()           # back in the waiting queue, its loaded blocks held
        self.stalled: list[int] = []            # decoders that get no token in this step
        self.unstalled: list[int] = []          # re-joined the decode group after a stall
        self.stall_ends = 0                     # stall pauses closed in this step
        self.victims: list[tuple[int, int]] = []   # the step's preemptions so far, (request, mode)
        #: the last step's plan, once applied its outcome (scheduled, preempted, tokens)
        self.last_plan = StepPlan(BATCH)
        self.cache_queries = [0, 0]             # [fresh, resumed] tokens looked up
        self.cache_hits = [0, 0]
        self.policy = make_policy(self)          # complete: it reads this scheduler
        self._swapping = cfg.preemption_mode == "swap" or self._suspends
        # event jumps: how many identical decode steps one plan may cover (the engine's speed-up)
        self.max_jump = 1 if cfg.step_by_step else UNLIMITED
        self.max_prefill = self.kv.most_blocks_alone    # the most one request may ever hold
        self._decode_run = StepPlan(DECODE_RUN)         # reused: see the end of schedule()
        # schedule()'s shortcut for a step of decodes only applies: nothing for its general
        # pass to do first (swaps, a host tier, a policy's own step) and no window frees
        self._plain_decodes = not (self._swapping or self.tier is not None or self.kv.window
                                   or self.policy.acts_before_step)
        self._closed_loop = arrivals.closed_loop
        self._reject = cfg.unfit_requests == "reject"
        if not arrivals.closed_loop:            # every request is known: check and table them
            if not self._reject:
                check_requests_fit(cfg, model.name, arrivals.prompt, arrivals.output,
                                   max_blocks=self.max_prefill)
            reqs.add_all(arrivals.times, arrivals.prompt, arrivals.output, arrivals.priority)
            if self._reject:
                reqs.rejected[:] = unfit_reasons(cfg, arrivals.prompt, arrivals.output,
                                                 max_blocks=self.max_prefill).tolist()

    # ------------------------------------------------------------- arrivals
    def pull_arrivals(self, t: float) -> None:
        """Every request that has arrived by ``t`` joins the waiting queue (or is refused)."""
        arrivals = self.arrivals
        if not self._closed_loop:               # their columns are filled: register them
            first = self.requests.count
            self.requests.count = end = arrivals.pull_until(t)
            rejected = self.requests.rejected
            for rid in range(first, end):
                if rejected[rid]:               # refused on arrival (vLLM: HTTP 400)
                    continue
                # prefix_of() gives (group, tokens); mypy reads *Any as filling every parameter
                self.add_request(rid, *arrivals.prefix_of(rid), -(rid + 1))  # type: ignore[call-arg]
            return
        # one at a time, in time order: a refused request's user may send again by t, before
        # requests already pending (and a load test that stops sends nothing after)
        while (item := arrivals.pull_next(t)) is not None:
            self._add_closed_loop((item,))

    def _add_closed_loop(self, batch: Sequence[tuple[Any, int]]) -> None:
        arrivals = self.arrivals
        for req, user in batch:
            if not arrivals.sending(req.arrival_s):  # sent after the load test stopped
                continue
            lengths = ([req.prompt_tokens], [req.output_tokens])
            if not self._reject:
                check_requests_fit(self.cfg, self.model.name, *lengths, first=req.index,
                                   max_blocks=self.max_prefill)
            rid = self.requests.add(req.arrival_s, req.prompt_tokens, req.output_tokens,
                                    req.priority)
            arrivals.bind(rid, user)
            code = int(unfit_reasons(self.cfg, *lengths, max_blocks=self.max_prefill)[0]) \
                if self._reject else 0
            if code:                            # its user hears at once and goes on
                self.requests.rejected[rid] = code
                arrivals.rejected(rid, req.arrival_s)
                continue
            self.add_request(rid, req.prefix_group, req.prefix_tokens,
                             req.session if req.session >= 0 else -(rid + 1))

    def _pull_after_step(self, t1: float) -> None:
        """The requests that arrived during the step ending at ``t1`` join the queue now (or are
        refused: a refused request is never counted as waiting). What the engine's loop would
        do before the next step, done before the step is recorded: the same pulls, in the same
        order, and the idle reset the loop would make first when the step left nothing to do."""
        if not (self.running or self.waiting or self.swapped or self.loading):
            self.policy.idled()
        self.pull_arrivals(t1)

    def idle_until(self, t: float) -> None:
        """Nothing to do: the clock moves on to ``t`` (the next arrival), if later."""
        if t > self.now_s:
            self.now_s = t
        self.policy.idled()

    def add_request(self, rid: int, prefix_group: int, prefix_tokens: int, stream: int) -> None:
        """Request ``rid`` (already in the table) arrives: its tokens are ``prefix_tokens`` of
        ``prefix_group`` (-1: none), then the stream ``stream`` (see :mod:`kvsim.engine.blocks`)."""
        self.kv.register(rid, prefix_group, prefix_tokens, stream, int(self.requests.prompt[rid]))
        self.waiting.push(rid)

    def generated_now(self, rid: int) -> int:
        """Tokens ``rid`` has generated so far (``generated`` lags for decoding requests)."""
        if rid in self.decoding:
            return self.decoding.stored(rid, self.step) - self.requests.prompt[rid] + 1
        return self.requests.generated[rid]

    def decode_blocks_needed(self) -> int:
        return self.kv.decode_blocks(self.step)

    def _stored(self, rid: int) -> int:
        """Tokens whose KV ``rid`` holds (it is not in the decode group)."""
        reqs = self.requests
        if rid in self.prefilling:
            return reqs.computed[rid]
        return reqs.prompt[rid] + reqs.generated[rid] - 1

    def _start_decoding(self, rid: int, T_next: int) -> None:
        """``rid`` has emitted a token and decodes from step ``T_next`` on."""
        reqs = self.requests
        g = reqs.generated[rid]
        self.kv.join_decoding(rid, reqs.prompt[rid] + g - 1, T_next, T_next + reqs.output[rid] - g - 1)
        reqs.generated[rid] = IN_DECODE_GROUP      # the group counts it (generated_now)

    def _leave_decoding(self, rid: int) -> int:
        """Take ``rid`` out of the decode group before step ``step``; returns its stored tokens."""
        reqs = self.requests
        first = self.decoding.first_step[rid]
        stored = self.kv.leave_decoding(rid, self.step)
        if first < self.step:              # it emitted a token at the end of every step since
            reqs.last_token[rid] = self.now_s
        reqs.generated[rid] = stored - reqs.prompt[rid] + 1
        self.rec.stint(rid, first, self.step)
        return stored

    def preempt(self, rid: int) -> None:
        """Evict ``rid`` before step ``step`` (swap it out, or free its blocks for a recompute)."""
        reqs = self.requests
        decoding = rid in self.decoding
        stored = self._leave_decoding(rid) if decoding else self._stored(rid)
        decoding = decoding or rid not in self.prefilling
        del self.running[rid]
        self.prefilling.pop(rid, None)
        if rid in self.unstalled:
            self.unstalled.remove(rid)
        self.policy.released(rid)
        reqs.preemptions[rid] += 1
        if self.tier is not None:          # its stores are finished first (vLLM PR #29870)
            for blocks in self.tier.flush(rid):
                self.tier_log.append((self.now_s, rid, TierOp.STORE, blocks))
            self.tier.forget(rid)
        # NOTE(trtllm-v2-suspend-whole): a suspended request's whole KV goes to the host tier at
        # once and leaves the prefix cache; TensorRT-LLM's pages only become evictable, move as
        # allocations need them (part may stay on the GPU) and stay findable on the host
        if self._swapping and decoding \
                and self.swap.swap_out(rid, self.kv.held[rid], self.now_s):
            mode = SWAP
            reqs.swaps[rid] += 1
            self.kv.release(rid, stored, reachable=False)
        else:
            mode = RECOMPUTE
            # SGLang frees the KV of the tokens generated since its last prefill
            self.kv.release(rid, stored if self.policy.keeps_generated_kv
                            else min(stored, reqs.target[rid]), reachable=True)
            reqs.high[rid] = max(reqs.high[rid], stored)
            reqs.target[rid] = reqs.prompt[rid] + reqs.generated[rid]
            reqs.computed[rid] = 0
            if self.policy.requeue_front:
                self.waiting.push_front(rid)
            else:                              # SGLang: the back of the queue
                self.waiting.push(rid)
        if reqs.generated[rid] > 0:            # a pause starts at the last token
            self.rec.pause_start(rid, reqs.last_token[rid], mode)
            self.rec.set_pause_mode(rid, mode)
        self.rec.event(self.now_s, rid, mode)
        self.victims.append((rid, int(mode)))   # plain values in the plan and snapshots

    # ---------------------------------------------------------- the plan
    def schedule(self) -> StepPlan:
        """Decide step ``step``: the running requests first, then admission (the module docstring).

        When the plan is returned its blocks are taken and its preemptions done;
        the engine prices it and hands it back to :meth:`apply` (a ``DECODE_RUN``
        to :meth:`apply_decode_run`).
        """
        if self.victims:
            self.victims = []
        self.kv.step = T = self.step
        # The commonest step: only the decode group runs, nothing prefills, waits or pauses
        # and its blocks are free. What the general pass below would decide, without its
        # checks (a tenth of a decode run's time).
        group = self.decoding
        if self._plain_decodes and group.size and not (
                self.prefilling or self.waiting or self.swapped or self.stalled or self.unstalled) \
                and group.size <= self.cfg.max_num_batched_tokens and self.kv.take_decode_step(T):
            return self._decode_run_plan(group.size)
        if self.host_load_bytes:
            self.host_load_bytes = 0
        if self._swapping:
            self.swap.new_step()
        if self.policy.acts_before_step:
            self.policy.before_step()
        if self.loading:
            self._loads_done()
        # 1. the running requests
        chunks, solo, budget = self._schedule_running(self.cfg.max_num_batched_tokens)
        n_group = self.decoding.size
        # 2. admission, only if nothing was preempted
        resumed: list[int] | tuple[()] = ()
        admitted = False
        if (self.swapped or self.waiting) and not self.victims:
            if self.swapped:                       # V0: swapped requests come back first
                resumed, budget = self._swap_in(budget)
            admitted = self._admit(chunks, budget)
        if chunks or solo or resumed or (n_group and (admitted or self.victims or self.stalled
                                                      or self.unstalled)):
            return self._batch_plan(chunks, solo, resumed, n_group, tuple(self.victims))
        if not n_group:
            if not self.victims and self.loading:   # nothing runs until a load is done
                return self._wait_plan()
            if not self.victims and self.loaded:
                self._release_a_loaded_request()
            if self._suspends and not self.victims:
                # NOTE(trtllm-v2-deadlock-at-once): kvsim's next passes would all be this one,
                # so it raises at the first of TensorRT-LLM's 1,000 fruitless passes
                kv = self.kv
                raise deadlock_error(self.now_s, len(self.running) + len(self.swapped),
                                     kv.num_blocks - kv.free, kv.num_blocks, self.swap.capacity,
                                     self.cfg.enable_recompute_pause)
            return self._evicted_plan()
        return self._decode_run_plan(n_group)

    def _release_a_loaded_request(self) -> None:
        """Nothing can run, and waiting requests back from the host tier hold blocks the queue's
        head needs: the last of them gives its blocks back, as a recompute preemption (its
        blocks stay cached, and the tier still holds what it stored)."""
        # NOTE(host-tier-stall-release): vLLM has no rule for this stall (its waiting requests
        # would keep their blocks and nothing would run); kvsim frees the last one's
        rid = [r for r in self.waiting if r in self.loaded][-1]
        reqs = self.requests
        self.loaded.discard(rid)
        self.kv.release(rid, reqs.computed[rid], reachable=True)
        reqs.computed[rid] = 0
        reqs.preemptions[rid] += 1
        self.rec.event(self.now_s, rid, RECOMPUTE)
        self.victims.append((rid, int(RECOMPUTE)))

    def _wait_plan(self) -> StepPlan:
        """Nothing can run before the first load is done: the engine waits until then."""
        self.last_plan = StepPlan(LOAD_WAIT, wait_until_s=min(self.loading.values()))
        return self.last_plan

    def _loads_done(self) -> None:
        """Requests whose load is done go back to the front of the waiting queue, in the
        order they started loading, holding their blocks (vLLM reports them at the end of
        the step the copy finished in, and schedules them from the next)."""
        now = self.now_s
        done = [rid for rid, ready_s in self.loading.items() if ready_s <= now]
        for rid in reversed(done):
            del self.loading[rid]
            self.loaded.add(rid)
            self.waiting.push_front(rid)

    def _evicted_plan(self) -> StepPlan:
        """Everything that could run was evicted: a step that computes nothing and lasts as
        long as its swap copies, if any."""
        if not self.victims:
            raise RuntimeError("kvsim scheduler made no progress (internal error): "
                               f"t={self.now_s}, waiting={len(self.waiting)}, free={self.kv.free}")
        self.last_plan = StepPlan(EVICTED, preempted=tuple(self.victims),
                                  swap_out_bytes=self.swap.out_bytes, swap_copies=self.swap.copies)
        return self.last_plan

    def _decode_run_plan(self, n_group: int) -> StepPlan:
        """Only the decode group runs, its first step's blocks taken: up to the first finish,
        before the first step that needs more blocks than are free, and one step only when
        the policy might admit a waiting request in the next step (or jumps are off)."""
        kv, group, pool, bs, T = self.kv, self.decoding, self.kv.pool, self.block_size, self.step
        k = group.next_finish()[0] - T + 1
        if k > self.max_jump or self.loading or (
                (self.waiting or self.swapped) and not self.policy.stays_blocked
                and not self.policy.batch_is_full):
            k = 1
        if k > 1 and kv.window:                    # the windows' frees keep their residues
            k = min(k, kv.window_run_limit(T))
            if (self.waiting or self.swapped) and kv.frees_in_run():
                k = 1                              # frees may open the blocked queue
        span = self.span
        if span.window:                            # sliding-window attention
            group.settle_capped(T)
            # the run's context grows by a fixed amount a step up to the next member's capped
            # step (at it, the member's own context is the window either way)
            capped = group.next_capped_step()
            if k > 1 and capped < T + k - 1:
                k = int(capped) - T + 1
        free = pool.blank + pool.cached_free
        if k > 1 and free < n_group * kv.take_mult * blocks_for(k - 1, bs):   # might not last
            k = 1 + kv.decode_steps_until_short(T + 1, free, k - 1)
        # One plan object serves every decode run: it lives only until apply_decode_run,
        # and decode runs are most of a run's plans (a new object each costs ~5% of a run).
        plan = self._decode_run
        plan.n_group, plan.max_steps = n_group, k
        if span.window:
            plan.context_tokens = (span.full_weight * (group.offset_sum + n_group * (T + 1))
                                   + span.window_weight * group.window_context(T))
            plan.context_growth = span.full_weight * n_group + span.window_weight * group.uncapped
        else:
            plan.context_tokens = group.offset_sum + n_group * (T + 1)
            plan.context_growth = n_group
        self.last_plan = plan
        return plan

    def _group_window_units(self, span: AttentionSpan) -> int:
        """The decode group's context in this step in ``span``'s units (sliding windows)."""
        group, T = self.decoding, self.step
        group.settle_capped(T)
        return span.full_weight * group.context(T) + span.window_weight * group.window_context(T)

    def _batch_plan(self, chunks: list[Chunk], solo: list[int], resumed: list[int] | tuple[()],
                    n_group: int, victims: tuple[tuple[int, int], ...]) -> StepPlan:
        reqs, swap = self.requests, self.swap
        span = self.span
        if span.window:                            # sliding-window attention: in its units
            context = self._group_window_units(span) if n_group else 0
            if solo:
                context += sum(span.decode_units(self._stored(r) + 1) for r in solo)
            if resumed:
                context += sum(span.decode_units(reqs.prompt[r] + reqs.generated[r])
                               for r in resumed)
        else:
            context = self.decoding.context(self.step) if n_group else 0
            if solo:
                context += sum(self._stored(r) + 1 for r in solo)
            if resumed:
                context += sum(reqs.prompt[r] + reqs.generated[r] for r in resumed)
        if self._suspends:
            # NOTE(trtllm-v2-copy-overlap): TensorRT-LLM copies a suspended request's pages out
            # and a resumed one's back on the stream of the step that moves them; kvsim prices
            # them as the host tier's loads, the step lasting the longer of its compute and the
            # copy (a step that only suspends pays them as V0's swap does)
            self.last_plan = StepPlan(BATCH, n_group, chunks, solo, resumed, context, victims, 1,
                                      host_load_bytes=swap.out_bytes + swap.in_bytes)
            return self.last_plan
        self.last_plan = StepPlan(BATCH, n_group, chunks, solo, resumed, context, victims, 1,
                                  swap.out_bytes, swap.in_bytes, swap.copies,
                                  host_load_bytes=self.host_load_bytes)
        return self.last_plan

    # ---------------------------------------------- 1. the running requests
    def _schedule_running(self, budget: int) -> tuple[list[Chunk], list[int], int]:
        """Step 1: every running request's tokens of this step ``(chunks, solo, budget left)``.

        ``chunks`` are ``(rid, start, tokens)`` prefill chunks, ``solo`` the
        decoders scheduled one by one (the decode group is scheduled whole). The
        outcome is always the exact pass's (:meth:`_schedule_in_order`: request by
        request, preempting on a shortage); when every running request's tokens
        fit, nobody is preempted and the pass would take exactly their blocks, so
        they are taken at once instead, the decode group's in closed form.
        """
        kv, group = self.kv, self.decoding
        n_group = group.size
        if n_group > budget or kv.per_request:    # per_request: windows with the prefix cache
            return self._schedule_in_order(budget)
        if not self.prefilling or self._prefills_wait():
            # only decodes (the commonest step): the group's blocks, if they are free
            if kv.take_decode_step(self.step):
                return [], [], budget - n_group
            return self._schedule_in_order(budget)
        plan = self._plan_chunks(budget - n_group)
        if plan is None:
            return self._schedule_in_order(budget)
        chunks, chunk_blocks = plan
        if kv.decode_blocks(self.step) + chunk_blocks > kv.free:
            return self._schedule_in_order(budget)
        if self.cfg.engine == "v1" and any(kv.registers_prefix(r, s + c) for r, s, c in chunks):
            self._take_in_admission_order(chunks)
        else:                                      # order cannot matter: take all at once
            for rid, _, _ in chunks:               # the windows' frees first (none without)
                kv.settle_window(rid)
            kv.take_decode_step(self.step)
            for rid, start, c in chunks:
                kv.grow(rid, start + c)
                kv.cache_prefix(rid, start + c)
        return chunks, [], budget - n_group - sum(c for _, _, c in chunks)

    def _prefills_wait(self) -> bool:
        """TensorRT-LLM's STATIC_BATCH: no prefill chunk while any request generates."""
        return self.policy.prefill_waits_for_decoders and len(self.running) > len(self.prefilling)

    def _chunk_of(self, rid: int, budget: int) -> int:
        c = self.requests.target[rid] - self.requests.computed[rid]
        thr = self.cfg.long_prefill_token_threshold
        if 0 < thr < c:
            c = thr
        return min(c, budget)

    def _plan_chunks(self, budget: int) -> tuple[list[Chunk], int] | None:
        """Every prefilling request's next chunk ``(rid, start, tokens)`` and the new blocks
        they need, or None when they do not all get their full chunk within ``budget``."""
        plan: list[Chunk] = []
        new_blocks = 0
        kv, computed = self.kv, self.requests.computed
        for rid in self.prefilling:
            c = self._chunk_of(rid, budget)
            if c < self._chunk_of(rid, UNLIMITED) or c <= 0:
                return None
            start = computed[rid]
            plan.append((rid, start, c))
            new_blocks += kv.new_blocks(rid, start + c)
            budget -= c
        return plan, new_blocks

    def _take_in_admission_order(self, chunks: list[Chunk]) -> None:
        """Blocks for a step where everything fits, taken request by request in running
        order, as V1's pass takes them. Only needed when a chunk caches shared-prefix
        blocks: then which free block goes first decides which copy later lookups find."""
        kv, group, T = self.kv, self.decoding, self.step
        grow = {rid: start + c for rid, start, c in chunks}
        for rid in self.running:
            if rid in grow:
                kv.grow(rid, grow[rid])
                kv.cache_prefix(rid, grow[rid])
            elif rid in group.offset and block_position(group.stored(rid, T), self.block_size) == 0:
                kv.take(1)                          # a decode that starts a new block

    def _schedule_in_order(self, budget: int) -> tuple[list[Chunk], list[int], int]:
        """The exact pass: one request at a time, preempting on a shortage (see the module doc)."""
        kv = self.kv
        # NOTE(v0-priority-preemption): V0's priority scheduler also re-sorts its running queue
        # by priority and may preempt a low-priority request for a waiting high-priority one;
        # kvsim keeps admission order and preempts only on a block shortage.
        # V0's chunked-prefill policy, and TensorRT-LLM V2's two phases: decodes first
        if self.cfg.engine == "v0" or self._suspends:
            order = [r for r in self.running if r not in self.prefilling] + list(self.prefilling)
        else:
            order = list(self.running)
        for rid in list(self.decoding.offset):
            self._leave_decoding(rid)
        scheduled: dict[int, int] = {}
        prefills_wait = self._prefills_wait()
        for rid in order:
            if budget <= 0:
                break
            if rid not in self.running:
                continue                               # an earlier victim
            decoding = rid not in self.prefilling
            if prefills_wait and not decoding:
                continue
            c = 1 if decoding else self._chunk_of(rid, budget)
            tokens = self._stored(rid) + c
            kv.settle_window(rid)
            if self._suspends and not decoding and kv.shortfall(rid, tokens) > 0:
                # TensorRT-LLM V2's context path suspends nobody: the chunk is skipped, or,
                # without a host tier, a started request left out of the step is freed and
                # the pass ends (the blocks are kept for this request)
                if self._preempt_for_pages(rid, lambda r: r in scheduled):
                    break
                continue
            stop, refund = self._free_blocks_for(rid, tokens, scheduled)
            budget += refund
            if stop:
                break
            kv.grow(rid, tokens)
            if not decoding:
                kv.cache_prefix(rid, tokens)
            scheduled[rid] = c
            budget -= c
        chunks, solo = [], []
        for rid, c in scheduled.items():
            if rid in self.prefilling:
                chunks.append((rid, self.requests.computed[rid], c))
            else:
                solo.append(rid)
        self.stalled = [r for r in self.running if r not in self.prefilling and r not in scheduled]
        return chunks, solo, budget

    def _free_blocks_for(self, rid: int, tokens: int, scheduled: dict[int, int]) -> tuple[bool, int]:
        """Preempt the policy's victims until ``rid`` can hold ``tokens``: ``(the pass stops,
        the token budget the victims give back)``."""
        kv, refund = self.kv, 0
        while kv.shortfall(rid, tokens) > 0:
            victim = self.policy.victim(rid)
            if self._suspends and not self._may_free(victim, rid):
                # NOTE(trtllm-v2-suspend-in-place): suspended in place, it keeps its blocks
                # and its place (a stall) and the pass ends; TensorRT-LLM marks it suspended
                # and resumes it under max_util_for_resume
                return True, refund
            self.preempt(victim)
            if victim == rid:
                return True, refund
            refund += scheduled.pop(victim, 0)
        return False, refund

    def _may_free(self, victim: int, requester: int) -> bool:
        """TensorRT-LLM V2: ``victim`` can give its blocks up for ``requester``: suspended to the
        host tier (it decodes and its blocks fit there), else recompute-paused (not the
        requester itself, and ``enable_recompute_pause``)."""
        # NOTE(trtllm-v2-prefill-not-suspended): a victim still in prefill is recompute-paused,
        # never suspended (kvsim's suspension is V0's swap-out of a decoding request)
        if victim not in self.prefilling and \
                self.swap.used + self.kv.held[victim] <= self.swap.capacity:
            return True
        return victim != requester and self.cfg.enable_recompute_pause

    # ------------------------------------------------------- 2. admission
    def _swap_in(self, budget: int) -> tuple[list[int], int]:
        """V0: swapped requests come back, oldest first, while each one's blocks plus the
        watermark fit, ``max_num_seqs`` has room and the budget allows one token each."""
        kv, reqs, swap = self.kv, self.requests, self.swap
        resumed: list[int] = []
        while swap.queue and len(self.running) < self.cfg.max_num_seqs and budget >= 1:
            rid = swap.queue[0]
            tokens = reqs.prompt[rid] + reqs.generated[rid]    # its KV and this step's token
            # NOTE(trtllm-v2-resume-after-running): TensorRT-LLM resumes a suspended request in
            # its own place in the active list, before newer requests grow; kvsim after them,
            # and, as V0 does, admits nothing new while one is suspended
            if self._suspends and not may_resume(kv.num_blocks - kv.free, kv.num_blocks,
                                                 self.cfg.max_util_for_resume):
                break
            if not kv.can_allocate(kv.blocks_for(tokens),
                                   headroom=kv.admission_headroom(bool(self.running))):
                break
            swap.swap_in(rid)
            if self._suspends:                 # its KV copied back from the host tier
                reqs.loaded[rid] += tokens - 1
            kv.set_held(rid, 0)
            kv.grow(rid, tokens)
            self.running[rid] = None
            self.policy.admitted(rid)
            resumed.append(rid)
            budget -= 1
        return resumed, budget

    def _admit(self, chunks: list[Chunk], budget: int) -> bool:
        """Admit waiting requests in order while they fit; each one's first chunk joins ``chunks``."""
        cfg, kv, reqs, waiting = self.cfg, self.kv, self.requests, self.waiting
        admitted = False
        thr = cfg.long_prefill_token_threshold
        if self.policy.plans_rounds:
            self.policy.begin_admission(chunks)
        while waiting and not self.swapped and len(self.running) < cfg.max_num_seqs \
                and budget > 0:
            rid = waiting.head()
            tokens = reqs.target[rid]
            if rid in self.loaded:                 # back from the host tier, its blocks held
                if not self._admit_loaded(rid, tokens, chunks, budget):
                    break
                budget -= chunks[-1][2]
                admitted = True
                continue
            hit = kv.lookup(rid, tokens)
            hit_tokens = hit.blocks * self.block_size
            host = self._host_hit(rid, tokens, hit.blocks) if self.tier is not None else 0
            # SGLang loads its host hit in this step, so its prefill starts after it
            start = hit_tokens + host * self.block_size if self._loads_in_step else hit_tokens
            c = tokens - start
            if 0 < thr < c:
                c = thr
            if not cfg.enable_chunked_prefill and c > budget:
                break
            c = min(c, budget)
            upto = tokens if cfg.whole_prompt_allocation else start + c
            # the blocks the gate asks for: V1 the whole prompt (scheduler_reserve_full_isl)
            gate = tokens if cfg.scheduler_reserve_full_isl else upto
            new_blocks = kv.admission_new_blocks(gate, upto, hit, capped=cfg.scheduler_reserve_full_isl)
            if host and not self._loads_in_step:   # vLLM: a load in the background, the
                loaded_to = (hit.blocks + host) * self.block_size   # WAITING_FOR_REMOTE_KVS
                gate = tokens if cfg.scheduler_reserve_full_isl else loaded_to
                if not self.policy.admits(rid, kv.blocks_for(gate) - hit.blocks, hit,
                                          kv.admission_headroom(bool(self.running))):
                    break
                waiting.pop_head()
                self._start_load(rid, tokens, hit, host)
                continue                           # it schedules nothing now; the next may
            if not self.policy.admits(rid, new_blocks, hit, kv.admission_headroom(bool(self.running))):
                if self._suspends:
                    self._preempt_for_context(rid, chunks)
                break
            waiting.pop_head()
            if reqs.first_scheduled[rid] != reqs.first_scheduled[rid]:   # NaN: never scheduled
                reqs.first_scheduled[rid] = self.now_s
            kv.admit(rid, hit, upto)
            self._count_lookup(rid, tokens, hit_tokens)
            if host:                               # SGLang's load, in this step
                self._load_in_step(rid, hit.blocks, host)
            reqs.computed[rid] = start
            kv.cache_prefix(rid, start + c)
            self.running[rid] = None
            self.prefilling[rid] = None
            chunks.append((rid, start, c))
            self.policy.admitted(rid)
            budget -= c
            admitted = True
        return admitted

    def _preempt_for_pages(self, requester: int, scheduled: Callable[[int], bool]) -> bool:
        """TensorRT-LLM V2's ``preempt_for_pages`` for a context request out of blocks: only
        without a host tier, and with ``enable_recompute_pause``, the newest started request
        that this step does not run (not the requester) is recompute-paused. True if one was."""
        if self.swap.capacity or not self.cfg.enable_recompute_pause:
            return False
        victim = next((r for r in reversed(self.running) if r != requester and not scheduled(r)),
                      None)
        if victim is None:
            return False
        if victim in self.stalled:
            self.stalled.remove(victim)
        self.preempt(victim)
        return True

    def _preempt_for_context(self, rid: int, chunks: list[Chunk]) -> None:
        """The waiting head ``rid`` lacks blocks (:meth:`_preempt_for_pages`: the step runs
        every request with a chunk and every decoder not stalled); when a victim is freed,
        admission ends with ``rid`` first in the queue, so the blocks are its own next step."""
        running_chunk = {r for r, _, _ in chunks}
        stalled, prefilling = self.stalled, self.prefilling
        if not self._preempt_for_pages(rid, lambda r: r in running_chunk if r in prefilling
                                       else r not in stalled):
            return
        waiting = self.waiting                 # the victim went to the front of the queue...
        victim, head = waiting.pop_head(), waiting.pop_head()
        waiting.push_front(victim)             # ...behind the head (engine: the pages are
        waiting.push_front(head)               # kept for the request that paid for them)

    def _count_lookup(self, rid: int, tokens: int, hit_tokens: int) -> None:
        """``rid``'s prefix-cache lookup of ``tokens`` found ``hit_tokens``: the counters."""
        reqs = self.requests
        resumed = reqs.preemptions[rid] > 0
        if self.cfg.enable_prefix_caching:
            self.cache_queries[resumed] += tokens
            self.cache_hits[resumed] += hit_tokens
        if resumed:
            reqs.rescued[rid] += min(hit_tokens, reqs.high[rid])
        elif self.cfg.enable_prefix_caching:
            reqs.lookup_tokens[rid], reqs.hit_tokens[rid] = tokens, hit_tokens

    # ------------------------------- the host tier (vLLM V1's connector, SGLang's HiCache)
    def _host_hit(self, rid: int, tokens: int, gpu_hit: int) -> int:
        """Blocks of ``rid`` ready on the host right after its ``gpu_hit`` blocks (the longest
        run; at most the blocks before its last token, as a GPU hit; SGLang: none when they
        hold fewer than :data:`HICACHE_LOAD_BACK_THRESHOLD` tokens, which it recomputes)."""
        assert self.tier is not None
        # NOTE(host-tier-last-token): at most the blocks before the last token load, as a GPU
        # hit; vLLM's connector may load a prompt's every full block
        last = self.kv.full_blocks(tokens - 1)
        if last <= gpu_hit:
            return 0
        host = self.tier.lookup(self.kv.block_keys(rid, gpu_hit, last))
        if self._loads_in_step and host * self.block_size < HICACHE_LOAD_BACK_THRESHOLD:
            return 0
        return host

    def _load_in_step(self, rid: int, gpu_hit: int, host: int) -> None:
        """SGLang: ``rid``'s ``host`` blocks after its GPU hit load in this step, overlapped with
        its forward pass (the step's ``host_load_bytes``); its prefill starts after them."""
        assert self.tier is not None
        self.tier.load(self.kv.block_keys(rid, gpu_hit, gpu_hit + host))
        self.requests.loaded[rid] += host * self.block_size
        self.host_load_bytes += host * self.cfg.block_bytes
        # logged at the step's start: its end is not known while it is planned
        self.tier_log.append((self.now_s, rid, TierOp.LOAD, host))

    def _start_load(self, rid: int, tokens: int, hit: Hit, host: int) -> None:
        """``rid`` takes blocks for its GPU hit and ``host`` blocks loaded from the host tier,
        and waits (holding them) until the copy is done (:meth:`_loads_done`)."""
        assert self.tier is not None and self.transfer_s is not None
        kv, reqs, bs = self.kv, self.requests, self.block_size
        loaded_to = (hit.blocks + host) * bs
        kv.admit(rid, hit, loaded_to)
        self.tier.load(kv.block_keys(rid, hit.blocks, hit.blocks + host))
        self._count_lookup(rid, tokens, hit.blocks * bs)
        reqs.loaded[rid] += host * bs
        reqs.computed[rid] = loaded_to
        self.loading[rid] = ready_s = self.now_s + self.transfer_s(host * self.cfg.block_bytes)
        self.tier_log.append((ready_s, rid, TierOp.LOAD, host))

    def _admit_loaded(self, rid: int, tokens: int, chunks: list[Chunk], budget: int) -> bool:
        """Admit ``rid``, whose load is done: it computes the rest from where its blocks end
        (its first chunk joins ``chunks``); False if it does not fit now."""
        cfg, kv, reqs = self.cfg, self.kv, self.requests
        done = reqs.computed[rid]
        c = tokens - done
        thr = cfg.long_prefill_token_threshold
        if 0 < thr < c:
            c = thr
        if not cfg.enable_chunked_prefill and c > budget:
            return False
        c = min(c, budget)
        gate = tokens if cfg.scheduler_reserve_full_isl else done + c
        if not self.policy.admits(rid, max(0, kv.blocks_for(gate) - kv.held[rid]), NO_HIT,
                                  kv.admission_headroom(bool(self.running))):
            return False
        self.waiting.pop_head()
        self.loaded.discard(rid)
        if reqs.first_scheduled[rid] != reqs.first_scheduled[rid]:   # NaN: never scheduled
            reqs.first_scheduled[rid] = self.now_s
        kv.grow(rid, done + c)
        kv.cache_prefix(rid, done + c)
        self.running[rid] = None
        self.prefilling[rid] = None
        chunks.append((rid, done, c))
        self.policy.admitted(rid)
        return True

    def _store_prompt_blocks(self, chunks: Sequence[Chunk]) -> None:
        """The prompt blocks this step's chunks filled go to the host tier (vLLM stores a
        request's full prompt blocks, ``offload_prompt_only``), then the tier's step ends."""
        tier, kv, prompt = self.tier, self.kv, self.requests.prompt
        assert tier is not None
        for rid, start, c in chunks:
            full = kv.full_blocks(min(start + c, prompt[rid]))
            offered = tier.offered.get(rid, 0)
            if full > offered:
                self._offer(rid, kv.block_keys(rid, offered, full))
                tier.offered[rid] = full
        self._end_tier_step(self.now_s)

    def _offer(self, rid: int, keys: list[tuple[int, int, int]]) -> None:
        """Offer ``rid``'s blocks to the tier; a store dropped for lack of room is logged."""
        assert self.tier is not None
        dropped = self.tier.offer(rid, keys)
        if dropped:
            self.tier_log.append((self.now_s, rid, TierOp.DROP, dropped))

    def _end_tier_step(self, t: float) -> None:
        """The tier's step ends at ``t``: the stores copied in it are done (logged)."""
        assert self.tier is not None
        for rid, blocks in self.tier.end_step():
            self.tier_log.append((t, rid, TierOp.STORE, blocks))

    # ---------------------------------------- after a step: its tokens
    def _recomputed(self, rid: int, start: int, c: int) -> int:
        """The chunk ``start .. start + c`` of ``rid`` holds tokens computed before a preemption:
        how many (added to its count)."""
        reqs = self.requests
        again = min(start + c, reqs.high[rid]) - start
        reqs.recomputed[rid] += again
        return again

    def _emit(self, rid: int, t1: float) -> None:
        """``rid`` emits a token at ``t1``; it finishes or (re)joins the decode group."""
        reqs = self.requests
        if math.isnan(reqs.first_token[rid]):
            reqs.first_token[rid] = t1
        else:
            self._end_pause(rid, t1)
        reqs.last_token[rid] = t1
        reqs.generated[rid] += 1
        if reqs.generated[rid] >= reqs.output[rid]:
            self._finish(rid, t1)
        else:
            self._start_decoding(rid, self.step)

    def _end_pause(self, rid: int, t1: float) -> None:
        """Close ``rid``'s open pause, if any, with its token at ``t1``.

        The gap is one inter-token sample (in ``pauses``); a stalled decoder's
        token is therefore not also counted as a regular decode of the step.
        """
        mode = self.rec.pause_end(rid, t1)
        if mode is None:
            return
        reqs = self.requests
        gap = t1 - reqs.last_token[rid]
        if gap > reqs.max_gap[rid]:
            reqs.max_gap[rid] = gap
        reqs.paused[rid] += gap
        if mode == STALL:
            self.stall_ends += 1

    def _requeue_stalled(self) -> None:
        """Decoders that got no token in the step just executed rejoin the decode group."""
        reqs = self.requests
        for rid in self.stalled:                   # a step without their token: a short pause
            self.rec.pause_start(rid, reqs.last_token[rid], STALL)
            self.kv.join_decoding(rid, self._stored(rid), self.step,
                                  self.step + reqs.output[rid] - reqs.generated[rid] - 1)
            reqs.generated[rid] = IN_DECODE_GROUP
            self.unstalled.append(rid)
        self.stalled = []

    def _finish_decoders(self, T_last: int, t1: float) -> None:
        """Finish every decoding request whose last token came in step ``T_last`` or before."""
        for rid in self.decoding.pop_finished(T_last):
            self._leave_decoding(rid)
            if rid in self.unstalled:              # a stall that ended with its last token
                self._end_pause(rid, t1)
            self.requests.last_token[rid] = t1
            self._finish(rid, t1)

    def _finish(self, rid: int, t1: float) -> None:
        reqs = self.requests
        reqs.finish[rid] = t1
        del self.running[rid]
        self.policy.released(rid)
        stored = reqs.prompt[rid] + reqs.generated[rid] - 1
        if self.tier is not None:
            if self._loads_in_step:                # SGLang caches the whole sequence
                self._store_finished(rid, stored)
            self.tier.forget(rid)
        reachable = self.arrivals.finished(rid, t1)
        self.kv.release(rid, stored, reachable=reachable)

    def _store_finished(self, rid: int, stored: int) -> None:
        """SGLang: a finished request's full blocks join its radix cache, generated tokens
        included, and write-through copies what its prompt's stores did not."""
        tier, kv = self.tier, self.kv
        assert tier is not None
        offered, full = tier.offered.get(rid, 0), kv.full_blocks(stored)
        if full > offered:
            self._offer(rid, kv.block_keys(rid, offered, full))

    # ------------------------------------------------- applying a priced plan
    def apply(self, plan: StepPlan, dt: float) -> None:
        """Step ``step`` ran ``plan`` (``BATCH`` or ``EVICTED``) for ``dt`` seconds: its tokens,
        finishes and record (vLLM: ``update_from_output``)."""
        t0, T = self.now_s, self.step
        t1 = t0 + dt
        self.now_s, self.step = t1, T + 1
        if plan.kind == EVICTED:
            self._apply_evicted(plan, t1, dt)
            return
        reqs, group = self.requests, self.decoding
        self.stall_ends = 0
        n_group, solo = plan.n_group, plan.solo
        emitted = decode_seqs = plan.decode_seqs
        for rid in plan.resumed:
            self._emit(rid, t1)
        for rid in solo:
            self._emit(rid, t1)
            self.rec.stint(rid, T, T + 1)
        if self.tier is not None:                # before a finish forgets whose blocks they are
            self._store_prompt_blocks(plan.chunks)
        computed, target, prefilling = reqs.computed, reqs.target, self.prefilling
        prefill_tokens = recomputed = 0
        for rid, start, c in plan.chunks:
            prefill_tokens += c
            if reqs.high[rid] > start:
                recomputed += self._recomputed(rid, start, c)
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
        if self.policy.counts_steps:
            self.policy.stepped(1)
        self._record(plan, t1, dt, t1 - t0, n_group + len(solo) - self.stall_ends, prefill_tokens,
                     decode_seqs, emitted, recomputed)

    def _apply_evicted(self, plan: StepPlan, t1: float, dt: float) -> None:
        """A step that computed nothing (its requests were evicted) ended at ``t1``."""
        if self.tier is not None:
            self._end_tier_step(t1)
        self._requeue_stalled()
        self._record(plan, t1, dt, dt, 0, 0, 0, 0, 0)

    def apply_decode_run(self, plan: StepPlan, ends: list[float], timing: RunTiming) -> None:
        """``len(ends)`` (at most ``plan.max_steps``) identical decode steps of ``plan`` ran,
        ending at ``ends``, their durations set by ``timing`` (the blocks of the first are taken)."""
        kv, group = self.kv, self.decoding
        pool = kv.pool
        T, k = self.step, len(ends)
        T_last = T + k - 1
        t0, t1 = self.now_s, ends[-1]
        blank0, cached0 = pool.blank, pool.cached_free
        crossings = kv.run_crossings()             # before this run's finishes change it
        if k > 1:                                  # the blocks of steps T+1 .. T+k-1
            kv.take_decode_steps(T + 1, T_last + 1)
        self.now_s, self.step = t1, T_last + 1
        if self.policy.counts_steps:
            self.policy.stepped(k)
        if self.tier is not None:                # its stores are done within two steps
            for i in range(min(k, 2)):
                self._end_tier_step(ends[i])
        waiting, swapped = self.waiting, self.swapped
        queued_before, swapped_before = len(waiting) + len(self.loading), len(swapped)
        if group.next_finish_step() <= T_last:
            self._finish_decoders(T_last, t1)
        # arrivals in the last step (refused ones leave); next_time() <= t1 is arrived_by(t1)
        # without the count
        if self.arrivals.next_time() <= t1:
            self._pull_after_step(t1)
        num_blocks = kv.num_blocks
        self.rec.decode_run(t0, ends, timing, T, crossings, num_blocks - blank0 - cached0, blank0,
                            cached0, num_blocks - pool.blank - pool.cached_free,
                            pool.cached_free, plan.n_group, queued_before, swapped_before,
                            len(self.running), len(waiting) + len(self.loading),
                            len(self.prefilling))

    def _record(self, plan: StepPlan, t1: float, dt: float, gap: float, decoding: int,
                prefill_tokens: int, decode_tokens: int, emitted: int, recomputed: int) -> None:
        if self.arrivals.next_time() <= t1:    # arrivals during the step (refused ones leave)
            self._pull_after_step(t1)
        pool, swap = self.kv.pool, self.swap
        self.rec.step(t1, dt, gap, self.kv.num_blocks - pool.blank - pool.cached_free,
                      pool.cached_free,
                      (len(self.running), len(self.waiting) + len(self.loading),
                       len(self.swapped), len(plan.preempted), decoding, prefill_tokens,
                       decode_tokens, emitted, swap.out_bytes, swap.in_bytes, recomputed))

    def end_run(self) -> None:
        """The run stops: requests still decoding get their token counts (at time ``now_s``),
        and the policy lets go of this scheduler (:meth:`kvsim.engine.policies._Policy.detach`:
        the run's state is freed with the last reference to it)."""
        for rid in list(self.decoding.offset):
            self.requests.last_token[rid] = self.now_s
            self._leave_decoding(rid)
        self.policy.detach()

    # --------------------------------------------------------- read-only views
    def counters(self) -> dict[str, float | int | str | None]:
        """The run's totals that are not per step or per request (``SimResult.counters``)."""
        # The run's time is the end of its last step, whatever came after it (a refused
        # request's arrival moves no engine clock), so the timeline and simulated_s agree
        return dict(simulated_s=float(self.rec.end_s()),
                    prefix_cache_queries=self.cache_queries[0],
                    prefix_cache_hits=self.cache_hits[0],
                    prefix_cache_resumed_queries=self.cache_queries[1],
                    prefix_cache_resumed_hits=self.cache_hits[1],
                    prefix_cache_evicted_blocks=self.kv.pool.evicted,
                    load_stopped_s=self.arrivals.stopped_s,
                    load_stop_reason=self.arrivals.stop_reason,
                    **self._tier_counters(), **self._suspension_counters())

    def _tier_counters(self) -> dict[str, int]:
        """The host tier's totals, when it runs (vLLM's ``vllm:kv_offload_*`` counters)."""
        tier = self.tier
        if tier is None:
            return {}
        nbytes = self.cfg.block_bytes
        return dict(kv_offload_capacity_blocks=tier.capacity,
                    kv_offload_stored_blocks=tier.stored_blocks,
                    kv_offload_store_bytes=tier.stored_blocks * nbytes,
                    kv_offload_loaded_blocks=tier.loaded_blocks,
                    kv_offload_load_bytes=tier.loaded_blocks * nbytes,
                    kv_offload_allocation_failures=tier.allocation_failures)

    def _suspension_counters(self) -> dict[str, int]:
        """TensorRT-LLM V2's host tier, when it runs: its size, the suspensions to it and the
        tokens copied back by resumes (the ``swaps`` column counts each request's suspensions)."""
        if not self._suspends:
            return {}
        reqs = self.requests
        return dict(trtllm_host_capacity_blocks=self.swap.capacity,
                    trtllm_suspensions=int(sum(reqs.swaps)),
                    trtllm_resumed_tokens=int(sum(reqs.loaded)))

    def snapshot(self) -> SchedulerSnapshot:
        """What the scheduler holds now, as plain values (the stepper and the KV gauge read it)."""
        reqs, kv, group, T, bs = self.requests, self.kv, self.decoding, self.step, self.block_size
        waiting = tuple(self.waiting)
        queued, swapped = set(waiting) | set(self.loading), set(self.swapped)
        views = []
        for rid in range(reqs.count):
            needs_block = False
            if rid in group:
                tokens = group.stored(rid, T)
                blocks = kv.held_by(rid, T)
                state = "decoding"
                needs_block = block_position(tokens, bs) == 0
            elif rid in self.running:
                tokens = self._stored(rid)
                blocks = kv.held_by(rid, T)
                state = "prefilling" if rid in self.prefilling else "decoding"
            else:
                tokens = blocks = 0
                if not math.isnan(reqs.finish[rid]):
                    state = "finished"
                elif rid in queued:
                    state = "preempted" if reqs.preemptions[rid] else "waiting"
                elif rid in swapped:
                    state = "swapped"
                else:
                    state = "not arrived"
            views.append(RequestView(rid, state, int(tokens), int(blocks),
                                     int(self.generated_now(rid)), int(reqs.output[rid]),
                                     int(reqs.preemptions[rid]), int(reqs.recomputed[rid]),
                                     int(reqs.rescued[rid]), float(reqs.finish[rid]),
                                     bool(needs_block)))
        return SchedulerSnapshot(
            step=T, t_s=float(self.now_s), block_size=bs, total_blocks=int(kv.num_blocks),
            free_blocks=int(kv.free), cached_free_blocks=int(kv.cached_free),
            running=tuple(self.running), waiting=waiting, swapped=tuple(self.swapped),
            preempted=self.last_plan.preempted, requests=tuple(views))


class RequestView(NamedTuple):
    """One request in a :class:`SchedulerSnapshot`."""

    rid: int
    state: str              #: one of :data:`REQUEST_STATES`
    tokens: int             #: tokens whose KV it stores
    blocks: int             #: blocks it holds
    generated: int          #: answer tokens so far
    output: int             #: its answer length
    preemptions: int
    recomputed: int         #: tokens prefilled again after a preemption
    rescued: int            #: tokens found in the prefix cache instead
    finish_s: float         #: NaN until it finishes
    needs_block: bool       #: decoding, and its next token starts a new block


@dataclass(frozen=True)
class SchedulerSnapshot:
    """The scheduler's state after a step, as plain values (:meth:`Scheduler.snapshot`).

    ``requests`` holds every request that has arrived, in id order; ``running``
    is in admission order, ``waiting`` front first; ``preempted`` lists the
    step's victims ``(request, mode)`` in the order they were evicted.
    """

    step: int
    t_s: float
    block_size: int
    total_blocks: int
    free_blocks: int        #: cached free blocks included (they are reusable)
    cached_free_blocks: int
    running: tuple[int, ...]
    waiting: tuple[int, ...]
    swapped: tuple[int, ...]
    preempted: tuple[tuple[int, int], ...]
    requests: tuple[RequestView, ...]
