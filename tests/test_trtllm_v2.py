"""TensorRT-LLM's KV cache manager V2 with its scheduler (``use_kv_cache_manager_v2=True``).

What the engine does is in docs/research/kv-tiers.md, section 3 (scheduler_v2.py @00746ef9,
the runtime's ``_KVCache.suspend``/``resume`` @00f6bd61); kvsim's model is
kvsim/engine/suspension.py. Here: hand-derived runs (a suspended request comes back from the
host tier and recomputes nothing; without a tier a waiting request frees the newest decoding
one; the deadlock; resumes wait for ``max_util_for_resume``; the copy back follows the link),
the options' errors, a fuzz with every invariant on, and the option off changing nothing.

Translated from TensorRT-LLM's own tests (NVIDIA/TensorRT-LLM):
``tests/unittest/_torch/executor/kv_cache/test_kv_cache_v2_scheduler.py`` @0046b12c
(``test_multiple_evictions_order``: victims come from the tail),
``tests/unittest/_torch/executor/kv_cache/test_kvv2_host_tier_sizing.py``
(``TestComputeAutoHostTierQuota``: one rank with host memory to spare gets the GPU quota) and
the deadlock tests of the V2 scheduler's mocked-manager suites
(``test_kv_cache_v2_scheduler.py``: a suspended generation request that cannot allocate, with
nothing to free, raises "V2 scheduler deadlock"; the kv-transfer seam's
``test_pool_exhaustion_is_detected_once_the_request_is_back_on_the_local_path``).
"""
from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

import kvsim
from kvsim.engine.suspension import DEADLOCK_STALL_PASSES, may_resume
from kvsim.errors import KvsimError

R = kvsim.Request
MODEL, GPU = "llama-2-7b", "a100-80gb"
V2 = dict(admission="max_utilization", use_kv_cache_manager_v2=True)


def _run(reqs, **options):
    opts = dict(num_gpu_blocks=8, check=True)
    opts.update(options)
    return kvsim.simulate(reqs, model=MODEL, gpu=GPU, **opts)


def _col(res, name):
    return [float(x) for x in res.requests[name]]


# ---------------------------------------------------------------- suspend and resume
TWO = [R(0, 32, 60), R(0, 32, 60)]


def test_a_suspended_request_comes_back_from_the_host_and_recomputes_nothing():
    """Two requests of 32 + 60 tokens in 8 blocks of 16: both decode in step until each holds
    64 tokens (4 blocks, the pool full); the first then needs a 5th block, so the last started
    one is suspended: its 4 blocks go to the host tier (by default the GPU's size, 8 blocks).
    The first finishes (6 blocks), the second resumes, copies its 64 tokens back and
    recomputes none of them."""
    res = _run(TWO, **V2)
    assert _col(res, "swaps") == [0, 1] and _col(res, "preemptions") == [0, 1]
    assert _col(res, "recomputed_tokens") == [0, 0]
    counters = res.counters
    assert counters["trtllm_host_capacity_blocks"] == 8
    assert counters["trtllm_suspensions"] == 1 and counters["trtllm_resumed_tokens"] == 64
    assert _col(res, "loaded_tokens") == [0, 64] and res.summary()["loaded_tokens"] == 64
    # without a tier the same victim is recompute-paused: its prompt's 2 blocks stay in the
    # prefix cache, so it recomputes the 32 generated tokens' KV
    bare = _run(TWO, host_cache_size=0, **V2)
    assert _col(bare, "swaps") == [0, 0] and _col(bare, "recomputed_tokens") == [0, 32]
    assert bare.counters["trtllm_resumed_tokens"] == 0 and bare.summary()["loaded_tokens"] == 0


def test_the_victim_is_the_tail_of_the_list_not_the_next_one():
    """``test_kv_cache_v2_scheduler.py`` @0046b12c, ``test_multiple_evictions_order`` (the
    tail is suspended first): A (16 + 40), B and C (20 + 40) in 8 blocks. A takes its 2nd
    block at once (6 in use), B and C their 3rd at 33 tokens (8, the pool full); at 17
    generated tokens A needs its 3rd. The walk starts at the tail: C is suspended with its
    20 + 17 - 1 = 36 tokens, B is untouched, and C comes back without recomputing."""
    res = _run([R(0, 16, 40), R(0, 20, 40), R(0, 20, 40)], **V2)
    assert _col(res, "swaps") == [0, 0, 1] and _col(res, "preemptions") == [0, 0, 1]
    assert _col(res, "recomputed_tokens") == [0, 0, 0]
    assert res.counters["trtllm_resumed_tokens"] == 36


