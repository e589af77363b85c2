"""vLLM V1's asynchronous scheduling (``async_scheduling=True``): a step lasts the longer of
its GPU work and its CPU work, instead of their sum.

vLLM turns it on by default from 0.14 (PR #27614), and so does kvsim (its default follows
``vllm_version``); these tests set it explicitly where they compare the two.
"""
from __future__ import annotations

import pytest

import kvsim
from kvsim.engine.costs import StepCost
from kvsim.engine.loop import build_engine
from kvsim.engine.timeline import Recorder
from kvsim.errors import KvsimError
from kvsim.model.vllm_defaults import async_scheduling_default, vllm_async_scheduling_default

MODEL, GPU = "llama-2-7b", "a40-48gb"


def _cost(async_scheduling: bool) -> StepCost:
    return StepCost(kvsim.get_model(MODEL), kvsim.get_gpu(GPU), async_scheduling=async_scheduling)


@pytest.mark.parametrize("n, context", [(1, 100), (8, 8_000), (80, 80 * 1_100), (256, 256 * 50)])
def test_a_decode_step_lasts_the_longer_of_gpu_and_cpu_instead_of_their_sum(n, context):
    serial, overlapped = _cost(False), _cost(True)
    gpu = serial.fixed_gpu_s(n, n) + serial.decode_s_per_token * context
    cpu = serial.cpu_s(n)
    assert serial.step_s(n, n, decode_context=context) == pytest.approx(gpu + cpu, rel=1e-12)
    assert overlapped.step_s(n, n, decode_context=context) == max(gpu, cpu)


def test_a_cpu_bound_step_lasts_its_cpu_time():
    # a tiny model step on a fast GPU with a large CPU overhead: the CPU is the longer
    cost = StepCost(kvsim.get_model("llama-3.1-8b"), kvsim.get_gpu("h100-80gb"),
                    kvsim.CostModel(step_overhead_s=0.05), async_scheduling=True)
    assert cost.step_s(4, 4, decode_context=400) == cost.cpu_s(4) == pytest.approx(0.05 + 4 * 38e-6)


def test_a_prefill_step_overlaps_too():
    serial, overlapped = _cost(False), _cost(True)
    args = dict(n_tokens=512, n_seqs=1, prefill_pairs=512 * 513 // 2, prefill_kv_tokens=512)
    gpu = serial.step_s(**args) - serial.cpu_s(1)
    assert overlapped.step_s(**args) == pytest.approx(max(gpu, serial.cpu_s(1)), rel=1e-12)


def _run(**opts):
    wl = kvsim.Workload.poisson(1.5, 120.0, prompt=850, output=250, seed=3)
    return kvsim.simulate(wl, model=MODEL, gpu=GPU, gpu_memory_utilization=0.6, seed=3, **opts)


def test_a_run_with_async_scheduling_is_faster_and_the_same_step_by_step():
    serial, fast = _run(async_scheduling=False), _run(async_scheduling=True)
    assert fast.config["async_scheduling"] is True and serial.config["async_scheduling"] is False
    s, f = serial.summary(), fast.summary()
    assert f["itl_p50_s"] < s["itl_p50_s"]
    # every step's duration is max(gpu, cpu): at least the CPU time of its batch
    stepped = _run(async_scheduling=True, step_by_step=True)
    assert stepped.timeline["dt_s"].tolist() == fast.timeline["dt_s"].tolist()
    assert stepped.summary() == f


def test_the_default_follows_vllm_off_before_0_14_and_on_from_it():
    for version, expected in (("0.11", False), ("0.13", False), ("0.14", True), ("0.34", True)):
        assert async_scheduling_default("v1", version) is expected
        assert vllm_async_scheduling_default("v1", version) is expected
        assert kvsim.simulate([kvsim.Request(0.0, 10, 2)], model=MODEL, gpu=GPU,
                              vllm_version=version).config["async_scheduling"] is expected
    # the default release (the newest) schedules asynchronously; V0 never does
    assert kvsim.simulate([kvsim.Request(0.0, 10, 2)], model=MODEL,
                          gpu=GPU).config["async_scheduling"] is True
    assert async_scheduling_default("v0", "0.10") is False
    assert kvsim.simulate([kvsim.Request(0.0, 10, 2)], model=MODEL, gpu=GPU,
                          engine="v0").config["async_scheduling"] is False


def test_v0_has_no_async_scheduling():
    with pytest.raises(KvsimError, match="async_scheduling=True is not available with engine='v0'"):
        kvsim.simulate([kvsim.Request(0.0, 10, 2)], model=MODEL, gpu=GPU, engine="v0",
                       async_scheduling=True)


@pytest.mark.parametrize("first_context, steps", [(0, 40), (None, 40), (10**7, 5)])
def test_a_decode_run_times_each_step_as_a_single_step_would(first_context, steps):
    # A CPU overhead that the GPU's time overtakes once the batch attends to enough tokens:
    # a run from below that point (None: just below it) crosses it; one from 0 tokens too,
    # and one from 10^7 starts above it.
    wl = kvsim.Workload.from_requests([kvsim.Request(0.0, 100, 100)])
    engine = build_engine(wl, MODEL, GPU, {"async_scheduling": True, "step_overhead_s": 0.05})
    engine.scheduler.pull_arrivals(0.0)          # no arrival left to cut the run short
    n = 8
    gpu_fixed, cpu, gpu_bound_from = engine._async_step_costs(n)
    slope = engine.cost.decode_s_per_unit
    assert gpu_fixed + slope * (gpu_bound_from - 1) < cpu <= gpu_fixed + slope * gpu_bound_from
    context = gpu_bound_from - 3 * n - 1 if first_context is None else first_context
    ends, timing = engine._time_async_decode_run(1.5, n, steps, context, n)
    # the durations the recorder rebuilds from the run's timing
    rec = Recorder()
    rec.decode_run(1.5, ends, timing, 0, [0], 0, 0, 0, 0, 0, n, 0, 0, n, 0)
    timeline = rec.timeline()
    dts = timeline["dt_s"].tolist()
    want = [engine.cost.step_s(n, n, decode_context=context + j * n) for j in range(steps)]
    assert dts == want
    assert timeline["t_s"].tolist() == ends
    t, want_ends = 1.5, []
    for dt in want:
        t += dt
        want_ends.append(t)
    assert ends == want_ends
    crossing = [dt == cpu for dt in dts]
    assert crossing == sorted(crossing, reverse=True)      # the CPU's steps, then the GPU's
    if first_context is None:
        assert crossing[0] and not crossing[-1]
