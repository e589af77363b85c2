"""Every bad input, one clear line (issue 21): a table that cannot drift.

Each row is one bad input through one door (the API, the CLI, a widget) and
the three things its one-line message must hold: the parameter as the user
typed it, the value, and the range (or the valid choices). Each test asserts
the line is one line with no traceback, and that nothing ran: the API call
raised before returning a result, the CLI printed nothing on stdout and exited
2, the widget raised at construction or showed the error (and no result) in
its output area.
"""
from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

import kvsim
from kvsim.book import widgets
from kvsim.cli import main
from kvsim.errors import KvsimError
from kvsim.lab import codes
from kvsim.observe.lint import lint_dashboard, lint_promql, lint_rules

GPU = "a40-48gb"
#: The book's rule file, for the CLI rows that need a real one.
BOOK_RULES = str(Path(__file__).resolve().parents[1] / "book" / "alerts" /
                 "kvsim-preemption.rules.yml")
MODEL = "llama-2-7b"
TINY = kvsim.Workload.from_arrays([0.0, 0.5], [40, 60], [5, 5])


def _simulate(**options):
    return lambda: kvsim.simulate(TINY, model=MODEL, gpu=GPU, **options)


#: A Llama-2-7B-shaped config.json (as a dict) for the config rows.
CONFIG = dict(model_type="llama", num_hidden_layers=32, hidden_size=4096, num_attention_heads=32,
              vocab_size=32000, intermediate_size=11008, torch_dtype="float16")


def _config(**changes) -> dict:
    return dict(CONFIG, **changes)


def _rules(rules_text: str) -> str:
    return "groups:\n  - name: g\n    rules:\n" + rules_text


def _billion_laughs() -> str:
    """Nine levels of nine aliases each: 387,420,489 rules once expanded, from ten lines."""
    lines = ["a: &a [{alert: A, expr: up}, {alert: A, expr: up}, {alert: A, expr: up}]"]
    for i in range(1, 9):
        prev, name = chr(96 + i), chr(97 + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines + ["groups: [{name: g, rules: *i}]"]) + "\n"


def _assert_line(message: str, needles) -> None:
    assert "\n" not in message.strip(), message
    assert "Traceback" not in message
    for needle in needles:
        assert needle in message, (needle, message)


# ---------------------------------------------------------------------------------------------
# API: (label, call, needles)

