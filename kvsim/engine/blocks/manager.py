"""Per-request block tables over the pool: vLLM's ``KVCacheManager``.

The scheduler asks it "can this request have the blocks for n more tokens?" and
never counts blocks itself (vllm/v1/core/kv_cache_manager.py over block_pool.py).
It owns every block: those of the requests it tracks one by one (``held``) and,
through :class:`kvsim.engine.blocks.decode_group.DecodeGroup`, those of the
decoding requests, whose tables grow by one token a step in closed form.
"""
from __future__ import annotations

from collections.abc import Callable

from .counting import blocks_for
from .decode_group import IN_DECODE_GROUP, DecodeGroup
from .pool import NO_HIT, BlockPool, GroupBlock, Hit, StreamRun

__all__ = ["KVCacheManager"]


class KVCacheManager:
    """Per-request block tables over a :class:`BlockPool` (vLLM's ``KVCacheManager``).

    Args:
        num_blocks: usable blocks.
        block_size: tokens per block.
        prefix_caching: keep freed full blocks cached (vLLM V1's default).
        watermark_blocks: blocks admission leaves free (V0: 1 % of the pool).
        watermark_when_alone: keep the watermark even when nothing else is
            scheduled (V0); V1 keeps it only beside other requests.
    """

    def __init__(self, num_blocks: int, block_size: int, *, prefix_caching: bool,
                 watermark_blocks: int = 0, watermark_when_alone: bool = False):
        self.pool = BlockPool(num_blocks)
        #: ``take(n)``: ``n`` blocks for decoding requests (the pool's own method)
        self.take: Callable[[int], None] = self.pool.take
        #: the decoding requests: their blocks grow one token a step, in closed form
        self.decoding = DecodeGroup(block_size)
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.caching = prefix_caching
        self.watermark_blocks = watermark_blocks
        self.watermark_when_alone = watermark_when_alone
        self.held: dict[int, int] = {}   # blocks of each request (decode group: IN_DECODE_GROUP)
        self.group_refs: dict[int, list[GroupBlock]] = {}   # shared-prefix blocks each request holds
        self.identity: dict[int, tuple[int, int, int]] = {}  # rid -> (group, prefix_tokens, stream key)

    # --------------------------------------------------------------- queries
    @property
    def free(self) -> int:
        pool = self.pool
        return pool.blank + pool.cached_free

    @property
    def cached_free(self) -> int:
        return self.pool.cached_free

    @property
    def shared_block_refs(self) -> int:
        """How many more blocks the requests' block tables list than the pool holds for them:
        a shared-prefix block held by ``k`` requests counts ``k - 1`` (TensorRT-LLM's
        GUARANTEED_NO_EVICT credits them, see :class:`kvsim.engine.policies.GuaranteedAdmission`)."""
        return self.pool.extra_refs

    def blocks_for(self, tokens: int) -> int:
        """Blocks ``tokens`` tokens fill (:func:`kvsim.engine.blocks.counting.blocks_for`)."""
        return blocks_for(tokens, self.block_size)

    def held_by(self, rid: int, T: int) -> int:
        """Blocks ``rid`` holds before step ``T`` (a decoding request's from the group)."""
        decoding = self.decoding
        if rid in decoding:
            return blocks_for(decoding.stored(rid, T), self.block_size)
        return self.held.get(rid, 0)

    def decode_blocks(self, T: int) -> int:
        """New blocks the decoding requests need in step ``T``."""
        return self.decoding.new_blocks(T)

    def admission_headroom(self, others_scheduled: bool) -> int:
        """Blocks an admission (or a V0 swap-in) must leave free: the watermark, the one rule.

        V0 keeps it always (vllm/core/block_manager.py, ``can_allocate`` and
        ``can_swap_in``); V1 only when another request is already scheduled in
        the step (vllm/v1/core/kv_cache_manager.py, ``has_scheduled_reqs``).
        NOTE(watermark-running): kvsim reads "scheduled" as "running" (the caller passes whether
        any request runs), see :func:`kvsim.model.vllm_defaults.watermark_default`.
        Growth of running requests never pays it.
        """
        return self.watermark_blocks if (self.watermark_when_alone or others_scheduled) else 0

    @property
    def most_blocks_alone(self) -> int:
        """The most blocks one request may ever hold: the pool less the watermark it keeps alone."""
        return self.num_blocks - (self.watermark_blocks if self.watermark_when_alone else 0)

    def register(self, rid: int, group: int, prefix_tokens: int, stream_key: int) -> None:
        """Say what ``rid``'s tokens are: ``prefix_tokens`` of ``group`` (-1: none), then ``stream_key``."""
        self.identity[rid] = (group, prefix_tokens, stream_key)
        self.held[rid] = 0

    def lookup(self, rid: int, num_tokens: int) -> Hit:
        """The cached blocks ``rid`` would hit now (its first ``num_tokens`` tokens, at most all but one)."""
        if not self.caching:
            return NO_HIT
        group, prefix_tokens, key = self.identity[rid]
        bs = self.block_size
        max_blocks = (num_tokens - 1) // bs
        in_prefix = min(prefix_tokens // bs, max_blocks) if group >= 0 else 0
        blocks: list[GroupBlock] = []
        index = self.pool.group_index
        for i in range(in_prefix):
            b = index.get((group, i))
            if b is None:
                return Hit(blocks) if blocks else NO_HIT
            blocks.append(b)
        first = prefix_tokens // bs if group >= 0 else 0
        runs = self.pool.runs.get(key)
        if runs is None or max_blocks <= first:
            return Hit(blocks) if blocks else NO_HIT
        stream: list[tuple[StreamRun, int]] = []
        start = first          # a stream's blocks are found run after run, from its first
        while start < max_blocks and (run := runs.get(start)) is not None:
            stream.append((run, min(run.hi, max_blocks)))
            start = run.hi
        return Hit(blocks, stream) if stream or blocks else NO_HIT

    def block_keys(self, rid: int, first: int, last: int) -> list[tuple[int, int, int]]:
        """Names of ``rid``'s blocks ``first .. last - 1`` by content, as the prefix cache names
        them: ``(0, group, i)`` inside a shared prefix, else ``(1, stream, i)`` (the host tier's
        keys, :mod:`kvsim.engine.blocks.host_tier`)."""
        group, prefix_tokens, key = self.identity[rid]
        in_prefix = prefix_tokens // self.block_size if group >= 0 else 0
        return [(0, group, i) if i < in_prefix else (1, key, i) for i in range(first, last)]

    def full_blocks(self, tokens: int) -> int:
        """Blocks ``tokens`` tokens fill completely."""
        return tokens // self.block_size

    def can_allocate(self, new_blocks: int, hit: Hit = NO_HIT, headroom: int = 0) -> bool:
        """Would ``new_blocks`` fresh blocks (plus the hit's free blocks) leave ``headroom`` free?"""
        return new_blocks + hit.evictable + headroom <= self.pool.free

    # ----------------------------------------------------------- allocation
    def admit(self, rid: int, hit: Hit, tokens: int) -> None:
        """Give ``rid`` its hit blocks and fresh blocks up to ``tokens`` (checked by the caller)."""
        pool = self.pool
        refs = self.group_refs.setdefault(rid, [])
        for b in hit.group_blocks:
            pool.touch_group_block(b)
            refs.append(b)
        held = hit.blocks
        for run, upto in hit.stream:
            pool.touch_run(run, upto)
        self.held[rid] = held
        self.grow(rid, tokens)

    def take_decode_step(self, T: int) -> bool:
        """Take the blocks of step ``T``'s decodes if they are free (vLLM's ``allocate_slots``
        for every decoding request at once); False, taking nothing, if they are not."""
        need = self.decoding.new_blocks(T)
        pool = self.pool
        if need > pool.blank + pool.cached_free:
            return False
        pool.take(need)
        return True

    def take_decode_steps(self, T_first: int, T_end: int) -> None:
        """Take the blocks of the decodes of steps ``T_first .. T_end - 1`` (checked by the
        caller: :meth:`DecodeGroup.steps_until_short`)."""
        self.pool.take(self.decoding.new_blocks_between(T_first, T_end))

    def join_decoding(self, rid: int, stored_tokens: int, T: int, last_step: int) -> None:
        """``rid``, holding ``stored_tokens`` before step ``T``, decodes until ``last_step``: the
        decode group counts its blocks from now on, and its own count reads
        :data:`kvsim.engine.requests.IN_DECODE_GROUP` until it leaves (:meth:`held_by`)."""
        self.decoding.add(rid, stored_tokens, T, last_step)
        self.held[rid] = IN_DECODE_GROUP

    def leave_decoding(self, rid: int, T: int) -> int:
        """``rid`` leaves the decode group before step ``T``: its table holds what it stores
        then. Returns those tokens."""
        stored = self.decoding.remove(rid, T)
        self.held[rid] = blocks_for(stored, self.block_size)
        return stored

    def grow(self, rid: int, tokens: int) -> int:
        """Take blocks so that ``rid`` holds ``ceil(tokens / bs)``; returns how many were taken."""
        need = blocks_for(tokens, self.block_size) - self.held[rid]
        if need > 0:
            self.pool.take(need)
            self.held[rid] += need
            return need
        return 0

    def shortfall(self, rid: int, tokens: int) -> int:
        """Blocks ``rid`` still needs to hold ``tokens`` tokens, beyond what is free (0: it fits)."""
        need = blocks_for(tokens, self.block_size) - self.held[rid]
        return max(0, need - self.pool.free)

    def registers_prefix(self, rid: int, computed: int) -> bool:
        """Would :meth:`cache_prefix` index new shared-prefix blocks for ``rid`` now?"""
        if not self.caching:
            return False
        group, prefix_tokens, _ = self.identity[rid]
        return group >= 0 and min(computed, prefix_tokens) // self.block_size > \
            len(self.group_refs.get(rid, ()))

    def cache_prefix(self, rid: int, computed: int) -> None:
        """Register the shared-prefix blocks ``rid`` has filled once ``computed`` tokens are in."""
        if not self.caching:
            return
        group, prefix_tokens, _ = self.identity[rid]
        if group < 0:
            return
        refs = self.group_refs.setdefault(rid, [])
        full = min(computed, prefix_tokens) // self.block_size
        for i in range(len(refs), full):
            refs.append(self.pool.new_group_block(group, i))

    def set_held(self, rid: int, blocks: int) -> None:
        self.held[rid] = blocks

    def release(self, rid: int, stored_tokens: int, *, reachable: bool) -> None:
        """Free every block of ``rid``, which holds KV for ``stored_tokens`` tokens.

        Full blocks stay cached (prefix caching); ``reachable=False`` says no
        request can ever hit the stream's blocks again (they still occupy the
        queue as cached blocks, but are not indexed).
        """
        pool = self.pool
        held = self.held.pop(rid)
        refs = self.group_refs.pop(rid, ())
        if not self.caching:
            pool.release_blank(held)
            return
        group, prefix_tokens, key = self.identity[rid]
        first = prefix_tokens // self.block_size if group >= 0 else 0
        full = stored_tokens // self.block_size
        stream_full = max(0, full - max(first, len(refs)))
        pool.release_blank(held - len(refs) - stream_full)
        if stream_full:
            lo = max(first, len(refs))
            pool.release_run(key if reachable else None, lo, lo + stream_full)
        for b in reversed(refs):
            pool.release_group_block(b)

    def forget(self, rid: int) -> None:
        self.identity.pop(rid, None)
