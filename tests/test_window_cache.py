"""Sliding-window groups with the prefix cache on, through the engine
(:mod:`kvsim.engine.blocks.window_cache`): vLLM 0.34's hit and retention rules, the
reference engine block by block agreeing byte for byte, the invariants on a fuzz."""
from __future__ import annotations

import random
from dataclasses import replace

import pytest
from test_engine_properties import assert_same_result, three_engines

import kvsim
from kvsim.engine.blocks.window_cache import WindowCacheManager
from kvsim.traffic.lengths import Fixed, Uniform
from kvsim.units import cdiv


def _conversation(prompt: int, answer: int) -> kvsim.Workload:
    return kvsim.Workload.closed_loop(users=1, duration_s=8, prompt=Fixed(prompt),
                                      output=Fixed(answer), turns=Fixed(2), followup=Fixed(100))


@pytest.mark.parametrize("model", ["mistral-7b", "gemma-2-9b"])
@pytest.mark.parametrize("retention, hit", [(0, 4992), ("dense", 5296)])
def test_a_second_turn_hits_what_vllm_hits(model, retention, hit):
    """Turn 1: prompt 5,000, answer 300 (5,299 tokens stored). With retention 0 only the
    window blocks before the replay boundary 4,999 keep their hash (blocks 56-311), so turn 2
    hits 312 blocks = 4,992 tokens; dense keeps every full block: 331 blocks = 5,296. On
    Gemma-2 the full group holds all 331, the window group bounds the hit."""
    res = kvsim.simulate(_conversation(5000, 300), model=model, gpu="a100-80gb",
                         num_gpu_blocks=3000, prefix_cache_retention_interval=retention)
    assert res.config["kv_window_groups"] == 1
    assert res.requests["prompt_tokens"].tolist()[:2] == [5000, 5400]
    assert res.requests["prefix_hit_tokens"].tolist()[:2] == [0, hit]


def test_gemma_2s_full_group_still_hits_and_pins_the_junction():
    """The manager's lookup after turn 1 (synchronous): the full group's run is 331 blocks,
    the window group's hit 312 within it, so the hit is 312 and the junction 331."""
    kv = WindowCacheManager(2000, 16, watermark_blocks=0, watermark_when_alone=False,
                            window=4096, groups=2, window_groups=1, window_lag=0,
                            window_cap=10**6, retention_interval=0)
    kv.register(0, -1, 0, 7, 5000)
    hit = kv.lookup(0, 5000)
    assert hit.blocks == 0
    kv.admit(0, hit, 5000)
    for t in range(5000, 5299):
        kv.step += 1
        kv.settle_window(0)
        kv.grow(0, t + 1)
    kv.release(0, 5299, reachable=True)
    kv.register(1, -1, 0, 7, 5400)
    hit = kv.lookup(1, 5400)
    assert (hit.blocks, hit.junction) == (312, 331)
    assert sum(b >= 0 for b in hit.tables[0]) == 312          # full group: every block
    assert sum(b >= 0 for b in hit.tables[1]) == 256          # window group: its last 256


def test_long_context_mistral_with_the_cache_admits_more_than_the_full_context_rule():
    """6,000-token prompts, 1,500-token answers, 2,400 blocks, prefix cache on: held to its
    window Mistral runs more requests at once, with fewer preemptions, than charged the full
    context (the rule before the engine modelled windows with the cache)."""
    mistral = kvsim.get_model("mistral-7b")
    full = replace(mistral, sliding_window=None, sliding_window_layers=0, name="mistral-7b-full")
    requests = [kvsim.Request(0.05 * i, 6000, 1500) for i in range(12)]
    runs = [kvsim.simulate(kvsim.Workload.from_requests(requests), model=m, gpu="a100-80gb",
                           num_gpu_blocks=2400, max_model_len=32768) for m in (mistral, full)]
    windowed, charged = runs
    assert windowed.config["enable_prefix_caching"] and windowed.config["kv_window_groups"] == 1
    assert windowed.timeline["running"].max() > charged.timeline["running"].max()
    assert windowed.requests["preemptions"].sum() < charged.requests["preemptions"].sum()


def _windowed(preset: str, window: int) -> kvsim.ModelSpec:
    base = kvsim.get_model(preset)
    return replace(base, sliding_window=window, name=f"{base.name}-w{window}")


