"""Bytes per token and the KV budget (chapter 1, *Bytes per token and capacity*).

Seed 000 = "KV Cache Preemption in vLLM"; seed 003 = "Throughput collapse under load".
"""
from __future__ import annotations

import math

import pytest

import kvsim
from kvsim.errors import KvsimError
from kvsim.memory import BLOCK_SIZES, KV_DTYPES, KVBudget, kv_budget, kv_bytes_per_token
from kvsim.models import get_model
from kvsim.units import GB, GiB, MB, MiB

# kvsim's exact figures for seed 000's Belgavi budget (pinned; see the tests below)
BELGAVI_KV_BYTES = 28_800_000_000 - 6_738_415_616 * 2 - 2_000_000_000   # 13,323,168,768
BELGAVI_BLOCKS = 1_588
BELGAVI_TOKENS = 25_408


@pytest.fixture(scope="module")
def belgavi() -> KVBudget:
    return kv_budget("l40s-48gb", "llama-2-7b", gpu_memory_utilization=0.60)


@pytest.fixture(scope="module")
def h100_8b() -> KVBudget:
    return kv_budget("h100-80gb", "llama-3.1-8b", gpu_memory_utilization=0.90)


def test_kv_dtypes():
    assert KV_DTYPES == {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1}


def test_kv_bytes_per_token_by_name_spec_and_dtype():
    """Seeds 000 and 003: 0.5 MiB, 0.25 MiB (FP8), 128 KiB and 320 KiB."""
    assert kv_bytes_per_token("llama-2-7b") == 524_288
    assert kv_bytes_per_token(get_model("llama-2-7b"), "fp8") == 262_144
    assert kv_bytes_per_token("llama-2-7b", "fp32") == 2 * 524_288
    assert kv_bytes_per_token("llama-3.1-8b") == 131_072
    assert kv_bytes_per_token("llama-3.1-70b") == 327_680
    assert kv_bytes_per_token("llama-3.1-8b", "auto") == 131_072
    assert kvsim.kv_bytes_per_token("deepseek-v3") == 70_272
    with pytest.raises(KvsimError, match=r"kv_dtype='int8' is not known: expected one of fp32"):
        kv_bytes_per_token("llama-2-7b", "int8")


# ----------------------------------------------------------------------------- seed 000: Belgavi


def test_seed000_belgavi_budget_in_bytes(belgavi):
    """Seed 000: 48 GB x 0.60 = 28.8 GB; 13.5 GB of FP16 weights; ~2 GB; ~13.3 GB for KV."""
    assert belgavi.usable_bytes == 28_800_000_000
    assert belgavi.weight_bytes == pytest.approx(13.5 * GB, rel=0.01)
    assert belgavi.activation_bytes == 2 * GB
    assert belgavi.kv_bytes == BELGAVI_KV_BYTES
    assert belgavi.kv_bytes == pytest.approx(13.3 * GB, rel=0.01)
    assert belgavi.kv_bytes_per_token == 524_288
    assert belgavi.block_size == 16 and belgavi.block_bytes == 16 * 524_288 == 8 * MiB
    assert belgavi.kv_dtype == "fp16" and belgavi.tensor_parallel_size == 1


def test_seed000_belgavi_exact_tokens_and_blocks(belgavi):
    """kvsim's exact (binary) reading of seed 000's pool: 1,588 blocks = 25,408 tokens."""
    assert belgavi.blocks == belgavi.kv_bytes // (524_288 * 16) == BELGAVI_BLOCKS
    assert belgavi.tokens == BELGAVI_BLOCKS * 16 == BELGAVI_TOKENS
    # unblocked, 13.3 GB over the exact 0.5 MiB is 25,367 tokens
    assert 13_300_000_000 // 524_288 == 25_367


def test_seed000_belgavi_decimal_reading(belgavi):
    """Seed 000's "~26,600 tokens or 1,700 blocks" divides 13.3 GB by 0.5 MB (decimal)."""
    decimal_tokens = belgavi.kv_bytes / 500_000
    assert 26_600 == pytest.approx(decimal_tokens, rel=0.01)
    assert 1_700 == pytest.approx(decimal_tokens / 16, rel=0.03)     # "~1,700 blocks" (1,665)
    # the two readings differ by exactly the MiB/MB ratio
    exact_tokens = belgavi.kv_bytes / belgavi.kv_bytes_per_token
    assert decimal_tokens / exact_tokens == pytest.approx(1.048576, abs=1e-12)
    assert MiB / MB == 1.048576


def test_seed000_belgavi_concurrency_850_plus_250(belgavi):
    """Seed 000: ~24 requests at 850 + 250 tokens (decimal pool); kvsim's exact pool gives 23."""
    seed_blocks = int(13.3 * GB / 500_000) // 16                      # 1,662 blocks
    assert seed_blocks // math.ceil(1100 / 16) == 24
    assert int(13.3 * GB / 500_000) // 1100 == 24
    assert belgavi.blocks_for(1100) == 69
    assert belgavi.max_concurrent(1100) == 23


