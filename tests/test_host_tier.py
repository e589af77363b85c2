"""vLLM V1's host-memory KV tier (``kv_offloading_size``): kvsim/engine/blocks/host_tier.py.

What vLLM 0.34.0 does is in docs/research/kv-tiers.md. Here: the tier's own store, eviction
and load rules (translated from vLLM's tests/v1/kv_offload/cpu/test_manager.py::test_cpu_manager,
to kvsim's step clock), then hand-derived runs: a preempted request recomputes only what the
tier does not hold, a load lasts what the link takes, the capacity bounds what the tier holds,
every invariant holds with the tier on, and with it off nothing changes.
"""
from __future__ import annotations

import random

import pytest

import kvsim
from kvsim.engine.blocks.host_tier import PAGE_BYTES, HostTier, host_tier_blocks
from kvsim.engine.loop import build_engine
from kvsim.units import GiB

MODEL, GPU = "llama-2-7b", "a100-80gb"


# ------------------------------------------------------------------- the tier alone
def test_the_tiers_blocks_are_whole_pages():
    """vLLM rounds a CPU block up to the page and fits floor(size / that) of them."""
    assert host_tier_blocks(8 * GiB, 8 * 2**20) == (1024, 8 * 2**20)
    blocks, per_block = host_tier_blocks(10**6, 5000)
    assert per_block == 2 * PAGE_BYTES and blocks == 10**6 // (2 * PAGE_BYTES)


def _settle(tier: HostTier) -> None:
    tier.end_step()        # the step that issued the stores ends: they start copying
    tier.end_step()        # the next ends: the copies are done


def test_stores_are_readable_once_copied_and_present_blocks_are_not_stored_again():
    """vLLM's test_cpu_manager, on kvsim's clock: a store is pending (not a hit) until its
    copy is done; storing [2, 3, 4, 5] over [1, 2] in a tier of 4 stores only 3, 4, 5 and
    evicts 1, the least recently used."""
    tier = HostTier(4, 100)
    tier.offer(0, [1, 2])
    assert tier.lookup([1, 2]) == 0 and tier.used == 2
    tier.end_step()
    assert tier.lookup([1, 2]) == 0                     # copying
    tier.end_step()
    assert tier.lookup([1, 2]) == 2 and tier.stored_blocks == 2
    tier.offer(1, [2, 3, 4, 5])
    _settle(tier)
    assert tier.lookup([1]) == 0 and tier.lookup([2, 3, 4, 5]) == 4
    assert tier.stored_blocks == 5 and tier.used == 4


def test_a_store_with_no_idle_room_is_dropped_whole():
    """Blocks still being copied cannot be evicted: a store that needs them fails (vLLM:
    prepare_store returns None, vllm:kv_offload_allocation_failure counts it)."""
    tier = HostTier(4, 100)
    tier.offer(0, [1, 2, 3])
    tier.offer(1, [7, 8])                               # 3 pending + 2 > 4, nothing to evict
    assert tier.allocation_failures == 1 and tier.used == 3
    _settle(tier)
    tier.offer(1, [7, 8])                               # now one can go: request 0's last
    _settle(tier)
    assert tier.lookup([7, 8]) == 2 and tier.lookup([3]) == 0 and tier.lookup([1, 2]) == 2


def test_a_load_and_a_repeated_store_count_as_uses_and_a_requests_tail_goes_first():
    tier = HostTier(4, 100)
    tier.offer(0, [1, 2])
    _settle(tier)
    tier.offer(1, [3, 4])
    _settle(tier)
    tier.load([1, 2])                                   # 1 and 2 are now the most recent
    tier.offer(2, [5])
    _settle(tier)
    assert tier.lookup([4]) == 0, "request 1's last block is the first to go"
    assert tier.lookup([3]) == 1 and tier.lookup([1, 2]) == 2 and tier.lookup([5]) == 1


