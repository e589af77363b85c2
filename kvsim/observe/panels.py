"""Dashboard panels and alert conditions, computed from scraped vLLM series.

Explained in chapter 4, *Detecting preemption*. A Grafana board and an alert
rule never see kvsim's tables: they see what Prometheus scraped, every
``interval_s`` seconds (:func:`kvsim.observe.series.scrape`). This module computes,
with numpy on those samples, what the usual PromQL queries return, one
function per query shape, each named after it:

* :func:`histogram_quantile` -- PromQL's own, over one set of classic
  bucket counts;
* :func:`increase` -- ``increase(counter[w])``: the counter now minus the
  counter ``w`` seconds ago (Prometheus also extrapolates to the window's
  edges; on evenly spaced scrapes that changes values by at most one scrape's
  worth, and the tests check every alert onset computed here against
  ``promtool``);
* :func:`prometheus_increase` -- ``increase(counter[w])`` exactly as Prometheus
  computes it, extrapolation included, at chosen evaluation times (the rule
  explorer's, :mod:`kvsim.observe.rule_timing`; evaluated on the scrapes, as
  ``promtool`` does, a full window is stretched by nothing, but a real
  server's evaluations fall between scrapes and a lone preemption in a
  two-minute window reads up to 8/7);
* :func:`avg_over_time` / :func:`min_over_time` -- of a gauge over ``w``;
* :func:`histogram_quantile_over` -- ``histogram_quantile(q,
  rate(h_bucket[w]))``;
* :func:`mean_over` -- ``rate(h_sum[w]) / rate(h_count[w])``, the mean a
  dashboard shows;
* :func:`firing` -- when ``condition`` has held for ``for_s`` seconds (an
  alert's ``for:``), at each rule evaluation.

:func:`dashboard_rows` puts the panels of chapter 4's board side by side per
scrape; :func:`longest_gap_over` is what the users felt and no metric shows:
the longest pause between two tokens of any stream in the window.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kvsim.engine.result import SimResult, Table
from kvsim.errors import KvsimError, check_float

from .catalogue import ITL_BUCKETS, REQUEST_NUM_PREEMPTIONS_BUCKETS, le_label

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    _Floats = NDArray[np.float64]     # one value per scrape or evaluation
    _Flags = NDArray[np.bool_]        # one condition per scrape or evaluation

__all__ = ["histogram_quantile", "increase", "prometheus_increase", "finished_increase", "avg_over_time", "min_over_time", "deriv",
           "histogram_quantile_over", "mean_over", "firing", "onset", "longest_gap_over",
           "dashboard_rows", "book_rules"]


def _times(tab: Table) -> _Floats:
    if "t_s" not in tab:
        raise KvsimError("the table has no t_s column: expected kvsim.observe.metrics.scrape(...)")
    return np.asarray(tab["t_s"], dtype=float)


def _column(tab: Table, name: str) -> _Floats:
    if name not in tab:
        raise KvsimError(f"series {name!r} is not in the scrape: expected one of "
                         f"{', '.join(c for c in tab.columns if 'bucket' not in c)}")
    return np.asarray(tab[name], dtype=float)


def _lag(t: _Floats, window_s: float) -> NDArray[np.intp]:
    """Index of the sample ``window_s`` before each sample (clipped at the first)."""
    window_s = check_float("window_s", window_s, min=0.0, min_open=True)
    lag: NDArray[np.intp] = np.clip(np.searchsorted(t, t - window_s - 1e-9, side="left"), 0,
                                    len(t) - 1)
    return lag


def finished_increase(tab: Table, window_s: float) -> _Floats:
    """``sum(increase(vllm:request_success_total[window]))`` over every ``finished_reason``
    the scrape holds (five in current V1, three in older versions)."""
    series = [c for c in tab.columns if c.startswith("vllm:request_success_total{")]
    if not series:
        raise KvsimError("tab has no vllm:request_success_total series: expected "
                         "kvsim.observe.metrics.scrape(...) of a run")
    total = increase(tab, series[0], window_s)
    for name in series[1:]:
        total = total + increase(tab, name, window_s)
    return total


def increase(tab: Table, counter: str, window_s: float) -> _Floats:
    """``increase(counter[window])`` at every scrape (the first samples see a shorter window)."""
    t = _times(tab)
    values = _column(tab, counter)
    return values - values[_lag(t, window_s)]


def prometheus_increase(t: ArrayLike, values: ArrayLike, window_s: float,
                        at: ArrayLike) -> _Floats:
    """PromQL's ``increase(counter[window])`` at each evaluation time in ``at`` (seconds),
    as Prometheus 2.42 computes it from the samples ``(t, values)``; NaN where it returns
    nothing (fewer than two samples in the window).

    The window holds the samples from ``now - window`` to ``now``, both included
    (times compared in whole milliseconds, as Prometheus stores them). The raw
    increase (last minus first sample, plus the value before every counter reset)
    is stretched from the samples' span towards the window's edges: to an edge
    nearer than 1.1 average sample gaps all the way, else by half a gap; at the
    start never past the point where the counter, extended back at its average
    slope, would reach zero.
    """
    # NOTE(prometheus 2.42, promql/functions.go extrapolatedRate): the zero point caps the
    # distance to the start before the 1.1-gap test; from 2.53 (PR #13725) Prometheus caps
    # after it, which differs only in a series' first window. Prometheus 3 also drops the
    # sample at exactly now - window.
    t_ms = np.round(np.asarray(t, dtype=float) * 1000).astype(np.int64)
    v = np.asarray(values, dtype=float)
    at_ms = np.round(np.asarray(at, dtype=float) * 1000).astype(np.int64)
    w_ms = int(round(check_float("window_s", window_s, min=0.0, min_open=True) * 1000))
    lo = np.searchsorted(t_ms, at_ms - w_ms, side="left")
    hi = np.searchsorted(t_ms, at_ms, side="right")
    out = np.full(len(at_ms), np.nan)
    for k, (a, b) in enumerate(zip(lo, hi, strict=True)):
        if b - a < 2:
            continue
        s = v[a:b]
        raw = float(s[-1] - s[0]) + float(s[:-1][np.diff(s) < 0].sum())
        to_start = (t_ms[a] - (at_ms[k] - w_ms)) / 1000
        to_end = (at_ms[k] - t_ms[b - 1]) / 1000
        span = (t_ms[b - 1] - t_ms[a]) / 1000
        gap = span / (b - a - 1)
        if raw > 0 and s[0] >= 0:
            to_start = min(to_start, span * s[0] / raw)
        limit = 1.1 * gap
        stretched = span + (to_start if to_start < limit else gap / 2) + \
            (to_end if to_end < limit else gap / 2)
        out[k] = raw * stretched / span
    return out


def _over(tab: Table, gauge: str, window_s: float,
          reduce: Callable[[_Floats], np.floating[Any]]) -> _Floats:
    t = _times(tab)
    values = _column(tab, gauge)
    lag = _lag(t, window_s)
    return np.array([reduce(values[lag[i]:i + 1]) for i in range(len(t))])


def avg_over_time(tab: Table, gauge: str, window_s: float) -> _Floats:
    """``avg_over_time(gauge[window])``: the mean of the samples in the window."""
    return _over(tab, gauge, window_s, np.mean)


def min_over_time(tab: Table, gauge: str, window_s: float) -> _Floats:
    """``min_over_time(gauge[window])``."""
    return _over(tab, gauge, window_s, np.min)


def deriv(tab: Table, gauge: str, window_s: float) -> _Floats:
    """``deriv(gauge[window])``: the least-squares slope of the samples in the window (per s)."""
    t = _times(tab)
    values = _column(tab, gauge)
    lag = _lag(t, window_s)
    out = np.zeros(len(t))
    for i in range(len(t)):
        x, y = t[lag[i]:i + 1], values[lag[i]:i + 1]
        if len(x) >= 2:
            x = x - x.mean()
            out[i] = float((x * (y - y.mean())).sum() / (x * x).sum())
    return out


def histogram_quantile(q: float, edges: Iterable[float], counts: Iterable[float]) -> float:
    """PromQL's ``histogram_quantile`` over classic buckets (linear inside a bucket).

    ``edges`` are the finite upper bounds, ``counts`` the cumulative counts for
    each edge followed by the ``+Inf`` count. As in Prometheus: NaN with no
    observations; a rank in the ``+Inf`` bucket returns the highest finite edge;
    the first bucket interpolates from 0 (for positive edges).
    """
    q = check_float("q", q, min=0, max=1)
    return _quantile(q, [float(e) for e in edges], [float(c) for c in counts])


def _quantile(q: float, edges: list[float], counts: list[float]) -> float:
    if len(counts) != len(edges) + 1:
        raise KvsimError(f"counts has {len(counts)} values: expected {len(edges) + 1} "
                         "(one per edge and +Inf)")
    total = counts[-1]
    if total <= 0:
        return float("nan")
    rank = q * total
    b = next(i for i, c in enumerate(counts) if c >= rank)
    if b == len(edges):
        return edges[-1]
    lo = 0.0 if b == 0 else edges[b - 1]
    lo_count = 0.0 if b == 0 else counts[b - 1]
    if b == 0 and edges[0] <= 0:
        return edges[0]
    width = counts[b] - lo_count
    if width <= 0:
        return edges[b]
    return lo + (edges[b] - lo) * (rank - lo_count) / width


def histogram_quantile_over(tab: Table, histogram: str, q: float, window_s: float,
                            edges: Sequence[float] = ITL_BUCKETS) -> _Floats:
    """``histogram_quantile(q, rate(histogram_bucket[window]))`` at every scrape (NaN when
    the window saw no observation)."""
    t = _times(tab)
    lag = _lag(t, window_s)
    names = [f'{histogram}_bucket{{le="{le_label(e)}"}}' for e in edges] + \
            [f'{histogram}_bucket{{le="+Inf"}}']
    buckets = np.stack([_column(tab, n) for n in names])
    delta = buckets - buckets[:, lag]
    return np.array([histogram_quantile(q, edges, delta[:, i]) for i in range(len(t))])


def mean_over(tab: Table, histogram: str, window_s: float) -> _Floats:
    """``rate(h_sum[window]) / rate(h_count[window])``: the mean a dashboard plots."""
    d_sum = increase(tab, histogram + "_sum", window_s)
    d_count = increase(tab, histogram + "_count", window_s)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(d_count > 0, d_sum / np.where(d_count > 0, d_count, 1), np.nan)


def firing(t: ArrayLike, condition: ArrayLike, for_s: float) -> _Flags:
    """Whether an alert fires at each evaluation: ``condition`` has been true at every
    evaluation for at least ``for_s`` seconds (``for: 0`` fires at once)."""
    times = np.asarray(t, dtype=float)
    for_s = check_float("for_s", for_s, min=0.0)
    out = np.zeros(len(times), dtype=bool)
    since = None
    for i, ok in enumerate(np.asarray(condition, dtype=bool)):
        if not ok:
            since = None
            continue
        since = times[i] if since is None else since
        out[i] = times[i] - since >= for_s
    return out


def onset(t: ArrayLike, fires: ArrayLike) -> float | None:
    """The first evaluation time at which an alert fires, or None."""
    idx = np.flatnonzero(np.asarray(fires, dtype=bool))
    return float(np.asarray(t, dtype=float)[idx[0]]) if idx.size else None


def longest_gap_over(result: SimResult, t: ArrayLike, window_s: float) -> _Floats:
    """The longest pause between two tokens of one stream that ended in each window
    (seconds; 0 with none): what users felt, which no vLLM metric reports."""
    if not isinstance(result, SimResult):
        raise KvsimError(f"result={type(result).__name__} is not supported: expected a "
                         "kvsim.SimResult")
    times = np.asarray(t, dtype=float)
    window_s = check_float("window_s", window_s, min=0.0, min_open=True)
    pauses = result.pauses
    end = np.asarray(pauses["end_s"], dtype=float)
    length = end - np.asarray(pauses["start_s"], dtype=float)
    ok = ~np.isnan(end)
    end, length = end[ok], length[ok]
    out = np.zeros(len(times))
    for i, now in enumerate(times):
        inside = (end > now - window_s) & (end <= now)
        if inside.any():
            out[i] = float(length[inside].max())
    return out


def dashboard_rows(result: SimResult, tab: Table, *, run: str, window_s: float = 300.0,
                   rate_window_s: float = 600.0) -> list[dict[str, object]]:
    """One row per scrape with chapter 4's panels (rounded for a compact chart).

    ``kv_pct`` (``vllm:kv_cache_usage_perc`` x 100), ``waiting``, ``running``,
    ``per_1k`` (preemptions per 1,000 finished requests over ``rate_window_s``),
    ``itl_mean_ms`` and ``itl_p99_ms`` (over ``window_s``), ``gap_max_ms`` (the
    longest pause in ``window_s``, from the run itself), ``t_min``.
    """
    t = _times(tab)
    finished = finished_increase(tab, rate_window_s)
    pre = increase(tab, "vllm:num_preemptions_total", rate_window_s)
    per_1k = 1000.0 * pre / np.maximum(finished, 1.0)
    mean = mean_over(tab, "vllm:inter_token_latency_seconds", window_s)
    p99 = histogram_quantile_over(tab, "vllm:inter_token_latency_seconds", 0.99, window_s)
    gap = longest_gap_over(result, t, window_s)
    kv = _column(tab, "vllm:kv_cache_usage_perc")
    waiting = _column(tab, "vllm:num_requests_waiting")
    running = _column(tab, "vllm:num_requests_running")

    def r(x: float, nd: int = 1) -> float | None:
        return None if np.isnan(x) else round(float(x), nd)

    return [{"run": run, "t_min": round(float(t[i]) / 60.0, 3), "kv_pct": r(100 * kv[i]),
             "waiting": int(waiting[i]), "running": int(running[i]), "per_1k": r(per_1k[i]),
             "itl_mean_ms": r(1e3 * mean[i]), "itl_p99_ms": r(1e3 * p99[i]),
             "gap_max_ms": r(1e3 * gap[i], 0)} for i in range(len(t))]


#: The series VLLMSeriesAbsent guards (the rule file's absent() calls).
_GUARDED = ("vllm:num_preemptions_total", "vllm:kv_cache_usage_perc", "vllm:num_requests_waiting",
            "vllm:request_success_total", "vllm:inter_token_latency_seconds_bucket",
            "vllm:request_num_preemptions_bucket")


def book_rules(tab: Table) -> dict[str, tuple[_Flags, float]]:
    """Every alert of ``book/alerts/kvsim-preemption.rules.yml`` as ``{name: (condition at
    each scrape, for_s)}``, the expressions written with this module's functions.

    Pass each pair to :func:`firing`. The tests run the rule file through
    ``promtool`` on the same series and find the same alerts firing at every
    evaluation away from a transition.
    """

    finished = finished_increase(tab, 600.0)
    per_1k = 1000.0 * increase(tab, "vllm:num_preemptions_total", 600.0) / np.maximum(finished, 1)
    with np.errstate(invalid="ignore"):
        repeated = histogram_quantile_over(tab, "vllm:request_num_preemptions", 0.99, 600.0,
                                           REQUEST_NUM_PREEMPTIONS_BUCKETS) > 1
        itl_tail = histogram_quantile_over(tab, "vllm:inter_token_latency_seconds", 0.99,
                                           300.0) > 0.2
    return {
        "VLLMKVCachePreemption": (increase(tab, "vllm:num_preemptions_total", 300.0) > 0, 600.0),
        "VLLMKVCacheNearFull": (avg_over_time(tab, "vllm:kv_cache_usage_perc", 300.0) > 0.85,
                                900.0),
        "VLLMKVCachePinned": (avg_over_time(tab, "vllm:kv_cache_usage_perc", 120.0) > 0.9, 120.0),
        "VLLMPreemptionsPer1k": (per_1k > 50, 300.0),
        "VLLMRequestsPreemptedRepeatedly": (repeated, 300.0),
        "VLLMInterTokenLatencyTail": (itl_tail, 300.0),
        "VLLMQueueGrowingWhileKVPinned": (
            (avg_over_time(tab, "vllm:kv_cache_usage_perc", 300.0) > 0.9)
            & (deriv(tab, "vllm:num_requests_waiting", 300.0) > 0), 300.0),
        "VLLMPreemptionStorm": (increase(tab, "vllm:num_preemptions_total", 120.0) >= 2, 60.0),
        # the guards: absent() of a series is true at every scrape when the table lacks it;
        # a table has no target's `up`, so the up-but-missing rule has nothing to fire on
        "VLLMSeriesAbsent": (np.full(len(_times(tab)), any(
            not any(c == s or c.startswith(s + "{") for c in tab.columns) for s in _GUARDED)),
            600.0),
        "VLLMTargetUpSeriesMissing": (np.zeros(len(_times(tab)), dtype=bool), 600.0),
    }
