"""Sliding-window models as vLLM V1's hybrid allocator lays them out (hand-derived).

The groups follow vLLM 0.34's ``_get_kv_cache_groups_uniform_page_size``
(vllm/v1/core/kv_cache_planning.py), the pool ``get_kv_cache_config_from_groups``
(``num_blocks = available_memory // bytes_per_block``, a block one group's page) and
the start-up line ``get_max_concurrency_for_kv_cache_config`` (each group's
``cdiv(max_memory_usage_bytes, page)``, a window group's being
``SlidingWindowSpec.max_admission_blocks_per_request``).
"""
from __future__ import annotations

import random
from dataclasses import replace

import pytest
from test_engine_properties import assert_same_result, three_engines

import kvsim
from kvsim.model.kv_groups import KVGroup, kv_layout
from kvsim.model.memory import kv_budget, pinned_budget
from kvsim.units import cdiv


def test_one_kind_of_layer_is_one_group_of_every_layer():
    assert kv_layout(32, 0, None, hybrid_allocator=True).groups == (KVGroup(32),)
    assert kv_layout(32, 32, 4096, hybrid_allocator=True).groups == (KVGroup(32, 4096),)


def test_gemma_2_is_two_groups_of_21_layers():
    layout = kvsim.get_model("gemma-2-9b").kv_layout()
    assert layout.group_size == 21
    assert layout.groups == (KVGroup(21), KVGroup(21, 4096))
    assert layout.describe() == "2 groups of 21 layers: full, sliding window 4,096"


@pytest.mark.parametrize("full, sliding, group_size, groups", [
    (13, 12, 13, (KVGroup(13), KVGroup(12, 512))),            # gpt-oss-20b + eagle: the larger
    (10, 20, 10, (KVGroup(10), KVGroup(10, 512), KVGroup(10, 512))),   # 20 >= 1.5 x 10: the smaller
    (5, 25, 5, (KVGroup(5),) + (KVGroup(5, 512),) * 5),        # Gemma 3's 5:1
    (4, 9, 4, (KVGroup(4), KVGroup(3, 512), KVGroup(3, 512), KVGroup(3, 512))),  # 9 dealt over 3
])
def test_group_size_is_vllms_rule(full, sliding, group_size, groups):
    layout = kv_layout(full + sliding, sliding, 512, hybrid_allocator=True)
    assert (layout.group_size, layout.groups) == (group_size, groups)


def test_v0_chunked_and_stateful_models_stay_one_full_group():
    gemma = kvsim.get_model("gemma-2-9b")
    assert gemma.kv_layout(hybrid_allocator=False).groups == (KVGroup(42),)
    assert replace(gemma, chunked_window=True).kv_layout().groups == (KVGroup(42),)
    assert replace(gemma, state_bytes_per_request=1024).kv_layout().groups == (KVGroup(42),)


def test_gemma_2_pool_has_half_size_blocks_and_vllms_start_up_line():
    b = kv_budget("h100-80gb", "gemma-2-9b", gpu_memory_utilization=0.9,
                  max_num_batched_tokens=8192, async_scheduling=True)
    per_layer = 2 * 8 * 256 * 2                    # K and V, 8 KV heads of 256, bf16
    assert b.block_bytes == 21 * per_layer * 16    # one group's page: half the all-layer block
    assert b.vllm_blocks == b.kv_bytes // b.block_bytes
    assert b.blocks == b.vllm_blocks - 1
    assert b.tokens == b.blocks // 2 * 16
    # a request of 8,192 tokens: 512 full blocks, and the window group's cap
    # cdiv(min(4,095 + 2 x 8,192, 8,192), 16) + 1 = 513 (no smaller than the full context)
    assert b.blocks_per_request(8192) == 512 + 513
    concurrency = b.vllm_blocks / 1025
    assert b.startup_log(8192) == [
        f"GPU KV cache size: {int(concurrency * 8192):,} tokens, Maximum concurrency for "
        f"8,192 tokens per request: {concurrency:.2f}x"]
    # before 0.23 the size is the blocks shared among the groups
    assert b.startup_log(8192, vllm_version="0.20")[0] == \
        f"GPU KV cache size: {b.vllm_blocks // 2 * 16:,} tokens"
    assert "KV groups       2 groups of 21 layers: full, sliding window 4,096" in b.describe()


@pytest.mark.parametrize("async_scheduling, in_flight", [(True, 2 * 8192), (False, 8192)])
def test_mistral_window_cap_counts_the_tokens_in_flight(async_scheduling, in_flight):
    b = kv_budget("h100-80gb", "mistral-7b", gpu_memory_utilization=0.9,
                  max_num_batched_tokens=8192, async_scheduling=async_scheduling)
    assert b.groups.groups == (KVGroup(32, 4096),)
    assert b.block_bytes == 32 * 2 * 8 * 128 * 2 * 16      # every layer: today's block
    cap = cdiv(4095 + in_flight, 16) + 1
    assert b.blocks_per_request(32768) == cap
    assert b.log_concurrency(32768) == b.vllm_blocks / cap
    assert b.max_concurrent(32768) == b.blocks // cap
    # vLLM counts a request shorter than the window at its blocks and one more; it holds its own
    assert b.blocks_per_request(1000) == cdiv(1000, 16) + 1
    assert b.max_concurrent(1000) == b.blocks // cdiv(1000, 16)


