"""Per-request block tables over the pool: vLLM's ``KVCacheManager``.

The scheduler asks it "can this request have the blocks for n more tokens?" and
never counts blocks itself (vllm/v1/core/kv_cache_manager.py over block_pool.py).
It owns every block: those of the requests it tracks one by one (``held``) and,
through :class:`kvsim.engine.blocks.decode_group.DecodeGroup`, those of the
decoding requests, whose tables grow by one token a step in closed form.

With sliding windows (vLLM V1's hybrid allocator, the prefix cache off; with it on,
:class:`kvsim.engine.blocks.window_cache.WindowCacheManager` counts block by block) a block is
one KV cache group's: a request holds ``groups x ceil(slots / bs)`` blocks less
``window_groups x skipped``, ``skipped`` the blocks wholly before the window of its
processed tokens, freed each time it is scheduled (:meth:`KVCacheManager.settle_window`;
the decode group's in closed form, :mod:`kvsim.engine.blocks.window_frees`).
"""
from __future__ import annotations

from collections.abc import Callable

from .counting import blocks_for, request_blocks, skipped_blocks
from .decode_group import IN_DECODE_GROUP, DecodeGroup
from .pool import NO_HIT, BlockPool, GroupBlock, Hit, StreamRun
from .window_frees import WindowFrees, steps_until_short

__all__ = ["KVCacheManager"]


