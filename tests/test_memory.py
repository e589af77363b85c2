"""Bytes per token and the KV budget (chapter 1, *Bytes per token and capacity*).

Seed 000 = "KV Cache Preemption in vLLM"; seed 003 = "Throughput collapse under load".
"""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

import kvsim
from kvsim.errors import KvsimError
from kvsim.model.memory import (
    BLOCK_SIZES,
    KV_DTYPES,
    KVBudget,
    kv_budget,
    kv_bytes_per_token,
    peak_activation_bytes,
    pinned_budget,
)
from kvsim.model.presets import get_model
from kvsim.units import GB, MB, GiB, MiB

A40 = kvsim.get_gpu("a40-48gb")
#: The seeds' reading of their card: 48 GB decimal, as on the datasheet.
SEED_CARD = replace(A40, name="seeds-48gb", memory_bytes=48 * GB)


def _activation(model, tokens, seqs, inter, hidden, vocab):
    """vLLM's profiling peak as kvsim estimates it, written out again here."""
    return tokens * (3 * inter + 2 * hidden) * 2 + seqs * vocab * 4 + 3 * GiB // 10


@pytest.fixture(scope="module")
def belgavi() -> KVBudget:
    return kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.60)


@pytest.fixture(scope="module")
def seed_belgavi() -> KVBudget:
    """Seed 000's own arithmetic: 48 GB decimal, 2 GB of activations, no null block."""
    return kv_budget(SEED_CARD, "llama-2-7b", gpu_memory_utilization=0.60,
                     activation_bytes=2 * GB, engine="v0")


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


def test_seed000_the_seeds_own_arithmetic_reproduces_exactly(seed_belgavi):
    """Seed 000: 48 GB x 0.60 = 28.8 GB; 13.5 GB of FP16 weights; ~2 GB; ~13.3 GB for KV;
    ~26,600 tokens (13.3 GB / 0.5 MB, decimal) or ~1,700 blocks; ~24 requests at 850 + 250."""
    b = seed_belgavi
    assert b.usable_bytes == 28_800_000_000
    assert b.weight_bytes == 6_738_415_616 * 2 == pytest.approx(13.5 * GB, rel=0.01)
    assert b.kv_bytes == 28_800_000_000 - 6_738_415_616 * 2 - 2 * GB == 13_323_168_768
    decimal_tokens = b.kv_bytes / 500_000
    assert pytest.approx(decimal_tokens, rel=0.01) == 26_600
    assert pytest.approx(decimal_tokens / 16, rel=0.03) == 1_700
    assert int(13.3 * GB / 500_000) // 1100 == 24
    # kvsim's exact reading of the same bytes: 0.5 MiB per token, whole blocks
    assert b.blocks == 13_323_168_768 // (8 * MiB) == 1_588 and b.max_concurrent(1100) == 23
    assert decimal_tokens / (b.kv_bytes / b.kv_bytes_per_token) == pytest.approx(MiB / MB)


def test_seed000_belgavi_as_vllm_v1_budgets_it_on_the_a40(belgavi):
    """The same server as vLLM V1 computes it: CUDA's 47.6 GB x 0.60, the weights, the
    profiling peak (2,048 tokens and 256 sequences on a 48 GB card) plus 0.3 GiB of
    non-PyTorch memory, then one null block aside."""
    usable = round(A40.memory_bytes * 0.6)
    act = _activation(None, 2048, 256, 11008, 4096, 32000)
    assert belgavi.usable_bytes == usable
    assert belgavi.activation_bytes == act == belgavi.peak_activation_bytes + belgavi.non_torch_bytes
    assert belgavi.kv_bytes == usable - 6_738_415_616 * 2 - act
    assert belgavi.vllm_blocks == belgavi.kv_bytes // (8 * MiB)
    assert belgavi.blocks == belgavi.vllm_blocks - 1 == 1_735
    assert belgavi.tokens == 1_735 * 16 and belgavi.log_tokens == 1_736 * 16
    # close to the seed's figures: ~13.3 GB, ~26,600 tokens, ~1,700 blocks, ~24 requests
    assert belgavi.kv_bytes / GB == pytest.approx(14.56, abs=0.01)
    assert belgavi.tokens == pytest.approx(26_600, rel=0.05)
    assert belgavi.max_concurrent(850 + 250) == 25


