"""A :class:`~kvsim.SimResult` as the Prometheus metrics a vLLM server exposes.

One job: turn a finished run into the series ``/metrics`` would have shown,
with the names, types, labels and histogram buckets of a chosen vLLM version,
so dashboards and alert rules can be practised on simulated incidents.
Exposition text always comes from the ``prometheus_client`` library (the one
vLLM itself uses), never from hand-written strings. Three forms:

* :func:`scrape` -- the series sampled every ``interval_s`` seconds, as
  Prometheus would store them (a :class:`kvsim.engine.result.Table` the chapter plots);
* :func:`promtool_input_series` / :func:`promtool_test` -- the same samples as
  the ``input_series`` of a ``promtool test rules`` file (YAML);
* :func:`exposition` -- the text a scrape at any instant ``t`` returns
  (Prometheus text format 0.0.4 or OpenMetrics), via
  ``prometheus_client.generate_latest`` on a registry filled from the run's
  state at ``t``.

What was read, and where (the public vLLM repository, github.com/vllm-project/vllm):

* ``vllm/v1/metrics/loggers.py`` at commit ``005a810`` (the V1
  ``PrometheusStatLogger`` of the 0.10 series: its deprecation comments say
  "Deprecated in 0.9 ... in 0.10, only enable if show_hidden_metrics"): the
  names, types, documentation strings and the label names
  ``["model_name", "engine"]`` (``engine`` is the engine-core index as a
  string, ``"0"`` for one engine); ``vllm:request_success`` adds
  ``finished_reason``; ``vllm:cache_config_info`` is a gauge set to 1 whose
  labels are the cache config's fields plus ``engine``.
* ``vllm/v1/metrics/buckets.py`` at commit ``139b1c3`` (current main): the
  bucket families -- TTFT ``0.001 .. 2560``, inter-token latency ``0.01 .. 80``,
  request latency ``0.3 .. 7680``, ``vllm:request_num_preemptions``
  ``(1, 2, 3, 4, 5, 10, 20)``, and token counts in a 1-2-5 series up to
  ``max_model_len``.
* ``vllm/v1/metrics/stats.py`` (``IterationStats.update_from_output``): the
  prompt-token counter grows by the whole prompt when a request emits its
  first token (so a recompute after a preemption never shows in it), TTFT is
  that instant minus arrival, and every later token observes the time since
  the request's previous token (its inter-token latency, which is how a
  resumed request's pause shows up as one long gap).
* ``vllm/engine/metrics.py`` at commit ``00c33e8`` (V0, ``Metrics``): the V0
  names (``vllm:gpu_cache_usage_perc``, ``vllm:cpu_cache_usage_perc``,
  ``vllm:num_requests_swapped``, ``vllm:time_per_output_token_seconds``), the
  label ``model_name`` alone, V0's shorter buckets, ``vllm:cache_config`` as an
  ``Info`` (scraped as ``vllm:cache_config_info``) and
  ``prometheus_client.disable_created_metrics()`` (no ``_created`` samples).

Versions (``version=``): ``"v1"`` (default; current V1: ``vllm:kv_cache_usage_perc``,
``vllm:inter_token_latency_seconds``, ``vllm:request_num_preemptions``, no
deprecated names), ``"v1-0.10"`` (the 0.10 logger: the deprecated
``vllm:gpu_cache_usage_perc`` and ``vllm:gpu_prefix_cache_*`` beside the new
names, ``vllm:time_per_output_token_seconds`` for the inter-token histogram),
``"v0"`` (the V0 engine).

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

Explained in chapter 4, *Detecting preemption*.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kvsim.engine.loop import build_engine, simulate
from kvsim.engine.result import SimResult, Table
from kvsim.errors import KvsimError, check_choice, check_float, check_int
from kvsim.runs.scenarios import get_scenario

__all__ = ["VERSIONS", "MetricDef", "metric_defs", "RunMetrics", "run_metrics", "scrape",
           "exposition", "promtool_input_series", "promtool_test", "kv_usage_breakdown",
           "histogram_quantile", "series_name", "TTFT_BUCKETS", "ITL_BUCKETS",
           "REQUEST_LATENCY_BUCKETS", "REQUEST_NUM_PREEMPTIONS_BUCKETS", "one_two_five_buckets"]

# --- buckets, as vLLM's source has them ---------------------------------------------------

#: vllm/v1/metrics/buckets.py TIME_TO_FIRST_TOKEN_BUCKETS (same in loggers.py at 005a810).
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
                5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
#: INTER_TOKEN_LATENCY_BUCKETS (V1's time_per_output_token used the same list).
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
               7.5, 10.0, 20.0, 40.0, 80.0)
#: REQUEST_LATENCY_BUCKETS (e2e, queue, inference, prefill, decode).
REQUEST_LATENCY_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
                           40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
#: REQUEST_NUM_PREEMPTIONS_BUCKETS: the first bucket holds never- and once-preempted requests.
REQUEST_NUM_PREEMPTIONS_BUCKETS = (1, 2, 3, 4, 5, 10, 20)
#: V0 (vllm/engine/metrics.py at 00c33e8).
V0_TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
                   5.0, 7.5, 10.0)
V0_TPOT_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)
V0_E2E_BUCKETS = (1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0)


def one_two_five_buckets(max_value: int) -> tuple[int, ...]:
    """vLLM's ``build_1_2_5_buckets``: 1, 2, 5, 10, 20, 50, ... up to ``max_value``."""
    out, exp = [], 0
    while True:
        for m in (1, 2, 5):
            v = m * 10 ** exp
            if v > max_value:
                return tuple(out)
            out.append(v)
        exp += 1


