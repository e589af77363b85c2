"""Bad input to the engine gives a one-line KvsimError naming the value and the valid range.

Covers every engine option of ``kvsim.simulate`` (``kvsim.ENGINE_DEFAULTS`` and the
cost-model constants of ``kvsim.CostModel``): negative, NaN, infinite, wrong type and
out-of-range values, unknown option names (the retired ``mfu`` and ``hbm_efficiency``
among them), combinations kvsim refuses (swap with engine V1, two pinned pools), the
defaults each engine mode fills in for the options left ``None``, unknown models and
GPUs, weights that do not fit the memory budget, workloads of the wrong type, and
``SimResult.summary(warmup_s=...)`` outside the run. Explained in chapter 2
(engine options) and the conventions of design §6 (one-line errors).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import kvsim
from kvsim.engine.costs import CostModel
from kvsim.engine.options import ENGINE_DEFAULTS, EngineConfig, resolve_options

R = kvsim.Request
MODEL = "llama-2-7b"
GPU = "a40-48gb"                       # the seeds' 48 GB card
MAX_MODEL_LEN = 4096                   # Llama-2's max_position_embeddings
ONE = [R(0.0, 16, 4)]
NAN, INF = float("nan"), float("inf")


def simulate(workload=ONE, **opts):
    opts.setdefault("model", MODEL)
    opts.setdefault("gpu", GPU)
    return kvsim.simulate(workload, **opts)


def error_of(**opts) -> str:
    """The message of the KvsimError that ``simulate(**opts)`` raises (one line)."""
    with pytest.raises(kvsim.KvsimError) as e:
        simulate(**opts)
    msg = str(e.value)
    assert "\n" not in msg, msg
    assert isinstance(e.value, ValueError)
    return msg


# (option, bad value, a fragment of the valid range the message must state)
BLOCKS = "1, 2, 4, 8, 16, 32, 64, 128, 256"
# vLLM's log line counts every block; V1 keeps one as the null block, so the least
# pool it can log is two blocks of 16 tokens (V0: one).
LOG_TOKENS_V1 = f"[{2 * 16}, {10**12}]"
MODEL_LEN = f"[1, {MAX_MODEL_LEN}]"
BAD_OPTIONS = [
    ("engine", "v2", "v1, v0"),
    ("engine", "V1", "v1, v0"),
    ("engine", None, "v1, v0"),
    ("engine", 1, "v1, v0"),
    ("usage_context", "batch", "server, llm"),
    ("usage_context", "Server", "server, llm"),
    ("usage_context", None, "server, llm"),
    ("gpu_memory_utilization", -0.1, "(0, 1]"),
    ("gpu_memory_utilization", 0, "(0, 1]"),
    ("gpu_memory_utilization", 1.5, "(0, 1]"),
    ("gpu_memory_utilization", NAN, "(0, 1]"),
    ("gpu_memory_utilization", INF, "(0, 1]"),
    ("gpu_memory_utilization", "lots", "(0, 1]"),
    ("gpu_memory_utilization", None, "(0, 1]"),
    ("gpu_memory_utilization", True, "(0, 1]"),
    ("kv_dtype", "int3", "fp32, fp16, bf16, fp8"),
    ("kv_dtype", 8, "fp32, fp16, bf16, fp8"),
    ("block_size", 0, BLOCKS),
    ("block_size", 3, BLOCKS),
    ("block_size", -16, BLOCKS),
    ("block_size", 512, BLOCKS),
    ("block_size", 16.5, BLOCKS),
    ("block_size", NAN, BLOCKS),
    ("block_size", "16k", BLOCKS),
    ("block_size", True, BLOCKS),
    ("num_gpu_blocks", 0, "[1, 1000000000]"),
    ("num_gpu_blocks", -5, "[1, 1000000000]"),
    ("num_gpu_blocks", 2.5, "[1, 1000000000]"),
    ("num_gpu_blocks", NAN, "[1, 1000000000]"),
    ("num_gpu_blocks", "many", "[1, 1000000000]"),
    ("num_gpu_blocks", True, "[1, 1000000000]"),
    ("kv_cache_tokens", 0, LOG_TOKENS_V1),
    ("kv_cache_tokens", -1, LOG_TOKENS_V1),
    ("kv_cache_tokens", 16, LOG_TOKENS_V1),             # one block: no room beside the null one
    ("kv_cache_tokens", 10**12 + 1, LOG_TOKENS_V1),
    ("kv_cache_tokens", 2.5, LOG_TOKENS_V1),
    ("kv_cache_tokens", NAN, LOG_TOKENS_V1),
    ("kv_cache_tokens", "many", LOG_TOKENS_V1),
    ("kv_cache_tokens", True, LOG_TOKENS_V1),
    ("max_num_seqs", 0, "[1, 1000000]"),
    ("max_num_seqs", -1, "[1, 1000000]"),
    ("max_num_seqs", 2.5, "[1, 1000000]"),
    ("max_num_seqs", NAN, "[1, 1000000]"),
    ("max_num_seqs", "x", "[1, 1000000]"),
    ("max_num_batched_tokens", 0, "[1, 100000000]"),
    ("max_num_batched_tokens", -512, "[1, 100000000]"),
    ("max_num_batched_tokens", NAN, "[1, 100000000]"),
    ("max_num_batched_tokens", "x", "[1, 100000000]"),
    ("max_num_batched_tokens", 100, ">= max_num_seqs (256)"),
    ("max_model_len", MAX_MODEL_LEN + 1, MODEL_LEN),      # above the model's
    ("max_model_len", 8000, MODEL_LEN),
    ("max_model_len", 0, MODEL_LEN),
    ("max_model_len", -1, MODEL_LEN),
    ("max_model_len", 2.5, MODEL_LEN),
    ("max_model_len", "long", MODEL_LEN),
    ("enable_chunked_prefill", "maybe", "true or false"),
    ("enable_chunked_prefill", 2, "true or false"),
    ("enable_chunked_prefill", None, "true or false"),
    ("long_prefill_token_threshold", -1, "[0, 100000000]"),
    ("long_prefill_token_threshold", 10**8 + 1, "[0, 100000000]"),
    ("long_prefill_token_threshold", 2.5, "[0, 100000000]"),
    ("long_prefill_token_threshold", NAN, "[0, 100000000]"),
    ("long_prefill_token_threshold", "x", "[0, 100000000]"),
    ("vllm_version", "0.35", "0.11 to 0.34"),
    ("vllm_version", 0.34, "0.11 to 0.34"),
    ("vllm_version", "latest", "0.11 to 0.34"),
    ("scheduler_reserve_full_isl", "maybe", "true or false"),
    ("scheduler_reserve_full_isl", 2, "true or false"),
    ("async_scheduling", "yes", "true or false"),
    ("async_scheduling", 1, "true or false"),
    ("enable_prefix_caching", "yes", "true or false"),
    ("enable_prefix_caching", 1, "true or false"),
    ("enable_prefix_caching", "on", "true or false"),
    ("watermark", -0.01, "[0, 0.5]"),
    ("watermark", 1.0, "[0, 0.5]"),
    ("watermark", 0.999, "[0, 0.5]"),
    ("watermark", NAN, "[0, 0.5]"),
    ("watermark", "x", "[0, 0.5]"),
    ("preemption_mode", "evict", "recompute, swap"),
    ("preemption_mode", None, "recompute, swap"),
    ("swap_space_bytes", -1, "[0, 1000000000000000]"),
    ("swap_space_bytes", 1.5, "[0, 1000000000000000]"),
    ("swap_space_bytes", NAN, "[0, 1000000000000000]"),
    ("swap_space_bytes", "4GiB", "[0, 1000000000000000]"),
    ("swap_space_full", "drop", "abort, recompute"),
    ("swap_space_full", "Abort", "abort, recompute"),
    ("swap_space_full", None, "abort, recompute"),
    ("kv_offloading_size", 0, "(0, 1000000]"),
    ("kv_offloading_size", float("nan"), "(0, 1000000]"),
    ("kv_offloading_backend", "disk", "native, lmcache"),
    ("prefix_cache_retention_interval", -16, "[0, 1000000000]"),
    ("prefix_cache_retention_interval", 1.5, "[0, 1000000000]"),
    ("prefix_cache_retention_interval", "none", "or 'dense'"),
    ("enable_hierarchical_cache", "yes", "true or false"),
    ("hicache_ratio", 0, "(0, 1000]"),
    ("hicache_ratio", NAN, "(0, 1000]"),
    ("hicache_size", -1, "[0, 1000000]"),
    ("hicache_size", 1.5, "[0, 1000000]"),
    ("hicache_write_policy", "later", "write_through, write_through_selective, write_back"),
    ("use_kv_cache_manager_v2", "yes", "true or false"),
    ("use_kv_cache_manager_v2", 1, "true or false"),
    ("host_cache_size", -1, "[0, 1000000000000000]"),
    ("host_cache_size", 1.5, "[0, 1000000000000000]"),
    ("host_cache_size", "4GiB", "[0, 1000000000000000]"),
    ("max_util_for_resume", -0.1, "[0, 1]"),
    ("max_util_for_resume", 1.01, "[0, 1]"),
    ("max_util_for_resume", NAN, "[0, 1]"),
    ("enable_recompute_pause", "no", "true or false"),
    ("unfit_requests", "drop", "reject, error"),
    ("unfit_requests", None, "reject, error"),
    ("scheduling_policy", "lifo", "fcfs, priority"),
    ("scheduling_policy", "FCFS", "fcfs, priority"),
    ("max_tokens", 0, ">= 1"),
    ("max_tokens", -1, ">= 1"),
    ("max_tokens", 2.5, ">= 1"),
    ("max_tokens", NAN, ">= 1"),
    ("admission", "greedy", "optimistic, guaranteed, sglang"),
    ("admission", None, "optimistic, guaranteed, sglang"),
    ("seed", -1, ">= 0"),
    ("seed", 1.5, ">= 0"),
    ("seed", "x", ">= 0"),
    ("until_s", 0, "> 0"),
    ("until_s", -1, "> 0"),
    ("until_s", NAN, "> 0"),
    ("until_s", INF, "> 0"),
    ("until_s", "soon", "> 0"),
    ("warmup_s", -1, ">= 0"),
    ("warmup_s", NAN, ">= 0"),
    ("warmup_s", INF, ">= 0"),
    ("tensor_parallel_size", 0, "[1, 1024]"),
    ("tensor_parallel_size", -2, "[1, 1024]"),
    ("tensor_parallel_size", 1.5, "[1, 1024]"),
    ("tensor_parallel_size", 3, "expected one of 1, 2, 4, 8, 16, 32"),
    ("activation_bytes", -1, ">= 0"),
    ("activation_bytes", 1.5, ">= 0"),
    ("activation_bytes", "2GB", ">= 0"),
    ("weight_bytes", -1, ">= 0"),
    ("weight_bytes", 1.5, ">= 0"),
    ("weight_bytes", NAN, ">= 0"),
    ("step_by_step", "x", "true or false"),
    ("step_by_step", 3, "true or false"),
    ("check", "yes", "true or false"),
    ("check", 1, "true or false"),
    ("step_overhead_s", -1, "[0, 10]"),
    ("step_overhead_s", NAN, "[0, 10]"),
    ("step_overhead_s", 11, "[0, 10]"),
    ("step_overhead_s", "x", "[0, 10]"),
    ("seq_overhead_s", -1, "[0, 1]"),
    ("seq_overhead_s", 2, "[0, 1]"),
    ("seq_overhead_s", NAN, "[0, 1]"),
    ("matmul_efficiency", 0, "(0, 1]"),
    ("matmul_efficiency", 1.5, "(0, 1]"),
    ("matmul_efficiency", -1, "(0, 1]"),
    ("matmul_efficiency", NAN, "(0, 1]"),
    ("memory_efficiency", 0, "(0, 1]"),
    ("memory_efficiency", 1.5, "(0, 1]"),
    ("memory_efficiency", NAN, "(0, 1]"),
    ("kernel_latency_s", -1e-6, "[0, 1]"),
    ("kernel_latency_s", 2, "[0, 1]"),
    ("kernel_latency_s", INF, "[0, 1]"),
    ("attention_efficiency", 0, "(0, 1]"),
    ("attention_efficiency", 1.5, "(0, 1]"),
    ("attention_efficiency", NAN, "(0, 1]"),
    ("swap_copy_overhead_s", -1e-6, "[0, 1]"),
    ("swap_copy_overhead_s", 2, "[0, 1]"),
    ("pcie_bytes_per_s", 0, "> 0"),
    ("pcie_bytes_per_s", -1, "> 0"),
    ("pcie_bytes_per_s", NAN, "> 0"),
    ("step_time_scale", 0, "[0.01, 100]"),
    ("step_time_scale", 101, "[0.01, 100]"),
    ("step_time_scale", NAN, "[0.01, 100]"),
]
# The SGLang policy's constants, checked when that policy is chosen.
BAD_SGLANG_OPTIONS = [
    ("init_new_token_ratio", 1.5, "[0, 1]"),
    ("init_new_token_ratio", -0.1, "[0, 1]"),
    ("init_new_token_ratio", NAN, "[0, 1]"),
    ("min_new_token_ratio", 0.9, "[0, 0.7]"),       # at most init_new_token_ratio
    ("min_new_token_ratio", -1, "[0, 0.7]"),
    ("new_token_ratio_decay", -1, "[0, 1]"),
    ("new_token_ratio_decay", 2, "[0, 1]"),
]


def _shown(value) -> list[str]:
    """Ways a message may show the bad value."""
    if isinstance(value, float) and math.isnan(value):
        return ["nan"]
    return [repr(value), str(value)]


@pytest.mark.parametrize("name, value, valid", BAD_OPTIONS,
                         ids=[f"{n}={v!r}" for n, v, _ in BAD_OPTIONS])
def test_a_bad_engine_option_is_a_one_line_error_naming_value_and_range(name, value, valid):
    msg = error_of(**{name: value})
    assert name in msg
    assert any(s in msg for s in _shown(value)), msg
    assert valid in msg, msg
    assert "expected" in msg


@pytest.mark.parametrize("name, value, valid", BAD_SGLANG_OPTIONS,
                         ids=[f"{n}={v!r}" for n, v, _ in BAD_SGLANG_OPTIONS])
def test_a_bad_sglang_constant_is_an_error(name, value, valid):
    msg = error_of(admission="sglang", **{name: value})
    assert name in msg and valid in msg and "expected" in msg
    assert any(s in msg for s in _shown(value)), msg


def test_every_engine_option_has_bad_values_above():
    """A new engine option must get its validation cases here."""
    covered = {n for n, _, _ in BAD_OPTIONS} | {n for n, _, _ in BAD_SGLANG_OPTIONS}
    assert set(ENGINE_DEFAULTS) | set(CostModel.names()) == covered


def test_attention_efficiency_none_is_a_one_line_error():
    """Unlike the GPU-calibrated efficiencies, attention_efficiency has no "None = default"."""
    msg = error_of(attention_efficiency=None)
    assert "attention_efficiency=None" in msg and "(0, 1]" in msg


def test_swap_needs_engine_v0():
    """vLLM V1 only recomputes: swap with engine="v1" (the default) is refused, naming v0."""
    for opts in ({"preemption_mode": "swap"}, {"preemption_mode": "swap", "engine": "v1"}):
        msg = error_of(**opts)
        assert "preemption_mode='swap'" in msg and "engine='v1'" in msg
        assert "expected engine='v0'" in msg
    assert simulate(preemption_mode="swap", engine="v0").config["preemption_mode"] == "swap"
    # swap with the prefix cache is not modelled (V0 ran it without)
    msg = error_of(preemption_mode="swap", engine="v0", enable_prefix_caching=True)
    assert "enable_prefix_caching=True" in msg and "expected enable_prefix_caching=False" in msg


def test_two_pinned_pools_are_an_error():
    """num_gpu_blocks and kv_cache_tokens both pin the pool: at most one may be given."""
    msg = error_of(num_gpu_blocks=100, kv_cache_tokens=1616)
    assert "num_gpu_blocks" in msg and "kv_cache_tokens" in msg and "at most one" in msg


def test_kv_cache_tokens_range_follows_the_engine():
    """V0 keeps no null block, so its least log line is one block of 16 tokens (V1: two)."""
    msg = error_of(kv_cache_tokens=0, engine="v0")
    assert "kv_cache_tokens=0" in msg and f"[16, {10**12}]" in msg
    msg = error_of(kv_cache_tokens=31, block_size=16)
    assert "kv_cache_tokens=31" in msg and LOG_TOKENS_V1 in msg
    msg = error_of(kv_cache_tokens=32, block_size=32)
    assert "kv_cache_tokens=32" in msg and f"[{2 * 32}, {10**12}]" in msg


PINS = [{"num_gpu_blocks": 100}, {"kv_cache_tokens": 101 * 16}]


@pytest.mark.parametrize("pin", PINS, ids=["num_gpu_blocks", "kv_cache_tokens"])
@pytest.mark.parametrize("name", ["block_size", "kv_dtype", "tensor_parallel_size", "engine"])
def test_options_of_the_pool_are_checked_with_an_explicit_num_gpu_blocks_too(name, pin):
    bad = {"block_size": 3, "kv_dtype": "int3", "tensor_parallel_size": 0, "engine": "v9"}[name]
    msg = error_of(**pin, **{name: bad})
    assert name in msg and "expected" in msg


@pytest.mark.parametrize("pin", PINS, ids=["num_gpu_blocks", "kv_cache_tokens"])
@pytest.mark.parametrize("name, value", [
    ("gpu_memory_utilization", 1.5), ("gpu_memory_utilization", NAN),
    ("activation_bytes", -1), ("weight_bytes", -1), ("weight_bytes", "x"),
    ("max_model_len", MAX_MODEL_LEN + 1),
])
def test_memory_options_are_checked_even_with_an_explicit_num_gpu_blocks(name, value, pin):
    try:
        simulate(**pin, **{name: value})
    except kvsim.KvsimError as e:
        assert name in str(e)
        return
    except ValueError as e:
        raise AssertionError(f"{name}={value!r} raised a bare {type(e).__name__}: {e}") from e
    raise AssertionError(f"{name}={value!r} was accepted with {pin}")


def test_both_pins_give_the_same_pool():
    """kv_cache_tokens is vLLM's log figure (every block, V1's null block included);
    num_gpu_blocks the usable blocks: 1,616 tokens = 101 blocks = 100 usable + the null one."""
    by_blocks = simulate(num_gpu_blocks=100).config
    by_log = simulate(kv_cache_tokens=101 * 16).config
    assert by_blocks["num_gpu_blocks"] == by_log["num_gpu_blocks"] == 100
    assert by_log["kv_cache_tokens"] == 1616 and by_blocks["kv_cache_tokens"] is None
    assert simulate(kv_cache_tokens=101 * 16, engine="v0").config["num_gpu_blocks"] == 101


# --------------------------------------------------------------------------------------------
# Defaults the engine mode decides (None in ENGINE_DEFAULTS)

MODE_DEPENDENT = {"max_num_seqs", "max_num_batched_tokens", "watermark", "enable_prefix_caching",
                  "scheduler_reserve_full_isl", "async_scheduling"}


def test_the_mode_dependent_defaults_are_none():
    assert ENGINE_DEFAULTS["engine"] == "v1" and ENGINE_DEFAULTS["usage_context"] == "server"
    assert all(ENGINE_DEFAULTS[name] is None for name in MODE_DEPENDENT)
    assert ENGINE_DEFAULTS["swap_space_full"] == "abort"
    assert ENGINE_DEFAULTS["long_prefill_token_threshold"] == 0


# vLLM's EngineArgs.get_batch_defaults (V1): at least 70 GiB and not an A100 -> 8,192 tokens
# and 1,024 sequences for the API server, 16,384 for the LLM class; otherwise 2,048 / 256
# (server) or 8,192 / 256 (LLM). V0: 2,048 / 256, a 0.01 watermark, no prefix caching and
# whole-prompt allocation; V1: no watermark, prefix caching on, the full-prompt gate on.
@pytest.mark.parametrize("gpu, engine, usage, seqs, tokens", [
    ("a40-48gb", "v1", "server", 256, 2048),
    ("a40-48gb", "v1", "llm", 256, 8192),
    ("a100-80gb", "v1", "server", 256, 2048),
    ("h100-80gb", "v1", "server", 1024, 8192),
    ("h100-80gb", "v1", "llm", 1024, 16384),
    ("h100-80gb", "v0", "server", 256, 2048),
    ("a40-48gb", "v0", "llm", 256, 2048),
])
def test_the_engine_mode_fills_in_the_none_defaults(gpu, engine, usage, seqs, tokens):
    _, _, budget, _, cfg = resolve_options("llama-3.1-8b", gpu, {"engine": engine,
                                                                 "usage_context": usage})
    assert isinstance(cfg, EngineConfig)
    assert (cfg.engine, cfg.usage_context) == (engine, usage)
    assert (cfg.max_num_seqs, cfg.max_num_batched_tokens) == (seqs, tokens)
    v1 = engine == "v1"
    assert cfg.watermark == (0.0 if v1 else 0.01)
    assert cfg.watermark_blocks == int(cfg.watermark * cfg.num_gpu_blocks)
    assert cfg.enable_prefix_caching is v1 and cfg.scheduler_reserve_full_isl is v1
    assert cfg.whole_prompt_allocation is (not v1) and cfg.watermark_when_alone is (not v1)
    assert cfg.max_model_len == kvsim.get_model("llama-3.1-8b").max_model_len
    assert cfg.num_gpu_blocks == budget.vllm_blocks - (1 if v1 else 0)


def test_explicit_values_override_the_mode_defaults():
    _, _, _, _, cfg = resolve_options(MODEL, GPU, dict(
        engine="v0", enable_prefix_caching="true", scheduler_reserve_full_isl=True,
        watermark=0.0, max_num_seqs=8, max_num_batched_tokens=512, max_model_len=1024))
    assert (cfg.enable_prefix_caching, cfg.scheduler_reserve_full_isl, cfg.watermark,
            cfg.max_num_seqs, cfg.max_num_batched_tokens, cfg.max_model_len) == \
        (True, True, 0.0, 8, 512, 1024)
    # without chunked prefill a whole prompt must fit one step: the budget grows to
    # max_model_len, as vLLM's SchedulerConfig does
    _, _, _, _, cfg = resolve_options(MODEL, GPU, dict(enable_chunked_prefill=False))
    assert cfg.max_num_batched_tokens == MAX_MODEL_LEN
    _, _, _, _, cfg = resolve_options(MODEL, GPU, dict(enable_chunked_prefill=False,
                                                       max_model_len=1024))
    assert cfg.max_num_batched_tokens == 2048


@pytest.mark.parametrize("name, value", [("init_new_token_ratio", 1.5),
                                         ("new_token_ratio_decay", -1)])
def test_sglang_constants_are_checked_whatever_the_admission(name, value):
    try:
        simulate(**{name: value})
    except kvsim.KvsimError as e:
        assert name in str(e)
        return
    raise AssertionError(f"{name}={value!r} was accepted with admission='optimistic'")


def test_valid_spellings_are_accepted():
    """The boundaries of each range, numeric strings and booleans as text are fine."""
    simulate(gpu_memory_utilization=1.0, watermark=0.0, swap_space_bytes=0, until_s=1e-9,
             warmup_s=0, max_num_seqs=1, max_num_batched_tokens=1, block_size=1,
             enable_chunked_prefill="True", step_by_step="true", matmul_efficiency=1.0,
             memory_efficiency=1.0, attention_efficiency=1.0, kernel_latency_s=0,
             step_overhead_s=0, seq_overhead_s=0, swap_copy_overhead_s=0, max_tokens="3",
             num_gpu_blocks="100", long_prefill_token_threshold=10**8,
             max_model_len=MAX_MODEL_LEN, enable_prefix_caching="False",
             scheduler_reserve_full_isl="true", usage_context="llm")
    # the least V1 log line: the null block and one of 16 tokens, enough for 8 + 4 tokens
    assert simulate([R(0.0, 8, 4)], kv_cache_tokens="32").config["num_gpu_blocks"] == 1
    simulate(engine="v0", preemption_mode="swap", swap_space_full="recompute",
             kv_cache_tokens=16 * 10, long_prefill_token_threshold=0, max_model_len="20")
    simulate(admission="sglang", init_new_token_ratio=0.0, min_new_token_ratio=0.0,
             new_token_ratio_decay=0.0)
    simulate(enable_chunked_prefill="false", max_num_batched_tokens=19, max_num_seqs=8)  # 16+4-1


# --------------------------------------------------------------------------------------------
# Option names, models, GPUs, memory


# mfu and hbm_efficiency were kvsim 1's cost constants (now matmul_efficiency and
# memory_efficiency, calibrated per GPU); num_gpu_blocks_override is vLLM's spelling.
@pytest.mark.parametrize("name", ["max_num_seq", "MAX_TOKENS", "gpu_util", "swap_space", "mfu",
                                  "hbm_efficiency", "num_gpu_blocks_override"])
def test_an_unknown_option_name_is_an_error_listing_the_known_ones(name):
    msg = error_of(**{name: 1})
    assert f"engine option {name!r} is not known" in msg
    for known in ("max_num_seqs", "swap_space_bytes", "matmul_efficiency", "memory_efficiency",
                  "engine", "kv_cache_tokens", "enable_prefix_caching", "swap_space_full"):
        assert known in msg, known


@pytest.mark.parametrize("model", ["gpt-9", "llama-2-7", 5, None, 3.5])
def test_an_unknown_model_is_an_error_listing_the_presets(model):
    msg = error_of(model=model)
    assert "model=" in msg and "llama-2-7b" in msg and "expected" in msg


def test_a_missing_config_path_is_an_error():
    msg = error_of(model="/nonexistent/dir/config.json")
    assert "/nonexistent/dir/config.json" in msg and "expected" in msg


@pytest.mark.parametrize("gpu", ["rtx-9090", "", None, 80])
def test_an_unknown_gpu_is_an_error_listing_the_presets(gpu):
    msg = error_of(gpu=gpu)
    assert "gpu=" in msg and "l40s-48gb" in msg and "h100-80gb" in msg and "expected" in msg


def test_weights_larger_than_the_memory_budget_are_an_error_with_a_way_out():
    msg = error_of(model="llama-3.1-70b")
    # 70,553,706,496 parameters (model card) x 2 B = 141.11 GB
    assert "gpu_memory_utilization=0.9" in msg and "141.11 GB" in msg
    assert "expected tensor_parallel_size >= 4" in msg
    msg = error_of(weight_bytes=10**12)
    assert "1,000.00 GB" in msg and "expected" in msg
    # Just too much at a low utilisation: the message gives the least one that fits. On the
    # A40 (47,608,692,736 B as CUDA reports it) Llama-2-7B needs its weights (13.48 GB), the
    # profiling peak of 2,048 tokens and 256 sequences, 0.3 GiB of non-PyTorch memory and
    # two 8 MiB blocks (V1's null block and one): 14.02 GB, i.e. 29.44 % -> 0.30.
    weights = 6_738_415_616 * 2
    peak = 2048 * (3 * 11_008 + 2 * 4_096) * 2 + 256 * 32_000 * 4
    needed = weights + peak + 3 * 2**30 // 10 + 2 * 16 * 524_288
    least = math.ceil(needed / 47_608_692_736 * 100) / 100
    assert least == 0.30
    msg = error_of(gpu_memory_utilization=0.29)
    assert "gpu_memory_utilization=0.29" in msg and f"weights {weights / 1e9:.2f} GB" in msg
    assert f"expected gpu_memory_utilization >= {least:.2f}" in msg
    simulate(gpu_memory_utilization=least)            # and that one does fit


# --------------------------------------------------------------------------------------------
# Workloads


@pytest.mark.parametrize("workload", [{"arrival_s": 0}, "requests.csv", 5, None, 2.5,
                                      np.array([[0.0, 16, 4]]), kvsim.Workload])
def test_a_workload_of_the_wrong_type_is_an_error(workload):
    with pytest.raises(kvsim.KvsimError) as e:
        simulate(workload)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("workload=") and "expected a kvsim.Workload or a list of kvsim.Request" \
        in msg


@pytest.mark.parametrize("requests, fragment", [
    ([(0.0, -1, 4)], "requests[0]: prompt_tokens=-1 is out of range"),
    ([(0.0, 16, 0)], "requests[0]: output_tokens=0 is out of range"),
    ([(-1.0, 16, 4)], "requests[0]: arrival_s=-1.0 is out of range"),
    ([(NAN, 16, 4)], "requests[0]: arrival_s=nan is not finite"),
    ([R(0.0, 16, 4), "x"], "requests[1]: 'x' is not a request"),
    ([(0.0, 16)], "requests[0]: (0.0, 16) is not a request"),
    ([{"arrival_s": 0, "prompt_tokens": 5}], "requests[0]="),
])
def test_a_bad_request_in_a_list_is_named_by_its_index(requests, fragment):
    with pytest.raises(kvsim.KvsimError) as e:
        simulate(requests)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_a_single_request_a_tuple_and_an_empty_list_are_workloads():
    assert simulate(R(0.0, 16, 4)).requests.num_rows == 1
    assert simulate((R(0.0, 16, 4), (0.1, 8, 2))).requests.num_rows == 2
    assert simulate([]).requests.num_rows == 0


# --------------------------------------------------------------------------------------------
# SimResult.summary(warmup_s=...)


@pytest.fixture(scope="module")
def short_run():
    return simulate([R(0.0, 16, 4), R(0.05, 16, 4)], num_gpu_blocks=10)


@pytest.mark.parametrize("beyond", [1.0, 100.0])
def test_summary_warmup_beyond_the_run_is_an_error_naming_the_run_length(short_run, beyond):
    end = short_run.simulated_s
    with pytest.raises(kvsim.KvsimError) as e:
        short_run.summary(warmup_s=beyond)
    msg = str(e.value)
    assert "\n" not in msg
    assert f"warmup_s={beyond}" in msg and f"[0, {end})" in msg


def test_summary_warmup_equal_to_the_run_length_is_an_error(short_run):
    end = short_run.simulated_s
    with pytest.raises(kvsim.KvsimError, match=r"warmup_s=.* is out of range"):
        short_run.summary(warmup_s=end)
    short_run.summary(warmup_s=end * 0.999)          # just inside: fine


@pytest.mark.parametrize("bad, fragment", [(-1, ">= 0"), (NAN, "not finite"), (INF, "not finite"),
                                           ("soon", "not a number"), (True, "not a number")])
def test_summary_warmup_of_the_wrong_kind_is_an_error(short_run, bad, fragment):
    with pytest.raises(kvsim.KvsimError) as e:
        short_run.summary(warmup_s=bad)
    assert "warmup_s=" in str(e.value) and fragment in str(e.value)


# ------------------------------------------------------------ remembered resolutions
# resolve_options remembers its last answers (kvsim/engine/options.py, RESOLVED_MAX), keyed
# on the specs and each option's type and repr: a value that only equals a good one is still
# checked, and the answer is the one a fresh resolution gives.

def test_a_value_equal_to_a_remembered_good_one_is_still_refused():
    simulate(enable_prefix_caching=True, max_num_seqs=8)
    assert "enable_prefix_caching=1 is not a boolean" in error_of(enable_prefix_caching=1,
                                                                   max_num_seqs=8)
    simulate(max_num_seqs=1)
    assert "max_num_seqs=True is not a whole number" in error_of(max_num_seqs=True)


def test_a_remembered_resolution_is_a_fresh_ones_answer():
    from kvsim.engine import options

    opts = dict(engine="v0", preemption_mode="swap", max_num_seqs=16, warmup_s=0.0)
    first = resolve_options(MODEL, GPU, opts)
    again = resolve_options(kvsim.get_model(MODEL), kvsim.get_gpu(GPU), dict(reversed(opts.items())))
    assert again == first                                   # the same specs, the same options
    assert all(a is b for a, b in zip(again[:4], first[:4], strict=True))
    assert again[4] is not first[4]                         # each run its own config
    object.__setattr__(again[4], "max_num_seqs", 1)         # a fault planted in one run's
    assert resolve_options(MODEL, GPU, opts)[4].max_num_seqs == 16
    fresh = options._resolve(MODEL, GPU, opts)
    assert fresh == first and fresh is not first
    negative_zero = resolve_options(MODEL, GPU, dict(opts, warmup_s=-0.0))[4]
    assert repr(negative_zero.warmup_s) == "-0.0"           # not the remembered 0.0's


def test_remembered_resolutions_are_bounded_and_bad_input_is_never_remembered():
    from kvsim.engine import options

    for n in range(1, options.RESOLVED_MAX + 20):
        resolve_options(MODEL, GPU, {"max_num_seqs": n})
    assert len(options._resolved) == options.RESOLVED_MAX
    with pytest.raises(kvsim.KvsimError):
        resolve_options(MODEL, GPU, {"max_num_seqs": 0})
    with pytest.raises(kvsim.KvsimError):
        resolve_options("no-such-model", GPU, {"max_num_seqs": 8})
    assert all(("max_num_seqs", int, "0") not in key[1] for key in options._resolved)
    assert all(key[0][0].name == MODEL for key in options._resolved)


@pytest.mark.parametrize("opts", [{}, dict(engine="v0", preemption_mode="swap"),
                                  dict(admission="sglang", enable_hierarchical_cache=True),
                                  dict(kv_offloading_size=4.0, until_s=30.0)])
def test_the_config_dict_is_asdicts_with_plain_values(opts):
    import dataclasses

    cfg = resolve_options(MODEL, GPU, opts)[4]
    assert cfg.to_dict() == dataclasses.asdict(cfg)
    assert list(cfg.to_dict()) == [f.name for f in dataclasses.fields(cfg)]
    assert all(type(v) in (str, int, float, bool, type(None)) for v in cfg.to_dict().values())
