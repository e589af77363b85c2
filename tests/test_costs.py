"""The cost model: calibration against measured kernels, the seeds' figures, one step's formula.

Calibration rows come from Vidur's profiles in ``../shared/data/vidur-profiling`` (skipped
cleanly when absent). Seed 000 = "KV Cache Preemption in vLLM", seed 001 = "When to Swap vs
Recompute"; the PagedAttention paper is Kwon et al., SOSP 2023 (its block-size study, §7.3).
"""
from __future__ import annotations

import itertools

import pytest

import kvsim
from kvsim.engine import calibration
from kvsim.engine.costs import (
    CPU_OVERHEAD,
    CostModel,
    StepCost,
    attention_pairs,
    recompute_time_s,
    swap_time_s,
    transfer_copies,
)
from kvsim.errors import KvsimError
from kvsim.units import GB, KiB, MiB

LLAMA2_KV_PER_TOKEN = 524_288


@pytest.fixture(scope="module")
def profiles(shared_data):
    folder = shared_data / "vidur-profiling"
    if not folder.is_dir():
        pytest.skip(f"no profiles in {folder}")
    return calibration.read_profiles(folder)


# ----------------------------------------------------------------------------- calibration


def test_every_shared_profile_row_is_read(profiles):
    """Four files: A100 (Llama-2-7B, Llama-3-8B), H100 and A40 (Llama-2-7B); TP 1, 2, 4, 8."""
    by = {(r.gpu, r.model) for r in profiles}
    assert by == {("a100-80gb", "Llama-2-7b-hf"), ("a100-80gb", "Meta-Llama-3-8B"),
                  ("h100-80gb", "Llama-2-7b-hf"), ("a40-48gb", "Llama-2-7b-hf")}
    assert len(profiles) == 1044 * 3 + 1824
    assert {r.tensor_parallel_size for r in profiles} == {1, 2, 4, 8}
    assert min(r.num_tokens for r in profiles) == 1 and max(r.num_tokens for r in profiles) >= 4096


def test_predicted_matmul_time_tracks_every_profile_row(profiles):
    """One set of three constants per GPU, every model, batch 1..4,096, TP 1..8.

    The issue asked for 15 % on every row; no smooth model reaches that, because the
    measured times jump by up to 60 % between neighbouring batch sizes where cuBLAS
    changes kernels (A40, TP 8: 0.32 ms at 632 tokens, 0.49 ms at 640). What kvsim
    reaches, pinned: median error <= 9 %, at least 95 % of rows within 15 %, every row
    within 28 %.
    """
    table = calibration.error_table(profiles)
    assert len(table) == 4
    for row in table:
        assert row["matmul_median"] <= 0.09, row
        assert row["matmul_within_15"] >= 0.95, row
        assert row["matmul_max"] <= 0.28, row


def test_the_presets_carry_exactly_what_the_fit_gives(profiles):
    """The efficiencies are fitted, never chosen: refitting reproduces every preset."""
    for name in ("a100-80gb", "h100-80gb", "a40-48gb"):
        fit = calibration.fit_gpu(profiles, name)
        g = kvsim.get_gpu(name)
        assert (fit["matmul_efficiency"], fit["memory_efficiency"], fit["kernel_latency_s"]) == \
            (g.matmul_efficiency, g.memory_efficiency, g.kernel_latency_s), name
        assert "fitted" in g.calibration


def test_unmeasured_gpus_borrow_the_closest_measured_one():
    l40s, a40, h200, h100 = (kvsim.get_gpu(n) for n in ("l40s-48gb", "a40-48gb", "h200-141gb",
                                                        "h100-80gb"))
    assert (l40s.matmul_efficiency, l40s.memory_efficiency) == (a40.matmul_efficiency,
                                                                a40.memory_efficiency)
    assert (h200.matmul_efficiency, h200.memory_efficiency) == (h100.matmul_efficiency,
                                                                h100.memory_efficiency)
    assert "not measured" in l40s.calibration and "not measured" in h200.calibration


