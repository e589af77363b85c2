"""The prefix cache's block pool keeps every cached block findable until its own block is
reused, as vLLM's does (vllm/v1/core/block_pool.py in 0.34.0: a freed block with a hash stays
in the hash map, at the tail of the free queue, until ``get_new_blocks`` hands it out again;
``touch`` takes a hit block out of the queue and leaves the others where they are).

kvsim keeps a stream's freed blocks as runs (:class:`kvsim.engine.blocks.pool.StreamRun`), not
one by one; these tests check the runs against a pool kept block by block, and the hand-derived
case a run-per-stream pool got wrong (a hit on the start of a run forgot the rest).
"""
from __future__ import annotations

import random
from collections import OrderedDict

import pytest

from kvsim.engine.blocks import KVCacheManager
from kvsim.engine.invariants import _pool as pool_problems

BS = 4


def _manager(num_blocks: int) -> KVCacheManager:
    return KVCacheManager(num_blocks, BS, prefix_caching=True)


def _hit_blocks(kv: KVCacheManager, rid: int, tokens: int) -> int:
    return kv.lookup(rid, tokens).blocks


def test_a_hit_on_the_start_of_a_run_leaves_the_rest_findable():
    """A request frees 6 full blocks of its stream (24 tokens). A second request of the stream
    with 9 tokens hits 2 blocks (8 tokens; its 9th is computed), and is freed having computed
    only those 8 tokens. vLLM still holds blocks 2..5 of the first copy, cached: a third
    request with the whole history hits all 6 (it hit 2 when a hit forgot the rest of a run)."""
    kv = _manager(20)
    kv.register(0, -1, 0, 7)
    kv.admit(0, kv.lookup(0, 24), 24)
    kv.release(0, 24, reachable=True)
    assert (kv.free, kv.cached_free) == (20, 6)

    kv.register(1, -1, 0, 7)
    hit = kv.lookup(1, 9)
    assert hit.blocks == 2
    kv.admit(1, hit, 9)                      # 2 hit blocks + 1 fresh one
    assert (kv.free, kv.cached_free) == (17, 4)
    kv.release(1, 8, reachable=True)         # its third block is not full: freed blank
    assert (kv.free, kv.cached_free) == (20, 6)

    kv.register(2, -1, 0, 7)
    assert _hit_blocks(kv, 2, 25) == 6
    problems: list[str] = []
    pool_problems(kv.pool, problems)
    assert problems == []


def test_the_rest_of_a_run_is_evicted_where_it_was_in_the_queue():
    """The blocks a hit leaves behind keep their place in the LRU order: freed before a second
    stream's run, they are evicted before it."""
    kv = _manager(12)
    for rid, stream in ((0, 1), (1, 2)):
        kv.register(rid, -1, 0, stream)
        kv.admit(rid, kv.lookup(rid, 20), 20)
    kv.release(0, 20, reachable=True)        # stream 1: blocks 0..4, older
    kv.release(1, 8, reachable=True)         # stream 2: blocks 0..1 (its rest blank)
    kv.register(2, -1, 0, 1)
    kv.admit(2, kv.lookup(2, 9), 9)          # hits stream 1's blocks 0..1, takes 1 more
    assert kv.cached_free == 3 + 2
    kv.take(4)                               # blank blocks go first: 12 - 3 held - 5 cached
    kv.take(1)                               # then the oldest cached block: stream 1's block 4
    kv.register(3, -1, 0, 2)
    assert _hit_blocks(kv, 3, 100) == 2      # stream 2 is untouched
    kv.take(3)                               # stream 1's blocks 3, 2 and then stream 2's 1
    assert _hit_blocks(kv, 3, 100) == 1