class KVCacheManager:
    """Per-request block tables over a :class:`BlockPool` (vLLM's ``KVCacheManager``).

    ``per_request`` (class attribute): the scheduler must run every step request by request
    (True only for :class:`kvsim.engine.blocks.window_cache.WindowCacheManager`).

    Args:
        num_blocks: usable blocks.
        block_size: tokens per block.
        prefix_caching: keep freed full blocks cached (vLLM V1's default).
        watermark_blocks: blocks admission leaves free (V0: 1 % of the pool).
        watermark_when_alone: keep the watermark even when nothing else is
            scheduled (V0); V1 keeps it only beside other requests.
        window: the sliding window of ``window_groups`` of the ``groups`` KV cache groups
            (0: every group holds the full context, and a block spans the groups); with a
            window, a block is one group's and each request holds ``groups x ceil(slots / bs)``
            blocks less ``window_groups x`` those its window left (``skipped``, freed when the
            request is next scheduled: vLLM's ``remove_skipped_blocks``).
        window_lag: tokens of the previous step still in flight when a request is scheduled
            again (1: asynchronous scheduling), which its window does not free yet.
        window_cap: a window group's admission cap in blocks (vLLM 0.20+).
    """

    per_request = False

    def __init__(self, num_blocks: int, block_size: int, *, prefix_caching: bool,
                 watermark_blocks: int = 0, watermark_when_alone: bool = False,
                 window: int = 0, groups: int = 1, window_groups: int = 0, window_lag: int = 0,
                 window_cap: int = 0):
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
        # Sliding windows (all zero without): blocks per token block, per window block freed
        self.window = window
        self.take_mult = groups if window else 1
        self.free_mult = window_groups if window else 0
        self.window_groups = window_groups
        self.window_cap = window_cap
        self.groups = groups
        self.frees = WindowFrees(block_size, window, window_lag) if window else None
        self.lag = window_lag
        self.step = 0                               # the step being scheduled (set by the scheduler)
        self.slots: dict[int, int] = {}             # tokens with slots
        self.skipped: dict[int, int] = {}           # window blocks freed (per window group)
        self.last: dict[int, tuple[int, int]] = {}  # (step, tokens) of the last scheduled step
        self._dues: dict[int, int] = {}             # step -> window blocks a joining member frees
        # a decode-group member: (first step, skipped before, skipped after the first step,
        # offset, its dues at the first step and the next)
        self._member: dict[int, tuple[int, int, int, int, int, int]] = {}

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
            if self.window:
                return self.take_mult * blocks_for(decoding.stored(rid, T), self.block_size) \
                    - self.free_mult * self._member_skipped(rid, T)
            return blocks_for(decoding.stored(rid, T), self.block_size)
        return self.held.get(rid, 0)

    def decode_blocks(self, T: int) -> int:
        """New blocks the decoding requests take in step ``T`` (before any window frees: see
        :meth:`take_decode_step`)."""
        if self.window:
            return self._decode_takes(T)
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

    def register(self, rid: int, group: int, prefix_tokens: int, stream_key: int,
                 prompt_tokens: int = 0) -> None:
        """Say what ``rid``'s tokens are: ``prefix_tokens`` of ``group`` (-1: none), then
        ``stream_key``; its prompt has ``prompt_tokens`` (used with sliding windows and the
        prefix cache: :mod:`kvsim.engine.blocks.window_cache`)."""
        self.identity[rid] = (group, prefix_tokens, stream_key)
        self.held[rid] = 0
        if self.window:
            self.slots[rid] = self.skipped[rid] = 0

    def admission_blocks(self, tokens: int, *, capped: bool) -> int:
        """Blocks a new request of ``tokens`` tokens asks for at admission: ``ceil(tokens / bs)``
        (in every group, with windows); ``capped`` (vLLM's ``full_sequence_must_fit``) counts a
        window group at most its admission cap."""
        if not self.window:
            return blocks_for(tokens, self.block_size)
        if not capped:
            return self.take_mult * blocks_for(tokens, self.block_size)
        return request_blocks(tokens, self.block_size, self.groups, self.window_groups,
                              self.window_cap)

    # ------------------------------------------------------------- windows
    def _processed(self, rid: int) -> int:
        """``rid``'s processed tokens when scheduled in step ``step``: its slots less the tokens
        of the step before, still in flight under asynchronous scheduling (vLLM's
        ``total_computed_tokens - num_in_flight_tokens``)."""
        step, tokens = self.last.get(rid, (-2, 0))
        return self.slots[rid] - (tokens if self.lag and step == self.step - 1 else 0)

    def _skip_after(self, rid: int) -> int:
        return max(self.skipped[rid], skipped_blocks(self._processed(rid), self.window,
                                                     self.block_size))

    def settle_window(self, rid: int) -> None:
        """``rid`` is scheduled in step ``step``: its window groups free the blocks wholly before
        the window of its processed tokens (vLLM's ``allocate_slots`` runs
        ``remove_skipped_blocks`` before it allocates)."""
        if not self.window:
            return
        new = self._skip_after(rid) - self.skipped[rid]
        if new > 0:
            self.pool.release_blank(self.free_mult * new)
            self.held[rid] -= self.free_mult * new
            self.skipped[rid] += new

    def new_blocks(self, rid: int, tokens: int) -> int:
        """Blocks ``rid`` takes to hold ``tokens`` (with windows, whatever its window frees)."""
        if not self.window:
            return max(0, blocks_for(tokens, self.block_size) - self.held[rid])
        bs = self.block_size
        return self.take_mult * max(0, blocks_for(tokens, bs) - blocks_for(self.slots[rid], bs))

    def _member_skipped(self, rid: int, T: int) -> int:
        """Window blocks a decode-group member has freed before step ``T``."""
        first, before, at_first, offset, _, _ = self._member[rid]
        if first >= T:
            return before
        if first + 1 == T:
            return at_first
        return max(at_first, skipped_blocks(offset + T - 1 - self.lag, self.window, self.block_size))

    def _decode_takes(self, T: int) -> int:
        return self.take_mult * self.decoding.new_blocks(T)

    def _decode_frees(self, T: int) -> int:
        frees = self.frees
        assert frees is not None
        frees.settle(T)
        return self.free_mult * (frees.residues[-T % self.block_size] + self._dues.get(T, 0))

    def window_run_limit(self, T: int) -> int:
        """The most steps from ``T`` a decode run may take with its window frees at fixed
        residues (before the next member starts freeing, or a joining member's first frees)."""
        frees = self.frees
        assert frees is not None
        frees.settle(T + 1)
        nxt = min([frees.next_start()] + [s for s in self._dues if s > T])
        return 1 if nxt <= T + 1 else int(min(nxt - T, 2**62))

    def frees_in_run(self) -> bool:
        """Do decode-group members free window blocks in a run from the step
        :meth:`window_run_limit` settled (a free can admit a blocked request)?"""
        return self.frees is not None and self.frees.started > 0

    def run_crossings(self) -> list[int]:
        """Blocks a run's step ``T`` takes, net, at ``[-T % bs]`` (the timeline's crossings)."""
        if not self.window:
            return self.decoding.crossings.copy()
        frees = self.frees
        assert frees is not None
        return [self.take_mult * c - self.free_mult * f
                for c, f in zip(self.decoding.crossings, frees.residues, strict=True)]

    def decode_steps_until_short(self, T: int, free_blocks: int, limit: int) -> int:
        """:meth:`DecodeGroup.steps_until_short`, the windows' frees counted."""
        if not self.window:
            return self.decoding.steps_until_short(T, free_blocks, limit)
        frees = self.frees
        assert frees is not None
        return steps_until_short(self.decoding.crossings, frees, T, free_blocks, limit,
                                 take_mult=self.take_mult, free_mult=self.free_mult)

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

    def admission_new_blocks(self, gate: int, upto: int, hit: Hit, *, capped: bool) -> int:
        """Fresh blocks a new request with ``hit`` asks for at admission: those of ``gate``
        tokens (:meth:`admission_blocks`) less the hit (``upto``, the tokens it is given
        now, counts only with sliding windows and the prefix cache)."""
        return self.admission_blocks(gate, capped=capped) - hit.blocks

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
        pool = self.pool
        if self.window:
            # its takes must be free before its frees: then vLLM's pass finds every block in
            # any order; else kvsim's exact pass, request by request, decides
            takes, frees = self._decode_takes(T), self._decode_frees(T)
            if takes > pool.blank + pool.cached_free:
                return False
            self._dues.pop(T, None)
            pool.release_blank(frees)
            pool.take(takes)
            return True
        need = self.decoding.new_blocks(T)
        if need > pool.blank + pool.cached_free:
            return False
        pool.take(need)
        return True

    def take_decode_steps(self, T_first: int, T_end: int) -> None:
        """Take the blocks of the decodes of steps ``T_first .. T_end - 1`` (checked by the
        caller: :meth:`DecodeGroup.steps_until_short`)."""
        if self.window:
            frees = self.frees
            assert frees is not None
            freed = self.free_mult * (frees.frees_between(T_first, T_end) + sum(
                self._dues.pop(s) for s in [s for s in self._dues if T_first <= s < T_end]))
            self.pool.release_blank(freed)
            self.pool.take(self.take_mult * self.decoding.new_blocks_between(T_first, T_end))
            return
        self.pool.take(self.decoding.new_blocks_between(T_first, T_end))

    def join_decoding(self, rid: int, stored_tokens: int, T: int, last_step: int) -> None:
        """``rid``, holding ``stored_tokens`` before step ``T``, decodes until ``last_step``: the
        decode group counts its blocks from now on, and its own count reads
        :data:`kvsim.engine.requests.IN_DECODE_GROUP` until it leaves (:meth:`held_by`)."""
        self.decoding.add(rid, stored_tokens, T, last_step)
        if self.window:
            self._join_window(rid, stored_tokens, T)
        self.held[rid] = IN_DECODE_GROUP

    def leave_decoding(self, rid: int, T: int) -> int:
        """``rid`` leaves the decode group before step ``T``: its table holds what it stores
        then. Returns those tokens."""
        if self.window:
            return self._leave_window(rid, T)
        stored = self.decoding.remove(rid, T)
        self.held[rid] = blocks_for(stored, self.block_size)
        return stored

    def _join_window(self, rid: int, stored: int, T: int) -> None:
        """``rid`` decodes from step ``T``: what its window frees in ``T`` (its in-flight tokens
        those of its last step) and in ``T + 1`` (one token in flight) are dues; from
        ``T + 2`` on the decode group's second residue counts them (:class:`WindowFrees`)."""
        frees = self.frees
        assert frees is not None
        self.slots[rid] = stored
        before = self.skipped[rid]
        at_first = max(before, skipped_blocks(self._processed_at(rid, T), self.window,
                                              self.block_size))
        offset = stored - T
        # the group's residue counts T + 1 from the window of T with one token in flight
        regular = skipped_blocks(offset + T - self.lag, self.window, self.block_size)
        due_first, due_next = at_first - before, regular - at_first
        self._member[rid] = (T, before, at_first, offset, due_first, due_next)
        for step, n in ((T, due_first), (T + 1, due_next)):
            if n:
                self._dues[step] = self._dues.get(step, 0) + n
        frees.add(rid, offset, T)

    def _processed_at(self, rid: int, T: int) -> int:
        step, tokens = self.last.get(rid, (-2, 0))
        return self.slots[rid] - (tokens if self.lag and step == T - 1 else 0)

    def _leave_window(self, rid: int, T: int) -> int:
        frees = self.frees
        assert frees is not None
        first, _, _, _, due_first, due_next = self._member[rid]
        skipped = self._member_skipped(rid, T)
        for step, n in ((first, due_first), (first + 1, due_next)):
            if n and step >= T:                    # not yet freed: it leaves first
                self._dues[step] -= n
                if not self._dues[step]:
                    del self._dues[step]
        del self._member[rid]
        frees.remove(rid)
        stored = self.decoding.remove(rid, T)
        self.skipped[rid] = skipped
        self.slots[rid] = stored
        self.held[rid] = self.take_mult * blocks_for(stored, self.block_size) \
            - self.free_mult * skipped
        if first <= T - 1:
            self.last[rid] = (T - 1, 1)
        return stored

    def grow(self, rid: int, tokens: int) -> int:
        """Take blocks so that ``rid`` holds ``ceil(tokens / bs)``; returns how many were taken."""
        if self.window:
            return self._grow_window(rid, tokens)
        need = blocks_for(tokens, self.block_size) - self.held[rid]
        if need > 0:
            self.pool.take(need)
            self.held[rid] += need
            return need
        return 0

    def _grow_window(self, rid: int, tokens: int) -> int:
        """:meth:`grow` with windows: every group's blocks for ``tokens`` slots, less the window
        blocks already freed; ``rid`` was scheduled ``tokens - slots`` tokens in this step."""
        need = self._window_need(rid, tokens)
        if need > 0:
            self.pool.take(need)
            self.held[rid] += need
        slots = self.slots[rid]
        if tokens > slots:
            self.last[rid] = (self.step, tokens - slots)
            self.slots[rid] = tokens
        return max(0, need)

    def _window_need(self, rid: int, tokens: int) -> int:
        return self.take_mult * blocks_for(tokens, self.block_size) \
            - self.free_mult * self.skipped[rid] - self.held[rid]

    def shortfall(self, rid: int, tokens: int) -> int:
        """Blocks ``rid`` still needs to hold ``tokens`` tokens, beyond what is free (0: it fits)."""
        if self.window:
            return max(0, self._window_need(rid, tokens) - self.pool.free)
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
        if self.window:
            self.slots[rid] = self.skipped[rid] = 0
            self.last.pop(rid, None)
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
        if self.window:
            self.slots.pop(rid, None)
            self.skipped.pop(rid, None)
            self.last.pop(rid, None)
