"""TensorRT-LLM's capacity scheduler as its source does it (issue 20, items 2 and 3).

``admission="max_utilization"``, ``"guaranteed"`` and ``"static_batch"`` follow
NVIDIA/TensorRT-LLM ``cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp``
@02a10fed with the block counts of ``scheduledBlocksManager.h`` @6a1a21e4 and
``kvCacheManager.cpp`` @002ba6a7 (see ``book/engine-reference.md``).

**Translated from TensorRT-LLM's own tests**
(``cpp/tests/unit_tests/batch_manager/capacitySchedulerTest.cpp`` @08c2acfa). Their
harness runs one scheduler iteration per engine step, a context request's whole
prompt (or one chunk) in an iteration, and 10-token blocks, which kvsim does not
offer (its block sizes are vLLM's powers of two). Each test is translated with
16-token blocks and every token count times 1.6 (a 10-token prompt becomes 16, an
80-token answer 128, a 100-token pool 10 blocks), so every block boundary falls
where the test's does; the iteration numbers move with them (the test's pause at
iteration 41, when 10 + 41 tokens need a sixth block, is kvsim's step 65, when
16 + 65 do). kvsim runs ``engine="v0"`` here: TensorRT-LLM's ``addSequence``
takes the blocks of the whole prompt at the first chunk, as V0 does. Translated:
``SimpleShouldFit``, ``SimpleShouldFitInChunk``, ``SimpleDoesntFitMaxUtilization``,
``SimpleDoesntFitPriorities``, ``SimpleDoesntFitMaxUtilizationInChunk`` (up to the
resume: kvsim chunks a resumed prefill too, the harness runs it whole),
``SimpleDoesntFitMaxUtilizationInChunkedCache``,
``SimpleDoesntFitAddingNewRequestsMaxUtilization``,
``SimpleDoesntFitGuaranteedCompletion`` (and ``...InChunk``),
``SimpleDoesntFitAddingNewRequestsGuaranteedCompletion``, ``SimpleFitsStaticBatch``
and ``RequestsSortedByPriorities`` (TensorRT-LLM's priority is a float, higher
first; kvsim's is vLLM's integer, lower first).

Not expressible: the cross-attention tests (``...WithCrossBlocks``: kvsim has no
encoder-decoder KV), the LoRA tests (``SimpleLora...``: no PEFT cache pages), the
disaggregated ones (``DisaggGenInit...``), the draft-token one
(``...DraftTokens``: no speculative decoding), the sink-token variants (no
attention sinks), ``SimpleSurpassMaxNumRequestsWithPriorities`` (TensorRT-LLM
leaves a running request unscheduled, its KV kept, when higher-priority arrivals
fill ``max_num_requests``; vLLM's batch cap never displaces a running request),
``DelayDuplicateRequest``, ``DelayDuplicateRequestChunked`` and
``DelayFiveRequestsComplicated`` (the skip for reuse, which kvsim does not model:
``NOTE(trtllm-skip-for-reuse)``), and the reuse-aware tests (``ReuseAware...``,
``MaxUtilizationReuse...``, ``MaxUtilization...Reuse...``,
``NoReuseWithDifferentPrompts``): they test a later scheduler that credits
prefix-cache hits (``PrefixReuseSummary``), which @02a10fed does not. The Python
scheduler of ``tensorrt_llm/_torch/pyexecutor/scheduler.py`` @b93e14ca binds the
same C++ class, so its tests were not translated separately.

**Hand-derived**: one scenario per rule in which the rule changes who starts
when, who is paused, or how many run.
"""
from __future__ import annotations

import numpy as np
import pytest

import kvsim
from kvsim.errors import KvsimError
from kvsim.traffic.workload import Workload

from engine_helpers import assert_drained

R = kvsim.Request
MODEL, GPU = "llama-2-7b", "l40s-48gb"
TRT = ("guaranteed", "max_utilization", "static_batch")


def run(requests, admission="max_utilization", **opts):
    """The translated tests' engine: V0 (whole prompt at admission), 16-token blocks, a pool
    of 10 blocks, two sequences, no watermark, no prefix cache, invariants checked."""
    for k, v in dict(engine="v0", block_size=16, watermark=0.0, enable_prefix_caching=False,
                     num_gpu_blocks=10, max_num_seqs=2, check=True).items():
        opts.setdefault(k, v)
    return kvsim.simulate(requests, model=MODEL, gpu=GPU, admission=admission, **opts)


