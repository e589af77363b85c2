"""Admission and victim choice: one class per real engine's behaviour.

Explained in chapter 2, *Optimistic admission and preemption*.

* :class:`OptimisticAdmission` — vLLM: admit a waiting request when the
  blocks it needs now fit, leaving the watermark free; the answer is not
  reserved. What "needs now" means is the engine mode's (V1: the whole prompt
  when ``scheduler_reserve_full_isl``, else the first chunk; V0: the whole
  prompt), less its prefix-cache hit. When a running request cannot get a
  block, the victim is the *last admitted* running request (priority
  scheduling: the lowest priority, then the latest arrival), as vLLM's
  ``schedule()`` does.
* TensorRT-LLM's capacity scheduler, as NVIDIA/TensorRT-LLM does it
  (cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp @02a10fed,
  cpp/include/tensorrt_llm/batch_manager/scheduledBlocksManager.h @6a1a21e4,
  kvCacheManager.cpp @002ba6a7 ``getNeededBlocksOneStep`` and
  ``getRemainingBlocksToCompletion``; the PyTorch backend,
  tensorrt_llm/_torch/pyexecutor/scheduler.py @b93e14ca, binds the same C++ class):

  - :class:`MaxUtilizationAdmission` — ``MAX_UTILIZATION``: a new request needs
    free blocks for its whole prompt, with no credit for cached prefix blocks,
    and the requests admitted before it in the round count at their whole
    prompts too; pauses (the victim, the front of the queue) are vLLM's.
  - :class:`GuaranteedAdmission` — ``GUARANTEED_NO_EVICT``: admit only if the
    blocks of prompt + planned answer, for it and what remains for everything
    running, fit the free blocks; a shared-prefix block held by several running
    requests is counted once. It never preempts.
  - :class:`StaticBatchAdmission` — ``STATIC_BATCH``: guaranteed admission, and
    nothing new while any request generates (nor a prefill chunk: a request
    still in prefill waits too), so a batch runs to its end before the next.
* :class:`SGLangAdmission` — SGLang's scheduler (sgl-project/sglang, the commits
  its docstring names): a new request reserves its prompt and its whole remaining
  answer, running ones ``new_token_ratio`` x theirs; a refusal blocks admission
  until a request finishes or is retracted; the ratio decays per step, is a fresh
  estimate after a retraction and starts again when the server idles. Before each
  step it retracts, while the decoding requests need more blocks than are free,
  the request with the fewest generated tokens (ties: the longest prompt), to the
  back of the queue, keeping only its last prefill's KV cached.

The scheduler asks a policy: may this request be admitted (:meth:`admits`),
which running request is the victim (:meth:`victim`), is there anything to do
before a step (:meth:`before_step`), and does a blocked queue stay blocked
while the batch only decodes (``stays_blocked``, which lets the engine jump
over steps). What a policy may read of the scheduler, and the one thing it may
do to it (preempt), is :class:`SchedulerView`.
"""
from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any, Protocol, overload

import numpy as np

from kvsim.errors import KvsimError

from .blocks import KVCacheManager
from .blocks.counting import blocks_for
from .options import (
    ADMISSION_NAMES,
    SGLANG_CLIP_MAX_NEW_TOKENS,
    SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS,
    SGLANG_RETRACT_DECODE_STEPS,
    EngineConfig,
    check_sglang_constants,
)
from .requests import RequestTable

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .blocks import Hit
    from .plan import Chunk

    _Counts = NDArray[np.integer[Any]]   # token or block counts, one per request

__all__ = ["SchedulerView", "OptimisticAdmission", "GuaranteedAdmission", "SGLangAdmission",
           "MaxUtilizationAdmission", "StaticBatchAdmission", "make_policy", "ADMISSIONS"]


class SchedulerView(Protocol):
    """What a policy may read of the scheduler (:class:`kvsim.engine.scheduler.Scheduler`)
    and do to it: nothing but :meth:`preempt`."""

    cfg: EngineConfig
    kv: KVCacheManager
    requests: RequestTable

    # admission order; a dict, not just a Mapping: victim() reverses it (read-only here)
    @property
    def running(self) -> dict[int, None]: ...
    @property
    def prefilling(self) -> dict[int, None]: ...

    def generated_now(self, rid: int) -> int: ...
    def decode_blocks_needed(self) -> int: ...
    def preempt(self, rid: int) -> None: ...


