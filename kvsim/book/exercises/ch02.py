"""Chapter 2, *Optimistic admission and preemption*: its exercises and predictions.

Every expected value is a kvsim run (or the scheduler stepper) with the
chapter's own settings, so a change to the engine changes the answers with it.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from statistics import median
from typing import TypedDict

from kvsim.book.charts import work_split_data
from kvsim.engine.result import SimResult
from kvsim.model.memory import kv_budget
from kvsim.runs.scenarios import run_scenario
from kvsim.runs.stepper import scheduler_frames, toy_requests

from .base import Exercise, Prediction, Summary, count, metric
from .setups import BELGAVI

#: The chapter's seeds for a figure that depends on the seed (median over them).
SEEDS = (0, 1, 2, 3, 4)
#: The seeds of the chapter's load-test sweeps (the incident, the collapse, the band).
SWEEP_SEEDS = SEEDS[:3]
#: The chapter's latency targets: at most 5 preemptions per 1,000 requests, p95 TTFT under 2 s.
TARGET_PREEMPTIONS, TARGET_TTFT_S = 5.0, 2.0
#: Guaranteed admission's answer budget in the chapter (seed 000's 1,500).
MAX_TOKENS = 1_500
#: The stepper's toy pool, and the smaller pool of the exercise.
TOY_BLOCKS, SMALL_TOY_BLOCKS = 20, 16


@cache
def _summary(scenario: str, **overrides: object) -> Summary:

    result: SimResult = run_scenario(scenario, **overrides)
    return result.summary()


def _seed_median(scenario: str, name: str, seeds: Sequence[int] = SWEEP_SEEDS,
                 **overrides: object) -> float:
    """The median of metric ``name`` over ``seeds``, as the chapter's sweeps show it."""
    return float(median(metric(_summary(scenario, seed=s, **overrides), name) for s in seeds))


def _first_preemption(num_gpu_blocks: int) -> int:

    frames = scheduler_frames(toy_requests(), num_gpu_blocks=num_gpu_blocks)
    return next(f["step"] for f in frames if f["preempted"])


# --- predictions ------------------------------------------------------------------------

def _incident() -> tuple[float, str]:
    rate = _seed_median("load-test-120", "preemptions_per_1k")
    return (round(rate, 1),
            f"median over {len(SWEEP_SEEDS)} seeds: at 120 users the running batch grows into "
            f"the pool and a request can be preempted several times, so this is a rate, not a "
            f"share: {preempted_share_per_1k():.0f} requests in every 1,000 are preempted at "
            f"least once; at 40 and 80 users their KV never fills the pool")


def preempted_share_per_1k() -> float:
    """Requests preempted at least once, per 1,000, at 120 users (median over the sweep's seeds)."""
    return float(median(1_000 * float((run_scenario("load-test-120", seed=s)
                                       .requests["preemptions"] > 0).mean())
                        for s in SWEEP_SEEDS))


def _toy_first() -> tuple[int, str]:
    step = _first_preemption(TOY_BLOCKS)
    return (step, "five 40-token prompts take 3 blocks each (15 of 20); the answers fill the "
                  "last partial blocks and then one new block each every 16 tokens: 5 blocks "
                  f"at token 48, and at token 64 nothing is left, so step {step} preempts")


def policy_running(admission: str) -> float:
    """Mean running requests at Belgavi under ``admission`` (max_tokens 1,500; median over SEEDS)."""
    return _seed_median("belgavi", "mean_running", SEEDS, admission=admission,
                        max_tokens=MAX_TOKENS)