def started(r, t):
    """The step that starts at time ``t`` (step 0 at 0; step k + 1 when step k ends at t)."""
    return int(np.searchsorted(r.timeline["t_s"], t, side="right"))


def ended(r, t):
    """The step that ends at time ``t``."""
    return int(np.searchsorted(r.timeline["t_s"], t))


def starts(r):
    return [started(r, t) for t in r.requests["first_scheduled_s"]]


def finishes(r):
    return [ended(r, t) for t in r.requests["finish_s"]]


def pauses(r):
    """``(victim, step)`` of every preemption, in order."""
    return [(int(v), started(r, t)) for v, t in zip(r.events["request"], r.events["t_s"], strict=True)]


# --- translated from capacitySchedulerTest.cpp ---------------------------------------------

@pytest.mark.parametrize("admission", TRT)
def test_simple_should_fit(admission):
    """``SimpleShouldFit``: two 10 + 80 requests on 200 tokens run together for 80
    iterations under every policy. Here 16 + 128 on 20 blocks: 128 steps, both at once."""
    r = run([R(0.0, 16, 128)] * 2, admission, num_gpu_blocks=20)
    assert r.timeline.num_rows == 128
    assert starts(r) == [0, 0] and finishes(r) == [127, 127]
    assert (r.timeline["running"][:-1] == 2).all() and r.events.num_rows == 0


@pytest.mark.parametrize("admission", TRT)
def test_simple_should_fit_in_chunk(admission):
    """``SimpleShouldFitInChunk``: 50-token prompts in 20-token chunks (20, 20, 10), 40-token
    answers: 3 context iterations and 39 more, 42. Here 80 in chunks of 32 (32, 32, 16), 64
    tokens: 3 + 63 = 66 steps, both together."""
    r = run([R(0.0, 80, 64)] * 2, admission, num_gpu_blocks=20, long_prefill_token_threshold=32)
    assert r.timeline.num_rows == 66
    assert list(r.timeline["prefill_tokens"][:4]) == [64, 64, 32, 0]
    assert starts(r) == [0, 0] and finishes(r) == [65, 65]


@pytest.mark.parametrize("priorities, victim", [((0, 0), 1), ((1, 0), 0)])
def test_simple_doesnt_fit_max_utilization(priorities, victim):
    """``SimpleDoesntFitMaxUtilization`` (and ``SimpleDoesntFitPriorities``): two 10 + 80
    requests on 10 blocks run together until iteration 41, when each needs a sixth block;
    the last started (with priorities: the lower one) is paused and resumes, its 41
    generated tokens now part of its prompt, when the other finishes at 80; 119 iterations.
    Here the sixth block comes at step 65 (16 + 65 > 80 tokens), the other finishes at step
    127, and the victim resumes at 128 with 63 tokens left: 191 steps."""
    reqs = [R(0.0, 16, 128, priority=p) for p in priorities]
    r = run(reqs, scheduling_policy="priority" if priorities[0] else "fcfs")
    assert pauses(r) == [(victim, 65)]
    other = 1 - victim
    assert finishes(r)[other] == 127 and finishes(r)[victim] == 190
    assert r.timeline.num_rows == 191 == 128 + (128 - 65)
    assert r.requests["generated_tokens"][victim] == 128
    assert_drained(r, reqs)


def test_simple_doesnt_fit_max_utilization_in_chunk():
    """``SimpleDoesntFitMaxUtilizationInChunk``: 30-token prompts in 20-token chunks and
    60-token answers; two context iterations, then at iteration 22 (29 + 22 > 50) request 1
    is paused with 21 tokens, and resumes at 61, after request 0's last token at 60. Here
    48-token prompts in chunks of 32, 96-token answers: paused at step 34 (47 + 34 > 80)
    with 33 tokens; request 0 finishes at step 96, request 1 prefills again from step 97.
    (The harness then runs the 51-token resume in one iteration; kvsim chunks it too.)"""
    r = run([R(0.0, 48, 96)] * 2, long_prefill_token_threshold=32)
    assert pauses(r) == [(1, 34)]
    assert finishes(r)[0] == 96
    assert r.timeline["prefill_tokens"][97] > 0 and not r.timeline["prefill_tokens"][35:97].any()


