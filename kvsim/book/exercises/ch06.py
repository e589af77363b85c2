"""Chapter 6, *Planning capacity*: its case plan, exercises and predictions.

Every expected value is read from :func:`kvsim.plan` run on the chapter's case
(:func:`case_plan`): Belgavi's traffic on a card of its own, four configurations,
three seeds, an SLO on p99 TTFT and preemptions per 1,000, at kvsim's step time and
at 10% either side of it (kvsim's cost error, :mod:`kvsim.engine.uncertainty`). A
change to the engine changes the answers with it. With ``KVSIM_RUN_CACHE`` set the
plan's runs are read back from the run cache.
"""
from __future__ import annotations

import dataclasses
from functools import cache

from kvsim.runs.planner import ConfigPlan, Plan, plan
from kvsim.runs.planner_costs import gpu_hours_per_million, replicas_for
from kvsim.traffic.lengths import Geometric

from .base import Exercise, Prediction
from .setups import BELGAVI

#: What every configuration shares: Belgavi's model on a card of its own (vLLM's default share).
BASE: dict[str, object] = {"model": BELGAVI["model"], "gpu_memory_utilization": 0.90}
#: The configurations: two cards, each with a 16-bit and an FP8 KV cache.
GPUS, KV_DTYPES = ("a40-48gb", "h100-80gb"), ("fp16", "fp8")
#: kvsim's step time and 10% either side of it (the chapters' error band, ch05.ERROR_SCALES).
SCALES = (0.9, 1.0, 1.1)
#: The store's SLO: p99 time to first token and preemptions per 1,000 requests.
SLO = {"ttft_p99_s": 2.0, "preemptions_per_1k": 10.0}
#: The traffic: Belgavi's 850-token prompts and answers of 250 tokens on average (geometric).
PROMPT_TOKENS, ANSWER_MEAN = BELGAVI["prompt_tokens"], BELGAVI["output_tokens"]
#: Three days of traffic each search must hold on.
SEEDS = (0, 1, 2)
#: Each run: a warm-up, then the measured window (seconds); the search's tolerance.
WARMUP_S, DURATION_S, REL_TOL = 60.0, 120.0, 0.10
#: Example prices, dollars per GPU-hour (round figures, not quotes: put your own).
PRICES = {"a40-48gb": 0.50, "h100-80gb": 2.50}
#: The load to plan for (requests per second at the peak).
TARGET_RATE = 10.0
#: The what-if: the H100's price falls to this (dollars per GPU-hour).
WHATIF_H100_PRICE = 1.50


def _search(base: dict[str, object], grid: dict[str, list[object]] | None,
            slo: dict[str, float], prices: dict[str, float] | None = None) -> Plan:
    """:func:`kvsim.plan` on the chapter's traffic, seeds, runs and tolerance."""
    return plan(base, grid, slo=slo, prices=prices, prompt=PROMPT_TOKENS,
                output=Geometric(ANSWER_MEAN), seeds=SEEDS, duration_s=DURATION_S,
                warmup_s=WARMUP_S, rel_tol=REL_TOL, progress=False)


@cache
def case_plan() -> Plan:
    """The chapter's plan: every configuration at every step-time scale of :data:`SCALES`."""
    return _search(BASE, {"gpu": list(GPUS), "kv_dtype": list(KV_DTYPES),
                          "step_time_scale": list(SCALES)}, SLO, PRICES)


def label(config: ConfigPlan) -> str:
    """A configuration's short name: ``"A40 FP16"``."""
    return f"{str(config.point['gpu']).split('-')[0].upper()} {str(config.point['kv_dtype']).upper()}"


def config_index(gpu: str, kv_dtype: str, scale: float = 1.0) -> int:
    """The index in :func:`case_plan` of one configuration at one scale."""
    for i, c in enumerate(case_plan().configs):
        if (c.point["gpu"], c.point["kv_dtype"], c.point["step_time_scale"]) == (gpu, kv_dtype,
                                                                                 scale):
            return i
    raise KeyError((gpu, kv_dtype, scale))


