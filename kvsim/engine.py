"""The engine loop: one paged-KV serving engine, step by step (and jump by jump).

``simulate(workload, model=..., gpu=..., **engine_options)`` runs the
scheduler of design §3 until every arrived request has finished (or
``until_s``). Explained in chapter 2, *Optimistic admission and preemption*.

One step, following vLLM's ``Scheduler.schedule()`` (V1 by default,
vllm/v1/core/sched/scheduler.py; ``engine="v0"`` for vllm/core/scheduler.py):

1. **Running requests**, in admission order (V0: decodes first, then prefill
   chunks). Each asks the KV cache manager (:mod:`kvsim.blocks`) for the
   blocks of its next tokens: one decode token, or a prefill chunk of
   ``min(remaining, long_prefill_token_threshold, budget)``. When none are
   free, the policy's victim (:mod:`kvsim.policies`; vLLM: the last admitted)
   is preempted, possibly the request itself, which ends the pass. A victim is
   swapped out (V0, ``preemption_mode="swap"``) or its blocks are freed (and
   stay cached) and it goes to the *front* of the waiting queue.
2. **Admission**, only if nothing was preempted in this step: V0 brings
   swapped requests back first; then waiting requests in order, while
   ``max_num_seqs`` and the token budget allow and the policy admits them. A
   request that does not fit stops admission (nobody skips ahead). V1 looks
   up the prefix cache first and allocates the first chunk's blocks, gating on
   the whole prompt fitting (``scheduler_reserve_full_isl``); V0 allocates
   the whole prompt.
3. The step's duration comes from :class:`kvsim.costs.StepCost`, one formula
   for every batch (decodes, chunks, swap copies). Decoding requests emit one
   token; a request whose prefill completes emits its first token (or, after
   a recompute, its next one).

Where kvsim deliberately differs from the engine it models, the line says
``NOTE``. Speed: between events (an arrival, a finish, a block shortage, a
prefill) every step is a pure decode step whose effect is known in closed
form (:mod:`kvsim.decoding`), so the engine computes runs of them at once
("event jumps"). ``step_by_step=True`` turns jumps off; the tests prove both
give byte-identical results, and match an independent reference engine.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from itertools import accumulate

import numpy as np

from .arrivals import make_arrivals
from .blocks import KVCacheManager
from .costs import StepCost, attention_pairs, transfer_copies
from .decoding import DecodeGroup
from .errors import KvsimError
from .fit import check_requests_fit
from .options import ENGINE_DEFAULTS, resolve_options
from .policies import make_policy
from .requests import RequestTable
from .result import SimResult, build_result
from .swapping import SwapSpace
from .timeline import Recorder
from .waiting import make_waiting_queue
from .workload import Request, Workload

__all__ = ["simulate", "ENGINE_DEFAULTS"]

_NAN = float("nan")
#: Pause modes in ``SimResult.pauses`` and ``events``.
RECOMPUTE, SWAP, STALL = 0, 1, 2


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
    """The engine :func:`simulate` runs, not yet started (:mod:`kvsim.stepper` watches it step)."""
    model, gpu, budget, cost_model, cfg = resolve_options(model, gpu, engine_options)
    cost = StepCost(model, gpu, cost_model, tensor_parallel_size=cfg.tensor_parallel_size,
                    kv_bytes_per_token=cfg.kv_bytes_per_token, engine=cfg.engine)
    return _Engine(workload, model, gpu, cost, cfg)


class _Engine:
    """The scheduler's state and loop (per-request state: :class:`kvsim.requests.RequestTable`)."""

    def __init__(self, wl: Workload, model, gpu, cost: StepCost, cfg):
        self.model, self.gpu, self.cost, self.cfg = model, gpu, cost, cfg
        self.bs = cfg.block_size
        self.kv = KVCacheManager(cfg.num_gpu_blocks, cfg.block_size,
                                 prefix_caching=cfg.enable_prefix_caching,
                                 watermark_blocks=cfg.watermark_blocks)
        self.decoding = DecodeGroup(cfg.block_size)
        self.rec = Recorder()
        self.until = cfg.until_s if cfg.until_s is not None else math.inf
        self.max_jump = 1 if cfg.step_by_step else 1 << 62
        # the blocks a request alone may need (V1 keeps its watermark only while others run)
        self.max_prefill = cfg.num_gpu_blocks - (cfg.watermark_blocks if cfg.engine == "v0" else 0)
        self.swap = SwapSpace(cfg.swap_space_blocks, cfg.block_bytes,
                              transfer_copies(1, model.kv_layers, 1 if model.mla_kv_lora_rank else 2),
                              cfg.swap_space_full)
        self.swapped = self.swap.queue

        self.policy = make_policy(cfg.admission, **({} if cfg.admission != "sglang" else dict(
            init_new_token_ratio=cfg.init_new_token_ratio,
            min_new_token_ratio=cfg.min_new_token_ratio,
            new_token_ratio_decay=cfg.new_token_ratio_decay)))
        self.policy.bind(self)
        self._policy_counts_steps = self.policy.counts_steps
        self._policy_acts_before_step = self.policy.acts_before_step
        self._swapping = cfg.preemption_mode == "swap"

        self.requests = reqs = RequestTable(cfg.max_model_len)
        self.arrivals = make_arrivals(wl, until_s=self.until, max_tokens=cfg.max_tokens,
                                      max_model_len=cfg.max_model_len)
        self.closed_loop = wl.is_closed_loop
        if not wl.is_closed_loop:
            arrivals = self.arrivals
            check_requests_fit(cfg, model.name, arrivals.prompt, arrivals.output,
                               max_blocks=self.max_prefill)
            reqs.add_all(arrivals.times, arrivals.prompt, arrivals.output, arrivals.priority)

        self.running: dict[int, None] = {}      # admission order
        self.prefilling: dict[int, None] = {}   # running, still in prefill (same order)
        self.waiting = make_waiting_queue(cfg.scheduling_policy, reqs.priority, reqs.arrival)
        self.stalled: list[int] = []            # decoders that get no token in this step
        self.unstalled: list[int] = []          # re-joined the decode group after a stall
        self.stall_ends = 0                     # stall pauses closed in this step
        self.t = 0.0
        self.T = 0                              # steps executed
        self.step_preemptions = self.step_recomputed = 0
        self._fixed_s: dict[int, float] = {}    # step time of n decodes, without attention
        self._decode_slope = cost.decode_s_per_token
        self.cache_queries = [0, 0]             # [fresh, resumed] tokens looked up
        self.cache_hits = [0, 0]

    # ------------------------------------------------------------- arrivals
    def _pull_arrivals(self, t: float) -> None:
        kv, waiting, arrivals = self.kv, self.waiting, self.arrivals
        if not self.closed_loop:                # their columns are filled: register them
            first = self.requests.count
            self.requests.count = end = arrivals.pull_until(t)
            for rid in range(first, end):
                group, prefix_tokens = arrivals.prefix_of(rid)
                kv.register(rid, group, prefix_tokens, -(rid + 1))
                waiting.push(rid)
            return
        for req, user in arrivals.pull(t):
            check_requests_fit(self.cfg, self.model.name, [req.prompt_tokens],
                               [req.output_tokens], first=req.index, max_blocks=self.max_prefill)
            rid = self.requests.add(req.arrival_s, req.prompt_tokens, req.output_tokens,
                                    req.priority)
            kv.register(rid, req.prefix_group, req.prefix_tokens,
                        req.session if req.session >= 0 else -(rid + 1))
            arrivals.bind(rid, user)
            waiting.push(rid)

    # -------------------------------------------------------- request state
    def generated_now(self, rid: int) -> int:
        """Tokens ``rid`` has generated so far (``generated`` lags for decoding requests)."""
        if rid in self.decoding:
            return self.decoding.stored(rid, self.T) - self.requests.prompt[rid] + 1
        return self.requests.generated[rid]

    def decode_blocks_needed(self) -> int:
        return self.decoding.new_blocks(self.T)

    def _start_decoding(self, rid: int, T_next: int) -> None:
        """``rid`` has emitted a token and decodes from step ``T_next`` on."""
        reqs = self.requests
        g = reqs.generated[rid]
        self.decoding.add(rid, reqs.prompt[rid] + g - 1, T_next, T_next + reqs.output[rid] - g - 1)

    def _leave_decoding(self, rid: int) -> int:
        """Take ``rid`` out of the decode group before step ``T``; returns its stored tokens."""
        reqs = self.requests
        first = self.decoding.first_step[rid]
        stored = self.decoding.remove(rid, self.T)
        if first < self.T:              # it emitted a token at the end of every step since
            reqs.last_token[rid] = self.t
        reqs.generated[rid] = stored - reqs.prompt[rid] + 1
        self.kv.set_held(rid, self.kv.blocks_for(stored))
        self.rec.stint(rid, first, self.T)
        return stored

    def _stored(self, rid: int) -> int:
        """Tokens whose KV ``rid`` holds (it is not in the decode group)."""
        reqs = self.requests
        if rid in self.prefilling:
            return reqs.computed[rid]
        return reqs.prompt[rid] + reqs.generated[rid] - 1

    def preempt(self, rid: int) -> None:
        """Evict ``rid`` before step ``T`` (swap it out, or free its blocks for a recompute)."""
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
        self.step_preemptions += 1
        if self.cfg.preemption_mode == "swap" and decoding \
                and self.swap.swap_out(rid, self.kv.held[rid], self.t):
            mode = SWAP
            reqs.swaps[rid] += 1
            self.kv.release(rid, stored, reachable=False)
        else:
            mode = RECOMPUTE
            self.kv.release(rid, stored, reachable=True)
            reqs.high[rid] = max(reqs.high[rid], stored)
            reqs.target[rid] = reqs.prompt[rid] + reqs.generated[rid]
            reqs.computed[rid] = 0
            self.waiting.push_front(rid)
        if reqs.generated[rid] > 0:            # a pause starts at the last token
            self.rec.pause_start(rid, reqs.last_token[rid], mode)
            self.rec.set_pause_mode(rid, mode)
        self.rec.event(self.t, rid, mode)

    # ------------------------------------------------------------------ run
    def run(self, after_step=None) -> SimResult:
        """Run to the end; ``after_step(engine)``, when given, is called after every step."""
        arrivals, until = self.arrivals, self.until
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
            if after_step is not None:
                after_step(self)
        self._pull_arrivals(min(self.t, math.nextafter(self.until, 0.0)))
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

    # ------------------------------------------------------ 1. running
    def _chunk_of(self, rid: int, budget: int) -> int:
        c = self.requests.target[rid] - self.requests.computed[rid]
        thr = self.cfg.long_prefill_token_threshold
        if 0 < thr < c:
            c = thr
        return min(c, budget)

    def _schedule_running(self, budget: int):
        """Step 1: every running request's tokens of this step ``(chunks, solo, budget left)``.

        ``chunks`` are ``(rid, start, tokens)`` prefill chunks, ``solo`` the
        decoders scheduled one by one (the decode group is scheduled whole). When
        everything fits, the blocks are taken at once; else the exact pass runs.
        """
        kv, group = self.kv, self.decoding
        n_group = group.size
        plan = self._plan_chunks(budget - n_group) if self.prefilling else ([], 0)
        if plan is None or n_group > budget:
            return self._schedule_in_order(budget)
        chunks, chunk_blocks = plan
        need = group.new_blocks(self.T) if n_group else 0
        if need + chunk_blocks > kv.free:
            return self._schedule_in_order(budget)
        budget -= n_group
        if not chunks:
            kv.take(need)
            return chunks, [], budget
        if self.cfg.engine == "v1" and any(kv.registers_prefix(r, s + c) for r, s, c in chunks):
            self._take_in_admission_order(chunks)
        else:                                      # order cannot matter: take all at once
            kv.take(need)
            for rid, start, c in chunks:
                kv.grow(rid, start + c)
                kv.cache_prefix(rid, start + c)
        return chunks, [], budget - sum(c for _, _, c in chunks)

    def _plan_chunks(self, budget: int):
        """Every prefilling request's next chunk ``(rid, start, tokens)`` and the new blocks
        they need, or None when they do not all get their full chunk within ``budget``."""
        plan = []
        new_blocks = 0
        kv, computed = self.kv, self.requests.computed
        for rid in self.prefilling:
            c = self._chunk_of(rid, budget)
            if c < self._chunk_of(rid, 1 << 62) or c <= 0:
                return None
            start = computed[rid]
            plan.append((rid, start, c))
            new_blocks += max(0, kv.blocks_for(start + c) - kv.held[rid])
            budget -= c
        return plan, new_blocks

    def _take_in_admission_order(self, chunks) -> None:
        """Blocks for a step where everything fits, taken request by request in running
        order, as V1's pass takes them. Only needed when a chunk caches shared-prefix
        blocks: then which free block goes first decides which copy later lookups find."""
        kv, group, T = self.kv, self.decoding, self.T
        grow = {rid: start + c for rid, start, c in chunks}
        for rid in self.running:
            if rid in grow:
                kv.grow(rid, grow[rid])
                kv.cache_prefix(rid, grow[rid])
            elif rid in group.offset and (group.offset[rid] + T) % self.bs == 0:
                kv.take(1)                          # a decode that starts a new block

    def _schedule_in_order(self, budget: int):
        """The exact pass: one request at a time, preempting on a shortage (see the module doc)."""
        kv = self.kv
        if self.cfg.engine == "v0":   # V0's chunked-prefill policy: decodes first
            order = [r for r in self.running if r not in self.prefilling] + list(self.prefilling)
        else:
            order = list(self.running)
        for rid in list(self.decoding.offset):
            self._leave_decoding(rid)
        scheduled: dict[int, int] = {}
        stop = False
        for rid in order:
            if budget <= 0:
                break
            if rid not in self.running:
                continue                               # an earlier victim
            decoding = rid not in self.prefilling
            c = 1 if decoding else self._chunk_of(rid, budget)
            tokens = self._stored(rid) + c
            while kv.shortfall(rid, tokens) > 0:
                victim = self.policy.victim(rid)
                self.preempt(victim)
                if victim == rid:
                    stop = True
                    break
                budget += scheduled.pop(victim, 0)
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

    # ------------------------------------------------------ 2. admission
    def _admit(self, chunks: list, budget: int) -> bool:
        """Admit waiting requests in order while they fit; each one's first chunk joins ``chunks``."""
        cfg, kv, reqs, waiting = self.cfg, self.kv, self.requests, self.waiting
        admitted = False
        thr = cfg.long_prefill_token_threshold
        while waiting and not self.swapped and len(self.running) < cfg.max_num_seqs \
                and budget > 0:
            rid = waiting.head()
            tokens = reqs.target[rid]
            hit = kv.lookup(rid, tokens)
            hit_tokens = hit.blocks * self.bs
            c = tokens - hit_tokens
            if 0 < thr < c:
                c = thr
            if not cfg.enable_chunked_prefill and c > budget:
                break
            c = min(c, budget)
            upto = tokens if cfg.whole_prompt_allocation else hit_tokens + c
            # the blocks the gate asks for: V1 the whole prompt (scheduler_reserve_full_isl)
            gate = tokens if cfg.scheduler_reserve_full_isl else upto
            new_blocks = kv.blocks_for(gate) - hit.blocks
            # V1 keeps its watermark only while other requests run (PR #44594)
            headroom = cfg.watermark_blocks if cfg.whole_prompt_allocation or self.running else 0
            if not self.policy.admits(rid, new_blocks, hit, headroom):
                break
            waiting.pop_head()
            kv.admit(rid, hit, upto)
            resumed = reqs.preemptions[rid] > 0
            if cfg.enable_prefix_caching:
                self.cache_queries[resumed] += tokens
                self.cache_hits[resumed] += hit_tokens
            if resumed:
                reqs.rescued[rid] += min(hit_tokens, reqs.high[rid])
            elif cfg.enable_prefix_caching:
                reqs.lookup_tokens[rid], reqs.hit_tokens[rid] = tokens, hit_tokens
            reqs.computed[rid] = hit_tokens
            kv.cache_prefix(rid, hit_tokens + c)
            self.running[rid] = None
            self.prefilling[rid] = None
            self.policy.admitted(rid)
            chunks.append((rid, hit_tokens, c))
            budget -= c
            admitted = True
        return admitted

    # ------------------------------------------------------ 4. effects
    def _recomputed(self, rid: int, start: int, c: int) -> None:
        """The chunk ``start .. start + c`` of ``rid`` holds tokens computed before a preemption."""
        reqs = self.requests
        again = min(start + c, reqs.high[rid]) - start
        reqs.recomputed[rid] += again
        self.step_recomputed += again

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
            self._start_decoding(rid, self.T)

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
            self.decoding.add(rid, self._stored(rid), self.T,
                              self.T + reqs.output[rid] - reqs.generated[rid] - 1)
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
        reachable = self.arrivals.finished(rid, t1)
        self.kv.release(rid, reqs.prompt[rid] + reqs.generated[rid] - 1, reachable=reachable)

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
        k = group.next_finish()[0] - T + 1
        if k > self.max_jump or ((self.waiting or self.swapped) and not self.policy.stays_blocked):
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
        if k > 1 and lim < math.inf:
            kt = int((lim - t0) / (fixed + slope * context)) + 2
            if kt < k:
                k = kt
        # the same sum, step by step, that single steps make (byte-identical times)
        dts = [fixed + slope * c for c in range(context, context + k * n, n)]
        ends = accumulate(dts, initial=t0)
        next(ends)
        ends = list(ends)
        if lim < math.inf and k > 1:               # keep the steps that start before lim
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