def test_simple_doesnt_fit_max_utilization_in_chunked_cache():
    """``SimpleDoesntFitMaxUtilizationInChunkedCache``: two 70-token prompts (7 blocks each of
    10) on 10 blocks: MAX_UTILIZATION asks for the whole prompt, so request 1 cannot start
    beside request 0 even though its first 40-token chunk would fit; it starts at
    iteration 21, after request 0's 20 tokens; 42 iterations. Here 112-token prompts in
    chunks of 64, 32-token answers: request 1 starts at step 33; 66 steps."""
    r = run([R(0.0, 112, 32)] * 2, long_prefill_token_threshold=64)
    assert starts(r) == [0, 33] and finishes(r) == [32, 65]
    assert r.timeline.num_rows == 66 and r.events.num_rows == 0


def test_simple_doesnt_fit_adding_new_requests_max_utilization():
    """``SimpleDoesntFitAddingNewRequestsMaxUtilization``: two 10 + 80 requests, two more
    added at iteration 10 (max 4). Pauses, in order: requests 3 and 2 at iteration 21 (each
    sequence needs a block, none is free), 1 at 41, 2 at 90, 3 at 139; a paused request
    comes back before a newer one; 227 iterations. Here the two arrive during step 15 (so
    that their block boundaries fall with the first two's, as at iteration 10); the same
    victims in the same order, at steps 33, 65, 144 and 223; 365 steps."""
    first = run([R(0.0, 16, 128)] * 2, max_num_seqs=4)
    t = first.timeline["t_s"]
    reqs = [R(0.0, 16, 128)] * 2 + [R((t[14] + t[15]) / 2, 16, 128)] * 2
    r = run(reqs, max_num_seqs=4)
    assert starts(r) == [0, 0, 16, 16]
    assert pauses(r) == [(3, 33), (2, 33), (1, 65), (2, 144), (3, 223)]
    # request 0 finishes at step 127; then 1 (6 blocks) and 2 (3) resume, 3 (3 more) does not
    assert finishes(r)[0] == 127
    assert r.timeline["running"][128] == 2
    assert r.timeline.num_rows == 365
    assert_drained(r, reqs)


def test_simple_doesnt_fit_guaranteed_completion():
    """``SimpleDoesntFitGuaranteedCompletion`` (and ``...InChunk``,
    ``SimpleDoesntFitAddingNewRequestsGuaranteedCompletion``): 10 + 80 reserves 9 of 10
    blocks, so one request at a time, 80 (61 in chunks) iterations each, never a pause."""
    r = run([R(0.0, 16, 128)] * 2, "guaranteed")
    assert starts(r) == [0, 128] and r.timeline.num_rows == 256
    chunked = run([R(0.0, 48, 96)] * 2, "guaranteed", long_prefill_token_threshold=32)
    assert starts(chunked) == [0, 97] and chunked.timeline.num_rows == 194
    first = run([R(0.0, 16, 128)] * 2, "guaranteed", max_num_seqs=4)
    t = first.timeline["t_s"]
    four = run([R(0.0, 16, 128)] * 2 + [R((t[14] + t[15]) / 2, 16, 128)] * 2, "guaranteed",
               max_num_seqs=4)
    assert starts(four) == [0, 128, 256, 384] and four.timeline.num_rows == 512
    assert r.events.num_rows == chunked.events.num_rows == four.events.num_rows == 0


def test_simple_fits_static_batch():
    """``SimpleFitsStaticBatch``: 10 + 80, 10 + 40 and 10 + 80 on 200 tokens, two at a time:
    the third waits until *both* of the first two have finished (iteration 80), though a
    slot and its blocks are free from iteration 40; 160 iterations. Here 16 + 128, 16 + 64,
    16 + 128 on 20 blocks: the third starts at step 128, not 64; 256 steps."""
    reqs = [R(0.0, 16, 128), R(0.0, 16, 64), R(0.0, 16, 128)]
    r = run(reqs, "static_batch", num_gpu_blocks=20)
    assert starts(r) == [0, 0, 128] and finishes(r) == [127, 63, 255]
    assert r.timeline.num_rows == 256
    assert starts(run(reqs, "guaranteed", num_gpu_blocks=20))[2] == 64
    assert_drained(r, reqs)