# ------------------------------------------------------------------------- runs
def test_a_preempted_request_recomputes_only_what_the_tier_does_not_hold():
    """Request 1 is preempted once, holding 2,079 tokens (its 2,000-token prompt and 80
    answer tokens but the last). Without a tier it finds 1,856 of them in the GPU's prefix
    cache and recomputes 223; with one it loads the prompt blocks the GPU lost (144
    tokens) and recomputes only its answer: 2,079 - 2,000 = 79."""
    def victim(size):
        r = _preempting_run(size)
        q = r.requests
        assert list(q["preemptions"]) == [0, 1, 0]
        return {c: int(q[c][1]) for c in q.columns
                if c in ("recomputed_tokens", "rescued_tokens", "loaded_tokens")}

    before, after = victim(None), victim(8.0)
    assert before == {"recomputed_tokens": 223, "rescued_tokens": 1856}
    assert sum(before.values()) == 2000 + 80 - 1
    assert after == {"recomputed_tokens": 79, "rescued_tokens": 1856, "loaded_tokens": 144}
    tiered = _preempting_run(8.0)
    assert tiered.summary(warmup_s=0.0)["loaded_tokens"] == 144 == \
        int(tiered.requests["loaded_tokens"].sum())
    assert _preempting_run(None).summary(warmup_s=0.0)["loaded_tokens"] == 0
    assert after["rescued_tokens"] + after["loaded_tokens"] == 2000    # every prompt block


def _preempting_run(size, **options):
    """Three long prompts in a pool of 260 blocks: two run, the second is preempted as they
    grow, and by the time it comes back the first's growth has reused some of its blocks;
    the third arrives after both have finished."""
    requests = [kvsim.Request(0.0, 2000, 300), kvsim.Request(0.0, 2000, 300),
                kvsim.Request(5.0, 2000, 300)]
    opts = dict(num_gpu_blocks=260, check=True, **options)
    if size is not None:
        opts["kv_offloading_size"] = size
    return kvsim.simulate(requests, model=MODEL, gpu=GPU, **opts)


def _loads(size, **options):
    """``[(loaded blocks, seconds the load took)]`` of a run of the case above."""
    requests = [kvsim.Request(0.0, 2000, 300), kvsim.Request(0.0, 2000, 300),
                kvsim.Request(5.0, 2000, 300)]
    engine = build_engine(kvsim.Workload.from_requests(requests), MODEL, GPU,
                          dict(num_gpu_blocks=260, kv_offloading_size=size, check=True, **options))
    sched, seen = engine.scheduler, []
    start_load = sched._start_load

    def watch(rid, tokens, hit, host):            # when a load starts: its blocks and length
        start_load(rid, tokens, hit, host)
        seen.append((host, sched.loading[rid] - sched.now_s))

    sched._start_load = watch
    engine.run()
    return seen, engine


@pytest.mark.pure_engine
@pytest.mark.parametrize("link", [16e9, 32e9])
def test_a_load_lasts_what_the_link_takes(link):
    """The 9 blocks (8 MiB each) load over PCIe in 9 x 8 MiB / bandwidth, in the background;
    the request waits for them."""
    loads, engine = _loads(8.0, pcie_bytes_per_s=link)
    assert len(loads) == 1
    blocks, seconds = loads[0]
    assert blocks == 9 and engine.cfg.block_bytes == 8 * 2**20
    assert seconds == pytest.approx(9 * 8 * 2**20 / link, rel=1e-9)


def test_the_tier_holds_no_more_than_its_capacity_and_a_small_one_loads_less():
    """A tier of 64 blocks (0.5 GiB of 8 MiB blocks) on the long-prompt day: it never holds
    more than 64, drops stores it has no room for, and saves fewer recomputed tokens than a
    tier that holds every prompt."""
    used = []

    def run(size):
        kw = kvsim.get_scenario("belgavi-long")
        wl, model, gpu = kw.pop("workload"), kw.pop("model"), kw.pop("gpu")
        engine = build_engine(wl, model, gpu, dict(kw, kv_offloading_size=size))
        tier = engine.scheduler.tier
        return engine.run(lambda _e: used.append((tier.capacity, tier.used)))

    small, big = run(0.5), run(64.0)
    assert all(n <= cap for cap, n in used)
    assert small.counters["kv_offload_capacity_blocks"] == 64
    assert small.counters["kv_offload_allocation_failures"] > 0
    assert big.counters["kv_offload_allocation_failures"] == 0
    assert small.requests["loaded_tokens"].sum() < big.requests["loaded_tokens"].sum()
    assert big.requests["recomputed_tokens"].sum() < small.requests["recomputed_tokens"].sum()


def test_with_nothing_coming_back_the_tier_changes_no_schedule():
    """Stores never touch the GPU's schedule: on a day with no preemption and no shared
    prompt, a run with a tier is the run without one, table for table."""
    wl = kvsim.Workload.poisson(0.5, 60, prompt=800, output=kvsim.Geometric(100), seed=3)
    off = kvsim.simulate(wl, model=MODEL, gpu=GPU)
    on = kvsim.simulate(wl, model=MODEL, gpu=GPU, kv_offloading_size=4.0)
    assert off.summary()["preemptions_per_1k"] == 0
    assert on.counters["kv_offload_stored_blocks"] > 0 and on.counters["kv_offload_loaded_blocks"] == 0
    for name in ("timeline", "pauses", "events"):
        a, b = getattr(off, name), getattr(on, name)
        assert all((a[c] == b[c]).all() for c in a.columns), name
    assert all((off.requests[c] == on.requests[c]).all() for c in off.requests.columns
               if c != "ttft_s") and (on.requests["loaded_tokens"] == 0).all()
    assert "loaded_tokens" not in off.requests and not any(k.startswith("kv_offload")
                                                           for k in off.counters)