def config(gpu: str, kv_dtype: str, scale: float = 1.0) -> ConfigPlan:
    return case_plan().configs[config_index(gpu, kv_dtype, scale)]


def at_kvsim_time() -> list[int]:
    """The indices of the four configurations at kvsim's own step time."""
    return [i for i, c in enumerate(case_plan().configs) if c.point["step_time_scale"] == 1.0]


def dollars_per_million(gpu: str, kv_dtype: str, scale: float = 1.0) -> float:
    value = case_plan().dollars_per_million(config_index(gpu, kv_dtype, scale))
    assert value is not None
    return value


def replicas(rate: float, target: float = TARGET_RATE) -> int:
    """Replicas of a one-GPU configuration sustaining ``rate`` that carry ``target``
    (eq-replicas, as the planner counts them)."""
    return replicas_for(target, rate, 1, None, 0).replicas


def at_scale(scale: float = 1.0) -> Plan:
    """:func:`case_plan` with only the configurations at one step-time scale: a scale is a
    different engine, not another configuration to buy, so the planner's cheapest and Pareto
    set are read per scale."""
    whole = case_plan()
    return dataclasses.replace(whole, configs=tuple(
        c for c in whole.configs if c.point["step_time_scale"] == scale))


def cheapest_at(scale: float = 1.0, target: float = TARGET_RATE) -> ConfigPlan:
    """The configuration (at ``scale``) that carries ``target`` for the fewest dollars an hour
    (the planner's :meth:`kvsim.Plan.cheapest`)."""
    sub = at_scale(scale)
    best = sub.cheapest(target)
    assert best is not None, "some configuration sustains a rate"
    return sub.configs[best.index]


def bill(c: ConfigPlan, target: float = TARGET_RATE) -> float:
    """Dollars an hour of ``c``'s replicas for ``target``."""
    cost = replicas_for(target, c.rate_per_s, c.gpus_per_replica, PRICES[c.gpu], 0)
    assert cost.dollars_per_hour is not None
    return cost.dollars_per_hour


def gpu_hours(rate: float) -> float:
    """GPU-hours per million requests on one GPU at ``rate`` (eq-gpu-hours, the planner's)."""
    return gpu_hours_per_million(rate, 1)


# --- predictions ------------------------------------------------------------------------

def _a40_rate() -> tuple[float, str]:
    c = config("a40-48gb", "fp16")
    low, _, high = c.spread
    return (c.rate_per_s,
            f"the SLO must hold on every day: the seeds' thresholds run from {low:g} to "
            f"{high:g} req/s and the lowest decides; just above it {c.limited_by} fails "
            f"(a queue that grows), long before the cache alone would")


def _a40_band() -> tuple[float, float]:
    low, _, high = config("a40-48gb", "fp16").spread
    return low, high


def _h100_ratio() -> tuple[float, str]:
    h, a = config("h100-80gb", "fp8"), config("a40-48gb", "fp16")
    ratio = h.rate_per_s / a.rate_per_s
    return (round(ratio, 1),
            f"the H100 steps faster (more bandwidth and compute) and FP8 halves each token's "
            f"bytes, so more requests run at once: {h.rate_per_s:g} against {a.rate_per_s:g} "
            f"req/s, for {PRICES['h100-80gb'] / PRICES['a40-48gb']:g} times the price an hour")


def _bill() -> tuple[float, str]:
    best = cheapest_at()
    n = replicas(best.rate_per_s)
    return (bill(best),
            f"{n} replicas of the {label(best)} ({TARGET_RATE:g} / {best.rate_per_s:g} req/s, "
            f"rounded up) at ${PRICES[best.gpu]:.2f} an hour each; a whole replica is paid "
            f"for even when the last one is half used")


