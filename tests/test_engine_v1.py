"""Scenario tests of the V1 scheduler (``engine="v1"``, the default), after vLLM V1's
``Scheduler.schedule`` (vllm/v1/core/sched/scheduler.py) as ``book/engine-reference.md``
describes it: per-chunk block allocation, the full-prompt admission gate
``scheduler_reserve_full_isl``, recompute-only preemption that the prefix cache can
partly rescue, ``long_prefill_token_threshold``, a watermark only while others run, and
the batch defaults by GPU class. The V0 scenarios are in ``test_engine_semantics.py``,
the prefix cache's hits and evictions in ``test_prefix_cache.py``.

Conventions (llama-2-7b on the L40S, ``block_size=16``, V1's defaults otherwise:
watermark 0, prefix caching on, the full-prompt gate on):

* A running request holds ``ceil(s / 16)`` blocks for its ``s`` stored tokens: during
  prefill the ones computed so far (V1 allocates each chunk's blocks when it is
  scheduled), while decoding ``P + G - 1``.
* Row ``k`` of the timeline is step ``k + 1`` (state after the step).
* When a request is preempted its full blocks stay cached (in LRU order, its tail
  first) and its partly filled block is free at once; new blocks are taken from the
  unhashed free blocks first, then by evicting the least recently freed cached ones.
"""
from __future__ import annotations

import pytest

import kvsim
from kvsim.engine.costs import StepCost, attention_pairs

from engine_helpers import assert_drained, row_at

R = kvsim.Request
MODEL = "llama-2-7b"
GPU = "l40s-48gb"
BS = 16


def run(requests, **opts):
    """Simulate on llama-2-7b / L40S with V1's defaults and block_size=16."""
    opts.setdefault("block_size", BS)
    return kvsim.simulate(requests, model=MODEL, gpu=GPU, **opts)






def test_v1_is_the_default_and_the_summary_names_the_engine():
    reqs = [R(0.0, 16, 4)]
    d, v0 = run(reqs, num_gpu_blocks=10), run(reqs, num_gpu_blocks=10, engine="v0")
    assert d.config["engine"] == "v1" and d.summary()["engine"] == "v1"
    assert v0.config["engine"] == "v0" and v0.summary()["engine"] == "v0"
    # V1's defaults: no watermark, prefix caching on, the full-prompt gate on, recompute.
    c = d.config
    assert (c["watermark"], c["watermark_blocks"], c["enable_prefix_caching"],
            c["scheduler_reserve_full_isl"], c["preemption_mode"]) == (0.0, 0, True, True,
                                                                       "recompute")
    assert (v0.config["watermark"], v0.config["enable_prefix_caching"]) == (0.01, False)


def test_swap_preemption_with_v1_is_a_one_line_error_naming_v0():
    with pytest.raises(kvsim.KvsimError) as e:
        run([R(0.0, 16, 4)], num_gpu_blocks=10, preemption_mode="swap")
    msg = str(e.value)
    assert "\n" not in msg
    assert "preemption_mode='swap'" in msg and "engine='v0'" in msg


# --------------------------------------------------------------------------------------------
# Per-chunk allocation and the full-prompt gate


def test_a_long_prompt_starts_its_first_chunk_while_others_run_holding_only_its_blocks():
    """A (16 tokens) decodes; L (1,000 tokens) arrives at 1 ms, during A's prefill. With
    a 256-token budget, from step 2 on A's decode takes 1 token and L's chunks the other
    255: 255, 255, 255 and 235. V1 allocates each chunk's blocks when it is scheduled, so
    after step 2 L holds ceil(255 / 16) = 16 blocks (A 2: 17 tokens), then 32, 48 and
    ceil(1,000 / 16) = 63; V0 takes all 63 at admission."""
    reqs = [R(0.0, 16, 200), R(0.001, 1000, 5)]
    opts = dict(num_gpu_blocks=100, max_num_batched_tokens=256, max_num_seqs=4)
    r = run(reqs, **opts)
    tl = r.timeline
    assert tl["t_s"][0] > 0.001
    assert tl["prefill_tokens"][:5].tolist() == [16, 255, 255, 255, 235]
    assert tl["decode_tokens"][:5].tolist() == [0, 1, 1, 1, 1]
    assert tl["running"][1] == 2
    assert tl["kv_blocks_used"][:5].tolist() == [1, 2 + 16, 2 + 32, 2 + 48, 2 + 63]
    assert r.requests["first_token_s"][1] == tl["t_s"][4]
    v0 = run(reqs, engine="v0", **opts)
    assert v0.timeline["prefill_tokens"][:5].tolist() == [16, 255, 255, 255, 235]
    assert v0.timeline["kv_blocks_used"][:5].tolist() == [1, 65, 65, 65, 65]