def test_profile_folder_without_profiles_is_a_clear_error(tmp_path):
    with pytest.raises(KvsimError, match="holds no <gpu>_<model>_mlp.csv file"):
        calibration.read_profiles(tmp_path)


# ----------------------------------------------------------------------------- the seeds' card


def test_seed000_the_measured_a40_prefills_about_0_12_ms_per_token():
    """Seed 000 uses "an illustrative 0.12 ms per prefill token" for its 48 GB card. The A40,
    calibrated only on its own kernel timings, gives 0.134 ms per token for an 1,100-token
    prefill (148 ms; the seed: ~130 ms): within 12 %, without fitting to the seed."""
    t = recompute_time_s(1100, "llama-2-7b", "a40-48gb")
    assert t / 1100 == pytest.approx(0.12e-3, rel=0.12)
    assert t == pytest.approx(0.130, rel=0.15)


def test_real_gpus_prefill_two_to_three_times_faster_than_kvsim_1():
    """kvsim 1 charged 0.31 of dense peak on every GPU; measured matmuls run at 0.6-0.75 of it.
    A 2,048-token prefill of Llama-2-7B: A100 ~0.06 ms/token, H100 ~0.023 ms/token."""
    a100 = recompute_time_s(2048, "llama-2-7b", "a100-80gb") / 2048
    h100 = recompute_time_s(2048, "llama-2-7b", "h100-80gb") / 2048
    flops = 2 * kvsim.get_model("llama-2-7b").active_params
    assert 0.55 <= flops / a100 / kvsim.get_gpu("a100-80gb").peak_flops <= 0.85
    assert 0.55 <= flops / h100 / kvsim.get_gpu("h100-80gb").peak_flops <= 0.85
    assert a100 == pytest.approx(0.062e-3, rel=0.1) and h100 == pytest.approx(0.023e-3, rel=0.1)


# ----------------------------------------------------------------------------- one step


@pytest.fixture(scope="module")
def a40():
    return StepCost(kvsim.get_model("llama-2-7b"), kvsim.get_gpu("a40-48gb"))


def test_a_pure_decode_step_is_fixed_plus_a_slope_per_context_token(a40):
    """The closed forms the engine's jumps rely on: step_s = fixed_s(n, n) + slope x context
    serially; with asynchronous scheduling (the default) the larger of fixed_gpu_s(n, n) +
    slope x context and cpu_s(n)."""
    serial = StepCost(kvsim.get_model("llama-2-7b"), kvsim.get_gpu("a40-48gb"),
                      async_scheduling=False)
    assert a40.async_scheduling and not serial.async_scheduling
    for n, ctx in ((1, 500), (21, 21_000), (128, 300_000)):
        assert serial.step_s(n, n, decode_context=ctx) == \
            serial.fixed_s(n, n) + serial.decode_s_per_token * ctx
        assert a40.step_s(n, n, decode_context=ctx) == max(
            a40.fixed_gpu_s(n, n) + a40.decode_s_per_token * ctx, a40.cpu_s(n))
    # the slope is the KV read (and attention FLOPs) of one context token
    assert a40.decode_s_per_token == pytest.approx(
        LLAMA2_KV_PER_TOKEN / (a40.gpu.hbm_bytes_per_s * a40.gpu.memory_efficiency), rel=0.05)


def test_decode_at_batch_1_reads_the_weights(a40):
    """A batch of one is memory-bound: about weights / effective bandwidth, plus CPU time."""
    weights = kvsim.get_model("llama-2-7b").weight_bytes
    gpu = a40.gpu
    floor = weights / (gpu.hbm_bytes_per_s * gpu.memory_efficiency)
    t = a40.step_s(1, 1, decode_context=1)
    assert floor < t < 1.15 * floor + CPU_OVERHEAD["v1"][0] + 2e-3


