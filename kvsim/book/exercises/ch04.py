"""Chapter 4, *Detecting preemption*: its exercises and predictions.

Every expected value comes from the chapter's incident (the ``incident-day``
scenario) as Prometheus would have scraped it (:func:`kvsim.observe.series.scrape`,
every 15 s), through the same panel functions the chapter plots
(:mod:`kvsim.observe.panels`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache

import numpy as np

from kvsim.book.charts.theme import number
from kvsim.engine.loop import simulate
from kvsim.engine.result import SimResult, Table
from kvsim.errors import KvsimError
from kvsim.observe.alerts import SEED_RULES_FILE, lint_rules
from kvsim.observe.catalogue import FINISHED_REASONS, ITL_BUCKETS, le_label
from kvsim.observe.introspection import KvUsageBreakdown, kv_usage_breakdown
from kvsim.observe.panels import book_rules, dashboard_rows, firing, histogram_quantile, increase, onset
from kvsim.observe.series import scrape
from kvsim.runs.scenarios import run_scenario, scenario_parameters
from kvsim.traffic.lengths import Geometric
from kvsim.traffic.workload import Workload

from .base import Exercise, Prediction, count, metric

#: The chapter's scrape interval and windows (seconds).
SCRAPE_S, WINDOW_S, RATE_WINDOW_S = 15.0, 300.0, 600.0
#: The instant at which the chapter reads the KV gauge (minute 22, in the storm), and the
#: one its exercise asks about (minute 20: the chapter does not show that one).
GAUGE_AT_S, EXERCISE_GAUGE_AT_S = 1_320.0, 1_200.0
#: Minutes of the incident that are healthy, and when the storm ends.
HEALTHY_S, STORM_END_S = 900.0, 1_500.0
#: A minute after the storm: finished requests' blocks are free again but still cached.
AFTER_STORM_S = STORM_END_S + 60.0


@cache
def _run(**overrides: object) -> SimResult:

    result: SimResult = run_scenario("incident-day", **overrides)
    return result


def incident_parameters() -> dict[str, float]:
    """The incident's shape for the prose: minutes, rates and the scrape interval."""

    p = scenario_parameters("incident-day")
    return dict(inc_quiet_min=p["healthy_s"] / 60, inc_base=p["base_rate_per_s"],
                inc_storm_min=p["storm_s"] / 60, inc_storm=p["storm_rate_per_s"],
                inc_recovery_min=p["recovery_s"] / 60, scrape_s=SCRAPE_S)


@cache
def scraped(**overrides: object) -> Table:
    """The incident as Prometheus scraped it (cached: the chapter and its checks share it)."""

    return scrape(_run(**overrides), interval_s=SCRAPE_S)


@cache
def dashboard(**overrides: object) -> tuple[dict[str, object], ...]:

    return tuple(dashboard_rows(_run(**overrides), scraped(**overrides), run="incident",
                                window_s=WINDOW_S, rate_window_s=RATE_WINDOW_S))


def _rows(start_s: float, end_s: float) -> list[dict[str, object]]:
    return [r for r in dashboard() if start_s <= number(r["t_min"], "t_min") * 60 <= end_s]


def _panel(rows: Iterable[Mapping[str, object]], panel: str) -> list[float]:
    """A dashboard ``panel``'s values over ``rows``, as they are."""
    return [number(r[panel], panel) for r in rows]


def _panel_max(rows: Iterable[Mapping[str, object]], panel: str) -> float:
    """The highest value of a dashboard ``panel`` over ``rows`` (a row without one is skipped)."""
    return max(_panel([r for r in rows if r[panel] is not None], panel))


def _panel_peak_count(rows: Iterable[Mapping[str, object]], panel: str) -> int:
    """The highest count (requests) of a dashboard ``panel`` over ``rows``."""
    counts = [r[panel] for r in rows]
    whole = [c for c in counts if isinstance(c, int)]
    if len(whole) != len(counts):
        raise KvsimError(f"dashboard panel {panel!r} holds {counts!r}: expected counts")
    return max(whole)


def healthy_p99_max() -> float:
    return _panel_max(_rows(WINDOW_S, HEALTHY_S), "itl_p99_ms")


def storm_p99_max() -> float:
    return _panel_max(_rows(HEALTHY_S, STORM_END_S + WINDOW_S), "itl_p99_ms")


