"""Unit tests for three engine parts that otherwise only have end-to-end coverage:

* kvsim/engine/blocks/decode_group.py -- the decode group in closed form, against a brute-force model
  that keeps every member's stored tokens and steps them one token at a time;
* kvsim/engine/waiting.py -- the FCFS deque and the priority heap;
* kvsim/engine/timeline.py -- the recorder: what it returns for hand-made steps.

Hypothesis: deterministic by default (derandomized, no example database, as
test_engine_properties.py runs); under ``HYPOTHESIS_PROFILE=explore`` (tests/conftest.py)
these tests take the profile's settings instead: 2,000 fresh random examples each.
"""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from kvsim.engine.blocks import DecodeGroup
from kvsim.engine.timeline import TIMELINE_COLUMNS, Recorder
from kvsim.engine.waiting import FCFSQueue, PriorityQueue, make_waiting_queue


def unit_settings(max_examples: int) -> settings:
    """Today's deterministic settings, or the loaded profile's under HYPOTHESIS_PROFILE=explore."""
    if os.environ.get("HYPOTHESIS_PROFILE", "default") == "explore":
        return settings(suppress_health_check=[HealthCheck.too_slow])
    return settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


# =============================================================================================
# The decode group: closed form against stepping


class BruteGroup:
    """What a decode group means, kept the slow way: every member's stored tokens (KV held
    before the current step) and the step of its last token; one token each per step."""

    def __init__(self, bs: int):
        self.bs = bs
        self.stored: dict[int, int] = {}
        self.last: dict[int, int] = {}

    def stored_at(self, rid: int, T_now: int, T: int) -> int:
        return self.stored[rid] + (T - T_now)

    def new_blocks_at(self, T_now: int, T: int) -> int:
        """Members that start a block in step T: their stored tokens fill whole blocks (the
        new token goes into a fresh one; 0 stored tokens is a fresh first block too)."""
        return sum(1 for r in self.stored if self.stored_at(r, T_now, T) % self.bs == 0)

    def context_at(self, T_now: int, T: int) -> int:
        """Tokens attended to in step T: each member's stored ones and its new one."""
        return sum(self.stored_at(r, T_now, T) + 1 for r in self.stored)

    def blocks_between(self, T_now: int, T_first: int, T_end: int) -> int:
        return sum(self.new_blocks_at(T_now, t) for t in range(T_first, T_end))

    def steps_until_short(self, T_now: int, free: int, limit: int) -> int:
        """Run steps one by one from T_now while the free blocks cover them (at most limit)."""
        s = used = 0
        while s < limit:
            need = self.new_blocks_at(T_now, T_now + s)
            if used + need > free:
                break
            used += need
            s += 1
        return s

    def step(self) -> None:
        for r in self.stored:
            self.stored[r] += 1


def check_group(g: DecodeGroup, b: BruteGroup, T: int, full: bool = True) -> None:
    """Every quantity the closed form reports, at step T, against the brute force (``full``:
    also the block counts over later steps and the run length the free blocks allow)."""
    assert g.size == len(b.stored)
    assert sorted(g.offset) == sorted(b.stored)
    for r in b.stored:
        assert r in g
        assert g.stored(r, T) == b.stored[r], r
    assert sum(g.crossings) == g.size
    assert g.new_blocks(T) == b.new_blocks_at(T, T)
    assert g.context(T) == b.context_at(T, T)
    if b.stored:
        want = min((b.last[r], r) for r in b.stored)
        assert g.next_finish() == want
        assert g.next_finish_step() <= want[0]          # a lower bound
    if not full:
        return
    for later in range(1, 3):
        assert g.new_blocks(T + later) == b.new_blocks_at(T, T + later)
        assert g.context(T + later) == b.context_at(T, T + later)
    for first in (T, T + 1, T + b.bs - 1):
        for k in sorted({0, 1, 2, b.bs - 1, b.bs, b.bs + 1, 2 * b.bs + 1, 3 * b.bs + 2}):
            assert g.new_blocks_between(first, first + k) == b.blocks_between(T, first, first + k), \
                (first, k)
    for free in range(2 * g.size + 3):
        for limit in (1, b.bs + 1, 3 * b.bs + 2, 10**6):
            if limit == 10**6 and g.size == 0:
                continue                        # nothing ever runs short: the brute loop is long
            assert g.steps_until_short(T, free, limit) == b.steps_until_short(T, free, limit), \
                (free, limit)


