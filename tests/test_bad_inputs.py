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

import math

import numpy as np
import pytest

import kvsim
from kvsim.book import widgets
from kvsim.cli import main
from kvsim.errors import KvsimError

GPU = "a40-48gb"
MODEL = "llama-2-7b"
TINY = kvsim.Workload.from_arrays([0.0, 0.5], [40, 60], [5, 5])


def _simulate(**options):
    return lambda: kvsim.simulate(TINY, model=MODEL, gpu=GPU, **options)


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
    ("watermark 1", _simulate(watermark=1.0), ["watermark=1.0", "[0, 1)"]),
    ("watermark -", _simulate(watermark=-0.5), ["watermark=-0.5", "[0, 1)"]),
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
    (["exporter", "--scenario", "belgavi", "--version", "v9"], ["version='v9'", "v1, v1-0.10, v0"]),
    (["exporter", "--scenario", "belgavi", "--set", "rate_per_s=0"], ["rate_per_s=0", "(0, 1000000]"]),
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

from kvsim.book.lab_panel import lab_panel  # noqa: E402  (needs ipywidgets at call time)

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
    assert total >= 100, total
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
