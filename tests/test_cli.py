"""The ``kvsim`` command line (design §4): capacity, simulate, and the listings.

Every figure asserted here is derived in this file from published numbers (the
memory CUDA reports for a GPU, a model's architecture and parameter count) and
vLLM V1's start-up arithmetic, the way chapter 1 does it by hand::

    usable   = round(cuda_bytes x gpu_memory_utilization)
    peak     = max_num_batched_tokens x (3 x intermediate + 2 x hidden) x 2 B
               + max_num_seqs x vocab x 4 B           (the profiling run's peak)
    kv_bytes = usable - weights - peak - 0.3 GiB      (non-PyTorch memory)
    vllm_blocks = kv_bytes // (kv_bytes_per_token x 16)      (what vLLM allocates and logs)
    blocks   = vllm_blocks - 1                        (V1's null block; V0 keeps all)
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import kvsim
from kvsim.cli import main, parse_set_value, parse_sets
from kvsim.errors import KvsimError
from kvsim.model.hardware import list_gpus
from kvsim.model.memory import peak_activation_bytes
from kvsim.model.presets import list_models

SUMMARY_KEYS = {
    "requests_arrived", "requests_finished", "preemptions", "preemptions_per_1k",
    "recomputed_tokens", "swapped_out_bytes", "ttft_p50_s", "ttft_p95_s", "ttft_p99_s",
    "itl_p50_s", "itl_p99_s", "max_gap_s", "share_paused_over_1s", "throughput_tok_s",
    "goodput_tok_s", "kv_usage_mean", "kv_usage_max", "max_waiting", "mean_running",
    "simulated_s", "engine", "rescued_tokens", "prefix_cache_hit_rate",
    "recompute_rescued_share", "requests_rejected", "vllm_version", "loaded_tokens",
}
CAPACITY_KEYS = {
    "model", "gpu", "engine", "gpu_memory_utilization", "tensor_parallel_size", "kv_dtype",
    "block_size", "max_model_len", "usable_bytes", "weight_bytes", "activation_bytes",
    "peak_activation_bytes", "non_torch_bytes", "kv_bytes_per_token", "kv_bytes", "block_bytes",
    "vllm_blocks", "blocks", "tokens", "log_tokens", "pinned", "startup_log",
}
REPO = Path(__file__).resolve().parents[1]
GPU = "a40-48gb"                       # the seeds' 48 GB card

# Memory CUDA reports: deviceQuery's "Total amount of global memory: N MBytes (B bytes)",
# the B figure (N is it in MiB, rounded down), as the presets' descriptions cite it.
A40_BYTES = 47_608_692_736             # 45,403 MiB = 44.34 GiB; the datasheet says "48 GB"
H100_BYTES = 85_017_755_648            # 81,079 MiB = 79.18 GiB; the datasheet says "80 GB"
NON_TORCH = 3 * 2**30 // 10            # kvsim's 0.3 GiB of CUDA context and workspaces

# Llama-2-7B: 32 layers, 32 KV heads of 128, FP16; 6,738,415,616 parameters (model card);
# MLP 11,008 wide, hidden 4,096, vocabulary 32,000.
LLAMA2_KV = 2 * 32 * 32 * 128 * 2      # 524,288 B = 0.5 MiB per token
LLAMA2 = dict(weights=6_738_415_616 * 2, inter=11_008, hidden=4_096, vocab=32_000,
              kv_per_token=LLAMA2_KV)
# Llama-3.1-8B: 32 layers, 8 KV heads of 128, BF16; 8,030,261,248 parameters;
# MLP 14,336 wide, hidden 4,096, vocabulary 128,256.
LLAMA31_KV = 2 * 32 * 8 * 128 * 2      # 131,072 B = 128 KiB per token
LLAMA31 = dict(weights=8_030_261_248 * 2, inter=14_336, hidden=4_096, vocab=128_256,
               kv_per_token=LLAMA31_KV)
# vLLM V1's batch limits: 2,048 tokens / 256 sequences below 70 GiB (the 48 GB cards),
# 8,192 / 1,024 on an H100 (the API server's figures).
SMALL_GPU_LIMITS = dict(tokens=2_048, seqs=256)
H100_LIMITS = dict(tokens=8_192, seqs=1_024)


def v1_pool(cuda_bytes, util, *, weights, inter, hidden, vocab, kv_per_token, tokens, seqs,
            block=16, null=1):
    """vLLM V1's pool by hand (the module docstring); ``null=0`` for V0."""
    usable = round(cuda_bytes * util)
    peak = tokens * (3 * inter + 2 * hidden) * 2 + seqs * vocab * 4
    kv = usable - weights - peak - NON_TORCH
    total = kv // (kv_per_token * block)
    return dict(usable_bytes=usable, weight_bytes=weights, peak_activation_bytes=peak,
                non_torch_bytes=NON_TORCH, activation_bytes=peak + NON_TORCH, kv_bytes=kv,
                kv_bytes_per_token=kv_per_token, block_bytes=kv_per_token * block,
                vllm_blocks=total, blocks=total - null, tokens=(total - null) * block,
                log_tokens=total * block)