class _Policy:
    name = "base"
    #: a queue that cannot be admitted stays blocked during pure-decode steps
    #: (free blocks only shrink, the batch is fixed), so the engine may jump.
    stays_blocked = True
    #: the policy wants :meth:`stepped` after every step
    counts_steps = False
    #: the policy has something to do in :meth:`before_step`
    acts_before_step = False
    #: the policy wants :meth:`begin_admission` before each admission round
    plans_rounds = False
    #: a preempted request goes to the front of the waiting queue (vLLM), else the back
    requeue_front = True
    #: a recomputed victim's full blocks all stay cached (vLLM); else only its last prefill's
    keeps_generated_kv = True
    #: SGLang's ``batch_is_full``: no admission until a request finishes or is retracted
    batch_is_full = False
    #: TensorRT-LLM's STATIC_BATCH: while any request generates, no prefill chunk runs
    prefill_waits_for_decoders = False
    #: what mypyc lets :meth:`detach` delete
    __deletable__ = ["sched"]

    def __init__(self, sched: SchedulerView) -> None:
        self.sched = sched
        # priority mode: heap of running requests' keys (-priority, -arrival, admission, rid)
        self._victims: list[tuple[int, float, int, int]] = []
        self._admissions = 0
        self._admitted_at: dict[int, int] = {}
        self._by_priority = sched.cfg.scheduling_policy == "priority"

    def detach(self) -> None:
        """The run is over: let go of the scheduler. The two refer to each other, so without
        this a finished run's state (about 90 MB after 10^5 requests) waited for the cyclic
        garbage collector's next full pass, which in a loop of runs came once in 30."""
        if hasattr(self, "sched"):          # not twice: run() again on an ended engine
            del self.sched

    def planned_answer(self, rid: int) -> int:
        """The answer length the scheduler plans for: ``max_tokens`` when the engine
        sets it, else the request's own length (a client that knows it)."""
        max_tokens = self.sched.cfg.max_tokens
        return max_tokens if max_tokens is not None else self.sched.requests.output[rid]

    # the engine's questions
    def admits(self, rid: int, new_blocks: int, hit: Hit, headroom: int) -> bool:
        return self.sched.kv.can_allocate(new_blocks, hit, headroom)

    def victim(self, requester: int) -> int:
        """The running request to preempt so that ``requester`` can grow."""
        sched = self.sched
        if sched.cfg.scheduling_policy == "fcfs":
            return next(reversed(sched.running))
        heap = self._victims
        while True:
            rid = heap[0][3]
            if rid in sched.running and self._admitted_at.get(rid) == heap[0][2]:
                return rid
            heapq.heappop(heap)

    def before_step(self) -> None:
        pass

    def begin_admission(self, chunks: list[Chunk]) -> None:
        pass

    # notifications
    def admitted(self, rid: int) -> None:
        if self._by_priority:
            # vLLM: max(running, key=(priority, arrival_time)); among ties, the first
            # in the running list (the earliest admitted)
            sched = self.sched
            self._admissions += 1
            self._admitted_at[rid] = self._admissions
            reqs = sched.requests
            heapq.heappush(self._victims, (-reqs.priority[rid], -reqs.arrival[rid], self._admissions, rid))

    def released(self, rid: int) -> None:
        pass

    def stepped(self, n_steps: int) -> None:
        pass

    def idled(self) -> None:
        """The server has nothing to do (it waits for the next arrival)."""


class OptimisticAdmission(_Policy):
    """vLLM's check: the blocks needed now, plus the headroom, are free."""

    name = "optimistic"


class MaxUtilizationAdmission(_Policy):
    """TensorRT-LLM's ``MAX_UTILIZATION`` (``MaxUtilizationScheduler``; see the module docstring).

    ``MaxUtilizationScheduledBlocksManager`` adds up, over the round, the blocks
    each scheduled request needs for one step and checks the sum against the
    free blocks (``schedulingHasFreeBlocks``); for a request's first context
    chunk ``getNeededBlocksOneStep`` asks for ``ceil(prompt / block_size)``, the
    whole prompt (after a pause, prompt + generated), whatever the prefix cache
    holds or the first chunk takes. The running requests' blocks are taken
    before admission in kvsim, so the round starts from the blocks free then, less
    what the prompts still in prefill lack (TensorRT-LLM's ``addSequence`` takes a
    whole prompt's blocks at its first chunk, kvsim's V1 each chunk's).
    Victim and pause: the last started request, back at the front (vLLM's).
    """

    name = "max_utilization"
    plans_rounds = True

    def __init__(self, sched: SchedulerView) -> None:
        super().__init__(sched)
        self._room = 0      # free blocks less the whole prompts admitted in this round

    def begin_admission(self, chunks: list[Chunk]) -> None:
        sched = self.sched
        kv = sched.kv
        lacking = 0
        for rid in sched.prefilling:
            lacking += max(0, self._prompt_blocks(rid) - kv.held[rid])
        self._room = kv.free - lacking

    def _prompt_blocks(self, rid: int) -> int:
        sched = self.sched
        return sched.kv.blocks_for(sched.requests.target[rid])

    def admits(self, rid: int, new_blocks: int, hit: Hit, headroom: int) -> bool:
        # NOTE(trtllm-skip-for-reuse): TensorRT-LLM first skips a request whose next
        # uncached block another context request of the round computes; kvsim admits in order
        return self._prompt_blocks(rid) + headroom <= self._room

    def admitted(self, rid: int) -> None:
        super().admitted(rid)
        if rid in self.sched.prefilling:      # not a V0 swap-in (TensorRT-LLM has no swap)
            self._room -= self._prompt_blocks(rid)


