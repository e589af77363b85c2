"""The blocks decoding requests free as their sliding window moves, in closed form.

A window group's request frees, each time it is scheduled, the blocks wholly
before ``max(0, p - window + 1)`` tokens, ``p`` its processed tokens
(vllm/v1/core/single_type_kv_cache_manager.py at 0.34.0, ``remove_skipped_blocks``
and ``SlidingWindowManager.get_num_skipped_tokens``, called by ``allocate_slots``
before each allocation). A decoding member stores ``offset + T`` tokens before
step ``T`` and has ``offset + T - lag`` of them processed (``lag``: the tokens of
the step still in flight, 1 with asynchronous scheduling, else 0), so it frees
one block in step ``T`` exactly when ``skip = offset - lag - window + 1 + T`` is a
positive multiple of the block size: a second residue beside the one at which it
takes a block (:class:`kvsim.engine.blocks.decode_group.DecodeGroup`), from the
step its window first passes a whole block (``start``).

Members whose start is still ahead wait in a heap; :meth:`WindowFrees.settle`
moves those that have started into the residue histogram, and the queries over
a range of steps split it at the next start, so each query costs ``O(bs)`` plus
the starts inside it.

Legend: ``T`` engine step; ``bs`` block size; ``key`` a member's
``(offset - lag - window + 1) mod bs``: it frees in the steps with
``(key + T) mod bs == 0``.
"""
from __future__ import annotations

import heapq

__all__ = ["WindowFrees"]


class WindowFrees:
    """The frees of the decode group's members past their window (see the module)."""

    def __init__(self, block_size: int, window: int, lag: int):
        self.block_size = block_size
        self.window = window
        self.lag = lag
        self.residues = [0] * block_size        # started members per key
        self.started = 0
        self._key: dict[int, int] = {}
        self._start: dict[int, int] = {}
        self._pending: list[tuple[int, int, int]] = []   # (start step, rid, version)
        self._version: dict[int, int] = {}
        self._active: set[int] = set()

    def skip_shift(self, offset: int) -> int:
        """``skip`` tokens before step ``T`` are ``shift + T``: ``offset - lag - window + 1``."""
        return offset - self.lag - self.window + 1

    def add(self, rid: int, offset: int, first_step: int) -> None:
        """``rid`` (stored tokens ``offset + T``) decodes from ``first_step``, its skipped blocks
        settled up to that step's own free (the caller frees those): it frees from the first
        later step whose skip is a positive multiple of ``bs``."""
        bs = self.block_size
        shift = self.skip_shift(offset)
        key = shift % bs
        # the first T > first_step with shift + T >= bs and (shift + T) % bs == 0
        lowest = max(first_step + 1, bs - shift)
        start = lowest + (-(shift + lowest)) % bs
        self._key[rid] = key
        self._start[rid] = start
        v = self._version.get(rid, 0) + 1
        self._version[rid] = v
        heapq.heappush(self._pending, (start, rid, v))

    def remove(self, rid: int) -> None:
        key = self._key.pop(rid)
        del self._start[rid]
        self._version[rid] += 1
        if rid in self._active:
            self._active.discard(rid)
            self.residues[key] -= 1
            self.started -= 1

    def settle(self, T: int) -> None:
        """Move every member whose start is at or before step ``T`` into the histogram (the
        engine calls it with the step it runs; the queries below never move anything)."""
        heap = self._pending
        while heap and heap[0][0] <= T:
            _, rid, v = heapq.heappop(heap)
            if v == self._version.get(rid) and rid in self._key:
                self._active.add(rid)
                self.residues[self._key[rid]] += 1
                self.started += 1

    def next_start(self) -> float:
        """The next step a waiting member starts freeing (inf: none waits)."""
        heap = self._pending
        while heap and (heap[0][2] != self._version.get(heap[0][1]) or heap[0][1] not in self._key):
            heapq.heappop(heap)
        return heap[0][0] if heap else float("inf")

    def _waiting(self, T_end: int) -> list[tuple[int, int]]:
        """``(start, key)`` of the waiting members that start before ``T_end``."""
        return [(start, self._key[rid]) for start, rid, v in self._pending
                if start < T_end and v == self._version.get(rid) and rid in self._key]

    def frees(self, T: int) -> int:
        """Blocks the members free in step ``T`` (after :meth:`settle` for a step at or before
        ``T``)."""
        bs = self.block_size
        waiting = sum(1 for start, key in self._waiting(T + 1) if (key + T) % bs == 0)
        return self.residues[-T % bs] + waiting

    def frees_between(self, T_first: int, T_end: int) -> int:
        """Blocks freed in steps ``T_first .. T_end - 1`` (after :meth:`settle` for ``T_first``)."""
        bs = self.block_size
        total = _cyclic_between(self.residues, self.started, T_first, T_end, bs)
        for start, key in self._waiting(T_end):
            total += _first_count(key, max(start, T_first), T_end, bs)
        return total