@cache
def gauge_breakdown(at_s: float = GAUGE_AT_S) -> KvUsageBreakdown:
    """What the KV gauge counts at ``at_s`` in the incident, as a scrape then sees it."""

    return kv_usage_breakdown("incident-day", at_s)


def seed_rule_onset_s() -> float:
    """When seed 003's preemption alert (rate > 0 over 5m, for 10m) first fires."""

    tab = scraped()
    t = np.asarray(tab["t_s"], dtype=float)
    on = onset(t, firing(t, increase(tab, "vllm:num_preemptions_total", 300.0) > 0, 600.0))
    if on is None:
        raise KvsimError("seed 003's preemption alert never fires in the incident: expected it to")
    return on


def first_preemption_s() -> float:
    return float(np.min(np.asarray(_run().events["t_s"], dtype=float)))


def last_storm_preemption_s() -> float:
    """The storm's last preemption: the last before a quiet spell of five minutes or more
    (the incident has a lone straggler later on)."""

    ev = np.sort(np.asarray(_run().events["t_s"], dtype=float))
    gaps = np.flatnonzero(np.diff(ev) >= 300.0)
    return float(ev[gaps[0]] if gaps.size else ev[-1])


def page_timing() -> dict[str, float]:
    """When the book's page (VLLMPreemptionStorm) fires and clears in the incident, in
    minutes, evaluated at every scrape: ``page_min`` and ``page_lag_min`` (after the first
    preemption), ``clear_min`` (the first evaluation it no longer fires) and
    ``clear_lag_min`` (after the storm's last preemption)."""

    tab = scraped()
    t = np.asarray(tab["t_s"], dtype=float)
    condition, for_s = book_rules(tab)["VLLMPreemptionStorm"]
    fires = firing(t, condition, for_s)
    on = onset(t, fires)
    if on is None:
        raise KvsimError("the page never fires in the incident: expected it to")
    i = int(np.searchsorted(t, on))
    end = i + int(np.argmin(fires[i:])) if not fires[i:].all() else len(t) - 1
    return dict(page_min=on / 60, page_lag_min=(on - first_preemption_s()) / 60,
                clear_min=float(t[end]) / 60,
                clear_lag_min=(float(t[end]) - last_storm_preemption_s()) / 60)


# --- predictions ------------------------------------------------------------------------

def _mean_ratio() -> tuple[float, str]:
    healthy = _panel(_rows(WINDOW_S, HEALTHY_S), "itl_mean_ms")
    storm = _panel(_rows(HEALTHY_S, STORM_END_S + WINDOW_S), "itl_mean_ms")
    gap = max(_panel(dashboard(), "gap_max_ms"))
    return (round(max(storm) / float(np.median(healthy)), 2),
            f"the mean rises from {np.median(healthy):.0f} ms to at most {max(storm):.0f} ms, "
            f"while one stream waits {gap / 1e3:.1f} s: a handful of long pauses barely move "
            f"an average over thousands of regular tokens")


def _slack_tokens() -> tuple[int, str]:
    b = gauge_breakdown()
    return (b["slack_tokens"],
            f"the gauge counts {b['blocks_held']:,} whole blocks of {b['blocks_total']:,}; the "
            f"last block of each of {b['requests_running']} running requests is partly empty, "
            f"{b['slack_tokens']:,} token slots in all")


def _alert_delay_min() -> tuple[float, str]:
    delay = (seed_rule_onset_s() - first_preemption_s()) / 60.0
    return (round(delay, 1),
            "rate() over 5 minutes turns positive within a scrape or two of the first "
            "preemption, and `for: 10m` then waits ten more minutes; by then the storm is over")


def _peak_waiting() -> tuple[int, str]:
    peak = _panel_peak_count(dashboard(), "waiting")
    return (peak, "admission stops while the cache is pinned: arrivals wait, and every "
                  "preemption puts one more request at the front of the queue")


def _lint_findings() -> tuple[int, str]:

    findings = lint_rules(SEED_RULES_FILE)
    return (len(findings), "the near-full rule watches vllm:gpu_cache_usage_perc, a name current "
                           "V1 servers no longer expose: the rule can never fire there")