def test_a_host_tier_too_small_for_the_victim_means_a_recompute_pause():
    """A tier of 3 blocks cannot take the victim's 4: the suspension frees nothing (a suspended
    request's pages never leave the last level), so it is recompute-paused."""
    block_bytes = _run(TWO, **V2).config["block_bytes"]
    small = _run(TWO, host_cache_size=3 * block_bytes, **V2)
    assert small.counters["trtllm_host_capacity_blocks"] == 3
    assert _col(small, "swaps") == [0, 0] and _col(small, "recomputed_tokens") == [0, 32]
    exact = _run(TWO, host_cache_size=4 * block_bytes, **V2)
    assert _col(exact, "swaps") == [0, 1] and _col(exact, "recomputed_tokens") == [0, 0]


def test_the_copy_back_is_priced_over_the_link():
    """The suspension's copy out and the resume's copy back are PCIe transfers of the step
    that makes them: a link a thousand times slower delays the suspended request, and changes
    nothing where no request is suspended."""
    fast, slow = _run(TWO, **V2), _run(TWO, pcie_bytes_per_s=25e6, **V2)
    assert _col(slow, "finish_s")[1] > _col(fast, "finish_s")[1] + 0.01
    alone = [R(0, 32, 60)]
    assert _col(_run(alone, **V2), "finish_s") == _col(_run(alone, pcie_bytes_per_s=25e6, **V2),
                                                       "finish_s")


def test_may_resume_compares_the_pool_in_use_with_the_threshold():
    """``_KVCache.resume`` refuses while utilisation > max_util_for_resume (before the resume)."""
    assert may_resume(95, 100, 0.95) and not may_resume(96, 100, 0.95)
    assert may_resume(0, 100, 0.0) and not may_resume(1, 100, 0.0)


THREE = [R(0, 32, 60), R(0, 32, 60), R(0.001, 32, 40)]


@pytest.mark.parametrize("threshold", [0.0, 0.5, 0.95, 1.0])
def test_a_resume_waits_until_the_pool_in_use_is_at_most_max_util_for_resume(threshold):
    """Every step that brings a suspended request back (``swapped`` falls) starts with at most
    ``max_util_for_resume`` of the pool in use (the previous step's end state)."""
    res = _run(THREE, num_gpu_blocks=10, max_util_for_resume=threshold, step_by_step=True, **V2)
    used, swapped = np.asarray(res.timeline["kv_blocks_used"]), np.asarray(res.timeline["swapped"])
    resumes = np.flatnonzero(swapped[1:] < swapped[:-1]) + 1
    assert resumes.size, "the scenario must suspend and resume"
    assert all(used[i - 1] <= threshold * 10 for i in resumes)


def test_a_low_threshold_holds_a_suspended_request_back():
    """With 0 the suspended request waits for an empty pool; with 1 it comes back as soon as
    its blocks fit, so it finishes earlier."""
    late = _run(THREE, num_gpu_blocks=10, max_util_for_resume=0.0, **V2)
    early = _run(THREE, num_gpu_blocks=10, max_util_for_resume=1.0, **V2)
    assert max(_col(late, "finish_s")) > max(_col(early, "finish_s"))


# ------------------------------------------------- no host tier: a context request preempts
STALL = [R(0, 16, 60), R(0, 40, 60)]       # 7 blocks: the second fills them first


def test_without_a_tier_the_last_request_that_cannot_grow_is_suspended_in_place():
    """7 blocks; A (16 + 60) and B (40 + 60) decode in step. At 25 generated tokens B needs
    its 5th block while A holds 3: B is the last started request, so no victim follows it
    and it suspends itself; without a tier its pages stay (a stall, no recompute). Eight
    steps later A needs its 4th block: B, after A, is recompute-paused."""
    res = _run(STALL, num_gpu_blocks=7, host_cache_size=0, step_by_step=True, **V2)
    pauses, events = res.pauses, res.events
    assert list(pauses["request"]) == [1] and list(events["request"]) == [1]
    assert float(pauses["start_s"][0]) < float(events["t_s"][0])    # stalled, then paused
    assert list(events["mode"]) == [0]                               # a recompute pause


