"""Sliding-window groups with the prefix cache on, block by block (vLLM 0.34's hybrid allocator).

Explained in book/engine-reference.md, *Sliding windows*. A run whose model has
sliding-window layers, with vLLM V1's optimistic admission and the prefix cache on, gets
this manager instead of :class:`kvsim.engine.blocks.manager.KVCacheManager`'s counts: each
request keeps a block table per KV cache group (full groups first), its blocks ids of one
:class:`kvsim.engine.blocks.block_queue.BlockQueue`, and the scheduler runs every step
request by request (no decode group between steps, no closed-form runs), so each request
frees its window before it takes (``KVCacheManager.allocate_slots`` in
vllm/v1/core/kv_cache_manager.py of 0.34.0), exactly in vLLM's order:

* ``settle_window`` is ``remove_skipped_blocks`` on the processed tokens: each window group
  frees the blocks wholly before the window, last first, stopping at the first freed one;
* ``grow`` takes each group's new blocks from the queue's front, group by group, then
  ``cache_blocks``: every full block of a full group gets its hash, a window group's only
  where ``reachable_block_mask`` keeps it (:func:`retained_window_blocks`: the replay
  boundary ``prompt - 1`` and the request's junction, per
  ``prefix_cache_retention_interval``);
* ``lookup`` is ``get_computed_blocks``: the full groups' run from block 0, then the window
  groups' hit within it (:func:`agreed_hit_blocks`), the gap the request's junction
  (``shared_prefix_boundary``); ``admit`` touches only the blocks after the window's skipped
  ones (the ones before are null blocks in vLLM's table);
* ``release`` is ``free``: group by group, the non-null blocks last first.

A block's identity is per group (vLLM's ``BlockHashWithGroupId``): ``(group, kind, id,
index)`` of :mod:`kvsim.engine.blocks.block_queue`.

``cache_blocks`` stops at the tokens whose values the scheduler has (``request.num_tokens``):
with asynchronous scheduling a decode's input token is still in flight when the request ran
in the step before, so the block it fills gets its hash a step later (a request that finishes
right after filling a block leaves it without one). kvsim's count of those tokens: the
request's prompt, or after a preemption its prompt and answer so far (``known``), or its
slots less the token in flight.

Legend: ``bs`` block size; ``h`` a hit in blocks; ``NULL`` a freed (skipped) table entry.
"""
from __future__ import annotations

from .block_queue import BlockQueue, Key
from .counting import blocks_for, skipped_blocks
from .decode_group import IN_DECODE_GROUP
from .manager import KVCacheManager
from .pool import Hit
from .window_retention import (
    agreed_hit_blocks,
    replay_boundary,
    retained_window_blocks,
    window_hit_need,
)

__all__ = ["WindowCacheManager", "TableHit", "NULL"]

#: a table entry whose block the window freed (vLLM's null block)
NULL = -1


class TableHit(Hit):
    """A lookup's hit: ``blocks`` (tokens / bs), each group's table of hit blocks (NULL before
    a window group's last needed ones), the junction in blocks (0: none), and ``evictable``
    (hit blocks nobody holds)."""

    __slots__ = ("tables", "junction")

    def __init__(self, tables: list[list[int]], blocks: int, junction: int, evictable: int) -> None:
        super().__init__(())
        self.tables, self.junction = tables, junction
        self.blocks, self.evictable = blocks, evictable