def _compute_bound_kv() -> tuple[float, str]:

    wl = Workload.poisson(45.0, 120.0, prompt=850, output=Geometric(100), seed=0)
    s = simulate(wl, model="llama-3.1-8b", gpu="h100-80gb", gpu_memory_utilization=0.90,
                 max_num_seqs=256).summary()
    return (round(100 * metric(s, "kv_usage_max"), 1),
            "the batch is capped at 256 sequences of short requests: the queue grows while the "
            "cache has room, so the fix is compute or the cap, not memory")


# --- exercises --------------------------------------------------------------------------

def _counter(name: str) -> float:
    tab = scraped()
    return float(np.asarray(tab[name])[-1])


def _finished() -> float:
    return sum(_counter(f'vllm:request_success_total{{finished_reason="{r}"}}')
               for r in FINISHED_REASONS)


def final_counters() -> dict[str, float]:
    """The incident's preemptions and finished requests (every ``finished_reason``) at the
    last scrape, as the per-1,000 exercise gives them."""
    return {"preemptions": _counter("vllm:num_preemptions_total"), "finished": _finished()}


def _per_1k() -> tuple[float, str]:
    pre, done = _counter("vllm:num_preemptions_total"), _finished()
    v = 1000.0 * pre / done
    return round(v, 1), f"1,000 x {pre:,.0f} preemptions / {done:,.0f} finished requests"


def _preemptions_raw() -> float:
    return _counter("vllm:num_preemptions_total")


def _peak_windowed_per_1k() -> float:
    # the dashboard's preemptions per 1,000 over 10 minutes, at its peak
    return _panel_max(dashboard(), "per_1k")


def _blocks_held() -> tuple[int, str]:
    b = gauge_breakdown(EXERCISE_GAUGE_AT_S)
    return b["blocks_held"], (f"{b['gauge']:.4f} x {b['blocks_total']:,} blocks = "
                              f"{b['blocks_held']:,}")


def _blocks_as_tokens() -> int:
    return _blocks_held()[0] * gauge_breakdown(EXERCISE_GAUGE_AT_S)["block_size"]


def _blocks_at_the_text_instant() -> int:
    return gauge_breakdown()["blocks_held"]


#: The digits the exercise quotes the gauge with.
GAUGE_DIGITS = 4


def _blocks_truncated() -> int:
    # the quoted gauge times the pool, cut down to a whole block instead of rounded
    b = gauge_breakdown(EXERCISE_GAUGE_AT_S)
    return int(round(b["gauge"], GAUGE_DIGITS) * b["blocks_total"])


def _blocks_free() -> int:
    b = gauge_breakdown(EXERCISE_GAUGE_AT_S)
    return b["blocks_total"] - b["blocks_held"]


def _blocks_gauge_as_percent() -> float:
    # "_perc" read as a percentage: 97.46 x the pool
    b = gauge_breakdown(EXERCISE_GAUGE_AT_S)
    return 100 * round(b["gauge"], GAUGE_DIGITS) * b["blocks_total"]


#: The edge a colleague's alert selects in the bucket-edge exercise (V1 has no such bucket).
COLLEAGUE_EDGE = 15.0


def _bucket_edge() -> tuple[float, str]:

    edge = min(e for e in ITL_BUCKETS if e > 10.0)
    return edge, f"V1's inter-token buckets run ... 7.5, 10.0, {edge:g}, ...: there is no le=\"15\""


def itl_final_counts() -> list[float]:
    """The last scrape's cumulative inter-token latency bucket counts, one per ITL_BUCKETS
    edge, then +Inf."""
    tab = scraped()
    counts = [float(np.asarray(tab[f'vllm:inter_token_latency_seconds_bucket{{le="{le_label(e)}"}}'])[-1])
              for e in ITL_BUCKETS]
    counts.append(float(np.asarray(tab['vllm:inter_token_latency_seconds_bucket{le="+Inf"}'])[-1]))
    return counts


def p99_bucket() -> int:
    """Index (in ITL_BUCKETS) of the upper edge of the bucket that holds the p99's rank."""
    counts = itl_final_counts()
    rank = 0.99 * counts[-1]
    return next(i for i, c in enumerate(counts[:-1]) if c >= rank)


def _p99_ms() -> tuple[float, str]:

    counts = itl_final_counts()
    p99 = histogram_quantile(0.99, ITL_BUCKETS, counts)
    i, rank = p99_bucket(), 0.99 * counts[-1]
    lo, hi = ITL_BUCKETS[i - 1], ITL_BUCKETS[i]
    return round(1e3 * p99, 1), (f"the rank 0.99 x {counts[-1]:,.0f} = {rank:,.0f} falls in the "
                                 f"bucket ({lo:g}, {hi:g}] s, whose cumulative count goes from "
                                 f"{counts[i - 1]:,.0f} to {counts[i]:,.0f}: interpolated linearly, "
                                 f"{1e3 * p99:.1f} ms, as histogram_quantile gives")


