"""The block pool and the prefix cache: free blocks in LRU order, cached blocks by identity.

Explained in chapter 2, *Optimistic admission and preemption* (blocks on
demand) and chapter 3, *Swap versus recompute* (what the prefix cache rescues).

The scheduler asks :class:`KVCacheManager` "can this request have the blocks
for n more tokens?" and never counts blocks itself, as in vLLM V1
(vllm/v1/core/kv_cache_manager.py over block_pool.py). What is modelled:

* **A free-block queue in LRU order.** Blocks nobody holds are free. Freed
  blocks that carry a hash (full blocks, with prefix caching on) go to the
  *tail*; freed blocks without one go to the *front*, and new blocks are taken
  from the front, so an unhashed block is reused first and a cached block
  survives as long as possible (vLLM's ``FreeKVCacheBlockQueue``). A request's
  blocks are freed in reverse order, so its last blocks are evicted first.
* **Lazy eviction.** A freed block keeps its hash until it is taken for new
  data; only then does the prefix cache forget it. Cached-free blocks count as
  free (vLLM's ``kv_cache_usage`` does not count them).
* **Hits by hash chain.** A block is identified by the hash of its tokens and
  of every token before it, so a request hits the longest run of cached
  blocks from its first token, never a block whose tokens differ, and at most
  ``num_tokens - 1`` tokens (one is always computed). Touching a cached-free
  block takes it out of the free queue.

How kvsim names token content without tokens: a request's tokens are a
*shared prefix* of ``prefix_tokens`` (a system prompt, identical in every
request of ``prefix_group``) and then a *stream* (``stream_key``): a
conversation whose next turn resends the whole history, or the request's own
content. Block ``i`` of a request (tokens ``i*bs .. (i+1)*bs - 1``) is
therefore identified by ``(prefix_group, i)`` when it lies inside the shared
prefix, else ``(stream_key, i)`` — the same equality a hash chain gives.
Shared-prefix blocks are kept one by one (:class:`GroupBlock`, with a
reference count: many running requests hold them at once); a stream's blocks
are only ever held by one request at a time, so a freed run of them is one
entry (:class:`StreamRun`) that loses blocks from its end as they are evicted. A
hit on the start of a run takes those blocks out of the queue and leaves the
rest where they were, still cached and findable, as vLLM leaves every cached
block until its own block is reused: a stream's cached blocks may be several
runs, and a lookup follows them from the stream's first block for as long as
each run starts where the last one ended.

NOTE(duplicate-cached-blocks), a deliberate simplification: vLLM may hold two cached copies of the
same block (two requests compute the same prefix block at once, or a request
recomputes a block whose copy is still cached); both stay in its hash map and
lookups return the first one inserted (``get_one_block``), the older copy.
kvsim indexes one copy: for a shared-prefix block the older one, and a
duplicate is never found, not even after the older copy is evicted (vLLM would
then find the newer one); for a stream's blocks the newer run, the older run's
blocks above it staying findable (its copies below stay in the queue, counted
as cached, until they are reused).
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import final

__all__ = ["BlockPool", "Hit", "GroupBlock", "StreamRun"]


@final
class StreamRun:
    """One free-queue entry of a stream's cached-free blocks: ``lo .. hi-1``, findable, and
    ``dead`` more below them that nobody can find (copies another run of the stream indexes,
    NOTE(duplicate-cached-blocks)); evicted from ``hi`` down, the dead ones last.

    ``key`` is None for a run nobody can hit again (a finished request's own
    content): it still occupies the queue and counts as cached, but is not
    indexed. ``eid`` is its place in the queue.
    """

    key: int | None
    lo: int
    hi: int
    dead: int
    eid: int

    __slots__ = ("key", "lo", "hi", "dead", "eid")

    def __init__(self, key: int | None, lo: int, hi: int) -> None:
        self.key, self.lo, self.hi, self.dead, self.eid = key, lo, hi, 0, -1

    @property
    def size(self) -> int:
        """Blocks the entry holds in the free queue."""
        return self.hi - self.lo + self.dead


@final
class GroupBlock:
    """One block of a shared prefix: ``(group, index)``, held by ``refs`` requests.

    ``eid`` is its place in the free queue while nobody holds it (-1 otherwise);
    ``indexed`` says whether lookups find it (False for a duplicate, see the
    module docstring).
    """

    group: int
    index: int
    refs: int
    eid: int
    indexed: bool

    __slots__ = ("group", "index", "refs", "eid", "indexed")

    def __init__(self, group: int, index: int) -> None:
        self.group, self.index, self.refs, self.eid, self.indexed = group, index, 1, -1, False


class Hit:
    """A prefix-cache lookup: shared-prefix blocks, then the stream's runs it reaches, each with
    the block it is hit up to (``(run, upto)``), and how many blocks are free."""

    group_blocks: Sequence[GroupBlock]
    stream: Sequence[tuple[StreamRun, int]]
    run_blocks: int
    blocks: int
    evictable: int

    __slots__ = ("group_blocks", "stream", "run_blocks", "blocks", "evictable")

    def __init__(self, group_blocks: Sequence[GroupBlock],
                 stream: Sequence[tuple[StreamRun, int]] = ()) -> None:
        self.group_blocks, self.stream = group_blocks, stream
        self.run_blocks = run_blocks = sum(upto - run.lo for run, upto in stream)
        self.blocks = len(group_blocks) + run_blocks
        self.evictable = sum(1 for b in group_blocks if b.refs == 0) + run_blocks


NO_HIT = Hit(())


class BlockPool:
    """Free blocks in LRU order and the index of cached ones (see the module docstring).

    ``blank`` counts free blocks without a hash (the front of the queue);
    ``queue`` holds the cached-free entries in LRU order, oldest first;
    ``runs`` and ``group_index`` find cached blocks by their identity.
    """

    def __init__(self, num_blocks: int) -> None:
        self.num_blocks = num_blocks
        self.blank = num_blocks
        self.queue: OrderedDict[int, StreamRun | GroupBlock] = OrderedDict()
        self.cached_free = 0
        self.runs: dict[int, dict[int, StreamRun]] = {}   # stream key -> {first block: its StreamRun}
        self.group_index: dict[tuple[int, int], GroupBlock] = {}   # (group, index) -> GroupBlock
        self.evicted = 0                     # cached blocks reused for new data
        self.extra_refs = 0                  # holders of shared-prefix blocks beyond the first
        self._next_eid = 0
        self._dead_tail: StreamRun | None = None  # the last unreachable run, if at the queue's tail

    @property
    def free(self) -> int:
        return self.blank + self.cached_free

    def take(self, n: int) -> None:
        """Take ``n`` free blocks for new data: unhashed ones first, then evict the oldest cached."""
        if n <= self.blank:
            self.blank -= n
            return
        n -= self.blank
        self.blank = 0
        self.cached_free -= n
        self.evicted += n
        queue = self.queue
        while n:
            eid, entry = next(iter(queue.items()))
            if type(entry) is StreamRun:
                live = entry.hi - entry.lo
                if n < live:                    # the run's last blocks
                    entry.hi -= n
                    return
                if entry.key is not None:       # nothing of it is findable any more
                    self._unindex(entry)
                if n < live + entry.dead:       # and some of the copies below it
                    entry.hi = entry.lo
                    entry.dead -= n - live
                    return
                del queue[eid]
                n -= live + entry.dead
            else:
                del queue[eid]
                entry.eid = -1
                if entry.indexed:
                    del self.group_index[(entry.group, entry.index)]
                n -= 1

    def _unindex(self, run: StreamRun) -> None:
        """Lookups stop finding ``run`` (its blocks stay in the queue)."""
        assert run.key is not None
        of_key = self.runs[run.key]
        del of_key[run.lo]
        if not of_key:
            del self.runs[run.key]
        run.key = None

    def _enqueue(self, entry: StreamRun | GroupBlock) -> None:
        entry.eid = self._next_eid
        self._next_eid += 1
        self.queue[entry.eid] = entry

    def release_blank(self, n: int) -> None:
        self.blank += n

    def release_run(self, key: int | None, lo: int, hi: int) -> None:
        """Free a stream's full blocks ``lo .. hi-1`` (cached until evicted)."""
        if hi <= lo:
            return
        tail = self._dead_tail
        if key is None and tail is not None and tail.eid == self._next_eid - 1 and tail.eid in self.queue:
            # unreachable blocks after unreachable blocks: one entry, longer
            tail.hi += hi - lo
            self.cached_free += hi - lo
            return
        run = StreamRun(key, lo, hi)
        if key is None:
            self._dead_tail = run
        else:
            of_key = self.runs.setdefault(key, {})
            for old in [old for old in of_key.values() if old.lo < hi and old.hi > lo]:
                # NOTE(duplicate-cached-blocks): the newer copy is found; an older run's
                # blocks above it stay findable, its copies below it are dead
                del of_key[old.lo]
                found = max(old.lo, min(old.hi, hi))
                old.dead += found - old.lo
                old.lo = found
                if old.lo < old.hi:
                    of_key[old.lo] = old
                else:
                    old.key = None
            of_key[lo] = run
        self._enqueue(run)
        self.cached_free += hi - lo

    def touch_run(self, run: StreamRun, upto: int) -> None:
        """A hit on ``run``'s blocks below ``upto``: they leave the free queue; the rest stays
        where it was, findable from ``upto`` on (vLLM's ``touch`` of each hit block)."""
        assert run.key is not None     # a run that lookup() found is indexed
        taken = min(upto, run.hi) - run.lo
        self.cached_free -= taken
        of_key = self.runs[run.key]
        del of_key[run.lo]
        run.lo += taken
        if run.lo < run.hi:
            of_key[run.lo] = run
        else:
            if not of_key:
                del self.runs[run.key]
            run.key = None
            if not run.dead:
                del self.queue[run.eid]

    def touch_group_block(self, block: GroupBlock) -> None:
        if block.refs == 0:
            del self.queue[block.eid]
            block.eid = -1
            self.cached_free -= 1
        else:
            self.extra_refs += 1
        block.refs += 1

    def release_group_block(self, block: GroupBlock) -> None:
        block.refs -= 1
        if block.refs == 0:
            self._enqueue(block)
            self.cached_free += 1
        else:
            self.extra_refs -= 1

    def new_group_block(self, group: int, index: int) -> GroupBlock:
        """Index a freshly computed shared-prefix block (its block was taken by the caller).

        If a copy is already cached (held, or free in the queue), lookups keep
        finding that older copy and the new one is never indexed (the module
        docstring's NOTE(duplicate-cached-blocks)). Registering a block never moves a free block.
        """
        block = GroupBlock(group, index)
        if (group, index) not in self.group_index:
            block.indexed = True
            self.group_index[(group, index)] = block
        return block