@st.composite
def group_programs(draw):
    """A block size, a start step, initial members and a program of operations."""
    bs = draw(st.sampled_from([1, 2, 4, 16]))
    T0 = draw(st.integers(0, 40))
    members = draw(st.lists(st.tuples(st.integers(0, 3 * bs + 5), st.integers(0, 3 * bs + 5)),
                            min_size=0, max_size=6))
    ops = draw(st.lists(st.one_of(
        st.tuples(st.just("steps"), st.integers(1, 2 * bs + 3)),
        st.tuples(st.just("add"), st.integers(0, 3 * bs + 5), st.integers(0, 3 * bs + 5)),
        st.tuples(st.just("remove"), st.integers(0, 10)),
        st.tuples(st.just("rejoin"), st.integers(0, 10), st.integers(0, 3 * bs + 5)),
    ), min_size=1, max_size=12))
    return bs, T0, members, ops


@unit_settings(300)
@given(group_programs())
def test_the_decode_group_in_closed_form_equals_stepping_one_token_at_a_time(program):
    bs, T, members, ops = program
    g, b = DecodeGroup(bs), BruteGroup(bs)
    assert g.next_finish_step() == math.inf                # never filled
    next_rid = 0
    removed: dict[int, int] = {}                           # rid -> its stored tokens when removed

    def add(stored, remaining, rid=None):
        nonlocal next_rid
        if rid is None:
            rid, next_rid = next_rid, next_rid + 1
        g.add(rid, stored, T, T + remaining)
        b.stored[rid], b.last[rid] = stored, T + remaining
        assert g.first_step[rid] == T

    for stored, remaining in members:
        add(stored, remaining)
    check_group(g, b, T)
    for op in ops:
        note(f"T={T} {op}")
        if op[0] == "steps":
            for _ in range(op[1]):
                check_group(g, b, T, full=False)
                b.step()
                T += 1
                # the engine, after step T-1: who emitted its last token? (then removes them)
                done = g.pop_finished(T - 1)
                want = sorted((b.last[r], r) for r in b.stored if b.last[r] <= T - 1)
                assert done == [r for _, r in want]
                for r in done:
                    assert g.remove(r, T) == b.stored[r]
                    removed[r] = b.stored.pop(r)
                    del b.last[r]
        elif op[0] == "add":
            add(op[1], op[2])
        elif op[0] == "remove" and b.stored:
            r = sorted(b.stored)[op[1] % len(b.stored)]
            assert g.remove(r, T) == b.stored[r]
            assert r not in g
            removed[r] = b.stored.pop(r)
            del b.last[r]
        elif op[0] == "rejoin":
            # a member leaves and comes back with the same KV (a stall), or a removed request
            # comes back (its stale heap entries must never be taken for it)
            if b.stored and op[1] % 2 == 0:
                r = sorted(b.stored)[op[1] % len(b.stored)]
                stored = g.remove(r, T)
                assert stored == b.stored.pop(r)
                del b.last[r]
            elif removed:
                r = sorted(removed)[op[1] % len(removed)]
                stored = removed.pop(r)
            else:
                continue
            add(stored, op[2], rid=r)
        check_group(g, b, T)


def test_the_decode_group_by_hand():
    """Block size 4, step 10: member 0 holds 8 tokens (two full blocks), member 1 holds 5."""
    g = DecodeGroup(4)
    g.add(0, 8, 10, 12)        # emits its last token in step 12
    g.add(1, 5, 10, 20)
    assert (g.stored(0, 10), g.stored(1, 10)) == (8, 5)
    assert g.new_blocks(10) == 1            # member 0 starts its third block
    assert g.new_blocks(11) == 0            # 9 and 6 stored: room in both last blocks
    assert g.new_blocks(13) == 1            # member 1 holds 8 before step 13
    assert g.context(10) == 9 + 6
    assert g.new_blocks_between(10, 18) == 4          # two cycles of 4 steps, one block each
    assert g.steps_until_short(10, 0, 100) == 0       # step 10 already needs a block
    assert g.steps_until_short(10, 1, 100) == 3       # steps 10, 11, 12; step 13 needs one more
    assert g.next_finish() == (12, 0)
    assert g.pop_finished(11) == [] and g.pop_finished(12) == [0]
    assert g.remove(0, 13) == 11
    assert g.next_finish() == (20, 1)
    g.add(0, 11, 13, 14)       # back, with a new last step: the old heap entry is stale
    assert g.pop_finished(13) == [] and g.next_finish() == (14, 0)