def _p99_upper_edge_ms() -> float:
    # the bucket's upper edge, with no interpolation inside it
    return 1e3 * ITL_BUCKETS[p99_bucket()]


def _p99_lower_edge_ms() -> float:
    return 1e3 * ITL_BUCKETS[p99_bucket() - 1]


def _mean_ms() -> float:
    return 1e3 * _counter("vllm:inter_token_latency_seconds_sum") / \
        _counter("vllm:inter_token_latency_seconds_count")


def _threshold() -> tuple[float, str]:
    lo, hi = healthy_p99_max(), storm_p99_max()
    return ((lo + hi) / 2, f"any threshold above the healthy quarter hour's worst 5-minute p99 "
                           f"({lo:.0f} ms) and below the storm's ({hi:.0f} ms) separates them")


def _storm_mean_max() -> float:
    return _panel_max(_rows(HEALTHY_S, STORM_END_S + WINDOW_S), "itl_mean_ms")


def _storm_longest_gap() -> float:
    return _panel_max(_rows(HEALTHY_S, STORM_END_S + WINDOW_S), "gap_max_ms")


def _fp8_preemptions() -> tuple[int, str]:
    s = _run(kv_dtype="fp8").summary()
    return count(s, "preemptions"), ("an FP8 cache holds twice the tokens: the lunch rush fits, and "
                              f"{s['preemptions']} requests are preempted")


def _bf16_preemptions() -> int:
    return count(_run().summary(), "preemptions")


EXERCISES: list[Exercise] = [
    Exercise(
        id="ch04-per-1k",
        question="preemptions per 1,000 finished requests over the whole incident, from the "
                 "final counters",
        kind="float", unit="per 1,000 requests", solve=_per_1k, abs_tol=0.5, derive=True,
        hint="1,000 x vllm:num_preemptions_total / the sum of vllm:request_success_total over "
             "its finished_reason labels, both read at the last scrape",
        traps=((_preemptions_raw, "that is the preemption count itself; divide by the finished "
                                  "requests and multiply by 1,000"),
               (lambda: _per_1k()[0] / 1000, "that is per request; multiply by 1,000"),
               (lambda: _per_1k()[0] / 10,
                "that is per 100 requests, a percentage; the question asks per 1,000"),
               (_peak_windowed_per_1k,
                "that is the dashboard's peak, over a 10-minute window; the question asks the "
                "whole incident, from the final counters")),
    ),
    Exercise(
        id="ch04-blocks-held",
        question="KV blocks the gauge counts as used at minute 20 of the incident",
        kind="int", unit="blocks", solve=_blocks_held, abs_tol=0, derive=True,
        hint="eq-gauge: the gauge is the share of the pool's blocks held, so multiply it by the "
             "pool's blocks and round to a whole block",
        traps=((_blocks_as_tokens, "that is in tokens; the gauge counts blocks of 16"),
               (_blocks_at_the_text_instant,
                "that is the whole pool, all of it held at minute 22 (the text's instant); at "
                "minute 20 the gauge reads less than 1"),
               (_blocks_truncated,
                "the product is a whole number of blocks that the quoted gauge rounds: round to "
                "the nearest block, do not cut the decimals off"),
               (_blocks_free,
                "that is the free blocks; the gauge counts the blocks requests hold"),
               (_blocks_gauge_as_percent,
                "the gauge is a fraction from 0 to 1, despite the _perc in its name")),
    ),
    Exercise(
        id="ch04-bucket-edge",
        question="the smallest bucket edge above 10 s in vLLM V1's inter-token latency histogram",
        kind="float", unit="s", solve=_bucket_edge, abs_tol=1e-9,
        hint="read kvsim.observe.metrics.ITL_BUCKETS (copied from vllm/v1/metrics/buckets.py)",
        traps=((lambda: COLLEAGUE_EDGE,
                "there is no le=\"15\" bucket: a query on it returns nothing"),
               (lambda: max(e for e in ITL_BUCKETS if e <= 10.0),
                "that edge is 10 s itself; the question asks the smallest one above it"),
               (lambda: 1e3 * _bucket_edge()[0],
                "that is in milliseconds; the le labels are in seconds")),
    ),
    Exercise(
        id="ch04-p99-itl",
        question="p99 inter-token latency of the whole incident, in ms, from the histogram",
        kind="float", unit="ms", solve=_p99_ms, abs_tol=0.5, derive=True,
        hint="the p99 is the gap at rank 0.99 x the +Inf count: find the bucket whose cumulative "
             "count first reaches that rank, and interpolate linearly inside it",
        traps=((_mean_ms, "that is the mean (sum / count); the tail needs the buckets"),
               (lambda: _p99_ms()[0] / 1e3, "that is in seconds; the answer is in ms"),
               (_p99_upper_edge_ms,
                "that is the bucket's upper edge; histogram_quantile interpolates linearly "
                "inside the bucket"),
               (_p99_lower_edge_ms,
                "that is the bucket's lower edge; the rank lies partway up the bucket: "
                "interpolate")),
    ),
    Exercise(
        id="ch04-threshold",
        question="a p99 inter-token latency threshold (ms) that fires in the storm and never in "
                 "the healthy quarter hour",
        kind="float", unit="ms", solve=_threshold, rel_tol=0.1,
        between=lambda: (healthy_p99_max(), storm_p99_max()),
        hint="compare the healthy and the storm rows of the dashboard's itl_p99_ms column: the "
             "threshold must lie above the first and below the second",
        traps=((_storm_longest_gap,
                "that is the longest single pause; a 5-minute p99 never gets near it, so the "
                "alert would never fire"),
               (_storm_mean_max,
                "that is the rush's worst 5-minute mean; the quiet minutes' p99 is already "
                "above it, so the alert would fire all day"),
               (lambda: _threshold()[0] / 1e3,
                "that is in seconds; the threshold is in ms")),
    ),
    Exercise(
        id="ch04-whatif-fp8",
        question="preemptions in the incident with an FP8 KV cache",
        kind="int", unit="preemptions", solve=_fp8_preemptions, abs_tol=0.5,
        hint="kvsim.run_scenario('incident-day', kv_dtype='fp8').summary()['preemptions']",
        traps=((_bf16_preemptions, "that is the fp16 run; pass kv_dtype='fp8'"),
               (lambda: _bf16_preemptions() / 2,
                "FP8 does not halve the preemptions: it doubles the pool; does the rush still "
                "fill it?"),
               (lambda: _per_1k()[0],
                "that is preemptions per 1,000 requests; the question asks the count")),
    ),
]

