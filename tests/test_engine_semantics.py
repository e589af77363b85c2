"""Scenario tests of the scheduler's V0 semantics (``engine="v0"``), in the spirit of vLLM's
own scheduler tests (vLLM V0 ``tests/core/test_scheduler.py``: preemption, chunked
prefill, swap): explicit request lists on pools of a few blocks, and assertions on
what ``result.events``, ``result.pauses``, ``result.requests`` and
``result.timeline`` show. The V1 scenarios (the default engine) are in
``test_engine_v1.py``, the prefix cache in ``test_prefix_cache.py``; the rules are
those of ``book/engine-reference.md``.

Explained in chapter 2, *Optimistic admission and preemption*, and chapter 3,
*Swap versus recompute*.

Conventions used below (llama-2-7b on the 48 GB L40S, ``engine="v0"``,
``block_size=16``, ``watermark=0`` and ``enable_prefix_caching=False`` unless a test
says otherwise; the V0 token budget is 2,048, so every short prompt is one chunk):

* V0 takes the blocks of a whole prefill at admission: ``ceil(P / 16)`` for a new
  request, ``ceil((P + G) / 16)`` for a recompute.
* A request with prompt ``P`` that has generated ``G`` tokens holds the KV of
  ``P + G - 1`` tokens between steps (its newest token has not been fed back yet),
  i.e. ``ceil((P + G - 1) / 16)`` blocks; its next decode step needs a new block
  exactly when ``P + G - 1`` is a multiple of 16.
* Row ``k`` of the timeline is step ``k + 1``; after row 0 (the prefill) a request
  admitted in step 1 has ``G = 1``, and row ``k`` is the decode step that starts with
  ``G = k``.
* ``recomputed_tokens`` of a recompute preemption is the KV that was discarded:
  ``P + G - 1`` tokens for a decoding victim (the resume then prefills ``P + G``
  tokens: the discarded KV plus the newest token, which is fed back as a decode
  input would have been). A victim caught mid-prefill discards the prefill tokens
  it had computed.
* ``events["t_s"]`` is the start of the step in which the preemption happened,
  which is the end of the row before it in the timeline.
* Step times come from one formula, :class:`kvsim.engine.costs.StepCost` (``step_s``).
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import kvsim
from kvsim.engine.costs import StepCost, attention_pairs, swap_time_s
from kvsim.engine.result import SUMMARY_KEYS

from engine_helpers import assert_drained, row_at

R = kvsim.Request
MODEL = "llama-2-7b"
GPU = "l40s-48gb"
BS = 16


def run(requests, **opts):
    """Simulate on llama-2-7b / L40S with V0, block_size=16, watermark=0 and no prefix cache."""
    opts.setdefault("engine", "v0")
    opts.setdefault("block_size", BS)
    opts.setdefault("watermark", 0.0)
    opts.setdefault("enable_prefix_caching", False)
    return kvsim.simulate(requests, model=MODEL, gpu=GPU, **opts)


def step_cost(result) -> StepCost:
    """The cost model the run used (its engine mode's CPU overhead, its KV bytes per token)."""
    return StepCost(kvsim.get_model(MODEL), kvsim.get_gpu(GPU), kvsim.CostModel(),
                    engine=result.config["engine"],
                    kv_bytes_per_token=result.config["kv_bytes_per_token"],
                    async_scheduling=result.config["async_scheduling"])






# --------------------------------------------------------------------------------------------
# Preemption by recompute: victim, queue position, recomputed tokens


# A holds 4 blocks (60 tokens), B 3 blocks (40 tokens): the 7-block pool is full after
# admission. A's decode step that starts with G = 5 feeds position 64 and needs a 5th
# block; none is free, so B (admitted last) is preempted with G = 5: KV of
# 40 + 5 - 1 = 44 tokens dropped. C arrives at 5 ms, after B and before the
# preemption, and needs 5 blocks.
PREEMPT_CASE = [R(0.0, 60, 20), R(0.0, 40, 20), R(0.005, 80, 5)]


def test_growth_preempts_the_last_admitted_request_which_resumes_from_the_queue_head():
    """Rows 0-4 give B its tokens 1-5; row 5 (G = 5) preempts it: A then holds 4 + 1 = 5
    blocks and B's 3 are free. B goes to the front of the queue, ahead of C. After A
    finishes (G = 20 at row 19) the pool is empty; B (3 blocks for 45 tokens) is
    re-admitted and prefills 40 + 5 = 45 tokens; C (5 blocks) does not fit next to it
    (7 - 3 = 4 free) and starts only after B finished."""
    r = run(PREEMPT_CASE, num_gpu_blocks=7)
    tl, rq, ev, pz = r.timeline, r.requests, r.events, r.pauses

    # Both admitted in the first step; the pool is full.
    assert tl["kv_blocks_used"][0] == 7 and tl["prefill_tokens"][0] == 100
    assert tl["running"][0] == 2
    # Exactly one preemption: B, by recompute, in the step that starts when A needs block 5.
    assert ev.num_rows == 1
    assert (int(ev["request"][0]), int(ev["mode"][0])) == (1, 0)
    i = row_at(r, ev["t_s"][0]) + 1          # the row of the step that preempted
    assert tl["preemptions"][i] == 1 and tl["preemptions"].sum() == 1
    assert i == 5                            # rows 1 .. 4 decode; row 5 starts with G = 5
    assert tl["kv_blocks_used"][i] == 5      # A's 4 + its new block; B's 3 were freed
    assert tl["running"][i] == 1 and tl["waiting"][i] == 2
    assert tl["decode_tokens"][i] == 1 and tl["emitted_tokens"][i] == 1

    # B had generated 5 tokens when preempted: its discarded KV was 40 + 5 - 1 tokens.
    g_at_preemption = 5
    assert rq["preemptions"].tolist() == [0, 1, 0]
    assert rq["recomputed_tokens"].tolist() == [0, 40 + g_at_preemption - 1, 0]
    assert rq["rescued_tokens"].tolist() == [0, 0, 0]
    assert pz.num_rows == 1 and pz["request"][0] == 1 and pz["mode"][0] == 0

    # B went to the *front* of the waiting queue: although C arrived before the
    # preemption, B resumes first (once A finishes), re-prefilling prompt + generated
    # tokens in one go; C (5 blocks) does not fit next to B (3 blocks) and waits.
    assert rq["arrival_s"][1] < rq["arrival_s"][2] < ev["t_s"][0]
    assert rq["finish_s"][0] == tl["t_s"][19]
    resume = pz["end_s"][0]
    j = row_at(r, resume)
    assert j == 20
    assert tl["t_s"][j - 1] == rq["finish_s"][0]              # right after A finished
    assert tl["kv_blocks_used"][j - 1] == 0                   # C alone would have fitted
    assert tl["prefill_tokens"][j] == 40 + g_at_preemption    # prompt + generated
    assert tl["kv_blocks_used"][j] == 3 and tl["waiting"][j] == 1
    assert resume < rq["first_token_s"][2]
    assert rq["first_token_s"][2] > rq["finish_s"][1]
    # ... and still delivers exactly its 20 tokens.
    assert_drained(r, PREEMPT_CASE)


@pytest.mark.parametrize("engine", ["v0", "v1"])
def test_a_preempted_decoders_pause_starts_at_its_last_token(engine):
    """Spec, *Measured quantities*: 'a pause starts at a request's last token before a
    preemption'. B's 5th token came at the end of row 4 (t_s[4]), and the step of row 5
    preempted it, so its pause starts at t_s[4] (= events t_s) and its gap is
    t_s[resume row] - t_s[4]."""
    r = run(PREEMPT_CASE[:2], num_gpu_blocks=7, engine=engine)
    tl, pz, rq = r.timeline, r.pauses, r.requests
    assert r.events["t_s"][0] == tl["t_s"][4]
    assert pz["start_s"][0] == tl["t_s"][4]
    assert rq["paused_s"][1] == pytest.approx(pz["end_s"][0] - tl["t_s"][4], rel=1e-12)


def test_without_the_preemption_the_third_request_is_not_held_back():
    """Control for the test above: with 20 blocks (4 + 3 + 5 = 12 at admission, at most
    5 + 4 + 6 = 15 with growth) nothing is preempted and C starts before B ends."""
    r = run(PREEMPT_CASE, num_gpu_blocks=20)
    assert r.events.num_rows == 0
    assert r.requests["first_token_s"][2] < r.requests["finish_s"][1]
    assert_drained(r, PREEMPT_CASE)


def test_a_victim_preempted_at_its_first_token_recomputes_the_prompt():
    """A (64 tokens, 4 blocks) and B (32, 2 blocks) fill 6 blocks; A's first decode step
    (row 1, G = 1) writes position 64 and needs a 5th block, so B is preempted having
    delivered 1 token: recomputed_tokens = 32 + 1 - 1 = 32, and the resume prefills
    32 + 1 = 33 tokens (3 blocks), once A is gone: A grows to 6 blocks."""
    reqs = [R(0.0, 64, 20), R(0.0, 32, 20)]
    r = run(reqs, num_gpu_blocks=6)
    assert r.events["request"].tolist() == [1]
    assert row_at(r, r.events["t_s"][0]) + 1 == 1
    assert r.requests["recomputed_tokens"].tolist() == [0, 32]
    j = row_at(r, r.pauses["end_s"][0])
    assert r.timeline["prefill_tokens"][j] == 33
    assert r.timeline["t_s"][j - 1] == r.requests["finish_s"][0]
    assert_drained(r, reqs)


def test_the_request_that_needs_the_block_can_be_its_own_victim():
    """vLLM: 'while the current request cannot grow, evict the last one (possibly
    itself)'. B (prompt 20, 2 blocks) runs alone in step 1; A (arriving at 1 ms, 4
    blocks) is admitted in step 2 and fills the 6-block pool; in step 3 A's first decode
    writes position 64 and needs block 5, and A, being last, evicts itself: its
    recomputed KV is 64 + 1 - 1 = 64 tokens. It waits (5 blocks for 65 tokens) until B
    (at most 4 blocks) finishes."""
    reqs = [R(0.0, 20, 30), R(0.001, 64, 10)]
    r = run(reqs, num_gpu_blocks=6)
    assert r.events["request"].tolist() == [1]
    assert row_at(r, r.events["t_s"][0]) + 1 == 2
    assert r.requests["preemptions"].tolist() == [0, 1]
    assert r.requests["recomputed_tokens"][1] == 64   # its first token: 64 + 1 - 1
    assert r.requests["first_token_s"][1] < r.requests["finish_s"][0] \
        < r.pauses["end_s"][0]
    assert_drained(r, reqs)


def test_a_request_that_does_not_fit_waits_and_preempts_nobody():
    """A grows from 4 to 6 blocks of a 6-block pool (64 + 30 - 1 = 93 tokens); B (3
    blocks) arrives at 50 ms, when A holds 5, and waits: a waiting request never evicts
    a running one. Its first token comes in the step right after A finished."""
    reqs = [R(0.0, 64, 30), R(0.05, 48, 5)]
    r = run(reqs, num_gpu_blocks=6)
    tl, rq = r.timeline, r.requests
    assert r.events.num_rows == 0 and not tl["preemptions"].any()
    assert rq["first_token_s"][1] > rq["finish_s"][0]
    j = row_at(r, rq["first_token_s"][1])
    assert tl["t_s"][j - 1] == rq["finish_s"][0]
    waiting_rows = (tl["t_s"] >= 0.05) & (tl["t_s"] < rq["finish_s"][0])
    assert waiting_rows.sum() > 10
    assert (tl["waiting"][waiting_rows] == 1).all() and (tl["running"][waiting_rows] == 1).all()
    assert_drained(r, reqs)


def test_no_skipping_ahead_a_large_request_at_the_head_blocks_a_small_one():
    """A grows to at most 6 of 8 blocks, leaving 2-3 free; X (4 blocks) is at the head of
    the queue and does not fit; Y (1 block) would fit but must not jump the queue."""
    a, x, y = R(0.0, 64, 30), R(0.05, 64, 5), R(0.06, 16, 5)
    r = run([a, x, y], num_gpu_blocks=8)
    tl, rq = r.timeline, r.requests
    while_blocked = (tl["t_s"] > 0.06) & (tl["t_s"] < rq["finish_s"][0])
    assert while_blocked.sum() > 10
    assert (tl["kv_blocks_used"][while_blocked] <= 8 - 2).all()   # room for Y's 1 block
    assert (tl["waiting"][while_blocked] == 2).all()
    assert rq["first_token_s"][2] >= rq["first_token_s"][1] > rq["finish_s"][0]
    assert r.events.num_rows == 0
    # Control: without X at the head, Y gets in right away (A's 30 tokens take > 0.5 s).
    alone = run([a, y], num_gpu_blocks=8)
    assert alone.requests["first_token_s"][1] < 0.2 < alone.requests["finish_s"][0]


def test_nothing_is_admitted_in_a_step_that_preempted():
    """Priority scheduling makes the victim (B, priority 1) land *behind* W (priority 0)
    in the waiting queue. A (4 blocks) and B (2) fill 6 blocks; in row 1 A needs a 5th,
    B is preempted (2 blocks freed, 1 taken by A) and W's single block is free right
    after the preemption, so only the rule 'admit only if nothing was preempted in this
    step' keeps W out of that step: the preemption row prefills nothing and W's 16-token
    prefill is the next row."""
    reqs = [R(0.0, 64, 20, priority=0), R(0.0, 32, 20, priority=1), R(0.005, 16, 3, priority=0)]
    r = run(reqs, num_gpu_blocks=6, scheduling_policy="priority")
    tl, rq = r.timeline, r.requests
    assert r.events["request"][0] == 1
    i = row_at(r, r.events["t_s"][0]) + 1
    assert i == 1 and tl["preemptions"][i] == 1
    assert tl["kv_blocks_used"][i] == 5            # one block free for W ...
    assert tl["prefill_tokens"][i] == 0            # ... yet nothing was admitted
    assert tl["waiting"][i] == 2
    assert rq["first_token_s"][2] == tl["t_s"][i + 1]
    assert tl["prefill_tokens"][i + 1] == 16
    assert_drained(r, reqs)


# --------------------------------------------------------------------------------------------
# Watermark


def test_admission_keeps_the_watermark_free_but_growth_uses_it():
    """100 blocks, watermark 0.05 -> 5 blocks of headroom. A (1,440 tokens, 90 blocks:
    90 + 5 <= 100) and B (80 tokens, 5 blocks: 5 + 5 <= 10) are admitted: B leaves
    exactly the watermark free. C (1 block: 1 + 5 > 5) would cut into it and waits.
    Then A and B grow into the watermark without any preemption: at their last token A
    holds ceil(1,469 / 16) = 92 and B ceil(109 / 16) = 7 blocks, 99 in all. V0 applies
    the watermark whatever runs (its default is 1 %: int(0.01 x 100) = 1 block)."""
    reqs = [R(0.0, 1440, 30), R(0.0, 80, 30), R(0.0, 16, 5)]
    r = run(reqs, num_gpu_blocks=100, watermark=0.05)
    tl, rq = r.timeline, r.requests
    assert r.config["watermark_blocks"] == 5
    assert tl["kv_blocks_used"][0] == 95 and tl["running"][0] == 2 and tl["waiting"][0] == 1
    assert r.events.num_rows == 0
    assert tl["kv_blocks_used"].max() == 92 + 7        # past 100 - 5
    assert rq["first_token_s"][2] > min(rq["finish_s"][0], rq["finish_s"][1])
    assert_drained(r, reqs)
    # Control: with no watermark, C is admitted in the first step.
    r0 = run(reqs, num_gpu_blocks=100, watermark=0.0)
    assert r0.timeline["running"][0] == 3 and r0.timeline["kv_blocks_used"][0] == 96
    # V0's default watermark is 1 % of the pool.
    d = kvsim.simulate(reqs, model=MODEL, gpu=GPU, engine="v0", num_gpu_blocks=100)
    assert d.config["watermark"] == 0.01 and d.config["watermark_blocks"] == 1


def test_swap_in_keeps_the_watermark_free():
    """12 blocks; A (96-token prompt, 6 blocks), B (32, 2) and C (16, 1) are admitted (9
    blocks: the watermark, 0 or 1 block, is free) and in row 1 each takes a block (12:
    growth may use the watermark). All three need their next block in row 17 (G = 17):
    A first, so the last one, C (2 blocks), is swapped out, A and B take the 2 blocks.
    In row 33 A needs a block again and B (4 blocks) is swapped out: 3 blocks stay free
    (A holds 9). In row 34 C comes back (2 blocks copied in, 3 allocated: 16 + 17 tokens
    with its next one) with no watermark; with watermark 0.1 (1 block) 3 + 1 > 3 and it
    must wait until A finishes (row 39). Up to row 33 the two runs are identical."""
    reqs = [R(0.0, 96, 40), R(0.0, 32, 40), R(0.0, 16, 20)]
    r0 = run(reqs, num_gpu_blocks=12, preemption_mode="swap", watermark=0.0)
    r1 = run(reqs, num_gpu_blocks=12, preemption_mode="swap", watermark=0.1)
    assert r1.config["watermark_blocks"] == 1
    for r in (r0, r1):
        assert r.events["request"].tolist() == [2, 1] and r.events["mode"].tolist() == [1, 1]
        assert r.timeline["kv_blocks_used"][:2].tolist() == [9, 12]
        assert [row_at(r, t) + 1 for t in r.events["t_s"]] == [17, 33]
    n = 34
    assert np.array_equal(r0.timeline["kv_blocks_used"][:n], r1.timeline["kv_blocks_used"][:n])
    assert r0.timeline["kv_blocks_used"][n - 1] == 9
    assert r0.timeline["swap_in_bytes"][n] == 2 * r0.config["block_bytes"]     # C is back
    assert r0.timeline["kv_blocks_used"][n] == 12
    assert r1.timeline["swap_in_bytes"][n] == 0 and r1.timeline["swapped"][n] == 2
    back = row_at(r1, r1.pauses["end_s"][0])
    assert r1.timeline["t_s"][back - 1] == r1.requests["finish_s"][0]       # after A
    assert back - 1 == 39
    assert r1.timeline["kv_blocks_used"][back] <= 12 - 1
    assert_drained(r0, reqs)
    assert_drained(r1, reqs)


def test_watermark_shrinks_the_largest_request_that_can_ever_fit():
    """A request must fit below the watermark (its resume may need prompt + output - 1
    tokens at once): 95 blocks x 16 = 1,520 tokens with 100 blocks and watermark 0.05."""
    fits = run([R(0.0, 1500, 21)], num_gpu_blocks=100, watermark=0.05)    # 1,520 tokens
    assert fits.summary()["requests_rejected"] == 0
    over = run([R(0.0, 1500, 22)], num_gpu_blocks=100, watermark=0.05)    # one token more
    assert over.requests["rejected"].tolist() == [2]                      # never fits the pool
    with pytest.raises(kvsim.KvsimError, match=r"request 0 .*1,520 tokens"):
        run([R(0.0, 1500, 22)], num_gpu_blocks=100, watermark=0.05, unfit_requests="error")


# --------------------------------------------------------------------------------------------
# Batch limits and chunked prefill


def test_max_num_seqs_caps_running_in_every_row():
    reqs = [R(0.01 * i, 100, 40) for i in range(10)]
    r = run(reqs, num_gpu_blocks=500, max_num_seqs=3)
    assert r.timeline["running"].max() == 3
    assert (r.timeline["running"] <= 3).all()
    order = np.argsort(r.requests["first_token_s"], kind="stable")
    assert order.tolist() == list(range(10))       # FCFS
    # The 4th request starts only when one of the first three finished.
    assert r.requests["first_token_s"][3] > r.requests["finish_s"][:3].min()
    assert_drained(r, reqs)


def test_max_num_batched_tokens_bounds_every_step():
    """300-token prompts every 20 ms against a 512-token budget: prefill chunks fill the
    budget exactly in some step, and no step ever does more."""
    reqs = [R(0.02 * i, 300, 30) for i in range(12)]
    r = run(reqs, num_gpu_blocks=800, max_num_seqs=16, max_num_batched_tokens=512)
    work = r.timeline["prefill_tokens"] + r.timeline["decode_tokens"]
    assert work.max() == 512 and (work <= 512).all()
    assert_drained(r, reqs)


def test_chunked_prefill_splits_a_long_prompt_over_several_steps():
    """1,000 tokens with a 256-token budget: chunks of 256, 256, 256 and 232; the first
    token comes with the last chunk. V0 takes the blocks of the whole prefill
    (ceil(1,000 / 16) = 63) at admission."""
    long = [R(0.0, 1000, 5)]
    small = run(long, num_gpu_blocks=100, max_num_batched_tokens=256)
    big = run(long, num_gpu_blocks=100, max_num_batched_tokens=2048)
    assert small.timeline["prefill_tokens"][:4].tolist() == [256, 256, 256, 232]
    assert small.requests["first_token_s"][0] == small.timeline["t_s"][3]
    assert big.timeline["prefill_tokens"][0] == 1000
    assert small.requests["first_token_s"][0] > big.requests["first_token_s"][0]
    # The blocks of the whole prefill are allocated at admission.
    assert small.timeline["kv_blocks_used"][:4].tolist() == [63, 63, 63, 63]


def test_decodes_are_scheduled_first_and_prefill_chunks_get_the_rest_of_the_budget():
    """A decodes while B's 1,000-token prompt is chunked: each of B's steps gives A its
    token and B the other 255 of the 256-token budget (255 x 3 + 235 = 1,000)."""
    reqs = [R(0.0, 16, 60), R(0.1, 1000, 5)]
    r = run(reqs, num_gpu_blocks=200, max_num_batched_tokens=256)
    tl = r.timeline
    chunk_rows = tl["prefill_tokens"] > 0
    rows = np.flatnonzero(chunk_rows)[1:]          # B's chunks (row 0 is A's prefill)
    assert tl["decode_tokens"][rows].tolist() == [1, 1, 1, 1]
    assert tl["prefill_tokens"][rows].tolist() == [255, 255, 255, 235]


def test_without_chunked_prefill_a_prompt_longer_than_the_budget_is_refused():
    r = run([R(0.0, 1000, 5), R(0.1, 200, 5)], num_gpu_blocks=100, max_num_batched_tokens=512,
            enable_chunked_prefill=False)
    assert r.requests["rejected"].tolist() == [4, 0]          # the other one is served
    assert r.summary()["requests_finished"] == 1
    with pytest.raises(kvsim.KvsimError, match=r"request 0 .*max_num_batched_tokens=512"):
        run([R(0.0, 1000, 5)], num_gpu_blocks=100, max_num_batched_tokens=512,
            enable_chunked_prefill=False, unfit_requests="error")
    r = run([R(0.0, 1000, 5)], num_gpu_blocks=100, max_num_batched_tokens=1100,
            enable_chunked_prefill=False)
    assert r.timeline["prefill_tokens"][0] == 1000


def test_without_chunked_prefill_a_prompt_that_does_not_fit_the_budget_left_waits():
    """No chunking, a 1,100-token budget: A (1,000 tokens) is admitted in step 1 and B
    (200 tokens) does not fit the 100 tokens left, so it is prefilled whole in step 2."""
    reqs = [R(0.0, 1000, 5), R(0.0, 200, 5)]
    r = run(reqs, num_gpu_blocks=100, max_num_batched_tokens=1100, enable_chunked_prefill=False)
    assert r.timeline["prefill_tokens"][:2].tolist() == [1000, 200]
    assert r.timeline["decode_tokens"][1] == 1
    assert_drained(r, reqs)


# --------------------------------------------------------------------------------------------
# Priority scheduling


def test_priority_victim_is_the_lowest_priority_not_the_last_admitted():
    """B (priority 5) runs first; A (priority 0) is admitted second and fills the pool.
    When A needs a block (its first decode), priority mode evicts B; FCFS evicts the
    last admitted (A)."""
    reqs = [R(0.0, 20, 30, priority=5), R(0.001, 64, 10, priority=0)]
    prio = run(reqs, num_gpu_blocks=6, scheduling_policy="priority")
    fcfs = run(reqs, num_gpu_blocks=6, scheduling_policy="fcfs")
    assert prio.events["request"].tolist()[0] == 0
    assert fcfs.events["request"].tolist()[0] == 1
    assert prio.requests["finish_s"][1] < prio.requests["finish_s"][0]
    assert_drained(prio, reqs)
    assert_drained(fcfs, reqs)


def test_priority_victim_among_equal_priorities_is_the_latest_arrival():
    """L1 (priority 1, 32 tokens) starts alone; L2 (priority 1, arriving at 0.5 ms) is
    admitted in step 2, H (priority 0, arriving at 30 ms) in step 3. After step 3 the
    7-block pool is full: L1 3 blocks (34 tokens), L2 3 (33), H 1 (16). In step 4 H's
    first decode needs a 2nd block: the victim is the largest (priority, arrival), L2 —
    neither the last admitted (H, FCFS's victim, which evicts itself) nor L1. L2 had 2
    tokens: 32 + 2 - 1 = 33 recomputed. No one needs another block afterwards (L1 at
    most 47 tokens, H at most 25)."""
    reqs = [R(0.0, 32, 16, 1), R(0.0005, 32, 16, 1), R(0.03, 16, 10, 0)]
    r = run(reqs, num_gpu_blocks=7, scheduling_policy="priority")
    assert r.timeline["kv_blocks_used"][:3].tolist() == [2, 5, 7]
    assert r.events["request"].tolist() == [1]
    assert row_at(r, r.events["t_s"][0]) + 1 == 3
    assert r.requests["recomputed_tokens"].tolist() == [0, 33, 0]
    assert_drained(r, reqs)
    fcfs = run(reqs, num_gpu_blocks=7)
    assert fcfs.events["request"].tolist() == [2]
    assert fcfs.requests["recomputed_tokens"].tolist() == [0, 0, 16]


def test_priority_victim_among_equal_priorities_and_arrivals_is_the_earliest_admitted():
    """vLLM: max(running, key=(priority, arrival)) returns the first of equal keys. Three
    priority-1 requests arrive together (2 blocks each, 6 of 8); the priority-0 one
    arrives at 1 ms. In row 1 each needs a 3rd block (33 tokens): requests 0 and 1 take
    the 2 free ones, request 2 finds none and the victim is request 0 (the earliest
    admitted of the three ties), which gives its block back: 32 tokens recomputed. FCFS
    evicts the last admitted, request 2 itself."""
    reqs = [R(0.0, 32, 16, 1)] * 3 + [R(0.001, 16, 10, 0)]
    r = run(reqs, num_gpu_blocks=8, scheduling_policy="priority")
    assert r.events["request"].tolist() == [0]
    assert row_at(r, r.events["t_s"][0]) + 1 == 1
    assert r.timeline["kv_blocks_used"][1] == 6        # 1 and 2 hold 3 blocks each
    assert r.requests["recomputed_tokens"].tolist() == [32, 0, 0, 0]
    assert_drained(r, reqs)
    fcfs = run(reqs, num_gpu_blocks=8)
    assert fcfs.events["request"].tolist() == [2]


@pytest.mark.parametrize("engine", ["v0", "v1"])
def test_a_request_that_evicts_itself_ahead_of_others_only_stalls_them_for_one_step(engine):
    """Priority scheduling, equal keys: A (60 tokens) and B (40) fill 7 blocks; in row 5
    A needs a 5th block and the victim is the earliest admitted of the ties, A itself:
    the pass ends, B gets no token in that step (a stall), nothing is admitted. In row
    6 B decodes again; B (at most 59 tokens, 4 blocks) finishes, then A (65 tokens,
    5 blocks) resumes."""
    reqs = [R(0.0, 60, 20), R(0.0, 40, 20)]
    r = run(reqs, num_gpu_blocks=7, scheduling_policy="priority", engine=engine)
    tl = r.timeline
    assert r.events["request"].tolist() == [0]
    (i,) = np.flatnonzero(tl["preemptions"])         # the step that computed nothing
    assert i == 5 and tl["decode_tokens"][i] == 0 and tl["prefill_tokens"][i] == 0
    assert tl["dt_s"][i] == 0.0 and tl["t_s"][i] == tl["t_s"][i - 1] == r.events["t_s"][0]
    assert tl["decode_tokens"][i + 1] == 1 and tl["running"][i + 1] == 1
    assert r.requests["finish_s"][1] < r.requests["finish_s"][0]
    assert_drained(r, reqs)


def test_waiting_high_priority_request_is_admitted_before_an_earlier_low_priority_one():
    """A fills the pool (4 blocks of 6, growing to 6); L (priority 5) arrives, then H
    (priority 0), both 4 blocks. When A finishes only one of them fits at a time:
    priority mode admits H first, FCFS admits L."""
    reqs = [R(0.0, 64, 20), R(0.01, 64, 10, priority=5), R(0.02, 64, 10, priority=0)]
    prio = run(reqs, num_gpu_blocks=6, scheduling_policy="priority")
    fcfs = run(reqs, num_gpu_blocks=6, scheduling_policy="fcfs")
    p, f = prio.requests, fcfs.requests
    assert p["first_token_s"][2] < p["first_token_s"][1]
    assert f["first_token_s"][1] < f["first_token_s"][2]
    assert prio.events.num_rows == 0 and fcfs.events.num_rows == 0
    assert_drained(prio, reqs)
    assert_drained(fcfs, reqs)


# --------------------------------------------------------------------------------------------
# Swap


def test_swap_moves_the_victims_blocks_to_cpu_and_back():
    """PREEMPT_CASE with swap: B (44 tokens, 3 blocks of 8 MiB) is copied out in row 5,
    waits in `swapped` while C waits in `waiting`, and is copied back (3 blocks) after A
    finished; the swap-in step resumes decoding: no prefill. Nothing is recomputed."""
    r = run(PREEMPT_CASE, num_gpu_blocks=7, preemption_mode="swap")
    tl, rq, ev, pz = r.timeline, r.requests, r.events, r.pauses
    block_bytes = r.config["block_bytes"]
    assert block_bytes == kvsim.kv_bytes_per_token(MODEL) * BS == 8 * 2**20
    assert (int(ev["request"][0]), int(ev["mode"][0])) == (1, 1)
    assert pz["mode"].tolist() == [1]
    assert rq["swaps"].tolist() == [0, 1, 0] and rq["preemptions"].tolist() == [0, 1, 0]
    assert rq["recomputed_tokens"].tolist() == [0, 0, 0]
    i = row_at(r, ev["t_s"][0]) + 1
    assert i == 5
    victim_blocks = -(-(40 + 5 - 1) // BS)                 # 3 blocks
    assert tl["swap_out_bytes"][i] == victim_blocks * block_bytes
    assert tl["swap_out_bytes"].sum() == tl["swap_in_bytes"].sum() == victim_blocks * block_bytes
    assert r.summary()["swapped_out_bytes"] == victim_blocks * block_bytes
    assert tl["swapped"][i] == 1 and tl["waiting"][i] == 1
    # The swap-in step resumes decoding: no prefill, one decode token for B.
    j = row_at(r, pz["end_s"][0])
    assert tl["t_s"][j - 1] == rq["finish_s"][0]
    assert tl["swap_in_bytes"][j] == victim_blocks * block_bytes
    assert tl["prefill_tokens"][j] == 0 and tl["swapped"][j] == 0
    assert tl["decode_tokens"][j] == 1 and tl["kv_blocks_used"][j] == 3   # 45 tokens
    assert_drained(r, PREEMPT_CASE)


def test_swapped_requests_resume_before_waiting_ones():
    """B is swapped out (3 blocks); A keeps 5 of the 7 blocks, so B cannot come back
    until A finishes. C (1 block) arrived before the swap-out and fits in the 2 free
    blocks all along, yet waits: waiting requests are admitted only when nothing is
    swapped out, and B comes back first."""
    reqs = [R(0.0, 60, 20), R(0.0, 40, 20), R(0.005, 16, 5)]
    r = run(reqs, num_gpu_blocks=7, preemption_mode="swap")
    tl, rq = r.timeline, r.requests
    assert (int(r.events["request"][0]), int(r.events["mode"][0])) == (1, 1)
    out = row_at(r, r.events["t_s"][0]) + 1
    back = row_at(r, r.pauses["end_s"][0])
    assert tl["swap_in_bytes"][back] > 0
    between = slice(out, back)
    assert back - out > 10
    assert (tl["swapped"][between] == 1).all() and (tl["waiting"][between] == 1).all()
    assert (tl["kv_blocks_used"][between] <= 7 - 2).all()     # C's block was free
    assert rq["first_token_s"][2] >= tl["t_s"][back]
    assert_drained(r, reqs)
    # Control: with a roomy pool, C starts at once.
    roomy = run(reqs, num_gpu_blocks=20, preemption_mode="swap")
    assert roomy.requests["first_token_s"][2] < roomy.requests["finish_s"][0]


def test_a_full_swap_space_aborts_as_vllm_v0_does():
    """The victim has 3 blocks, the swap space 2: vLLM V0 aborts ('Aborted due to the lack
    of CPU swap space'); kvsim raises a one-line KvsimError naming the request, the
    blocks, V0's behaviour and the two ways out."""
    block_bytes = kvsim.kv_bytes_per_token(MODEL) * BS
    with pytest.raises(kvsim.KvsimError) as e:
        run(PREEMPT_CASE, num_gpu_blocks=7, preemption_mode="swap",
            swap_space_bytes=2 * block_bytes)
    msg = str(e.value)
    assert "\n" not in msg
    assert "request 1" in msg and "3 blocks" in msg and "0 of 2 blocks" in msg
    assert "vLLM V0 aborts" in msg
    assert "swap_space_bytes" in msg and "swap_space_full='recompute'" in msg
    assert kvsim.ENGINE_DEFAULTS["swap_space_full"] == "abort"


def test_swap_space_full_recompute_falls_back_to_recompute():
    """swap_space_full="recompute" (kvsim's named fallback): the same victim is recomputed
    (44 tokens) instead; with exactly 3 blocks of swap space it is swapped."""
    block_bytes = kvsim.kv_bytes_per_token(MODEL) * BS
    r = run(PREEMPT_CASE, num_gpu_blocks=7, preemption_mode="swap",
            swap_space_bytes=2 * block_bytes, swap_space_full="recompute")
    assert r.config["swap_space_blocks"] == 2
    assert r.events["mode"].tolist() == [0]
    assert r.pauses["mode"].tolist() == [0]
    assert r.requests["swaps"].tolist() == [0, 0, 0]
    assert r.requests["recomputed_tokens"][1] == 44
    assert r.summary()["swapped_out_bytes"] == 0
    assert not r.timeline["swap_out_bytes"].any()
    assert_drained(r, PREEMPT_CASE)
    # Exactly enough room: swapped, with either setting.
    for full in ("abort", "recompute"):
        r3 = run(PREEMPT_CASE, num_gpu_blocks=7, preemption_mode="swap",
                 swap_space_bytes=3 * block_bytes, swap_space_full=full)
        assert r3.events["mode"].tolist() == [1]


def test_swap_with_the_prefix_cache_is_an_error():
    with pytest.raises(kvsim.KvsimError, match="enable_prefix_caching=False") as e:
        run(PREEMPT_CASE, num_gpu_blocks=7, preemption_mode="swap", enable_prefix_caching=True)
    assert "\n" not in str(e.value)


def test_a_victim_in_the_middle_of_its_prefill_is_recomputed_even_in_swap_mode():
    """Only decoding requests are swapped. With an 8-token budget, A (14-token prompt,
    1 block) prefills over steps 1-2 and B (40 tokens, 3 blocks at admission, filling the
    4-block pool) gets chunks of 2, 7 and 7 tokens in steps 2-4 (V0: A's decode first).
    In step 5 A feeds position 16 and needs a block: B, mid-prefill, is recomputed (mode
    0) and its 16 computed tokens count as recomputed; it had delivered nothing, so there
    is no pause."""
    reqs = [R(0.0, 14, 40), R(0.0, 40, 5)]
    r = run(reqs, num_gpu_blocks=4, preemption_mode="swap", max_num_batched_tokens=8,
            max_num_seqs=2)
    assert r.timeline["prefill_tokens"][:4].tolist() == [8, 8, 7, 7]
    assert r.timeline["kv_blocks_used"][:2].tolist() == [1, 4]
    assert r.events["request"].tolist() == [1] and r.events["mode"].tolist() == [0]
    assert r.events["t_s"][0] == r.timeline["t_s"][3]
    assert r.requests["swaps"][1] == 0
    assert r.requests["recomputed_tokens"][1] == 2 + 7 + 7
    assert r.requests["first_token_s"][1] > r.events["t_s"][0]
    assert r.pauses.num_rows == 0
    assert_drained(r, reqs)


def test_swap_steps_block_for_the_copies_exactly_as_the_cost_model_says():
    """Seed 001 ("When to Swap vs Recompute"): swap copies block the step. The swap-out
    step (row 5) decodes A alone (prompt 60 + G 5: it attends to 65 tokens) and copies
    B's 3 blocks: dt = step_s(1 token, 1 sequence, context 65) + 3 x 8 MiB over PCIe +
    3 x 32 layers x 2 (K, V) copies x swap_copy_overhead_s. The recompute run's step is
    the bare decode step. The swap-in step decodes B alone (context 40 + 5) plus the
    same copies back."""
    rec = run(PREEMPT_CASE, num_gpu_blocks=7, preemption_mode="recompute")
    swp = run(PREEMPT_CASE, num_gpu_blocks=7, preemption_mode="swap")
    i = row_at(swp, swp.events["t_s"][0]) + 1
    assert row_at(rec, rec.events["t_s"][0]) + 1 == i == 5
    cost = step_cost(swp)
    assert swp.config["engine"] == "v0"
    model, gpu = kvsim.get_model(MODEL), kvsim.get_gpu(GPU)
    decode = cost.step_s(1, 1, 60 + 5)
    assert decode == cost.fixed_s(1, 1) + cost.decode_s_per_token * 65
    assert rec.timeline["dt_s"][i] == pytest.approx(decode, rel=1e-12)
    block_bytes = model.kv_bytes_per_token() * BS
    copies = 3 * model.kv_layers * 2
    per_copy_s = kvsim.CostModel().swap_copy_overhead_s
    swap_s = 3 * block_bytes / gpu.pcie_bytes_per_s + copies * per_copy_s
    assert swap_s == pytest.approx(swap_time_s(3 * BS, model.kv_bytes_per_token(),
                                               gpu.pcie_bytes_per_s, block_size=BS,
                                               kv_layers=model.kv_layers,
                                               copy_overhead_s=per_copy_s), rel=1e-12)
    assert swp.timeline["dt_s"][i] == pytest.approx(decode + swap_s, rel=1e-12)
    assert swp.timeline["dt_s"][i] == pytest.approx(
        cost.step_s(1, 1, 65, swap_bytes=3 * block_bytes, swap_copies=copies), rel=1e-12)
    assert swp.timeline["dt_s"][i] > rec.timeline["dt_s"][i]
    # The swap-in step: B decodes one token at context 40 + 5, plus the copies back.
    j = row_at(swp, swp.pauses["end_s"][0])
    assert swp.timeline["dt_s"][j] == pytest.approx(cost.step_s(1, 1, 45) + swap_s, rel=1e-12)
    # Smaller blocks, more copies: the same KV (44 tokens in 6 blocks of 8 instead of 3
    # of 16: 48 tokens either way) takes longer with block_size=8.
    slow = run(PREEMPT_CASE, num_gpu_blocks=14, block_size=8, preemption_mode="swap")
    k = row_at(slow, slow.events["t_s"][0]) + 1
    assert k == i
    assert slow.timeline["swap_out_bytes"][k] == 6 * model.kv_bytes_per_token() * 8
    assert slow.timeline["dt_s"][k] == pytest.approx(
        cost.step_s(1, 1, 65, swap_bytes=6 * 8 * model.kv_bytes_per_token(),
                    swap_copies=6 * model.kv_layers * 2), rel=1e-12)
    assert slow.timeline["dt_s"][k] > swp.timeline["dt_s"][i]


def test_a_prefill_step_costs_what_the_cost_model_says():
    """One 1,000-token prefill: 1,000 tokens of one sequence, 1,000 x 1,001 / 2 causal
    attention pairs, 1,000 KV tokens read; then one decode step at context 1,001. A
    chunked prefill's later chunk attends to the KV before it: 256 new tokens after 256
    give 256 x 256 + 256 x 257 / 2 pairs and read 512 KV tokens."""
    r = run([R(0.0, 1000, 2)], num_gpu_blocks=100)
    cost = step_cost(r)
    assert attention_pairs(0, 1000) == 1000 * 1001 // 2
    assert r.timeline["dt_s"][0] == pytest.approx(
        cost.step_s(1000, 1, 0, attention_pairs(0, 1000), 1000), rel=1e-12)
    assert r.timeline["dt_s"][0] == pytest.approx(cost.prefill_s(1000), rel=1e-12)
    assert r.timeline["dt_s"][1] == pytest.approx(cost.step_s(1, 1, 1001), rel=1e-12)
    c = run([R(0.0, 1000, 2)], num_gpu_blocks=100, max_num_batched_tokens=256)
    assert attention_pairs(256, 256) == 256 * 256 + 256 * 257 // 2
    assert c.timeline["dt_s"][1] == pytest.approx(
        cost.step_s(256, 1, 0, attention_pairs(256, 256), 512), rel=1e-12)


# --------------------------------------------------------------------------------------------
# Guaranteed and SGLang-style admission


def test_guaranteed_admission_never_preempts_and_admits_less_than_half_as_many():
    """Seed 000 ("KV Cache Preemption in vLLM"): with max_tokens=1500 and 850-token
    prompts, guaranteed admission reserves 850 + 1500 = 2,350 tokens (147 blocks) per
    request while V0's optimistic admission takes the prompt's 54 blocks. On a
    2,000-block pool a burst of 40 requests runs 13 at a time under guaranteed
    admission, 37 under optimistic admission, which pays with preemptions."""
    burst = [R(0.0, 850, 250) for _ in range(40)]
    opts = dict(num_gpu_blocks=2000, max_tokens=1500)
    g = run(burst, admission="guaranteed", **opts)
    o = run(burst, admission="optimistic", **opts)
    assert g.events.num_rows == 0 and not g.timeline["preemptions"].any()
    assert o.events.num_rows > 0
    assert g.timeline["running"].max() == 2000 // -(-(850 + 1500) // BS) == 13
    assert o.timeline["running"].max() == 2000 // -(-850 // BS) == 37
    assert 2 * g.timeline["running"].max() < o.timeline["running"].max()
    assert_drained(g, burst)
    assert_drained(o, burst)


def test_guaranteed_admission_reserves_each_true_length_without_max_tokens():
    """Without max_tokens each request reserves its own answer: 850 + 250 = 1,100 tokens
    (69 blocks), so 28 run at once on 2,000 blocks, still without preemption."""
    burst = [R(0.0, 850, 250) for _ in range(40)]
    g = run(burst, admission="guaranteed", num_gpu_blocks=2000)
    assert g.events.num_rows == 0
    assert g.timeline["running"].max() == 2000 // -(-1100 // BS) == 28


def test_guaranteed_admission_rejects_a_request_whose_reservation_can_never_fit():
    """850 + max_tokens 1,500 tokens = 147 blocks, more than the pool's 100: refused (3)."""
    reqs = [R(0.0, 16, 4), R(0.0, 850, 250)]
    r = run(reqs, admission="guaranteed", num_gpu_blocks=100, max_tokens=1500)
    assert r.requests["rejected"].tolist() == [0, 3]
    with pytest.raises(kvsim.KvsimError, match=r"request 1 .*guaranteed"):
        run(reqs, admission="guaranteed", num_gpu_blocks=100, max_tokens=1500,
            unfit_requests="error")


def test_sglang_a_refused_request_waits_for_a_finish_whatever_the_decay():
    """A (160 + 1,000 tokens) runs alone on 100 blocks. B arrives and reserves its prompt
    and its whole answer (160 + 1,000) next to 0.7 x A's remaining answer: refused. The
    ratio then decays (not at all, by default 0.602 / 600 per step, or fast), but SGLang's
    ``batch_is_full`` admits nothing more until a request finishes: B starts when A
    ends, whatever the decay. (kvsim before issue 20 retried every step and let B in as
    the ratio fell; the scenarios of each rule are in ``test_sglang.py``.)"""
    reqs = [R(0.0, 160, 1000), R(0.1, 160, 1000)]
    runs = {d: run(reqs, num_gpu_blocks=100, admission="sglang", new_token_ratio_decay=d)
            for d in (0.0, None, 0.01)}
    for r in runs.values():
        assert r.requests["first_scheduled_s"][1] == r.requests["finish_s"][0]
        assert r.events.num_rows == 0
        assert_drained(r, reqs)


def test_sglang_admission_is_more_conservative_than_optimistic():
    """With the default new_token_ratio 0.7, SGLang reserves 70 % of the remaining answers
    of the running batch and the newcomer's answer: fewer run at once on the same pool."""
    burst = [R(0.0, 850, 250) for _ in range(40)]
    s = run(burst, num_gpu_blocks=2000, admission="sglang")
    o = run(burst, num_gpu_blocks=2000)
    assert s.timeline["running"].max() < o.timeline["running"].max()
    assert s.events.num_rows < o.events.num_rows
    assert_drained(s, burst)


def _sglang_policy(max_tokens, free_blocks):
    """An SGLangAdmission bound to a stand-in engine: request 0 runs (planned answer
    ``max_tokens`` or its true 10 tokens, none generated yet), request 1 is the candidate;
    a 20-block pool with ``free_blocks`` free."""
    from kvsim.engine.blocks import KVCacheManager
    from kvsim.engine.policies import SGLangAdmission

    kv = KVCacheManager(20, BS, prefix_caching=False)
    kv.pool.take(20 - free_blocks)
    eng = SimpleNamespace(cfg=SimpleNamespace(max_tokens=max_tokens, scheduling_policy="fcfs"),
                          requests=SimpleNamespace(output=[10, 10], target=[16, 16]),
                          running={0: None}, prefilling={}, kv=kv, generated_now=lambda rid: 0)
    pol = SGLangAdmission(eng, init_new_token_ratio=1.0, min_new_token_ratio=1.0)
    pol.begin_admission([])
    return pol


@pytest.mark.pure_engine
def test_sglang_plans_on_max_tokens_for_running_and_new_requests_alike():
    """SGLang's reserve uses max_new_tokens (the engine's max_tokens) for the running
    requests as for the candidate, not the running requests' true (shorter) answers.
    Ratio 1: the candidate needs 1 block (16 tokens) + 100 planned, fewer than the free
    tokens less the running request's 100 - 0 planned: 14 free blocks (224 - 100 > 116;
    13 give 208 - 100 < 116). Without max_tokens the true answers count: 16 + 10 < 48 - 10
    with 3 blocks, not with 2."""
    from kvsim.engine.blocks import Hit

    no_hit = Hit(())
    assert not _sglang_policy(100, 13).admits(1, 1, no_hit, 0)
    assert _sglang_policy(100, 14).admits(1, 1, no_hit, 0)
    assert not _sglang_policy(None, 2).admits(1, 1, no_hit, 0)
    assert _sglang_policy(None, 3).admits(1, 1, no_hit, 0)


# --------------------------------------------------------------------------------------------
# Drained runs, max_tokens, requests that can never fit


DRAIN_CASE = PREEMPT_CASE + [R(0.3, 30, 40, 1), R(0.31, 10, 60, 2)]


@pytest.mark.parametrize("opts", [
    dict(num_gpu_blocks=7),
    dict(num_gpu_blocks=7, preemption_mode="swap"),
    dict(num_gpu_blocks=7, scheduling_policy="priority"),
    dict(num_gpu_blocks=7, admission="sglang"),
    dict(num_gpu_blocks=12, admission="guaranteed"),
    dict(num_gpu_blocks=7, max_num_batched_tokens=8, max_num_seqs=2),
    dict(num_gpu_blocks=14, block_size=8, preemption_mode="swap", watermark=0.1),
    dict(num_gpu_blocks=7, enable_prefix_caching=True),
])
def test_every_drained_run_ends_empty_with_every_answer_complete(opts):
    r = run(DRAIN_CASE, **opts)
    assert_drained(r, DRAIN_CASE)
    assert tuple(r.summary()) == SUMMARY_KEYS
    assert r.summary()["requests_finished"] == len(DRAIN_CASE)
    assert r.summary()["engine"] == "v0"


def test_max_tokens_caps_every_answer():
    reqs = [R(0.0, 100, 500), R(0.1, 100, 20), R(0.2, 100, 64)]
    r = run(reqs, num_gpu_blocks=100, max_tokens=64)
    assert r.requests["output_tokens"].tolist() == [64, 20, 64]
    assert r.requests["generated_tokens"].tolist() == [64, 20, 64]
    assert int(r.timeline["emitted_tokens"].sum()) == 64 + 20 + 64
    assert_drained(r, reqs)


def test_with_unfit_requests_error_a_request_that_can_never_fit_is_named_with_the_pool():
    """Request 2 needs 100 + 20 - 1 = 119 tokens (8 blocks) when it resumes at its last
    token; the pool has 6 blocks (96 tokens)."""
    reqs = [R(0.0, 32, 10), R(0.1, 64, 10), R(0.2, 100, 20)]
    with pytest.raises(kvsim.KvsimError) as e:
        run(reqs, num_gpu_blocks=6, unfit_requests="error")
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("request 2 (prompt 100 + output 20 tokens)")
    assert "8 blocks" in msg and "6 blocks" in msg and "96 tokens" in msg
    # Without it the others run; with 8 blocks it runs too.
    r = run(reqs[:2], num_gpu_blocks=6)
    assert_drained(r, reqs[:2])
    r = run(reqs, num_gpu_blocks=8)
    assert_drained(r, reqs)


def _closed_loop_with_a_misfit():
    """A closed loop whose request number 1 (the second issued, at t = 0) needs 7 blocks."""
    wl = kvsim.Workload.closed_loop(users=2, duration_s=5.0, prompt=kvsim.Uniform(10, 200),
                                    output=20, seed=3)
    p, o = wl.lengths_for(50)
    k = int(np.flatnonzero(p + o - 1 > 6 * BS)[0])
    assert (k, int(p[k])) == (1, 87)
    return wl, k, int(p[k])


def test_a_closed_loop_request_that_can_never_fit_is_an_error_naming_its_sizes():
    wl, k, prompt = _closed_loop_with_a_misfit()
    with pytest.raises(kvsim.KvsimError,
                       match=rf"\(prompt {prompt} \+ output 20 tokens\) can never fit the KV pool: "
                             r"it needs up to 7 blocks of 16 tokens but the pool has 6 blocks"):
        run(wl, num_gpu_blocks=6, unfit_requests="error")


def test_a_closed_loop_request_that_can_never_fit_is_named_by_its_issue_index():
    wl, k, prompt = _closed_loop_with_a_misfit()
    with pytest.raises(kvsim.KvsimError, match=rf"^request {k} \(prompt {prompt} "):
        run(wl, num_gpu_blocks=6, unfit_requests="error")


def test_unknown_options_and_bad_engines_are_one_line_errors():
    for opts, pattern in ((dict(engine="v2"), "engine"), (dict(watermark_blocks=3), "not known"),
                          (dict(swap_space_full="retry"), "swap_space_full")):
        with pytest.raises(kvsim.KvsimError, match=pattern) as e:
            run([R(0.0, 16, 4)], num_gpu_blocks=10, **opts)
        assert "\n" not in str(e.value)


# --------------------------------------------------------------------------------------------
# until_s and warmup_s


def test_until_s_stops_the_run_after_the_step_that_crosses_it():
    wl = kvsim.Workload.poisson(rate_per_s=4.0, duration_s=20.0, prompt=200, output=100, seed=1)
    r = run(wl, num_gpu_blocks=60, until_s=5.0)
    tl, rq = r.timeline, r.requests
    end = r.summary()["simulated_s"]
    assert end == tl["t_s"][-1] >= 5.0
    assert tl["t_s"][-2] < 5.0                  # the step before ended before until_s
    assert rq["arrival_s"].max() < 5.0
    unfinished = np.isnan(rq["finish_s"])
    assert unfinished.any()
    assert (rq["generated_tokens"][unfinished] < rq["output_tokens"][unfinished]).all()
    assert not np.isnan(rq["finish_s"][~unfinished]).any()
    assert (rq["finish_s"][~unfinished] <= end).all()
    full = run(wl, num_gpu_blocks=60)
    # Up to the stop, the stopped run is the full run.
    n = tl.num_rows
    assert np.array_equal(tl["t_s"], full.timeline["t_s"][:n])
    assert np.array_equal(tl["kv_blocks_used"], full.timeline["kv_blocks_used"][:n])


def test_until_s_before_the_first_arrival_simulates_nothing():
    r = run([R(1.0, 16, 4)], num_gpu_blocks=10, until_s=0.5)
    assert r.requests.num_rows == 0 and r.timeline.num_rows == 0


def test_summary_of_a_run_without_steps_has_no_nan():
    """No request, or none before until_s: a zero-length window gives rates of 0, not NaN."""
    for r in (run([], num_gpu_blocks=10), run([R(1.0, 16, 4)], num_gpu_blocks=10, until_s=0.5)):
        s = r.summary()
        assert not any(isinstance(v, float) and math.isnan(v) for v in s.values()), s
        assert 0.0 <= s["kv_usage_mean"] <= 1.0


def test_warmup_s_leaves_early_requests_out_of_the_summary():
    wl = kvsim.Workload.poisson(rate_per_s=3.0, duration_s=10.0, prompt=200, output=60, seed=2)
    r = run(wl, num_gpu_blocks=200)
    s0, s4 = r.summary(), r.summary(warmup_s=4.0)
    arr = r.requests["arrival_s"]
    assert s0["requests_arrived"] == len(arr)
    assert s4["requests_arrived"] == int((arr >= 4.0).sum()) < len(arr)
    assert s4["simulated_s"] == s0["simulated_s"]
    # The option sets the default window of summary().
    rw = run(wl, num_gpu_blocks=200, warmup_s=4.0)
    assert rw.summary() == s4
    assert rw.requests.num_rows == r.requests.num_rows     # the tables are unchanged


# --------------------------------------------------------------------------------------------
# Closed loop


def test_closed_loop_never_has_more_than_users_in_the_system():
    wl = kvsim.Workload.closed_loop(users=6, duration_s=20.0, prompt=kvsim.Uniform(50, 400),
                                    output=kvsim.Uniform(20, 200), think_s=0.2, seed=4)
    r = run(wl, num_gpu_blocks=60)                  # tight: preemptions happen
    tl, rq = r.timeline, r.requests
    in_system = tl["running"] + tl["waiting"] + tl["swapped"]
    assert in_system.max() == 6 and (in_system <= 6).all()
    assert r.events.num_rows > 0
    for k in range(rq.num_rows):
        assert (int(rq["prompt_tokens"][k]), int(rq["output_tokens"][k])) == wl.next_lengths(k)
    assert_drained(r)
    assert (rq["arrival_s"] < 20.0).all()


def test_closed_loop_users_start_spread_over_ramp_s():
    wl = kvsim.Workload.closed_loop(users=4, duration_s=2.0, prompt=100, output=40, ramp_s=1.0)
    r = run(wl, num_gpu_blocks=200)
    first_four = np.sort(r.requests["arrival_s"])[:4]
    assert first_four.tolist() == [0.0, 0.25, 0.5, 0.75]


def test_closed_loop_user_sends_the_next_request_think_s_after_the_last_finished():
    wl = kvsim.Workload.closed_loop(users=1, duration_s=3.0, prompt=100, output=30,
                                    think_s=0.5)
    r = run(wl, num_gpu_blocks=50)
    rq = r.requests
    assert rq.num_rows >= 2
    assert np.allclose(rq["arrival_s"][1:], rq["finish_s"][:-1] + 0.5)
    assert rq["arrival_s"][-1] < 3.0 <= rq["finish_s"][-1] + 0.5


def test_closed_loop_with_max_tokens_caps_the_issued_lengths():
    wl = kvsim.Workload.closed_loop(users=3, duration_s=5.0, prompt=100,
                                    output=kvsim.Uniform(10, 300), seed=5)
    r = run(wl, num_gpu_blocks=200, max_tokens=50)
    rq = r.requests
    for k in range(rq.num_rows):
        p, o = wl.next_lengths(k)
        assert (int(rq["prompt_tokens"][k]), int(rq["output_tokens"][k])) == (p, min(o, 50))
    assert_drained(r)


# --------------------------------------------------------------------------------------------
# Regressions: engine bugs found by these tests, kept so they stay fixed.


def test_a_victim_preempted_again_while_re_prefilling_closes_its_pause():
    reqs = [R(0.0, 40, 40), R(0.05, 9, 20), R(0.05, 30, 23)]
    r = run(reqs, num_gpu_blocks=7, max_num_batched_tokens=8, max_num_seqs=3)
    assert r.requests["preemptions"][2] == 2
    assert_drained(r, reqs)
    pz = r.pauses
    assert not np.isnan(pz["end_s"]).any(), pz["end_s"]
    # The pauses of one request do not overlap, and add up to its paused_s.
    mine = pz["request"] == 2
    assert pz["end_s"][mine].sum() - pz["start_s"][mine].sum() == \
        pytest.approx(r.requests["paused_s"][2])


def test_until_s_keeps_every_request_that_arrived_before_the_stop():
    """One block of one token: the three 1-token requests run one per step, each step
    lasting dt = step_s(1, 1, pairs 1, KV 1). The third arrives at 1.5 dt, during step
    2; until_s = 1.8 dt stops the run after step 2 (it ends at 2 dt), with that request
    waiting: it belongs to the requests table."""
    probe = run([R(0.0, 1, 1)], num_gpu_blocks=1, block_size=1)
    dt = step_cost(probe).step_s(1, 1, 0, attention_pairs(0, 1), 1)
    assert probe.timeline["dt_s"][0] == pytest.approx(dt, rel=1e-12)
    reqs = [R(0.0, 1, 1), R(0.0, 1, 1), R(1.5 * dt, 1, 1)]
    r = run(reqs, num_gpu_blocks=1, block_size=1, until_s=1.8 * dt)
    assert r.timeline.num_rows == 2
    assert r.summary()["simulated_s"] == pytest.approx(2 * dt, rel=1e-12)
    assert r.timeline["waiting"].tolist() == [1, 1]   # request 1, then the one of 1.5 dt
    assert r.requests.num_rows == 3             # ... so it belongs to the requests table
    assert r.summary()["requests_arrived"] == 3
    assert np.isnan(r.requests["first_token_s"][2])


def test_repr_of_a_result_never_raises():
    r = run([R(0.0, 16, 4)], num_gpu_blocks=10, warmup_s=100.0)
    assert "SimResult" in repr(r)
