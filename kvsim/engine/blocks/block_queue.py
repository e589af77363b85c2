"""The pool block by block: every block an id, one free queue, a hash per block.

vLLM 0.34's ``BlockPool`` (vllm/v1/core/block_pool.py) over its ``FreeKVCacheBlockQueue``
(vllm/v1/core/kv_cache_utils.py), without kvsim's run-length shortcuts
(:mod:`kvsim.engine.blocks.pool`): the exact pool that sliding-window groups with the
prefix cache on need, where a window group's hit touches blocks in the middle of what a
request freed (:mod:`kvsim.engine.blocks.window_cache`).

* The free queue: new blocks come from its front (``get_new_blocks``); ``free`` puts a
  block that carries a hash at its tail (kept longest, LRU) and one without at its front,
  in the order given (``free_blocks``: ``prepend_n`` and ``append_n``).
* A block taken for new data loses its hash (``_maybe_evict_cached_block``): ``evicted``
  counts those.
* The hash map keeps every copy of a key, oldest first, and a lookup finds the oldest
  (``get_one_block``); a copy is forgotten only when its block is reused.

Legend: ``Key`` a block's content in one KV cache group, ``(group, kind, id, index)``:
kind 0 a shared prefix ``id``, kind 1 a stream ``id`` (:mod:`kvsim.engine.blocks.pool`'s
naming of token content).
"""
from __future__ import annotations

from collections import OrderedDict

from .pool import BlockPool

__all__ = ["BlockQueue", "Key", "NO_HASH"]

Key = tuple[int, int, int, int]
#: a block without a hash
NO_HASH: Key = (-1, -1, -1, -1)


class BlockQueue(BlockPool):
    """``num_blocks`` blocks, the free queue and the hash map (see the module); of
    :class:`BlockPool` only the counts (``blank``, ``cached_free``, ``free``, ``evicted``,
    ``extra_refs``) are used, its run-length methods never."""

    def __init__(self, num_blocks: int) -> None:
        super().__init__(num_blocks)
        self.free_queue: OrderedDict[int, None] = OrderedDict.fromkeys(range(num_blocks))
        self.hash_of: list[Key] = [NO_HASH] * num_blocks
        self.refs: list[int] = [0] * num_blocks
        self.copies: dict[Key, list[int]] = {}

    def take_blocks(self, n: int) -> list[int]:
        """``n`` blocks for new data from the queue's front (checked by the caller)."""
        queue, hash_of, refs = self.free_queue, self.hash_of, self.refs
        out: list[int] = []
        for _ in range(n):
            block, _ = queue.popitem(last=False)
            key = hash_of[block]
            if key[0] < 0:
                self.blank -= 1
            else:
                self.cached_free -= 1
                self.evicted += 1
                self._forget(block, key)
            refs[block] = 1
            out.append(block)
        return out

    def _forget(self, block: int, key: Key) -> None:
        copies = self.copies[key]
        copies.remove(block)
        if not copies:
            del self.copies[key]
        self.hash_of[block] = NO_HASH

    def free_blocks(self, blocks: list[int]) -> None:
        """Give back ``blocks``, the first to be reused first (``BlockPool.free_blocks``)."""
        queue, hash_of, refs = self.free_queue, self.hash_of, self.refs
        front: list[int] = []
        for block in blocks:
            refs[block] -= 1
            if refs[block]:
                self.extra_refs -= 1
                continue
            if hash_of[block][0] < 0:
                front.append(block)
            else:
                queue[block] = None
                self.cached_free += 1
        for block in reversed(front):
            queue[block] = None
            queue.move_to_end(block, last=False)
        self.blank += len(front)

    def touch(self, block: int) -> None:
        """A hit on ``block``: one more holder (it leaves the queue if it was free)."""
        if self.refs[block] == 0:
            del self.free_queue[block]
            self.cached_free -= 1
        else:
            self.extra_refs += 1
        self.refs[block] += 1

    def find(self, key: Key) -> int:
        """The oldest block holding ``key``, or -1."""
        copies = self.copies.get(key)
        return copies[0] if copies else -1

    def set_hash(self, block: int, key: Key) -> None:
        """``block`` (held) now carries ``key`` (``cache_full_blocks``)."""
        if self.hash_of[block][0] >= 0:
            return
        self.hash_of[block] = key
        self.copies.setdefault(key, []).append(block)
