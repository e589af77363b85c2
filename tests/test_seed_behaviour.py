"""The seed articles' behaviour claims, checked against kvsim's simulations.

Seed 000 = "KV Cache Preemption in vLLM" (Belgavi's Book Store, the fixes, the missions);
seed 001 = "When to Swap vs Recompute"; seed 003 = "Throughput collapse under load".

Where a figure depends on the random seed the test takes the median and the spread over
seeds (chapter 5: "averages hide it"). Where kvsim does not reproduce a claim, the test
is named for that and pins what kvsim shows instead (design §7: a book that checks its
sources). Every run here is a few tens of milliseconds.
"""
from __future__ import annotations

import statistics

import numpy as np
import pytest

import kvsim
from kvsim.traffic.workload import Workload

SEEDS_20 = range(20)
SEEDS_5 = range(5)
LONG = 600.0  # seconds of measured traffic after the scenario's warm-up


def runs(name: str, seeds=SEEDS_5, **overrides) -> list[dict]:
    return [kvsim.run_scenario(name, seed=s, **overrides).summary() for s in seeds]


def med(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def col(rows: list[dict], key: str) -> np.ndarray:
    return np.array([r[key] for r in rows], dtype=float)


# ----------------------------------------------------------------------------- fixtures (cached)


@pytest.fixture(scope="module")
def belgavi_600s():
    """Belgavi (250-token answers), 600 s measured after a 120 s warm-up, 20 seeds."""
    return runs("belgavi", SEEDS_20, duration_s=LONG)


@pytest.fixture(scope="module")
def belgavi_default():
    """Belgavi as the scenario defines it (120 s measured after 120 s warm-up), 20 seeds."""
    return runs("belgavi", SEEDS_20)


@pytest.fixture(scope="module")
def long_answers():
    """belgavi-long (600-token answers), 600 s measured, 10 seeds."""
    return runs("belgavi-long", range(10), duration_s=LONG)


def long_with(**overrides) -> list[dict]:
    return runs("belgavi-long", SEEDS_5, duration_s=LONG, **overrides)


@pytest.fixture(scope="module")
def long_base():
    return long_with()


@pytest.fixture(scope="module")
def load_tests():
    return {u: runs(f"load-test-{u}") for u in (40, 80, 120)}


# ----------------------------------------------------------------------------- Belgavi


def test_seed000_belgavi_about_21_running(belgavi_600s, belgavi_default):
    """Seed 000: "in steady state about 21 are running". kvsim on the measured A40 with vLLM
    0.28's asynchronous scheduling: median 17.0 running over 20 seeds (14.5 to 20.7; serial
    scheduling, before 0.14: 18.2), against a capacity of 25 requests of 1,100 tokens.
    kvsim's decode step at that batch (~39 ms; serial ~43 ms) is faster than the seed's card
    would need for 21 (~55 ms, design §7), so requests leave sooner and fewer run at once."""
    assert 16.0 <= med(belgavi_600s, "mean_running") <= 23.0
    assert 16.0 <= med(belgavi_default, "mean_running") <= 23.0
    assert col(belgavi_600s, "mean_running").max() < 25      # never above capacity
    # The cache is mostly full, but not pinned (that is belgavi-long).
    assert 0.65 <= med(belgavi_600s, "kv_usage_mean") <= 0.95


def test_seed000_belgavi_a_few_dozen_preemptions_per_1000(belgavi_600s, belgavi_default):
    """Seed 000: "random clusters of long answers push the cache to 100% and the server logs a
    few dozen preemptions per thousand requests". kvsim: median 58 per 1,000 over 20 seeds;
    few users pause over a second."""
    assert 20.0 <= med(belgavi_600s, "preemptions_per_1k") <= 90.0
    assert 20.0 <= med(belgavi_default, "preemptions_per_1k") <= 90.0
    assert med(belgavi_600s, "share_paused_over_1s") < 0.03
    assert np.mean(col(belgavi_600s, "kv_usage_max") >= 0.99) >= 0.8


def test_seed000_averages_hide_it_the_spread_over_seeds_is_wide(belgavi_600s):
    """Seed 000: "averages hide it". The same traffic with 20 different random draws: from
    under 10 to well over 100 preemptions per 1,000 (kvsim: 0 to 186, median 58)."""
    pre = col(belgavi_600s, "preemptions_per_1k")
    m = float(np.median(pre))
    assert pre.min() < m / 2
    assert pre.max() > 1.5 * m
    assert pre.min() < 10 and pre.max() > 80


def test_seed000_steady_state_needs_a_warm_server():
    """Seed 000's "steady state" is a warmed-up server: two minutes from an empty server show
    fewer running and fewer preemptions (kvsim medians over 20 seeds: 14.2 running and 0 per
    1,000 cold; 18.7 and 32 warm)."""
    cold = runs("belgavi", SEEDS_20, warmup_s=0.0, duration_s=120.0)
    warm = runs("belgavi", SEEDS_20, duration_s=120.0)
    assert med(cold, "mean_running") < med(warm, "mean_running") - 2.0
    assert med(cold, "preemptions_per_1k") < med(warm, "preemptions_per_1k") / 2


# ----------------------------------------------------------------------------- belgavi-long


def test_seed000_longer_answers_capacity_about_18(long_answers):
    """Seed 000: answers of ~600 tokens, "capacity falls to roughly 18 requests". kvsim's
    capacity on the A40 is 19 requests of 1,450 tokens; the cache is pinned and ~19 run
    (18.1-19.8: answers shorter than the mean fit a few more)."""
    budget = kvsim.kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.60)
    assert budget.max_concurrent(850 + 600) == 19
    running = col(long_answers, "mean_running")
    assert 17.0 <= np.median(running) <= 20.0
    assert running.min() >= 17.0 and running.max() <= 20.5
    assert col(long_answers, "kv_usage_mean").min() > 0.95