# A (64 tokens, 100 answer tokens) holds 4 blocks after step 1, 5 from step 2 (65
# tokens) until it has 80, and at most ceil(163 / 16) = 11. L (256 tokens, 16 blocks
# for its whole prompt) arrives at 10 ms, during A's prefill; the budget is 64 tokens,
# so L's chunks are at most 63 tokens next to A's decode.
GATE_CASE = [R(0.0, 64, 100), R(0.01, 256, 5)]
GATE_OPTS = dict(num_gpu_blocks=20, max_num_batched_tokens=64, max_num_seqs=4)


def test_the_full_prompt_gate_keeps_a_prompt_that_cannot_fit_waiting():
    """scheduler_reserve_full_isl (V1's default): L is admitted only when the blocks of
    its whole prompt (16) are free; while A runs at most 20 - 5 = 15 are, so L waits,
    without any preemption, and starts right after A finishes."""
    r = run(GATE_CASE, **GATE_OPTS)
    tl, rq = r.timeline, r.requests
    assert tl["t_s"][0] > 0.01
    assert r.events.num_rows == 0
    assert tl["prefill_tokens"][1:10].tolist() == [0] * 9
    assert tl["kv_blocks_used"][1] == 5 and tl["waiting"][1] == 1
    a_end = rq["finish_s"][0]
    assert rq["first_token_s"][1] > a_end
    assert tl["t_s"][row_at(r, rq["first_token_s"][1]) - 4] == a_end   # 4 chunks of 64
    assert_drained(r, GATE_CASE)


def test_without_the_gate_the_same_prompt_thrashes_admitted_filled_preempted_readmitted():
    """scheduler_reserve_full_isl=False (and no prefix cache, so nothing is rescued): L is
    admitted on its first chunk (63 tokens, 4 blocks: 5 + 4 = 9 used), grows to 8 and 12
    blocks (13, 17 used), then its 4th chunk needs 16 blocks with 3 free: L, the last
    admitted, evicts itself (189 computed tokens lost) and no one is admitted in that
    step (5 used). In the next step it is admitted again, from scratch: rows 1-8 are
    two turns of the loop, which goes on while A runs."""
    r = run(GATE_CASE, scheduler_reserve_full_isl=False, enable_prefix_caching=False,
            **GATE_OPTS)
    tl, rq = r.timeline, r.requests
    assert tl["prefill_tokens"][1:9].tolist() == [63, 63, 63, 0, 63, 63, 63, 0]
    assert tl["kv_blocks_used"][1:9].tolist() == [9, 13, 17, 5, 9, 13, 17, 5]
    assert tl["preemptions"][1:9].tolist() == [0, 0, 0, 1, 0, 0, 0, 1]
    assert (r.events["request"] == 1).all()
    assert [row_at(r, t) + 1 for t in r.events["t_s"][:2]] == [4, 8]
    assert rq["preemptions"][1] >= 10
    assert rq["recomputed_tokens"][1] >= 10 * 2 * 63
    assert rq["rescued_tokens"][1] == 0
    assert rq["first_token_s"][1] > rq["finish_s"][0]       # it only gets through after A
    assert_drained(r, GATE_CASE)
    # The gate avoids all of it.
    assert run(GATE_CASE, enable_prefix_caching=False, **GATE_OPTS).events.num_rows == 0


# --------------------------------------------------------------------------------------------
# Recompute with the prefix cache


