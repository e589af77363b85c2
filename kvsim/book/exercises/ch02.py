"""Chapter 2, *Optimistic admission and preemption*: its exercises and predictions.

Every expected value is a kvsim run (or the scheduler stepper) with the
chapter's own settings, so a change to the engine changes the answers with it.
"""
from __future__ import annotations

from functools import lru_cache
from statistics import median

from kvsim.book.charts import work_split_data
from kvsim.model.memory import kv_budget
from kvsim.runs.scenarios import run_scenario
from kvsim.runs.stepper import scheduler_frames, toy_requests

from .base import Exercise, Prediction
from .setups import BELGAVI

#: The chapter's seeds for a figure that depends on the seed (median over them).
SEEDS = (0, 1, 2, 3, 4)
#: Guaranteed admission's answer budget in the chapter (seed 000's 1,500).
MAX_TOKENS = 1_500
#: The stepper's toy pool, and the smaller pool of the exercise.
TOY_BLOCKS, SMALL_TOY_BLOCKS = 20, 16


@lru_cache(maxsize=None)
def _summary(scenario: str, **overrides) -> dict:

    return run_scenario(scenario, **overrides).summary()


def _first_preemption(num_gpu_blocks: int) -> int:

    frames = scheduler_frames(toy_requests(), num_gpu_blocks=num_gpu_blocks)
    return next(f["step"] for f in frames if f["preempted"])


# --- predictions ------------------------------------------------------------------------

def _incident():
    s = _summary("load-test-120")
    return (round(s["preemptions_per_1k"], 1),
            f"at 120 users the running batch grows into the pool: {s['preemptions']:,} "
            f"preemptions for {s['requests_arrived']:,} requests; at 40 and 80 users there "
            f"are none, because their KV never fills the pool")


def _toy_first():
    step = _first_preemption(TOY_BLOCKS)
    return (step, "five 40-token prompts take 3 blocks each (15 of 20); the answers fill the "
                  "last partial blocks and then one new block each every 16 tokens: 5 blocks "
                  f"at token 48, and at token 64 nothing is left, so step {step} preempts")


def _guaranteed_running():
    values = [_summary("belgavi", admission="guaranteed", max_tokens=MAX_TOKENS, seed=s)
              ["mean_running"] for s in SEEDS]
    blocks_each = -(-(BELGAVI["prompt_tokens"] + MAX_TOKENS) // 16)
    return (round(median(values), 1),
            f"guaranteed admission reserves {BELGAVI['prompt_tokens']:,} + {MAX_TOKENS:,} tokens "
            f"({blocks_each} blocks) per request, although answers average "
            f"{BELGAVI['output_tokens']}: about half the optimistic concurrency (median over "
            f"{len(SEEDS)} seeds)")


def _capped_share():

    cap = kv_budget("h100-80gb", "llama-3.1-8b", gpu_memory_utilization=0.90).max_concurrent(6_000)
    capped = _summary("load-test-120", max_num_seqs=cap)["goodput_tok_s"]
    default = _summary("load-test-120")["goodput_tok_s"]
    return (round(100 * capped / default, 1),
            f"a cap of {cap} below the 120 users in flight ends preemption, but the batch it "
            f"leaves decodes fewer tokens per step than the default's, preemptions and all")


def _thrash_share():
    loop = _summary("thrash-loop")["goodput_tok_s"]
    gated = _summary("thrash-loop", scheduler_reserve_full_isl=True)["goodput_tok_s"]
    return (round(100 * loop / gated, 1),
            "without the full-prompt gate and the prefix cache, long prompts are preempted "
            "half prefilled and start over, so the engine stays busy and delivers about half")


def _band_ttft():
    s = _summary("load-test-120", users=104, max_num_seqs=96)
    return (round(s["ttft_p95_s"], 1),
            "a cap below what the users keep in flight moves the excess into the waiting queue: "
            "no preemption, but every queued request waits for a running one to finish")


def _tax_share():

    rows = work_split_data({"120": run_scenario("load-test-120")})
    share = next(r["share_pct"] for r in rows if r["kind"] == "recomputed")
    return (round(share, 1), "recomputed tokens are prefill work the engine counts in its "
                             "throughput and the users never see")


# --- exercises --------------------------------------------------------------------------

def _guaranteed_slots():

    budget = kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                       gpu_memory_utilization=BELGAVI["gpu_memory_utilization"])
    per = -(-(BELGAVI["prompt_tokens"] + MAX_TOKENS) // budget.block_size)
    n = budget.blocks // per
    return n, (f"{budget.blocks:,} blocks // ceil(({BELGAVI['prompt_tokens']} + {MAX_TOKENS:,}) "
               f"/ 16) = {budget.blocks:,} // {per} = {n}")


def _slots_unfloored():

    budget = kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                       gpu_memory_utilization=BELGAVI["gpu_memory_utilization"])
    return budget.blocks / -(-(BELGAVI["prompt_tokens"] + MAX_TOKENS) // budget.block_size)


def _slots_real_answer():

    budget = kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                       gpu_memory_utilization=BELGAVI["gpu_memory_utilization"])
    return budget.max_concurrent(BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"])


def _slots_prompt_only():

    budget = kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                       gpu_memory_utilization=BELGAVI["gpu_memory_utilization"])
    return budget.blocks // -(-BELGAVI["prompt_tokens"] // budget.block_size)