def test_seed000_longer_answers_hundreds_of_preemptions_and_pauses(long_answers):
    """Seed 000: "preemption counts in the hundreds per thousand requests, and over a tenth of
    users see a pause of more than a second". kvsim: 254-297 per 1,000 (median 271; design §7's
    rough model found ~300), 36-47% of the users who started streaming paused over 1 s."""
    pre = col(long_answers, "preemptions_per_1k")
    assert 100.0 <= np.median(pre) <= 400.0
    assert pre.min() >= 100.0
    paused = col(long_answers, "share_paused_over_1s")
    assert paused.min() > 0.10
    assert col(long_answers, "max_gap_s").min() > 5.0


def test_seed000_longer_answers_server_is_overloaded(long_answers):
    """Design §7: belgavi-long reproduces seed 000 only because the server is overloaded
    (~2.7x): the queue grows without bound and TTFT reaches minutes. kvsim: max_waiting
    534-685, p99 TTFT 336-429 s, at most 38 % of the arrivals finish."""
    assert col(long_answers, "max_waiting").min() > 300
    assert col(long_answers, "ttft_p99_s").min() > 60.0
    fin = col(long_answers, "requests_finished") / col(long_answers, "requests_arrived")
    assert fin.max() < 0.5
    # The queue keeps growing over the run: it is longer at the end than half-way.
    r = kvsim.run_scenario("belgavi-long", seed=0, duration_s=LONG)
    t, waiting = r.timeline["t_s"], r.timeline["waiting"]
    end = float(t[-1])
    assert waiting[-1] > 1.5 * waiting[np.searchsorted(t, end / 2)]


# ----------------------------------------------------------------------------- the fixes


def test_seed000_fixes_in_order_end_the_storm(long_base):
    """Seed 000: "cap max_tokens at what the product actually needs; switch the KV cache to FP8
    ... negotiate more memory; only then ... lower concurrency". Applied in order on
    belgavi-long, kvsim (medians over 5 seeds, preemptions per 1,000): 274 -> cap at 400: 141
    (p99 TTFT 419 s -> 12 s, paused > 1 s 43 % -> 6.5 %) -> + FP8: 0 -> + memory 0.8: 0."""
    cap = long_with(max_tokens=400)
    cap_fp8 = long_with(max_tokens=400, kv_dtype="fp8")
    cap_fp8_mem = long_with(max_tokens=400, kv_dtype="fp8", gpu_memory_utilization=0.8)
    base_pre = med(long_base, "preemptions_per_1k")
    assert med(cap, "preemptions_per_1k") < base_pre
    assert med(cap, "share_paused_over_1s") < med(long_base, "share_paused_over_1s") / 4
    assert med(cap, "ttft_p99_s") < med(long_base, "ttft_p99_s") / 10
    assert col(cap_fp8, "preemptions").max() == 0
    assert col(cap_fp8_mem, "preemptions").max() == 0
    assert med(cap_fp8, "ttft_p99_s") < 1.0
    # A cap near the old answer length ends the storm on its own.
    tight = long_with(max_tokens=250)
    assert med(tight, "preemptions_per_1k") <= 3.0 < base_pre


