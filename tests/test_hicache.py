"""SGLang's HiCache (``enable_hierarchical_cache`` with ``admission="sglang"``): the host tier
behind SGLang's radix cache, as python/sglang/srt/mem_cache (0.5.23) runs it with its default
write policy (docs/research/kv-tiers.md, section 2).

What differs from vLLM's tier (tests/test_host_tier.py): the host pool is sized in tokens
(``hicache_ratio`` x the GPU pool, or ``hicache_size`` GB), a finished request's generated
blocks are stored too, and a hit on the host loads in the step that admits the request,
overlapped with its forward pass (no waiting), unless it is shorter than 10 tokens.
"""
from __future__ import annotations

import random

import pytest

import kvsim
from kvsim.engine.blocks.host_tier import HICACHE_LOAD_BACK_THRESHOLD, hicache_blocks
from kvsim.engine.costs import StepCost
from kvsim.engine.loop import build_engine
from kvsim.engine.plan import BATCH, LOAD_WAIT, StepPlan

R = kvsim.Request
MODEL, GPU = "llama-2-7b", "a100-80gb"
HICACHE = dict(admission="sglang", enable_hierarchical_cache=True)


def _config(**options):
    return kvsim.simulate([R(0, 100, 10)], model=MODEL, gpu=GPU, **options).config


# ------------------------------------------------------------------------- capacity
def test_the_host_pool_is_twice_the_gpu_pool_by_default_plus_a_spare_page():
    """SGLang's pool_host/base.py: ``size = device tokens x hicache_ratio`` (2.0 by default),
    ``page_num = size // page_size + 1``."""
    cfg = _config(num_gpu_blocks=500, **HICACHE)
    assert cfg["host_tier_blocks"] == 500 * 16 * 2 // 16 + 1 == 1001
    assert cfg["host_block_bytes"] == cfg["block_bytes"]          # tokens, not OS pages
    assert _config(num_gpu_blocks=500, hicache_ratio=0.3, **HICACHE)["host_tier_blocks"] == \
        int(500 * 16 * 0.3) // 16 + 1


def test_hicache_size_is_decimal_gigabytes_of_the_gpus_own_bytes_per_token():
    """``--hicache-size`` overrides the ratio: ``GB x 10**9 // bytes per token`` tokens, where
    a tensor-parallel rank holds its share of every token (so TP=2 stores twice the tokens)."""
    per_token = kvsim.kv_bytes_per_token(MODEL)
    one = _config(num_gpu_blocks=500, hicache_size=4, **HICACHE)
    assert one["host_tier_blocks"] == 4 * 10**9 // per_token // 16 + 1
    two = _config(num_gpu_blocks=500, hicache_size=4, tensor_parallel_size=2, **HICACHE)
    assert two["host_tier_blocks"] == 4 * 10**9 // (per_token // 2) // 16 + 1
    assert hicache_blocks(8000, 2.0, 0, per_token, 16) == 1001


@pytest.mark.parametrize("options, message", [
    (dict(admission="optimistic"), "admission='optimistic'"),
    (dict(enable_prefix_caching=False), "needs the prefix cache"),
    (dict(kv_offloading_size=4.0), "kv_offloading_size with admission='sglang' is not modelled"),
    (dict(hicache_write_policy="write_back"), "hicache_write_policy='write_back' is not modelled"),
    (dict(hicache_write_policy="sometimes"), "hicache_write_policy='sometimes'"),
    (dict(hicache_ratio=0), "hicache_ratio=0"),
    (dict(hicache_ratio="big"), "hicache_ratio='big'"),
    (dict(hicache_size=-1), "hicache_size=-1"),
    (dict(enable_hierarchical_cache="yes"), "enable_hierarchical_cache='yes'"),
])
def test_a_hicache_kvsim_does_not_model_is_a_one_line_error(options, message):
    opts = dict(HICACHE, **options)
    with pytest.raises(kvsim.KvsimError) as err:
        kvsim.simulate([R(0, 100, 10)], model=MODEL, gpu=GPU, **opts)
    assert message in str(err.value) and "\n" not in str(err.value)