# =============================================================================================
# The waiting queues


def test_fcfs_is_arrival_order_and_a_preempted_request_goes_to_the_front():
    q = make_waiting_queue("fcfs", [], [])
    assert isinstance(q, FCFSQueue) and len(q) == 0 and not q
    for rid in (3, 1, 2):
        q.push(rid)
    assert list(q) == [3, 1, 2] and len(q) == 3 and q.head() == 3
    assert q.pop_head() == 3                  # admitted
    q.push_front(3)                           # preempted: V1's prepend_request
    assert list(q) == [3, 1, 2] and q.head() == 3
    q.push_front(9)                           # a second victim of the same step goes before it
    q.push(4)                                 # a new arrival goes to the back
    assert list(q) == [9, 3, 1, 2, 4] and len(q) == 5
    assert [q.pop_head() for _ in range(5)] == [9, 3, 1, 2, 4]
    assert len(q) == 0 and not q


def test_priority_is_lower_value_first_then_earlier_arrival_then_id():
    priority = [1, 0, 0, 2, 0, 1]
    arrival = [0.0, 3.0, 1.0, 0.5, 1.0, 0.0]
    q = make_waiting_queue("priority", priority, arrival)
    assert isinstance(q, PriorityQueue) and len(q) == 0 and not q
    for rid in range(6):
        q.push(rid)
    # priority 0: ids 2 and 4 (arrival 1.0, the tie broken by id), then 1 (arrival 3.0);
    # priority 1: 0 and 5 (both at 0.0, by id); priority 2: 3
    order = [2, 4, 1, 0, 5, 3]
    assert list(q) == order and len(q) == 6 and q and q.head() == 2
    assert list(q) == order                   # iterating does not consume
    assert q.pop_head() == 2 and q.pop_head() == 4
    q.push_front(2)                           # V1: a preempted request re-enters by its key
    assert q.head() == 2 and list(q) == [2, 1, 0, 5, 3] and len(q) == 5
    assert [q.pop_head() for _ in range(5)] == [2, 1, 0, 5, 3]
    assert len(q) == 0 and not q


@unit_settings(300)
@given(st.lists(st.tuples(st.integers(-2, 2), st.integers(0, 4)), min_size=1, max_size=30),
       st.lists(st.booleans(), max_size=60), st.randoms(use_true_random=False))
def test_the_priority_heap_pops_in_sorted_order(keys, pops, rnd):
    """Pushes in any order, pops interleaved: the heap always gives what sorting the queued
    requests by (priority, arrival, id) gives, and iterates in that order."""
    priority = [p for p, _ in keys]
    arrival = [a * 0.5 for _, a in keys]
    rids = list(range(len(keys)))
    rnd.shuffle(rids)
    q = PriorityQueue(priority, arrival)
    queued: list[int] = []

    def key(r):
        return (priority[r], arrival[r], r)

    it = iter(pops)
    for rid in rids:
        q.push(rid)
        queued.append(rid)
        while next(it, False) and queued:             # pop some in between
            want = min(queued, key=key)
            assert q.head() == want and q.pop_head() == want
            queued.remove(want)
        assert len(q) == len(queued)
        assert list(q) == sorted(queued, key=key)
    assert [q.pop_head() for _ in range(len(queued))] == sorted(queued, key=key)
    assert len(q) == 0


# =============================================================================================
# The recorder

# The constant columns of a single step, in the order Recorder.step takes them:
# running, waiting, swapped, preemptions, decoding, prefill_tokens, decode_tokens,
# emitted_tokens, swap_out_bytes, swap_in_bytes, recomputed_tokens