def test_seed000_belgavi_longer_answers_850_plus_600(belgavi):
    """Seed 000: answers of ~600 tokens -> ~1,450 tokens each -> capacity ~18; kvsim exact 17."""
    assert int(13.3 * GB / 500_000) // 1450 == 18
    assert belgavi.max_concurrent(850 + 600) == 17


def test_seed000_fp8_kv_roughly_doubles_capacity(belgavi):
    """Seed 000: an FP8 KV cache "roughly doubles capacity"."""
    fp8 = kv_budget("l40s-48gb", "llama-2-7b", gpu_memory_utilization=0.60, kv_dtype="fp8")
    assert fp8.kv_bytes == belgavi.kv_bytes
    assert fp8.kv_bytes_per_token == 262_144
    assert fp8.blocks == 2 * BELGAVI_BLOCKS == 3_176
    assert fp8.max_concurrent(1100) == 46


def test_seed000_guaranteed_reservation_admits_under_half(belgavi):
    """Seed 000: reserving 850 + 1,500 = 2,350 tokens vs ~1,100 used admits under half as many."""
    assert belgavi.max_concurrent(2350) * 2 < belgavi.max_concurrent(1100)


# ----------------------------------------------------------------------------- seed 003: 8B on H100


def test_seed003_llama8b_h100_pool_is_about_50_gib(h100_8b):
    """Seed 003: 80 GB H100 at 0.90, ~16 GB weights, a few GB more -> ~50 GiB of KV pool."""
    assert h100_8b.usable_bytes == 72 * GB
    assert h100_8b.weight_bytes == pytest.approx(16 * GB, rel=0.01)
    assert h100_8b.kv_bytes == 53_939_477_504
    assert h100_8b.kv_bytes / GiB == pytest.approx(50, rel=0.03)
    assert h100_8b.blocks == 25_720 and h100_8b.tokens == 411_520
    assert h100_8b.max_concurrent(6000) == 68


def test_seed003_50_gib_pool_holds_409600_tokens_and_68_requests():
    """Seed 003: ~50 GiB holds ~409,600 tokens -> 68 at 6k; the default 256 over-admits ~4x."""
    usable, weights = 72 * GB, get_model("llama-3.1-8b").weight_bytes
    b = kv_budget("h100-80gb", "llama-3.1-8b", gpu_memory_utilization=0.90,
                  activation_bytes=usable - weights - 50 * GiB)
    assert b.kv_bytes == 50 * GiB
    assert b.tokens == 409_600 and b.blocks == 25_600
    assert b.max_concurrent(2000 + 4000) == 68
    assert 256 / b.max_concurrent(6000) == pytest.approx(3.8, abs=0.05)


# ----------------------------------------------------------------------------- options


def test_overrides_and_block_sizes(belgavi):
    b = kv_budget("l40s-48gb", "llama-2-7b", gpu_memory_utilization=0.6, weight_bytes=0,
                  activation_bytes=0)
    assert b.kv_bytes == b.usable_bytes == 28_800_000_000
    for bs in BLOCK_SIZES:
        bb = kv_budget("l40s-48gb", "llama-2-7b", gpu_memory_utilization=0.6, block_size=bs)
        assert bb.tokens == bb.blocks * bs <= belgavi.kv_bytes // 524_288
        assert bb.block_bytes == bs * 524_288
    assert BLOCK_SIZES == (1, 2, 4, 8, 16, 32, 64, 128, 256)


def test_tensor_parallel_pool_and_kv_replication():
    tp4 = kv_budget("h100-80gb", "llama-3.1-70b", gpu_memory_utilization=0.9,
                    tensor_parallel_size=4)
    assert tp4.usable_bytes == 4 * 72 * GB
    assert tp4.activation_bytes == 4 * 2 * GB
    assert tp4.kv_bytes == 288 * GB - tp4.model.weight_bytes - 8 * GB
    assert tp4.kv_bytes_per_token == 327_680                    # 8 KV heads shard over 4 GPUs
    tp16 = kv_budget("h100-80gb", "llama-3.1-70b", gpu_memory_utilization=0.9,
                     tensor_parallel_size=16)
    assert tp16.kv_bytes_per_token == 2 * 327_680               # 16 GPUs, 8 KV heads: replicated
    ds = kv_budget("h200-141gb", "deepseek-v3", gpu_memory_utilization=0.9,
                   tensor_parallel_size=8)
    assert ds.kv_bytes_per_token == 8 * 70_272                  # the MLA latent lives on every GPU