API = [
    # engine options (resolve_options)
    ("util 1.5", _simulate(gpu_memory_utilization=1.5), ["gpu_memory_utilization=1.5", "(0, 1]"]),
    ("util 0", _simulate(gpu_memory_utilization=0), ["gpu_memory_utilization=0", "(0, 1]"]),
    ("util -0.1", _simulate(gpu_memory_utilization=-0.1), ["gpu_memory_utilization=-0.1", "(0, 1]"]),
    ("util nan", _simulate(gpu_memory_utilization=math.nan), ["gpu_memory_utilization=nan", "(0, 1]"]),
    ("util text", _simulate(gpu_memory_utilization="lots"), ["gpu_memory_utilization='lots'", "(0, 1]"]),
    ("util bool", _simulate(gpu_memory_utilization=True), ["gpu_memory_utilization=True", "(0, 1]"]),
    ("swap 1e99", _simulate(engine="v0", swap_space_bytes=1e99),
     ["swap_space_bytes=1e+99", "[0, 1000000000000000]"]),
    ("swap 1.5", _simulate(swap_space_bytes=1.5), ["swap_space_bytes=1.5", "[0, 1000000000000000]"]),
    ("swap -1", _simulate(swap_space_bytes=-1), ["swap_space_bytes=-1", "[0, 1000000000000000]"]),
    ("swap 2e15", _simulate(swap_space_bytes=2e15),
     ["swap_space_bytes=2000000000000000.0", "[0, 1000000000000000]"]),
    ("swap str", _simulate(swap_space_bytes="4GiB"),
     ["swap_space_bytes='4GiB'", "[0, 1000000000000000]"]),
    ("max_num_seqs 0", _simulate(max_num_seqs=0), ["max_num_seqs=0", "[1, 1000000]"]),
    ("max_num_seqs 2.5", _simulate(max_num_seqs=2.5), ["max_num_seqs=2.5", "[1, 1000000]"]),
    ("max_num_seqs 1e300", _simulate(max_num_seqs=1e300), ["max_num_seqs=1e+300", "[1, 1000000]"]),
    ("batched 0", _simulate(max_num_batched_tokens=0), ["max_num_batched_tokens=0", "[1, "]),
    ("block_size 7", _simulate(block_size=7), ["block_size=7", "16"]),
    ("watermark 1", _simulate(watermark=1.0), ["watermark=1.0", "[0, 0.5]"]),
    ("watermark -", _simulate(watermark=-0.5), ["watermark=-0.5", "[0, 0.5]"]),
    ("seed -1", _simulate(seed=-1), ["seed=-1", ">= 0"]),
    ("seed 1.5", _simulate(seed=1.5), ["seed=1.5", ">= 0"]),
    ("until_s 0", _simulate(until_s=0), ["until_s=0", "> 0"]),
    ("until_s inf", _simulate(until_s=math.inf), ["until_s=inf", "> 0"]),
    ("warmup_s -1", _simulate(warmup_s=-1), ["warmup_s=-1", ">= 0"]),
    ("warmup >= until", _simulate(warmup_s=5.0, until_s=2.0), ["warmup_s=5.0", "until_s=2.0"]),
    ("max_tokens 0", _simulate(max_tokens=0), ["max_tokens=0", ">= 1"]),
    ("tp 0", _simulate(tensor_parallel_size=0), ["tensor_parallel_size=0", "[1, 1024]"]),
    ("tp 3", _simulate(tensor_parallel_size=3), ["tensor_parallel_size=3", "1, 2, 4"]),
    ("engine v2", _simulate(engine="v2"), ["engine='v2'", "v1, v0"]),
    ("admission", _simulate(admission="greedy"), ["admission='greedy'", "optimistic"]),
    ("preemption", _simulate(preemption_mode="evict"), ["preemption_mode='evict'", "recompute, swap"]),
    ("policy", _simulate(scheduling_policy="lifo"), ["scheduling_policy='lifo'", "fcfs, priority"]),
    ("chunked", _simulate(enable_chunked_prefill="yes"), ["enable_chunked_prefill='yes'", "true or false"]),
    ("unknown option", _simulate(frobnicate=1), ["'frobnicate'", "max_num_seqs"]),
    ("num_gpu_blocks 0", _simulate(num_gpu_blocks=0), ["num_gpu_blocks=0", "[1, 1000000000]"]),
    ("num_gpu_blocks 2e9", _simulate(num_gpu_blocks=2 * 10**9),
     ["num_gpu_blocks=2000000000", "[1, 1000000000]"]),
    ("init ratio", _simulate(init_new_token_ratio=1.5), ["init_new_token_ratio=1.5", "[0, 1]"]),
    ("model nope", lambda: kvsim.simulate(TINY, model="nope", gpu=GPU), ["model='nope'", MODEL]),
    ("gpu nope", lambda: kvsim.simulate(TINY, model=MODEL, gpu="nope"), ["gpu='nope'", GPU]),
    # kv_budget
    ("budget util", lambda: kvsim.kv_budget(GPU, MODEL, gpu_memory_utilization=2),
     ["gpu_memory_utilization=2", "(0, 1]"]),
    ("budget dtype", lambda: kvsim.kv_budget(GPU, MODEL, gpu_memory_utilization=0.6, kv_dtype="fp4"),
     ["kv_dtype='fp4'", "fp16"]),
    # workloads
    ("arrays str arrival", lambda: kvsim.Workload.from_arrays(["a"], [1], [1]),
     ["arrival_s[0]='a'", "not a number", ">= 0"]),
    ("arrays None arrival", lambda: kvsim.Workload.from_arrays([0.0, None], [1, 1], [1, 1]),
     ["arrival_s[1]=None", "not a number"]),
    ("arrays str prompt", lambda: kvsim.Workload.from_arrays([0.0], ["x"], [1]),
     ["prompt_tokens[0]='x'", "integers"]),
    ("arrays dict output", lambda: kvsim.Workload.from_arrays([0.0], [1], [{}]),
     ["output_tokens[0]={}", "integers"]),
    ("arrays ragged", lambda: kvsim.Workload.from_arrays([[0.0, 1.0], [2.0]], [1], [1]),
     ["arrival_s=", "flat array of numbers"]),
    ("arrays bool", lambda: kvsim.Workload.from_arrays([True], [1], [1]),
     ["arrival_s[0]=True", "not a number"]),
    ("arrays negative", lambda: kvsim.Workload.from_arrays([-1.0], [1], [1]),
     ["arrival_s[0]=-1.0", "[0, 10,000,000]"]),
    ("arrays prompt 0", lambda: kvsim.Workload.from_arrays([0.0], [0], [1]),
     ["prompt_tokens[0]=0", "[1, 1000000000]"]),
    ("arrays prompt 1.5", lambda: kvsim.Workload.from_arrays([0.0], [1.5], [1]),
     ["prompt_tokens[0]=1.5", "whole number"]),
    ("arrays shape", lambda: kvsim.Workload.from_arrays([0.0, 1.0], [1], [1, 1]),
     ["prompt_tokens has shape (1,)", "(2,)"]),
    ("poisson rate", lambda: kvsim.Workload.poisson(-1, 10), ["rate_per_s=-1", ">= 0"]),
    ("poisson duration", lambda: kvsim.Workload.poisson(1, 0), ["duration_s=0", "> 0"]),
    ("poisson seed", lambda: kvsim.Workload.poisson(1, 10, seed=-3), ["seed=-3", "[0, "]),
    ("request prompt", lambda: kvsim.Request(0.0, 0, 1), ["prompt_tokens=0", "[1, 1000000000]"]),
    ("request arrival", lambda: kvsim.Request(-1.0, 1, 1), ["arrival_s=-1.0", "[0, 10000000]"]),
    ("prefix 0", lambda: TINY.with_shared_prefix(0), ["tokens=0", "[1, 1000000000]"]),
    ("prefix 1.5", lambda: TINY.with_shared_prefix(1.5), ["tokens=1.5", "whole number"]),
    ("prefix groups", lambda: TINY.with_shared_prefix(8, groups=0), ["groups=0", "[1, "]),
    ("prefix popularity", lambda: TINY.with_shared_prefix(8, groups=3, popularity=-0.5),
     ["popularity=-0.5", "[0, 10]", "Zipf exponent"]),
    ("prefix popularity nan", lambda: TINY.with_shared_prefix(8, groups=3, popularity=float("nan")),
     ["popularity=nan"]),
    # scenarios: parameters named as typed
    ("scenario rate 0", lambda: kvsim.run_scenario("belgavi", rate_per_s=0),
     ["rate_per_s=0", "(0, 1000000]"]),
    ("scenario output_mean", lambda: kvsim.run_scenario("belgavi", output_mean=1e12),
     ["output_mean=1000000000000.0", "[1, 1000000000]"]),
    ("scenario output_mean ''", lambda: kvsim.run_scenario("belgavi", output_mean=""),
     ["output_mean=''", "[1, 1000000000]"]),
    ("scenario duration", lambda: kvsim.run_scenario("belgavi", duration_s=-5),
     ["duration_s=-5", "(0, 10000000]"]),
    ("scenario warmup", lambda: kvsim.run_scenario("belgavi", warmup_s=-1),
     ["warmup_s=-1", "[0, 10000000]"]),
    ("scenario seed", lambda: kvsim.run_scenario("belgavi", seed=-1), ["seed=-1", "[0, "]),
    ("scenario prompt", lambda: kvsim.run_scenario("belgavi", prompt_tokens=0),
     ["prompt_tokens=0", "[1, 1000000000]"]),
    ("scenario users", lambda: kvsim.run_scenario("load-test-40", users=0), ["users=0", "[1, "]),
    ("scenario storm rate", lambda: kvsim.run_scenario("incident-day", storm_rate_per_s=0),
     ["storm_rate_per_s=0", "(0, 1000000]"]),
    ("scenario base rate", lambda: kvsim.run_scenario("incident-day", base_rate_per_s=-1),
     ["base_rate_per_s=-1", "[0, 1000000]"]),
    ("scenario burst", lambda: kvsim.run_scenario("mission-4-burst", burst_s=0),
     ["burst_s=0", "(0, 10000000]"]),
    ("scenario unknown", lambda: kvsim.run_scenario("belgavi", rate=1), ["'rate'", "rate_per_s"]),
    ("scenario name", lambda: kvsim.run_scenario("nope"), ["scenario='nope'", "belgavi"]),
    ("scenario output_tokens", lambda: kvsim.run_scenario("thrash-loop", output_tokens=2.5),
     ["output_tokens=2.5", "whole number"]),
    # issue 30: silent nonsense and tracebacks, now one line each
    ("watermark 0.999", _simulate(watermark=0.999), ["watermark=0.999", "[0, 0.5]"]),
    ("closed loop max_errors", lambda: kvsim.Workload.closed_loop(2, 10, max_errors=0),
     ["max_errors=0", "[1, 10000000]"]),
    ("time_scale 1e300", lambda: kvsim.Workload.from_arrays([0.0, 1.0], [5, 5], [5, 5])
     .scaled(1e300), ["time_scale=1e+300", "[0.001, 1000]"]),
    ("arrival 1e300", lambda: kvsim.Request(1e300, 5, 5), ["arrival_s=1e+300", "[0, 10000000]"]),
    ("arrays arrival 1e300", lambda: kvsim.Workload.from_arrays([1e300], [5], [5]),
     ["arrival_s[0]=1e+300", "[0, 10,000,000]"]),
    ("config head_dim 1e12", lambda: kvsim.ModelSpec.from_hf_config(_config(head_dim=10**12)),
     ["head_dim=1000000000000", "[1, 4096]", "real checkpoint"]),
    ("config vocab 1e9", lambda: kvsim.ModelSpec.from_hf_config(_config(vocab_size=10**9)),
     ["vocab_size=1000000000", "[1, 4194304]"]),
    ("config hidden 1e7", lambda: kvsim.ModelSpec.from_hf_config(_config(hidden_size=10**7)),
     ["hidden_size=10000000", "[1, 131072]"]),
    ("config layers 10**5000", lambda: kvsim.ModelSpec.from_hf_config(
        _config(num_hidden_layers=10**5000)),
     ["num_hidden_layers=<an integer of over 4,000 digits>", "[1, 4096]"]),
    ("config text_config str", lambda: kvsim.ModelSpec.from_hf_config(_config(text_config="x")),
     ["text_config='x'", "wrong type", "object"]),
    ("config quantization str", lambda: kvsim.ModelSpec.from_hf_config(
        _config(quantization_config="fp8")),
     ["quantization_config='fp8'", "wrong type", "object"]),
    ("config quant_method", lambda: kvsim.ModelSpec.from_hf_config(
        _config(quantization_config={"quant_method": "banana"})),
     ["quant_method='banana'", "awq", "fp8"]),
    ("config rope inf", lambda: kvsim.ModelSpec.from_hf_config(
        _config(rope_scaling={"rope_type": "linear", "factor": math.inf})),
     ["factor=inf", "(0, 1024]"]),
    ("config rope nan", lambda: kvsim.ModelSpec.from_hf_config(
        _config(rope_scaling={"rope_type": "linear", "factor": math.nan})),
     ["factor=nan", "(0, 1024]"]),
    ("config rope str", lambda: kvsim.ModelSpec.from_hf_config(_config(rope_scaling="linear")),
     ["rope_scaling='linear'", "object"]),
    ("promql 20,000-term sum", lambda: lint_promql("+".join(["vllm:num_requests_waiting"] * 20000)),
     ["519,999 characters", "at most 16,384"]),
    ("promql 10,000 parentheses", lambda: lint_promql("(" * 10000 + "up" + ")" * 10000),
     ["20,002 characters", "at most 16,384"]),
    ("promql 200 parentheses", lambda: lint_promql("(" * 200 + "up" + ")" * 200),
     ["more than 64 levels", "at most 64"]),
    ("promql 800 operators", lambda: lint_promql("+".join(["a"] * 801)),
     ["800 binary operators", "at most 500"]),
    ("sweep 5,000 values", lambda: kvsim.sweep("belgavi", {"output_mean": list(range(5000))}),
     ["more than 1,000 values", "at most 1,000"]),
    ("sweep endless values", lambda: kvsim.sweep("belgavi", {"output_mean": itertools.count(1)}),
     ["more than 1,000 values"]),
    ("sweep runs", lambda: kvsim.sweep("belgavi", {"output_mean": list(range(1, 1001)),
                                                    "rate_per_s": list(range(1, 1001))}),
     ["more than 100,000 points", "at most 100,000 runs"]),
    ("sweep endless seeds", lambda: kvsim.sweep("belgavi", None, seeds=itertools.count()),
     ["more than 100,000 seeds"]),
    ("code room tag", lambda: codes.verify("M1/2/0.87/-/Ana/ABCDE/ÄÄÄÄÄÄÄÄ", room_key="k"),
     ["room tag 'ÄÄÄÄÄÄÄÄ' is malformed", "A-Z and 2-7"]),
    ("code length", lambda: codes.verify("M1/" + "2" * 300 + "/0.87/-/Ana/ABCDE"),
     ["320 characters", "at most 200"]),
    ("name look-alike", lambda: codes.check_name("Аna Lopez"),
     ["name='Аna Lopez'", "mixes the letters of CYRILLIC, LATIN", "one script"]),
    ("leaderboard entries", lambda: codes.leaderboard_lines(["Ana M1/2/0.87/-/Ana/ABCDE"] * 10001),
     ["line 10001", "at most 10,000"]),
    ("rule for banana", lambda: lint_rules(_rules("      - alert: A\n        expr: up\n"
                                                   "        for: banana\n")),
     ["rule 1 (A): for='banana'", "not a valid duration"]),
    ("rule rules 5", lambda: lint_rules("groups:\n  - name: g\n    rules: 5\n"),
     ["rules=5 is not a list"]),
    ("rule billion laughs", lambda: lint_rules(_billion_laughs()),
     ["more than 100,000 YAML nodes", "billion laughs"]),
    ("dashboard expr 5", lambda: lint_dashboard('{"panels": [{"title": "x", '
                                                '"targets": [{"expr": 5}]}]}\n'),
     ["panel 'x'", "expr=5", "as a string"]),
]


