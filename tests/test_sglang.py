"""SGLang's scheduler as its source does it (``admission="sglang"``; issue 20).

One hand-derived scenario per rule of ``book/engine-reference.md`` (SGLang
section), each on a pool of a few dozen blocks, and each failing under kvsim's
earlier rules (ratio x the candidate's answer, the ratio reset to 0.7 after a
retraction, no ``batch_is_full``, victims to the front, every full block kept,
minimum 0.1). Sources: sgl-project/sglang ``schedule_policy.py`` @ad0119fd,
``schedule_batch.py`` @fd3907ee, ``scheduler.py`` @0003215c, ``environ.py``
@21ff4b08.

Conventions as in ``test_engine_semantics.py``: llama-2-7b on the L40S,
``engine="v0"`` (the blocks of a whole prefill at admission), 16-token blocks, no
watermark, no prefix cache unless a test says so. A running request with prompt
``P`` and ``G`` generated tokens holds ``ceil((P + G - 1) / 16)`` blocks.

Translated from SGLang's own tests (test/srt/test_schedule_policy.py @00ae1bd3):
``test_calc_priority_fcfs`` (FCFS keeps the arrival order) below. Not expressible:
``test_init_with_cache_aware_policy``, ``..._cache_agnostic_policy`` and
``..._disabled_cache`` (kvsim has no longest-prefix-match or DFS-weight queue order,
only FCFS and priority), ``test_init_with_unknown_policy`` (kvsim's counterpart, an
unknown ``admission``, is in ``test_engine_validation.py``).
"""
from __future__ import annotations

import pytest

import kvsim
from kvsim.engine.loop import build_engine
from kvsim.engine.options import SGLANG_RETRACT_DECODE_STEPS
from kvsim.traffic.workload import Workload

from engine_helpers import assert_drained

R = kvsim.Request
MODEL, GPU, BS = "llama-2-7b", "l40s-48gb", 16
FREE = dict(init_new_token_ratio=0.0, min_new_token_ratio=0.0)  # running requests reserve nothing


def run(requests, **opts):
    opts.setdefault("engine", "v0")
    opts.setdefault("block_size", BS)
    opts.setdefault("watermark", 0.0)
    opts.setdefault("enable_prefix_caching", False)
    opts.setdefault("admission", "sglang")
    return kvsim.simulate(requests, model=MODEL, gpu=GPU, **opts)


def steps(requests, **opts):
    """Run step by step; yields the policy and the snapshot after each step."""
    for k, v in dict(engine="v0", block_size=BS, watermark=0.0, enable_prefix_caching=False,
                     admission="sglang", step_by_step=True).items():
        opts.setdefault(k, v)
    eng = build_engine(Workload.from_requests(requests), MODEL, GPU, opts)
    seen = []
    eng.run(after_step=lambda e: seen.append((e.scheduler.policy.ratio, e.snapshot())))
    return seen


def test_the_candidate_reserves_its_whole_remaining_answer():
    """A (480 + 400) runs alone on 100 blocks; B (160 + 900) arrives at 0.05 s. With A
    holding 31 blocks, 69 x 16 = 1,104 tokens are free; A reserves 0.7 x ~398 = ~279, so
    1,104 - 279 = ~825 are left, fewer than B's 160 + 900 = 1,060: B waits for A. (The
    old rule charged B 160 + 0.7 x 900 = 790 and admitted it at once.)"""
    reqs = [R(0.0, 480, 400), R(0.05, 160, 900)]
    r = run(reqs, num_gpu_blocks=100)
    assert r.requests["first_scheduled_s"][1] == r.requests["finish_s"][0]
    assert r.events.num_rows == 0
    assert_drained(r, reqs)