def hand_made_recorder() -> Recorder:
    """Eight steps (block size 4): a prefill, a run of 4 decode steps, a mixed step with a
    preemption, a run of 2 decode steps.

    A run's durations follow from its timing ``(context, growth, gpu_fixed_s, s_per_token,
    cpu_s, cpu_bound_until)``: step ``j`` attends to ``context + j * growth`` tokens (growth:
    the batch, without sliding windows)."""
    rec = Recorder()
    # row 0: three prompts prefilled, 13 blocks held, one request still waiting
    rec.step(0.20, 0.20, 0.0, 13, 0, (3, 1, 0, 0, 0, 400, 0, 3, 0, 0, 0))
    # rows 1-4: decode steps T = 1..4 of 3 members; step T + j takes crossings[-(T + j) % 4]
    # blocks, the first step's (crossings[3]) already in used0 = 13:
    #   j = 0: -, j = 1: crossings[2] = 1, j = 2: crossings[1] = 0, j = 3: crossings[0] = 1
    # so 13, 14, 14, 15 blocks; the first taken block comes from the 1 blank free block, the
    # second evicts a cached one: cached 3, 3, 3, 2. The last row shows the state after the
    # run's finishes instead: 9 used, 5 cached, 2 running, nobody waiting.
    # Durations 0.01 + 0.0001 * (100, 103, 106, 109 tokens): 0.02, 0.0203, 0.0206, 0.0209 s.
    rec.decode_run(0.20, [0.22, 0.2403, 0.2609, 0.2818], (100, 3, 0.01, 0.0001, 0.0, 0), 1,
                   [1, 0, 1, 1], 13, 1, 3, 9, 5, 3, 1, 0, 2, 0)
    # row 5: a mixed step: one preemption, 50 prefill tokens of which 16 recomputed, 1 decode
    rec.step(0.37, 0.07, 0.07, 20, 1, (2, 1, 0, 1, 1, 50, 1, 1, 0, 0, 16))
    # rows 6-7: decode steps T = 6, 7 of 2 members: j = 1 takes crossings[-7 % 4 = 1] = 1 block;
    # no blank block left, so it evicts the one cached block. Last row: 19 used, 2 cached.
    # Asynchronous timing: 10 tokens (below 11) take the CPU's 0.031 s, 12 tokens the GPU's
    # 0.02 + 0.001 * 12 = 0.032 s.
    rec.decode_run(0.37, [0.401, 0.433], (10, 2, 0.02, 0.001, 0.031, 11), 6, [0, 1, 1, 0], 20, 0,
                   1, 19, 2, 2, 0, 1, 1, 3)
    return rec


def test_the_recorder_returns_what_the_steps_put_in():
    tl = hand_made_recorder().timeline()
    assert list(tl) == list(TIMELINE_COLUMNS)
    for name, dtype in TIMELINE_COLUMNS.items():
        assert tl[name].dtype == dtype and tl[name].shape == (8,), name
    want = {
        "t_s": [0.20, 0.22, 0.2403, 0.2609, 0.2818, 0.37, 0.401, 0.433],
        "dt_s": [0.20, 0.02, 0.0203, 0.0206, 0.0209, 0.07, 0.031, 0.032],
        "gap_s": [0.0, 0.02, 0.0203, 0.0206, 0.0209, 0.07, 0.031, 0.032],
    }
    for name, values in want.items():
        assert tl[name].tolist() == pytest.approx(values, rel=0, abs=1e-12), name
    exact = {
        "kv_blocks_used": [13, 13, 14, 14, 9, 20, 20, 19],
        "kv_blocks_cached": [0, 3, 3, 3, 5, 1, 1, 2],
        "running": [3, 3, 3, 3, 2, 2, 2, 1],
        "waiting": [1, 1, 1, 1, 0, 1, 0, 3],
        "swapped": [0, 0, 0, 0, 0, 0, 1, 1],
        "preemptions": [0, 0, 0, 0, 0, 1, 0, 0],
        "decoding": [0, 3, 3, 3, 3, 1, 2, 2],
        "prefill_tokens": [400, 0, 0, 0, 0, 50, 0, 0],
        "decode_tokens": [0, 3, 3, 3, 3, 1, 2, 2],
        "emitted_tokens": [3, 3, 3, 3, 3, 1, 2, 2],
        "swap_out_bytes": [0] * 8,
        "swap_in_bytes": [0] * 8,
        "recomputed_tokens": [0, 0, 0, 0, 0, 16, 0, 0],
    }
    for name, values in exact.items():
        assert tl[name].tolist() == values, name