@pytest.mark.parametrize("label, call, needles", API, ids=[row[0] for row in API])
def test_api_refuses_in_one_line(label, call, needles):
    result = "not set"
    with pytest.raises(KvsimError) as exc:
        result = call()
    assert result == "not set"                      # nothing was returned: nothing ran
    _assert_line(str(exc.value), needles)


def test_integral_floats_are_taken_explicitly():
    """The float policy: a whole float up to 2**53 is its integer; nothing else is."""
    r = kvsim.simulate(TINY, model=MODEL, gpu=GPU, swap_space_bytes=4e9, max_num_seqs=8.0)
    assert r.config["swap_space_bytes"] == 4_000_000_000 and r.config["max_num_seqs"] == 8
    with pytest.raises(KvsimError, match=r"^seed=9007199254740994.0 is not an exact whole number"):
        kvsim.simulate(TINY, model=MODEL, gpu=GPU, seed=2.0**53 + 2)


def test_a_prefix_longer_than_every_prompt_says_what_it_means():
    w = TINY.with_shared_prefix(10**9)
    assert w.prefix_tokens == 10**9
    assert "longer than every prompt, the longest 60 tokens" in w.describe()
    assert "longer than every prompt" not in TINY.with_shared_prefix(50).describe()


# ---------------------------------------------------------------------------------------------
# CLI: (argv, needles); run in-process as tests/test_cli.py does

TRACE_ARGS = ["--model", MODEL, "--gpu", GPU]