def test_requests_admitted_in_the_same_round_are_charged_in_full():
    """Three 160 + 400 requests reach an idle 100-block pool together. The first takes 10
    blocks; the second needs 560 < 1,440 - 400 (the first's answer, in full); the third
    needs 560 >= 1,280 - 800: only two start. (At the ratio, 0.7 x 800 = 560, the third
    also got in and was retracted later.)"""
    reqs = [R(0.0, 160, 400) for _ in range(3)]
    r = run(reqs, num_gpu_blocks=100)
    assert r.timeline["running"][0] == 2
    assert r.requests["first_scheduled_s"][2] == r.requests["finish_s"][0]
    assert r.events.num_rows == 0
    assert_drained(r, reqs)


def test_a_refusal_blocks_admission_until_a_request_finishes():
    """A (160 + 1,000) runs; B (160 + 700) arrives at 0.1 s and is refused: 860 tokens
    against ~1,424 - 0.7 x ~997 = ~726. The ratio then decays fast (0.01 a step) to
    0.098, at which B's 860 would fit (~1,360 - 0.098 x ~940 = ~1,268), but
    ``batch_is_full`` keeps it out until A finishes. Arriving at 2 s instead (the ratio
    already at its minimum, no refusal before) B starts at once."""
    reqs = [R(0.0, 160, 1000), R(0.1, 160, 700)]
    r = run(reqs, num_gpu_blocks=100, new_token_ratio_decay=0.01)
    assert r.requests["first_scheduled_s"][1] == r.requests["finish_s"][0]
    late = [R(0.0, 160, 1000), R(2.0, 160, 700)]
    r2 = run(late, num_gpu_blocks=100, new_token_ratio_decay=0.01)
    assert r2.requests["first_scheduled_s"][1] < 2.1
    assert_drained(r, reqs)


def test_the_ratio_after_a_retraction_is_a_fresh_estimate_from_the_survivors():
    """Ratio 0 (running requests reserve nothing): A (32 + 1,000) and B (32 + 700) outgrow
    the 80-block pool after ~600 tokens each and B (fewer tokens) is retracted. The new
    ratio is ``min(1, (G_A + 20) / (1,000 + 1))`` from the survivor A, about 0.6: not a
    reset to the initial value (0 here); it stays there (the decay, (init - min) / 600, is 0)."""
    seen = steps([R(0.0, 32, 1000), R(0.1, 32, 700)], num_gpu_blocks=80, **FREE)
    k = next(i for i, (_r, s) in enumerate(seen) if s.preempted)
    ratio, snap = seen[k]
    assert [rid for rid, _mode in snap.preempted] == [1]
    g_a = snap.requests[0].generated - 1             # A's tokens when it was retracted from
    assert ratio == pytest.approx((g_a + SGLANG_RETRACT_DECODE_STEPS) / 1001)
    assert 0.5 < ratio < 0.7
    assert seen[k + 1][0] == ratio


def test_the_ratio_after_a_retraction_is_capped_at_one():
    """Ratio 0: A and B (32 + 140 each) outgrow 20 blocks when A has ~130 tokens: the
    estimate (130 + 20) / 141 is capped at 1, above the initial value."""
    seen = steps([R(0.0, 32, 140), R(0.1, 32, 140)], num_gpu_blocks=20, **FREE)
    ratios = [r for r, s in seen if s.preempted]
    assert ratios == [1.0]


def test_the_ratio_resets_to_its_initial_value_when_the_server_idles():
    """A first request decays the ratio to 0.098 and finishes; the server idles. Then C
    (160 + 1,000) and D (160 + 700, 0.1 s later) arrive as in the ``batch_is_full``
    test: at the reset ratio 0.7 D is refused and waits for C. Had the ratio kept its
    decayed 0.098, D (860 < ~1,424 - 0.098 x ~997) would have started at once."""
    reqs = [R(0.0, 16, 100), R(20.0, 160, 1000), R(20.1, 160, 700)]
    r = run(reqs, num_gpu_blocks=100, new_token_ratio_decay=0.01)
    assert r.requests["finish_s"][0] < 20.0
    assert r.requests["first_scheduled_s"][2] == r.requests["finish_s"][1]
    assert_drained(r, reqs)


