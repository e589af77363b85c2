"""Chapter 5, *Belgavi's Book Store*: its exercises and predictions.

Every expected value is a kvsim run, a :func:`kvsim.kv_budget` or a mission
search with the chapter's own settings, so a change to the engine changes the
answers with it.
"""
from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable
from functools import cache
from statistics import median

from kvsim.book.charts.theme import number
from kvsim.engine.costs import swap_time_s
from kvsim.engine.result import SimResult
from kvsim.errors import KvsimError
from kvsim.lab.missions import expert_settings
from kvsim.lab.replay import run_lab
from kvsim.model.hardware import GPUSpec, get_gpu
from kvsim.model.memory import KVBudget, kv_budget, kv_bytes_per_token
from kvsim.observe.alerts import rule_alerts
from kvsim.observe.lint import PathOrText
from kvsim.runs.scenarios import run_scenario
from kvsim.units import GB, MB, MiB

from .base import Exercise, Prediction, Summary, count, metric
from .setups import BELGAVI, belgavi_budget

#: Seeds of the case (the spread over ten days of traffic is the lesson).
CASE_SEEDS = tuple(range(10))
#: Seeds of each fix (five days each).
FIX_SEEDS = (0, 1, 2, 3, 4)
#: The answers after the prompt change (seed 000's ~600) and the cap the product needs.
LONG_OUTPUT, CAP = 600, 400
#: The fixes in the source article's order, then each memory fix alone, as belgavi-long overrides.
FIXES: dict[str, dict[str, object]] = {
    "as it is": {},
    "1. max_tokens 400": {"max_tokens": CAP},
    "2. + FP8 KV": {"max_tokens": CAP, "kv_dtype": "fp8"},
    "FP8 KV alone": {"kv_dtype": "fp8"},
    "3. memory 0.80 alone": {"gpu_memory_utilization": 0.80},
    "4. max_num_seqs 12 alone": {"max_num_seqs": 12},
}
#: The "what happens if" traffic: fewer requests per second on the long answers.
WHATIF_RATE = 1.2
#: Mission 2's link and victim (the ticket's figures).
SLOW_PCIE_BYTES_PER_S, VICTIM_TOKENS = 4e9, 1_300
#: The lab prediction's corner of the twin.
LAB_UTIL, LAB_ANSWER = 0.80, 400
#: Chapter 4's rule on preemptions per 1,000 finished requests (the book's threshold).
PER_1K_ALERT = "VLLMPreemptionsPer1k"


def rule_per_1k(rules_path: PathOrText) -> float:
    """The threshold of chapter 4's :data:`PER_1K_ALERT` rule in ``rules_path``, read from
    its expression (``... > 50``): the chapter quotes the rule file, not a typed number."""
    rules = rule_alerts(rules_path)
    if PER_1K_ALERT not in rules:
        raise KvsimError(f"rule file {str(rules_path)!r} has no alert {PER_1K_ALERT!r}: "
                         f"expected chapter 4's rule file")
    m = re.search(r">\s*([0-9.]+)\s*$", str(rules[PER_1K_ALERT]["expr"]).strip())
    if m is None:
        raise KvsimError(f"alert {PER_1K_ALERT!r}: expression does not end in '> N': expected "
                         f"a threshold in preemptions per 1,000")
    return float(m.group(1))


def _summary(scenario: str, seed: int, **overrides: object) -> Summary:
    result: SimResult = run_scenario(scenario, seed=seed, **overrides)
    return result.summary()


@cache
def _summaries(scenario: str, seeds: tuple[int, ...], **overrides: object) -> tuple[Summary, ...]:

    return tuple(_summary(scenario, s, **overrides) for s in seeds)


def _median(scenario: str, seeds: Iterable[int], key: str, **overrides: object) -> float:
    return float(median(metric(s, key) for s in _summaries(scenario, tuple(seeds), **overrides)))


def _fix(name: str) -> dict[str, object]:
    return FIXES[name]


#: kvsim's cost error on these steps (kvsim.engine.uncertainty; tests/test_claims_under_cost_error):
#: every step 10% shorter or longer.
ERROR_SCALES = (0.9, 1.1)