class GuaranteedAdmission(_Policy):
    """TensorRT-LLM's ``GUARANTEED_NO_EVICT``: reserve prompt + planned answer; never preempt.

    ``GuaranteedNoEvictScheduler`` starts from the free blocks, takes off what each
    running request still needs to completion (``getRemainingBlocksToCompletion``:
    the blocks of prompt + ``max_new_tokens`` less the blocks its table holds), and
    admits waiting requests in order while each one's whole reservation fits the
    rest (a new request holds nothing yet, so its own prefix hit earns no credit).
    Free blocks count a shared-prefix block once however many tables hold it, so
    the condition is ``reserved + new <= pool + shared_block_refs`` (the extra
    holders, counted when the round starts): shared blocks count once.

    The reservation uses the engine's ``max_tokens`` when it is set; without it
    each request reserves its own true answer length, as if every client sent
    an exact ``max_tokens`` (the best case for this policy).
    """

    name = "guaranteed"
    plans_rounds = True

    def __init__(self, sched: SchedulerView) -> None:
        super().__init__(sched)
        self.reserved = 0
        self.resv: dict[int, int] = {}
        self._credit = 0     # the extra holders of shared blocks when the round began

    def begin_admission(self, chunks: list[Chunk]) -> None:
        self._credit = self.sched.kv.shared_block_refs

    @overload
    @staticmethod
    def reservations(cfg: EngineConfig, prompts: int, outputs: int) -> int: ...
    @overload
    @staticmethod
    def reservations(cfg: EngineConfig, prompts: _Counts, outputs: _Counts) -> _Counts: ...
    @staticmethod
    def reservations(cfg: EngineConfig, prompts: int | _Counts, outputs: int | _Counts) -> int | _Counts:
        """Blocks each request reserves, for arrays (or ints) of prompt and answer tokens:
        prompt + the planned answer (``max_tokens`` when set, else the request's own)."""
        answers = cfg.max_tokens if cfg.max_tokens is not None else outputs
        return blocks_for(prompts + answers, cfg.block_size)

    @classmethod
    def check_fits(cls, cfg: EngineConfig, prompts: _Counts, outputs: _Counts, *, first: int = 0) -> None:
        """Raise a KvsimError naming the first request (number ``first + i``) whose reservation
        alone exceeds the pool: it could never be admitted."""
        resv = cls.reservations(cfg, prompts, outputs)
        bad = np.flatnonzero(resv > cfg.num_gpu_blocks)
        if bad.size:
            i = int(bad[0])
            answer = cfg.max_tokens if cfg.max_tokens is not None else int(outputs[i])
            raise KvsimError(
                f"request {first + i} (prompt {int(prompts[i])} tokens + max_tokens {answer}) can "
                f"never be admitted under guaranteed admission: it reserves {int(resv[i])} blocks "
                f"but the pool has {cfg.num_gpu_blocks}: expected prompt + max_tokens <= "
                f"{cfg.num_gpu_blocks * cfg.block_size:,} tokens")

    def reservation(self, rid: int) -> int:
        sched = self.sched
        reqs = sched.requests
        return self.reservations(sched.cfg, reqs.prompt[rid], reqs.output[rid])

    def admits(self, rid: int, new_blocks: int, hit: Hit, headroom: int) -> bool:
        # NOTE(trtllm-skip-for-reuse): no skip for a request that could reuse a block
        # another context request of the round computes; kvsim admits in order
        kv = self.sched.kv
        return (self.reserved + self.reservation(rid) <= kv.num_blocks + self._credit
                and kv.can_allocate(new_blocks, hit, 0))

    def victim(self, requester: int) -> int:
        raise RuntimeError("kvsim: guaranteed admission ran out of blocks (internal error: its "
                           "reservations should make that impossible)")

    def admitted(self, rid: int) -> None:
        super().admitted(rid)
        r = self.reservation(rid)
        self.resv[rid] = r
        self.reserved += r

    def released(self, rid: int) -> None:
        self.reserved -= self.resv.pop(rid)