def test_a_mixed_step_costs_the_sum_not_the_larger_part(a40):
    """No max() hides either part: a 512-token chunk added to 21 decodes lengthens the step
    (every stream's inter-token gap) by most of what the chunk costs alone, and the decodes'
    KV reads still count on top of the chunk. Only the weights are read once for both."""
    decode = a40.step_s(21, 21, decode_context=21 * 1100)
    chunk = a40.step_s(512, 1, prefill_pairs=attention_pairs(0, 512), prefill_kv_tokens=512)
    mixed = a40.step_s(21 + 512, 22, decode_context=21 * 1100,
                       prefill_pairs=attention_pairs(0, 512), prefill_kv_tokens=512)
    assert mixed - decode > 0.6 * chunk
    assert mixed - chunk > a40.decode_s_per_token * 21 * 1100
    assert mixed < decode + chunk                 # the weights are read once


def test_the_output_head_runs_once_per_sequence_per_step(a40):
    """A 2,000-token prompt in one step computes one row of logits, not 2,000."""
    one = a40.lm_head_s(1)
    assert a40.lm_head_s(2000) > 10 * one
    assert a40.fixed_s(2000, 1) - a40.fixed_s(2000, 1) == 0
    # a second sequence adds its logits row, its CPU time and its share of each attention kernel
    assert a40.fixed_s(2000, 2) - a40.fixed_s(2000, 1) == pytest.approx(
        a40.lm_head_s(2) - a40.lm_head_s(1) + a40.cpu_per_seq_s
        + a40.attention_launch_s(2) - a40.attention_launch_s(1), rel=1e-9)


def test_attention_pairs_count_a_causal_chunk():
    assert attention_pairs(0, 1) == 1
    assert attention_pairs(0, 4) == 1 + 2 + 3 + 4
    assert attention_pairs(100, 4) == 4 * 100 + 10
    assert attention_pairs(0, 600) + attention_pairs(600, 500) == attention_pairs(0, 1100)


def test_seed001_attention_makes_recompute_superlinear():
    """Seed 001: recomputing a long context costs more than linearly (quadratic attention)."""
    for gpu in ("a40-48gb", "h100-80gb"):
        t1k = recompute_time_s(1024, "llama-3.1-8b", gpu)
        t16k = recompute_time_s(16384, "llama-3.1-8b", gpu)
        assert t16k > 17 * t1k, gpu


def test_tensor_parallelism_splits_the_matmuls_and_adds_all_reduces():
    m, g = kvsim.get_model("llama-3.1-70b"), kvsim.get_gpu("h100-80gb")
    tp1, tp4 = StepCost(m, g), StepCost(m, g, tensor_parallel_size=4)
    assert tp4.linear_s(4096) < tp1.linear_s(4096) / 3
    assert tp1.allreduce_s(4096) == 0 and tp4.allreduce_s(4096) > 0
    # two all-reduces a layer, each at least the NCCL latency
    assert tp4.allreduce_s(1) >= 2 * m.num_layers * 8e-6


def test_mixture_of_experts_reads_only_the_experts_a_batch_touches():
    ds = kvsim.get_model("deepseek-v3")
    c = StepCost(ds, kvsim.get_gpu("h200-141gb"), tensor_parallel_size=8)
    _, _, one = c.linear_work(1)
    _, _, many = c.linear_work(4096)
    shape = ds.compute_shape()
    all_experts = shape.num_experts * shape.expert_params / 8
    assert one < 0.2 * all_experts
    assert many > all_experts                 # every expert, plus activations


def test_cost_model_constants_validate_with_one_line_errors():
    with pytest.raises(KvsimError, match=r"matmul_efficiency=1.5 is out of range: expected a number \(0, 1\]"):
        CostModel(matmul_efficiency=1.5)
    with pytest.raises(KvsimError, match="cost-model constant 'mfu' is not known"):
        CostModel().with_options(mfu=0.5)
    with pytest.raises(KvsimError, match="tensor_parallel_size=0 is out of range"):
        StepCost(kvsim.get_model("llama-2-7b"), kvsim.get_gpu("a40-48gb"), tensor_parallel_size=0)