def fix_under_error(name: str, key: str = "preemptions_per_1k",
                    scales: tuple[float, ...] = (ERROR_SCALES[0], 1.0, ERROR_SCALES[1])
                    ) -> dict[float, float]:
    """The median over :data:`FIX_SEEDS` of ``key`` for fix ``name`` with every step at each of
    ``scales`` times kvsim's time (by default 0.9, 1 and 1.1): whether a comparison the
    chapter states survives kvsim's own error."""
    return {k: _median("belgavi-long", FIX_SEEDS, key, **_fix(name),
                       **({"step_time_scale": k} if k != 1.0 else {}))
            for k in scales}


# --- predictions ------------------------------------------------------------------------

def _running() -> tuple[float, str]:
    values = [metric(s, "mean_running") for s in _summaries("belgavi", CASE_SEEDS)]
    return (round(median(values), 1),
            f"1.5 requests/s, each in the running batch for about {median(values) / 1.5:.0f} s, keep "
            f"about {median(values):.0f} running (Little's law); the days range from "
            f"{min(values):.1f} to {max(values):.1f}, below the {belgavi_budget().max_concurrent(1100)} "
            f"that fit")


def _paused() -> tuple[float, str]:
    v = 100 * _median("belgavi-long", CASE_SEEDS, "share_paused_over_1s")
    return (round(v, 1), "with 600-token answers the cache is pinned and the queue never "
                         "empties: every admission evicts someone mid-answer, and the victim "
                         "waits for blocks to free before its recompute")


def _cap_share() -> tuple[float, str]:
    base = _median("belgavi-long", FIX_SEEDS, "preemptions_per_1k")
    cap = _median("belgavi-long", FIX_SEEDS, "preemptions_per_1k", **_fix("1. max_tokens 400"))
    return (round(100 * cap / base, 1),
            f"a cap at {CAP} shortens only the answers above it, so requests hold less KV and "
            f"finish sooner: the server is no longer overloaded, but its cache still fills "
            f"at peaks ({cap:.0f} against {base:.0f} per 1,000)")


def _lab_ttft() -> tuple[float, str]:

    s = run_lab(gpu_memory_utilization=LAB_UTIL, output_mean=LAB_ANSWER).summary()
    return (round(metric(s, "ttft_p95_s"), 1),
            f"400-token answers need {-(-(850 + LAB_ANSWER) // 16)} blocks each: even at "
            f"{LAB_UTIL} the offered load exceeds what the cache turns over, so the queue "
            f"grows for the whole run")


def _storm_memory() -> tuple[float, str]:

    v = number(expert_settings(1)["gpu_memory_utilization"], "gpu_memory_utilization")
    return (v, "the least gpu_memory_utilization on the grid that meets the SLO on all five "
               "days; a lucky day passes with far less, the worst day needs this much")


# --- exercises --------------------------------------------------------------------------

def _long_capacity() -> tuple[int, str]:
    b = belgavi_budget()
    seq = BELGAVI["prompt_tokens"] + LONG_OUTPUT
    n = b.max_concurrent(seq)
    return n, (f"{b.blocks:,} blocks // ceil({seq:,} / 16) = {b.blocks:,} // {b.blocks_for(seq)} "
               f"= {n}")


#: The seed article's round activation reserve ("about 2 GB"), for its envelope.
SEED_RESERVE_BYTES = 2 * GB


def _datasheet_bytes(gpu: GPUSpec) -> int:
    """The memory a card's label says (``"48 GB"``), in bytes."""
    if gpu.datasheet_memory_bytes is None:
        raise KvsimError(f"gpu {gpu.name!r} has no datasheet memory: expected a labelled card")
    return gpu.datasheet_memory_bytes


def _seed_decimal_tokens() -> float:
    """The seed's tokens: its pool on the card's 48 GB read as decimal with a 2 GB reserve,
    rounded to 0.1 GB, divided by "0.5 MB" per token (chapter 1's envelope)."""
    gpu = get_gpu(BELGAVI["gpu"])
    card = dataclasses.replace(gpu, name="48 GB, read as decimal",
                               memory_bytes=_datasheet_bytes(gpu))
    envelope = kv_budget(card, BELGAVI["model"],
                         gpu_memory_utilization=BELGAVI["gpu_memory_utilization"],
                         activation_bytes=SEED_RESERVE_BYTES, engine="v0")
    per_token_mb = envelope.kv_bytes_per_token / MiB * MB
    return round(envelope.kv_bytes / GB, 1) * GB / per_token_mb