class StaticBatchAdmission(GuaranteedAdmission):
    """TensorRT-LLM's ``STATIC_BATCH`` (``StaticBatchScheduler``: ``impl<true>`` of
    GUARANTEED_NO_EVICT's scheduler).

    Its first loop schedules every request in generation; only when it scheduled
    none does it look at the context requests, new ones and those part-way through
    a chunked prefill alike, with guaranteed admission's reservations (and no skip
    for reuse). So while any request generates, nothing is admitted and no prefill
    chunk runs: a batch drains before the next one starts.
    """

    name = "static_batch"
    prefill_waits_for_decoders = True

    def admits(self, rid: int, new_blocks: int, hit: Hit, headroom: int) -> bool:
        sched = self.sched
        if len(sched.running) > len(sched.prefilling):      # someone generates
            return False
        return super().admits(rid, new_blocks, hit, headroom)


class SGLangAdmission(_Policy):
    """SGLang's scheduler, as sgl-project/sglang does it (see the module docstring).

    Follows python/sglang/srt/managers/schedule_policy.py @ad0119fd (``PrefillAdder``:
    ``add_one_req``, ``_get_running_request_total_token_offset``, ``budget_state``),
    schedule_batch.py @fd3907ee (``retract_decode``, ``release_req``), scheduler.py
    @0003215c (``get_new_batch_prefill``, ``update_running_batch``,
    ``self_check_during_idle``) and environ.py @21ff4b08 (the constants). These rules
    are the same at schedule_policy.py @00550cd1, so there is no version option.

    * The ratio starts at ``init_new_token_ratio`` (0.7), decays by
      ``new_token_ratio_decay`` per step down to ``min_new_token_ratio`` (0.7 x 0.14);
      after a retraction it is a fresh estimate from the survivors,
      ``min(1, (generated + 20 x n) / (planned answers + 1))`` (up or down), and when the
      server idles it is the initial value again.
    * Admission: the candidate needs its new prompt tokens plus its whole remaining answer
      (clipped at 4,096) to be fewer than the free tokens (cached ones included, its own
      hit excluded) less every reservation: decoding requests ``ratio x`` their remaining
      answers, requests whose prefill ends in this step (admitted in this round, or
      running a last chunk) their remaining answers in full.
    * A refusal for memory sets ``batch_is_full``: nothing is admitted until a request
      finishes or is retracted.
    * A retracted request goes to the *back* of the waiting queue; only the tokens of its
      last prefill stay cached (SGLang frees the KV of its generated tokens).
    """

    name = "sglang"
    stays_blocked = False  # the ratio decays every step, so a blocked queue may open
    counts_steps = True
    acts_before_step = True
    plans_rounds = True
    requeue_front = False
    keeps_generated_kv = False

    def __init__(self, sched: SchedulerView, init_new_token_ratio: float = 0.7,
                 min_new_token_ratio: float | None = None,
                 new_token_ratio_decay: float | None = None) -> None:
        super().__init__(sched)
        self.init, self.min, decay = check_sglang_constants(
            init_new_token_ratio, min_new_token_ratio, new_token_ratio_decay)
        self.decay = (self.init - self.min) / SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS \
            if decay is None else decay
        self.base = self.init          # the ratio set by the last reset or retraction
        self.steps_since_reset = 0     # decay steps since (-1: the retraction's own step)
        self._chunks: list[Chunk] = []
        self._reserved: float | None = None   # this round's reservations, in tokens

    @property
    def ratio(self) -> float:
        k = self.steps_since_reset
        if k <= 0:
            return self.base
        return max(self.min, self.base - k * self.decay)

    def _answer_left(self, rid: int) -> int:
        """``rid``'s remaining planned answer, clipped as SGLang's estimate is."""
        left = self.planned_answer(rid) - self.sched.generated_now(rid)
        return min(left, SGLANG_CLIP_MAX_NEW_TOKENS) if left > 0 else 0

    def begin_admission(self, chunks: list[Chunk]) -> None:
        """A new admission round: ``chunks`` holds this step's chunks, and grows as it admits."""
        self._chunks = chunks
        self._reserved = None

    def _round_reservations(self) -> float:
        """Decoding requests reserve ``ratio x`` their remaining answers; a request whose
        scheduled chunk ends its prefill, its remaining answer in full."""
        sched = self.sched
        prefilling, target = sched.prefilling, sched.requests.target
        ends = {rid: start + c for rid, start, c in self._chunks}
        scaled = full = 0
        for x in sched.running:
            if x in prefilling:
                if ends.get(x, -1) >= target[x]:
                    full += self._answer_left(x)
            else:
                scaled += self._answer_left(x)
        return self.ratio * scaled + full

    def admits(self, rid: int, new_blocks: int, hit: Hit, headroom: int) -> bool:
        if self.batch_is_full:
            return False
        sched = self.sched
        kv = sched.kv
        if not kv.can_allocate(new_blocks, hit, 0):
            self.batch_is_full = bool(sched.running)
            return False
        if not sched.running:  # NOTE(sglang-idle-admission)
            return True
        if self._reserved is None:
            self._reserved = self._round_reservations()
        bs = kv.block_size
        prompt_new = (kv.blocks_for(sched.requests.target[rid]) - hit.blocks) * bs
        need = prompt_new + self._answer_left(rid)
        if need >= (kv.free - hit.evictable) * bs - self._reserved:
            self.batch_is_full = True
            return False
        return True

    def admitted(self, rid: int) -> None:
        super().admitted(rid)
        sched = self.sched
        if rid not in sched.prefilling:        # a V0 swap-in (SGLang has no swap)
            return
        if self._reserved is None:             # the idle server's first admission
            self._reserved = self._round_reservations()
        else:
            _rid, start, c = self._chunks[-1]
            if start + c >= sched.requests.target[rid]:
                self._reserved += self._answer_left(rid)
        # budget_state(): no token left, the batch is full
        if sched.kv.free * sched.kv.block_size - self._reserved <= 0:
            self.batch_is_full = True

    def released(self, rid: int) -> None:
        self.batch_is_full = False     # a request finished or was retracted

    def _fewest_generated(self) -> int:
        sched = self.sched
        prompt = sched.requests.prompt
        return min(sched.running, key=lambda x: (sched.generated_now(x), -prompt[x], -x))

    def _estimate(self, leaving: int = -1) -> None:
        """The ratio after a retraction, from the decoding survivors (``leaving`` excluded)."""
        sched = self.sched
        generated = planned = n = 0
        for x in sched.running:
            if x != leaving and x not in sched.prefilling:
                generated += sched.generated_now(x)
                planned += self.planned_answer(x)
                n += 1
        self.base = min(1.0, (generated + SGLANG_RETRACT_DECODE_STEPS * n) / (planned + 1))
        self.steps_since_reset = -1    # no decay in the retraction's step

    def victim(self, requester: int) -> int:
        v = self._fewest_generated()
        self._estimate(leaving=v)
        return v

    def before_step(self) -> None:
        """Retract decoding requests until every decode of this step fits."""
        sched = self.sched
        retracted = False
        while sched.decode_blocks_needed() > sched.kv.free:
            sched.preempt(self._fewest_generated())
            retracted = True
        if retracted:
            self._estimate()

    def stepped(self, n_steps: int) -> None:
        self.steps_since_reset += n_steps

    def idled(self) -> None:
        self.base, self.steps_since_reset = self.init, 0


ADMISSIONS: dict[str, type[_Policy]] = {
    "optimistic": OptimisticAdmission, "guaranteed": GuaranteedAdmission, "sglang": SGLangAdmission,
    "max_utilization": MaxUtilizationAdmission, "static_batch": StaticBatchAdmission}
assert tuple(ADMISSIONS) == ADMISSION_NAMES, "options.ADMISSION_NAMES must name every policy"


def make_policy(sched: SchedulerView) -> _Policy:
    """The policy ``sched.cfg.admission`` names, complete: reading ``sched``, with its
    parameters from the engine config."""
    cfg = sched.cfg
    if cfg.admission == "sglang":
        return SGLangAdmission(sched, init_new_token_ratio=cfg.init_new_token_ratio,
                               min_new_token_ratio=cfg.min_new_token_ratio,
                               new_token_ratio_decay=cfg.new_token_ratio_decay)
    return ADMISSIONS[cfg.admission](sched)