# Seed 000 (Belgavi): Llama-2-7B on 60 % of the A40.
SEED000 = v1_pool(A40_BYTES, 0.60, **LLAMA2, **SMALL_GPU_LIMITS)
# Seed 003: Llama-3.1-8B on an H100 at 0.90.
SEED003 = v1_pool(H100_BYTES, 0.90, **LLAMA31, **H100_LIMITS)


def both_units(n: int) -> str:
    """A byte count as the CLI prints it: decimal GB and binary GiB."""
    return f"{n / 1e9:.2f} GB = {n / 2**30:.2f} GiB"


def run(capsys, *argv):
    """Run the CLI in-process; return (status, stdout, stderr)."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def run_json(capsys, *argv):
    status, out, err = run(capsys, *argv, "--json")
    assert status == 0, err
    assert err == ""
    return json.loads(out)


def assert_one_line_error(status, out, err, *needles):
    assert status == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_the_derivations_agree_with_kvsims_public_figures():
    """The hand arithmetic above uses the same inputs kvsim's presets and functions do."""
    assert kvsim.get_gpu(GPU).memory_bytes == A40_BYTES
    assert kvsim.get_gpu("h100-80gb").memory_bytes == H100_BYTES
    assert (A40_BYTES // 2**20, H100_BYTES // 2**20) == (45_403, 81_079)
    for name, arch in (("llama-2-7b", LLAMA2), ("llama-3.1-8b", LLAMA31)):
        spec = kvsim.get_model(name)
        assert (spec.weight_bytes, spec.kv_bytes_per_token()) == (arch["weights"],
                                                                  arch["kv_per_token"])
    assert peak_activation_bytes("llama-2-7b", max_num_batched_tokens=2048, max_num_seqs=256) \
        == SEED000["peak_activation_bytes"]
    assert peak_activation_bytes("llama-3.1-8b", max_num_batched_tokens=8192,
                                 max_num_seqs=1024) == SEED003["peak_activation_bytes"]


# ----------------------------------------------------------------------------- capacity


def test_capacity_json_seed000_belgavi(capsys):
    """Seed 000 ("KV Cache Preemption in vLLM"): 7B on the 48 GB card at 0.60, 850 + 250 tokens.

    The seed's loose sum ("roughly 2 GB of activations", 48 GB) gave ~23 sequences; vLLM V1's
    profiling arithmetic on the memory CUDA reports leaves 1,735 usable blocks: 25 of 1,100."""
    d = run_json(capsys, "capacity", "--model", "llama-2-7b", "--gpu", GPU,
                 "--util", "0.60", "--seq-len", "1100")
    assert set(d) == CAPACITY_KEYS | {"seq_len", "max_concurrent"}
    for key, value in SEED000.items():
        assert d[key] == value, key
    assert (d["model"], d["gpu"], d["engine"], d["pinned"]) == ("llama-2-7b", GPU, "v1", False)
    assert (d["gpu_memory_utilization"], d["max_model_len"], d["block_size"]) == (0.6, 4096, 16)
    assert d["blocks"] == d["vllm_blocks"] - 1 and d["log_tokens"] == d["vllm_blocks"] * 16
    assert d["seq_len"] == 1100
    assert d["max_concurrent"] == SEED000["blocks"] // math.ceil(1100 / 16) == 25
    assert all(isinstance(d[k], int) for k in ("kv_bytes", "tokens", "blocks", "max_concurrent",
                                                "vllm_blocks", "log_tokens"))


def test_capacity_json_without_seq_len_has_no_max_concurrent(capsys):
    d = run_json(capsys, "capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "0.6")
    assert set(d) == CAPACITY_KEYS and d["blocks"] == SEED000["blocks"]


def test_capacity_engine_v0_keeps_every_block(capsys):
    """--engine v0: the same memory split, but no null block (blocks == vllm_blocks)."""
    d = run_json(capsys, "capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "0.6",
                 "--engine", "v0")
    v0 = v1_pool(A40_BYTES, 0.60, **LLAMA2, **SMALL_GPU_LIMITS, null=0)
    assert d["engine"] == "v0"
    assert (d["vllm_blocks"], d["blocks"], d["tokens"]) == \
        (v0["vllm_blocks"], v0["vllm_blocks"], v0["log_tokens"])
    assert d["blocks"] == SEED000["blocks"] + 1


def test_capacity_seed003_8b_h100(capsys):
    """Seed 003 ("Throughput collapse under load"): the seed's round "~50 GiB" on an 80 GB H100
    at 0.90 gives 68 sequences of 6k; with the memory CUDA reports (79.18 GiB) vLLM V1 leaves
    ~54.7 GiB: 74."""
    d = run_json(capsys, "capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb",
                 "--util", "0.9", "--seq-len", "6000")
    for key, value in SEED003.items():
        assert d[key] == value, key
    assert d["kv_bytes"] / 2**30 == pytest.approx(54.7, abs=0.1)
    assert d["max_concurrent"] == SEED003["blocks"] // math.ceil(6000 / 16) == 74
    assert d["log_tokens"] == pytest.approx(447_088, rel=0.005)


def test_capacity_pinned_to_a_vllm_log_line(capsys):
    """--kv-cache-tokens N takes vLLM's "GPU KV cache size: N tokens" (every block, V1's null
    block included): 447,088 / 16 = 27,943 blocks, 27,942 usable, 74 of 6,000 tokens."""
    d = run_json(capsys, "capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb",
                 "--kv-cache-tokens", "447088", "--seq-len", "6000")
    assert set(d) == CAPACITY_KEYS | {"seq_len", "max_concurrent"}
    total = 447_088 // 16
    assert d["vllm_blocks"] == total == 27_943
    assert d["blocks"] == total - 1 == 27_942
    assert d["max_concurrent"] == 27_942 // math.ceil(6000 / 16) == 27_942 // 375 == 74
    assert (d["tokens"], d["log_tokens"]) == (27_942 * 16, 447_088)
    assert d["kv_bytes"] == total * 16 * LLAMA31_KV
    assert d["pinned"] is True and d["gpu_memory_utilization"] is None
    assert d["weight_bytes"] == d["activation_bytes"] == d["peak_activation_bytes"] == 0
    assert d["non_torch_bytes"] == 0
    # --num-gpu-blocks N gives the usable blocks directly: the same pool.
    same = run_json(capsys, "capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb",
                    "--num-gpu-blocks", str(total - 1), "--seq-len", "6000")
    assert {k: same[k] for k in ("vllm_blocks", "blocks", "tokens", "log_tokens",
                                 "max_concurrent", "pinned")} == \
        {k: d[k] for k in ("vllm_blocks", "blocks", "tokens", "log_tokens",
                           "max_concurrent", "pinned")}
    # V0 logs no null block: all 27,943 are usable.
    v0 = run_json(capsys, "capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb",
                  "--kv-cache-tokens", "447088", "--engine", "v0")
    assert v0["engine"] == "v0" and v0["vllm_blocks"] == v0["blocks"] == total
    assert v0["startup_log"] is None
    assert d["startup_log"] == ["GPU KV cache size: 447,088 tokens, Maximum concurrency for "
                                f"131,072 tokens per request: {total / 8192:.2f}x"]


def test_capacity_reads_a_log_line_at_the_servers_max_model_len(capsys):
    """vLLM 0.23 and later log int(concurrency x max_model_len): at 20,000 tokens a pool of
    28,023 blocks prints 448,367, a token short of its 448,368. --max-model-len reads it back;
    at the model's own 131,072 no pool prints it, and the error says what to check."""
    d = run_json(capsys, "capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb",
                 "--kv-cache-tokens", "448367", "--max-model-len", "20000")
    assert (d["vllm_blocks"], d["max_model_len"]) == (28_023, 20_000)
    assert d["startup_log"] == ["GPU KV cache size: 448,367 tokens, Maximum concurrency for "
                                "20,000 tokens per request: 22.42x"]
    computed = run_json(capsys, "capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb",
                        "--util", "0.9", "--max-model-len", "20000")
    assert computed["startup_log"] == d["startup_log"]
    text = main(["capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb", "--util", "0.9",
                 "--max-model-len", "20000"])
    assert text == 0
    assert "vLLM 0.34 logs  GPU KV cache size: 448,367 tokens" in capsys.readouterr().out
    assert main(["capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb",
                 "--kv-cache-tokens", "448367"]) == 2
    err = capsys.readouterr().err
    assert "kv_cache_tokens=448,367 is not a size vLLM 0.34 prints" in err
    assert "max_model_len=131,072" in err and len(err.strip().splitlines()) == 1


def test_capacity_pinned_human_output(capsys):
    status, out, err = run(capsys, "capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb",
                           "--kv-cache-tokens", "447088", "--seq-len", "6000")
    assert status == 0 and err == ""
    assert "pinned to 27,943 blocks" in out and "447,088 tokens" in out and "27,942 usable" in out
    assert both_units(27_943 * 16 * LLAMA31_KV) in out
    assert "max_concurrent  74 sequences of 6,000 tokens (375 blocks each)" in out


def test_capacity_options_fp8_block_size_tp(capsys):
    d = run_json(capsys, "capacity", "--model", "llama-2-7b", "--gpu", GPU,
                 "--util", "0.6", "--kv-dtype", "fp8", "--block-size", "32")
    assert d["kv_bytes_per_token"] == LLAMA2_KV // 2 == 262_144 and d["block_size"] == 32
    # half the bytes per token, twice the tokens per block: the same 8 MiB blocks
    assert d["block_bytes"] == SEED000["block_bytes"] and d["blocks"] == SEED000["blocks"]
    assert d["tokens"] == d["blocks"] * 32 and d["log_tokens"] == d["vllm_blocks"] * 32
    d = run_json(capsys, "capacity", "--model", "llama-3.1-70b", "--gpu", "h100-80gb",
                 "--util", "0.9", "--tp", "4")
    assert d["tensor_parallel_size"] == 4
    assert d["usable_bytes"] == round(H100_BYTES * 4 * 0.9)
    assert d["non_torch_bytes"] == 4 * NON_TORCH           # every GPU of the group pays it


def test_capacity_human_output_names_gb_and_gib(capsys):
    status, out, err = run(capsys, "capacity", "--model", "llama-2-7b", "--gpu", GPU,
                           "--util", "0.6", "--seq-len", "1450")
    assert status == 0 and err == ""
    assert both_units(SEED000["kv_bytes"]) in out          # 14.56 GB = 13.56 GiB
    assert both_units(SEED000["usable_bytes"]) in out      # 28.57 GB = 26.60 GiB
    assert both_units(A40_BYTES) in out                    # 47.61 GB = 44.34 GiB
    assert (f"{SEED000['blocks']:,} usable ({SEED000['vllm_blocks']:,} in vLLM's log, "
            f"one kept as the null block)") in out
    per_seq = math.ceil(1450 / 16)
    assert (f"max_concurrent  {SEED000['blocks'] // per_seq} sequences of 1,450 tokens "
            f"({per_seq} blocks each)") in out


def test_capacity_from_config(capsys, hf_configs):
    d = run_json(capsys, "capacity", "--config", str(hf_configs["DeepSeek-V3"]), "--gpu",
                 "h200-141gb", "--util", "0.9", "--tp", "8")
    assert d["model"] == "DeepSeek-V3"
    assert d["kv_bytes_per_token"] == 8 * 70_272          # latent replicated on all 8 GPUs
    d = run_json(capsys, "capacity", "--config", str(hf_configs["Meta-Llama-3.1-8B"]),
                 "--gpu", "h100-80gb", "--util", "0.9", "--seq-len", "6000")
    for key, value in SEED003.items():                    # the config is the preset's model
        assert d[key] == value, key
    assert d["max_concurrent"] == 74


def _least_util_000() -> str:
    """The least utilisation (to 0.01) that leaves two blocks (the null block and one) for
    seed 000's model on the A40: weights + activations + 2 x 8 MiB over the CUDA memory."""
    needed = SEED000["weight_bytes"] + SEED000["activation_bytes"] + 2 * SEED000["block_bytes"]
    return f"{math.ceil(needed / A40_BYTES * 100) / 100:.2f}"


@pytest.mark.parametrize("argv, needles", [
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "1.5"],
     ["gpu_memory_utilization=1.5", "(0, 1]"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "abc"],
     ["gpu_memory_utilization='abc'", "(0, 1]"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU],
     ["--util", "required", "--num-gpu-blocks", "--kv-cache-tokens"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", "tpu-v5", "--util", "0.5"],
     ["gpu='tpu-v5'", "a40-48gb", "h200-141gb"]),
    (["capacity", "--model", "gpt-9", "--gpu", GPU, "--util", "0.5"],
     ["model='gpt-9'", "llama-2-7b", "opt-13b"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "0.6",
      "--block-size", "24"], ["block_size=24", "1, 2, 4, 8, 16, 32, 64, 128"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "0.6",
      "--kv-dtype", "int4"], ["kv_dtype='int4'", "fp8"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "0.6",
      "--seq-len", "0"], ["seq_len", ">= 1"]),
    # vLLM refuses a sequence longer than the model's max_model_len (4,096 for Llama-2)
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "0.6",
      "--seq-len", "8000"], ["8000", "4096", "max_model_len"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "0.6",
      "--seq-len", "4097"], ["4097", "[1, 4096]"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "0.6",
      "--tp", "0"], ["tensor_parallel_size=0", "[1, 1024]"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "0.29"],
     ["gpu_memory_utilization=0.29", f"weights {SEED000['weight_bytes'] / 1e9:.2f} GB",
      f"activations {SEED000['activation_bytes'] / 1e9:.2f} GB",
      f"gpu_memory_utilization >= {_least_util_000()}"]),
    (["capacity", "--model", "llama-2-7b", "--config", "x.json", "--gpu", GPU,
      "--util", "0.6"], ["not allowed with"]),
    (["capacity", "--config", "/nonexistent/config.json", "--gpu", GPU, "--util", "0.6"],
     ["/nonexistent/config.json", "does not exist"]),
    # the pool: pinned by one figure from the server's log, or computed from --util
    (["capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb", "--num-gpu-blocks", "100",
      "--kv-cache-tokens", "447088"], ["--num-gpu-blocks", "--kv-cache-tokens", "not allowed"]),
    (["capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb", "--util", "0.9",
      "--kv-cache-tokens", "447088"], ["--util", "pinned", "not both"]),
    (["capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb", "--util", "0.9",
      "--num-gpu-blocks", "27942"], ["--util", "pinned", "not both"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--num-gpu-blocks", "0"],
     ["num_gpu_blocks=0", "[1, 1000000000]"]),
    # V1 logs at least two blocks (the null block and one usable): 2 x 16 tokens
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--kv-cache-tokens", "16"],
     ["kv_cache_tokens=16", "[32, "]),
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--kv-cache-tokens", "lots"],
     ["kv_cache_tokens='lots'"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", GPU, "--util", "0.6", "--engine", "v2"],
     ["engine='v2'", "v1, v0"]),
    ([], ["COMMAND", "required"]),
    (["frobnicate"], ["frobnicate", "capacity"]),
])
def test_capacity_and_usage_errors_exit_2_with_one_line(capsys, argv, needles):
    assert_one_line_error(*run(capsys, *argv), *needles)