def test_seed000_claim_each_memory_fix_alone_cuts_preemptions_is_not_reproduced(long_base):
    """Seed 000 lists FP8 KV and more memory as fixes. On belgavi-long (overloaded ~2.7x) kvsim
    shows that either one *alone* does not cut preemptions per 1,000 (FP8: 273 -> 457; memory
    0.6 -> 0.8: 273 -> 331): the server stays overloaded, the larger cache fills too, and more
    requests get through (goodput 377 -> 659 and 452 tok/s) while p99 TTFT falls
    (412 s -> 190 s and 343 s). They help, but only the demand-side fixes end the storm."""
    fp8 = long_with(kv_dtype="fp8")
    mem = long_with(gpu_memory_utilization=0.8)
    base_pre = med(long_base, "preemptions_per_1k")
    for rows in (fp8, mem):
        assert med(rows, "preemptions_per_1k") > 0.9 * base_pre
        assert med(rows, "goodput_tok_s") > 1.15 * med(long_base, "goodput_tok_s")
        assert med(rows, "ttft_p99_s") < med(long_base, "ttft_p99_s")
        assert med(rows, "max_waiting") > 100                   # still overloaded
    assert med(fp8, "mean_running") > 1.8 * med(long_base, "mean_running")


def test_seed000_lower_concurrency_trades_preemption_for_queueing(long_base):
    """Seed 000: "every way of avoiding preemption by holding work back moves the wait from
    mid-stream to the queue". belgavi-long with max_num_seqs=12: no preemption, no pause over
    1 s, but a longer time to first token (kvsim p50 244 s -> 276 s) and less goodput."""
    capped = long_with(max_num_seqs=12)
    assert col(capped, "preemptions").max() == 0
    assert col(capped, "share_paused_over_1s").max() == 0.0
    assert med(capped, "ttft_p50_s") > med(long_base, "ttft_p50_s")
    assert med(capped, "ttft_p99_s") > med(long_base, "ttft_p99_s")
    assert med(capped, "goodput_tok_s") < med(long_base, "goodput_tok_s")


def test_seed000_headroom_versus_queueing_on_belgavi(belgavi_600s):
    """Seed 000's trade-off on the (not overloaded) Belgavi server: stepping max_num_seqs down
    from the default ends preemption (by 20 already, over 10 seeds) and lengthens the queue
    (kvsim medians: p99 TTFT 8.6 s -> 17 s at 20 -> 25 s at 18 -> 47 s at 16)."""
    at18 = runs("belgavi", range(10), duration_s=LONG, max_num_seqs=18)
    at16 = runs("belgavi", range(10), duration_s=LONG, max_num_seqs=16)
    assert col(at18, "preemptions").max() == 0
    assert med(belgavi_600s, "ttft_p99_s") < med(at18, "ttft_p99_s") < med(at16, "ttft_p99_s")


# ----------------------------------------------------------------------------- guaranteed admission


def test_seed000_guaranteed_admission_never_preempts(long_base):
    """Seed 000: reserving prompt + max_tokens means "a running sequence can never be evicted",
    at the price of concurrency. belgavi-long, guaranteed: 0 preemptions; ~12.9 running
    against ~18.6 optimistic (kvsim reserves each request's own output length when no
    max_tokens is set)."""
    g = long_with(admission="guaranteed")
    assert col(g, "preemptions").max() == 0
    assert med(g, "mean_running") < 0.8 * med(long_base, "mean_running")