def _long_seq() -> int:
    return BELGAVI["prompt_tokens"] + LONG_OUTPUT


def _least_util_for(n_requests: int, seq: int) -> float:

    for k in range(60, 99):
        u = k / 100
        if kv_budget(BELGAVI["gpu"], BELGAVI["model"], gpu_memory_utilization=u) \
                .max_concurrent(seq) >= n_requests:
            return u
    raise AssertionError("no utilisation up to 0.98 fits")


def _memory_back() -> tuple[float, str]:
    old = belgavi_budget().max_concurrent(BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"])
    u = _least_util_for(old, BELGAVI["prompt_tokens"] + LONG_OUTPUT)
    return u, (f"the weights and activations stay fixed, so only the pool grows with the "
               f"fraction: {u:.2f} is the least that holds {old} requests of 1,450 tokens")


def _memory_inputs() -> tuple[KVBudget, int, int]:
    """What the memory exercise's derivation needs: the requests to hold, the blocks they take
    (plus V1's null block), and the budget whose weights, reserve and memory stay fixed."""
    b = belgavi_budget()
    old = b.max_concurrent(BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"])
    blocks = old * b.blocks_for(_long_seq()) + b.null_blocks
    return b, old, blocks


def memory_back_exact() -> float:
    """The utilisation at which the pool holds those blocks exactly (eq-kv-pool solved for u)."""
    b, _, blocks = _memory_inputs()
    return (b.weight_bytes + b.activation_bytes + blocks * b.block_bytes) / b.gpu.memory_bytes


def _ceil_hundredth(x: float) -> float:
    return math.ceil(round(100 * x, 9)) / 100


def _memory_rounded_down() -> float:
    return math.floor(100 * memory_back_exact()) / 100


def _memory_pool_only() -> float:
    # the pool's share of the card, the weights and the reserve left out
    b, _, blocks = _memory_inputs()
    return _ceil_hundredth(blocks * b.block_bytes / b.gpu.memory_bytes)


def _memory_over_label() -> float:
    # the GiB figures divided by the card's "48 GB" label instead of what CUDA reports
    b, _, blocks = _memory_inputs()
    need_gib = (b.weight_bytes + b.activation_bytes + blocks * b.block_bytes) / 2**30
    return _ceil_hundredth(need_gib / (_datasheet_bytes(b.gpu) / GB))


def _memory_proportional() -> float:
    old = 0.60 * (BELGAVI["prompt_tokens"] + LONG_OUTPUT) / (BELGAVI["prompt_tokens"]
                                                             + BELGAVI["output_tokens"])
    return math.ceil(old * 100) / 100


def _spread_ratio() -> tuple[float, str]:
    values = [metric(s, "preemptions_per_1k") for s in _summaries("belgavi", CASE_SEEDS)]
    r = max(values) / median(values)
    return (round(r, 2), f"the worst day has {max(values):.0f} preemptions per 1,000, the "
                         f"median day {median(values):.0f}")


def _spread_values() -> list[float]:
    return [metric(s, "preemptions_per_1k") for s in _summaries("belgavi", CASE_SEEDS)]


def _spread_difference() -> float:
    values = _spread_values()
    return max(values) - median(values)


def _spread_ratio_mean() -> float:
    values = [metric(s, "preemptions_per_1k") for s in _summaries("belgavi", CASE_SEEDS)]
    return max(values) / (sum(values) / len(values))


def _little() -> tuple[float, str]:
    s = _summaries("belgavi", (LITTLE_SEED,))[0]
    w = metric(s, "mean_running") / 1.5
    return (round(w, 1), f"Little's law: {s['mean_running']:.1f} running / 1.5 requests per "
                         f"second = {w:.1f} s in the running batch")


def _little_times() -> float:
    return metric(_summaries("belgavi", (5,))[0], "mean_running") * 1.5


#: The day (seed) of the Little's-law exercise.
LITTLE_SEED = 5


def little_running() -> float:
    """Mean running requests on the Little's-law exercise's day, as its text gives them."""
    return metric(_summaries("belgavi", (LITTLE_SEED,))[0], "mean_running")


def _little_capacity() -> float:
    # eq-fit's ceiling (25 of 1,100 tokens) for the mean number running
    return belgavi_budget().max_concurrent(BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"]) / 1.5


def _swap_ms() -> tuple[float, str]:

    ms = 1e3 * swap_time_s(VICTIM_TOKENS, kv_bytes_per_token(BELGAVI["model"]),
                           SLOW_PCIE_BYTES_PER_S)
    return (round(ms, 1), f"ceil(1,300 / 16) = 82 blocks = 1,312 tokens x 524,288 B / 4e9 B/s = "
                          f"{ms:.0f} ms, during which no stream moves")


def _swap_gib() -> float:
    return _swap_ms()[0] * 4e9 / (4 * 2**30)


def _swap_no_blocks() -> float:
    return 1e3 * VICTIM_TOKENS * 524_288 / SLOW_PCIE_BYTES_PER_S


def _whatif_rate() -> tuple[float, str]:
    s = _summaries("belgavi-long", (5,), rate_per_s=WHATIF_RATE)[0]
    return (round(metric(s, "preemptions_per_1k"), 1),
            f"{s['preemptions_per_1k']:.0f} per 1,000: at {WHATIF_RATE} requests/s the server "
            f"is still overloaded (at most {s['max_waiting']:,} waiting), so the cache stays "
            f"pinned and preempts as often, over fewer requests")


def _whatif_rate_default() -> float:
    return metric(_summaries("belgavi-long", (5,))[0], "preemptions_per_1k")


def _whatif_rate_per_finished() -> float:
    # a server's count: per finished request, not per arrived one
    s = _summaries("belgavi-long", (5,), rate_per_s=WHATIF_RATE)[0]
    return 1000 * count(s, "preemptions") / count(s, "requests_finished")


def _whatif_rate_scaled() -> float:
    # the 1.5 requests/s rate scaled with the traffic
    return _whatif_rate_default() * WHATIF_RATE / 1.5


EXERCISES: list[Exercise] = [
    Exercise(
        id="ch05-long-capacity",
        question="how many requests of 850 + 600 tokens fit Belgavi's pool at once",
        kind="int", unit="requests", solve=_long_capacity, derive=True,
        hint="eq-fit: the pool's blocks divided by the blocks of one 1,450-token request "
             "(rounded up), rounded down",
        traps=((lambda: _seed_decimal_tokens() // _long_seq(),
                "that is the seed's envelope (the card's label read as decimal GB, a round "
                "reserve, 0.5 MB a token); use kvsim's pool as vLLM V1 budgets it on the A40"),
               (lambda: belgavi_budget().max_concurrent(1_100),
                "that is the old 250-token answers; the prompt change made them 600"),
               (lambda: belgavi_budget().blocks / belgavi_budget().blocks_for(_long_seq()),
                "a request runs whole or not at all: round the quotient down"),
               (lambda: -(-belgavi_budget().blocks // belgavi_budget().blocks_for(_long_seq())),
                "that rounds the quotient up; the last request would not fit whole: round down")),
    ),
    Exercise(
        id="ch05-memory-back",
        question="the least gpu_memory_utilization (two decimals) at which Belgavi's pool holds "
                 "as many 1,450-token requests as it held 1,100-token ones at 0.60",
        kind="float", unit="fraction of GPU memory", solve=_memory_back, abs_tol=0.005,
        derive=True,
        hint="eq-kv-pool solved for the utilisation: the blocks those requests need (and V1's "
             "null block) plus the weights and the reserve, over the memory CUDA reports, "
             "rounded up to the next hundredth",
        traps=((_memory_proportional,
                "scaling 0.60 by 1,450 / 1,100 grows the weights too; only the KV pool "
                "grows with the fraction"),
               (_memory_rounded_down,
                "that rounds down, and the pool falls short of the last request: round up to "
                "the next hundredth"),
               (_memory_pool_only,
                "that is only the pool's share of the card; the weights and the reserve come out "
                "of the same fraction"),
               (_memory_over_label,
                "that divides GiB by the card's 48 GB label; vLLM takes its share of the memory "
                "CUDA reports, in the same unit as the rest")),
    ),
    Exercise(
        id="ch05-spread-ratio",
        question="the worst of the chapter's ten days of normal traffic: its preemptions per "
                 "1,000 as a multiple of the median day's",
        kind="float", unit="times the median", solve=_spread_ratio, rel_tol=0.02, derive=True,
        hint="the worst day's preemptions per 1,000 divided by the median day's, both from the "
             "chapter's ten days",
        traps=((_spread_ratio_mean, "that divides by the mean; the chapter reports the median"),
               (lambda: 1 / _spread_ratio()[0],
                "that is the median over the worst; the question asks the worst over the "
                "median"),
               (_spread_difference,
                "that is the difference; the question asks how many times the median"),
               (lambda: 100 * _spread_ratio()[0],
                "that is a percentage; the question asks a multiple")),
    ),
    Exercise(
        id="ch05-little",
        question="the mean time a request spends in Belgavi's running batch (seed 5), from its mean "
                 "running requests and the arrival rate",
        kind="float", unit="s", solve=_little, rel_tol=0.05, derive=True,
        hint="Little's law: requests running = arrival rate x time each one runs",
        traps=((_little_times, "that multiplies; divide the running requests by the rate"),
               (lambda: _little()[0] * 1e3, "that is in milliseconds; the answer is in seconds"),
               (_little_capacity,
                "that uses the requests that fit (eq-fit's ceiling); Little's law takes the mean "
                "number running, below it")),
    ),
    Exercise(
        id="ch05-swap-freeze",
        question="milliseconds one swap-out of a 1,300-token victim freezes every stream on "
                 "mission 2's 4 GB/s link",
        kind="float", unit="ms", solve=_swap_ms, rel_tol=0.005, derive=True,
        hint="round the victim up to blocks of 16, multiply by 0.5 MiB per token and divide by "
             "4e9 bytes per second",
        traps=((_swap_gib, "4 GB/s is 4e9 bytes per second, not 4 GiB/s"),
               (lambda: 2 * _swap_ms()[0],
                "that is out and back in; the question asks one swap-out"),
               (_swap_no_blocks, "a swap moves whole blocks: round the 1,300 tokens up to "
                                 "whole blocks of 16")),
    ),
    Exercise(
        id="ch05-whatif-rate",
        question="preemptions per 1,000 requests in belgavi-long if traffic falls to 1.2 "
                 "requests per second",
        kind="float", unit="per 1,000 requests", solve=_whatif_rate, abs_tol=0.5,
        hint="kvsim.run_scenario('belgavi-long', rate_per_s=1.2).summary()"
             "['preemptions_per_1k']",
        traps=((_whatif_rate_default, "that is the 1.5 requests/s run; pass rate_per_s=1.2"),
               (_whatif_rate_per_finished,
                "that is per finished request, as a server counts; kvsim's preemptions_per_1k "
                "counts per request that arrived"),
               (_whatif_rate_scaled,
                "that scales the 1.5 requests/s figure with the traffic; the server is still "
                "overloaded, so the cache stays pinned"),
               (lambda: _whatif_rate()[0] / 1000, "that is per request; multiply by 1,000")),
    ),
]

PREDICTIONS: list[Prediction] = [
    Prediction(id="ch05-predict-running", unit="requests",
               question="median running requests in Belgavi's steady state over ten days",
               solve=_running),
    Prediction(id="ch05-predict-paused", unit="% of users",
               question="the share of users paused over 1 s with 600-token answers",
               solve=_paused, rel_tol=0.15),
    Prediction(id="ch05-predict-cap", unit="% of the uncapped",
               question="preemptions per 1,000 with max_tokens 400, as a share of the uncapped",
               solve=_cap_share, rel_tol=0.15),
    Prediction(id="ch05-predict-lab", unit="s",
               question="the lab's p95 TTFT at 0.80 of memory with 400-token answers",
               solve=_lab_ttft, rel_tol=0.2),
    Prediction(id="ch05-predict-storm", unit="of GPU memory",
               question="the least gpu_memory_utilization that ends mission 1's storm on all "
                        "five days", solve=_storm_memory, rel_tol=0.03),
]

__all__ = ["EXERCISES", "PREDICTIONS", "CASE_SEEDS", "FIX_SEEDS", "ERROR_SCALES", "fix_under_error", "LONG_OUTPUT", "CAP", "FIXES",
           "WHATIF_RATE", "SLOW_PCIE_BYTES_PER_S", "VICTIM_TOKENS", "LAB_UTIL", "LAB_ANSWER",
           "LITTLE_SEED", "little_running", "memory_back_exact", "SEED_RESERVE_BYTES"]
