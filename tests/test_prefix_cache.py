"""The V1 prefix cache (``book/engine-reference.md``, *The prefix cache*; vLLM's
vllm/v1/core/block_pool.py and kv_cache_manager.py) seen through whole runs: hits on a
shared system prompt and on a conversation's history, the hit cap (one prompt token is
always computed), LRU eviction (the least recently freed blocks first, a request's tail
blocks first), and the hit rate of the summary.

llama-2-7b on the L40S, ``block_size=16``, ``engine="v1"`` (prefix caching on by
default). ``requests["prefix_hit_tokens"]`` and ``["prefix_lookup_tokens"]`` are the
tokens found cached and looked up at a request's first admission;
``summary()["prefix_cache_hit_rate"]`` is their ratio over the run.
"""
from __future__ import annotations

import numpy as np
import pytest

import kvsim

R = kvsim.Request
MODEL = "llama-2-7b"
GPU = "l40s-48gb"
BS = 16


def run(workload, **opts):
    opts.setdefault("block_size", BS)
    return kvsim.simulate(workload, model=MODEL, gpu=GPU, **opts)


def prefilled(result):
    """The prefill tokens of every step that prefilled something."""
    p = result.timeline["prefill_tokens"]
    return p[p > 0].tolist()


def assert_drained(result):
    tl, rq = result.timeline, result.requests
    assert int(tl["kv_blocks_used"][-1]) == 0 and int(tl["running"][-1]) == 0
    assert int(tl["waiting"][-1]) == 0
    assert np.array_equal(rq["generated_tokens"], rq["output_tokens"])


# --------------------------------------------------------------------------------------------
# A shared system prompt


@pytest.mark.parametrize("groups, hits", [(1, [0, 128, 128, 128]), (2, [0, 0, 128, 128])])
def test_a_shared_system_prompt_is_hit_by_every_later_request_of_its_group(groups, hits):
    """Four 200-token prompts, 0.2 s apart (each finishes before the next), whose first
    128 tokens (8 blocks) are a system prompt shared within each of ``groups`` groups
    (request i in group i % groups). The first request of a group computes all 200
    tokens; each later one hits the 8 cached prefix blocks and prefills 72. Hit rate:
    hits / (4 x 200). With the cache off nothing is looked up and the rate is 0."""
    wl = kvsim.Workload.from_requests([R(0.2 * i, 200, 10) for i in range(4)]) \
        .with_shared_prefix(128, groups=groups)
    r = run(wl, num_gpu_blocks=100)
    rq = r.requests
    assert rq["prefix_hit_tokens"].tolist() == hits
    assert rq["prefix_lookup_tokens"].tolist() == [200] * 4
    assert prefilled(r) == [200 - h for h in hits]
    assert r.summary()["prefix_cache_hit_rate"] == pytest.approx(sum(hits) / 800)
    assert r.summary()["prefix_cache_hit_rate"] > 0
    assert r.counters["prefix_cache_hits"] == sum(hits) and r.counters["prefix_cache_queries"] == 800
    assert rq["recomputed_tokens"].sum() == 0 and rq["rescued_tokens"].sum() == 0
    assert_drained(r)

    off = run(wl, num_gpu_blocks=100, enable_prefix_caching=False)
    assert off.requests["prefix_hit_tokens"].tolist() == [0] * 4
    assert off.summary()["prefix_cache_hit_rate"] == 0.0
    assert prefilled(off) == [200] * 4
    v0 = run(wl, num_gpu_blocks=100, engine="v0")         # V0: prefix caching off by default
    assert v0.summary()["prefix_cache_hit_rate"] == 0.0


def test_prefix_groups_in_turn_or_by_a_zipf_law():
    """``popularity=0`` keeps the groups in turn (request i in group i % groups); a Zipf
    exponent s draws each request's group with P(k) proportional to 1 / (k + 1) ** s from
    the workload's seed: the same groups for the same seed whatever count is asked,
    frequencies within sampling error of the law, and the run's hits follow: the popular
    prefixes stay cached, so more of the prompts are found than in turn."""
    base = kvsim.Workload.poisson(2.0, 600.0, prompt=400, output=20, seed=7)
    turn = base.with_shared_prefix(256, groups=20)
    assert turn.prefix_groups_of(45).tolist() == [i % 20 for i in range(45)]
    assert turn.prefix_popularity == 0.0
    zipf = base.with_shared_prefix(256, groups=20, popularity=1.1)
    n = 20_000
    groups = zipf.prefix_groups_of(n)
    assert groups.tolist()[:300] == zipf.prefix_groups_of(300).tolist()
    assert np.array_equal(groups, base.with_shared_prefix(256, 20, popularity=1.1).prefix_groups_of(n))
    other_seed = kvsim.Workload.poisson(2.0, 600.0, prompt=400, output=20, seed=8) \
        .with_shared_prefix(256, groups=20, popularity=1.1)
    assert not np.array_equal(groups, other_seed.prefix_groups_of(n))
    law = 1 / np.arange(1, 21) ** 1.1
    law /= law.sum()
    seen = np.bincount(groups, minlength=20) / n
    assert np.all(np.abs(seen - law) < 4 * np.sqrt(law * (1 - law) / n))     # 4 sigma
    assert "picked by a Zipf law of exponent 1.1" in zipf.source
    # A small GPU cache: 20 documents of 16 blocks do not fit; the popular ones do.
    hit = {w.prefix_popularity: run(w, num_gpu_blocks=120, until_s=600.0).summary()[
        "prefix_cache_hit_rate"] for w in (turn, zipf)}
    assert hit[1.1] > hit[0.0] + 0.2
    one_group = base.with_shared_prefix(256, groups=1, popularity=2.0)
    assert one_group.prefix_groups_of(10).tolist() == [0] * 10