def test_seed000_guaranteed_reservation_halves_concurrency():
    """Seed 000: max_tokens 1,500 reserves 850 + 1,500 = 2,350 tokens per request against
    ~1,100 used, "so the same cache admits fewer than half as many requests". kvsim on
    Belgavi: at most 11 run (the cache holds 25 of 1,100 tokens); on average 11.0 against
    17.9 optimistic (0.61: the optimistic server does not fill its cache all the time)."""
    g = runs("belgavi", SEEDS_5, duration_s=LONG, admission="guaranteed", max_tokens=1500)
    o = runs("belgavi", SEEDS_5, duration_s=LONG, max_tokens=1500)
    assert col(g, "preemptions").max() == 0
    r = kvsim.run_scenario("belgavi", seed=0, duration_s=LONG, admission="guaranteed", max_tokens=1500)
    budget = kvsim.kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.60)
    assert int(r.timeline["running"].max()) == budget.max_concurrent(2350) == 11
    assert 11 < budget.max_concurrent(1100) / 2
    assert 0.5 <= med(g, "mean_running") / med(o, "mean_running") <= 0.7


# ----------------------------------------------------------------------------- swap vs recompute


def test_seed001_swap_does_not_reduce_preemption(long_base):
    """Seed 001: swap "does nothing to reduce preemption frequency itself". belgavi-long on
    vLLM V0 (the engine with swap) with swap: preemptions per 1,000 within 15 % of V0's
    recompute (172 vs 163), and the KV crosses PCIe (~75 GB swapped out in 10 minutes)."""
    v0 = dict(engine="v0", enable_prefix_caching=False)
    swap = long_with(preemption_mode="swap", swap_space_full="recompute", **v0)
    recompute = long_with(**v0)
    assert col(swap, "preemptions").min() > 0 and col(recompute, "preemptions").min() > 0
    ratio = med(swap, "preemptions_per_1k") / med(recompute, "preemptions_per_1k")
    assert 0.85 <= ratio <= 1.15
    assert col(swap, "swapped_out_bytes").min() > 50e9
    assert col(recompute, "swapped_out_bytes").max() == 0
    # kvsim: swapped requests resume before waiting ones, so the longest pause is shorter
    # with swap on a fast link (medians 13.9 s vs 15.8 s).
    assert med(swap, "max_gap_s") < med(recompute, "max_gap_s")


def test_seed000_mission2_swap_on_slow_pcie_freezes_every_stream():
    """Seed 000's mission two: "swap mode on a slow PCIe link where every swap freezes all
    streams". kvsim (vLLM V0) at 4 GB/s: a step carrying a swap takes ~0.17 s (one swap) to
    ~0.41 s against ~0.045 s for the others, and p99 inter-token latency is never below the same server's with
    a 20 GB/s link (median 0.20 s vs 0.18 s). Against recompute it is a draw (0.14-0.24 s in
    both): with the measured A40 a recompute's long prefill steps stall every stream about as
    much as the slow swaps, so the p99 does not tell them apart; the longest steps do."""
    swap, recompute, fast = [], [], []
    for s in range(10):
        a = kvsim.run_scenario("mission-2-slow-pcie", seed=s)
        swap.append(a.summary())
        recompute.append(kvsim.run_scenario("mission-2-slow-pcie", seed=s,
                                            preemption_mode="recompute").summary())
        fast.append(kvsim.run_scenario("mission-2-slow-pcie", seed=s, pcie_bytes_per_s=20e9).summary())
        tl = a.timeline
        moved = (tl["swap_out_bytes"] + tl["swap_in_bytes"]) > 0
        assert moved.any()
        assert np.median(tl["dt_s"][moved]) > 3.5 * np.median(tl["dt_s"][~moved])
        assert tl["dt_s"][moved].max() > 5 * np.median(tl["dt_s"][~moved])
    assert all(a["itl_p99_s"] >= b["itl_p99_s"] for a, b in zip(swap, fast))
    assert med(swap, "itl_p99_s") > 1.1 * med(fast, "itl_p99_s")
    assert 0.8 < med(swap, "itl_p99_s") / med(recompute, "itl_p99_s") < 1.3
    assert med(swap, "preemptions_per_1k") > 50 and med(recompute, "preemptions_per_1k") > 50


# ----------------------------------------------------------------------------- seed 003: load test


def test_seed003_40_and_80_users_look_fine(load_tests):
    """Seed 003: "looks fine at 40 concurrent requests. At 80 it looks fine": no preemption and
    a sub-second p99 TTFT (kvsim: 0.08 s and 0.10 s; the seed says 400 ms at 80)."""
    for users in (40, 80):
        rows = load_tests[users]
        assert col(rows, "preemptions").max() == 0
        assert col(rows, "ttft_p99_s").max() < 1.0
    assert med(load_tests[80], "goodput_tok_s") > 1.25 * med(load_tests[40], "goodput_tok_s")


