"""KV cache groups with the prefix cache, block by block, as vLLM 0.34 runs them.

A test helper, independent of kvsim's pool, and the specification the engine's
:mod:`kvsim.engine.blocks.window_cache` and tests/reference_engine.py follow: full and sliding-window groups over one pool, each
block an id in one free queue shared by every group (front: taken next), its hash a
block identity per group ``(group, stream, index)`` (vLLM's ``BlockHashWithGroupId``):

* ``schedule`` is ``KVCacheManager.allocate_slots``: every window group frees its skipped
  blocks first (``remove_skipped_blocks``, group by group, last block first, on the
  processed tokens), then, if the pool has them, every group takes its new blocks from the
  queue's front (a hashed one leaves the hash map, ``_maybe_evict_cached_block``), then the
  full blocks up to the scheduled tokens get their hash (``cache_blocks``): every one in a
  full group, in a window group those ``reachable_block_mask`` keeps;
* ``finish`` is ``free``: group by group, the request's non-null blocks, last first;
* freed blocks with a hash go to the queue's tail, the others to its front in the order
  freed (``BlockPool.free_blocks``);
* ``lookup`` is ``get_computed_blocks``: at most ``num_tokens - 1`` tokens; a full group's
  longest run from block 0, then a window group's hit within it (the hybrid coordinator's
  one pass), the gap between them the request's junction (``shared_prefix_boundary``),
  which its window groups then keep; ``admit`` touches the hit's blocks (a window group's
  last ``need`` only: the ones before are null blocks in vLLM's table).

The rules of which block keeps a hash and what a window hit needs are
:mod:`kvsim.engine.blocks.window_retention`'s; everything else is counted here.
"""
from __future__ import annotations

from collections import deque

from kvsim.engine.blocks.counting import blocks_for, skipped_blocks
from kvsim.engine.blocks.window_retention import (
    agreed_hit_blocks,
    replay_boundary,
    retained_window_blocks,
    window_hit_need,
)

NULL = -1
Key = tuple[int, int, int]          # (group, stream, block index)