def _random_cached_run(seed: int):
    rng = random.Random(7000 + seed)
    model = _windowed(rng.choice(["mistral-7b", "gemma-2-9b"]), rng.choice([3, 8, 20, 50, 100]))
    bs, longest = rng.choice([1, 4, 16]), rng.choice([40, 120, 400])
    if rng.random() < 0.5:
        wl = kvsim.Workload.closed_loop(users=rng.randint(1, 6), duration_s=rng.uniform(0.5, 3),
                                        prompt=Uniform(1, longest), output=Uniform(1, 60),
                                        turns=rng.choice([Fixed(2), Fixed(3), Uniform(1, 4)]),
                                        followup=Uniform(1, 30), seed=seed)
    else:
        wl = kvsim.Workload.from_requests(
            [kvsim.Request(round(rng.uniform(0, 3.0), 3), rng.randint(1, longest),
                           rng.randint(1, 120), rng.randint(0, 2))
             for _ in range(rng.randint(5, 25))])
    if rng.random() < 0.6:
        wl = wl.with_shared_prefix(rng.choice([4, 16, 50, 100]), rng.randint(1, 2))
    fit = cdiv(longest + 400, bs) * 2
    opts = dict(block_size=bs, num_gpu_blocks=rng.randint(max(4, fit // 4), fit * 4),
                enable_prefix_caching=True, async_scheduling=rng.random() < 0.5,
                max_num_seqs=rng.randint(1, 32), scheduling_policy=rng.choice(["fcfs", "priority"]),
                unfit_requests="reject",
                prefix_cache_retention_interval=rng.choice([0, 0, "dense", 4 * bs, 32 * bs]))
    if rng.random() < 0.5:
        opts["max_num_batched_tokens"] = rng.choice([64, 256, 2048])
    if rng.random() < 0.3:
        opts["scheduler_reserve_full_isl"] = False
    if rng.random() < 0.2:
        opts["long_prefill_token_threshold"] = rng.choice([16, 50])
    return wl, model, opts


@pytest.mark.parametrize("seed", range(24))
def test_windowed_runs_with_the_cache_agree_with_the_reference_engine(seed):
    """kvsim (invariants checked after every step, with jumps and step by step) and the
    reference engine (a table per group, a hash per group, vLLM's free order) agree byte for
    byte on windowed models with the prefix cache on: conversations, shared prefixes."""
    workload, model, opts = _random_cached_run(seed)
    fast, slow, ref, _ = three_engines(workload, model=model, gpu="a100-80gb", **opts)
    assert not isinstance(fast, Exception), fast
    assert fast.config["kv_window_groups"] >= 1
    assert_same_result(fast, slow, "jumps vs step_by_step")
    assert_same_result(fast, ref, "kvsim vs reference engine")


@pytest.mark.parametrize("async_scheduling, hit", [(False, 32), (True, 16)])
def test_a_block_a_decode_fills_is_hashed_once_its_token_is_known(async_scheduling, hit):
    """Prompt 20, answer 13: 32 tokens stored, two full blocks of 16. The last decode step's
    input (token 31) fills block 1; synchronous, its value is known when it is scheduled and
    block 1 gets its hash; asynchronous, it is still in flight (the request ran in the step
    before), cache_blocks stops at block 0 and the request finishes first: turn 2 (38 tokens)
    hits 32 tokens, or 16 (dense retention, so only this rule decides)."""
    wl = kvsim.Workload.closed_loop(users=1, duration_s=0.5, prompt=Fixed(20), output=Fixed(13),
                                    turns=Fixed(2), followup=Fixed(5))
    res = kvsim.simulate(wl, model="mistral-7b", gpu="a100-80gb", num_gpu_blocks=200,
                         block_size=16, async_scheduling=async_scheduling,
                         prefix_cache_retention_interval="dense", check=True)
    assert res.requests["prompt_tokens"].tolist()[:2] == [20, 38]
    assert res.requests["prefix_hit_tokens"].tolist()[:2] == [0, hit]


@pytest.mark.parametrize("model, retention, hits", [
    ("gemma-2-9b", 0, [0, 0, 6000]),
    ("gemma-2-9b", "dense", [0, 6000, 6000]),
    ("mistral-7b", 0, [0, 0, 0]),
    ("mistral-7b", "dense", [0, 6000, 6000]),
])
def test_a_shared_prefix_is_kept_in_a_window_group_only_where_it_keeps_its_hash(model, retention,
                                                                                hits):
    """Three 7,000-token prompts, one after another, sharing 6,000 tokens (375 blocks). With
    retention 0 request 0's window blocks keep a hash only before its own replay boundary
    (6,999), outside the prefix, so request 1 finds none there. On Gemma-2 the full group
    finds all 375 blocks: request 1 hits nothing but pins 6,000 as its junction, so its window
    blocks 119-374 keep their hash and request 2 hits the whole prefix. Mistral-7B is one
    window group (no junction): the prefix is never hit. Dense keeps every block."""
    wl = kvsim.Workload.from_requests([kvsim.Request(5.0 * i, 7000, 10)
                                       for i in range(3)]).with_shared_prefix(6000)
    res = kvsim.simulate(wl, model=model, gpu="a100-80gb", num_gpu_blocks=3000,
                         prefix_cache_retention_interval=retention, check=True)
    assert res.requests["prefix_hit_tokens"].tolist() == hits