def test_swap_bytes_of_a_single_step_are_recorded():
    rec = Recorder()
    rec.step(1.5, 0.5, 0.5, 7, 2, (1, 0, 1, 1, 1, 0, 1, 1, 65_536, 131_072, 0))
    tl = rec.timeline()
    assert tl["swap_out_bytes"].tolist() == [65_536] and tl["swap_in_bytes"].tolist() == [131_072]
    assert tl["swapped"].tolist() == [1] and tl["kv_blocks_cached"].tolist() == [2]


def test_pauses_events_and_stints():
    rec = hand_made_recorder()
    rec.pause_start(0, 0.22, 0)
    rec.pause_start(0, 0.25, 1)               # already paused: the first start stands
    rec.set_pause_mode(0, 1)                  # the stall became a swap
    rec.set_pause_mode(5, 1)                  # no open pause: nothing happens
    assert rec.pause_end(0, 0.37) == 1
    assert rec.pause_end(0, 0.40) is None     # no open pause any more
    rec.pause_start(1, 0.39, 2)               # still open at the end
    pz = rec.pause_table()
    assert pz["request"].tolist() == [0, 1] and pz["mode"].tolist() == [1, 2]
    assert pz["start_s"].tolist() == [0.22, 0.39]
    assert pz["end_s"][0] == 0.37 and math.isnan(pz["end_s"][1])
    assert pz["request"].dtype == np.int64 and pz["mode"].dtype == np.int64

    rec.event(0.37, 2, 0)
    rec.event(0.47, 1, 1)
    ev = rec.event_table()
    assert ev["t_s"].tolist() == [0.37, 0.47]
    assert ev["request"].tolist() == [2, 1] and ev["mode"].tolist() == [0, 1]

    rec.stint(0, 1, 3)                        # rows 1, 2: gaps 0.02, 0.0203
    rec.stint(1, 2, 6)                        # rows 2-5: gaps 0.0203, 0.0206, 0.0209, 0.07
    rec.stint(2, 4, 4)                        # empty: not kept
    rec.stint(0, 6, 7)                        # row 6: 0.031 (request 0's second stint)
    rec.stint(2, 7, 8)                        # row 7: 0.032
    assert rec.stints.tolist() == [0, 1, 3, 1, 2, 6, 0, 6, 7, 2, 7, 8]
    gaps = rec.timeline()["gap_s"]
    longest = rec.longest_stint_gaps(gaps, 4)
    # request 0: the longer of its two stints' longest gaps; request 3 never decoded
    assert longest.tolist() == pytest.approx([0.031, 0.07, 0.032, 0.0], rel=0, abs=1e-12)


def test_a_runs_first_gap_is_measured_from_the_runs_start():
    rec = Recorder()
    # two sequences: 0.1 + 0.05 * (0, 2 tokens) = 0.1, 0.2 s
    rec.decode_run(1.0, [1.1, 1.3], (0, 2, 0.1, 0.05, 0.0, 0), 0, [2], 2, 5, 0, 4, 0, 2, 0, 0, 2, 0)
    tl = rec.timeline()
    assert tl["gap_s"].tolist() == pytest.approx([0.1, 0.2], rel=0, abs=1e-12)
    # block size 1: both members take a block every step; the first step's were taken before
    assert tl["kv_blocks_used"].tolist() == [2, 4] and tl["running"].tolist() == [2, 2]


def test_an_empty_recorder_gives_empty_tables():
    rec = Recorder()
    tl = rec.timeline()
    assert list(tl) == list(TIMELINE_COLUMNS)
    assert all(v.shape == (0,) and v.dtype == TIMELINE_COLUMNS[k] for k, v in tl.items())
    assert all(v.shape == (0,) for v in rec.pause_table().values())
    assert all(v.shape == (0,) for v in rec.event_table().values())
    assert rec.longest_stint_gaps(tl["gap_s"], 3).tolist() == [0.0, 0.0, 0.0]