def test_seed000_belgavi_longer_answers_850_plus_600(belgavi, seed_belgavi):
    """Seed 000: answers of ~600 tokens -> ~1,450 tokens each -> capacity ~18."""
    assert int(13.3 * GB / 500_000) // 1450 == 18
    assert seed_belgavi.max_concurrent(850 + 600) == 17
    assert belgavi.max_concurrent(850 + 600) == 1_735 // 91 == 19


def test_seed000_fp8_kv_roughly_doubles_capacity(belgavi):
    """Seed 000: an FP8 KV cache "roughly doubles capacity"."""
    fp8 = kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.60, kv_dtype="fp8")
    assert fp8.kv_bytes == belgavi.kv_bytes
    assert fp8.kv_bytes_per_token == 262_144
    assert fp8.vllm_blocks == 2 * belgavi.vllm_blocks
    assert fp8.max_concurrent(1100) == 2 * belgavi.max_concurrent(1100)


def test_seed000_guaranteed_reservation_admits_under_half(belgavi):
    """Seed 000: reserving 850 + 1,500 = 2,350 tokens vs ~1,100 used admits under half as many."""
    assert belgavi.max_concurrent(2350) * 2 < belgavi.max_concurrent(1100)


# ----------------------------------------------------------------------------- seed 003: 8B on H100


def test_a_real_vllm_log_llama_3_1_8b_on_an_h100_at_0_90(h100_8b):
    """Published vLLM V1 start-up logs for Llama-3.1-8B-Instruct on an H100 at 0.90 print
    "GPU KV cache size: 447,088 tokens" (and 447,776), after "total_gpu_memory (79.11GiB)",
    "model weights take 14.99GiB", "PyTorch activation peak memory takes 1.19-1.24GiB".
    kvsim, from the model, the GPU and vLLM's rules alone: within 0.5 %."""
    assert h100_8b.log_tokens == pytest.approx(447_088, rel=0.005)
    assert h100_8b.weight_bytes / GiB == pytest.approx(14.99, abs=0.05)
    assert h100_8b.peak_activation_bytes / GiB == pytest.approx(1.22, rel=0.06)
    # pinned to that log line, the pool is exactly the server's
    pinned = pinned_budget("h100-80gb", "llama-3.1-8b", kv_cache_tokens=447_088)
    assert pinned.vllm_blocks == 447_088 // 16 == 27_943 and pinned.blocks == 27_942


def test_seed003_llama8b_h100_pool_is_about_50_gib(h100_8b):
    """Seed 003: 80 GB H100 at 0.90, ~16 GB weights, a few GB more -> "~50 GiB of KV". With the
    memory CUDA reports (79.18 GiB) vLLM V1 leaves ~54.7 GiB: 74 requests of 6,000 tokens."""
    assert h100_8b.weight_bytes == pytest.approx(16 * GB, rel=0.01)
    assert h100_8b.kv_bytes / GiB == pytest.approx(54.7, abs=0.1)
    assert h100_8b.max_concurrent(6000) == h100_8b.blocks // 375 == 74


def test_seed003_50_gib_pool_holds_409600_tokens_and_68_requests():
    """Seed 003: ~50 GiB holds ~409,600 tokens -> 68 at 6k; a max_num_seqs of 256 over-admits
    ~4x (vLLM V1 defaults to 1,024 on an H100: ~14x)."""
    usable, weights = round(kvsim.get_gpu("h100-80gb").memory_bytes * 0.9), \
        get_model("llama-3.1-8b").weight_bytes
    b = kv_budget("h100-80gb", "llama-3.1-8b", gpu_memory_utilization=0.90, engine="v0",
                  activation_bytes=usable - weights - 50 * GiB)
    assert b.kv_bytes == 50 * GiB
    assert b.tokens == 409_600 and b.blocks == 25_600
    assert b.max_concurrent(2000 + 4000) == 68
    assert 256 / b.max_concurrent(6000) == pytest.approx(3.8, abs=0.05)


