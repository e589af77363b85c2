"""The decoding requests, in closed form: what makes a decode step O(1) in the batch size.

Explained in the README (*How fast, and how it stays exact*).

Every member of the group gains exactly one token of KV per engine step, so
its stored-token count is ``offset + T`` where ``T`` is the engine's step
counter; the group never touches its members one by one while they decode.
From the offsets it answers, for any step ``T``:

* how many members start a new KV block in that step (their stored tokens
  are a multiple of the block size): the residue histogram ``crossings``;
* the attention context of the step (the sum over members of the tokens each
  attends to, its stored ones plus the new one);
* which member finishes first (a heap of the step of each one's last token);
* for a model with sliding-window layers (:meth:`DecodeGroup.attend_window`), the
  context those layers attend to, each member's capped at the window: a member
  attends to ``offset + T + 1`` tokens up to the step it reaches the window
  (its *capped step*, ``window - 1 - offset``) and to ``window`` from then on, so
  the capped sum grows by the uncapped members a step, and a heap of capped steps
  says when that slope next changes.

Legend: ``T`` engine step; ``offset`` a member's stored tokens minus ``T``;
``bs`` block size.
"""
from __future__ import annotations

import heapq
import math

__all__ = ["DecodeGroup", "IN_DECODE_GROUP"]

#: What a member's own counts read while it is in the group (the request table's ``generated``,
#: the KV manager's ``held``): the group holds them in closed form, and they are written back
#: when it leaves, so no stale count is ever readable.
IN_DECODE_GROUP = -1