PREDICTIONS: list[Prediction] = [
    Prediction(id="ch04-predict-mean", unit="x the healthy mean",
               question="the storm's highest 5-minute mean inter-token latency as a multiple of "
                        "the healthy one", solve=_mean_ratio),
    Prediction(id="ch04-predict-slack", unit="tokens",
               question="token slots the KV gauge counts as used at minute 22 that hold no KV",
               solve=_slack_tokens, rel_tol=0.15),
    Prediction(id="ch04-predict-queue", unit="requests",
               question="the peak of vllm:num_requests_waiting in the incident",
               solve=_peak_waiting, rel_tol=0.15),
    Prediction(id="ch04-predict-alert-delay", unit="minutes",
               question="minutes from the first preemption to the preemption alert of "
                        "chapter 2's source article",
               solve=_alert_delay_min),
    Prediction(id="ch04-predict-lint", unit="findings",
               question="findings of the rule linter on the two rules of chapter 2's source "
                        "article, on a V1 server",
               solve=_lint_findings),
    Prediction(id="ch04-predict-compute-bound", unit="% of the pool",
               question="the peak KV usage of a compute-bound overload on an H100",
               solve=_compute_bound_kv),
]

__all__ = ["EXERCISES", "PREDICTIONS", "SCRAPE_S", "WINDOW_S", "RATE_WINDOW_S", "GAUGE_AT_S",
           "HEALTHY_S", "STORM_END_S", "AFTER_STORM_S", "scraped", "dashboard", "gauge_breakdown",
           "healthy_p99_max", "storm_p99_max", "seed_rule_onset_s", "first_preemption_s",
           "last_storm_preemption_s", "page_timing", "itl_final_counts", "p99_bucket",
           "final_counters",
           "GAUGE_DIGITS", "COLLEAGUE_EDGE"]