def test_every_invariant_holds_with_the_tier_on():
    """A bounded fuzz: tight pools, shared prefixes, conversations and tiers from a few blocks
    to plenty, every step checked (check=True asserts the books, blocks held while loading
    included)."""
    rng = random.Random(32)
    for _ in range(40):
        n = rng.randint(2, 25)
        wl = kvsim.Workload.from_requests(
            [kvsim.Request(round(rng.uniform(0, 2), 3), rng.randint(20, 600), rng.randint(1, 80))
             for _ in range(n)])
        fit = -(-(600 + 80) // 16)
        kvsim.simulate(wl, model=MODEL, gpu=GPU, num_gpu_blocks=rng.randint(fit, 4 * fit),
                       kv_offloading_size=rng.choice([0.01, 0.1, 1.0, 16.0]),
                       max_num_seqs=rng.randint(1, 16), check=True,
                       step_by_step=rng.random() < 0.3)


@pytest.mark.parametrize("options, message", [
    (dict(engine="v0", enable_prefix_caching=False), "engine='v0'"),
    (dict(kv_offloading_backend="lmcache"), "kv_offloading_backend='lmcache' is not modelled"),
    (dict(enable_prefix_caching=False), "enable_prefix_caching=False is not modelled"),
    (dict(admission="guaranteed"), "admission='guaranteed' is not modelled"),
    (dict(vllm_version="0.20"), "vllm_version='0.20' is not modelled"),
    (dict(kv_offloading_size=-1), "kv_offloading_size=-1"),
    (dict(kv_offloading_size="big"), "kv_offloading_size='big'"),
])
def test_a_tier_kvsim_does_not_model_is_a_one_line_error(options, message):
    opts = dict(dict(kv_offloading_size=4.0), **options)
    with pytest.raises(kvsim.KvsimError) as err:
        kvsim.simulate([kvsim.Request(0, 100, 10)], model=MODEL, gpu=GPU, **opts)
    assert message in str(err.value) and "\n" not in str(err.value)


#: A day (found by the fuzz) on which, at 4.3 s, nothing runs and the requests back from the
#: tier hold the blocks the head of the queue needs: without a rule the engine stalls.
STALL_DAY = [(0.832, 580, 114), (1.154, 553, 25), (0.201, 294, 12), (1.022, 392, 32),
             (0.961, 122, 11), (0.519, 174, 103), (1.447, 308, 107), (0.511, 761, 49),
             (0.738, 473, 57), (0.759, 551, 71), (0.667, 836, 1), (1.662, 314, 60),
             (0.323, 786, 113), (1.834, 766, 46), (1.003, 858, 110), (0.913, 737, 110),
             (1.068, 652, 39), (1.349, 832, 22), (0.217, 385, 92), (0.864, 721, 17),
             (0.633, 142, 19), (0.785, 573, 51), (1.39, 175, 107), (0.981, 558, 6),
             (0.321, 506, 96), (1.015, 412, 107), (1.973, 834, 115)]


@pytest.mark.pure_engine
def test_a_stall_on_loaded_blocks_frees_the_last_loaded_request():
    """The last of the waiting requests that hold loaded blocks gives them back, counted as a
    preemption (kvsim's rule: NOTE(host-tier-stall-release)); every request then finishes."""
    engine = build_engine(kvsim.Workload.from_requests([kvsim.Request(*r) for r in STALL_DAY]),
                          MODEL, GPU, dict(num_gpu_blocks=73, kv_offloading_size=1.0,
                                           max_num_seqs=21, step_by_step=True, check=True))
    sched, released = engine.scheduler, []
    release = sched._release_a_loaded_request

    def watch():
        held = {r: sched.kv.held[r] for r in sched.loaded}
        release()
        released.append(next(r for r in held if r not in sched.loaded))

    sched._release_a_loaded_request = watch
    r = engine.run()
    assert released
    assert (r.requests["finish_s"] == r.requests["finish_s"]).all()      # all finished
    assert r.events.num_rows == int(r.requests["preemptions"].sum())