def _guaranteed_running() -> tuple[float, str]:
    gua, opt = policy_running("guaranteed"), policy_running("optimistic")
    blocks_each = -(-(BELGAVI["prompt_tokens"] + MAX_TOKENS) // 16)
    return (round(gua, 1),
            f"guaranteed admission reserves {BELGAVI['prompt_tokens']:,} + {MAX_TOKENS:,} tokens "
            f"({blocks_each} blocks) per request, although answers average "
            f"{BELGAVI['output_tokens']}, and runs at the pool's ceiling: "
            f"{100 * (1 - gua / opt):.0f}% fewer than optimistic's {opt:.1f}, not half, because "
            f"optimistic admission does not fill the pool either (median over {len(SEEDS)} seeds)")


def p95_capacity() -> int:
    """The source's cap: requests of the p95 length (6,000 tokens) that fit the load test's pool."""
    return kv_budget("h100-80gb", "llama-3.1-8b", gpu_memory_utilization=0.90).max_concurrent(6_000)


def _capped_share() -> tuple[float, str]:
    cap = p95_capacity()
    capped = _seed_median("load-test-120", "goodput_tok_s", max_num_seqs=cap)
    team = _seed_median("load-test-120", "goodput_tok_s")
    return (round(100 * capped / team, 1),
            f"median over {len(SWEEP_SEEDS)} seeds: a cap of {cap} below the 120 users in flight "
            f"ends preemption, but the batch it leaves decodes fewer tokens per step than the "
            f"team's cap of 256 does, preemptions and all")


def _thrash_share() -> tuple[float, str]:
    loop = metric(_summary("thrash-loop"), "goodput_tok_s")
    gated = metric(_summary("thrash-loop", scheduler_reserve_full_isl=True), "goodput_tok_s")
    return (round(100 * loop / gated, 1),
            "without the full-prompt gate and the prefix cache, long prompts are preempted "
            "half prefilled and start over, so the engine stays busy and delivers about half")


#: The band prediction's load and cap.
BAND_USERS, BAND_CAP = 104, 96


def _band_ttft() -> tuple[float, str]:
    ttft = _seed_median("load-test-120", "ttft_p95_s", users=BAND_USERS, max_num_seqs=BAND_CAP)
    return (round(ttft, 1),
            f"median over {len(SWEEP_SEEDS)} seeds: a cap below what the users keep in flight "
            f"moves the excess into the waiting queue: no preemption, but every queued request "
            f"waits for a running one to finish, far past the {TARGET_TTFT_S:.0f} s target")


def _tax_share() -> tuple[float, str]:

    rows = work_split_data({"120": run_scenario("load-test-120")})
    share = next(r["share_pct"] for r in rows if r["kind"] == "recomputed")
    return (round(share, 1), "recomputed tokens are prefill work the engine counts in its "
                             "throughput and the users never see")


# --- exercises --------------------------------------------------------------------------

def _guaranteed_slots() -> tuple[int, str]:

    budget = kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                       gpu_memory_utilization=BELGAVI["gpu_memory_utilization"])
    per = -(-(BELGAVI["prompt_tokens"] + MAX_TOKENS) // budget.block_size)
    n = budget.blocks // per
    return n, (f"{budget.blocks:,} blocks // ceil(({BELGAVI['prompt_tokens']} + {MAX_TOKENS:,}) "
               f"/ 16) = {budget.blocks:,} // {per} = {n}")


def _slots_unfloored() -> float:

    budget = kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                       gpu_memory_utilization=BELGAVI["gpu_memory_utilization"])
    return budget.blocks / -(-(BELGAVI["prompt_tokens"] + MAX_TOKENS) // budget.block_size)


def _slots_real_answer() -> int:

    budget = kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                       gpu_memory_utilization=BELGAVI["gpu_memory_utilization"])
    return budget.max_concurrent(BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"])


def _slots_prompt_only() -> int:

    budget = kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                       gpu_memory_utilization=BELGAVI["gpu_memory_utilization"])
    return budget.blocks // -(-BELGAVI["prompt_tokens"] // budget.block_size)