def test_malformed_config_file_is_one_line(capsys, tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text('{"num_hidden_layers": "many"}')
    assert_one_line_error(*run(capsys, "capacity", "--config", str(bad), "--gpu", GPU,
                               "--util", "0.6"), "num_hidden_layers='many'", "integer")


# ----------------------------------------------------------------------------- listings


def test_models_and_gpus_listings(capsys):
    models = run_json(capsys, "models")
    assert [m["name"] for m in models] == list_models()
    by_name = {m["name"]: m for m in models}
    assert by_name["llama-2-7b"]["kv_bytes_per_token"] == LLAMA2_KV
    assert by_name["llama-2-7b"]["max_model_len"] == 4096
    assert by_name["deepseek-v3"]["attention_kind"] == "mla"
    gpus = run_json(capsys, "gpus")
    assert [g["name"] for g in gpus] == list_gpus()
    a40 = {g["name"]: g for g in gpus}[GPU]
    assert a40["memory_bytes"] == A40_BYTES and a40["datasheet_memory_bytes"] == 48 * 10**9
    assert a40["nvidia_smi_mib"] == 46_068 and a40["pcie_bytes_per_s"] == 25 * 10**9
    assert {"matmul_efficiency", "memory_efficiency", "kernel_latency_s",
            "interconnect_bytes_per_s", "calibration"} <= set(a40)
    status, out, _ = run(capsys, "models")
    assert status == 0 and all(name in out for name in list_models()) and "512 KiB" in out
    status, out, _ = run(capsys, "gpus")
    assert status == 0 and "GB/s" in out and "CUDA reports" in out and "datasheet" in out
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert list(rows) == list_gpus()
    for g in gpus:
        row = rows[g["name"]]
        assert f"{g['memory_bytes'] / 2**30:.2f} GiB" in row           # CUDA's figure, GiB
        assert f"{g['datasheet_memory_bytes'] // 10**9} GB" in row     # the datasheet's
        assert g["calibration"] in row
    assert "44.34 GiB" in rows[GPU] and "48 GB" in rows[GPU]


# ----------------------------------------------------------------------------- --set parsing


@pytest.mark.parametrize("text, value", [
    ("64", 64), ("-3", -3), ("1_000", 1000), ("0.5", 0.5), ("1e-3", 0.001), ("true", True),
    ("False", False), ("none", None), ("swap", "swap"), ("fcfs", "fcfs"), ("v0", "v0"),
])
def test_set_values_parse(text, value):
    parsed = parse_set_value(text)
    assert parsed == value and type(parsed) is type(value)


def test_parse_sets_and_its_errors():
    assert parse_sets(["max_num_seqs=64", "preemption_mode=swap", "watermark=0.02",
                       "engine=v0"]) == {
        "max_num_seqs": 64, "preemption_mode": "swap", "watermark": 0.02, "engine": "v0"}
    assert parse_sets(None) == {}
    for bad in (["max_num_seqs"], ["=3"], ["max-num-seqs=3"], ["1x=2"]):
        with pytest.raises(KvsimError, match="malformed: expected key=value"):
            parse_sets(bad)
    with pytest.raises(KvsimError, match="given twice"):
        parse_sets(["seed=1", "seed=2"])
    with pytest.raises(KvsimError, match="not finite"):
        parse_sets(["watermark=nan"])


# ----------------------------------------------------------------------------- simulate --trace


@pytest.fixture()
def small_trace(tmp_path) -> Path:
    path = tmp_path / "trace.csv"
    rows = ["arrival_s,prompt_tokens,output_tokens"]
    rows += [f"{i * 0.5:.1f},850,{100 + 10 * i}" for i in range(12)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_simulate_trace_prints_the_summary(capsys, small_trace):
    d = run_json(capsys, "simulate", "--trace", str(small_trace), "--model", "llama-2-7b",
                 "--gpu", GPU, "--util", "0.6")
    assert set(d) == SUMMARY_KEYS
    assert d["requests_arrived"] == d["requests_finished"] == 12
    assert d["preemptions"] == 0 and d["engine"] == "v1"
    assert d["rescued_tokens"] == 0 and d["recompute_rescued_share"] == 0.0
    status, out, err = run(capsys, "simulate", "--trace", str(small_trace), "--model",
                           "llama-2-7b", "--gpu", GPU, "--util", "0.6")
    assert status == 0 and "requests_finished" in out and "ttft_p99_s" in out
    # The human output first says what was simulated: the engine, the pool in GB and GiB
    # (usable blocks), the batch limits (vLLM V1's on a 48 GB card) and prefix caching.
    head = out.splitlines()[0]
    blocks = SEED000["blocks"]
    assert head.startswith(f"# llama-2-7b on {GPU}, engine v1: {blocks:,} KV blocks of 16 tokens")
    assert both_units(blocks * SEED000["block_bytes"]) in head
    assert "max_num_seqs 256" in head and "max_num_batched_tokens 2,048" in head
    assert "optimistic admission" in head and "recompute preemption" in head
    assert head.endswith("prefix caching on")


def test_simulate_trace_engine_v0_header_and_summary(capsys, small_trace):
    """--engine v0: no null block, no prefix caching, V0's batch limits."""
    argv = ["simulate", "--trace", str(small_trace), "--model", "llama-2-7b", "--gpu", GPU,
            "--util", "0.6", "--engine", "v0"]
    d = run_json(capsys, *argv)
    assert d["engine"] == "v0" and d["requests_finished"] == 12
    assert d["prefix_cache_hit_rate"] == 0.0 and d["rescued_tokens"] == 0
    status, out, err = run(capsys, *argv)
    head = out.splitlines()[0]
    assert status == 0 and err == ""
    assert head.startswith(f"# llama-2-7b on {GPU}, engine v0: "
                           f"{SEED000['vllm_blocks']:,} KV blocks")
    assert "max_num_batched_tokens 2,048" in head and head.endswith("prefix caching off")


def test_simulate_trace_tiny_pool_preempts(capsys, small_trace):
    """--set passes engine options: a 120-block pool cannot hold 12 requests of ~1,000 tokens."""
    d = run_json(capsys, "simulate", "--trace", str(small_trace), "--model", "llama-2-7b",
                 "--gpu", GPU, "--set", "num_gpu_blocks=120", "--set", "seed=1")
    assert d["requests_finished"] == 12
    assert d["preemptions"] > 0 and d["recomputed_tokens"] + d["rescued_tokens"] > 0
    # The pool flags pin the same pool: 120 usable blocks, or vLLM's log line for it
    # ((120 + the null block) x 16 tokens).
    flag = run_json(capsys, "simulate", "--trace", str(small_trace), "--model", "llama-2-7b",
                    "--gpu", GPU, "--num-gpu-blocks", "120", "--set", "seed=1")
    log = run_json(capsys, "simulate", "--trace", str(small_trace), "--model", "llama-2-7b",
                   "--gpu", GPU, "--kv-cache-tokens", str(121 * 16), "--set", "seed=1")
    assert flag == d == log
    status, out, _ = run(capsys, "simulate", "--trace", str(small_trace), "--model",
                         "llama-2-7b", "--gpu", GPU, "--kv-cache-tokens", str(121 * 16))
    assert status == 0 and "engine v1: 120 KV blocks of 16 tokens" in out.splitlines()[0]


def test_simulate_shared_azure_trace(capsys, shared_data):
    trace = shared_data / "AzureLLMInferenceTrace_conv.csv"
    if not trace.is_file():
        pytest.skip("Azure trace absent")
    d = run_json(capsys, "simulate", "--trace", str(trace), "--model", "llama-3.1-8b",
                 "--gpu", "h100-80gb", "--util", "0.9", "--limit", "300")
    assert d["requests_arrived"] == 300 == d["requests_finished"]


@pytest.mark.parametrize("extra, needles", [
    (["--set", "max_num_seqs=0"], ["max_num_seqs=0", "[1, "]),
    (["--set", "frob=1"], ["'frob'", "max_num_seqs"]),
    (["--set", "mfu=0.5"], ["'mfu'", "matmul_efficiency"]),             # renamed in kvsim 2
    (["--set", "max_num_seqs"], ["max_num_seqs", "key=value"]),
    (["--set", "preemption_mode=teleport"], ["preemption_mode='teleport'", "recompute, swap"]),
    (["--set", "preemption_mode=swap"], ["preemption_mode='swap'", "engine='v1'", "v0"]),
    (["--set", "engine=v2"], ["engine='v2'", "v1, v0"]),
    (["--engine", "v2"], ["engine='v2'", "v1, v0"]),
    (["--engine", "v0", "--set", "engine=v1"], ["--engine", "--set engine=", "one of them"]),
    (["--num-gpu-blocks", "100", "--set", "num_gpu_blocks=100"],
     ["--num-gpu-blocks", "--set num_gpu_blocks=", "one of them"]),
    (["--kv-cache-tokens", "1600", "--set", "kv_cache_tokens=1600"],
     ["--kv-cache-tokens", "--set kv_cache_tokens=", "one of them"]),
    (["--num-gpu-blocks", "100", "--kv-cache-tokens", "1600"],
     ["--num-gpu-blocks", "--kv-cache-tokens", "not allowed"]),
    (["--kv-cache-tokens", "1600", "--set", "num_gpu_blocks=100"],
     ["num_gpu_blocks", "kv_cache_tokens", "at most one"]),
    (["--kv-cache-tokens", "16"], ["kv_cache_tokens=16", "[32, "]),
    (["--set", "max_model_len=8000"], ["max_model_len=8000", "[1, 4096]"]),
    (["--util", "0"], ["gpu_memory_utilization=0", "(0, 1]"]),
    (["--limit", "0"], ["limit=0", ">= 1"]),
])
def test_simulate_trace_errors_exit_2_with_one_line(capsys, small_trace, extra, needles):
    # --trace sizes the pool from --util unless a pool flag pins it (as capacity does)
    pinned = any(a.split("=")[0] in ("--util", "--num-gpu-blocks", "--kv-cache-tokens",
                                     "num_gpu_blocks", "kv_cache_tokens") for a in extra)
    argv = ["simulate", "--trace", str(small_trace), "--model", "llama-2-7b", "--gpu",
            GPU, *extra, *([] if pinned else ["--util", "0.9"])]
    assert_one_line_error(*run(capsys, *argv), *needles)


def test_simulate_trace_needs_util_as_capacity_does(capsys, small_trace):
    """The same required flags as capacity: no --util, no pinned pool: one line, nothing run."""
    for command in (["simulate", "--trace", str(small_trace)], ["capacity"]):
        assert_one_line_error(*run(capsys, *command, "--model", "llama-2-7b", "--gpu", GPU),
                              "--util", "--num-gpu-blocks", "--kv-cache-tokens")


def test_simulate_trace_needs_model_and_gpu(capsys, small_trace):
    assert_one_line_error(*run(capsys, "simulate", "--trace", str(small_trace), "--gpu",
                               GPU), "--model or --config")
    assert_one_line_error(*run(capsys, "simulate", "--trace", str(small_trace), "--model",
                               "llama-2-7b"), "--gpu")
    assert_one_line_error(*run(capsys, "simulate", "--model", "llama-2-7b"),
                          "--scenario", "--trace", "required")


def test_simulate_missing_trace_file(capsys, tmp_path):
    pytest.importorskip("kvsim.traffic.workload")
    missing = tmp_path / "nope.csv"
    assert_one_line_error(*run(capsys, "simulate", "--trace", str(missing), "--model",
                               "llama-2-7b", "--gpu", GPU, "--util", "0.9"), "nope.csv")


# ----------------------------------------------------------------------------- scenarios


def test_scenarios_listing(capsys):
    scenarios = pytest.importorskip("kvsim.runs.scenarios")
    rows = run_json(capsys, "scenarios")
    names = [r["name"] for r in rows]
    assert names == scenarios.list_scenarios()
    for required in ("belgavi", "belgavi-long", "mission-1-storm", "load-test-120"):
        assert required in names
    status, out, _ = run(capsys, "scenarios")
    assert status == 0 and "belgavi" in out


def test_simulate_scenario_belgavi_json(capsys):
    """`kvsim simulate --scenario belgavi --json` prints the summary keys of design §4."""
    kvsim_scenarios = pytest.importorskip("kvsim.runs.scenarios")
    d = run_json(capsys, "simulate", "--scenario", "belgavi")
    assert set(d) == SUMMARY_KEYS
    assert 0 < d["requests_finished"] <= d["requests_arrived"]
    assert d["engine"] == "v1"
    assert d == json.loads(json.dumps(kvsim_scenarios.run_scenario("belgavi").summary()))
    # --set and --util reach the scenario: more memory, a lower peak KV usage
    roomy = run_json(capsys, "simulate", "--scenario", "belgavi", "--util", "0.9")
    assert roomy["kv_usage_max"] < d["kv_usage_max"]
    capped = run_json(capsys, "simulate", "--scenario", "belgavi", "--set", "max_num_seqs=4")
    assert capped["mean_running"] <= 4
    status, out, _ = run(capsys, "simulate", "--scenario", "belgavi")
    assert status == 0 and "preemptions_per_1k" in out
    head = out.splitlines()[0]
    assert head.startswith(f"# llama-2-7b on {GPU}, engine v1: {SEED000['blocks']:,} KV blocks")
    assert head.endswith("prefix caching on")


def test_simulate_scenario_belgavi_engine_v0(capsys):
    """--engine v0 reaches the scenario: V0's engine, without prefix caching (nothing rescued)."""
    kvsim_scenarios = pytest.importorskip("kvsim.runs.scenarios")
    d = run_json(capsys, "simulate", "--scenario", "belgavi", "--engine", "v0")
    assert set(d) == SUMMARY_KEYS
    assert d["engine"] == "v0"
    assert d["rescued_tokens"] == 0 and d["prefix_cache_hit_rate"] == 0.0
    assert d["recompute_rescued_share"] == 0.0 and d["swapped_out_bytes"] == 0   # recompute
    assert d == json.loads(json.dumps(
        kvsim_scenarios.run_scenario("belgavi", engine="v0").summary()))
    assert d != run_json(capsys, "simulate", "--scenario", "belgavi")
    status, out, _ = run(capsys, "simulate", "--scenario", "belgavi", "--engine", "v0")
    head = out.splitlines()[0]
    assert status == 0 and "engine v0" in head and head.endswith("prefix caching off")


def test_simulate_scenario_mission2_is_v0_swap(capsys):
    """Mission 2 swaps, which only vLLM V0 did: by default it runs V0; --engine v1 is refused."""
    pytest.importorskip("kvsim.runs.scenarios")
    d = run_json(capsys, "simulate", "--scenario", "mission-2-slow-pcie")
    assert d["engine"] == "v0" and d["swapped_out_bytes"] > 0
    assert_one_line_error(*run(capsys, "simulate", "--scenario", "mission-2-slow-pcie",
                               "--engine", "v1"),
                          "preemption_mode='swap'", "engine='v1'", "engine='v0'")
    assert_one_line_error(*run(capsys, "simulate", "--scenario", "mission-2-slow-pcie",
                               "--set", "engine=v1"), "engine='v1'", "engine='v0'")


def test_simulate_scenario_errors(capsys):
    pytest.importorskip("kvsim.runs.scenarios")
    assert_one_line_error(*run(capsys, "simulate", "--scenario", "belgavi", "--set",
                               "max_num_seqs=0"), "max_num_seqs=0")
    assert_one_line_error(*run(capsys, "simulate", "--scenario", "no-such-scenario"),
                          "no-such-scenario", "belgavi")
    assert_one_line_error(*run(capsys, "simulate", "--scenario", "belgavi", "--limit", "3"),
                          "--limit", "--trace")
    assert_one_line_error(*run(capsys, "simulate", "--scenario", "belgavi", "--engine", "v0",
                               "--set", "engine=v0"), "--engine", "--set engine=")


# ----------------------------------------------------------------------------- entry points


def test_python_dash_m_kvsim_works_and_errors_cleanly():
    ok = subprocess.run([sys.executable, "-m", "kvsim", "capacity", "--model", "llama-2-7b",
                         "--gpu", GPU, "--util", "0.6", "--json"],
                        capture_output=True, text=True, cwd=REPO, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["blocks"] == SEED000["blocks"]
    bad = subprocess.run([sys.executable, "-m", "kvsim", "capacity", "--model", "llama-2-7b",
                          "--gpu", GPU, "--util", "2"],
                         capture_output=True, text=True, cwd=REPO, timeout=60)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "gpu_memory_utilization=2" in bad.stderr
    long = subprocess.run([sys.executable, "-m", "kvsim", "capacity", "--model", "llama-2-7b",
                           "--gpu", GPU, "--util", "0.6", "--seq-len", "8000"],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert long.returncode == 2 and long.stdout == ""
    assert long.stderr.count("\n") == 1 and "8000" in long.stderr and "4096" in long.stderr


def test_help_and_version_exit_zero(capsys):
    status, out, _ = run(capsys, "capacity", "--help")
    assert status == 0 and "--seq-len" in out
    assert "--num-gpu-blocks" in out and "--kv-cache-tokens" in out and "--engine" in out
    status, out, _ = run(capsys, "simulate", "--help")
    assert status == 0 and "--kv-cache-tokens" in out and "--engine" in out
    status, out, _ = run(capsys, "--version")
    assert status == 0 and out.startswith("kvsim ")


def test_simulate_trace_refuses_model_in_set(capsys, small_trace):
    assert_one_line_error(*run(capsys, "simulate", "--trace", str(small_trace), "--model",
                               "llama-2-7b", "--gpu", GPU, "--set", "gpu=h100-80gb"),
                          "--set gpu=", "--gpu")
