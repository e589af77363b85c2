"""V0's CPU swap space: preemption by swapping a request's KV blocks out and back in.

Explained in chapter 3, *Swap versus recompute*. Only ``engine="v0"`` with
``preemption_mode="swap"`` uses it (vllm/core/scheduler.py, V0; V1 removed
swapping and always recomputes).

* **Out.** A decoding victim's blocks are copied to the CPU (one copy per
  block, layer and K/V, :func:`kvsim.engine.costs.transfer_copies`) and its GPU blocks
  are freed. When the swap space cannot take them, V0 raises "Aborted due to
  the lack of CPU swap space" and its whole engine stops (``swap_space_full="abort"``
  does the same to the run; a comment in V0's ``_swap_out`` says it should abort only
  that request);
  ``swap_space_full="recompute"`` is kvsim's named option that preempts it by
  recompute instead. A victim still in prefill is always recomputed (V0).
* **In.** Before any waiting request is admitted, swapped requests come back
  in the order they left, while each one's blocks plus the watermark fit, the
  running batch has room (``max_num_seqs``) and the step's token budget
  allows one token each. The scheduler decides; the swap space only counts.

The copies and bytes of the step are what :meth:`kvsim.engine.costs.StepCost.step_s`
charges for the transfer.
"""
from __future__ import annotations

from collections import deque

from kvsim.errors import KvsimError

__all__ = ["SwapSpace"]


class SwapSpace:
    """Swapped-out requests (``queue``, oldest first) and the CPU blocks they hold.

    ``out_bytes``, ``in_bytes`` and ``copies`` count the current step's transfer
    (:meth:`new_step` resets them).
    """

    def __init__(self, capacity_blocks: int, block_bytes: int, copies_per_block: int,
                 when_full: str):
        self.capacity = capacity_blocks
        self.block_bytes = block_bytes
        self.copies_per_block = copies_per_block
        self.when_full = when_full
        self.used = 0
        self.blocks: dict[int, int] = {}
        self.queue: deque[int] = deque()
        self.new_step()

    def new_step(self) -> None:
        self.out_bytes = self.in_bytes = self.copies = 0

    def swap_out(self, rid: int, blocks: int, t: float) -> bool:
        """Swap ``rid``'s ``blocks`` out; False when the space is full and the option says recompute."""
        if self.used + blocks > self.capacity:
            if self.when_full == "abort":
                raise KvsimError(
                    f"at t={t:.3f} s request {rid} must be swapped out ({blocks} blocks) but the "
                    f"CPU swap space is full ({self.used} of {self.capacity} blocks): vLLM V0 "
                    f"aborts here ('Aborted due to the lack of CPU swap space'); expected a larger "
                    f"swap_space_bytes, or swap_space_full='recompute'")
            return False                   # NOTE(swap-space-full): kvsim's named option; V0 aborts
        self.used += blocks
        self.blocks[rid] = blocks
        self.out_bytes += blocks * self.block_bytes
        self.copies += blocks * self.copies_per_block
        self.queue.append(rid)
        return True

    def swap_in(self, rid: int) -> int:
        """Bring ``rid`` (the oldest swapped request) back; returns the blocks it held here.

        The scheduler decides whether it fits (:meth:`kvsim.engine.scheduler.Scheduler._swap_in`).
        """
        if not self.queue or self.queue[0] != rid:
            raise RuntimeError(f"kvsim: request {rid} is not the oldest swapped request "
                               "(internal error: V0 swaps in oldest first)")
        self.queue.popleft()
        blocks = self.blocks.pop(rid)
        self.used -= blocks
        self.in_bytes += blocks * self.block_bytes
        self.copies += blocks * self.copies_per_block
        return blocks