class BlockByBlock:
    """vLLM's pool kept one block at a time, with kvsim's rule for two copies of a stream's
    block (NOTE(duplicate-cached-blocks): the newer copy is the one found)."""

    def __init__(self, num_blocks: int) -> None:
        self.free: OrderedDict[int, None] = OrderedDict((b, None) for b in range(num_blocks))
        self.content: dict[int, tuple[int, int] | None] = dict.fromkeys(range(num_blocks))
        self.findable: dict[int, bool] = dict.fromkeys(range(num_blocks), False)
        self.index: dict[tuple[int, int], int] = {}
        self.tables: dict[int, list[int]] = {}

    def cached_free(self) -> int:
        return sum(1 for b in self.free if self.content[b] is not None)

    def lookup(self, stream: int, tokens: int) -> list[int]:
        found = []
        while len(found) < (tokens - 1) // BS and (stream, len(found)) in self.index:
            found.append(self.index[(stream, len(found))])
        return found

    def take(self) -> int:
        block, _ = self.free.popitem(last=False)
        key = self.content[block]
        if key is not None and self.index.get(key) == block:
            del self.index[key]
        self.content[block] = None
        return block

    def admit(self, rid: int, stream: int, tokens: int) -> None:
        table = self.lookup(stream, tokens)
        for block in table:
            del self.free[block]
        table += [self.take() for _ in range(-(-tokens // BS) - len(table))]
        self.tables[rid] = table

    def release(self, rid: int, stream: int, stored: int, reachable: bool) -> None:
        full = stored // BS
        for i, block in reversed(list(enumerate(self.tables.pop(rid)))):
            if i < full:
                self.content[block] = (stream, i) if reachable else (-1, block)
                if reachable:
                    self.index[(stream, i)] = block      # the newer copy is found
                self.free[block] = None                  # the tail: cached, kept longest
            else:
                self.content[block] = None
                self.free[block] = None
                self.free.move_to_end(block, last=False)  # the front: reused first


@pytest.mark.parametrize("seed", range(40))
def test_runs_find_what_a_block_by_block_pool_finds(seed):
    """Random admissions and releases, each stream held by one request at a time (as kvsim's
    workloads hold them; a stream freed as unreachable, a finished request's own content, is
    never asked for again): after every operation the runs and the block-by-block pool agree
    on every stream's hit, on the free and the cached blocks, and the pool's invariants hold."""
    rng = random.Random(seed)
    num_blocks = rng.choice([8, 16, 30])
    kv, ref = _manager(num_blocks), BlockByBlock(num_blocks)
    streams = list(range(4))
    holder: dict[int, tuple[int, int]] = {}      # stream -> (rid, its hit tokens)
    rid = 0
    for _ in range(150):
        if holder and (rng.random() < 0.5 or len(holder) == len(streams)):
            stream = rng.choice(sorted(holder))
            held_rid, hit_tokens = holder.pop(stream)
            stored = rng.randint(hit_tokens, kv.held[held_rid] * BS)
            reachable = rng.random() < 0.9
            kv.release(held_rid, stored, reachable=reachable)
            ref.release(held_rid, stream, stored, reachable)
            if not reachable:
                streams[streams.index(stream)] = max(streams) + 1
        else:
            stream = rng.choice([s for s in streams if s not in holder])
            tokens = rng.randint(1, 10 * BS)
            kv.register(rid, -1, 0, stream)
            hit = kv.lookup(rid, tokens)
            if not kv.can_allocate(kv.blocks_for(tokens) - hit.blocks, hit):
                continue
            assert hit.blocks == len(ref.lookup(stream, tokens))
            kv.admit(rid, hit, tokens)
            ref.admit(rid, stream, tokens)
            holder[stream] = (rid, hit.blocks * BS)
            rid += 1
        for s in streams:
            if s not in holder:
                kv.register(10**6, -1, 0, s)
                assert _hit_blocks(kv, 10**6, 100 * BS) == len(ref.lookup(s, 100 * BS))
        assert (kv.free, kv.cached_free) == (len(ref.free), ref.cached_free())
        problems: list[str] = []
        pool_problems(kv.pool, problems)
        assert problems == []