def test_hybrid_state_counts_against_concurrency(hf_configs):
    b = kv_budget("h200-141gb", str(hf_configs["Qwen3-Next-80B-A3B-Thinking"]),
                  gpu_memory_utilization=0.9, tensor_parallel_size=2)
    assert b.state_blocks_per_request == math.ceil(39_518_208 / (24_576 * 16)) == 101
    assert b.max_concurrent(6000) == b.blocks // (375 + 101)
    assert "state/request" in b.describe()


def test_describe_names_units(belgavi):
    text = belgavi.describe()
    assert len(text.splitlines()) >= 8
    assert "28.80 GB = 26.82 GiB" in text
    assert "13.32 GB = 12.41 GiB" in text
    assert "1,588" in text and "25,408" in text
    assert "524,288 B" in text


# ----------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(gpu_memory_utilization=0), r"gpu_memory_utilization=0 is out of range: expected a number \(0, 1\]"),
    (dict(gpu_memory_utilization=1.01), r"gpu_memory_utilization=1.01 is out of range.*\(0, 1\]"),
    (dict(gpu_memory_utilization=float("nan")), r"gpu_memory_utilization=nan is not finite"),
    (dict(gpu_memory_utilization="high"), r"gpu_memory_utilization='high' is not a number"),
    (dict(gpu_memory_utilization=0.6, block_size=3), r"block_size=3 is not valid: expected one of 1, 2, 4, 8, 16"),
    (dict(gpu_memory_utilization=0.6, block_size=512), r"block_size=512"),
    (dict(gpu_memory_utilization=0.6, block_size="16"), r"block_size='16'"),
    (dict(gpu_memory_utilization=0.6, kv_dtype="int4"), r"kv_dtype='int4' is not known: expected one of fp32, fp16, bf16, fp8"),
    (dict(gpu_memory_utilization=0.6, activation_bytes=-1), r"activation_bytes=-1 is out of range: expected an integer >= 0"),
    (dict(gpu_memory_utilization=0.6, weight_bytes=1.5), r"weight_bytes=1.5 is not a whole number"),
    (dict(gpu_memory_utilization=0.6, tensor_parallel_size=0), r"tensor_parallel_size=0 is out of range"),
    (dict(gpu_memory_utilization=0.6, tensor_parallel_size=3), r"tensor_parallel_size=3 does not divide the 32"),
])
def test_bad_inputs_name_value_and_range(kwargs, pattern):
    with pytest.raises(KvsimError, match=pattern) as exc:
        kv_budget("l40s-48gb", "llama-2-7b", **kwargs)
    assert "\n" not in str(exc.value)


def test_weights_do_not_fit_says_both_numbers_and_least_utilisation():
    with pytest.raises(KvsimError) as exc:
        kv_budget("l40s-48gb", "llama-2-7b", gpu_memory_utilization=0.30)
    msg = str(exc.value)
    assert "usable 14.40 GB" in msg
    assert "weights 13.48 GB" in msg and "activations 2.00 GB" in msg
    assert "gpu_memory_utilization >= 0.33" in msg
    # and 0.33 indeed works while 0.32 does not
    assert kv_budget("l40s-48gb", "llama-2-7b", gpu_memory_utilization=0.33).blocks > 0
    with pytest.raises(KvsimError):
        kv_budget("l40s-48gb", "llama-2-7b", gpu_memory_utilization=0.32)


def test_model_too_big_for_any_utilisation_suggests_tensor_parallel():
    with pytest.raises(KvsimError, match=r"no gpu_memory_utilization in \(0, 1\] fits.*"
                                         r"tensor_parallel_size >= 4"):
        kv_budget("l40s-48gb", "llama-3.1-70b", gpu_memory_utilization=0.9)
    assert kv_budget("l40s-48gb", "llama-3.1-70b", gpu_memory_utilization=0.9,
                     tensor_parallel_size=4).blocks > 0


def test_pool_smaller_than_one_block_is_an_error():
    usable, weights = 28_800_000_000, 6_738_415_616 * 2
    act = usable - weights - 8 * MiB + 1            # leaves one byte less than a block
    with pytest.raises(KvsimError, match=r"less than one block of 8.39 MB"):
        kv_budget("l40s-48gb", "llama-2-7b", gpu_memory_utilization=0.6, activation_bytes=act)
    ok = kv_budget("l40s-48gb", "llama-2-7b", gpu_memory_utilization=0.6,
                   activation_bytes=act - 1)
    assert ok.blocks == 1 and ok.tokens == 16


def test_max_concurrent_validates_seq_len(belgavi):
    with pytest.raises(KvsimError, match=r"seq_len=0 is out of range: expected an integer >= 1"):
        belgavi.max_concurrent(0)
    assert belgavi.max_concurrent(belgavi.tokens + 1) == 0
    assert belgavi.max_concurrent(1) == belgavi.blocks