def _first_count(key: int, lo: int, T_end: int, bs: int) -> int:
    """Steps ``T`` in ``lo .. T_end - 1`` with ``(key + T) % bs == 0``."""
    first = lo + (-(key + lo)) % bs
    return 0 if first >= T_end else (T_end - 1 - first) // bs + 1


def _cyclic_between(residues: list[int], members: int, T_first: int, T_end: int, bs: int) -> int:
    """``sum(residues[-T % bs] for T in range(T_first, T_end))`` in ``O(bs)``: one per member
    per cycle, the rest a descending cyclic slice (as :meth:`DecodeGroup.new_blocks_between`)."""
    cycles, rest = divmod(T_end - T_first, bs)
    total = members * cycles
    if rest:
        hi = -(T_first + cycles * bs) % bs
        lo = hi - rest + 1
        total += sum(residues[lo:hi + 1]) if lo >= 0 else sum(residues[:hi + 1]) + sum(residues[lo:])
    return total


def steps_until_short(crossings: list[int], frees: WindowFrees, T: int, free_blocks: int,
                      limit: int, *, take_mult: int = 1, free_mult: int = 1) -> int:
    """How many steps from ``T`` (at most ``limit``) the decode group runs before a step needs
    more blocks than are free, its members freeing blocks as their windows move.

    Step ``T + j`` takes ``take_mult x crossings[-(T + j) % bs]`` blocks (``take_mult``: the
    groups every new token block is drawn in) and then frees ``free_mult x`` its window frees
    (``free_mult``: the window groups). It runs when its takes are free before its frees: then
    vLLM's pass, request by request, certainly finds every block whatever the order (a step
    that needs its own frees goes through kvsim's exact pass instead).
    The waiting members' starts split the steps into segments with fixed residues; inside
    one, a whole cycle of ``bs`` steps repeats, so cycles are skipped in ``O(bs)``.
    """
    bs = frees.block_size
    residues = list(frees.residues)
    starts = sorted(frees._waiting(T + limit))
    avail, j, s = free_blocks, 0, 0
    while j < limit:
        while s < len(starts) and starts[s][0] <= T + j:
            residues[starts[s][1]] += 1
            s += 1
        seg_end = min(limit, starts[s][0] - T) if s < len(starts) else limit
        take = [take_mult * crossings[-(T + j + i) % bs] for i in range(bs)]
        back = [free_mult * residues[-(T + j + i) % bs] for i in range(bs)]
        if seg_end - j >= bs:
            acc, peak = 0, 0                   # peak: the most a step of the cycle must find
            for t, b in zip(take, back, strict=True):
                peak = max(peak, acc + t)
                acc += t - b
            if peak <= avail:
                whole = (seg_end - j) // bs
                if acc > 0:
                    whole = min(whole, (avail - peak) // acc + 1)
                avail -= acc * whole
                j += bs * whole
                continue
        for i in range(min(bs, seg_end - j)):
            if take[i] > avail:
                return j + i
            avail -= take[i] - back[i]
        j += min(bs, seg_end - j)
    return limit