def test_peak_activation_follows_the_batch_limits():
    """The profiling run's peak grows with max_num_batched_tokens and max_num_seqs."""
    m = get_model("llama-3.1-8b")
    small = peak_activation_bytes(m, max_num_batched_tokens=2048, max_num_seqs=256)
    big = peak_activation_bytes(m, max_num_batched_tokens=8192, max_num_seqs=1024)
    assert big == 4 * small
    assert small == 2048 * (3 * 14336 + 2 * 4096) * 2 + 256 * 128256 * 4
    b_llm = kv_budget("h100-80gb", m, gpu_memory_utilization=0.9, usage_context="llm")
    b_srv = kv_budget("h100-80gb", m, gpu_memory_utilization=0.9)
    assert b_llm.peak_activation_bytes > b_srv.peak_activation_bytes   # 16,384 vs 8,192 tokens


# ----------------------------------------------------------------------------- options


def test_overrides_and_block_sizes(belgavi):
    b = kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.6, weight_bytes=0,
                  activation_bytes=0)
    assert b.kv_bytes == b.usable_bytes == round(A40.memory_bytes * 0.6)
    for bs in BLOCK_SIZES:
        bb = kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.6, block_size=bs)
        assert bb.tokens == bb.blocks * bs <= belgavi.kv_bytes // 524_288
        assert bb.block_bytes == bs * 524_288
        assert bb.vllm_blocks == bb.blocks + 1
    v0 = kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.6, engine="v0")
    assert v0.null_blocks == 0
    assert BLOCK_SIZES == (1, 2, 4, 8, 16, 32, 64, 128, 256)


def test_tensor_parallel_pool_and_kv_replication():
    tp4 = kv_budget("h100-80gb", "llama-3.1-70b", gpu_memory_utilization=0.9,
                    tensor_parallel_size=4)
    assert tp4.usable_bytes == round(4 * kvsim.get_gpu("h100-80gb").memory_bytes * 0.9)
    assert tp4.non_torch_bytes == 4 * (3 * GiB // 10)
    assert tp4.peak_activation_bytes == 4 * peak_activation_bytes(
        "llama-3.1-70b", max_num_batched_tokens=8192, max_num_seqs=1024, tensor_parallel_size=4)
    assert tp4.kv_bytes == tp4.usable_bytes - tp4.model.weight_bytes - tp4.activation_bytes
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
    assert "28.57 GB = 26.60 GiB" in text
    assert "14.56 GB = 13.56 GiB" in text
    assert "1,735 usable (1,736 in vLLM's log" in text and "27,760" in text
    assert "524,288 B" in text and "profiling peak" in text


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
    (dict(gpu_memory_utilization=0.6, tensor_parallel_size=3), r"tensor_parallel_size=3 cannot split llama-2-7b: its 32 attention heads do not divide"),
])
def test_bad_inputs_name_value_and_range(kwargs, pattern):
    with pytest.raises(KvsimError, match=pattern) as exc:
        kv_budget("a40-48gb", "llama-2-7b", **kwargs)
    assert "\n" not in str(exc.value)


def test_weights_do_not_fit_says_both_numbers_and_least_utilisation():
    with pytest.raises(KvsimError) as exc:
        kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.28)
    msg = str(exc.value)
    assert "usable 13.33 GB" in msg
    assert "weights 13.48 GB" in msg and "activations 0.52 GB" in msg
    assert "gpu_memory_utilization >= 0.30" in msg
    # and 0.30 indeed works while 0.29 does not
    assert kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.30).blocks > 0
    with pytest.raises(KvsimError):
        kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.29)


