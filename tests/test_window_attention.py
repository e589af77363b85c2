"""Attention priced over what each kind of layer reads: sliding-window layers at most their window.

vLLM 0.34's FlashAttention backend (vllm/v1/attention/backends/flash_attn.py,
``FlashAttentionImpl.__init__``) passes a sliding-window layer ``window_size =
(sliding_window - 1, 0)``: the token at position x attends to itself and the
``window - 1`` before it, ``min(x + 1, window)`` keys. Hand-derived figures on the
presets (Mistral-7B: every layer slides over 4,096 tokens; Gemma-2-9B: 21 of its 42
layers do), then the engine's three forms (jumps, step by step, the reference engine)
on windowed models across engine modes and admission policies.
"""
from __future__ import annotations

import random
from dataclasses import replace

import pytest
from test_engine_properties import assert_same_result, random_config, three_engines
from test_invariants import stopped_after

import kvsim
from kvsim.engine.costs import AttentionSpan, StepCost, attention_pairs, window_pairs
from kvsim.errors import KvsimError


def _cost(model: str | kvsim.ModelSpec, **kw) -> StepCost:
    spec = model if isinstance(model, kvsim.ModelSpec) else kvsim.get_model(model)
    return StepCost(spec, kvsim.get_gpu("a100-80gb"), **kw)


def _windowed(preset: str, window: int) -> kvsim.ModelSpec:
    base = kvsim.get_model(preset)
    return replace(base, sliding_window=window, name=f"{base.name}-w{window}")


@pytest.mark.parametrize("async_scheduling", [False, True])
def test_mistral_decodes_at_10000_tokens_what_it_decodes_at_its_window(async_scheduling):
    cost = _cost("mistral-7b", async_scheduling=async_scheduling)
    span = cost.span
    assert (span.window, span.full_weight, span.window_weight) == (4096, 0, 1)
    # every layer slides: a unit is a token of every layer, and 10,000 tokens read 4,096
    assert span.decode_units(10_000) == span.decode_units(4096) == 4096
    assert cost.decode_s_per_unit == cost.decode_s_per_token
    assert cost.step_s(1, 1, span.decode_units(10_000)) == cost.step_s(1, 1, 4096)
    parts = cost.step_parts(1, 1, span.decode_units(10_000))
    assert parts.decode_attention_s == cost.decode_s_per_token * 4096
    # below the window nothing changes
    assert span.decode_units(3000) == 3000


def test_gemma_2_caps_half_its_layers():
    cost = _cost("gemma-2-9b")
    span = cost.span
    # 21 full and 21 sliding layers: a unit is a token in 21 layers
    assert (span.unit_layers, span.full_weight, span.window_weight) == (21, 1, 1)
    assert span.decode_units(10_000) == 10_000 + 4096
    assert span.decode_units(1000) == 2 * 1000
    # a unit costs half a token of every layer: 10,000 tokens cost what 7,048 would unwindowed
    assert cost.decode_s_per_unit == pytest.approx(cost.decode_s_per_token / 2, rel=1e-15)
    attention = cost.step_parts(1, 1, span.decode_units(10_000)).decode_attention_s
    assert attention == pytest.approx(cost.decode_s_per_token * (10_000 + 4096) / 2, rel=1e-12)


def test_models_without_windows_count_plain_tokens():
    cost = _cost("llama-3.1-8b")
    span = cost.span
    assert (span.window, span.full_weight, span.window_weight) == (0, 1, 0)
    assert span.decode_units(10_000) == 10_000
    assert span.prefill_pair_units(300, 200) == attention_pairs(300, 200)
    assert span.prefill_kv_units(300, 200) == 500
    # the same float to the bit (equal, not identical: the compiled StepCost keeps floats unboxed)
    assert cost.decode_s_per_unit == cost.decode_s_per_token
    # Llama 4's chunked-local layers stay priced over the whole context
    # (NOTE(chunked-local-attention))
    chunked = replace(_windowed("gemma-2-9b", 4096), chunked_window=True)
    assert AttentionSpan.of(chunked).window == 0


def test_a_prefill_over_the_window_counts_at_most_window_keys_a_query():
    w = 4096
    # a 6,000-token prompt: positions 0..4,095 attend to x + 1 keys, the rest to 4,096
    want = w * (w + 1) // 2 + (6000 - w) * w
    assert window_pairs(0, 6000, w) == want == sum(min(x + 1, w) for x in range(6000))
    # a chunk after 5,000 tokens: every query at the window, its keys from 5,000 - 4,095
    assert window_pairs(5000, 512, w) == 512 * w
    assert window_pairs(4000, 200, w) == sum(range(4001, 4097)) + 104 * w
    mistral = _cost("mistral-7b")
    unwindowed = _cost(replace(kvsim.get_model("mistral-7b"), sliding_window=None,
                               sliding_window_layers=0))
    assert mistral.prefill_s(6000) - unwindowed.prefill_s(6000) == pytest.approx(
        mistral.prefill_attention_s(want, 6000) - unwindowed.prefill_attention_s(
            attention_pairs(0, 6000), 6000), rel=1e-12)
    # the 512-token chunk after 5,000 reads the window's 4,095 tokens before it and its own
    assert mistral.span.prefill_kv_units(5000, 512) == 4095 + 512
    assert mistral.prefill_s(512, 5000) == mistral.step_s(
        512, 1, prefill_pairs=512 * w, prefill_kv_tokens=4095 + 512)
    # Gemma-2: its full layers' pairs plus its sliding layers', a unit each (21 layers)
    gemma = _cost("gemma-2-9b")
    assert gemma.span.prefill_pair_units(0, 6000) == attention_pairs(0, 6000) + want
    assert gemma.prefill_attention_s(gemma.span.prefill_pair_units(0, 6000), 0) == pytest.approx(
        gemma.attn_flops_per_pair * gemma.s_per_attn_flop * (attention_pairs(0, 6000) + want) / 2,
        rel=1e-12)