class WindowCacheManager(KVCacheManager):
    """:class:`KVCacheManager` for sliding windows with the prefix cache on (see the module).

    ``retention_interval``: vLLM's ``prefix_cache_retention_interval`` (``"dense"``: None).
    """

    per_request = True

    def __init__(self, num_blocks: int, block_size: int, *, watermark_blocks: int,
                 watermark_when_alone: bool, window: int, groups: int, window_groups: int,
                 window_lag: int, window_cap: int, retention_interval: int | str) -> None:
        super().__init__(num_blocks, block_size, prefix_caching=True,
                         watermark_blocks=watermark_blocks,
                         watermark_when_alone=watermark_when_alone, window=window, groups=groups,
                         window_groups=window_groups, window_lag=window_lag,
                         window_cap=window_cap)
        self.queue = BlockQueue(num_blocks)
        self.pool = self.queue
        self.take = self._no_bulk_take
        self.retention = retention_interval
        self.first_window = groups - window_groups     # full groups come first
        self.need = window_hit_need(window, block_size)
        self.tables: dict[int, list[list[int]]] = {}
        self.cached_upto: dict[int, int] = {}          # blocks cache_blocks has seen
        self.junction: dict[int, int] = {}             # tokens (0: none)
        self.prompt: dict[int, int] = {}
        self.known: dict[int, int] = {}                # tokens whose values are known
        self.parked: dict[int, int] = {}               # blocks of a decode-group member

    def _no_bulk_take(self, n: int) -> None:
        raise RuntimeError("kvsim internal error: sliding windows with the prefix cache take "
                           "blocks request by request")

    # ----------------------------------------------------------------- identity
    def _key(self, group: int, rid: int, index: int) -> Key:
        prefix_group, prefix_tokens, stream = self.identity[rid]
        if prefix_group >= 0 and index < prefix_tokens // self.block_size:
            return (group, 0, prefix_group, index)
        return (group, 1, stream, index)

    def register(self, rid: int, group: int, prefix_tokens: int, stream_key: int,
                 prompt_tokens: int = 0) -> None:
        super().register(rid, group, prefix_tokens, stream_key, prompt_tokens)
        self.prompt[rid] = self.known[rid] = prompt_tokens

    # ------------------------------------------------------------------ lookups
    def lookup(self, rid: int, num_tokens: int) -> Hit:
        find, bs = self.queue.find, self.block_size
        max_blocks = (num_tokens - 1) // bs
        windows = range(self.first_window, self.groups)
        full_hit: int | None = None
        if self.first_window:
            full_hit = 0
            while full_hit < max_blocks and all(
                    find(self._key(g, rid, full_hit)) >= 0 for g in range(self.first_window)):
                full_hit += 1

        def cached(i: int) -> bool:
            return all(find(self._key(g, rid, i)) >= 0 for g in windows)
        hit, junction = agreed_hit_blocks(full_hit, cached, max_blocks, self.need)
        skip = skipped_blocks(hit * bs, self.window, bs)
        tables: list[list[int]] = []
        evictable = 0
        refs = self.queue.refs
        for g in range(self.groups):
            first = skip if g >= self.first_window else 0
            table = [NULL] * first + [find(self._key(g, rid, i)) for i in range(first, hit)]
            evictable += sum(1 for b in table if b >= 0 and not refs[b])
            tables.append(table)
        return TableHit(tables, hit, junction, evictable)

    def admission_new_blocks(self, gate: int, upto: int, hit: Hit, *, capped: bool) -> int:
        """Blocks admission takes for ``upto`` tokens, and (``capped``: vLLM's
        ``full_sequence_must_fit``) for the whole ``gate``, each group's
        ``get_num_blocks_to_allocate`` less the hit (a window group's skipped blocks none)."""
        bs = self.block_size
        skip = skipped_blocks(hit.blocks * bs, self.window, bs)

        def new(tokens: int, cap: bool) -> int:
            full = blocks_for(tokens, bs)
            windowed = min(full, self.window_cap) if cap else full
            return (self.first_window * max(0, full - hit.blocks)
                    + self.window_groups * max(0, windowed - max(skip, hit.blocks)))
        chunk = new(upto, False)
        return max(chunk, new(gate, True)) if capped else chunk

    # --------------------------------------------------------------- allocation
    def admit(self, rid: int, hit: Hit, tokens: int) -> None:
        assert isinstance(hit, TableHit)
        touch = self.queue.touch
        tables = [list(t) for t in hit.tables]
        held = 0
        for table in tables:
            for b in table:
                if b >= 0:
                    touch(b)
                    held += 1
        bs = self.block_size
        self.tables[rid] = tables
        self.held[rid] = held
        self.slots[rid] = hit.blocks * bs
        self.skipped[rid] = skipped_blocks(hit.blocks * bs, self.window, bs)
        self.cached_upto[rid] = hit.blocks
        self.junction[rid] = hit.junction * bs
        self.grow(rid, tokens)

    def settle_window(self, rid: int) -> None:
        target = self._skip_after(rid)
        if target <= self.skipped[rid]:
            return
        self.skipped[rid] = target
        tables = self.tables.get(rid)
        if not tables:
            return
        for table in tables[self.first_window:]:
            freed: list[int] = []
            for i in range(min(target, len(table)) - 1, -1, -1):
                if table[i] < 0:
                    break
                freed.append(table[i])
                table[i] = NULL
            if freed:
                self.queue.free_blocks(freed)
                self.held[rid] -= len(freed)

    def new_blocks(self, rid: int, tokens: int) -> int:
        """Every group's table has the same length (a window's freed blocks stay as NULL)."""
        tables = self.tables.get(rid)
        have = len(tables[0]) if tables else 0
        return self.groups * max(0, blocks_for(tokens, self.block_size) - have)

    def shortfall(self, rid: int, tokens: int) -> int:
        return max(0, self.new_blocks(rid, tokens) - self.queue.free)

    def grow(self, rid: int, tokens: int) -> int:
        tables = self.tables.get(rid)
        if tables is None:
            tables = self.tables[rid] = [[] for _ in range(self.groups)]
        bs = self.block_size
        want = blocks_for(tokens, bs)
        taken = 0
        if want > len(tables[0]):
            n = want - len(tables[0])
            take_blocks = self.queue.take_blocks
            for table in tables:                    # group by group, from the queue's front
                table.extend(take_blocks(n))
            taken = self.groups * n
            self.held[rid] += taken
        slots = self.slots[rid]
        # cache_blocks stops at request.num_tokens: the token scheduled in the step before is
        # still in flight with asynchronous scheduling (its value unknown)
        in_flight = self.lag and self.last.get(rid, (-2, 0))[0] == self.step - 1
        known = max(self.known[rid], slots + (0 if in_flight else 1))
        if tokens > slots:
            self.last[rid] = (self.step, tokens - slots)
            self.slots[rid] = tokens
        full = min(tokens, known) // bs
        if full > self.cached_upto[rid]:
            self._cache_blocks(rid, tables, full)
        return taken

    def _cache_blocks(self, rid: int, tables: list[list[int]], full: int) -> None:
        """``cache_blocks``: ``rid``'s blocks up to ``full`` get their hash (a window group's
        where the retention mask keeps them)."""
        start = self.cached_upto[rid]
        if full <= start:
            return
        self.cached_upto[rid] = full
        junction = self.junction[rid]
        boundaries = (replay_boundary(self.prompt[rid]),) + ((junction,) if junction else ())
        mask = retained_window_blocks(start, full, window=self.window, block_size=self.block_size,
                                      retention_interval=self.retention, boundaries=boundaries)
        set_hash = self.queue.set_hash
        for g, table in enumerate(tables):
            keep = mask if g >= self.first_window else None
            for i in range(start, full):
                if table[i] >= 0 and (keep is None or keep[i - start]):
                    set_hash(table[i], self._key(g, rid, i))

    def registers_prefix(self, rid: int, computed: int) -> bool:
        return False

    def cache_prefix(self, rid: int, computed: int) -> None:
        """Hashes are given in :meth:`grow` (``allocate_slots`` caches what it schedules)."""

    def release(self, rid: int, stored_tokens: int, *, reachable: bool) -> None:
        """``free``: group by group, the non-null blocks last first (a block keeps the hash
        ``grow`` gave it; an unreachable stream's are never looked up again)."""
        self.held.pop(rid)
        # preempted: its prompt and the answer so far are known when it is admitted again
        self.known[rid] = max(self.known.get(rid, 0), stored_tokens + 1)
        for table in self.tables.pop(rid, ()):
            self.queue.free_blocks([b for b in reversed(table) if b >= 0])
        self.slots[rid] = self.skipped[rid] = 0
        self.last.pop(rid, None)
        self.cached_upto.pop(rid, None)
        self.junction.pop(rid, None)

    def forget(self, rid: int) -> None:
        super().forget(rid)
        self.prompt.pop(rid, None)
        self.known.pop(rid, None)

    # ------------------------------------------- the decode group: parked between steps
    def held_by(self, rid: int, T: int) -> int:
        if rid in self.decoding:
            return self.parked[rid]
        return self.held.get(rid, 0)

    def join_decoding(self, rid: int, stored_tokens: int, T: int, last_step: int) -> None:
        """``rid`` waits in the decode group until the next step's pass takes it out (every step
        runs request by request here)."""
        self.decoding.add(rid, stored_tokens, T, last_step)
        self.parked[rid] = self.held[rid]
        self.held[rid] = IN_DECODE_GROUP

    def leave_decoding(self, rid: int, T: int) -> int:
        decoding = self.decoding
        stored = decoding.remove(rid, T)
        decoding.forget_finishes()
        self.held[rid] = self.parked.pop(rid)
        self.slots[rid] = stored
        return stored

    def decode_blocks(self, T: int) -> int:
        return self.take_mult * self.decoding.new_blocks(T)

    def take_decode_step(self, T: int) -> bool:
        if self.decoding.size:
            raise RuntimeError("kvsim internal error: sliding windows with the prefix cache "
                               "schedule every decode request by request")
        return True