def test_requests_sorted_by_priorities():
    """``RequestsSortedByPriorities``: priorities 0.5 (the default), 0.6, 1.0 and 0.3, in
    insertion order 0..11, are served 5, 10, 2, 3, 4, 9, 0, 1, 11, 6, 7, 8 (higher first,
    ties in order). kvsim's vLLM priorities are integers, lower first: 1.0 -> 0, 0.6 -> 1,
    0.5 -> 2, 0.3 -> 3; one sequence at a time shows the order."""
    trt = [0.5, 0.5, 0.6, 0.6, 0.6, 1.0, 0.3, 0.3, 0.3, 0.6, 1.0, 0.5]
    rank = {1.0: 0, 0.6: 1, 0.5: 2, 0.3: 3}
    reqs = [R(0.0, 16, 4, priority=rank[p]) for p in trt]
    r = run(reqs, scheduling_policy="priority", max_num_seqs=1, num_gpu_blocks=20)
    order = np.argsort(r.requests["first_scheduled_s"], kind="stable")
    assert order.tolist() == [5, 10, 2, 3, 4, 9, 0, 1, 11, 6, 7, 8]


# --- hand-derived: one scenario per rule ------------------------------------------------------

def shared(requests, prefix_tokens):
    return Workload.from_requests(requests).with_shared_prefix(prefix_tokens)


def v1(workload, admission, **opts):
    """V1 with the prefix cache (the hand-derived prefix scenarios)."""
    for k, v in dict(engine="v1", block_size=16, watermark=0.0, enable_prefix_caching=True,
                     max_num_seqs=8, check=True).items():
        opts.setdefault(k, v)
    return kvsim.simulate(workload, model=MODEL, gpu=GPU, admission=admission, **opts)


def test_max_utilization_gives_no_credit_for_cached_prefix_blocks():
    """A (96 + 64) runs on 12 blocks; B, with the same first 80 tokens (5 blocks A holds),
    arrives at 0.02 s, when A holds 7 blocks and 5 are free. vLLM's check asks B for its one
    new block and admits it at once; MAX_UTILIZATION asks for all 6 blocks of its prompt,
    cached or not, so B waits until A finishes."""
    reqs = [R(0.0, 96, 64), R(0.02, 96, 64)]
    mu = v1(shared(reqs, 80), "max_utilization", num_gpu_blocks=12)
    opt = v1(shared(reqs, 80), "optimistic", num_gpu_blocks=12)
    assert mu.requests["first_scheduled_s"][1] == mu.requests["finish_s"][0]
    assert opt.requests["first_scheduled_s"][1] < 0.05
    assert opt.requests["prefix_hit_tokens"][1] == 80


def test_max_utilization_counts_earlier_admissions_at_their_whole_prompt():
    """Two 96-token prompts (6 blocks each) reach an idle 10-block pool together, with
    16-token first chunks. vLLM's full-prompt gate admits both (6 <= 10, then 6 <= 9: the
    first took only its first chunk's block); MAX_UTILIZATION charges the first its whole
    prompt, so the second (6 > 10 - 6) waits for the first to finish."""
    reqs = [R(0.0, 96, 20), R(0.0, 96, 20)]
    opts = dict(num_gpu_blocks=10, long_prefill_token_threshold=16, enable_prefix_caching=False)
    mu = v1(Workload.from_requests(reqs), "max_utilization", **opts)
    opt = v1(Workload.from_requests(reqs), "optimistic", **opts)
    assert mu.requests["first_scheduled_s"][1] == mu.requests["finish_s"][0]
    assert opt.requests["first_scheduled_s"][1] == 0.0
    assert mu.events.num_rows == 0


def test_max_utilization_pauses_the_last_started_and_requeues_it_first():
    """The pause rule (vLLM's): A and B (16 + 128) outgrow 10 blocks at step 65 and B, the
    last started, is paused to the *front* of the queue. C (16 + 32: one block) arrives at
    1.5 s, when A holds 6 blocks and 4 are free, but waits behind B: both start when A
    finishes, B first (its 16 + 65 tokens prefilled again)."""
    reqs = [R(0.0, 16, 128), R(0.0, 16, 128), R(1.5, 16, 32)]
    r = run(reqs, max_num_seqs=3)
    assert pauses(r) == [(1, 65)] and r.events["t_s"][0] < 1.5
    a_done = r.requests["finish_s"][0]
    assert r.requests["first_scheduled_s"][2] == a_done
    assert r.timeline["prefill_tokens"][started(r, a_done)] == 16 + 65 + 16
    assert_drained(r, reqs)