# --------------------------------------------------------------------- hand-derived runs
def _prefix_day(prefix: int, block_size: int = 16):
    """Request 0 (group 0) computes a shared prefix of ``prefix`` tokens; requests 1 and 2
    (groups 1 and 2, 410 tokens each, one after the other in a pool of 720 tokens) push it out
    of the GPU's cache; request 3 (group 0) comes back to it."""
    wl = kvsim.Workload.from_requests([R(0.0, 200, 10), R(0.5, 400, 10), R(0.5, 400, 10),
                                       R(2.0, 200, 10)]).with_shared_prefix(prefix, groups=3)
    return wl, dict(num_gpu_blocks=720 // block_size, block_size=block_size, **HICACHE)


def _watch(wl, options):
    """The run, and the plan of the step that admitted each request (its first chunk)."""
    engine = build_engine(wl, MODEL, GPU, dict(options, step_by_step=True, check=True))
    first_plan: dict[int, StepPlan] = {}

    def after(e):
        plan = e.scheduler.last_plan
        assert plan.kind != LOAD_WAIT                     # SGLang never waits for a load
        for rid, _start, _c in plan.chunks:
            first_plan.setdefault(rid, plan)

    return engine.run(after), first_plan, engine


def test_an_evicted_prefix_loads_from_the_host_in_the_step_that_admits_the_request():
    """Request 3's prefix (8 blocks) left the GPU but is on the host: it loads in the step
    that admits request 3, whose prefill computes only the other 72 tokens, in that step."""
    wl, opts = _prefix_day(128)
    r, first_plan, engine = _watch(wl, opts)
    rq = r.requests
    assert rq["prefix_hit_tokens"].tolist() == [0, 0, 0, 0]       # the GPU had lost it
    assert rq["loaded_tokens"].tolist() == [0, 0, 0, 128]
    plan = first_plan[3]
    assert plan.kind == BATCH and [(rid, start, c) for rid, start, c in plan.chunks
                                   if rid == 3] == [(3, 128, 72)]
    assert plan.host_load_bytes == 8 * engine.cfg.block_bytes
    without = kvsim.simulate(wl, model=MODEL, gpu=GPU,
                             **dict(opts, enable_hierarchical_cache=False))
    assert without.requests["prefix_hit_tokens"].tolist() == [0, 0, 0, 0]
    assert int(r.timeline["prefill_tokens"].sum()) == \
        int(without.timeline["prefill_tokens"].sum()) - 128


@pytest.mark.parametrize("block_size, prefix, loaded", [(4, 8, 0), (4, 12, 12), (2, 10, 10)])
def test_a_host_hit_under_ten_tokens_is_recomputed(block_size, prefix, loaded):
    """SGLang skips a load of fewer than ``load_back_threshold`` (10) tokens."""
    assert HICACHE_LOAD_BACK_THRESHOLD == 10
    wl, opts = _prefix_day(prefix, block_size)
    r = kvsim.simulate(wl, model=MODEL, gpu=GPU, **opts)
    assert r.requests["prefix_hit_tokens"].tolist() == [0, 0, 0, 0]
    assert r.requests["loaded_tokens"].tolist() == [0, 0, 0, loaded]


def test_a_finished_requests_generated_blocks_are_stored_unlike_vllms_prompt_only_tier():
    """SGLang inserts a finished request's whole sequence into its radix cache, and write-
    through copies it: 200 + 60 - 1 stored tokens are 16 full blocks; vLLM's tier (prompt
    blocks only, since 0.23) stores the prompt's 12. (A short request later keeps the engine
    stepping until the last copies are done.)"""
    one = [R(0, 200, 60), R(5.0, 10, 2)]
    sglang = kvsim.simulate(one, model=MODEL, gpu=GPU, **HICACHE)
    vllm = kvsim.simulate(one, model=MODEL, gpu=GPU, kv_offloading_size=4.0)
    assert sglang.counters["kv_offload_stored_blocks"] == (200 + 60 - 1) // 16 == 16
    assert vllm.counters["kv_offload_stored_blocks"] == 200 // 16 == 12


def test_a_load_overlaps_the_step_the_step_lasts_the_longer_of_the_two():
    """NOTE(hicache-load-overlap): the step's time is its compute, or the copy if longer; its
    named terms add up to it to the bit."""
    engine = build_engine(kvsim.Workload.from_requests([R(0, 100, 10)]), MODEL, GPU, HICACHE)
    cost: StepCost = engine.cost
    small = StepPlan(BATCH, chunks=[(0, 64, 36)], host_load_bytes=4 * 2**20)
    large = StepPlan(BATCH, chunks=[(0, 64, 36)], host_load_bytes=40 * 10**9)
    compute = cost.plan_s(StepPlan(BATCH, chunks=[(0, 64, 36)]))
    assert cost.plan_s(small) == compute > cost.transfer_s(4 * 2**20)
    assert cost.plan_s(large) == cost.transfer_s(40 * 10**9) > compute
    for plan in (small, large):
        parts = cost.plan_parts(plan)
        assert parts.total_s == cost.plan_s(plan)
        assert parts.host_load_s == cost.transfer_s(plan.host_load_bytes)


def test_a_retracted_request_reloads_its_prompt_and_recomputes_its_answer():
    """On the long-prompt day SGLang retracts requests; with HiCache a resumed request finds
    its prompt on the GPU or the host, so it loads, never recomputes, what the host holds,
    and what it recomputes is no more than without the tier."""
    kw = kvsim.get_scenario("belgavi-long")
    wl, model, gpu = kw.pop("workload"), kw.pop("model"), kw.pop("gpu")
    off = kvsim.simulate(wl, model=model, gpu=gpu, **dict(kw, admission="sglang"))
    on = kvsim.simulate(wl, model=model, gpu=gpu, **dict(kw, **HICACHE))
    assert off.summary()["preemptions"] > 0 and on.requests["loaded_tokens"].sum() > 0
    assert on.requests["recomputed_tokens"].sum() < off.requests["recomputed_tokens"].sum()


def test_with_the_tier_off_nothing_changes():
    """``enable_hierarchical_cache=False`` is the default run, table for table."""
    wl = kvsim.Workload.poisson(2.0, 30, prompt=800, output=kvsim.Geometric(100), seed=5)
    a = kvsim.simulate(wl, model=MODEL, gpu=GPU, admission="sglang", num_gpu_blocks=300)
    b = kvsim.simulate(wl, model=MODEL, gpu=GPU, admission="sglang", num_gpu_blocks=300,
                       enable_hierarchical_cache=False)
    for name in ("requests", "timeline", "pauses", "events"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.columns == y.columns and all((x[c] == y[c]).all() for c in x.columns
                                              if c != "ttft_s"), name
    assert a.counters == b.counters


def test_every_invariant_holds_with_hicache_on():
    """A bounded fuzz: tight pools, shared prefixes, host pools from smaller than the GPU's
    to large, every step checked."""
    rng = random.Random(33)
    for _ in range(30):
        n = rng.randint(2, 25)
        wl = kvsim.Workload.from_requests(
            [R(round(rng.uniform(0, 2), 3), rng.randint(20, 600), rng.randint(1, 80))
             for _ in range(n)])
        if rng.random() < 0.5:
            wl = wl.with_shared_prefix(rng.choice([16, 100, 300]), groups=rng.randint(1, 3))
        fit = -(-(600 + 80) // 16)
        r = kvsim.simulate(wl, model=MODEL, gpu=GPU, num_gpu_blocks=rng.randint(fit, 4 * fit),
                           hicache_ratio=rng.choice([0.05, 0.5, 2.0, 8.0]),
                           max_num_seqs=rng.randint(1, 16), check=True,
                           step_by_step=rng.random() < 0.3, **HICACHE)
        assert (r.requests["generated_tokens"] == r.requests["output_tokens"]).all()