class BlockModel:
    """KV cache groups over one pool of ``num_blocks`` blocks (see the module).
    ``windows``: each group's sliding window, None for full attention (full groups first,
    as vLLM orders them)."""

    def __init__(self, num_blocks: int, *, block_size: int, windows: tuple[int | None, ...],
                 retention_interval: int | str) -> None:
        self.bs, self.windows, self.retention = block_size, windows, retention_interval
        self.queue: deque[int] = deque(range(num_blocks))
        self.hash_of: dict[int, Key] = {}
        self.block_of: dict[Key, int] = {}
        self.refs = [0] * num_blocks
        self.tables: dict[int, list[list[int]]] = {}     # rid -> one table per group
        self.cached_upto: dict[int, int] = {}
        self.requests: dict[int, tuple[int, int, int]] = {}   # rid -> (stream, prompt, junction)

    # ------------------------------------------------------------------ the pool
    def _take(self) -> int:
        block = self.queue.popleft()
        key = self.hash_of.pop(block, None)
        if key is not None and self.block_of.get(key) == block:
            del self.block_of[key]
        self.refs[block] = 1
        return block

    def _free(self, blocks: list[int]) -> None:
        front: list[int] = []
        for block in blocks:
            self.refs[block] -= 1
            if self.refs[block] == 0:
                if block in self.hash_of:
                    self.queue.append(block)
                else:
                    front.append(block)
        self.queue.extendleft(reversed(front))

    def cached(self, group: int, stream: int, index: int) -> bool:
        return (group, stream, index) in self.block_of

    # ------------------------------------------------------------------ requests
    def lookup(self, stream: int, num_tokens: int) -> tuple[int, int]:
        """The hit and the junction, in blocks, of a request of ``stream`` with ``num_tokens``
        tokens (one full kind and one window kind at most, as Gemma-2 and Mistral-7B)."""
        max_blocks = (num_tokens - 1) // self.bs
        full_hit: int | None = None
        if None in self.windows:
            g = self.windows.index(None)
            full_hit = 0
            while full_hit < max_blocks and self.cached(g, stream, full_hit):
                full_hit += 1
        window_groups = [g for g, w in enumerate(self.windows) if w is not None]
        if not window_groups:
            assert full_hit is not None
            return full_hit, 0
        window = self.windows[window_groups[0]]
        assert window is not None

        def all_cached(i: int) -> bool:
            return all(self.cached(g, stream, i) for g in window_groups)
        return agreed_hit_blocks(full_hit, all_cached, max_blocks,
                                 window_hit_need(window, self.bs))

    def admit(self, rid: int, stream: int, prompt_tokens: int) -> int:
        """Register ``rid`` and give it its hit's blocks; returns the hit in tokens."""
        hit, junction = self.lookup(stream, prompt_tokens)
        tables = []
        for g, window in enumerate(self.windows):
            table = [NULL] * hit
            first = 0 if window is None else max(0, hit - window_hit_need(window, self.bs))
            for i in range(first, hit):
                block = self.block_of[(g, stream, i)]
                if self.refs[block] == 0:
                    self.queue.remove(block)
                self.refs[block] += 1
                table[i] = block
            tables.append(table)
        self.tables[rid] = tables
        self.cached_upto[rid] = hit
        self.requests[rid] = (stream, prompt_tokens, junction * self.bs)
        return hit * self.bs

    def schedule(self, rid: int, computed: int, new_tokens: int, total_tokens: int) -> bool:
        """``allocate_slots`` for ``new_tokens`` more of ``rid``'s tokens (``computed`` already
        processed; ``total_tokens`` its tokens so far); False if the blocks are not free."""
        tables = self.tables[rid]
        for window, table in zip(self.windows, tables, strict=True):
            if window is None:
                continue
            freed = []
            for i in range(min(skipped_blocks(computed, window, self.bs), len(table)) - 1, -1, -1):
                if table[i] == NULL:
                    break
                freed.append(table[i])
                table[i] = NULL
            self._free(freed)
        slots = blocks_for(computed + new_tokens, self.bs)
        if sum(max(0, slots - len(t)) for t in tables) > len(self.queue):
            return False
        for table in tables:
            table.extend(self._take() for _ in range(max(0, slots - len(table))))
        stream, prompt, junction = self.requests[rid]
        full = min(computed + new_tokens, total_tokens) // self.bs
        start = self.cached_upto[rid]
        if full > start:
            for g, (window, table) in enumerate(zip(self.windows, tables, strict=True)):
                mask = None if window is None else retained_window_blocks(
                    start, full, window=window, block_size=self.bs,
                    retention_interval=self.retention,
                    boundaries=(replay_boundary(prompt),) + ((junction,) if junction else ()))
                for i in range(start, full):
                    if table[i] != NULL and (mask is None or mask[i - start]):
                        self.hash_of[table[i]] = (g, stream, i)
                        self.block_of.setdefault((g, stream, i), table[i])
            self.cached_upto[rid] = full
        return True

    def finish(self, rid: int) -> None:
        for table in self.tables.pop(rid):
            self._free([b for b in reversed(table) if b != NULL])
        del self.cached_upto[rid], self.requests[rid]

    def run(self, rid: int, stream: int, prompt: int, answer: int, *, chunk: int) -> int:
        """Admit ``rid`` alone, prefill its prompt in chunks, decode ``answer`` tokens one a
        step, finish it; returns its hit in tokens."""
        hit = self.admit(rid, stream, prompt)
        computed = hit
        while computed < prompt:
            n = min(chunk, prompt - computed)
            assert self.schedule(rid, computed, n, prompt)
            computed += n
        for k in range(answer - 1):        # the last answer token is never computed
            assert self.schedule(rid, computed, 1, prompt + k + 1)
            computed += 1
        self.finish(rid)
        return hit