def test_model_too_big_for_any_utilisation_suggests_tensor_parallel():
    with pytest.raises(KvsimError, match=r"no gpu_memory_utilization in \(0, 1\] fits.*"
                                         r"tensor_parallel_size >= 4"):
        kv_budget("a40-48gb", "llama-3.1-70b", gpu_memory_utilization=0.9)
    assert kv_budget("a40-48gb", "llama-3.1-70b", gpu_memory_utilization=0.9,
                     tensor_parallel_size=4).blocks > 0


def test_pool_smaller_than_one_block_is_an_error():
    usable, weights = round(A40.memory_bytes * 0.6), 6_738_415_616 * 2
    act = usable - weights - 16 * MiB + 1        # one byte short of a block and the null block
    with pytest.raises(KvsimError, match=r"less than two blocks of 8.39 MB"):
        kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.6, activation_bytes=act)
    ok = kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.6,
                   activation_bytes=act - 1)
    assert ok.blocks == 1 and ok.tokens == 16 and ok.vllm_blocks == 2
    v0 = kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.6, engine="v0",
                   activation_bytes=act + 8 * MiB - 1)
    assert v0.blocks == 1


def test_max_concurrent_validates_seq_len(belgavi):
    with pytest.raises(KvsimError, match=r"seq_len=0 is out of range: expected an integer >= 1"):
        belgavi.max_concurrent(0)
    assert belgavi.max_concurrent(belgavi.tokens + 1) == 0
    assert belgavi.max_concurrent(1) == belgavi.blocks


def test_pinned_budget_needs_exactly_one_figure():
    with pytest.raises(KvsimError, match="exactly one of num_gpu_blocks or kv_cache_tokens"):
        pinned_budget("h100-80gb", "llama-3.1-8b")
    with pytest.raises(KvsimError, match="exactly one"):
        pinned_budget("h100-80gb", "llama-3.1-8b", num_gpu_blocks=10, kv_cache_tokens=320)
    with pytest.raises(KvsimError, match=r"kv_cache_tokens=16 is out of range: expected an integer \[32"):
        pinned_budget("h100-80gb", "llama-3.1-8b", kv_cache_tokens=16)
    b = pinned_budget("h100-80gb", "llama-3.1-8b", num_gpu_blocks=1000)
    assert b.blocks == 1000 and b.vllm_blocks == 1001 and b.pinned
    assert "pinned to 1,001 blocks" in b.describe()


