"""Sliding-window models as vLLM V1's hybrid allocator lays them out (hand-derived).

The groups follow vLLM 0.34's ``_get_kv_cache_groups_uniform_page_size``
(vllm/v1/core/kv_cache_planning.py), the pool ``get_kv_cache_config_from_groups``
(``num_blocks = available_memory // bytes_per_block``, a block one group's page) and
the start-up line ``get_max_concurrency_for_kv_cache_config`` (each group's
``cdiv(max_memory_usage_bytes, page)``, a window group's being
``SlidingWindowSpec.max_admission_blocks_per_request``).
"""
from __future__ import annotations

import pytest

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
    from dataclasses import replace
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
    """NOTE(kv-groups-one-table): Gemma-2's engine block is one block of each of its two groups."""
    b = kv_budget("h100-80gb", "gemma-2-9b", gpu_memory_utilization=0.9)
    wl = kvsim.Workload.from_requests([kvsim.Request(0.0, 100, 10)])
    res = kvsim.simulate(wl, model="gemma-2-9b", gpu="h100-80gb", gpu_memory_utilization=0.9)
    assert res.total_blocks == b.blocks // 2
    assert res.config["kv_cache_groups"] == 2
    assert res.config["block_bytes"] == 2 * b.block_bytes
