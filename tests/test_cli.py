"""The ``kvsim`` command line (design §4): capacity, simulate, and the listings."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvsim.cli import main, parse_set_value, parse_sets
from kvsim.errors import KvsimError
from kvsim.hardware import list_gpus
from kvsim.models import list_models

SUMMARY_KEYS = {
    "requests_arrived", "requests_finished", "preemptions", "preemptions_per_1k",
    "recomputed_tokens", "swapped_out_bytes", "ttft_p50_s", "ttft_p95_s", "ttft_p99_s",
    "itl_p50_s", "itl_p99_s", "max_gap_s", "share_paused_over_1s", "throughput_tok_s",
    "goodput_tok_s", "kv_usage_mean", "kv_usage_max", "max_waiting", "mean_running",
    "simulated_s",
}
REPO = Path(__file__).resolve().parents[1]


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


# ----------------------------------------------------------------------------- capacity


def test_capacity_json_seed000_belgavi(capsys):
    """Seed 000 ("KV Cache Preemption in vLLM"): 7B on the 48 GB card at 0.60, 850 + 250 tokens."""
    d = run_json(capsys, "capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb",
                 "--util", "0.60", "--seq-len", "1100")
    assert {"kv_bytes_per_token", "kv_bytes", "tokens", "blocks", "max_concurrent"} <= set(d)
    assert d["kv_bytes_per_token"] == 524_288
    assert d["kv_bytes"] == 13_323_168_768
    assert (d["blocks"], d["tokens"], d["max_concurrent"]) == (1_588, 25_408, 23)
    assert all(isinstance(d[k], int) for k in ("kv_bytes", "tokens", "blocks", "max_concurrent"))


def test_capacity_json_without_seq_len_has_no_max_concurrent(capsys):
    d = run_json(capsys, "capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb",
                 "--util", "0.6")
    assert "max_concurrent" not in d and d["blocks"] == 1_588


def test_capacity_seed003_8b_h100(capsys):
    """Seed 003 ("Throughput collapse under load"): ~50 GiB on an 80 GB H100 at 0.90; 68 at 6k."""
    d = run_json(capsys, "capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb",
                 "--util", "0.9", "--seq-len", "6000")
    assert d["kv_bytes_per_token"] == 131_072
    assert d["kv_bytes"] / 2**30 == pytest.approx(50, rel=0.03)
    assert d["max_concurrent"] == 68


def test_capacity_options_fp8_block_size_tp(capsys):
    d = run_json(capsys, "capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb",
                 "--util", "0.6", "--kv-dtype", "fp8", "--block-size", "32")
    assert d["kv_bytes_per_token"] == 262_144 and d["block_size"] == 32
    assert d["tokens"] == d["blocks"] * 32
    d = run_json(capsys, "capacity", "--model", "llama-3.1-70b", "--gpu", "h100-80gb",
                 "--util", "0.9", "--tp", "4")
    assert d["tensor_parallel_size"] == 4 and d["usable_bytes"] == 288 * 10**9


def test_capacity_human_output_names_gb_and_gib(capsys):
    status, out, err = run(capsys, "capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb",
                           "--util", "0.6", "--seq-len", "1450")
    assert status == 0 and err == ""
    assert "13.32 GB = 12.41 GiB" in out
    assert "28.80 GB = 26.82 GiB" in out
    assert "max_concurrent  17 sequences of 1,450 tokens" in out


def test_capacity_from_config(capsys, hf_configs):
    d = run_json(capsys, "capacity", "--config", str(hf_configs["DeepSeek-V3"]), "--gpu",
                 "h200-141gb", "--util", "0.9", "--tp", "8")
    assert d["model"] == "DeepSeek-V3"
    assert d["kv_bytes_per_token"] == 8 * 70_272          # latent replicated on all 8 GPUs
    d = run_json(capsys, "capacity", "--config", str(hf_configs["Meta-Llama-3.1-8B"]),
                 "--gpu", "h100-80gb", "--util", "0.9", "--seq-len", "6000")
    assert d["max_concurrent"] == 68


@pytest.mark.parametrize("argv, needles", [
    (["capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb", "--util", "1.5"],
     ["gpu_memory_utilization=1.5", "(0, 1]"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb", "--util", "abc"],
     ["gpu_memory_utilization='abc'", "(0, 1]"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb"], ["--util", "required"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", "tpu-v5", "--util", "0.5"],
     ["gpu='tpu-v5'", "l40s-48gb", "h200-141gb"]),
    (["capacity", "--model", "gpt-9", "--gpu", "l40s-48gb", "--util", "0.5"],
     ["model='gpt-9'", "llama-2-7b", "opt-13b"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb", "--util", "0.6",
      "--block-size", "24"], ["block_size=24", "1, 2, 4, 8, 16, 32, 64, 128"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb", "--util", "0.6",
      "--kv-dtype", "int4"], ["kv_dtype='int4'", "fp8"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb", "--util", "0.6",
      "--seq-len", "0"], ["seq_len", ">= 1"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb", "--util", "0.6",
      "--tp", "0"], ["tensor_parallel_size=0", "[1, 1024]"]),
    (["capacity", "--model", "llama-2-7b", "--gpu", "l40s-48gb", "--util", "0.3"],
     ["weights 13.48 GB", "activations 2.00 GB", "gpu_memory_utilization >= 0.33"]),
    (["capacity", "--model", "llama-2-7b", "--config", "x.json", "--gpu", "l40s-48gb",
      "--util", "0.6"], ["not allowed with"]),
    (["capacity", "--config", "/nonexistent/config.json", "--gpu", "l40s-48gb", "--util", "0.6"],
     ["/nonexistent/config.json", "cannot be read"]),
    ([], ["COMMAND", "required"]),
    (["frobnicate"], ["frobnicate", "capacity"]),
])
def test_capacity_and_usage_errors_exit_2_with_one_line(capsys, argv, needles):
    assert_one_line_error(*run(capsys, *argv), *needles)


def test_malformed_config_file_is_one_line(capsys, tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text('{"num_hidden_layers": "many"}')
    assert_one_line_error(*run(capsys, "capacity", "--config", str(bad), "--gpu", "l40s-48gb",
                               "--util", "0.6"), "num_hidden_layers='many'", "integer")


# ----------------------------------------------------------------------------- listings


def test_models_and_gpus_listings(capsys):
    models = run_json(capsys, "models")
    assert [m["name"] for m in models] == list_models()
    by_name = {m["name"]: m for m in models}
    assert by_name["llama-2-7b"]["kv_bytes_per_token"] == 524_288
    assert by_name["deepseek-v3"]["attention_kind"] == "mla"
    gpus = run_json(capsys, "gpus")
    assert [g["name"] for g in gpus] == list_gpus()
    assert gpus[0]["memory_bytes"] == 48 * 10**9 and gpus[0]["pcie_bytes_per_s"] == 20 * 10**9
    status, out, _ = run(capsys, "models")
    assert status == 0 and all(name in out for name in list_models()) and "512 KiB" in out
    status, out, _ = run(capsys, "gpus")
    assert status == 0 and "GB/s" in out and all(name in out for name in list_gpus())


# ----------------------------------------------------------------------------- --set parsing


@pytest.mark.parametrize("text, value", [
    ("64", 64), ("-3", -3), ("1_000", 1000), ("0.5", 0.5), ("1e-3", 0.001), ("true", True),
    ("False", False), ("none", None), ("swap", "swap"), ("fcfs", "fcfs"),
])
def test_set_values_parse(text, value):
    parsed = parse_set_value(text)
    assert parsed == value and type(parsed) is type(value)


def test_parse_sets_and_its_errors():
    assert parse_sets(["max_num_seqs=64", "preemption_mode=swap", "watermark=0.02"]) == {
        "max_num_seqs": 64, "preemption_mode": "swap", "watermark": 0.02}
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
                 "--gpu", "l40s-48gb", "--util", "0.6")
    assert SUMMARY_KEYS <= set(d)
    assert d["requests_arrived"] == d["requests_finished"] == 12
    assert d["preemptions"] == 0
    status, out, err = run(capsys, "simulate", "--trace", str(small_trace), "--model",
                           "llama-2-7b", "--gpu", "l40s-48gb", "--util", "0.6")
    assert status == 0 and "requests_finished" in out and "ttft_p99_s" in out
    # The human output first says what was simulated, the pool in GB and GiB.
    head = out.splitlines()[0]
    assert head.startswith("# llama-2-7b on l40s-48gb: 1,588 KV blocks of 16 tokens")
    assert "13.32 GB = 12.41 GiB" in head and "optimistic admission" in head


def test_simulate_trace_tiny_pool_preempts(capsys, small_trace):
    """--set passes engine options: a 120-block pool cannot hold 12 requests of ~1,000 tokens."""
    d = run_json(capsys, "simulate", "--trace", str(small_trace), "--model", "llama-2-7b",
                 "--gpu", "l40s-48gb", "--set", "num_gpu_blocks=120", "--set", "seed=1")
    assert d["requests_finished"] == 12
    assert d["preemptions"] > 0 and d["recomputed_tokens"] > 0


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
    (["--set", "max_num_seqs"], ["max_num_seqs", "key=value"]),
    (["--set", "preemption_mode=teleport"], ["preemption_mode='teleport'", "recompute, swap"]),
    (["--util", "0"], ["gpu_memory_utilization=0", "(0, 1]"]),
    (["--limit", "0"], ["limit=0", ">= 1"]),
])
def test_simulate_trace_errors_exit_2_with_one_line(capsys, small_trace, extra, needles):
    argv = ["simulate", "--trace", str(small_trace), "--model", "llama-2-7b", "--gpu",
            "l40s-48gb", *extra]
    assert_one_line_error(*run(capsys, *argv), *needles)


def test_simulate_trace_needs_model_and_gpu(capsys, small_trace):
    assert_one_line_error(*run(capsys, "simulate", "--trace", str(small_trace), "--gpu",
                               "l40s-48gb"), "--model or --config")
    assert_one_line_error(*run(capsys, "simulate", "--trace", str(small_trace), "--model",
                               "llama-2-7b"), "--gpu")
    assert_one_line_error(*run(capsys, "simulate", "--model", "llama-2-7b"),
                          "--scenario", "--trace", "required")


def test_simulate_missing_trace_file(capsys, tmp_path):
    pytest.importorskip("kvsim.workload")
    missing = tmp_path / "nope.csv"
    assert_one_line_error(*run(capsys, "simulate", "--trace", str(missing), "--model",
                               "llama-2-7b", "--gpu", "l40s-48gb"), "nope.csv")


# ----------------------------------------------------------------------------- scenarios


def test_scenarios_listing(capsys):
    scenarios = pytest.importorskip("kvsim.scenarios")
    rows = run_json(capsys, "scenarios")
    names = [r["name"] for r in rows]
    assert names == scenarios.list_scenarios()
    for required in ("belgavi", "belgavi-long", "mission-1-storm", "load-test-120"):
        assert required in names
    status, out, _ = run(capsys, "scenarios")
    assert status == 0 and "belgavi" in out


def test_simulate_scenario_belgavi_json(capsys):
    """`kvsim simulate --scenario belgavi --json` prints the summary keys of design §4."""
    kvsim = pytest.importorskip("kvsim.scenarios")
    d = run_json(capsys, "simulate", "--scenario", "belgavi")
    assert SUMMARY_KEYS <= set(d)
    assert 0 < d["requests_finished"] <= d["requests_arrived"]
    assert d == json.loads(json.dumps(kvsim.run_scenario("belgavi").summary()))
    # --set and --util reach the scenario: more memory, fewer or equal preemptions
    roomy = run_json(capsys, "simulate", "--scenario", "belgavi", "--util", "0.9")
    assert roomy["kv_usage_max"] < d["kv_usage_max"]
    capped = run_json(capsys, "simulate", "--scenario", "belgavi", "--set", "max_num_seqs=4")
    assert capped["mean_running"] <= 4
    status, out, _ = run(capsys, "simulate", "--scenario", "belgavi")
    assert status == 0 and "preemptions_per_1k" in out


def test_simulate_scenario_errors(capsys):
    pytest.importorskip("kvsim.scenarios")
    assert_one_line_error(*run(capsys, "simulate", "--scenario", "belgavi", "--set",
                               "max_num_seqs=0"), "max_num_seqs=0")
    assert_one_line_error(*run(capsys, "simulate", "--scenario", "no-such-scenario"),
                          "no-such-scenario", "belgavi")
    assert_one_line_error(*run(capsys, "simulate", "--scenario", "belgavi", "--limit", "3"),
                          "--limit", "--trace")


# ----------------------------------------------------------------------------- entry points


def test_python_dash_m_kvsim_works_and_errors_cleanly():
    ok = subprocess.run([sys.executable, "-m", "kvsim", "capacity", "--model", "llama-2-7b",
                         "--gpu", "l40s-48gb", "--util", "0.6", "--json"],
                        capture_output=True, text=True, cwd=REPO, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["blocks"] == 1_588
    bad = subprocess.run([sys.executable, "-m", "kvsim", "capacity", "--model", "llama-2-7b",
                          "--gpu", "l40s-48gb", "--util", "2"],
                         capture_output=True, text=True, cwd=REPO, timeout=60)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "gpu_memory_utilization=2" in bad.stderr


def test_help_and_version_exit_zero(capsys):
    status, out, _ = run(capsys, "capacity", "--help")
    assert status == 0 and "--seq-len" in out
    status, out, _ = run(capsys, "--version")
    assert status == 0 and out.startswith("kvsim ")


def test_simulate_trace_refuses_model_in_set(capsys, small_trace):
    assert_one_line_error(*run(capsys, "simulate", "--trace", str(small_trace), "--model",
                               "llama-2-7b", "--gpu", "l40s-48gb", "--set", "gpu=h100-80gb"),
                          "--set gpu=", "--gpu")