@dataclass(frozen=True)
class MetricDef:
    """One metric family: ``name`` as registered (counters without ``_total``)."""

    name: str
    kind: str            # "counter" | "gauge" | "histogram" | "info"
    doc: str
    source: str          # what in the run it is made of (see RunMetrics)
    buckets: tuple = ()
    deprecated: str = ""  # the name that replaces it, if deprecated

    @property
    def scraped_names(self) -> tuple[str, ...]:
        """The sample names a scrape shows (``_total``, ``_created``, ``_bucket`` ...)."""
        if self.kind == "counter":
            return (self.name + "_total", self.name + "_created")
        if self.kind == "histogram":
            return tuple(self.name + s for s in ("_bucket", "_count", "_sum", "_created"))
        if self.kind == "info":
            return (self.name,)
        return (self.name,)


def _v1_defs(max_model_len: int, *, v010: bool) -> list[MetricDef]:
    tok = one_two_five_buckets(max_model_len)
    d = [
        MetricDef("vllm:num_requests_running", "gauge",
                  "Number of requests in model execution batches.", "running"),
        MetricDef("vllm:num_requests_waiting", "gauge",
                  "Number of requests waiting to be processed.", "waiting"),
    ]
    if v010:
        d.append(MetricDef("vllm:gpu_cache_usage_perc", "gauge",
                           "GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use "
                           "vllm:kv_cache_usage_perc instead.", "kv_usage",
                           deprecated="vllm:kv_cache_usage_perc"))
        d.append(MetricDef("vllm:gpu_prefix_cache_queries", "counter",
                           "GPU prefix cache queries, in terms of number of queried"
                           "tokens. DEPRECATED: Use vllm:prefix_cache_queries instead.",
                           "prefix_queries", deprecated="vllm:prefix_cache_queries"))
        d.append(MetricDef("vllm:gpu_prefix_cache_hits", "counter",
                           "GPU prefix cache hits, in terms of number of cached tokens. "
                           "DEPRECATED: Use vllm:prefix_cache_hits instead.", "prefix_hits",
                           deprecated="vllm:prefix_cache_hits"))
    d += [
        MetricDef("vllm:kv_cache_usage_perc", "gauge",
                  "KV-cache usage. 1 means 100 percent usage.", "kv_usage"),
        MetricDef("vllm:prefix_cache_queries", "counter",
                  "Prefix cache queries, in terms of number of queried tokens.", "prefix_queries"),
        MetricDef("vllm:prefix_cache_hits", "counter",
                  "Prefix cache hits, in terms of number of cached tokens.", "prefix_hits"),
        MetricDef("vllm:num_preemptions", "counter",
                  "Cumulative number of preemption from the engine.", "preemptions"),
        MetricDef("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.",
                  "prompt_tokens_first"),
        MetricDef("vllm:generation_tokens", "counter", "Number of generation tokens processed.",
                  "generation_tokens"),
        MetricDef("vllm:request_success", "counter", "Count of successfully processed requests.",
                  "success"),
        MetricDef("vllm:request_prompt_tokens", "histogram", "Number of prefill tokens processed.",
                  "req_prompt_tokens", tok),
        MetricDef("vllm:request_generation_tokens", "histogram",
                  "Number of generation tokens processed.", "req_generation_tokens", tok),
        MetricDef("vllm:time_to_first_token_seconds", "histogram",
                  "Histogram of time to first token in seconds.", "ttft", TTFT_BUCKETS),
    ]
    if v010:
        d.append(MetricDef("vllm:time_per_output_token_seconds", "histogram",
                           "Histogram of time per output token in seconds.", "itl", ITL_BUCKETS,
                           deprecated="vllm:inter_token_latency_seconds"))
    else:
        d.append(MetricDef("vllm:inter_token_latency_seconds", "histogram",
                           "Histogram of inter-token latency in seconds.", "itl", ITL_BUCKETS))
        d.append(MetricDef("vllm:request_num_preemptions", "histogram",
                           "Number of preemptions per request.", "req_preemptions",
                           REQUEST_NUM_PREEMPTIONS_BUCKETS))
    d += [
        MetricDef("vllm:e2e_request_latency_seconds", "histogram",
                  "Histogram of e2e request latency in seconds.", "e2e", REQUEST_LATENCY_BUCKETS),
        MetricDef("vllm:cache_config_info", "info", "Information of the LLMEngine CacheConfig",
                  "cache_config"),
    ]
    return d