CLI = [
    (["capacity", "--model", MODEL, "--gpu", GPU, "--util", "1.5"],
     ["gpu_memory_utilization=1.5", "(0, 1]"]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--util", "0"], ["gpu_memory_utilization=0", "(0, 1]"]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--util", "x"], ["gpu_memory_utilization='x'", "(0, 1]"]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--util", "nan"], ["gpu_memory_utilization=nan", "not finite"]),
    (["capacity", "--model", MODEL, "--gpu", GPU], ["--util", "--num-gpu-blocks", "--kv-cache-tokens"]),
    (["capacity", "--model", "nope", "--gpu", GPU, "--util", "0.6"], ["model='nope'", MODEL]),
    (["capacity", "--model", MODEL, "--gpu", "nope", "--util", "0.6"], ["gpu='nope'", GPU]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--util", "0.6", "--seq-len", "0"],
     ["seq_len=0", ">= 1"]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--util", "0.6", "--seq-len", "8000"],
     ["8000", "4096"]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--util", "0.6", "--block-size", "0"],
     ["block_size=0", ">= 1"]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--util", "0.6", "--tp", "0"],
     ["tensor_parallel_size=0", "[1, 1024]"]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--num-gpu-blocks", "0"],
     ["num_gpu_blocks=0", "[1, 1000000000]"]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--num-gpu-blocks", "1.5"],
     ["num_gpu_blocks='1.5'", "[1, 1000000000]"]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--kv-cache-tokens", "-5"],
     ["kv_cache_tokens=-5", "[1, "]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--util", "0.6", "--engine", "v3"],
     ["engine='v3'", "v1, v0"]),
    (["capacity", "--model", MODEL, "--gpu", GPU, "--util", "0.6", "--kv-dtype", "fp4"],
     ["kv_dtype='fp4'", "fp16"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS], ["--util", "--num-gpu-blocks", "as capacity does"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "1.2"], ["gpu_memory_utilization=1.2"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--set",
      "gpu_memory_utilization=0.8"], ["--util", "--set gpu_memory_utilization=", "one of them"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--set", "swap_space_bytes=1e99"],
     ["swap_space_bytes=1e+99", "[0, 1000000000000000]"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--set", "max_num_seqs=0"],
     ["max_num_seqs=0", "[1, 1000000]"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--set", "seed=-1"],
     ["seed=-1", ">= 0"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--set", "frob=1"],
     ["'frob'", "max_num_seqs"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--set", "max_num_seqs"],
     ["max_num_seqs", "key=value"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--set", "seed=inf"],
     ["'inf'", "not finite"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--time-scale", "0"],
     ["time_scale=0", "[0.001, 1000]"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--limit", "0"],
     ["limit=0", ">= 1"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--start-s", "-1"],
     ["start_s=-1", "[0, 10000000]"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--duration-s", "0"],
     ["duration_s=0", "(0, 10000000]"]),
    (["simulate", "--trace", "TRACE", "--gpu", GPU, "--util", "0.9"], ["--model or --config"]),
    (["simulate", "--trace", "TRACE", "--model", MODEL, "--util", "0.9"], ["--gpu"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--set", "gpu=h100-80gb"],
     ["--set gpu=", "--gpu"]),
    (["simulate", "--scenario", "belgavi", "--set", "rate_per_s=0"], ["rate_per_s=0", "(0, 1000000]"]),
    (["simulate", "--scenario", "belgavi", "--set", "rate_per_s=-2"], ["rate_per_s=-2", "(0, 1000000]"]),
    (["simulate", "--scenario", "belgavi", "--set", "output_mean=1e12"],
     ["output_mean=1000000000000.0", "[1, 1000000000]"]),
    (["simulate", "--scenario", "belgavi", "--set", "output_mean=0.5"],
     ["output_mean=0.5", "[1, 1000000000]"]),
    (["simulate", "--scenario", "belgavi", "--set", "duration_s=0"], ["duration_s=0", "(0, 10000000]"]),
    (["simulate", "--scenario", "belgavi", "--set", "seed=x"], ["seed='x'", "[0, "]),
    (["simulate", "--scenario", "belgavi", "--util", "2"], ["gpu_memory_utilization=2", "(0, 1]"]),
    (["simulate", "--scenario", "belgavi", "--set", "gpu_memory_utilization=1.5"],
     ["gpu_memory_utilization=1.5", "(0, 1]"]),
    (["simulate", "--scenario", "nope"], ["scenario='nope'", "belgavi"]),
    (["simulate", "--scenario", "belgavi", "--set", "rate=1"], ["'rate'", "rate_per_s"]),
    (["simulate", "--scenario", "belgavi", "--time-scale", "2"], ["--time-scale", "--trace"]),
    (["simulate", "--scenario", "belgavi", "--model", "nope"], ["model='nope'", MODEL]),
    (["simulate", "--scenario", "belgavi", "--set", "max_num_seqs=-1"], ["max_num_seqs=-1", "[1, "]),
    (["simulate", "--scenario", "thrash-loop", "--set", "output_tokens=0"],
     ["output_tokens=0", "[1, 1000000000]"]),
    (["simulate", "--scenario", "incident-day", "--set", "storm_rate_per_s=0"],
     ["storm_rate_per_s=0", "(0, 1000000]"]),
    (["sweep", "--scenario", "belgavi", "--grid", "output_mean=250,,600"],
     ["output_mean=''", "[1, 1000000000]"]),
    (["sweep", "--scenario", "belgavi", "--grid", "output_mean=250,1e12"],
     ["output_mean=1000000000000.0", "[1, 1000000000]"]),
    (["sweep", "--scenario", "belgavi", "--grid", "rate_per_s=1,0"], ["rate_per_s=0", "(0, 1000000]"]),
    (["sweep", "--scenario", "belgavi", "--grid", "gpu_memory_utilization=0.6,1.5"],
     ["gpu_memory_utilization=1.5", "(0, 1]"]),
    (["sweep", "--scenario", "belgavi", "--grid", "output_mean"], ["--grid 'output_mean'", "key=v1,v2"]),
    (["sweep", "--scenario", "belgavi", "--seeds", "5-1"], ["--seeds '5-1'", "lo <= hi"]),
    (["sweep", "--scenario", "belgavi", "--seeds", "a"], ["--seeds 'a'", "0-4"]),
    (["sweep", "--scenario", "belgavi", "--workers", "0"], ["workers=0", "[1, 512]"]),
    (["sweep", "--scenario", "belgavi", "--chunk-size", "0"], ["chunk_size=0", "[1, 1000000]"]),
    (["sweep", "--scenario", "belgavi", "--grid", "seed=1,2", "--set", "seed=3"],
     ["--grid seed", "--set seed=", "expected one"]),
    (["exporter", "--scenario", "belgavi", "--speed", "0"], ["speed=0", "[0.01, 100000]"]),
    (["exporter", "--scenario", "belgavi", "--port", "70000"], ["port=70000", "[0, 65535]"]),
    (["exporter", "--scenario", "belgavi", "--vllm-version", "v9"],
     ["vllm_version='v9'", "v1, v1-0.10, v0"]),
    (["exporter", "--scenario", "belgavi", "--set", "rate_per_s=0"], ["rate_per_s=0", "(0, 1000000]"]),
    (["exporter", "--scenario", "belgavi", "--set", "admission=max_utilization"],
     ["admission='max_utilization'", "expected admission='optimistic'"]),
    # issue 30
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--time-scale", "1e300"],
     ["time_scale=1e+300", "[0.001, 1000]"]),
    (["simulate", "--trace", "TRACE", *TRACE_ARGS, "--util", "0.9", "--start-s", "1e300"],
     ["start_s=1e+300", "[0, 10000000]"]),
    (["simulate", "--scenario", "belgavi", "--set", "watermark=0.999"],
     ["watermark=0.999", "[0, 0.5]"]),
    (["sweep", "--scenario", "belgavi", "--grid", "output_mean=" + ",".join(map(str, range(5000)))],
     ["--grid output_mean has 5,000 values", "at most 1,000"]),
    (["lint-rules", "--expr", "(" * 10000 + "up" + ")" * 10000], ["20,002 characters", "16,384"]),
    (["lint-rules", "--expr", " + ".join(["vllm:num_requests_waiting"] * 20000)],
     ["characters", "at most 16,384"]),
    (["missions", "--verify", "M1/2/0.87/-/Ana/ABCDE/ÄÄÄÄÄÄÄÄ"], ["room tag", "malformed"]),
    (["missions", "--name", "Аna"], ["name='Аna'", "one script"]),
    # a rule file on a replay's clock
    (["lint-rules", BOOK_RULES, "--at-speed", "0.5"],
     ["speed=0.5", "[1, 1000]"]),
    (["lint-rules", BOOK_RULES, "--at-speed", "x"],
     ["speed='x'", "not a number"]),
    (["lint-rules", BOOK_RULES, "--at-speed", "200"],
     ["speed=200 is too fast", "[2m]", "at most 30"]),
    (["lint-rules", "--expr", "up", "--at-speed", "20"], ["--at-speed rewrites a rule file"]),
    (["lint-rules", BOOK_RULES, "--at-speed", "20", "--against",
      "incident-day"], ["--at-speed rewrites a rule file", "--against"]),
]


@pytest.fixture
def tiny_trace(tmp_path):
    path = tmp_path / "tiny.csv"
    path.write_text("arrival_s,prompt_tokens,output_tokens\n0.0,40,5\n0.5,60,5\n")
    return path


@pytest.mark.parametrize("argv, needles", CLI, ids=[" ".join(a[:1] + a[-2:]) for a, _ in CLI])
def test_cli_refuses_in_one_line(capsys, tiny_trace, argv, needles):
    argv = [str(tiny_trace) if a == "TRACE" else a for a in argv]
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""                                # nothing ran: no summary, no table
    assert len(err.splitlines()) == 1, err
    _assert_line(err, needles)


@pytest.mark.parametrize("argv, canonical", [
    (["capacity", "--model", "LLAMA-2-7B", "--gpu", GPU, "--util", "0.6", "--json"],
     ["--model 'LLAMA-2-7B' is read as 'llama-2-7b'"]),
    (["capacity", "--model", MODEL, "--gpu", "A40-48GB", "--util", "0.6", "--json"],
     ["--gpu 'A40-48GB' is read as 'a40-48gb'"]),
])
def test_another_case_is_read_with_a_note_naming_the_canonical_name(capsys, argv, canonical):
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert '"model": "llama-2-7b"' in out and '"gpu": "a40-48gb"' in out
    assert len(err.splitlines()) == 1
    _assert_line(err, ["kvsim: note:", "canonical", *canonical])


def test_canonical_names_give_no_note(capsys):
    assert main(["capacity", "--model", MODEL, "--gpu", GPU, "--util", "0.6"]) == 0
    assert capsys.readouterr().err == ""


def test_the_rules_are_in_the_help(capsys):
    for argv in (["--help"], ["capacity", "--help"], ["simulate", "--help"]):
        assert main(argv) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "--util F is required wherever the pool is sized from memory" in out
        assert "Defaults: --engine v1, block size 16, tensor parallelism 1" in out


# ---------------------------------------------------------------------------------------------
# Widgets: the constructor raises the API's line; a value set on a control is refused or
# shown, as the API's line, in the output area

pytest.importorskip("ipywidgets")

from kvsim.book.lab_panel import lab_panel  # needs ipywidgets at call time

WIDGET_ARGS = [
    (widgets.capacity_calculator, dict(gpu_memory_utilization=1.5),
     ["gpu_memory_utilization=1.5", "(0, 1]"]),
    (widgets.capacity_calculator, dict(gpu_memory_utilization=0),
     ["gpu_memory_utilization=0", "(0, 1]"]),
    (widgets.capacity_calculator, dict(gpu_memory_utilization=0.005),
     ["gpu_memory_utilization=0.005", "[0.01, 1.0]", "slider"]),
    (widgets.capacity_calculator, dict(gpu_memory_utilization="x"), ["gpu_memory_utilization='x'"]),
    (widgets.capacity_calculator, dict(prompt_tokens=0), ["prompt_tokens=0", "[1, 1000000000]"]),
    (widgets.capacity_calculator, dict(prompt_tokens=2.5), ["prompt_tokens=2.5", "whole number"]),
    (widgets.capacity_calculator, dict(output_tokens=-1), ["output_tokens=-1", "[0, 1000000000]"]),
    (widgets.capacity_calculator, dict(model="nope"), ["model='nope'", MODEL]),
    (widgets.capacity_calculator, dict(model=None), ["model=None", MODEL]),
    (widgets.capacity_calculator, dict(gpu="nope"), ["gpu='nope'", GPU]),
    (widgets.capacity_calculator, dict(kv_dtype="fp4"), ["kv_dtype='fp4'", "fp16"]),
    (widgets.scheduler_stepper, dict(num_gpu_blocks=0), ["num_gpu_blocks=0", "[1, 1000000000]"]),
    (widgets.scheduler_stepper, dict(num_gpu_blocks=2), ["num_gpu_blocks=2", "[4, 60]", "slider"]),
    (widgets.scheduler_stepper, dict(num_gpu_blocks=61), ["num_gpu_blocks=61", "[4, 60]"]),
    (widgets.scheduler_stepper, dict(requests=0), ["requests=0", "[1, 26]"]),
    (widgets.scheduler_stepper, dict(requests=13), ["requests=13", "[1, 12]", "slider"]),
    (widgets.scheduler_stepper, dict(prompt_tokens=0), ["prompt_tokens=0", "[1, 1000000000]"]),
    (widgets.scheduler_stepper, dict(prompt_tokens=401), ["prompt_tokens=401", "[1, 400]"]),
    (widgets.scheduler_stepper, dict(output_tokens=0.5), ["output_tokens=0.5", "whole number"]),
    (widgets.scheduler_stepper, dict(model="nope"), ["model='nope'", MODEL]),
    (widgets.scheduler_stepper, dict(gpu="nope"), ["gpu='nope'", GPU]),
    # the lab panel: lab_settings' check first, then the panel's sliders (never clamped)
    (lab_panel, dict(gpu_memory_utilization=0.3),
     ["gpu_memory_utilization=0.3", "[0.4, 0.95]", "lab panel's slider"]),
    (lab_panel, dict(gpu_memory_utilization=1.2), ["gpu_memory_utilization=1.2"]),
    (lab_panel, dict(seed=500), ["seed=500", "[0, 9]", "lab panel's slider"]),
    (lab_panel, dict(output_mean=20), ["output_mean=20", "[50, 1000]", "lab panel's slider"]),
    (lab_panel, dict(rate_per_s=8.0), ["rate_per_s=8.0", "[0.25, 4.0]"]),
    (lab_panel, dict(max_num_seqs=500), ["max_num_seqs=500", "[0, 64]"]),
]


@pytest.mark.parametrize("make, kwargs, needles", WIDGET_ARGS,
                         ids=[f"{m.__name__}-{k}" for m, k, _ in WIDGET_ARGS])
def test_a_widget_refuses_a_bad_argument_in_one_line(make, kwargs, needles):
    box = None
    with pytest.raises(KvsimError) as exc:
        box = make(**kwargs)
    assert box is None                               # no widget was built
    _assert_line(str(exc.value), needles)


def _output_text(box) -> str:
    return box.children[-1].outputs[0]["data"]["text/plain"]


# (widget, control index, value, needles): set from Python, as a reader's code might
WIDGET_VALUES = [
    (widgets.capacity_calculator, 3, 1.5, ["gpu_memory_utilization=1.5", "(0, 1]"]),
    (widgets.capacity_calculator, 3, 0.0, ["gpu_memory_utilization=0.0", "(0, 1]"]),
    (widgets.capacity_calculator, 3, 0.001, ["gpu_memory_utilization=0.001", "[0.01, 1.0]"]),
    (widgets.scheduler_stepper, 0, 0, ["num_gpu_blocks=0", "[1, 1000000000]"]),
    (widgets.scheduler_stepper, 0, 3, ["num_gpu_blocks=3", "[4, 60]"]),
    (widgets.scheduler_stepper, 1, 20, ["requests=20", "[1, 12]"]),
    (widgets.scheduler_stepper, 2, 1000, ["prompt_tokens=1000", "[1, 400]"]),
    (widgets.scheduler_stepper, 3, 0, ["output_tokens=0", "[1, 1000000000]"]),
    # issue 30: a value of the wrong type or off a drop-down's options, set from Python, is
    # the constructor's one line too (a raw TraitError before; 2.5 was truncated, None and
    # the step slider's 1481 passed)
    (widgets.capacity_calculator, 0, "nope", ["model='nope'", "llama-2-7b"]),
    (widgets.capacity_calculator, 0, None, ["model=None", "llama-2-7b"]),
    (widgets.capacity_calculator, 1, math.nan, ["kv_dtype=nan", "fp16"]),
    (widgets.capacity_calculator, 2, "h100", ["gpu='h100'", "h100-80gb"]),
    (widgets.capacity_calculator, 3, math.nan, ["gpu_memory_utilization=nan", "not finite"]),
    (widgets.capacity_calculator, 3, "lots", ["gpu_memory_utilization='lots'", "not a number"]),
    (widgets.capacity_calculator, 3, None, ["gpu_memory_utilization=None", "not a number"]),
    (widgets.capacity_calculator, 4, math.nan, ["prompt_tokens=nan", "whole number"]),
    (widgets.capacity_calculator, 4, "many", ["prompt_tokens='many'", "whole number"]),
    (widgets.capacity_calculator, 4, 2.5, ["prompt_tokens=2.5", "whole number"]),
    (widgets.capacity_calculator, 5, None, ["output_tokens=None", "whole number"]),
    (widgets.scheduler_stepper, 0, math.nan, ["num_gpu_blocks=nan", "whole number"]),
    (widgets.scheduler_stepper, 1, "x", ["requests='x'", "[1, 26]"]),
    (widgets.scheduler_stepper, 2, None, ["prompt_tokens=None", "whole number"]),
    (widgets.scheduler_stepper, 3, math.inf, ["output_tokens=inf", "whole number"]),
    (widgets.scheduler_stepper, 4, "bogus", ["answers='bogus'", "varied, one"]),
    (widgets.scheduler_stepper, 5, 1481, ["step=1481", "the run's steps"]),
    (widgets.scheduler_stepper, 5, math.nan, ["step=nan", "the run's steps"]),
    (widgets.scheduler_stepper, 5, 0, ["step=0", "the run's steps"]),
]


@pytest.mark.parametrize("make, index, value, needles", WIDGET_VALUES,
                         ids=[f"{m.__name__}-{i}-{v}" for m, i, v, _ in WIDGET_VALUES])
def test_a_slider_refuses_a_value_off_its_range_and_keeps_its_own(make, index, value, needles):
    box = make()
    control = box.children[index]
    before, shown = control.value, _output_text(box)
    with pytest.raises(KvsimError) as exc:
        control.value = value
    _assert_line(str(exc.value), needles)
    assert control.value == before and _output_text(box) == shown     # never clamped


@pytest.mark.parametrize("index, value, needles", [
    (4, 0, ["prompt_tokens=0", "[1, 1000000000]"]),
    (4, -50, ["prompt_tokens=-50", "[1, 1000000000]"]),
    (4, 2 * 10**9, ["prompt_tokens=2000000000", "[1, 1000000000]"]),
    (5, -1, ["output_tokens=-1", "[0, 1000000000]"]),
    (5, 2 * 10**9, ["output_tokens=2000000000", "[0, 1000000000]"]),
])
def test_a_typed_length_the_api_refuses_shows_its_line_in_the_output(index, value, needles):
    box = widgets.capacity_calculator()
    assert "concurrent requests fit" in _output_text(box)
    box.children[index].value = value
    assert box.children[index].value == value                          # kept as typed
    text = _output_text(box)
    _assert_line(text, needles)
    assert "concurrent requests fit" not in text                       # no stale result
    assert "Concurrent requests" not in box.children[-1].outputs[0]["data"]["text/html"]


def test_a_preset_in_another_case_is_shown_by_its_canonical_name():
    box = widgets.capacity_calculator(model="LLAMA-2-7B", gpu="A40-48GB")
    assert box.children[0].value == MODEL and box.children[2].value == GPU


def test_the_table_holds_at_least_a_hundred_bad_inputs():
    total = len(API) + len(CLI) + len(WIDGET_ARGS) + len(WIDGET_VALUES) + 5
    assert total >= 200, total
    assert np.unique([row[0] for row in API]).size == len(API)


@pytest.mark.parametrize("content, needle", [
    (None, "does not exist"), ("dir", "is a folder, not a regular file"),
    (b"ab\x00cd", "is a binary file"), (b"caf\xe9", "is not UTF-8 text (byte 3)"),
    (b"x" * 11, "is 11 bytes"),
])
def test_a_text_file_that_cannot_be_read_is_one_line_naming_it(tmp_path, content, needle):
    from kvsim.files import read_text_file
    path = tmp_path / "input.txt"
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(KvsimError) as exc:
        read_text_file(path, what="scrape", expected="a scrape", max_bytes=10)
    msg = str(exc.value)
    assert needle in msg and str(path) in msg and msg.endswith("a scrape" if needle != "is 11 bytes"
                                                                else "at most 10 bytes")
    assert "\n" not in msg
    path2 = tmp_path / "ok.txt"
    path2.write_text("vllm:x 1\n")
    assert read_text_file(path2, what="scrape", expected="a scrape", max_bytes=10) == "vllm:x 1\n"


# ---------------------------------------------------------------------------------------------
# Issue 30: hostile files through every door, endless inputs, and writes that replace nothing

import json
import os
import stat
import threading
from pathlib import Path

from kvsim.lab import progress as mp

SCRAPE = Path(__file__).resolve().parents[1] / "book" / "data" / "scrapes" / \
    "vllm-0.11.0-issue-28924.prom"


def _run_cli(capsys, argv, timeout_s: float = 60.0):
    """``main(argv)`` in a thread: (status, out, err), or a failure if it does not return
    within ``timeout_s`` (a read that blocks on a FIFO would hang the test run instead)."""
    box = {}

    def target():
        box["status"] = main([str(a) for a in argv])

    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(timeout_s)
    assert not th.is_alive(), f"kvsim {' '.join(map(str, argv))[:80]} did not return (a hang)"
    out, err = capsys.readouterr()
    return box["status"], out, err


def _refused(capsys, argv, needles):
    status, out, err = _run_cli(capsys, argv)
    assert status == 2 and out == "", (status, out, err)
    assert len(err.splitlines()) == 1, err
    _assert_line(err, needles)


@pytest.fixture
def hostile(tmp_path):
    """Files a fuzzer would hand kvsim: JSON nested 100,000 deep, a 5,000-digit layer count,
    YAML nested 100,000 deep, a 10,000-parenthesis rule, and their likes for each reader."""
    deep = "[" * 100_000 + "]" * 100_000
    files = {
        "deep.json": '{"num_hidden_layers": ' + deep + "}",
        "huge.json": json.dumps(CONFIG).replace('"num_hidden_layers": 32',
                                                '"num_hidden_layers": ' + "9" * 5000),
        "deep.yml": "groups: " + deep + "\n",
        "paren.yml": _rules("      - alert: A\n        expr: " + "(" * 10_000 + "up"
                            + ")" * 10_000 + "\n"),
        "dash_deep.json": '{"panels": ' + deep + "}",
        "twin_deep.json": '{"data": ' + deep + "}",
        "twin_huge.json": '{"status": "success", "data": {"resultType": "vector", "result": '
                          '[{"metric": {"__name__": "vllm:x"}, "value": [' + "9" * 5000
                          + ', "1"]}]}}',
        "import_deep.json": '{"format": ' + deep + "}",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


#: The seven CLI surfaces the tester's hostile files reached, each a traceback before.
HOSTILE = [
    ("capacity --config, nested", ["capacity", "--config", "<deep.json>", "--gpu", GPU,
                                   "--util", "0.6"], ["deep.json", "nested more than 100 levels"]),
    ("capacity --config, 5,000 digits", ["capacity", "--config", "<huge.json>", "--gpu", GPU,
                                         "--util", "0.6"],
     ["num_hidden_layers=<an integer of 5,000 digits>", "[1, 4096]"]),
    ("from_hf_config (simulate --config), nested", ["simulate", "--scenario", "belgavi",
                                                    "--config", "<deep.json>"],
     ["deep.json", "nested more than 100 levels"]),
    ("from_hf_config (simulate --config), 5,000 digits",
     ["simulate", "--scenario", "belgavi", "--config", "<huge.json>"],
     ["num_hidden_layers=<an integer of 5,000 digits>"]),
    ("lint-rules, YAML nested", ["lint-rules", "<deep.yml>"],
     ["deep.yml", "nested more than 64 levels"]),
    ("lint-rules, 10,000 parentheses", ["lint-rules", "<paren.yml>"],
     ["rule 1 (A)", "20,002 characters", "at most 16,384"]),
    ("lint-rules --dashboard, nested", ["lint-rules", "--dashboard", "<dash_deep.json>"],
     ["dash_deep.json", "nested more than 100 levels"]),
    ("twin, nested", ["twin", "<twin_deep.json>", "--uptime", "10"],
     ["twin_deep.json", "nested more than 100 levels"]),
    ("twin, 5,000 digits", ["twin", "<twin_huge.json>", "--uptime", "10"],
     ["twin_huge.json", "not a [time, \"number\"] pair"]),
    ("missions --import, nested", ["missions", "--import", "<import_deep.json>",
                                   "--progress-file", "<progress.json>"],
     ["import_deep.json", "nested more than 100 levels"]),
]


@pytest.mark.parametrize("label, argv, needles", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_file_is_one_line_through_every_door(capsys, hostile, label, argv, needles):
    before = sorted(p.name for p in hostile.iterdir())
    _refused(capsys, [str(hostile / a[1:-1]) if a.startswith("<") else a for a in argv],
             needles)
    assert sorted(p.name for p in hostile.iterdir()) == before        # nothing written


#: Every door that reads a user's file: (argv with FILE, the reader's stated maximum).
READERS = [
    (["simulate", "--trace", "FILE", *TRACE_ARGS, "--util", "0.9"], 256 * 2**20),
    (["missions", "--leaderboard", "FILE"], 2**20),
    (["missions", "--import", "FILE", "--progress-file", "NEW"], 4 * 2**20),
    (["missions", "--progress-file", "FILE"], 4 * 2**20),
    (["capacity", "--config", "FILE", "--gpu", GPU, "--util", "0.6"], 4 * 2**20),
    (["lint-rules", "FILE"], 4 * 2**20),
    (["lint-rules", "--dashboard", "FILE"], 4 * 2**20),
    (["twin", "FILE", "--uptime", "10"], 64 * 2**20),
]
_READER_IDS = [" ".join(a[:2]) for a, _ in READERS]


@pytest.mark.parametrize("argv, _max", READERS, ids=_READER_IDS)
def test_a_fifo_is_refused_at_once_through_every_reader(capsys, tmp_path, argv, _max):
    """A FIFO with no writer would block an open() for ever; every reader refuses it in
    one line without reading (and the thread running it returns: nothing hangs)."""
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    argv = [str(fifo) if a == "FILE" else str(tmp_path / "new.json") if a == "NEW" else a
            for a in argv]
    _refused(capsys, argv, [str(fifo), "is a FIFO (named pipe), not a regular file"])
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["endless"]


@pytest.mark.parametrize("argv, limit", READERS, ids=_READER_IDS)
def test_a_file_over_its_readers_stated_maximum_is_refused_unread(capsys, tmp_path, argv, limit):
    """Each reader names its maximum size; a (sparse) file one byte over it is refused from
    its size alone, before it is read."""
    big = tmp_path / "big"
    with open(big, "wb") as fh:
        fh.truncate(limit + 1)
    argv = [str(big) if a == "FILE" else str(tmp_path / "new.json") if a == "NEW" else a
            for a in argv]
    _refused(capsys, argv, [str(big), f"is {limit + 1:,} bytes", f"at most {limit:,} bytes"])


def test_a_device_is_refused_unread():
    with pytest.raises(KvsimError, match=r"^trace '/dev/zero' is a character device, not a "
                                         r"regular file"):
        kvsim.Workload.from_trace("/dev/zero")


def _snapshot(folder: Path) -> dict:
    """Every entry of ``folder``: its kind, mode, inode and (files) bytes."""
    out = {}
    for p in sorted(folder.iterdir()):
        st = os.lstat(p)
        out[p.name] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_ino,
                       p.read_bytes() if stat.S_ISREG(st.st_mode) else None)
    return out


@pytest.fixture
def targets(tmp_path):
    """A folder holding what a mistyped path may point at: a FIFO, somebody's read-only
    file, somebody's writable file, and kvsim's own export made read-only; plus a progress
    file and an export of it (the writers' inputs), in a folder beside."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    progress = inputs / "progress.json"
    mp.commit_prediction(1, {"cause": "kv-too-small"}, path=progress)
    export = Path(mp.export_progress(inputs / "export.json", path=progress))
    folder = tmp_path / "targets"
    folder.mkdir()
    os.mkfifo(folder / "fifo")
    (folder / "notes.txt").write_text("my notes, not kvsim's\n")
    os.chmod(folder / "notes.txt", 0o444)
    (folder / "thesis.json").write_text('{"chapter": 1}\n')
    (folder / "old-export.json").write_bytes(export.read_bytes())
    os.chmod(folder / "old-export.json", 0o444)
    return folder, progress, export


#: Every door that writes a user's file (TARGET: the path it is pointed at).
WRITERS = [
    ("missions --export", ["missions", "--export", "TARGET", "--progress-file", "PROGRESS"]),
    ("missions --name", ["missions", "--name", "Ana", "--progress-file", "TARGET"]),
    ("missions --import", ["missions", "--import", "EXPORT", "--progress-file", "TARGET"]),
    ("missions --reset", ["missions", "--reset", "--progress-file", "TARGET"]),
    ("twin --trace-out", ["twin", str(SCRAPE), "--uptime", "86400", "--no-fit", "--no-what-ifs",
                          "--trace-out", "TARGET"]),
]


@pytest.mark.parametrize("target", ["fifo", "notes.txt", "thesis.json", "old-export.json"])
@pytest.mark.parametrize("label, argv", WRITERS, ids=[w[0] for w in WRITERS])
def test_no_writer_replaces_anything_that_is_not_its_own(capsys, targets, label, argv, target):
    """A FIFO, a read-only file, another program's file: each writer refuses it in one line,
    and the folder is exactly as it was (no file replaced, renamed, copied beside or left
    half-written, no temporary file, no lock)."""
    folder, progress, export = targets
    swap = {"TARGET": folder / target, "PROGRESS": progress, "EXPORT": export}
    before = _snapshot(folder)
    status, out, err = _run_cli(capsys, [swap.get(a, a) for a in argv])
    assert status == 2 and out == "" and len(err.splitlines()) == 1, (status, out, err)
    _assert_line(err, [str(folder / target)])
    assert ("nothing was" in err or "read-only" in err or "not a regular file" in err), err
    assert _snapshot(folder) == before


def test_workload_to_csv_refuses_a_fifo_and_a_foreign_file_and_replaces_its_own(tmp_path):
    fifo, notes, mine = tmp_path / "fifo", tmp_path / "notes.csv", tmp_path / "mine.csv"
    os.mkfifo(fifo)
    notes.write_text("a,b\n1,2\n")
    for target, needle in ((fifo, "is a FIFO"), (notes, "is a file kvsim did not write")):
        with pytest.raises(KvsimError, match=needle):
            TINY.to_csv(target)
    TINY.to_csv(mine)
    TINY.scaled(2.0).to_csv(mine)                     # its own trace: replaced
    assert kvsim.Workload.from_trace(mine).arrival_s.tolist() == [0.0, 0.25]
    assert notes.read_text() == "a,b\n1,2\n" and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "mine.csv", "notes.csv"]


def test_an_empty_room_key_is_one_line_not_no_key(monkeypatch):
    code = codes.completion_code(2, 2, {"preemption_mode": "recompute",
                                        "gpu_memory_utilization": 0.85}, name="Ana",
                                 room_key=None)
    for empty in ("", "   "):
        monkeypatch.setenv(codes.ROOM_KEY_VAR, empty)
        with pytest.raises(KvsimError) as exc:
            codes.verify(code, rescore=False)
        _assert_line(str(exc.value), ["$KVSIM_ROOM_KEY=", "set but empty", "unset"])


def test_the_grid_and_time_scale_caps_of_the_cli_are_the_apis():
    """The CLI keeps copies of two caps so that `kvsim --help` stays fast; they agree."""
    from kvsim import cli
    from kvsim.runs.sweeps import MAX_GRID_VALUES
    from kvsim.traffic.workload import TIME_SCALE_RANGE
    assert cli.GRID_VALUES_MAX == MAX_GRID_VALUES
    assert (cli.TIME_SCALE_MIN, cli.TIME_SCALE_MAX) == TIME_SCALE_RANGE


def test_the_lab_panels_choices_refuse_in_one_line_and_keep_a_none_option():
    """The toggles and drop-downs of the lab panel and the mission panels (strict_choice):
    a value off their options is one line naming the parameter; None is a value only where
    it is an option (a mission's "None (no cap)")."""
    toggle = widgets.strict_choice("toggle")(options=["v1", "v0"], value="v1", param="engine")
    for bad in ("v2", None, math.nan, 1):
        with pytest.raises(KvsimError) as exc:
            toggle.value = bad
        _assert_line(str(exc.value), [f"engine={bad!r}", "v1, v0"])
        assert toggle.value == "v1"
    caps = widgets.strict_choice("dropdown")(options=[("None (no cap)", None), ("400", 400)],
                                             value=400, param="max_tokens")
    caps.value = None
    assert caps.value is None
    with pytest.raises(KvsimError, match=r"^max_tokens=401 is not one of the control's options: "
                                         r"expected one of None, 400$"):
        caps.value = 401
