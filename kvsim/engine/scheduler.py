"""The scheduler: which requests run in the next step, and what their tokens change.

Explained in chapter 2, *Optimistic admission and preemption*. It follows
vLLM's ``Scheduler`` (V1 by default, vllm/v1/core/sched/scheduler.py;
``engine="v0"`` for vllm/core/scheduler.py): :meth:`Scheduler._schedule_running`
and :meth:`Scheduler._admit` are its ``schedule()``, the methods after them its
``update_from_output()``. The clock, the step's duration and the jumps over
identical decode steps are the engine's (:mod:`kvsim.engine.loop`).

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

Decoding requests live in a :class:`kvsim.engine.decoding.DecodeGroup` (their
stored tokens follow from the step counter ``T``); every other request's state
is in :class:`kvsim.engine.requests.RequestTable`. Where kvsim deliberately differs
from the engine it models, the line carries a ``NOTE(tag)`` that
``book/engine-reference.md`` lists.
"""
from __future__ import annotations

import math

from kvsim.units import UNLIMITED

from .blocks import KVCacheManager
from .costs import transfer_copies
from .decoding import DecodeGroup
from .policies import make_policy
from .requests import RequestTable
from .swapping import SwapSpace
from .waiting import make_waiting_queue

__all__ = ["Scheduler", "RECOMPUTE", "SWAP", "STALL"]

#: Pause modes in ``SimResult.pauses`` and ``events``.
RECOMPUTE, SWAP, STALL = 0, 1, 2


class Scheduler:
    """The scheduler's state: requests, queues, blocks, the policy (see the module docstring).

    ``T`` (steps executed) and ``t`` (s) are the engine's clock; ``arrivals`` hears
    when a request finishes (a closed loop's user sends the next one), ``rec``
    records pauses, preemptions and decoding stints.
    """

    def __init__(self, cfg, model, arrivals, rec):
        self.cfg, self.model, self.arrivals, self.rec = cfg, model, arrivals, rec
        self.bs = cfg.block_size
        self.t = 0.0
        self.T = 0
        self.kv = KVCacheManager(cfg.num_gpu_blocks, cfg.block_size,
                                 prefix_caching=cfg.enable_prefix_caching,
                                 watermark_blocks=cfg.watermark_blocks,
                                 watermark_when_alone=cfg.whole_prompt_allocation)
        self.decoding = DecodeGroup(cfg.block_size)
        self.requests = reqs = RequestTable(cfg.max_model_len)
        self.running: dict[int, None] = {}      # admission order
        self.prefilling: dict[int, None] = {}   # running, still in prefill (same order)
        self.waiting = make_waiting_queue(cfg.scheduling_policy, reqs.priority, reqs.arrival)
        self.swap = SwapSpace(cfg.swap_space_blocks, cfg.block_bytes,
                              transfer_copies(1, model.kv_layers, model.kv_tensors),
                              cfg.swap_space_full)
        self.swapped = self.swap.queue
        self.stalled: list[int] = []            # decoders that get no token in this step
        self.unstalled: list[int] = []          # re-joined the decode group after a stall
        self.stall_ends = 0                     # stall pauses closed in this step
        self.step_preemptions = self.step_recomputed = 0
        self.step_tokens = 0                    # tokens scheduled in the last step
        self.cache_queries = [0, 0]             # [fresh, resumed] tokens looked up
        self.cache_hits = [0, 0]
        self.policy = make_policy(cfg)
        self.policy.bind(self)

    def add_request(self, rid: int, prefix_group: int, prefix_tokens: int, stream) -> None:
        """Request ``rid`` (already in the table) arrives: its tokens are ``prefix_tokens`` of
        ``prefix_group`` (-1: none), then the stream ``stream`` (see :mod:`kvsim.engine.blocks`)."""
        self.kv.register(rid, prefix_group, prefix_tokens, stream)
        self.waiting.push(rid)

    def generated_now(self, rid: int) -> int:
        """Tokens ``rid`` has generated so far (``generated`` lags for decoding requests)."""
        if rid in self.decoding:
            return self.decoding.stored(rid, self.T) - self.requests.prompt[rid] + 1
        return self.requests.generated[rid]

    def decode_blocks_needed(self) -> int:
        return self.decoding.new_blocks(self.T)

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

    # ---------------------------------------------- 1. the running requests
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

    def _chunk_of(self, rid: int, budget: int) -> int:
        c = self.requests.target[rid] - self.requests.computed[rid]
        thr = self.cfg.long_prefill_token_threshold
        if 0 < thr < c:
            c = thr
        return min(c, budget)

    def _plan_chunks(self, budget: int):
        """Every prefilling request's next chunk ``(rid, start, tokens)`` and the new blocks
        they need, or None when they do not all get their full chunk within ``budget``."""
        plan = []
        new_blocks = 0
        kv, computed = self.kv, self.requests.computed
        for rid in self.prefilling:
            c = self._chunk_of(rid, budget)
            if c < self._chunk_of(rid, UNLIMITED) or c <= 0:
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
        # NOTE(v0-priority-preemption): V0's priority scheduler also re-sorts its running queue
        # by priority and may preempt a low-priority request for a waiting high-priority one;
        # kvsim keeps admission order and preempts only on a block shortage.
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

    # ------------------------------------------------------- 2. admission
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
            if not self.policy.admits(rid, new_blocks, hit, kv.admission_headroom(bool(self.running))):
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

    # ---------------------------------------- after a step: its tokens
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