def _v0_defs(max_model_len: int) -> list[MetricDef]:
    tok = one_two_five_buckets(max_model_len)
    return [
        MetricDef("vllm:cache_config", "info", "information of cache_config", "cache_config"),
        MetricDef("vllm:num_requests_running", "gauge",
                  "Number of requests currently running on GPU.", "running"),
        MetricDef("vllm:num_requests_waiting", "gauge",
                  "Number of requests waiting to be processed.", "waiting"),
        MetricDef("vllm:num_requests_swapped", "gauge", "Number of requests swapped to CPU.",
                  "swapped"),
        MetricDef("vllm:gpu_cache_usage_perc", "gauge",
                  "GPU KV-cache usage. 1 means 100 percent usage.", "kv_usage"),
        MetricDef("vllm:num_preemptions", "counter",
                  "Cumulative number of preemption from the engine.", "preemptions"),
        MetricDef("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.",
                  "prompt_tokens_all"),
        MetricDef("vllm:generation_tokens", "counter", "Number of generation tokens processed.",
                  "generation_tokens"),
        MetricDef("vllm:time_to_first_token_seconds", "histogram",
                  "Histogram of time to first token in seconds.", "ttft", V0_TTFT_BUCKETS),
        MetricDef("vllm:time_per_output_token_seconds", "histogram",
                  "Histogram of time per output token in seconds.", "itl", V0_TPOT_BUCKETS),
        MetricDef("vllm:e2e_request_latency_seconds", "histogram",
                  "Histogram of end to end request latency in seconds.", "e2e", V0_E2E_BUCKETS),
        MetricDef("vllm:request_prompt_tokens", "histogram", "Number of prefill tokens processed.",
                  "req_prompt_tokens", tok),
        MetricDef("vllm:request_generation_tokens", "histogram",
                  "Number of generation tokens processed.", "req_generation_tokens", tok),
        MetricDef("vllm:request_success", "counter", "Count of successfully processed requests.",
                  "success"),
    ]


#: Each version: its label names, whether counters carry ``_created``, and its source.
VERSIONS = {
    "v1": dict(labels=("model_name", "engine"), created=True,
               source="vllm/v1/metrics/loggers.py (V1) with buckets.py at 139b1c3"),
    "v1-0.10": dict(labels=("model_name", "engine"), created=True,
                    source="vllm/v1/metrics/loggers.py at 005a810 (0.10 series)"),
    "v0": dict(labels=("model_name",), created=False,
               source="vllm/engine/metrics.py at 00c33e8 (V0)"),
}