def test_a_victim_resuming_before_its_blocks_are_reused_recomputes_only_what_it_lost():
    """A (60 tokens, 4 blocks) and B (40, 3 blocks) fill 7 blocks; in row 5 (G = 5) A
    needs a 5th and B is preempted with 44 tokens stored: its 2 full blocks (32 tokens)
    stay cached, its partly filled one (12 tokens) is freed unhashed and is the one A
    takes. A never needs a 6th block (at most 79 tokens), so when A has finished B
    resumes, hits its 32 cached tokens and prefills only 45 - 32 = 13: rescued 32,
    recomputed 44 - 32 = 12 (the evicted tokens). Without the prefix cache it prefills
    all 45 and recomputes all 44."""
    reqs = [R(0.0, 60, 20), R(0.0, 40, 20)]
    r = run(reqs, num_gpu_blocks=7)
    tl, rq = r.timeline, r.requests
    assert r.events["request"].tolist() == [1]
    i = row_at(r, r.events["t_s"][0]) + 1
    assert i == 5
    assert tl["kv_blocks_used"][i] == 5 and tl["kv_blocks_cached"][i] == 2
    j = row_at(r, r.pauses["end_s"][0])
    assert tl["t_s"][j - 1] == rq["finish_s"][0]
    assert tl["prefill_tokens"][j] == 45 - 32
    assert rq["rescued_tokens"].tolist() == [0, 32]
    assert rq["recomputed_tokens"].tolist() == [0, 44 - 32]
    s = r.summary()
    assert (s["rescued_tokens"], s["recomputed_tokens"]) == (32, 12)
    assert s["recompute_rescued_share"] == pytest.approx(32 / 44)
    # resumed lookups are counted apart from the hit rate (vLLM leaves them out too)
    assert s["prefix_cache_hit_rate"] == 0.0
    assert (r.counters["prefix_cache_resumed_queries"], r.counters["prefix_cache_resumed_hits"]) \
        == (45, 32)
    assert_drained(r, reqs)

    off = run(reqs, num_gpu_blocks=7, enable_prefix_caching=False)
    j = row_at(off, off.pauses["end_s"][0])
    assert off.timeline["prefill_tokens"][j] == 45
    assert off.requests["rescued_tokens"].tolist() == [0, 0]
    assert off.requests["recomputed_tokens"].tolist() == [0, 44]
    assert off.summary()["recompute_rescued_share"] == 0.0


@pytest.mark.parametrize("a_output, rescued", [(20, 32), (30, 16), (40, 0)])
def test_cached_blocks_reused_while_the_victim_waits_are_recomputed_tail_first(a_output, rescued):
    """The same A and B, with A's answer longer: after B's preemption (row 5) A holds 5
    blocks and the only free ones are B's 2 cached blocks. A needs a 6th block at 81
    tokens (G = 21) and a 7th at 97 (G = 37): each one evicts one of B's, its tail block
    first. B resumes after A (45 tokens): with a 20-token answer A takes none of them
    (B hits 32 tokens), with 30 one (B hits its first block, 16 tokens), with 40 both
    (B hits nothing). The recomputed tokens are the rest of its 44: 12, 28, 44."""
    reqs = [R(0.0, 60, a_output), R(0.0, 40, 20)]
    r = run(reqs, num_gpu_blocks=7)
    tl, rq = r.timeline, r.requests
    assert r.events["request"].tolist() == [1]
    j = row_at(r, r.pauses["end_s"][0])
    assert tl["t_s"][j - 1] == rq["finish_s"][0]
    assert tl["prefill_tokens"][j] == 45 - rescued
    assert rq["rescued_tokens"].tolist() == [0, rescued]
    assert rq["recomputed_tokens"].tolist() == [0, 44 - rescued]
    assert_drained(r, reqs)


def test_nothing_is_admitted_in_a_step_that_preempted():
    """Priority scheduling puts the victim B (priority 1) behind W (priority 0) in the
    queue. A (4 blocks) and B (2) fill 6 blocks; in row 1 A needs its 5th, B is
    preempted: its 2 full blocks are cached-free, A evicts one of them, and one block
    (free, cached) is left, enough for W's 16 tokens, yet W is only admitted in the next
    step."""
    reqs = [R(0.0, 64, 20, priority=0), R(0.0, 32, 20, priority=1), R(0.005, 16, 3, priority=0)]
    r = run(reqs, num_gpu_blocks=6, scheduling_policy="priority")
    tl, rq = r.timeline, r.requests
    assert r.events["request"][0] == 1
    i = row_at(r, r.events["t_s"][0]) + 1
    assert i == 1 and tl["preemptions"][i] == 1
    assert tl["kv_blocks_used"][i] == 5 and tl["kv_blocks_cached"][i] == 1
    assert tl["prefill_tokens"][i] == 0 and tl["waiting"][i] == 2
    assert rq["first_token_s"][2] == tl["t_s"][i + 1]
    assert tl["prefill_tokens"][i + 1] == 16
    assert_drained(r, reqs)


