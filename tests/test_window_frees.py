"""The decode group's window frees in closed form against a member-by-member count.

A member storing ``offset + T`` tokens before step ``T``, decoding from ``join``, frees in
step ``T > join`` the blocks its skipped tokens ``max(0, offset + T - lag - window + 1)``
gained a whole block of (vLLM 0.34's ``remove_skipped_blocks`` with
``SlidingWindowManager.get_num_skipped_tokens``, run by ``allocate_slots`` each step).
"""
from __future__ import annotations

import random

from kvsim.engine.blocks.window_frees import WindowFrees, steps_until_short


def _brute(offset: int, join: int, T: int, window: int, lag: int, bs: int) -> int:
    if join >= T:
        return 0

    def skip(t: int) -> int:
        return max(0, offset + t - lag - window + 1)
    return skip(T) // bs - skip(T - 1) // bs


def _group(rng: random.Random):
    bs = rng.choice([1, 2, 4, 16])
    window, lag = rng.randint(1, 60), rng.choice([0, 1])
    frees, members, crossings = WindowFrees(bs, window, lag), {}, [0] * bs
    T0 = rng.randint(0, 50)
    for rid in range(rng.randint(1, 10)):
        join = T0 - rng.randint(0, 20)
        offset = rng.randint(1, 120) - join
        members[rid] = (offset, join)
        frees.add(rid, offset, join)
        crossings[offset % bs] += 1
    for rid in list(members):
        if rng.random() < 0.2:
            frees.remove(rid)
            crossings[members.pop(rid)[0] % bs] -= 1
    frees.settle(T0)
    return bs, window, lag, frees, members, crossings, T0


def test_frees_per_step_and_over_ranges_match_each_member():
    rng = random.Random(1)
    for _ in range(150):
        bs, window, lag, frees, members, _, T0 = _group(rng)
        for T in range(T0, T0 + 80):
            assert frees.frees(T) == sum(_brute(o, j, T, window, lag, bs) for o, j in members.values())
        for _ in range(10):
            a = T0 + rng.randint(0, 60)
            b = a + rng.randint(0, 70)
            assert frees.frees_between(a, b) == sum(
                _brute(o, j, T, window, lag, bs) for o, j in members.values() for T in range(a, b))


def test_steps_until_short_matches_a_step_by_step_count():
    rng = random.Random(2)
    for _ in range(1500):
        bs, window, lag, frees, members, crossings, T0 = _group(rng)
        take_mult, free_mult = rng.choice([(1, 1), (2, 1), (6, 5)])
        free, limit = rng.randint(0, 40), rng.randint(0, 200)
        avail, expected = free, limit
        for j in range(limit):          # a step runs when its takes are free before its frees
            T = T0 + j
            take = take_mult * crossings[-T % bs]
            back = free_mult * sum(_brute(o, jn, T, window, lag, bs) for o, jn in members.values())
            if take > avail:
                expected = j
                break
            avail -= take - back
        assert steps_until_short(crossings, frees, T0, free, limit, take_mult=take_mult,
                                 free_mult=free_mult) == expected