def metric_defs(version: str = "v1", max_model_len: int = 4096) -> list[MetricDef]:
    """The metric families of ``version`` (see :data:`VERSIONS`)."""
    version = check_choice("version", version, list(VERSIONS))
    max_model_len = check_int("max_model_len", max_model_len, min=1, max=10**8)
    if version == "v0":
        return _v0_defs(max_model_len)
    return _v1_defs(max_model_len, v010=(version == "v1-0.10"))


def series_name(name: str, labels: dict | None = None) -> str:
    """``name{k="v",...}`` with labels sorted, as Prometheus prints a series."""
    if not labels:
        return name
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


def _le(edge) -> str:
    """A bucket edge as prometheus_client writes it (``floatToGoString``: 1.0 -> "1.0")."""
    from prometheus_client.utils import floatToGoString
    return floatToGoString(edge)


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
        from prometheus_client.core import Metric
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
                    m.add_sample(d.name + "_bucket", dict(lab, le=_le(edge)), float(c[0]))
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
                    cols[series_name(d.name + "_bucket", {"le": _le(edge)})] = c.astype(float)
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


def _prepare(result, version, model_name):
    if isinstance(result, RunMetrics):
        return result
    return run_metrics(result, version=version, model_name=model_name)


def _scrape_times(end_s: float, interval_s: float, until_s: float | None) -> np.ndarray:
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
    rm = _prepare(result, version, model_name)
    times = _scrape_times(rm.end_s, interval_s, until_s)
    return Table({"t_s": times, **rm.sample_columns(times)})