def test_models_without_windows_keep_one_block_of_every_layer():
    b = kv_budget("h100-80gb", "llama-3.1-8b", gpu_memory_utilization=0.9)
    assert b.block_bytes == b.kv_bytes_per_token * 16
    assert b.tokens == b.blocks * 16
    assert b.blocks_per_request(131072) == 131072 // 16
    assert "KV groups" not in b.describe()


def test_gemma_2_pool_pinned_from_its_log_line_round_trips():
    b = kv_budget("h100-80gb", "gemma-2-9b", gpu_memory_utilization=0.9,
                  max_num_batched_tokens=8192, async_scheduling=True)
    for version in ("0.20", "0.34"):
        line = b.startup_log(8192, vllm_version=version)[0]
        tokens = int(line.split("size: ")[1].split(" tokens")[0].replace(",", ""))
        pinned = pinned_budget("h100-80gb", "gemma-2-9b", kv_cache_tokens=tokens,
                               max_model_len=8192, vllm_version=version,
                               max_num_batched_tokens=8192, async_scheduling=True)
        assert pinned.startup_log(8192, vllm_version=version)[0] == line


def test_engine_pool_spans_the_groups_while_windows_hold_the_full_context():
    """NOTE(kv-groups-one-table): Gemma-2's engine block is one block of each of its two groups
    (where windows are not modelled: here TensorRT-LLM's GUARANTEED_NO_EVICT policy)."""
    b = kv_budget("h100-80gb", "gemma-2-9b", gpu_memory_utilization=0.9)
    wl = kvsim.Workload.from_requests([kvsim.Request(0.0, 100, 10)])
    res = kvsim.simulate(wl, model="gemma-2-9b", gpu="h100-80gb", gpu_memory_utilization=0.9,
                         admission="guaranteed")
    assert res.total_blocks == b.blocks // 2
    assert res.config["kv_cache_groups"] == 2
    assert res.config["block_bytes"] == 2 * b.block_bytes


# ------------------------------------------------------------ the engine: windows hold their window

def _windowed(preset: str, window: int) -> kvsim.ModelSpec:
    base = kvsim.get_model(preset)
    return replace(base, sliding_window=window, name=f"{base.name}-w{window}")


def _run(model, requests, **opts):
    opts = dict(gpu="a100-80gb", enable_prefix_caching=False, check=True, **opts)
    return kvsim.simulate(kvsim.Workload.from_requests(requests), model=model, **opts)


@pytest.mark.parametrize("async_scheduling", [False, True])
@pytest.mark.parametrize("step_by_step", [False, True])
def test_a_request_past_its_window_holds_its_window_and_one_block(async_scheduling, step_by_step):
    """Window 64, blocks of 16: once past its window a lone decoder holds ceil(64 / 16) + 1 = 5
    blocks at most: each step frees what left the window before it allocates. Synchronous, it
    holds 4 after a step that took no block but freed one; asynchronous, the token in flight
    delays each free by a step, to the step that takes the next block: always 5."""
    model = _windowed("mistral-7b", 64)
    res = _run(model, [kvsim.Request(0.0, 10, 300)], block_size=16, num_gpu_blocks=100,
               async_scheduling=async_scheduling, step_by_step=step_by_step)
    used = res.timeline["kv_blocks_used"]
    assert used.max() == 64 // 16 + 1
    assert set(used[100:-1].tolist()) == ({5} if async_scheduling else {4, 5})
    assert res.requests["finish_s"][0] > 0


def test_gemma_2_full_group_grows_while_the_window_group_holds_its_window():
    """Two groups: each step's blocks are the full group's ceil(t / bs) plus the window group's
    ceil(t / bs) less the blocks wholly before the window (synchronous scheduling)."""
    model = _windowed("gemma-2-9b", 32)
    res = _run(model, [kvsim.Request(0.0, 8, 120)], block_size=8, num_gpu_blocks=200,
               async_scheduling=False)
    assert res.config["kv_cache_groups"] == 2 and res.config["kv_window_groups"] == 1
    used = res.timeline["kv_blocks_used"].tolist()
    # step i (from 0) computed the prompt (i = 0) or decoded token 8 + i: after it the request
    # stores 8 + i tokens' KV and has slots for 9 + i; the window group freed the blocks before
    # the window of the 8 + i - 1 processed tokens
    for i in range(1, 119):
        slots, processed = 8 + i, 8 + i - 1
        expected = 2 * cdiv(slots, 8) - max(0, processed - 32 + 1) // 8
        assert used[i] == expected, (i, used[i], expected)