def _slots_rounded_up() -> int:
    budget = kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                       gpu_memory_utilization=BELGAVI["gpu_memory_utilization"])
    return -(-budget.blocks // -(-(BELGAVI["prompt_tokens"] + MAX_TOKENS) // budget.block_size))


def _toy_prompt_tokens() -> int:
    return toy_requests()[0].prompt_tokens


def fourth_block_token(block_size: int = 16) -> int:
    """The token of a stepper request that needs one block more than its prompt: the first
    token past the prompt's last block (the stepper's 40-token prompts fill 3 blocks)."""
    return -(-_toy_prompt_tokens() // block_size) * block_size + 1


def _small_pool_first() -> tuple[int, str]:
    step = _first_preemption(SMALL_TOY_BLOCKS)
    token, prompt = fourth_block_token(), _toy_prompt_tokens()
    return step, (f"15 of 16 blocks go to the prompts; token {token} needs each request's "
                  f"next block, and its KV is written at step {token} - {prompt} + 1 = {step} "
                  f"(the prefill is step 1): five requests need a block, one is free")


#: The answers of the FP8 what-if: which of the chapter's targets the team misses.
TARGET_CHOICES = ("preemption", "queueing", "neither")


def target_verdict(**overrides: object) -> str:
    """Which target the load test at 120 users misses (medians over the sweep's seeds):
    ``"preemption"`` (more than 5 per 1,000), else ``"queueing"`` (p95 TTFT over 2 s), else
    ``"neither"``."""
    if _seed_median("load-test-120", "preemptions_per_1k", SWEEP_SEEDS, **overrides) > TARGET_PREEMPTIONS:
        return TARGET_CHOICES[0]
    if _seed_median("load-test-120", "ttft_p95_s", SWEEP_SEEDS, **overrides) > TARGET_TTFT_S:
        return TARGET_CHOICES[1]
    return TARGET_CHOICES[2]


#: The load of the FP8 what-if: twice the incident's 120 users. At 120 users the text shows
#: FP8 meeting both targets (the chapter's answer); at 240 users the doubled pool (149 p95
#: requests, chapter 1) is below the users in flight again, and max_num_seqs 256 caps nothing.
FP8_WHATIF_USERS = 240


class Fp8Fix(TypedDict):
    """The FP8 cache's load test (seed medians) and its capacity at the p95 length."""
    pre: float
    ttft: float
    cap: int


def fp8_fix(users: int = 120) -> Fp8Fix:
    """The chapter's answer at 120 users: an FP8 cache. The load test's seed medians with it at
    ``users``, and chapter 1's FP8 capacity at the p95 length (the text glues these; the
    what-if's solution quotes them)."""
    return dict(
        pre=_seed_median("load-test-120", "preemptions_per_1k", kv_dtype="fp8", users=users),
        ttft=_seed_median("load-test-120", "ttft_p95_s", kv_dtype="fp8", users=users),
        cap=kv_budget("h100-80gb", "llama-3.1-8b", gpu_memory_utilization=0.90,
                      kv_dtype="fp8").max_concurrent(6_000))


def _fp8_verdict() -> tuple[str, str]:
    users = FP8_WHATIF_USERS
    v = target_verdict(kv_dtype="fp8", users=users)
    fix = fp8_fix(users)
    pre, ttft = fix["pre"], fix["ttft"]
    return v, (f"{v}: the FP8 pool holds {fix['cap']} requests of the p95 length, fewer "
               f"than the {users} users keep in flight, and max_num_seqs 256 caps nothing, so "
               f"the pool runs dry before anything queues: {pre:.0f} preemptions per 1,000 and "
               f"a p95 TTFT of {ttft:.1f} s (median over {len(SWEEP_SEEDS)} seeds)")


#: The watermark of the "watermark in blocks" exercise.
EXERCISE_WATERMARK = 0.02


def _watermark_blocks() -> tuple[int, str]:

    config = run_scenario("load-test-120", watermark=EXERCISE_WATERMARK, until_s=1.0).config
    n = config["watermark_blocks"]
    return n, (f"int({EXERCISE_WATERMARK} x {config['num_gpu_blocks']:,} blocks) = {n:,} blocks "
               f"held back at admission")


def _watermark_tokens() -> int:
    return _watermark_blocks()[0] * 16


def chapter1_h100_blocks() -> int:
    """Chapter 1's H100 pool: vLLM V1's default max_num_seqs (1,024), not the load test's 256."""
    return kv_budget("h100-80gb", "llama-3.1-8b", gpu_memory_utilization=0.90).blocks


def load_test_blocks() -> int:
    """The load test's pool: vLLM profiles its activations for max_num_seqs 256, so it reserves
    less than chapter 1's budget and the pool has more blocks."""
    result: SimResult = run_scenario("load-test-120", watermark=EXERCISE_WATERMARK, until_s=1.0)
    return result.total_blocks


#: vLLM V0's fixed watermark (1% of the blocks), which chapter 2's version box names.
V0_WATERMARK = 0.01


#: The token budget of the thrash-loop exercise (the chapter's figure shows 512).
EXERCISE_BUDGET = 1_024


def _budget_recomputed() -> tuple[int, str]:
    s = _summary("thrash-loop", max_num_batched_tokens=EXERCISE_BUDGET)
    return (count(s, "recomputed_tokens"),
            f"a {EXERCISE_BUDGET:,}-token budget lets fewer long prompts be half prefilled at once, "
            f"so fewer "
            f"are preempted and restarted ({s['preemptions']} preemptions), but it does not "
            f"end the loop")


def _default_budget_recomputed() -> int:
    return count(_summary("thrash-loop"), "recomputed_tokens")


#: The budget the chapter's thrash-loop figure shows.
CHAPTER_BUDGET = 512


#: The users of the "what happens if" exercise (the chapter's sweep stops at 200).
WHATIF_USERS = 300
#: The answers of that exercise, and the band (a share of the 120-user goodput) called flat.
GOODPUT_CHOICES, FLAT_WITHIN = ("rises", "flat", "falls"), 0.05


def _whatif_users_goodput() -> tuple[str, str]:
    g120 = _seed_median("load-test-120", "goodput_tok_s")
    g300 = _seed_median("load-test-120", "goodput_tok_s", users=WHATIF_USERS)
    change = g300 / g120 - 1
    v = (GOODPUT_CHOICES[1] if abs(change) <= FLAT_WITHIN
         else GOODPUT_CHOICES[0] if change > 0 else GOODPUT_CHOICES[2])
    return v, (f"{v}: {g300:,.0f} tokens/s against {g120:,.0f} at 120 users ({100 * change:+.1f}%, "
               f"median over {len(SWEEP_SEEDS)} seeds): past the knee the GPU is full, and a "
               f"recompute is a cheap prefill, so the extra users only lengthen the queue and "
               f"the preemption count")


EXERCISES: list[Exercise] = [
    Exercise(
        id="ch02-guaranteed-slots",
        question="how many Belgavi requests (850-token prompts) guaranteed admission runs at once "
                 "with max_tokens 1,500",
        kind="int", unit="requests", solve=_guaranteed_slots, derive=True,
        hint="the pool's blocks divided by the blocks of prompt + max_tokens, rounded up per "
             "request",
        traps=((_slots_unfloored,
                "a request runs whole or not at all: the answer is whole requests, the "
                "quotient rounded down"),
               (_slots_rounded_up,
                "that rounds the quotient up: the last request's reservation does not fit "
                "whole, so round down"),
               (_slots_real_answer,
                "that uses the real answer (250 tokens); guaranteed admission reserves max_tokens"),
               (_slots_prompt_only,
                "that reserves only the prompt, which is what optimistic admission does")),
    ),
    Exercise(
        id="ch02-small-pool",
        question="the engine step at which the stepper's five requests meet their first "
                 "preemption on a 16-block pool",
        kind="int", unit="step", solve=_small_pool_first, derive=True,
        hint="the prompts leave one block free; find the token that needs each request's next "
             "block, and the step that writes its KV (the prefill is step 1)",
        traps=((lambda: _first_preemption(TOY_BLOCKS),
                "that is the 20-block pool of the text; with 16 blocks only one is free "
                "after the prompts"),
               (lambda: _first_preemption(SMALL_TOY_BLOCKS) - 1,
                "one step early: step 1 prefills the prompt and emits the first token, and a "
                "token's KV is written in the step after it is sampled"),
               (lambda: _first_preemption(SMALL_TOY_BLOCKS) + 1,
                "one step late: the free block goes to the first request in that step, and the "
                "next request, finding none, preempts in the same step"),
               (fourth_block_token,
                "that is the token that needs the new block; the question asks the engine step "
                "that writes its KV")),
    ),
    Exercise(
        id="ch02-watermark-blocks",
        question="blocks a watermark of 0.02 holds back at admission on the H100 load test's pool",
        kind="int", unit="blocks", solve=_watermark_blocks, abs_tol=1, derive=True,
        hint="int(watermark x num_gpu_blocks), with the load test's own pool",
        traps=((_watermark_tokens, "that is in tokens; the watermark counts blocks of 16"),
               (lambda: int(EXERCISE_WATERMARK * chapter1_h100_blocks()),
                "that is chapter 1's H100 pool, sized for vLLM's default max_num_seqs; the load "
                "test caps it at 256, so profiling reserves less and its pool has more blocks"),
               (lambda: int(V0_WATERMARK * load_test_blocks()),
                "that is V0's fixed 1%; the question sets watermark=0.02"),
               (lambda: load_test_blocks() - _watermark_blocks()[0],
                "that is what admission may fill; the watermark is the share it keeps free")),
    ),
    Exercise(
        id="ch02-whatif-fp8",
        question=f"with the FP8 cache that fixes 120 users, the traffic doubles to "
                 f"{FP8_WHATIF_USERS} users: which of the chapter's targets (5 preemptions per "
                 f"1,000, p95 TTFT 2 s) does it miss: 'preemption', 'queueing' or 'neither'?",
        kind="choice", unit="a choice", options=TARGET_CHOICES, solve=_fp8_verdict,
        hint="chapter 1 sized the FP8 pool in requests of the p95 length: compare it with the "
             f"{FP8_WHATIF_USERS} users, then with the cap of 256",
        traps=((lambda: TARGET_CHOICES[2],
                "the FP8 cache doubled the pool, but the users doubled too: chapter 1's FP8 "
                "capacity at the p95 length is below the users in flight"),
               (lambda: TARGET_CHOICES[1],
                "a request queues in the engine only when the pool or max_num_seqs has no room "
                "for it; the cap is 256, so the pool runs dry first")),
    ),
    Exercise(
        id="ch02-thrash-budget",
        question="prompt tokens recomputed in the thrash loop with max_num_batched_tokens=1024",
        kind="int", unit="tokens", solve=_budget_recomputed, rel_tol=0.001,
        hint="kvsim.run_scenario('thrash-loop', max_num_batched_tokens=1024) and read "
             "summary()['recomputed_tokens']",
        traps=((_default_budget_recomputed,
                "that is the default budget (2,048); pass max_num_batched_tokens=1024"),
               (lambda: _budget_recomputed()[0] / 1000,
                "that is in thousands of tokens; the answer is in tokens"),
               (lambda: _summary("thrash-loop",
                                 max_num_batched_tokens=CHAPTER_BUDGET)["recomputed_tokens"],
                "that is the chapter's 512-token budget; the question sets 1,024"),
               (lambda: _summary("thrash-loop",
                                 max_num_batched_tokens=EXERCISE_BUDGET)["preemptions"],
                "that counts preemptions; the question asks the prompt tokens they recompute")),
    ),
    Exercise(
        id="ch02-whatif-users",
        question="at 300 users, the load test's goodput against 120 users: it 'rises', stays 'flat' "
                 "(within 5%) or 'falls'?",
        kind="choice", unit="a choice", options=GOODPUT_CHOICES, solve=_whatif_users_goodput,
        hint="what does the GPU do at 120 users already, and what does a preemption cost it? "
             "Check with kvsim.run_scenario('load-test-120', users=300)",
        traps=((lambda: GOODPUT_CHOICES[0],
                "the GPU is already full at 120 users: the extra users wait in the queue or "
                "are preempted, they add no decode slots"),
               (lambda: GOODPUT_CHOICES[2],
                "that is the source's collapse; a recompute is a prefill, thousands of tokens "
                "per step, so the wasted work stays a small share")),
    ),
]

PREDICTIONS: list[Prediction] = [
    # a rate, not a share: the requests preempted at least once (~185 per 1,000) are not close
    Prediction(id="ch02-predict-incident", unit="per 1,000 requests",
               question="preemptions per 1,000 requests in the load test at 120 users",
               solve=_incident, rel_tol=0.15),
    # exact: the off-by-one the prompt's hint teaches about (a token's KV is written the step
    # after it is sampled) must not pass as close
    Prediction(id="ch02-predict-first-preemption", unit="step",
               question="the step of the stepper's first preemption (five 40-token prompts, "
                        "20 blocks of 16)",
               solve=_toy_first, rel_tol=0.0),
    # the source's "under half the concurrency" (half of chapter 1's 25, or of optimistic's
    # batch) is not close: the ceiling of eq-guaranteed is
    Prediction(id="ch02-predict-guaranteed", unit="requests",
               question="mean running requests at Belgavi under guaranteed admission with "
                        "max_tokens 1,500",
               solve=_guaranteed_running, rel_tol=0.05),
    # the source's claim that the cap raises goodput (100% or more) is not close
    Prediction(id="ch02-predict-cap", unit="% of the goodput at 256",
               question="goodput at 120 users with max_num_seqs sized from p95 capacity, as a "
                        "share of the goodput with the team's cap of 256", solve=_capped_share,
               rel_tol=0.05),
    # the reported hundredfold fall (1.5%) and "busy means fine" (100%) are not close
    Prediction(id="ch02-predict-thrash", unit="% of the gated run",
               question="the thrash loop's goodput as a share of the gated run's",
               solve=_thrash_share, rel_tol=0.15),
    # "no preemption, no harm" (the uncapped 0.1 s, or the 2 s target) is not close
    Prediction(id="ch02-predict-band", unit="s",
               question="p95 TTFT at 104 users with max_num_seqs capped at 96", solve=_band_ttft,
               rel_tol=0.15),
    # throughput minus goodput (mostly prompts, about 40%) is not the tax
    Prediction(id="ch02-predict-tax", unit="% of the work",
               question="the share of the engine's tokens that were recomputation at 120 users",
               solve=_tax_share, rel_tol=0.2),
]

__all__ = ["EXERCISES", "PREDICTIONS", "SEEDS", "SWEEP_SEEDS", "MAX_TOKENS", "TOY_BLOCKS",
           "SMALL_TOY_BLOCKS", "EXERCISE_BUDGET", "CHAPTER_BUDGET", "V0_WATERMARK",
           "EXERCISE_WATERMARK", "WHATIF_USERS", "FP8_WHATIF_USERS", "fp8_fix",
           "TARGET_PREEMPTIONS",
           "TARGET_TTFT_S", "TARGET_CHOICES", "GOODPUT_CHOICES", "FLAT_WITHIN", "BAND_USERS",
           "BAND_CAP", "target_verdict", "policy_running", "preempted_share_per_1k",
           "p95_capacity", "fourth_block_token", "chapter1_h100_blocks", "load_test_blocks"]