def _slow_rate() -> tuple[float, str]:
    slow, own = config("a40-48gb", "fp8", 1.1), config("a40-48gb", "fp8")
    return (slow.rate_per_s,
            f"every step 10% longer serves each request more slowly, so the queue's knee "
            f"comes sooner: {slow.rate_per_s:g} against {own.rate_per_s:g} req/s at kvsim's "
            f"own step time")


PREDICTIONS: list[Prediction] = [
    Prediction(id="ch06-predict-a40", unit="requests/s",
               question="the highest rate one A40 with a 16-bit cache sustains under the SLO",
               solve=_a40_rate, band=_a40_band,
               band_label="the thresholds of the three days"),
    Prediction(id="ch06-predict-h100", unit="times the A40 FP16's rate",
               question="the H100 with an FP8 cache: its sustainable rate as a multiple of the "
                        "A40 FP16's", solve=_h100_ratio, rel_tol=0.15),
    Prediction(id="ch06-predict-bill", unit="dollars an hour",
               question="what the cheapest configuration costs an hour at 10 requests/s",
               solve=_bill, rel_tol=0.15),
    Prediction(id="ch06-predict-slow", unit="requests/s",
               question="the A40 FP8's sustainable rate with every engine step 10% slower",
               solve=_slow_rate),
]


# --- exercises --------------------------------------------------------------------------

def _a40_fp8() -> ConfigPlan:
    return config("a40-48gb", "fp8")


def _gpu_hours() -> tuple[float, str]:
    r = _a40_fp8().rate_per_s
    return gpu_hours(r), (f"1,000,000 / (3,600 × {r:g}) = {gpu_hours(r):,.1f} GPU-hours per "
                          f"million requests")


def _replicas() -> tuple[int, str]:
    r = config("a40-48gb", "fp16").rate_per_s
    return replicas(r), (f"⌈{TARGET_RATE:g} / {r:g}⌉ = {replicas(r)}: a replica is whole")


def _dollars() -> tuple[float, str]:
    best = cheapest_at()
    n = replicas(best.rate_per_s)
    return bill(best), (f"the {label(best)} needs {n} replicas at ${PRICES[best.gpu]:.2f} an "
                        f"hour: ${bill(best):.2f} an hour")


def _a40_million() -> tuple[float, str]:
    r = config("a40-48gb", "fp16").rate_per_s
    value = gpu_hours(r) * PRICES["a40-48gb"]
    return value, (f"1,000,000 / (3,600 × {r:g}) × ${PRICES['a40-48gb']:.2f} = ${value:,.2f} "
                   f"per million requests")


def _whatif_price() -> tuple[float, str]:
    r = config("h100-80gb", "fp8").rate_per_s
    value = gpu_hours(r) * WHATIF_H100_PRICE
    return value, (f"1,000,000 / (3,600 × {r:g}) × ${WHATIF_H100_PRICE:.2f} = ${value:,.2f} per "
                   f"million requests")