def test_seed003_at_120_users_preemption_and_tail_latency_explode(load_tests):
    """Seed 003: at 120 users the cache runs out mid-decode, preemption starts and "p99
    time-to-first-token goes from 400 ms to 9 seconds". kvsim: ~296 preemptions per 1,000,
    p99 TTFT 0.10 s -> 16 s (160x; the seed's 9 s is 22x), and goodput grows only 9 % for 50 %
    more users."""
    r80, r120 = load_tests[80], load_tests[120]
    assert col(r120, "preemptions_per_1k").min() > 100
    assert med(r120, "ttft_p99_s") > 10 * med(r80, "ttft_p99_s")
    assert med(r120, "ttft_p99_s") > 9.0
    assert med(r120, "max_gap_s") > 10.0
    assert med(r120, "kv_usage_mean") > med(r80, "kv_usage_mean")
    ratio = med(r120, "goodput_tok_s") / med(r80, "goodput_tok_s")
    assert ratio < 1.25
    # The preemption tax: throughput counts recomputed tokens, goodput does not.
    tax = [r["throughput_tok_s"] / r["goodput_tok_s"] for r in (r80[0], r120[0])]
    assert tax[1] > tax[0]


def test_seed003_collapse_claim_is_not_reproduced_by_roofline(load_tests):
    """Seed 003 claims that at 120 users "output tokens/sec drops below what you measured at
    80" and that capping max_num_seqs near capacity (68 at p95 length) "usually raises
    sustained throughput". kvsim's roofline model (with attention cost growing with context,
    and recompute chunks mixed into decode steps) shows neither: goodput at 120 is ~9 % ABOVE
    80 users (3,538 vs 3,247 tok/s), and max_num_seqs=68 at 120 users ends preemption but
    LOWERS goodput (3,086 tok/s) and throughput, and raises p99 TTFT (16 s -> 70 s) because
    the queue moves into the engine's waiting list (design §7)."""
    r80, r120 = load_tests[80], load_tests[120]
    assert med(r120, "goodput_tok_s") > med(r80, "goodput_tok_s")
    for a, b in zip(r80, r120):                       # seed by seed, too
        assert b["goodput_tok_s"] > a["goodput_tok_s"]
    capped = runs("load-test-120", max_num_seqs=68)
    assert col(capped, "preemptions").max() == 0
    assert med(capped, "goodput_tok_s") < med(r120, "goodput_tok_s")
    assert med(capped, "throughput_tok_s") < med(r120, "throughput_tok_s")
    assert med(capped, "ttft_p99_s") > med(r120, "ttft_p99_s")


def test_seed003_heavier_tail_no_pile_up_at_120():
    """Seed 003's pile-up needs nearly every request near the p95 length: with a heavier tail
    (median output 2,000 for the same p95 of 4,000) 120 users run without preemption, p99
    TTFT stays ~0.1 s and goodput still grows from 80 users (design §7)."""
    r120 = runs("load-test-120", output_median=2000)
    r80 = runs("load-test-80", output_median=2000)
    assert col(r120, "preemptions").max() == 0
    assert med(r120, "ttft_p99_s") < 5.0
    assert med(r120, "goodput_tok_s") > med(r80, "goodput_tok_s")


# ----------------------------------------------------------------------------- the real trace


def test_azure_conversation_trace_replays_cleanly(shared_data):
    """The one-hour Azure LLM inference conversation trace on Llama-3.1-8B / H100 80 GB at the
    default 0.90: every one of the 19,366 requests finishes and the cache drains to empty."""
    wl = Workload.from_trace(shared_data / "AzureLLMInferenceTrace_conv.csv")
    assert len(wl) == 19_366
    r = kvsim.simulate(wl, model="llama-3.1-8b", gpu="h100-80gb")
    s = r.summary()
    assert s["requests_arrived"] == s["requests_finished"] == 19_366
    assert int(r.timeline["kv_blocks_used"][-1]) == 0
    assert int(r.timeline["running"][-1]) == 0 and int(r.timeline["waiting"][-1]) == 0
    assert not np.isnan(r.requests["finish_s"]).any()
    assert np.array_equal(r.requests["generated_tokens"], r.requests["output_tokens"])
    assert s["simulated_s"] > 3500.0
