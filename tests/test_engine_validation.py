"""Bad input to the engine gives a one-line KvsimError naming the value and the valid range.

Covers every engine option of ``kvsim.simulate`` (``kvsim.ENGINE_DEFAULTS`` and the
cost-model constants of ``kvsim.CostModel``): negative, NaN, infinite, wrong type and
out-of-range values, unknown option names, unknown models and GPUs, weights that do
not fit the memory budget, workloads of the wrong type, and
``SimResult.summary(warmup_s=...)`` outside the run. Explained in chapter 2
(engine options) and the conventions of design §6 (one-line errors).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import kvsim
from kvsim.costs import CostModel
from kvsim.options import ENGINE_DEFAULTS

R = kvsim.Request
MODEL = "llama-2-7b"
GPU = "l40s-48gb"
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
BAD_OPTIONS = [
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
    ("enable_chunked_prefill", "maybe", "true or false"),
    ("enable_chunked_prefill", 2, "true or false"),
    ("enable_chunked_prefill", None, "true or false"),
    ("watermark", -0.01, "[0, 1)"),
    ("watermark", 1.0, "[0, 1)"),
    ("watermark", NAN, "[0, 1)"),
    ("watermark", "x", "[0, 1)"),
    ("preemption_mode", "evict", "recompute, swap"),
    ("preemption_mode", None, "recompute, swap"),
    ("swap_space_bytes", -1, ">= 0"),
    ("swap_space_bytes", 1.5, ">= 0"),
    ("swap_space_bytes", NAN, ">= 0"),
    ("swap_space_bytes", "4GiB", ">= 0"),
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
    ("tensor_parallel_size", 3, "divisor of 32"),
    ("activation_bytes", -1, ">= 0"),
    ("activation_bytes", 1.5, ">= 0"),
    ("activation_bytes", "2GB", ">= 0"),
    ("weight_bytes", -1, ">= 0"),
    ("weight_bytes", 1.5, ">= 0"),
    ("weight_bytes", NAN, ">= 0"),
    ("step_by_step", "x", "true or false"),
    ("step_by_step", 3, "true or false"),
    ("step_overhead_s", -1, "[0, 10]"),
    ("step_overhead_s", NAN, "[0, 10]"),
    ("step_overhead_s", 11, "[0, 10]"),
    ("mfu", 0, "(0, 1]"),
    ("mfu", 1.5, "(0, 1]"),
    ("mfu", -1, "(0, 1]"),
    ("hbm_efficiency", 0, "(0, 1]"),
    ("hbm_efficiency", 1.5, "(0, 1]"),
    ("hbm_efficiency", NAN, "(0, 1]"),
    ("swap_copy_overhead_s", -1e-6, "[0, 1]"),
    ("swap_copy_overhead_s", 2, "[0, 1]"),
    ("pcie_bytes_per_s", 0, "> 0"),
    ("pcie_bytes_per_s", -1, "> 0"),
    ("pcie_bytes_per_s", NAN, "> 0"),
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


@pytest.mark.parametrize("name", ["block_size", "kv_dtype", "tensor_parallel_size"])
def test_options_of_the_pool_are_checked_with_an_explicit_num_gpu_blocks_too(name):
    bad = {"block_size": 3, "kv_dtype": "int3", "tensor_parallel_size": 0}[name]
    msg = error_of(num_gpu_blocks=100, **{name: bad})
    assert name in msg and "expected" in msg


@pytest.mark.parametrize("name, value", [
    ("gpu_memory_utilization", 1.5), ("gpu_memory_utilization", NAN),
    ("activation_bytes", -1), ("weight_bytes", -1), ("weight_bytes", "x"),
])
def test_memory_options_are_checked_even_with_an_explicit_num_gpu_blocks(name, value):
    try:
        simulate(num_gpu_blocks=100, **{name: value})
    except kvsim.KvsimError as e:
        assert name in str(e)
        return
    except ValueError as e:
        raise AssertionError(f"{name}={value!r} raised a bare {type(e).__name__}: {e}") from e
    raise AssertionError(f"{name}={value!r} was accepted with num_gpu_blocks=100")


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
             enable_chunked_prefill="True", step_by_step="true", mfu=1.0, step_overhead_s=0,
             swap_copy_overhead_s=0, max_tokens="3", num_gpu_blocks="100")
    simulate(admission="sglang", init_new_token_ratio=0.0, min_new_token_ratio=0.0,
             new_token_ratio_decay=0.0)
    simulate(enable_chunked_prefill="false", max_num_batched_tokens=19, max_num_seqs=8)  # 16+4-1


# --------------------------------------------------------------------------------------------
# Option names, models, GPUs, memory


@pytest.mark.parametrize("name", ["max_num_seq", "MAX_TOKENS", "gpu_util", "swap_space"])
def test_an_unknown_option_name_is_an_error_listing_the_known_ones(name):
    msg = error_of(**{name: 1})
    assert f"engine option {name!r} is not known" in msg
    assert "max_num_seqs" in msg and "swap_space_bytes" in msg and "mfu" in msg


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
    assert "gpu_memory_utilization=0.9" in msg and "141.11 GB" in msg
    assert "expected tensor_parallel_size >= 4" in msg
    msg = error_of(weight_bytes=10**12)
    assert "1,000.00 GB" in msg and "expected" in msg
    # Just too much at a low utilisation: the message gives the least one that fits.
    msg = error_of(gpu_memory_utilization=0.3)
    assert "gpu_memory_utilization=0.3" in msg and "expected gpu_memory_utilization >= 0.33" in msg


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
    end = short_run.config["simulated_s"]
    with pytest.raises(kvsim.KvsimError) as e:
        short_run.summary(warmup_s=beyond)
    msg = str(e.value)
    assert "\n" not in msg
    assert f"warmup_s={beyond}" in msg and f"[0, {end})" in msg


def test_summary_warmup_equal_to_the_run_length_is_an_error(short_run):
    end = short_run.config["simulated_s"]
    with pytest.raises(kvsim.KvsimError, match=r"warmup_s=.* is out of range"):
        short_run.summary(warmup_s=end)
    short_run.summary(warmup_s=end * 0.999)          # just inside: fine


@pytest.mark.parametrize("bad, fragment", [(-1, ">= 0"), (NAN, "not finite"), (INF, "not finite"),
                                           ("soon", "not a number"), (True, "not a number")])
def test_summary_warmup_of_the_wrong_kind_is_an_error(short_run, bad, fragment):
    with pytest.raises(kvsim.KvsimError) as e:
        short_run.summary(warmup_s=bad)
    assert "warmup_s=" in str(e.value) and fragment in str(e.value)