def test_long_context_mistral_admits_more_than_the_full_context_rule():
    """6,000-token prompts with 1,500-token answers on 2,400 blocks: charged only its 4,096-token
    window, Mistral runs 8 at once without a preemption, where the same model charged the full
    context runs 6 and preempts."""
    mistral = kvsim.get_model("mistral-7b")
    full = replace(mistral, sliding_window=None, sliding_window_layers=0, name="mistral-7b-full")
    requests = [kvsim.Request(0.05 * i, 6000, 1500) for i in range(12)]
    windowed, charged = (_run(m, requests, num_gpu_blocks=2400, max_model_len=32768)
                         for m in (mistral, full))
    assert windowed.config["kv_window_groups"] == 1 and charged.config["kv_window_groups"] == 0
    assert windowed.timeline["running"].max() > charged.timeline["running"].max()
    assert windowed.requests["preemptions"].sum() < charged.requests["preemptions"].sum()
    assert windowed.simulated_s < charged.simulated_s


@pytest.mark.parametrize("async_scheduling, pool, fits", [
    (False, 12, True),     # cap cdiv(min(63 + 64, len), 16) + 1 = 9
    (True, 12, False),     # cap cdiv(63 + 128, 16) + 1 = 13 > 12: it can never be admitted
    (True, 13, True),
])
def test_the_admission_gate_counts_the_window_group_at_its_cap(async_scheduling, pool, fits):
    """A 500-token prompt needs 32 blocks of 16 under the full-context rule; vLLM's full-sequence
    check counts a window-64 group at its cap instead, so it fits pools the full context does not."""
    model = _windowed("mistral-7b", 64)
    res = _run(model, [kvsim.Request(0.0, 500, 10)], block_size=16, num_gpu_blocks=pool,
               max_num_batched_tokens=64, max_num_seqs=8, async_scheduling=async_scheduling,
               unfit_requests="reject", scheduler_reserve_full_isl=True)
    assert bool(res.requests["rejected"][0] == 0) == fits
    if fits:
        assert res.requests["finish_s"][0] > 0 and res.requests["preemptions"][0] == 0
        assert res.timeline["kv_blocks_used"].max() <= pool


@pytest.mark.parametrize("options", [
    dict(enable_prefix_caching=True, kv_offloading_size=1),   # NOTE(sliding-window-host-tier)
    dict(admission="guaranteed"),
    dict(engine="v0"),
])
def test_the_full_context_rule_stays_where_windows_are_not_modelled(options):
    engine = options.get("engine", "v1")
    b = kv_budget("a100-80gb", "gemma-2-9b", gpu_memory_utilization=0.9, engine=engine)
    res = kvsim.simulate(kvsim.Workload.from_requests([kvsim.Request(0.0, 100, 10)]),
                         model="gemma-2-9b", gpu="a100-80gb", gpu_memory_utilization=0.9,
                         **{"enable_prefix_caching": False, **options})
    assert res.config["kv_window_groups"] == 0
    # V1: an engine block spans the two groups' blocks; V0: one block table, one group
    assert res.total_blocks == (b.blocks // 2 if engine == "v1" else b.blocks)


def _random_windowed_run(seed: int):
    rng = random.Random(1000 + seed)
    model = _windowed(rng.choice(["mistral-7b", "gemma-2-9b"]), rng.choice([3, 8, 20, 50, 100]))
    bs, longest = rng.choice([1, 4, 16]), rng.choice([40, 120, 400])
    requests = [kvsim.Request(round(rng.uniform(0, 3.0), 3), rng.randint(1, longest),
                              rng.randint(1, 120), rng.randint(0, 2))
                for _ in range(rng.randint(5, 25))]
    fit = cdiv(longest + 120, bs) * 2
    opts = dict(block_size=bs, num_gpu_blocks=rng.randint(max(4, fit // 4), fit * 4),
                enable_prefix_caching=False, async_scheduling=rng.random() < 0.5,
                max_num_seqs=rng.randint(1, 32), scheduling_policy=rng.choice(["fcfs", "priority"]),
                unfit_requests="reject")
    if rng.random() < 0.5:
        opts["max_num_batched_tokens"] = rng.choice([64, 256, 2048])
    if rng.random() < 0.3:
        opts["scheduler_reserve_full_isl"] = False
    if rng.random() < 0.2:
        opts["long_prefill_token_threshold"] = rng.choice([16, 50])
    return kvsim.Workload.from_requests(requests), model, opts


@pytest.mark.parametrize("seed", range(24))
def test_windowed_runs_agree_with_the_reference_engine_block_by_block(seed):
    """kvsim's jumps (the decode group's window frees in closed form), its step-by-step mode
    (invariants checked after every step) and the reference engine (a table per group, the
    window's blocks freed one by one) give byte-identical results."""
    workload, model, opts = _random_windowed_run(seed)
    fast, slow, ref, _ = three_engines(workload, model=model, gpu="a100-80gb", **opts)
    assert not isinstance(fast, Exception), fast
    assert fast.config["kv_window_groups"] >= 1
    assert_same_result(fast, slow, "jumps vs step_by_step")
    assert_same_result(fast, ref, "kvsim vs reference engine")