def test_cpu_overhead_defaults_by_engine_mode_and_override():
    m, g = kvsim.get_model("llama-2-7b"), kvsim.get_gpu("a100-80gb")
    v1, v0 = StepCost(m, g, engine="v1"), StepCost(m, g, engine="v0")
    assert v0.cpu_s(64) > v1.cpu_s(64)        # V0 also processes outputs on the critical path
    assert v1.cpu_s(0) == CPU_OVERHEAD["v1"][0]
    custom = StepCost(m, g, CostModel(step_overhead_s=0.0, seq_overhead_s=0.0))
    assert custom.cpu_s(100) == 0.0


# ----------------------------------------------------------------------------- swap


def test_seed000_1100_tokens_is_about_550_mb_and_30_ms_each_way_at_20_gbps():
    """Seed 000: 1,100 tokens x 0.5 MiB = 550 MiB (576.7 MB), ~30 ms each way at 20 GB/s."""
    nbytes = 1100 * kvsim.kv_bytes_per_token("llama-2-7b")
    assert nbytes == 550 * MiB == 576_716_800
    t = swap_time_s(1100, LLAMA2_KV_PER_TOKEN, 20e9)
    assert t == pytest.approx(1104 * LLAMA2_KV_PER_TOKEN / 20e9, rel=1e-12)   # 69 whole blocks
    assert 0.027 <= t <= 0.030


def test_seed001_4k_tokens_over_pcie4_is_about_34_ms_round_trip():
    """Seed 001: 4K tokens x 128 KiB over PCIe 4.0 (32 GB/s) ~ 17 ms each way, 34 round trip."""
    kvb = kvsim.kv_bytes_per_token("llama-3.1-8b")
    assert kvb == 128 * KiB
    assert 2 * swap_time_s(4096, kvb, 32 * GB) == pytest.approx(0.034, abs=0.001)


def test_copies_per_swap_are_blocks_x_layers_x_2():
    assert transfer_copies(69, 32) == 69 * 32 * 2
    assert transfer_copies(69, 61, kv_factor=1) == 69 * 61   # MLA: one latent, no K/V pair
    t0 = swap_time_s(1100, LLAMA2_KV_PER_TOKEN, 20e9, kv_layers=32)
    t1 = swap_time_s(1100, LLAMA2_KV_PER_TOKEN, 20e9, kv_layers=32, copy_overhead_s=3e-6)
    assert t1 - t0 == pytest.approx(69 * 32 * 2 * 3e-6, rel=1e-9)


def _block_size_study(tokens=1024):
    """PagedAttention §7.3: OPT-13B on an A100; swap out + in vs recompute, block sizes 1-256."""
    m, g = kvsim.get_model("opt-13b"), kvsim.get_gpu("a100-80gb")
    kvb, copy = kvsim.kv_bytes_per_token(m), CostModel().swap_copy_overhead_s
    recompute = recompute_time_s(tokens, m, g)
    swap = {bs: 2 * swap_time_s(tokens, kvb, g.pcie_bytes_per_s, block_size=bs,
                                kv_layers=m.kv_layers, copy_overhead_s=copy)
            for bs in (1, 2, 4, 8, 16, 32, 64, 128, 256)}
    return recompute, swap


def test_paged_attention_block_size_study_keeps_its_shape():
    """The paper: swap is excessive at small blocks (many small copies), recompute does not
    depend on the block size, and the two are comparable at 16-64."""
    recompute, swap = _block_size_study()
    sizes = sorted(swap)
    assert all(swap[a] > swap[b] for a, b in itertools.pairwise(sizes))
    assert swap[1] > 4 * recompute and swap[2] > 2 * recompute
    for bs in (16, 32, 64):
        assert recompute / 2 < swap[bs] < recompute


def test_paged_attention_block_size_study_kvsims_honest_figure():
    """Where kvsim disagrees with the paper, pinned: the paper measured recompute at most ~20 %
    above swap; kvsim's recompute of 1,024 tokens is 25 % above swap at 16-token blocks, 47 %
    at 32 and 64 % at 64 (kvsim 1: 2-3x), because its PCIe copies run at a clean 25 GB/s."""
    recompute, swap = _block_size_study()
    assert recompute / swap[16] == pytest.approx(1.25, abs=0.03)
    assert recompute / swap[32] == pytest.approx(1.47, abs=0.03)
    assert recompute / swap[64] == pytest.approx(1.64, abs=0.03)