def exposition(result, t: float, *, version: str = "v1", model_name: str | None = None,
               openmetrics: bool = False) -> str:
    """What ``GET /metrics`` returns at simulated time ``t`` (prometheus_client's exposition)."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

    rm = _prepare(result, version, model_name)
    t = check_float("t", t, min=0)
    registry = CollectorRegistry(auto_describe=False)

    class _At:
        def collect(self):
            return rm.families(t)

    registry.register(_At())
    gen = generate_openmetrics if openmetrics else generate_latest
    return gen(registry).decode("utf-8")


def _fmt(v: float) -> str:
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


def promtool_input_series(result, *, interval_s: float = 15.0, version: str = "v1",
                          model_name: str | None = None, until_s: float | None = None,
                          extra_labels: dict | None = None) -> list[dict]:
    """``input_series`` entries of a ``promtool test rules`` file: one per scraped series.

    ``extra_labels`` (e.g. ``{"job": "vllm", "instance": "gpu-0"}``) are added
    to every series, as Prometheus's target labels would be.
    """
    rm = _prepare(result, version, model_name)
    times = _scrape_times(rm.end_s, interval_s, until_s)
    base = dict(rm.labels, **(extra_labels or {}))
    out = []
    for key, values in rm.sample_columns(times).items():
        name, _, rest = key.partition("{")
        labels = dict(base)
        if rest:
            for part in rest.rstrip("}").split(","):
                k, _, v = part.partition("=")
                labels[k] = v.strip('"')
        out.append({"series": series_name(name, labels),
                    "values": " ".join(_fmt(v) for v in values)})
    return out


def promtool_test(result, *, rule_files: list[str], alert_tests: list[dict] | None = None,
                  promql_tests: list[dict] | None = None, interval_s: float = 15.0,
                  evaluation_interval_s: float | None = None, version: str = "v1",
                  model_name: str | None = None, until_s: float | None = None,
                  extra_labels: dict | None = None) -> str:
    """A complete ``promtool test rules`` file (YAML text) whose input is this run.

    ``alert_tests`` are promtool's ``alert_rule_test`` entries (``eval_time``,
    ``alertname``, ``exp_alerts``); ``promql_tests`` its ``promql_expr_test``.
    """
    import yaml

    if not rule_files:
        raise KvsimError("rule_files=[] is empty: expected at least one rule file path")
    interval_s = check_float("interval_s", interval_s, min=0.1, max=3600)
    test: dict[str, Any] = {
        "interval": f"{_fmt(interval_s)}s",
        "input_series": promtool_input_series(result, interval_s=interval_s, version=version,
                                              model_name=model_name, until_s=until_s,
                                              extra_labels=extra_labels),
    }
    if alert_tests:
        test["alert_rule_test"] = list(alert_tests)
    if promql_tests:
        test["promql_expr_test"] = list(promql_tests)
    doc = {"rule_files": [str(f) for f in rule_files],
           "evaluation_interval": f"{_fmt(evaluation_interval_s or interval_s)}s",
           "tests": [test]}
    return yaml.safe_dump(doc, sort_keys=False, width=10**9)


# --- PromQL's histogram_quantile, for the chapter's panels --------------------------------

def histogram_quantile(q: float, edges, counts) -> float:
    """PromQL's ``histogram_quantile`` over classic buckets (linear inside a bucket).

    ``edges`` are the finite upper bounds, ``counts`` the cumulative counts for
    each edge followed by the ``+Inf`` count. As in Prometheus: NaN with no
    observations; a rank in the ``+Inf`` bucket returns the highest finite edge;
    the first bucket interpolates from 0 (for positive edges).
    """
    q = check_float("q", q, min=0, max=1)
    edges = [float(e) for e in edges]
    counts = [float(c) for c in counts]
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


# --- what the KV gauge counts -------------------------------------------------------------

class _Stop(Exception):
    pass


def kv_usage_breakdown(scenario: str, at_s: float, **overrides) -> dict:
    """What ``vllm:kv_cache_usage_perc`` counts at ``at_s``, beside what it does not.

    Reads the engine's state as a scrape at ``at_s`` sees it: after the last
    step that ended at or before ``at_s`` (the run with jumps finds that step;
    the same run step by step stops there). Returns integers and fractions side
    by side:

    * ``blocks_total``, ``blocks_held`` (by running requests, partly filled
      ones included) and ``gauge`` = held / total: what the metric shows;
    * ``tokens_stored`` (tokens whose KV is actually in those blocks),
      ``token_capacity`` = total x block size and ``token_fill`` = stored /
      capacity; ``slack_tokens`` = held x block size - stored (the unused tail
      of every request's last block);
    * ``blocks_cached_free`` (freed full blocks still in the prefix cache:
      evictable, so the gauge counts them as free) and ``blocks_blank``.
    """

    at_s = check_float("at_s", at_s, min=0)
    kwargs = get_scenario(scenario, **overrides)
    workload = kwargs.pop("workload")
    model, gpu = kwargs.pop("model"), kwargs.pop("gpu")
    ends = simulate(workload, model=model, gpu=gpu, **kwargs).timeline["t_s"]
    steps = int(np.searchsorted(ends, at_s, side="right"))     # steps ended by at_s
    if steps == 0 or at_s > ends[-1]:
        raise KvsimError(f"at_s={at_s} is out of range: expected a time from the first step's "
                         f"end ({ends[0]:.3f} s) to the run's end ({ends[-1]:.1f} s)")
    engine = build_engine(workload, model, gpu, dict(kwargs, step_by_step=True))
    seen: dict = {}

    def watch(e):
        if e.steps >= steps:
            snap = e.snapshot()
            running = set(snap.running)
            stored = sum(r.tokens for r in snap.requests if r.rid in running)
            seen.update(t_s=snap.t_s, stored=int(stored), free=snap.free_blocks,
                        cached=snap.cached_free_blocks, running=len(running))
            raise _Stop

    try:
        engine.run(after_step=watch)
    except _Stop:
        pass
    total, bs = int(engine.cfg.num_gpu_blocks), int(engine.cfg.block_size)
    held = total - seen["free"]
    return {
        "t_s": seen["t_s"], "requests_running": seen["running"],
        "blocks_total": total, "blocks_held": held, "gauge": held / total,
        "block_size": bs, "tokens_stored": seen["stored"], "token_capacity": total * bs,
        "token_fill": seen["stored"] / (total * bs),
        "slack_tokens": held * bs - seen["stored"],
        "blocks_cached_free": seen["cached"], "blocks_blank": seen["free"] - seen["cached"],
    }