def test_the_start_up_log_lines_follow_vllm_v1():
    """vLLM V1's pool lines, release by release (read in the wheels' vllm/v1/core/kv_cache_utils.py):
    the concurrency is num_gpu_blocks / ceil(L / block_size), the null block counted; the size
    is num_gpu_blocks x block_size up to 0.20 and int(concurrency x L) from 0.23 (a float product,
    truncated: 1 token short at L = 20,000 here); one line from 0.28. kvsim's pool against real
    start-up logs is pinned below (benchmarks/startup_logs.json)."""
    import kvsim

    b = kvsim.kv_budget("h100-80gb", "llama-3.1-8b", gpu_memory_utilization=0.90)
    assert b.log_concurrency() == b.vllm_blocks / (131_072 // 16)
    assert b.log_concurrency(4_097) == b.vllm_blocks / 257
    most = f"Maximum concurrency for 131,072 tokens per request: {b.log_concurrency():.2f}x"
    size = f"GPU KV cache size: {b.vllm_blocks * 16:,} tokens"
    assert b.startup_log() == [f"{size}, {most}"] == b.startup_log(vllm_version="0.34.0")
    assert b.startup_log(vllm_version="0.28") == [f"{size}, {most}"]
    assert b.startup_log(vllm_version="0.27") == [size, most]
    # A length that is not a multiple of the block size: 0.23+ derive the size from it.
    concurrency = b.vllm_blocks / 1_250
    assert b.startup_log(20_000, "0.20")[0] == size
    assert b.startup_log(20_000, "0.23")[0] == f"GPU KV cache size: {int(concurrency * 20_000):,} tokens"
    assert int(concurrency * 20_000) == b.vllm_blocks * 16 - 1
    with pytest.raises(kvsim.KvsimError, match="max_model_len"):
        b.log_concurrency(0)
    with pytest.raises(kvsim.KvsimError, match=r"vllm_version='0.9' is not a release .* 0.11 to 0.34"):
        b.startup_log(vllm_version="0.9")
    # The pool can be pinned to either line: the log's N read back into its blocks, release by release.
    for version, length in (("0.34", 20_000), ("0.34", 4_097), ("0.20", 20_000), ("0.34", 131_072)):
        logged = int(b.startup_log(length, version)[0].split()[4].rstrip(",").replace(",", ""))
        pinned = pinned_budget("h100-80gb", "llama-3.1-8b", kv_cache_tokens=logged,
                                     max_model_len=length, vllm_version=version)
        assert pinned.vllm_blocks == b.vllm_blocks and pinned.startup_log(length, version) == \
            b.startup_log(length, version)
    # simulate reads the line at the run's own max_model_len and vllm_version.
    one = [kvsim.Request(0.0, 100, 10)]
    run = kvsim.simulate(one, model="llama-3.1-8b", gpu="h100-80gb", kv_cache_tokens=448_367,
                         max_model_len=20_000)
    assert run.config["num_gpu_blocks"] == b.vllm_blocks - 1
    with pytest.raises(kvsim.KvsimError, match="max_model_len=131,072"):
        kvsim.simulate(one, model="llama-3.1-8b", gpu="h100-80gb", kv_cache_tokens=448_367)
    with pytest.raises(kvsim.KvsimError, match=r"kv_cache_tokens=448,370 is not a size vLLM 0.34 "
                       r"prints for llama-3.1-8b at block_size=16 and max_model_len=131,072"):
        pinned_budget("h100-80gb", "llama-3.1-8b", kv_cache_tokens=448_370)
    v0 = kvsim.kv_budget("h100-80gb", "llama-3.1-8b", gpu_memory_utilization=0.90, engine="v0")
    with pytest.raises(kvsim.KvsimError, match="engine='v0'"):
        v0.startup_log()


# ----------------------------------------------------------------------------- published start-up logs


def _startup_logs():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "startup_logs.py"
    spec = importlib.util.spec_from_file_location("startup_logs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_pool_against_published_start_up_logs_at_20k_and_29k_contexts():
    """vLLM issue #10517 (RTX 3090, Llama-3.1-8B, 0.90, V0 profiling max_model_len tokens):
    the server logged 1,952 and 1,478 blocks; kvsim predicts 3.2 % and 6.6 % more. The
    parts, from the log's own figures: the weights 0.031 GiB light (the 131,072 x 128
    bf16 RoPE cos/sin cache vLLM counts with the weights), the profiling peak 0.04 and
    0.10 GiB light (it grows with the tokens profiled: 7 % more per token than kvsim's
    count), non-PyTorch memory 0.05 GiB light (0.35 GiB logged, kvsim's 0.3)."""
    rows = {r["max_model_len"]: r for r in _startup_logs().table()}
    assert [(r["log_blocks"], r["kvsim_blocks"]) for r in rows.values()] == [(1952, 2014),
                                                                               (1478, 1575)]
    assert 0 < rows[20000]["error"] < 0.033 and 0 < rows[29000]["error"] < 0.067
    for r in rows.values():
        assert r["d_weights_gib"] == pytest.approx(-(131_072 * 128 * 2) / GiB, abs=0.001)
        assert r["d_non_torch_gib"] == pytest.approx(-0.05, abs=1e-9)
        assert r["source"].startswith("https://github.com/vllm-project/vllm/issues/")
    # the activation shortfall grows with the tokens profiled
    assert rows[29000]["d_activations_gib"] < rows[20000]["d_activations_gib"] < 0