EXERCISES: list[Exercise] = [
    Exercise(
        id="ch06-gpu-hours",
        question="GPU-hours per million requests of the A40 with an FP8 cache at its "
                 "sustainable rate",
        kind="float", unit="GPU-hours per million requests", solve=_gpu_hours, rel_tol=0.01,
        derive=True,
        hint="eq-gpu-hours: a million requests at r per second take 1,000,000 / r seconds; "
             "divide by 3,600 for hours",
        traps=((lambda: 1e6 / (60 * _a40_fp8().rate_per_s),
                "that is GPU-minutes: an hour has 3,600 seconds"),
               (lambda: 1e6 / (3600 * _a40_fp8().spread[2]),
                "that is the best day's threshold; the SLO holds on every day only at the "
                "lowest, the configuration's rate"),
               (lambda: 1e6 / _a40_fp8().rate_per_s,
                "that is GPU-seconds: divide by 3,600 for hours")),
    ),
    Exercise(
        id="ch06-replicas",
        question="replicas of the A40 with a 16-bit cache that carry 10 requests/s",
        kind="int", unit="replicas", solve=_replicas, derive=True,
        hint="eq-replicas: the target load over one replica's sustainable rate, rounded up",
        traps=((lambda: int(TARGET_RATE // config("a40-48gb", "fp16").rate_per_s),
                "that rounds down: the last replica would run past its SLO; round up"),
               (lambda: replicas(config("a40-48gb", "fp16").spread[2]),
                "that is the best day's threshold; plan on the rate every day holds"),
               (lambda: round(TARGET_RATE * config("a40-48gb", "fp16").rate_per_s),
                "that multiplies; divide the target by one replica's rate")),
    ),
    Exercise(
        id="ch06-dollars-hour",
        question="dollars an hour of the cheapest configuration at 10 requests/s",
        kind="float", unit="dollars an hour", solve=_dollars, rel_tol=0.005, derive=True,
        hint="for each configuration, eq-replicas times its GPU's price an hour; take the "
             "least",
        traps=((lambda: TARGET_RATE / cheapest_at().rate_per_s * PRICES[cheapest_at().gpu],
                "that pays for a fraction of a replica; replicas come whole (round up)"),
               (lambda: bill(config("h100-80gb", "fp8")),
                "that is the H100 with FP8: one replica carries the load, but it is not the "
                "cheapest an hour"),
               (lambda: dollars_per_million(cheapest_at().gpu,
                                            str(cheapest_at().point["kv_dtype"])),
                "that is dollars per million requests; the question asks dollars an hour")),
    ),
    Exercise(
        id="ch06-a40-million",
        question="dollars per million requests of the A40 with a 16-bit cache at its "
                 "sustainable rate",
        kind="float", unit="dollars per million requests", solve=_a40_million, rel_tol=0.01,
        derive=True,
        hint="eq-gpu-hours at the A40 FP16's rate, times the A40's price an hour",
        traps=((lambda: gpu_hours(config("a40-48gb", "fp16").rate_per_s),
                "that is GPU-hours; multiply by the price an hour"),
               (lambda: gpu_hours(config("a40-48gb", "fp16").rate_per_s) * PRICES["h100-80gb"],
                "that is the H100's price; this configuration runs on an A40"),
               (lambda: gpu_hours(config("a40-48gb", "fp16").spread[2]) * PRICES["a40-48gb"],
                "that is the best day's threshold; the SLO holds on every day only at the "
                "lowest")),
    ),
    Exercise(
        id="ch06-whatif-price",
        question="what happens if the H100's price falls to $1.50 an hour: the H100 FP8's "
                 "dollars per million requests",
        kind="float", unit="dollars per million requests", solve=_whatif_price, rel_tol=0.01,
        derive=True,
        hint="eq-gpu-hours at the H100 FP8's rate, times the new price",
        traps=((lambda: dollars_per_million("h100-80gb", "fp8"),
                "that is at the old price of $2.50 an hour"),
               (lambda: gpu_hours(config("h100-80gb", "fp8").rate_per_s),
                "that is GPU-hours; multiply by the price"),
               (lambda: gpu_hours(config("h100-80gb", "fp8").rate_per_s) * WHATIF_H100_PRICE
                * 3600 / 60,
                "that uses minutes: an hour has 3,600 seconds")),
    ),
]

__all__ = ["EXERCISES", "PREDICTIONS", "BASE", "GPUS", "KV_DTYPES", "SCALES", "SLO", "SEEDS",
           "PRICES", "TARGET_RATE", "WHATIF_H100_PRICE", "WARMUP_S", "DURATION_S", "REL_TOL",
           "case_plan", "label", "config", "config_index", "at_kvsim_time",
           "dollars_per_million", "replicas", "at_scale", "cheapest_at", "bill", "gpu_hours"]