def test_closed_loop_users_draw_their_prefix_group_once():
    """In a closed loop each user keeps one group, drawn by the law from the workload's seed:
    every request a user sends names that user's prefix."""
    from kvsim.traffic.arrivals import ClosedArrivals

    wl = kvsim.Workload.closed_loop(users=12, duration_s=60.0, prompt=300, output=20,
                                    think_s=0.5, seed=3).with_shared_prefix(128, 6, popularity=1.5)
    by_user = wl.prefix_groups_of(12).tolist()
    assert by_user != [u % 6 for u in range(12)]
    arrivals = ClosedArrivals(wl, until_s=60.0, max_tokens=None, max_model_len=4096)
    sent = 0
    for t in (0.0, 1.0, 2.0, 3.0):
        for request, user in arrivals.pull(t):
            assert request.prefix_group == by_user[user] and request.prefix_tokens == 128
            arrivals.bind(sent, user)
            arrivals.finished(sent, t)
            sent += 1
    assert sent > 12                                       # users came back for more
    assert run(wl, num_gpu_blocks=400).summary()["prefix_cache_hit_rate"] > 0


def test_a_prefix_cached_in_one_step_is_hit_by_requests_admitted_later_in_that_step():
    """Three 200-token prompts with a shared 128-token prefix arrive together: the first
    chunk's prefix blocks are cached when it is scheduled, so the second and third,
    admitted in the same step, hit them: 200 + 72 + 72 = 344 prefill tokens in step 1,
    and the three hold 8 shared + 3 x 5 own blocks = 23 (not 39)."""
    wl = kvsim.Workload.from_requests([R(0.0, 200, 10)] * 3).with_shared_prefix(128)
    r = run(wl, num_gpu_blocks=100)
    assert r.requests["prefix_hit_tokens"].tolist() == [0, 128, 128]
    assert r.timeline["prefill_tokens"][0] == 344 and r.timeline["running"][0] == 3
    assert r.timeline["kv_blocks_used"][0] == 8 + 3 * 5
    assert_drained(r)


@pytest.mark.parametrize("prompt, hit", [(128, 112), (127, 112), (129, 128), (144, 128)])
def test_a_hit_never_covers_the_last_prompt_token(prompt, hit):
    """A second request whose whole prompt is cached still computes at least its last
    token, and hits whole blocks only: at most (P - 1) // 16 blocks. A 128-token prompt
    (8 full blocks cached) hits 7 blocks (112 tokens) and computes 16; 127 tokens: 7
    blocks; 129 tokens (the prefix's 8 blocks and one token more): 128 = P - 1; 144:
    8 blocks, 128 tokens."""
    wl = kvsim.Workload.from_requests([R(0.0, prompt, 3), R(0.5, prompt, 3)]) \
        .with_shared_prefix(max(prompt, 128))
    r = run(wl, num_gpu_blocks=100)
    got = r.requests["prefix_hit_tokens"].tolist()
    assert got == [0, hit]
    assert got[1] <= prompt - 1 and got[1] % BS == 0
    assert got[1] == (prompt - 1) // BS * BS
    assert prefilled(r) == [prompt, prompt - hit]


# --------------------------------------------------------------------------------------------
# Multi-turn conversations