def _small_pool_first():
    step = _first_preemption(SMALL_TOY_BLOCKS)
    return step, (f"15 of 16 blocks go to the prompts; the first answer tokens fill each "
                  f"request's third block (tokens 41-48), and the next token needs five new "
                  f"blocks with one free: step {step}")


def _fp8_preemptions():
    s = _summary("load-test-120", kv_dtype="fp8")
    return (round(s["preemptions_per_1k"], 1),
            f"an FP8 cache halves the bytes per token, so the pool holds twice the tokens and "
            f"120 users' KV fits: {s['preemptions']:,} preemptions")


def _bf16_preemptions():
    return _summary("load-test-120")["preemptions_per_1k"]


def _watermark_blocks():

    config = run_scenario("load-test-120", watermark=0.02, until_s=1.0).config
    n = config["watermark_blocks"]
    return n, (f"int(0.02 x {config['num_gpu_blocks']:,} blocks) = {n:,} blocks held back at "
               f"admission")


def _watermark_tokens():
    return _watermark_blocks()[0] * 16


#: The token budget of the thrash-loop exercise (the chapter's figure shows 512).
EXERCISE_BUDGET = 1_024


def _budget_recomputed():
    s = _summary("thrash-loop", max_num_batched_tokens=EXERCISE_BUDGET)
    return (s["recomputed_tokens"],
            f"a {EXERCISE_BUDGET:,}-token budget lets fewer long prompts be half prefilled at once, "
            f"so fewer "
            f"are preempted and restarted ({s['preemptions']} preemptions), but it does not "
            f"end the loop")


def _default_budget_recomputed():
    return _summary("thrash-loop")["recomputed_tokens"]


#: The users of the "what happens if" exercise (the chapter's sweep stops at 200).
WHATIF_USERS = 300


def _whatif_users_goodput():
    g120 = _summary("load-test-120")["goodput_tok_s"]
    g300 = _summary("load-test-120", users=WHATIF_USERS)["goodput_tok_s"]
    return (round(g300, 1),
            f"{g300:,.0f} tokens/s against {g120:,.0f} at 120 users: past the knee goodput stays "
            f"flat while the extra users only lengthen the queue and the preemption count")


def _whatif_users_linear():
    return _summary("load-test-120")["goodput_tok_s"] * WHATIF_USERS / 120


def _whatif_users_throughput():
    return _summary("load-test-120", users=WHATIF_USERS)["throughput_tok_s"]