# ----------------------------------------------------------------------------- in the engine


def test_the_engine_charges_a_lone_prefill_exactly_the_formula():
    """One 1,100-token request alone: its single prefill step lasts StepCost.prefill_s(1100)."""
    r = kvsim.simulate([kvsim.Request(0.0, 1100, 1)], model="llama-2-7b", gpu="a40-48gb",
                       gpu_memory_utilization=0.6)
    assert r.timeline.num_rows == 1
    assert r.timeline["prefill_tokens"][0] == 1100
    cost = StepCost(kvsim.get_model("llama-2-7b"), kvsim.get_gpu("a40-48gb"))
    assert r.timeline["dt_s"][0] == cost.prefill_s(1100)
    assert r.requests["ttft_s"][0] == cost.prefill_s(1100)


# ----------------------------------------------------------------------------- chapter 3: the crossover

from kvsim.engine.costs import crossover_tokens, swap_round_trip_s


def test_swap_round_trip_is_twice_swap_time_with_the_copies():
    m = kvsim.get_model("llama-2-7b")
    one_way = swap_time_s(1100, LLAMA2_KV_PER_TOKEN, 25e9, kv_layers=m.kv_layers,
                          copy_overhead_s=3e-6)
    assert swap_round_trip_s(1100, "llama-2-7b", "a40-48gb") == pytest.approx(2 * one_way, rel=1e-12)
    # a link override and a block size reach the same formula
    slow = swap_round_trip_s(1100, "llama-2-7b", "a40-48gb", CostModel(pcie_bytes_per_s=4e9),
                             block_size=64)
    assert slow == pytest.approx(2 * swap_time_s(1100, LLAMA2_KV_PER_TOKEN, 4e9, block_size=64,
                                                 kv_layers=32, copy_overhead_s=3e-6), rel=1e-12)


def test_crossovers_are_where_the_order_of_the_two_costs_changes():
    cross = crossover_tokens("llama-3.1-8b", "h100-80gb", min_tokens=256, max_tokens=65_536)
    assert len(cross) == 2 and 256 < cross[0] < cross[1] < 65_536

    def cheaper_recompute(n):
        return recompute_time_s(n, "llama-3.1-8b", "h100-80gb") < swap_round_trip_s(
            n, "llama-3.1-8b", "h100-80gb")

    for n in cross:                      # the first length of the new order
        assert cheaper_recompute(n) != cheaper_recompute(n - 1)
    assert not cheaper_recompute(256) and cheaper_recompute(4096) and not cheaper_recompute(65_536)
    # on the A40 swap is cheaper at every length: no crossing
    assert crossover_tokens("llama-3.1-8b", "a40-48gb", min_tokens=256) == []


def test_a_slower_link_widens_the_band_where_recompute_wins():
    gen5 = crossover_tokens("llama-3.1-8b", "h100-80gb", min_tokens=256)
    gen4 = crossover_tokens("llama-3.1-8b", "h100-80gb", CostModel(pcie_bytes_per_s=25e9),
                            min_tokens=256)
    assert gen4[0] < gen5[0] and gen4[1] > gen5[1]


def test_crossover_and_round_trip_reject_bad_input_with_one_line():
    with pytest.raises(KvsimError, match=r"max_tokens=10 is out of range"):
        crossover_tokens("llama-3.1-8b", "h100-80gb", min_tokens=100, max_tokens=10)
    with pytest.raises(KvsimError, match=r"block_size=0 is out of range"):
        swap_round_trip_s(100, "llama-3.1-8b", "h100-80gb", block_size=0)
    with pytest.raises(KvsimError, match=r"tokens=0 is out of range"):
        swap_round_trip_s(0, "llama-3.1-8b", "h100-80gb")