# --------------------------------------------------------------------------------------------
# long_prefill_token_threshold


def test_long_prefill_token_threshold_splits_chunks_as_vllm_does():
    """Three 800-token prompts at t = 0, a 1,024-token budget, threshold 400. Step 1:
    400 + 400 + min(800, 400, 1,024 - 800) = 224 = 1,024 tokens, all three admitted,
    holding 25 + 25 + 14 = 64 blocks. Step 2: the last 400 of the first two (their first
    tokens) and 224 more of the third: 1,024 tokens, 50 + 50 + 28 = 128 blocks. Step 3:
    two decodes and the third's last 352 tokens (51 + 51 + 50 blocks). The step times pin
    each request's chunk: attention pairs are quadratic in the chunk."""
    reqs = [R(0.0, 800, 5)] * 3
    r = run(reqs, num_gpu_blocks=200, max_num_batched_tokens=1024,
            long_prefill_token_threshold=400)
    tl, rq = r.timeline, r.requests
    assert tl["prefill_tokens"][:4].tolist() == [1024, 1024, 352, 0]
    assert tl["decode_tokens"][:4].tolist() == [0, 0, 2, 3]
    assert tl["running"][0] == 3
    assert tl["kv_blocks_used"][:3].tolist() == [25 + 25 + 14, 50 + 50 + 28, 51 + 51 + 50]
    assert rq["first_token_s"].tolist() == [tl["t_s"][1], tl["t_s"][1], tl["t_s"][2]]
    ap = attention_pairs
    cost = StepCost(kvsim.get_model(MODEL), kvsim.get_gpu(GPU), kvsim.CostModel(), engine="v1",
                    kv_bytes_per_token=r.config["kv_bytes_per_token"],
                    async_scheduling=r.config["async_scheduling"])
    expect = [cost.step_s(1024, 3, 0, 2 * ap(0, 400) + ap(0, 224), 400 + 400 + 224),
              cost.step_s(1024, 3, 0, 2 * ap(400, 400) + ap(224, 224), 800 + 800 + 448),
              cost.step_s(2 + 352, 3, 801 + 801, ap(448, 352), 800)]
    assert tl["dt_s"][:3] == pytest.approx(expect, rel=1e-12)
    assert_drained(r, reqs)
    # Without the threshold the first prompt takes 800 and the second the other 224.
    plain = run(reqs, num_gpu_blocks=200, max_num_batched_tokens=1024)
    assert plain.timeline["running"][0] == 2
    assert plain.requests["first_token_s"][0] == plain.timeline["t_s"][0]


# --------------------------------------------------------------------------------------------
# Watermark


def test_v1_watermark_applies_while_other_requests_run():
    """V1 with watermark 0.05 on 100 blocks (5 blocks): A (90 blocks) is admitted alone,
    B (5 blocks) leaves exactly the watermark, C (1 block) waits, as in V0; without the
    watermark (V1's default) all three start in step 1 (90 + 5 + 1 = 96 blocks)."""
    reqs = [R(0.0, 1440, 30), R(0.0, 80, 30), R(0.0, 16, 5)]
    r = run(reqs, num_gpu_blocks=100, watermark=0.05)
    assert r.config["watermark_blocks"] == 5
    assert r.timeline["running"][0] == 2 and r.timeline["kv_blocks_used"][0] == 95
    assert r.requests["first_token_s"][2] > r.requests["finish_s"][:2].min()
    assert r.timeline["kv_blocks_used"].max() == 92 + 7      # growth uses the watermark
    assert_drained(r, reqs)
    d = run(reqs, num_gpu_blocks=100)
    assert d.timeline["running"][0] == 3 and d.timeline["kv_blocks_used"][0] == 96


def test_v1_watermark_does_not_apply_to_a_request_admitted_alone():
    """100 blocks, watermark 0.05. R (1,500 + 30 tokens) needs at most
    ceil(1,529 / 16) = 96 blocks: alone, V1 admits its 94-block prompt with no headroom
    and it grows into the watermark; only while others run must 5 blocks stay free. So
    it runs; V0 (watermark always) rejects it."""
    r = run([R(0.0, 1500, 30)], num_gpu_blocks=100, watermark=0.05)
    assert r.timeline["kv_blocks_used"].max() == 96
    assert_drained(r)