EXERCISES: list[Exercise] = [
    Exercise(
        id="ch02-guaranteed-slots",
        question="how many Belgavi requests (850-token prompts) guaranteed admission runs at once "
                 "with max_tokens 1,500",
        kind="int", unit="requests", solve=_guaranteed_slots,
        hint="the pool's blocks divided by the blocks of prompt + max_tokens, rounded up per "
             "request",
        traps=((_slots_unfloored,
                "a request runs whole or not at all: round the quotient down"),
               (_slots_real_answer,
                "that uses the real answer (250 tokens); guaranteed admission reserves max_tokens"),
               (_slots_prompt_only,
                "that reserves only the prompt, which is what optimistic admission does")),
    ),
    Exercise(
        id="ch02-small-pool",
        question="the engine step at which the stepper's five requests meet their first "
                 "preemption on a 16-block pool",
        kind="int", unit="step", solve=_small_pool_first,
        hint="run stepper.scheduler_frames(stepper.toy_requests(), num_gpu_blocks=16) and find "
             "the first frame whose 'preempted' list is not empty",
        traps=((lambda: _first_preemption(TOY_BLOCKS),
                "that is the 20-block pool of the text; pass num_gpu_blocks=16"),
               (lambda: _first_preemption(SMALL_TOY_BLOCKS) - 1,
                "one step early: step 1 prefills the prompt and emits the first token, and a "
                "token's KV is written in the step after it is sampled"),),
    ),
    Exercise(
        id="ch02-watermark-blocks",
        question="blocks a watermark of 0.02 holds back at admission on the H100 load test's pool",
        kind="int", unit="blocks", solve=_watermark_blocks, abs_tol=1,
        hint="int(watermark x num_gpu_blocks); the run's config holds num_gpu_blocks",
        traps=((_watermark_tokens, "that is in tokens; the watermark counts blocks of 16"),),
    ),
    Exercise(
        id="ch02-whatif-fp8",
        question="preemptions per 1,000 requests in load-test-120 with an FP8 KV cache",
        kind="float", unit="per 1,000 requests", solve=_fp8_preemptions, abs_tol=0.5,
        hint="kvsim.run_scenario('load-test-120', kv_dtype='fp8').summary()['preemptions_per_1k']",
        traps=((_bf16_preemptions, "that is the bf16 run; pass kv_dtype='fp8'"),),
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
                "that is in thousands of tokens; the answer is in tokens")),
    ),
    Exercise(
        id="ch02-whatif-users",
        question="goodput in tokens per second with 300 users in the load test",
        kind="float", unit="tokens/s", solve=_whatif_users_goodput, rel_tol=0.01,
        hint="kvsim.run_scenario('load-test-120', users=300).summary()['goodput_tok_s']",
        traps=((_whatif_users_linear,
                "that scales the 120-user goodput with the users; the GPU is already full at 120"),
               (_whatif_users_throughput,
                "that is throughput, every token processed; goodput counts the answer tokens "
                "delivered")),
    ),
]

PREDICTIONS: list[Prediction] = [
    Prediction(id="ch02-predict-incident", unit="per 1,000 requests",
               question="preemptions per 1,000 requests in the load test at 120 users",
               solve=_incident, rel_tol=0.15),
    Prediction(id="ch02-predict-first-preemption", unit="step",
               question="the step of the stepper's first preemption (five 40-token prompts, "
                        "20 blocks of 16)",
               solve=_toy_first),
    Prediction(id="ch02-predict-guaranteed", unit="requests",
               question="mean running requests at Belgavi under guaranteed admission with "
                        "max_tokens 1,500",
               solve=_guaranteed_running),
    Prediction(id="ch02-predict-cap", unit="% of the default's",
               question="goodput at 120 users with max_num_seqs sized from p95 capacity, as a "
                        "share of the goodput with the default 256", solve=_capped_share,
               rel_tol=0.05),
    Prediction(id="ch02-predict-thrash", unit="% of the gated run",
               question="the thrash loop's goodput as a share of the gated run's",
               solve=_thrash_share, rel_tol=0.15),
    Prediction(id="ch02-predict-band", unit="s",
               question="p95 TTFT at 104 users with max_num_seqs capped at 96", solve=_band_ttft,
               rel_tol=0.15),
    Prediction(id="ch02-predict-tax", unit="% of the work",
               question="the share of the engine's tokens that were recomputation at 120 users",
               solve=_tax_share, rel_tol=0.2),
]

__all__ = ["EXERCISES", "PREDICTIONS", "SEEDS", "MAX_TOKENS", "TOY_BLOCKS", "SMALL_TOY_BLOCKS",
           "EXERCISE_BUDGET", "WHATIF_USERS"]