def test_without_a_tier_a_waiting_request_frees_a_started_request_the_step_leaves_out():
    """The same two, and C (16 + 5) waiting from 0.15 s for blocks. When B suspends itself in
    place, the step runs without it, so C's admission (``preempt_for_pages``: only without a
    tier below the GPU, never a request this pass schedules) recompute-pauses B at once and
    keeps the blocks for C, which starts in the next step, long before A finishes. With the
    default tier B is suspended to the host instead and nobody recomputes."""
    reqs = STALL + [R(0.15, 16, 5)]
    alone = _run(STALL, num_gpu_blocks=7, host_cache_size=0, **V2)
    bare = _run(reqs, num_gpu_blocks=7, host_cache_size=0, **V2)
    stalled_at = float(alone.pauses["start_s"][0])
    assert list(bare.events["request"]) == [1]
    assert float(bare.events["t_s"][0]) == stalled_at < float(alone.events["t_s"][0])
    first = _col(bare, "first_scheduled_s")[2]
    assert stalled_at < first < _col(bare, "finish_s")[0]
    assert _col(bare, "preemptions") == [0, 1, 0]
    tiered = _run(reqs, num_gpu_blocks=7, **V2)
    assert _col(tiered, "swaps") == [0, 1, 0] and _col(tiered, "recomputed_tokens") == [0, 0, 0]
    # step by step, the same (the engine's jumps over decode steps keep the rule)
    assert _digest(bare) == _digest(_run(reqs, num_gpu_blocks=7, host_cache_size=0,
                                         step_by_step=True, **V2))


def test_a_prefill_out_of_blocks_is_skipped_not_a_reason_to_suspend():
    """9 blocks; A (16 + 100) decodes while P (128-token prompt, 16-token chunks) prefills.
    P's 8th chunk finds no block (A holds 2, P 7). V1's MAX_UTILIZATION preempts the last
    started request, P itself, at once; V2's context path suspends nobody: P's chunk is
    skipped (A is scheduled, so no victim), and P is recompute-paused only when A, a
    generation request, needs its 3rd block and walks the list from its tail."""
    reqs = [R(0, 16, 100), R(0, 128, 5)]
    opts = dict(num_gpu_blocks=9, long_prefill_token_threshold=16)
    v1 = _run(reqs, admission="max_utilization", **opts)
    for v2 in (_run(reqs, **opts, **V2), _run(reqs, host_cache_size=0, **opts, **V2)):
        assert list(v2.events["request"]) == list(v1.events["request"]) == [1]
        assert float(v2.events["t_s"][0]) > float(v1.events["t_s"][0]) + 0.05
        assert _col(v2, "swaps") == [0, 0]            # a request in prefill is not suspended


# ---------------------------------------------------------------------------- deadlock
def test_no_tier_and_no_recompute_pause_is_the_v2_schedulers_deadlock():
    """TensorRT-LLM's mocked-manager deadlock tests: a generation request that cannot grow
    while nothing can be suspended to a host or recompute-paused. The engine raises after
    1,000 fruitless passes; kvsim's passes would all be the same, so it raises at once."""
    assert DEADLOCK_STALL_PASSES == 1000
    with pytest.raises(KvsimError, match="V2 scheduler deadlock") as err:
        _run(TWO, host_cache_size=0, enable_recompute_pause=False, **V2)
    message = str(err.value)
    assert "\n" not in message and "host_cache_size" in message
    assert "2 requests hold 8 of 8 blocks" in message
    # a host tier or a recompute pause each resolves it
    _run(TWO, enable_recompute_pause=False, **V2)
    _run(TWO, host_cache_size=0, **V2)


# ------------------------------------------------------------------------------ options
def test_the_automatic_host_tier_is_the_gpu_quota():
    """``test_kvv2_host_tier_sizing.py::TestComputeAutoHostTierQuota``: one rank with host
    memory to spare (440 GiB free, a 173 GiB device quota) gets the device quota; kvsim knows
    no host's memory, so its automatic tier is always that case."""
    cfg = _run([R(0, 32, 4)], num_gpu_blocks=500, **V2).config
    assert cfg["suspend_host_blocks"] == 500
    sized = _run([R(0, 32, 4)], host_cache_size=10 * cfg["block_bytes"] + 1, **V2).config
    assert sized["suspend_host_blocks"] == 10
    assert _run([R(0, 32, 4)], host_cache_size=0, **V2).config["suspend_host_blocks"] == 0
    assert _run([R(0, 32, 4)]).config["suspend_host_blocks"] == 0