def test_v0_rejects_a_request_that_only_fits_into_the_watermark():
    r = run([R(0.0, 1500, 30)], num_gpu_blocks=100, watermark=0.05, engine="v0")
    assert r.requests["rejected"].tolist() == [2] and r.summary()["requests_rejected"] == 1
    with pytest.raises(kvsim.KvsimError, match=r"request 0 .*96 blocks"):
        run([R(0.0, 1500, 30)], num_gpu_blocks=100, watermark=0.05, engine="v0",
            unfit_requests="error")


# --------------------------------------------------------------------------------------------
# Batch defaults by GPU class (vllm/engine/arg_utils.py, get_batch_defaults)


@pytest.mark.parametrize("gpu, usage_context, seqs, tokens", [
    ("h100-80gb", "server", 1024, 8192),
    ("h100-80gb", "llm", 1024, 16384),
    ("h200-141gb", "server", 1024, 8192),
    ("a100-80gb", "server", 256, 2048),
    ("a100-80gb", "llm", 256, 8192),
    ("a40-48gb", "server", 256, 2048),
    ("a40-48gb", "llm", 256, 8192),
    ("l40s-48gb", "server", 256, 2048),
])
def test_v1_batch_defaults_by_gpu_class(gpu, usage_context, seqs, tokens):
    """>= 70 GiB and not an A100: 1,024 sequences, 8,192 tokens for the API server,
    16,384 for the LLM class; elsewhere 256 and 2,048 (server) or 8,192 (LLM class)."""
    r = kvsim.simulate([R(0.0, 16, 2)], model=MODEL, gpu=gpu, usage_context=usage_context,
                       num_gpu_blocks=100)
    assert (r.config["max_num_seqs"], r.config["max_num_batched_tokens"]) == (seqs, tokens)
    assert r.config["usage_context"] == usage_context
    assert kvsim.simulate([R(0.0, 16, 2)], model=MODEL, gpu=gpu, engine="v0",
                          usage_context=usage_context, num_gpu_blocks=100
                          ).config["max_num_batched_tokens"] == 2048


def test_default_usage_context_is_the_server():
    r = kvsim.simulate([R(0.0, 16, 2)], model=MODEL, gpu="h100-80gb", num_gpu_blocks=100)
    assert r.config["usage_context"] == "server"
    assert (r.config["max_num_seqs"], r.config["max_num_batched_tokens"]) == (1024, 8192)


def test_every_option_overrides_its_default():
    """The mode's defaults are only defaults: each option set by hand wins, in V1 and V0."""
    base = dict(model=MODEL, gpu="h100-80gb", num_gpu_blocks=100)
    v1 = kvsim.simulate([R(0.0, 16, 2)], max_num_seqs=64, max_num_batched_tokens=512,
                        watermark=0.02, enable_prefix_caching=False,
                        scheduler_reserve_full_isl=False, long_prefill_token_threshold=128,
                        usage_context="llm", **base).config
    assert (v1["max_num_seqs"], v1["max_num_batched_tokens"], v1["watermark"],
            v1["watermark_blocks"], v1["enable_prefix_caching"],
            v1["scheduler_reserve_full_isl"], v1["long_prefill_token_threshold"]) == \
        (64, 512, 0.02, 2, False, False, 128)
    v0 = kvsim.simulate([R(0.0, 16, 2)], engine="v0", max_num_seqs=32,
                        max_num_batched_tokens=4096, watermark=0.0,
                        enable_prefix_caching=True, **base).config
    assert (v0["max_num_seqs"], v0["max_num_batched_tokens"], v0["watermark"],
            v0["enable_prefix_caching"]) == (32, 4096, 0.0, True)
    # Only one default moves when one option is set.
    one = kvsim.simulate([R(0.0, 16, 2)], max_num_batched_tokens=4096, **base).config
    assert (one["max_num_seqs"], one["max_num_batched_tokens"]) == (1024, 4096)
    with pytest.raises(kvsim.KvsimError, match="max_num_batched_tokens=512 is out of range"):
        kvsim.simulate([R(0.0, 16, 2)], max_num_batched_tokens=512, **base)