def test_later_turns_of_a_conversation_hit_its_history():
    """One user, 3-turn conversations, 100-token messages and 20-token answers, 10 s of
    think time and a 35 s run: exactly four requests (each is served in well under a
    second), at about 0, 10, 20 and 30 s. Turn 1 sends 100 tokens; turn 2 the history
    (100 + 20) and a new message: 220; turn 3: 220 + 20 + 100 = 340; then a new
    conversation (100). When a turn finishes it
    frees 100 + 20 - 1 = 119 stored tokens, 7 full blocks (112 tokens), which turn 2
    hits; turn 2 frees 239, 14 full blocks (224 tokens), which turn 3 hits. The new
    conversation shares nothing. Hit rate over the first four: (112 + 224) / (100 + 220
    + 340 + 100)."""
    wl = kvsim.Workload.closed_loop(users=1, duration_s=35.0, prompt=100, output=20,
                                    think_s=10.0, turns=3)
    r = run(wl, num_gpu_blocks=200)
    rq = r.requests
    assert rq.num_rows == 4
    assert rq["prompt_tokens"][:4].tolist() == [100, 220, 340, 100]
    assert rq["prefix_hit_tokens"][:4].tolist() == [0, 112, 224, 0]
    assert rq["prefix_lookup_tokens"][:4].tolist() == [100, 220, 340, 100]
    assert prefilled(r)[:4] == [100, 220 - 112, 340 - 224, 100]
    assert r.summary()["prefix_cache_hit_rate"] == pytest.approx((112 + 224) / 760)
    assert rq["recomputed_tokens"].sum() == 0
    assert_drained(r)

    off = run(wl, num_gpu_blocks=200, enable_prefix_caching=False)
    assert off.requests["prompt_tokens"][:4].tolist() == [100, 220, 340, 100]
    assert off.requests["prefix_hit_tokens"].sum() == 0
    assert off.summary()["prefix_cache_hit_rate"] == 0.0
    assert prefilled(off)[:4] == [100, 220, 340, 100]


def test_conversation_history_and_a_shared_system_prompt_combine():
    """The same conversations with a 64-token system prompt (4 blocks, the user's group
    0): the history's first 4 blocks are the prefix blocks, the rest the conversation's
    own, so turns 2 and 3 hit 112 and 224 tokens as before, and the first turn of the
    second conversation, which shares only the system prompt, now hits its 64 tokens."""
    wl = kvsim.Workload.closed_loop(users=1, duration_s=35.0, prompt=100, output=20,
                                    think_s=10.0, turns=3).with_shared_prefix(64)
    r = run(wl, num_gpu_blocks=200)
    assert r.requests["prefix_hit_tokens"].tolist() == [0, 112, 224, 64]
    assert r.summary()["prefix_cache_hit_rate"] == pytest.approx((112 + 224 + 64) / 760)


# --------------------------------------------------------------------------------------------
# LRU eviction


def test_the_least_recently_freed_blocks_are_evicted_first_tail_blocks_first():
    """A 14-block pool and a 64-token shared prefix in 3 groups (request i in group
    i % 3). E (group 1, 80 tokens, 1 token answer) finishes in step 1: its blocks are
    freed tail first (its own 5th block, then prefix blocks 3, 2, 1, 0). L (group 0, 80
    tokens, 3-token answer) finishes in step 3, freeing its 5 full blocks after E's (its
    6th, partly filled block is freed unhashed). 4 blocks were never used. F (group 2,
    100 tokens: 7 blocks) arrives at 0.5 s and takes the 4 unhashed blocks, then evicts
    the 3 least recently freed cached ones: E's own block and E's prefix blocks 3 and 2.
    When F finishes its partly filled 7th block is the only unhashed one. At 1 s the
    probes arrive (65 tokens each: the whole prefix can be hit): L's group's probe hits
    all 64 prefix tokens (taking the unhashed block for its last token), E's group's only
    E's first two prefix blocks: 32 tokens."""
    wl = kvsim.Workload.from_requests([
        R(0.0, 80, 3),     # 0: L, group 0, freed last
        R(0.0, 80, 1),     # 1: E, group 1, freed first
        R(0.5, 100, 1),    # 2: F, group 2, evicts 3 cached blocks
        R(1.0, 65, 1),     # 3: probe of group 0
        R(1.0, 65, 1),     # 4: probe of group 1
    ]).with_shared_prefix(64, groups=3)
    r = run(wl, num_gpu_blocks=14)
    rq, tl = r.requests, r.timeline
    assert rq["finish_s"][1] == tl["t_s"][0] < rq["finish_s"][0] < 0.5 < rq["finish_s"][2] < 1.0
    assert rq["prefix_hit_tokens"].tolist() == [0, 0, 0, 64, 32]
    # before F: E's 5 + L's 5 full blocks cached; after F: 10 - 3 + F's 6 full blocks
    assert tl["kv_blocks_cached"][2] == 10
    assert tl["kv_blocks_cached"][row_of(r, rq["finish_s"][2])] == 10 - 3 + 6
    assert_drained(r)


def row_of(result, t):
    idx = np.flatnonzero(result.timeline["t_s"] == t)
    assert idx.size == 1
    return int(idx[0])


def test_without_eviction_pressure_both_groups_keep_their_prefix():
    """Control for the test above: with 30 blocks F takes unhashed blocks only, and both
    probes hit the whole 64-token prefix."""
    wl = kvsim.Workload.from_requests([R(0.0, 80, 3), R(0.0, 80, 1), R(0.5, 100, 1),
                                       R(1.0, 65, 1), R(1.0, 65, 1)]) \
        .with_shared_prefix(64, groups=3)
    r = run(wl, num_gpu_blocks=30)
    assert r.requests["prefix_hit_tokens"].tolist() == [0, 0, 0, 64, 64]
    assert r.counters["prefix_cache_evicted_blocks"] == 0