@pytest.mark.parametrize("step_by_step", [False, True])
@pytest.mark.parametrize("async_scheduling", [False, True])
def test_a_decode_past_its_window_stops_growing_longer(step_by_step, async_scheduling):
    """One Mistral request with a 64-token window: its decode steps lengthen until its
    context reaches 64 tokens and then all last what a step at 64 lasts."""
    model = _windowed("mistral-7b", 64)
    res = kvsim.simulate(kvsim.Workload.from_requests([kvsim.Request(0.0, 40, 80)]), model=model,
                         gpu="a100-80gb", enable_prefix_caching=False, check=True,
                         step_by_step=step_by_step, async_scheduling=async_scheduling,
                         step_overhead_s=0.0, seq_overhead_s=0.0)
    cost = _cost(model, async_scheduling=async_scheduling, cost=kvsim.CostModel(
        step_overhead_s=0.0, seq_overhead_s=0.0))
    dts = res.timeline["dt_s"].tolist()
    assert dts[0] == cost.prefill_s(40)
    # decode step j (j >= 1) attends to 40 + j tokens: 41 .. 119, capped at 64
    assert dts[1:] == [cost.step_s(1, 1, min(40 + j, 64)) for j in range(1, 80)]
    assert dts[1] < dts[23] < dts[24] == dts[25] == dts[-1]


def _windowed_config(seed: int):
    rng = random.Random(7000 + seed)
    workload, opts = random_config(rng)
    model = _windowed(rng.choice(["mistral-7b", "gemma-2-9b"]), rng.choice([2, 5, 17, 48, 130]))
    return workload, model, opts


@pytest.mark.parametrize("seed", range(30))
def test_windowed_attention_agrees_across_jumps_steps_and_the_reference(seed):
    """Random workloads on every engine mode and admission policy (V1 and V0, SGLang's and
    TensorRT-LLM's admission, the prefix cache on and off, swaps), on models whose window
    members pass inside the runs: jumps, step by step (invariants checked after every step)
    and the reference engine (each request's attention counted on its own) agree byte for
    byte."""
    workload, model, opts = _windowed_config(seed)
    fast, slow, ref, _ = three_engines(workload, model=model, gpu="h200-141gb", **opts)
    assert_same_result(fast, slow, "jumps vs step_by_step")
    assert_same_result(fast, ref, "kvsim vs reference engine")


def test_the_fuzz_reaches_capped_decodes_in_runs():
    """The examples above are not all refused, and their decoders pass their windows."""
    ran = 0
    for seed in range(30):
        workload, model, opts = _windowed_config(seed)
        try:
            res = kvsim.simulate(workload, model=model, gpu="h200-141gb", **opts)
        except KvsimError:
            continue
        contexts = res.requests["prompt_tokens"] + res.requests["output_tokens"]
        ran += int(res.timeline.num_rows > 0 and (contexts > model.sliding_window).any())
    assert ran >= 15


def _windowed_engine_mid_run(steps: int):
    """A scheduler decoding 6 requests on Mistral-7B with a 32-token window, stopped after
    ``steps`` steps (some members past their window, some below it)."""
    from kvsim.engine.loop import build_engine

    requests = [kvsim.Request(0.0, p, 60) for p in (4, 9, 14, 20, 27, 40)]
    eng = build_engine(kvsim.Workload.from_requests(requests), _windowed("mistral-7b", 32),
                       kvsim.get_gpu("a100-80gb"),
                       dict(enable_prefix_caching=False, step_by_step=True))
    return stopped_after(eng, steps)


def test_the_invariant_checker_catches_a_wrong_window_context():
    from kvsim.engine.invariants import check_invariants

    sched = _windowed_engine_mid_run(12)
    group = sched.decoding
    assert group.size == 6 and group.uncapped and group.capped_members()
    check_invariants(sched)                         # sound before any fault
    group.uncapped_offset_sum += 1
    with pytest.raises(AssertionError, match="members below the window"):
        check_invariants(sched)
    group.uncapped_offset_sum -= 1
    caps = list(group._caps)
    group._caps.clear()                             # nobody would ever reach the window
    with pytest.raises(AssertionError, match="no capped step due"):
        check_invariants(sched)
    group._caps.extend(caps)
    below = next(rid for rid in group.offset if rid not in group.capped_members())
    group._capped.add(below)                       # counted at the window too early
    group.uncapped -= 1
    group.uncapped_offset_sum -= group.offset[below]
    with pytest.raises(AssertionError, match="before reaching it"):
        check_invariants(sched)