def test_guaranteed_counts_a_shared_prefix_block_once():
    """A and B (160 + 32, a shared 128-token prefix: 8 blocks) start together on 30 blocks
    and share the prefix; each reserves 12. C (the same) arrives at 0.05 s: the reservations
    total 36, over the pool, but the free blocks hold the shared 8 once, so TensorRT-LLM
    admits C (36 <= 30 + 8). Counting each request's whole reservation (kvsim's earlier
    rule), C waited for A to finish. Nothing is ever preempted."""
    reqs = [R(0.0, 160, 32), R(0.0, 160, 32), R(0.05, 160, 32)]
    r = v1(shared(reqs, 128), "guaranteed", num_gpu_blocks=30)
    assert r.requests["first_scheduled_s"][2] < r.requests["finish_s"][0]
    assert r.requests["prefix_hit_tokens"][1] == 128 and r.events.num_rows == 0
    assert_drained(r, reqs)


def test_guaranteed_gives_the_candidate_no_credit_for_its_own_hit():
    """The same on 26 blocks: C would need 12 + 24 = 36 > 26 + 8. Its own hit on the 8
    shared blocks earns nothing (it holds no blocks yet), so it waits for A and B to finish,
    though its 4 blocks of its own would fit beside theirs."""
    reqs = [R(0.0, 160, 32), R(0.0, 160, 32), R(0.05, 160, 32)]
    r = v1(shared(reqs, 128), "guaranteed", num_gpu_blocks=26)
    assert r.requests["first_scheduled_s"][2] == r.requests["finish_s"][0]
    assert r.events.num_rows == 0


def test_static_batch_admits_nothing_until_the_batch_finishes():
    """A (16 + 40) and B (16 + 120) run on 40 blocks; C (16 + 40) arrives at 0.1 s. Under
    GUARANTEED_NO_EVICT C starts at once; under STATIC_BATCH it waits until B, the batch's
    last request, has finished, though A finished long before."""
    reqs = [R(0.0, 16, 40), R(0.0, 16, 120), R(0.1, 16, 40)]
    sb = run(reqs, "static_batch", num_gpu_blocks=40, max_num_seqs=4)
    gu = run(reqs, "guaranteed", num_gpu_blocks=40, max_num_seqs=4)
    assert sb.requests["first_scheduled_s"][2] == sb.requests["finish_s"][1]
    assert gu.requests["first_scheduled_s"][2] < 0.2
    assert sb.requests["finish_s"][0] < sb.requests["first_scheduled_s"][2]


def test_static_batch_holds_a_part_prefilled_request_while_others_generate():
    """A budget of 64 tokens: A (48 + 8) prefills whole in step 0, B (48 + 8) only its first
    16 tokens. From step 1 A generates, and STATIC_BATCH schedules no context request while
    any request generates: B's other 32 tokens wait until A has finished (step 7), so B's
    first token comes at step 8, not step 1."""
    reqs = [R(0.0, 48, 8), R(0.0, 48, 8)]
    opts = dict(engine="v1", num_gpu_blocks=20, max_num_batched_tokens=64)
    sb = run(reqs, "static_batch", **opts)
    gu = run(reqs, "guaranteed", **opts)
    assert ended(sb, sb.requests["first_token_s"][1]) == 8
    assert ended(gu, gu.requests["first_token_s"][1]) == 1
    assert finishes(sb)[0] == 7
    assert list(sb.timeline["prefill_tokens"][:9]) == [64, 0, 0, 0, 0, 0, 0, 0, 32]
    # the held request still counts as running in every step, jumps or not
    assert (sb.timeline["running"][:7] == 2).all()
    stepped = run(reqs, "static_batch", step_by_step=True, **opts).timeline
    assert all(np.array_equal(sb.timeline[c], stepped[c]) for c in sb.timeline.columns)


# --- options --------------------------------------------------------------------------------

def test_an_unknown_admission_names_every_policy():
    with pytest.raises(KvsimError) as e:
        run([R(0.0, 16, 4)], "MAX_UTILIZATION")
    msg = str(e.value)
    assert "\n" not in msg and "'MAX_UTILIZATION'" in msg
    for name in ("optimistic", "guaranteed", "sglang", "max_utilization", "static_batch"):
        assert name in msg


def test_static_batch_refuses_a_request_it_could_never_reserve():
    """Like guaranteed admission, STATIC_BATCH refuses (or, with unfit_requests="error",
    rejects) a request whose prompt + answer blocks exceed the pool."""
    req = [R(0.0, 16, 100)]           # fits 8 blocks; reserves (16 + 400) / 16 = 26 of 12
    r = run(req, "static_batch", num_gpu_blocks=12, max_tokens=400)
    assert r.requests["rejected"].tolist() == [3]
    with pytest.raises(KvsimError, match="never be admitted"):
        run(req, "static_batch", num_gpu_blocks=12, max_tokens=400, unfit_requests="error")
