"""A run's series: a finished :class:`~kvsim.SimResult` as the values of vLLM's metrics.

One job: turn a run into the series ``/metrics`` would have shown, as step
functions of simulated time (:class:`RunMetrics`, built by :func:`run_metrics`
for the families of :mod:`kvsim.observe.catalogue`), and sample them as
Prometheus stores them: :func:`scrape`, one row per scrape every
``interval_s`` seconds (a :class:`kvsim.engine.result.Table` the chapter
plots). The text of one scrape is :mod:`kvsim.observe.exposition`; the same
samples as a promtool test, :mod:`kvsim.observe.promtool_tests`.

How a run becomes vLLM's values follows ``vllm/v1/metrics/stats.py``
(``IterationStats.update_from_output``; :mod:`kvsim.observe.catalogue` names
the files and commits read): the prompt-token counter grows by the whole
prompt when a request emits its first token, TTFT is that instant minus
arrival, and every later token observes the time since the request's
previous token.

NOTE(metrics-export), where kvsim differs from a real server:

* a real counter starts at the process start; here at the run's start
  (``_created`` is ``start_unix_s``, default 0, plus nothing);
* the prefix-cache counters count each request's lookup at its first
  admission, stamped at its first token (kvsim does not record the admission
  instant); vLLM also counts the lookups of resumed requests, which kvsim
  reports only as totals (``result.counters["prefix_cache_resumed_queries"]``);
* V0's ``vllm:cpu_cache_usage_perc`` is left out (kvsim records swapped
  requests, not swapped blocks, per step);
* vLLM V1 serves ``/metrics`` in prometheus_client's multiprocess mode when it
  runs several API-server processes; that mode emits no ``_created`` samples.

Explained in chapter 4, *Detecting preemption* (*An incident, as Prometheus saw it*).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from prometheus_client.core import Metric

from kvsim.engine.result import SimResult, Table
from kvsim.errors import KvsimError, check_choice, check_float, check_int

from .catalogue import VERSIONS, le_label, metric_defs, series_name

__all__ = ["RunMetrics", "run_metrics", "as_run_metrics", "scrape_times", "scrape"]

# --- the run as step functions of time ----------------------------------------------------

class _Steps:
    """A piecewise-constant function of time: ``values[i]`` from ``times[i]`` on (0 before)."""

    def __init__(self, times, values):
        self.times = np.asarray(times, dtype=float)
        self.values = np.asarray(values)

    def at(self, t) -> np.ndarray:
        t = np.atleast_1d(np.asarray(t, dtype=float))
        i = np.searchsorted(self.times, t, side="right") - 1
        zero = np.zeros(1, dtype=self.values.dtype)
        vals = np.concatenate([zero, self.values]) if self.values.size else zero
        return vals[i + 1]


def _cumulative(times, weights) -> _Steps:
    times = np.asarray(times, dtype=float)
    weights = np.asarray(weights)
    keep = ~np.isnan(times)
    times, weights = times[keep], weights[keep]
    order = np.argsort(times, kind="stable")
    return _Steps(times[order], np.cumsum(weights[order]))


class _Hist:
    """Observations (time, value, weight) of one histogram, cumulative per bucket."""

    def __init__(self, edges, times, values, weights=None):
        self.edges = tuple(float(e) for e in edges)
        times = np.asarray(times, dtype=float)
        values = np.asarray(values, dtype=float)
        weights = np.ones(times.size) if weights is None else np.asarray(weights, dtype=float)
        keep = ~np.isnan(times) & (weights > 0)
        times, values, weights = times[keep], values[keep], weights[keep]
        # bucket i holds value <= edges[i] (Prometheus "le"); the last is +Inf
        idx = np.searchsorted(np.asarray(self.edges), values, side="left")
        self.count = _cumulative(times, weights)
        self.sum = _cumulative(times, values * weights)
        self.per_bucket = [_cumulative(times[idx <= b], weights[idx <= b])
                           for b in range(len(self.edges))]

    def at(self, t):
        """(cumulative counts per edge, count, sum) at times ``t`` (arrays)."""
        return ([b.at(t) for b in self.per_bucket], self.count.at(t), self.sum.at(t))


@dataclass
class RunMetrics:
    """The series of one run, ready to be sampled at any time (see :func:`run_metrics`)."""

    result: SimResult
    version: str
    labels: dict
    defs: list
    gauges: dict
    counters: dict
    hists: dict
    info_labels: dict
    start_unix_s: float
    end_s: float

    def value(self, source: str, t):
        """The value(s) of a gauge or counter source at time(s) ``t``."""
        if source in self.gauges:
            return self.gauges[source].at(t)
        return self.counters[source].at(t)

    def families(self, t: float):
        """prometheus_client metric families at time ``t`` (for a registry collector)."""
        t = float(t)
        lab = self.labels
        out = []
        created = self.start_unix_s
        with_created = VERSIONS[self.version]["created"]
        for d in self.defs:
            if d.kind == "info":
                m = Metric(d.name if d.name.endswith("_info") else d.name, d.doc,
                           "gauge" if d.name.endswith("_info") else "info")
                name = d.name if d.name.endswith("_info") else d.name + "_info"
                m.add_sample(name, dict(self.info_labels), 1.0)
                out.append(m)
            elif d.kind == "gauge":
                m = Metric(d.name, d.doc, "gauge")
                m.add_sample(d.name, dict(lab), float(self.gauges[d.source].at(t)[0]))
                out.append(m)
            elif d.kind == "counter":
                m = Metric(d.name, d.doc, "counter")
                if d.source == "success":
                    for reason in ("stop", "length", "abort"):
                        value = float(self.counters["success_" + reason].at(t)[0])
                        labels = dict(lab, finished_reason=reason)
                        m.add_sample(d.name + "_total", labels, value)
                        if with_created:
                            m.add_sample(d.name + "_created", labels, created)
                else:
                    m.add_sample(d.name + "_total", dict(lab),
                                 float(self.counters[d.source].at(t)[0]))
                    if with_created:
                        m.add_sample(d.name + "_created", dict(lab), created)
                out.append(m)
            else:
                m = Metric(d.name, d.doc, "histogram")
                counts, count, total = self.hists[d.source].at(t)
                for edge, c in zip(d.buckets, counts):
                    m.add_sample(d.name + "_bucket", dict(lab, le=le_label(edge)), float(c[0]))
                m.add_sample(d.name + "_bucket", dict(lab, le="+Inf"), float(count[0]))
                m.add_sample(d.name + "_count", dict(lab), float(count[0]))
                m.add_sample(d.name + "_sum", dict(lab), float(total[0]))
                if with_created:
                    m.add_sample(d.name + "_created", dict(lab), created)
                out.append(m)
        return out

    def sample_columns(self, times) -> dict[str, np.ndarray]:
        """Every scraped series (but ``_created`` and info) at ``times``; keys are series names
        without the constant ``model_name``/``engine`` labels."""
        times = np.asarray(times, dtype=float)
        cols: dict[str, np.ndarray] = {}
        for d in self.defs:
            if d.kind == "gauge":
                cols[d.name] = self.gauges[d.source].at(times).astype(float)
            elif d.kind == "counter":
                if d.source == "success":
                    for reason in ("stop", "length", "abort"):
                        cols[series_name(d.name + "_total", {"finished_reason": reason})] = \
                            self.counters["success_" + reason].at(times).astype(float)
                else:
                    cols[d.name + "_total"] = self.counters[d.source].at(times).astype(float)
            elif d.kind == "histogram":
                counts, count, total = self.hists[d.source].at(times)
                for edge, c in zip(d.buckets, counts):
                    cols[series_name(d.name + "_bucket", {"le": le_label(edge)})] = c.astype(float)
                cols[series_name(d.name + "_bucket", {"le": "+Inf"})] = count.astype(float)
                cols[d.name + "_count"] = count.astype(float)
                cols[d.name + "_sum"] = total.astype(float)
        return cols


def run_metrics(result: SimResult, *, version: str = "v1", model_name: str | None = None,
                engine_index: int = 0, start_unix_s: float = 0.0) -> RunMetrics:
    """Prepare ``result``'s series for sampling (one pass over its tables).

    ``model_name`` defaults to the model preset's name (vLLM uses the served
    model name); ``engine_index`` is the ``engine`` label (V1 only).
    """
    if not isinstance(result, SimResult):
        raise KvsimError(f"result={type(result).__name__} is not supported: expected a "
                         "kvsim.SimResult")
    version = check_choice("version", version, list(VERSIONS))
    engine_index = check_int("engine_index", engine_index, min=0, max=1023)
    start_unix_s = check_float("start_unix_s", start_unix_s, min=0)
    cfg = result.config
    model_name = str(cfg.get("model", "model")) if model_name is None else str(model_name)
    if not model_name or "\n" in model_name:
        raise KvsimError(f"model_name={model_name!r} is not valid: expected a non-empty "
                         "single-line name")
    defs = metric_defs(version, int(cfg.get("max_model_len") or 4096))
    labels = {"model_name": model_name}
    if "engine" in VERSIONS[version]["labels"]:
        labels["engine"] = str(engine_index)

    tl, rq, pz, ev = result.timeline, result.requests, result.pauses, result.events
    total_blocks = result.total_blocks
    t_s = tl["t_s"]
    gauges = {
        "running": _Steps(t_s, tl["running"]),
        "waiting": _Steps(t_s, tl["waiting"]),
        "swapped": _Steps(t_s, tl["swapped"]),
        "kv_usage": _Steps(t_s, tl["kv_blocks_used"] / total_blocks),
    }
    finished = ~np.isnan(rq["finish_s"])
    truncated = rq["truncated"].astype(bool)
    counters = {
        "preemptions": _cumulative(ev["t_s"], np.ones(ev.num_rows, dtype=np.int64)),
        # V1: the whole prompt, once, when the request emits its first token
        "prompt_tokens_first": _cumulative(rq["first_token_s"], rq["prompt_tokens"]),
        # V0: every prefill token scheduled, recomputed ones included
        "prompt_tokens_all": _cumulative(t_s, tl["prefill_tokens"]),
        "generation_tokens": _cumulative(t_s, tl["emitted_tokens"]),
        "prefix_queries": _cumulative(rq["first_token_s"], rq["prefix_lookup_tokens"]),
        "prefix_hits": _cumulative(rq["first_token_s"], rq["prefix_hit_tokens"]),
        "success_stop": _cumulative(np.where(finished & ~truncated, rq["finish_s"], np.nan),
                                    np.ones(rq.num_rows, dtype=np.int64)),
        "success_length": _cumulative(np.where(finished & truncated, rq["finish_s"], np.nan),
                                      np.ones(rq.num_rows, dtype=np.int64)),
        "success_abort": _Steps([], np.zeros(0, dtype=np.int64)),
    }
    by_source = {d.source: d for d in defs}
    hists = {}
    fin_t = np.where(finished, rq["finish_s"], np.nan)

    def add(source, times, values, weights=None):
        if source in by_source:
            hists[source] = _Hist(by_source[source].buckets, times, values, weights)

    add("ttft", rq["first_token_s"], rq["first_token_s"] - rq["arrival_s"])
    # inter-token latency: one sample per decoding sequence per step (that step's gap), and
    # one per resume (the whole pause), as result.summary() counts them
    resumed = ~np.isnan(pz["end_s"])
    add("itl", np.concatenate([t_s, pz["end_s"][resumed]]),
        np.concatenate([tl["gap_s"], pz["end_s"][resumed] - pz["start_s"][resumed]]),
        np.concatenate([tl["decoding"].astype(float), np.ones(int(resumed.sum()))]))
    add("e2e", fin_t, rq["finish_s"] - rq["arrival_s"])
    add("req_preemptions", fin_t, rq["preemptions"])
    add("req_prompt_tokens", fin_t, rq["prompt_tokens"])
    add("req_generation_tokens", fin_t, rq["generated_tokens"])

    info = {"block_size": str(cfg.get("block_size")),
            "cache_dtype": str(cfg.get("kv_dtype")),
            "enable_prefix_caching": str(bool(cfg.get("enable_prefix_caching"))),
            "gpu_memory_utilization": str(cfg.get("gpu_memory_utilization")),
            "num_gpu_blocks": str(total_blocks)}
    if "engine" in labels:
        info["engine"] = labels["engine"]
    return RunMetrics(result, version, labels, defs, gauges, counters, hists, info,
                      start_unix_s, result.simulated_s)


def as_run_metrics(result, version: str = "v1", model_name: str | None = None) -> RunMetrics:
    """``result`` itself if it is a :class:`RunMetrics`, else :func:`run_metrics` of it: what
    every function that samples a run (a :class:`~kvsim.SimResult` or its metrics) starts from."""
    if isinstance(result, RunMetrics):
        return result
    return run_metrics(result, version=version, model_name=model_name)


def scrape_times(end_s: float, interval_s: float, until_s: float | None) -> np.ndarray:
    """The scrape instants ``0, interval_s, ...`` up to ``until_s`` (default ``end_s``), checked."""
    interval_s = check_float("interval_s", interval_s, min=0.1, max=3600)
    stop = end_s if until_s is None else check_float("until_s", until_s, min=0, max=10**7)
    n = int(np.floor(stop / interval_s + 1e-9)) + 1
    if n > 200_000:
        raise KvsimError(f"interval_s={interval_s} gives {n:,} scrapes: expected at most "
                         "200,000 (a longer interval or a shorter run)")
    return np.arange(n) * interval_s


def scrape(result, *, interval_s: float = 15.0, version: str = "v1",
           model_name: str | None = None, until_s: float | None = None) -> Table:
    """The series as Prometheus stores them, one row per scrape at ``0, interval_s, ...``.

    Columns: ``t_s`` and one per series (``vllm:num_preemptions_total``,
    ``vllm:inter_token_latency_seconds_bucket{le="0.05"}``, ...), the constant
    ``model_name``/``engine`` labels left out of the column names.
    """
    rm = as_run_metrics(result, version, model_name)
    times = scrape_times(rm.end_s, interval_s, until_s)
    return Table({"t_s": times, **rm.sample_columns(times)})
