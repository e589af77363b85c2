"""The scheduler's decision for one step: :class:`StepPlan` (vLLM: ``SchedulerOutput``).

Explained in chapter 2, *Optimistic admission and preemption*. The scheduler
(:mod:`kvsim.engine.scheduler`) makes a plan, the cost model prices it
(:meth:`kvsim.engine.costs.StepCost.plan_s`) and the engine
(:mod:`kvsim.engine.loop`) hands it back with the step's end time to be applied.
By the time a plan exists its blocks are taken and its preemptions done, as in
vLLM, where ``schedule()`` allocates the blocks of what it schedules.
"""
from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import TypeAlias

__all__ = ["StepPlan", "PlanKind", "BATCH", "DECODE_RUN", "EVICTED", "LOAD_WAIT"]


class PlanKind(IntEnum):
    """What kind of step a plan is."""

    #: one step of decodes, prefill chunks and swap-ins
    BATCH = 0
    #: only the decode group, as in the last steps, so up to ``max_steps`` identical
    #: steps may run at once (the engine's event jumps)
    DECODE_RUN = 1
    #: everything that could run was preempted; the step computes nothing and lasts
    #: as long as its swap copies
    EVICTED = 2
    #: nothing can run until a load from the host tier is done (``wait_until_s``): no step
    LOAD_WAIT = 3


BATCH, DECODE_RUN, EVICTED, LOAD_WAIT = (PlanKind.BATCH, PlanKind.DECODE_RUN, PlanKind.EVICTED,
                                         PlanKind.LOAD_WAIT)

#: A prefill chunk: ``(request, first token, tokens)``.
Chunk: TypeAlias = "tuple[int, int, int]"


class StepPlan:
    """What one step runs. Token counts are this step's new tokens.

    ``n_group`` decode-group members and the ``solo`` decoders (scheduled one
    by one) and ``resumed`` requests (swapped back in) decode one token each;
    ``chunks`` are prefill chunks ``(request, first token, tokens)``;
    ``context_tokens`` is the KV the step's decodes attend to, in the cost model's units
    (:class:`kvsim.engine.costs.AttentionSpan`; tokens without sliding windows), and
    ``context_growth`` (``DECODE_RUN`` only) what it grows by from one step of the run to
    the next. ``preempted``
    lists the requests evicted while planning, ``(request, mode)`` in order;
    ``swap_*`` is the step's PCIe transfer, ``host_load_bytes`` what the step loads from
    SGLang's host tier (overlapped with its compute). ``max_steps`` (``DECODE_RUN``
    only) is how many identical steps the blocks, the next finish and the
    policy allow.
    """

    # A plain class with slots, not a dataclass: one is made per step, and a
    # dataclass's default factories cost a tenth of a decode step.
    kind: PlanKind
    n_group: int
    chunks: Sequence[Chunk]
    solo: Sequence[int]
    resumed: Sequence[int]
    context_tokens: int
    context_growth: int
    preempted: tuple[tuple[int, int], ...]
    max_steps: int
    swap_out_bytes: int
    swap_in_bytes: int
    swap_copies: int
    wait_until_s: float
    host_load_bytes: int

    __slots__ = ("kind", "n_group", "chunks", "solo", "resumed", "context_tokens", "context_growth",
                 "preempted",
                 "max_steps", "swap_out_bytes", "swap_in_bytes", "swap_copies", "wait_until_s",
                 "host_load_bytes")

    def __init__(self, kind: PlanKind, n_group: int = 0, chunks: Sequence[Chunk] = (),
                 solo: Sequence[int] = (), resumed: Sequence[int] = (), context_tokens: int = 0,
                 preempted: tuple[tuple[int, int], ...] = (), max_steps: int = 1,
                 swap_out_bytes: int = 0, swap_in_bytes: int = 0, swap_copies: int = 0,
                 wait_until_s: float = 0.0, host_load_bytes: int = 0) -> None:
        self.kind, self.n_group, self.max_steps = kind, n_group, max_steps
        self.chunks, self.solo, self.resumed = chunks, solo, resumed
        self.context_tokens, self.preempted = context_tokens, preempted
        self.context_growth = n_group
        self.swap_out_bytes, self.swap_in_bytes, self.swap_copies = \
            swap_out_bytes, swap_in_bytes, swap_copies
        self.wait_until_s = wait_until_s
        self.host_load_bytes = host_load_bytes

    @property
    def decode_seqs(self) -> int:
        """Sequences that decode one token in this step."""
        return self.n_group + len(self.solo) + len(self.resumed)

    @property
    def prefill_tokens(self) -> int:
        return sum(c for _, _, c in self.chunks)

    @property
    def num_tokens(self) -> int:
        """The step's scheduled tokens (what ``max_num_batched_tokens`` bounds)."""
        return self.decode_seqs + self.prefill_tokens

    def __repr__(self) -> str:
        kind = PlanKind(self.kind).name
        return (f"StepPlan({kind}, {self.num_tokens} tokens: {self.decode_seqs} decodes, "
                f"{len(self.chunks)} prefill chunks, {len(self.preempted)} preempted)")