@pytest.mark.parametrize("tp", [1, 2])
def test_step_time_scale_multiplies_every_part_of_a_step_but_swaps(tp):
    """step_time_scale=k makes each step exactly k times longer; PCIe copies keep their time."""
    m, g = kvsim.get_model("llama-3.1-8b"), kvsim.get_gpu("h100-80gb")
    base = StepCost(m, g, CostModel(), tensor_parallel_size=tp)
    slow = StepCost(m, g, CostModel(step_time_scale=2.5), tensor_parallel_size=tp)
    for args in [(1, 1), (64, 64, 40_000), (2048, 3, 900, 500_000, 2048)]:
        assert slow.step_s(*args) == pytest.approx(2.5 * base.step_s(*args), rel=1e-12)
    assert slow.swap_s(10**8, 64) == base.swap_s(10**8, 64)


# ---------------------------------------------------------------- named terms
def _plans_of(**options):
    """Every plan a short, preempting run makes, as the engine priced it: ``[(plan, cost)]``."""
    from kvsim.engine.loop import build_engine

    requests = [kvsim.Request(0.01 * i, 300 + 37 * (i % 5), 120 + 11 * (i % 7)) for i in range(24)]
    opts = dict(num_gpu_blocks=90, block_size=16, max_num_batched_tokens=512, step_by_step=True,
                **options)
    engine = build_engine(kvsim.Workload.from_requests(requests), "llama-2-7b", "a40-48gb", opts)
    seen = []

    def keep(eng):
        plan = eng.scheduler.last_plan
        seen.append((plan, eng.cost.plan_s(plan), eng.cost.plan_parts(plan)))

    engine.run(keep)
    return seen


@pytest.mark.parametrize("options", [dict(engine="v1"), dict(engine="v1", async_scheduling=False),
                                     dict(engine="v0", preemption_mode="swap",
                                          enable_prefix_caching=False)],
                         ids=["v1-async", "v1-sync", "v0-swap"])
def test_the_named_terms_add_up_to_the_step_to_the_bit(options):
    """A step's named terms (Vidur's ExecutionTime) are the step: their total is plan_s
    exactly, on every plan of a run that preempts (chunks, decodes, swaps, evictions)."""
    seen = _plans_of(**options)
    assert len(seen) > 50
    for plan, seconds, parts in seen:
        assert parts.total_s == seconds, plan
    assert any(plan.chunks for plan, _, _ in seen) and any(plan.preempted for plan, _, _ in seen)
    if options.get("preemption_mode") == "swap":
        assert any(parts.swap_s > 0 for _, _, parts in seen)


def test_each_term_is_its_own_mechanism(a40):
    """Terms a test can check one by one: decode attention is the slope times the context,
    prefill attention appears only with a chunk, swap copies only with bytes, one GPU has no
    all-reduce, and an asynchronous step lasts the larger of its CPU and GPU parts."""
    model = kvsim.get_model("llama-2-7b")
    cost = StepCost(model, a40.gpu, async_scheduling=False)
    decode = cost.step_parts(32, 32, decode_context=32 * 1_000)
    assert decode.decode_attention_s == cost.decode_s_per_token * 32_000
    assert decode.prefill_attention_s == decode.swap_s == decode.allreduce_s == 0.0
    assert decode.total_s == cost.step_s(32, 32, 32_000)
    mixed = cost.step_parts(32 + 512, 33, 32_000, attention_pairs(0, 512), 512)
    assert mixed.prefill_attention_s == cost.prefill_attention_s(attention_pairs(0, 512), 512) > 0
    assert mixed.linear_s > decode.linear_s and mixed.cpu_s > decode.cpu_s
    swap = cost.step_parts(32, 32, 32_000, swap_bytes=10**8, swap_copies=64)
    assert swap.swap_s == 10**8 / cost.pcie_bytes_per_s + 64 * cost.swap_copy_s
    assert swap.total_s - decode.total_s == pytest.approx(swap.swap_s)
    overlapped = StepCost(model, a40.gpu, async_scheduling=True).step_parts(1, 1, 10)
    assert overlapped.overlapped and overlapped.total_s == max(overlapped.cpu_s, overlapped.gpu_s)