@pytest.mark.parametrize("options, message", [
    (dict(use_kv_cache_manager_v2=True, admission="guaranteed"),
     "overrides GUARANTEED_NO_EVICT with MAX_UTILIZATION; expected admission='max_utilization'"),
    (dict(use_kv_cache_manager_v2=True), "admission='optimistic' is not modelled"),
    (dict(host_cache_size=4 * 2**30), "host_cache_size=4294967296 is only modelled with"),
    (dict(max_util_for_resume=0.5), "max_util_for_resume=0.5 is only modelled with"),
    (dict(enable_recompute_pause=False), "enable_recompute_pause=False is only modelled with"),
    (dict(V2, max_util_for_resume=1.5), "max_util_for_resume=1.5"),
    (dict(V2, host_cache_size=-1), "host_cache_size=-1"),
    (dict(V2, use_kv_cache_manager_v2="yes"), "use_kv_cache_manager_v2='yes'"),
    (dict(V2, scheduling_policy="priority"), "scheduling_policy='fcfs'"),
    (dict(V2, kv_offloading_size=4.0), "kv_offloading_size with admission='max_utilization'"),
])
def test_bad_options_are_one_line_errors(options, message):
    with pytest.raises(KvsimError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        _run([R(0, 32, 4)], **options)
    assert "\n" not in str(err.value)


# --------------------------------------------------------------------------- invariants
def test_random_small_runs_keep_every_invariant_with_v2():
    """Random small pools, tiers (none, tiny, plenty), thresholds and workloads, every step
    checked (``check=True``); the only error allowed is the deadlock, and only where nothing
    can be freed (no tier room and no recompute pause)."""
    rng = random.Random(32)
    for _ in range(40):
        blocks = rng.randint(12, 40)
        reqs = [R(round(rng.uniform(0, 0.3), 3), rng.randint(1, 120), rng.randint(1, 80))
                for _ in range(rng.randint(2, 12))]
        block_bytes = kvsim.kv_bytes_per_token(MODEL) * 16
        host = rng.choice([None, 0, rng.randint(1, 30) * block_bytes])
        pause = rng.random() < 0.8
        opts = dict(num_gpu_blocks=blocks, host_cache_size=host, enable_recompute_pause=pause,
                    max_util_for_resume=rng.choice([0.0, 0.5, 0.95, 1.0]),
                    max_num_seqs=rng.randint(1, 8), step_by_step=rng.random() < 0.5,
                    long_prefill_token_threshold=rng.choice([0, 32]), **V2)
        try:
            res = _run(reqs, **opts)
        except KvsimError as e:
            assert "V2 scheduler deadlock" in str(e) and not pause, (opts, e)
            continue
        finished = np.asarray(res.requests["finish_s"])
        rejected = np.asarray(res.requests["rejected"])
        assert np.all(np.isfinite(finished[rejected == 0])), opts
        assert res.counters["trtllm_suspensions"] == int(np.sum(res.requests["swaps"]))


# ------------------------------------------------------------------- the option off
def _digest(res) -> str:
    h = hashlib.sha256()
    for name in ("requests", "timeline", "pauses", "events"):
        table = getattr(res, name)
        for col in table.columns:
            h.update(col.encode())
            h.update(np.asarray(table[col]).tobytes())
    h.update(repr(sorted(res.counters.items())).encode())
    return h.hexdigest()


def test_the_option_off_changes_nothing():
    """``use_kv_cache_manager_v2=False`` (the default) is V1's MAX_UTILIZATION, byte for byte
    (tools/fingerprint.py checks every scenario against the tree before the option)."""
    reqs = [R(0.01 * i, 40 + 7 * i, 30 + 5 * i) for i in range(12)]
    opts = dict(num_gpu_blocks=30, admission="max_utilization")
    assert _digest(_run(reqs, **opts)) == _digest(_run(reqs, use_kv_cache_manager_v2=False, **opts))
    assert "trtllm_suspensions" not in _run(reqs, **opts).counters