class DecodeGroup:
    def __init__(self, block_size: int):
        self.block_size = block_size
        self.offset: dict[int, int] = {}
        self.crossings = [0] * block_size       # members per (offset mod bs)
        self.size = 0
        self.offset_sum = 0
        self._finish: list[tuple[int, int, int]] = []   # (last step, rid, version)
        self._version: dict[int, int] = {}
        self.first_step: dict[int, int] = {}    # step from which each member decodes
        # sliding-window attention (attend_window): 0 without
        self.window = 0
        self.uncapped = 0                       # members below the window ...
        self.uncapped_offset_sum = 0            # ... and their offsets
        self._capped: set[int] = set()          # members at the window (settled)
        self._caps: list[tuple[int, int, int]] = []   # (capped step, rid, version), uncapped ones

    def attend_window(self, window: int) -> None:
        """Keep the context sliding-window layers of ``window`` tokens attend to
        (:meth:`window_context`); before the first member joins."""
        self.window = window

    def add(self, rid: int, stored_tokens: int, T: int, last_step: int) -> None:
        """``rid`` holds ``stored_tokens`` before step ``T`` and emits its last token in ``last_step``."""
        off = stored_tokens - T
        self.offset[rid] = off
        self.crossings[off % self.block_size] += 1
        self.size += 1
        self.offset_sum += off
        v = self._version.get(rid, 0) + 1
        self._version[rid] = v
        heapq.heappush(self._finish, (last_step, rid, v))
        self.first_step[rid] = T
        if self.window:
            capped_step = self.window - 1 - off
            if capped_step <= T:
                self._capped.add(rid)
            else:
                self.uncapped += 1
                self.uncapped_offset_sum += off
                heapq.heappush(self._caps, (capped_step, rid, v))

    def remove(self, rid: int, T: int) -> int:
        """Take ``rid`` out before step ``T``; return its stored tokens then."""
        off = self.offset.pop(rid)
        self.crossings[off % self.block_size] -= 1
        self.size -= 1
        self.offset_sum -= off
        self._version[rid] += 1
        if self.window:
            if rid in self._capped:
                self._capped.discard(rid)
            else:                                # its heap entry is stale now (version)
                self.uncapped -= 1
                self.uncapped_offset_sum -= off
                if not self.uncapped:
                    self._caps.clear()
        return off + T

    def forget_finishes(self) -> None:
        """Drop the finish heap's entries once the group is empty (they are all stale): for a
        group that every step empties, as :mod:`kvsim.engine.blocks.window_cache`'s does."""
        if not self.size:
            self._finish.clear()

    def stored(self, rid: int, T: int) -> int:
        return self.offset[rid] + T

    def __contains__(self, rid: int) -> bool:
        return rid in self.offset

    def new_blocks(self, T: int) -> int:
        """Members that start a new block in step ``T``."""
        return self.crossings[-T % self.block_size]

    def new_blocks_between(self, T_first: int, T_end: int) -> int:
        """Blocks the members take in steps ``T_first .. T_end - 1`` (one per member per cycle)."""
        steps = T_end - T_first
        cycles, rest = divmod(steps, self.block_size)
        total = self.size * cycles
        if rest:
            # steps T .. T+rest-1 read crossings at -T, -T-1, ...: a descending cyclic slice
            hi = -(T_first + cycles * self.block_size) % self.block_size
            lo = hi - rest + 1
            c = self.crossings
            total += sum(c[lo:hi + 1]) if lo >= 0 else sum(c[:hi + 1]) + sum(c[lo:])
        return total

    def context(self, T: int) -> int:
        """Tokens the members attend to in step ``T`` (stored + the new one, summed)."""
        return self.offset_sum + self.size * (T + 1)

    def settle_capped(self, T: int) -> None:
        """Members whose capped step is at or before ``T`` count at the window from now on
        (the scheduler calls it with the step it plans; steps only advance)."""
        heap, version = self._caps, self._version
        while heap and heap[0][0] <= T:
            _, rid, v = heapq.heappop(heap)
            if v == version[rid] and rid in self.offset:
                self._capped.add(rid)
                self.uncapped -= 1
                self.uncapped_offset_sum -= self.offset[rid]

    def window_context(self, T: int) -> int:
        """Tokens the members attend to in step ``T`` in a sliding-window layer, each at most
        the window (after :meth:`settle_capped` for ``T``)."""
        return self.uncapped_offset_sum + self.uncapped * (T + 1) + len(self._capped) * self.window

    def capped_members(self) -> frozenset[int]:
        """The members counted at the window (settled), for the invariant checker."""
        return frozenset(self._capped)

    def pending_caps(self) -> dict[int, int]:
        """The capped step due of each member below the window, for the invariant checker."""
        return {rid: step for step, rid, v in self._caps
                if v == self._version[rid] and rid in self.offset and rid not in self._capped}

    def next_capped_step(self) -> float:
        """The next step at which a member reaches the window (inf: none will)."""
        heap, version = self._caps, self._version
        while heap and (heap[0][2] != version[heap[0][1]] or heap[0][1] not in self.offset):
            heapq.heappop(heap)
        return heap[0][0] if heap else math.inf

    def next_finish(self) -> tuple[int, int]:
        """``(last step, rid)`` of the member that finishes first (the group must not be empty)."""
        heap = self._finish
        while heap[0][2] != self._version[heap[0][1]] or heap[0][1] not in self.offset:
            heapq.heappop(heap)
        return heap[0][0], heap[0][1]

    def next_finish_step(self) -> float:
        """A lower bound on the step of the next last token (inf for an empty group): no
        member finishes before it (the heap may start with a stale entry)."""
        return self._finish[0][0] if self._finish else math.inf

    def pop_finished(self, T_last: int) -> list[int]:
        """Members whose last token came in a step <= ``T_last`` (still members; caller removes)."""
        out = []
        heap = self._finish
        while heap and heap[0][0] <= T_last:
            last, rid, v = heapq.heappop(heap)
            if v == self._version.get(rid) and rid in self.offset:
                out.append(rid)
        return out

    def steps_until_short(self, T: int, free_blocks: int, limit: int) -> int:
        """How many steps from ``T`` (at most ``limit``) run before one needs more blocks than are free.

        The blocks step ``T + j`` needs are ``new_blocks(T + j)``; one full
        cycle of ``bs`` steps needs exactly ``size`` blocks.
        """
        if self.size == 0:
            return limit
        cycles, rest = divmod(free_blocks, self.size)
        steps = self.block_size * cycles
        if steps >= limit:
            return limit
        acc = 0
        for j in range(self.block_size):
            acc += self.crossings[-(T + steps + j) % self.block_size]
            if acc > rest:
                return min(limit, steps + j)
        return min(limit, steps + self.block_size)  # pragma: no cover - a full cycle always exceeds rest