def test_a_retracted_request_goes_to_the_back_of_the_waiting_queue():
    """Ratio 0: A and B (32 + 140) run on 20 blocks; C (16 + 300) arrives and is refused
    (316 tokens never fit next to them). When B is retracted it queues *behind* C."""
    seen = steps([R(0.0, 32, 140), R(0.1, 32, 140), R(0.2, 16, 300)], num_gpu_blocks=20,
                 **FREE)
    snap = next(s for _r, s in seen if s.preempted)
    assert snap.waiting == (2, 1)


def test_a_retracted_request_keeps_only_its_prompt_cached():
    """V1 with the prefix cache, ratio 0: A and B (40 + 140) outgrow 20 blocks and B is
    retracted after ~60 tokens. SGLang frees its generated tokens' KV; its prompt (2 full
    blocks, 32 tokens) stays cached, so the resume finds 32 tokens, not the 128 that
    every full block would give."""
    reqs = [R(0.0, 40, 140), R(0.1, 40, 140)]
    r = run(reqs, num_gpu_blocks=20, engine="v1", enable_prefix_caching=True, **FREE)
    assert r.events["request"].tolist() == [1]
    assert r.requests["rescued_tokens"].tolist() == [0, 32]
    assert_drained(r, reqs)


def test_the_minimum_ratio_is_0_7_times_0_14():
    """``min_new_token_ratio`` defaults to init x 0.14 (SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR):
    0.098, and the ratio settles there (a fast decay gets it there in a few steps)."""
    assert kvsim.simulate([R(0.0, 16, 4)], model=MODEL, gpu=GPU, admission="sglang")\
        .config["min_new_token_ratio"] == pytest.approx(0.098)
    seen = steps([R(0.0, 16, 40)], num_gpu_blocks=20, new_token_ratio_decay=0.1)
    assert seen[-2][0] == pytest.approx(0.098)


def test_sglang_retracts_the_request_with_the_fewest_generated_tokens():
    """B (priority 5, 20 + 60) has generated more than A (priority 0, 40 + 30, admitted
    later) when the 8-block pool runs out: SGLang retracts A whatever its priority; vLLM
    with priority scheduling evicts B (the lowest priority)."""
    reqs = [R(0.0, 20, 60, priority=5), R(0.02, 40, 30, priority=0)]
    sg = run(reqs, num_gpu_blocks=8, scheduling_policy="priority", **FREE)
    vl = run(reqs, num_gpu_blocks=8, scheduling_policy="priority", admission="optimistic")
    assert sg.events["request"].tolist()[0] == 1
    assert vl.events["request"].tolist()[0] == 0
    assert_drained(sg, reqs)


def test_sglang_breaks_ties_by_the_longest_prompt():
    """A (32 + 18) and B (16 + 18) reach an idle 6-block pool together: B's 16 + 18 = 34
    tokens fit beside A's 2 blocks and its 18 answer tokens (96 - 32 - 18 = 46), but the
    answers cross block boundaries (A ends at 49 tokens, 4 blocks; B at 33, 3 blocks):
    7 blocks. With equal tokens generated SGLang retracts A (the longer prompt); vLLM
    evicts B (the last admitted)."""
    reqs = [R(0.0, 32, 18), R(0.0, 16, 18)]
    sg = run(reqs, num_gpu_blocks=6, **FREE)
    vl = run(reqs, num_gpu_blocks=6, admission="optimistic")
    assert sg.timeline["running"][0] == 2
    assert sg.events["request"].tolist() == [0]
    assert vl.events["request"].tolist() == [1]
    assert_drained(sg, reqs)


def test_fcfs_keeps_the_arrival_order():
    """SGLang's ``test_calc_priority_fcfs``: requests 1, 3, 2 (by id order of arrival)
    keep that order; here three requests that wait behind a running one start in
    arrival order."""
    reqs = [R(0.0, 16, 200), R(0.1, 32, 8), R(0.2, 48, 8), R(0.3, 16, 8)]
    r = run(reqs, num_gpu_blocks=14)
    fs = r.requests["first_scheduled_s"].tolist()
    assert fs[1] <= fs[2] <= fs[3]
    assert_drained(r, reqs)
