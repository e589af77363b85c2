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
* with vLLM's host tier (``kv_offloading_size``) the connector's transfer
  families are written (:func:`kvsim.observe.catalogue.kv_offload_defs`), but
  ``vllm:external_prefix_cache_*`` and ``prompt_tokens_by_source{source=
  "external_kv_transfer"}`` stay 0: kvsim does not log each admission's connector
  lookup, and the tier's loads show in ``vllm:kv_offload_load_*``.

Explained in chapter 4, *Detecting preemption* (*An incident, as Prometheus saw it*).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kvsim.engine.blocks.host_tier import TierOp
from kvsim.engine.result import SimResult, Table
from kvsim.errors import KvsimError, check_choice, check_float, check_int
from kvsim.units import MAX_SIMULATED_S

from .catalogue import VERSIONS, MetricDef, le_label, metric_defs, series_name
from .text_format import Family

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["RunMetrics", "run_metrics", "as_run_metrics", "scrape_times", "scrape",
           "cache_config_labels", "CACHE_CONFIG_FIELDS"]

# --- the run as step functions of time ----------------------------------------------------

class _Steps:
    """A piecewise-constant function of time: ``values[i]`` from ``times[i]`` on (0 before)."""

    def __init__(self, times: ArrayLike, values: ArrayLike) -> None:
        self.times = np.asarray(times, dtype=float)
        self.values = np.asarray(values)

    def at(self, t: ArrayLike) -> NDArray[Any]:
        times = np.atleast_1d(np.asarray(t, dtype=float))
        i = np.searchsorted(self.times, times, side="right") - 1
        zero = np.zeros(1, dtype=self.values.dtype)
        vals = np.concatenate([zero, self.values]) if self.values.size else zero
        picked: NDArray[Any] = vals[i + 1]
        return picked


def _cumulative(times: ArrayLike, weights: ArrayLike) -> _Steps:
    time_array = np.asarray(times, dtype=float)
    weight_array = np.asarray(weights)
    keep = ~np.isnan(time_array)
    time_array, weight_array = time_array[keep], weight_array[keep]
    order = np.argsort(time_array, kind="stable")
    return _Steps(time_array[order], np.cumsum(weight_array[order]))


class _Hist:
    """Observations (time, value, weight) of one histogram, cumulative per bucket."""

    def __init__(self, edges: Iterable[float], times: ArrayLike, values: ArrayLike,
                 weights: ArrayLike | None = None) -> None:
        self.edges = tuple(float(e) for e in edges)
        time_array = np.asarray(times, dtype=float)
        value_array = np.asarray(values, dtype=float)
        weight_array = (np.ones(time_array.size) if weights is None
                        else np.asarray(weights, dtype=float))
        keep = ~np.isnan(time_array) & (weight_array > 0)
        time_array, value_array, weight_array = (time_array[keep], value_array[keep],
                                                 weight_array[keep])
        # bucket i holds value <= edges[i] (Prometheus "le"); the last is +Inf
        idx = np.searchsorted(np.asarray(self.edges), value_array, side="left")
        self.count = _cumulative(time_array, weight_array)
        self.sum = _cumulative(time_array, value_array * weight_array)
        self.per_bucket = [_cumulative(time_array[idx <= b], weight_array[idx <= b])
                           for b in range(len(self.edges))]

    def at(self, t: ArrayLike) -> tuple[list[NDArray[Any]], NDArray[Any], NDArray[Any]]:
        """(cumulative counts per edge, count, sum) at times ``t`` (arrays)."""
        return ([b.at(t) for b in self.per_bucket], self.count.at(t), self.sum.at(t))


@dataclass
class RunMetrics:
    """The series of one run, ready to be sampled at any time (see :func:`run_metrics`)."""

    result: SimResult
    version: str
    labels: dict[str, str]
    defs: list[MetricDef]
    gauges: dict[str, _Steps]
    counters: dict[str, _Steps]
    hists: dict[str, _Hist]
    info_labels: dict[str, str]
    start_unix_s: float
    end_s: float

    def change_times(self) -> NDArray[np.float64]:
        """Every instant at which some series changes (sorted, unique): between two of them
        the exposition is the same, whatever the time (the series are step functions)."""
        cached: NDArray[np.float64] | None = self.__dict__.get("_change_times")
        if cached is None:
            parts = [s.times for s in (*self.gauges.values(), *self.counters.values())]
            for h in self.hists.values():
                parts += [h.count.times, h.sum.times, *(b.times for b in h.per_bucket)]
            cached = np.unique(np.concatenate(parts)) if parts else np.zeros(0)
            self.__dict__["_change_times"] = cached
        return cached

    def state_index(self, t: float) -> int:
        """How many changes have happened by time ``t``: two times with the same index give
        the same exposition (:meth:`change_times`)."""
        return int(np.searchsorted(self.change_times(), float(t), side="right"))

    def value(self, source: str, t: ArrayLike) -> NDArray[Any]:
        """The value(s) of a gauge or counter source at time(s) ``t``."""
        if source in self.gauges:
            return self.gauges[source].at(t)
        return self.counters[source].at(t)

    def families(self, t: float) -> list[Family]:
        """The metric families at time ``t``, ready for :mod:`kvsim.observe.text_format`."""
        t = float(t)
        lab = self.labels
        out = []
        created = self.start_unix_s
        with_created = VERSIONS[self.version]["created"]
        for d in self.defs:
            if d.kind == "info":
                # V1 registers a gauge named ..._info; V0 an info family (samples ..._info)
                is_gauge = d.name.endswith("_info")
                fam = Family(d.name, d.doc, "gauge" if is_gauge else "info")
                fam.add(d.name if is_gauge else d.name + "_info", dict(self.info_labels), 1.0)
            elif d.kind == "gauge":
                fam = Family(d.name, d.doc, "gauge")
                for extra, source in d.sources():
                    fam.add(d.name, dict(lab, **extra), float(self.gauges[source].at(t)[0]))
            elif d.kind == "counter":
                fam = Family(d.name, d.doc, "counter")
                for extra, source in d.sources():
                    labels = dict(lab, **extra)
                    fam.add(d.name + "_total", labels, float(self.counters[source].at(t)[0]))
                    if with_created:
                        fam.add(d.name + "_created", labels, created)
            else:
                fam = Family(d.name, d.doc, "histogram")
                for extra, source in d.sources():
                    labels = dict(lab, **extra)
                    counts, count, total = self.hists[source].at(t)
                    for edge, c in zip(d.buckets, counts, strict=True):
                        fam.add(d.name + "_bucket", dict(labels, le=le_label(edge)), float(c[0]))
                    fam.add(d.name + "_bucket", dict(labels, le="+Inf"), float(count[0]))
                    fam.add(d.name + "_count", labels, float(count[0]))
                    fam.add(d.name + "_sum", labels, float(total[0]))
                    if with_created:
                        fam.add(d.name + "_created", labels, created)
            out.append(fam)
        return out

    def sample_columns(self, times: ArrayLike) -> dict[str, NDArray[np.float64]]:
        """Every scraped series (but ``_created`` and info) at ``times``; keys are series names
        without the constant ``model_name``/``engine`` labels."""
        times = np.asarray(times, dtype=float)
        cols: dict[str, NDArray[np.float64]] = {}
        for d in self.defs:
            if d.kind == "gauge":
                for extra, source in d.sources():
                    cols[series_name(d.name, extra)] = \
                        self.gauges[source].at(times).astype(float)
            elif d.kind == "counter":
                for extra, source in d.sources():
                    cols[series_name(d.name + "_total", extra)] = \
                        self.counters[source].at(times).astype(float)
            elif d.kind == "histogram":
                for extra, source in d.sources():
                    counts, count, total = self.hists[source].at(times)
                    for edge, c in zip(d.buckets, counts, strict=True):
                        cols[series_name(d.name + "_bucket", dict(extra, le=le_label(edge)))] = \
                            c.astype(float)
                    cols[series_name(d.name + "_bucket", dict(extra, le="+Inf"))] = \
                        count.astype(float)
                    cols[series_name(d.name + "_count", extra)] = count.astype(float)
                    cols[series_name(d.name + "_sum", extra)] = total.astype(float)
        return cols


#: CacheConfig's fields in declaration order (vllm/config/cache.py at 002f10e): its
#: ``metrics_info()`` is ``{field: str(value)}`` over the instance's ``__dict__``, the labels
#: of ``vllm:cache_config_info`` (plus ``engine``). ``kv_cache_layout`` is left out: vLLM
#: resolves it per GPU at start-up, and kvsim does not know which it would pick.
CACHE_CONFIG_FIELDS = (
    "block_size", "user_specified_block_size", "user_specified_mamba_block_size",
    "prefix_match_unit", "gpu_memory_utilization", "cache_dtype", "is_attention_free",
    "num_gpu_blocks_override", "sliding_window", "enable_prefix_caching",
    "prefix_caching_hash_algo", "attn_group_size", "prefix_cache_retention_interval",
    "kv_cache_dtype_skip_layers", "mamba_page_size_padded", "skip_page_size_padded",
    "mamba_block_size", "mamba_cache_dtype", "mamba_ssm_cache_dtype", "mamba_cache_mode",
    "enable_mamba_fine_grained_prefix_cache", "replayssm_buffer_len", "use_replayssm",
    "use_kda_recoverssm", "num_gpu_blocks", "num_cpu_blocks", "effective_attention_block_size",
    "kv_cache_size_tokens", "kv_cache_max_concurrency", "kv_sharing_fast_prefill",
    "kv_cache_memory_bytes", "kv_offloading_size", "kv_offloading_backend",
    "_block_size_resolved")


def cache_config_labels(cfg: Mapping[str, Any], version: str, total_blocks: int) -> dict[str, str]:
    """The labels of ``vllm:cache_config_info`` (V0: ``vllm:cache_config``) for a run's config.

    Current V1: every field of :data:`CACHE_CONFIG_FIELDS`, from the run where
    kvsim has the setting and vLLM's default elsewhere (``cache_dtype`` is
    ``"auto"`` unless the KV cache is FP8, as the CLI flag reads). The 0.10
    series and V0: the five fields the book has always shown.
    """
    bs = int(cfg.get("block_size") or 16)
    dtype = "fp8" if str(cfg.get("kv_dtype", "")).startswith("fp8") else "auto"
    util = str(cfg.get("gpu_memory_utilization"))
    caching = str(bool(cfg.get("enable_prefix_caching")))
    if version != "v1":
        return {"block_size": str(bs), "cache_dtype": dtype, "enable_prefix_caching": caching,
                "gpu_memory_utilization": util, "num_gpu_blocks": str(total_blocks)}
    tokens = total_blocks * bs
    max_model_len = int(cfg.get("max_model_len") or 4096)
    # kvsim's "dense" is vLLM's None (a result cached before the option reads as vLLM's 0)
    interval = cfg.get("prefix_cache_retention_interval", 0)
    retention = "None" if interval == "dense" else str(interval)
    known = {
        "block_size": str(bs), "user_specified_block_size": str(bs != 16),
        "gpu_memory_utilization": util, "cache_dtype": dtype,
        "enable_prefix_caching": caching, "num_gpu_blocks": str(total_blocks),
        "effective_attention_block_size": str(bs), "kv_cache_size_tokens": str(tokens),
        "kv_cache_max_concurrency": str(tokens / max_model_len),
        "kv_offloading_size": str(cfg.get("kv_offloading_size")),
        "prefix_cache_retention_interval": retention,
    }
    defaults = {"prefix_caching_hash_algo": "sha256",
                "kv_cache_dtype_skip_layers": "[]", "mamba_cache_dtype": "auto",
                "mamba_ssm_cache_dtype": "auto", "mamba_cache_mode": "none",
                "replayssm_buffer_len": "16", "kv_offloading_backend": "native",
                "_block_size_resolved": "True"}
    false = {"user_specified_mamba_block_size", "is_attention_free",
             "enable_mamba_fine_grained_prefix_cache", "use_replayssm", "use_kda_recoverssm",
             "kv_sharing_fast_prefill"}
    return {f: known.get(f, defaults.get(f, "False" if f in false else "None"))
            for f in CACHE_CONFIG_FIELDS}


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
    # the host tier's families: vLLM's connector (SGLang's HiCache is not vLLM's)
    offloading = result.host_tier is not None and cfg.get("kv_offloading_size") is not None
    defs = metric_defs(version, int(cfg.get("max_model_len") or 4096), host_tier=offloading)
    labels = {"model_name": model_name}
    if "engine" in VERSIONS[version]["labels"]:
        labels["engine"] = str(engine_index)

    tl, rq, pz, ev = result.timeline, result.requests, result.pauses, result.events
    total_blocks = result.total_blocks
    t_s = tl["t_s"]
    n = rq.num_rows
    never = _Steps([], np.zeros(0, dtype=np.int64))          # a series that stays 0
    gauges = {
        "running": _Steps(t_s, tl["running"]),
        "waiting": _Steps(t_s, tl["waiting"]),
        # NOTE(metrics-export): kvsim defers no request (no LoRA budget, no KV transfer)
        "waiting_by_reason:capacity": _Steps(t_s, tl["waiting"]),
        "waiting_by_reason:deferred": never,
        # an engine that never sleeps: awake = 1 from the start
        "sleep_state:awake": _Steps([0.0], np.ones(1, dtype=np.int64)),
        "sleep_state:weights_offloaded": never,
        "sleep_state:discard_all": never,
        "swapped": _Steps(t_s, tl["swapped"]),
        "kv_usage": _Steps(t_s, tl["kv_blocks_used"] / total_blocks),
    }
    first = rq["first_token_s"]
    finished = ~np.isnan(rq["finish_s"])
    fin_t = np.where(finished, rq["finish_s"], np.nan)
    prompt, hit = rq["prompt_tokens"], rq["prefix_hit_tokens"]
    generated = rq["generated_tokens"]
    # the max_tokens a request carries: the engine's max_tokens when set, else the server's
    # default (what max_model_len leaves after the prompt), as vLLM's OpenAI server fills it
    max_model_len = int(cfg.get("max_model_len") or 4096)
    max_tokens = np.full(n, cfg["max_tokens"], dtype=np.int64) if cfg.get("max_tokens") \
        else np.maximum(max_model_len - prompt, 1)
    # vLLM checks length before a stop token: an answer that reached max_tokens (or
    # max_model_len) finished for "length", any other finished for "stop"
    length = finished & (rq["truncated"].astype(bool) | (generated >= max_tokens))
    ones = np.ones(n, dtype=np.int64)
    counters = {
        "zero": never,
        "preemptions": _cumulative(ev["t_s"], np.ones(ev.num_rows, dtype=np.int64)),
        # V1: the whole prompt, once, when the request emits its first token
        "prompt_tokens_first": _cumulative(first, prompt),
        "prompt_by_source:local_compute": _cumulative(first, prompt - hit),
        "prompt_by_source:local_cache_hit": _cumulative(first, hit),
        "prompt_by_source:external_kv_transfer": never,
        "prompt_cached": _cumulative(first, hit),
        # V0: every prefill token scheduled, recomputed ones included
        "prompt_tokens_all": _cumulative(t_s, tl["prefill_tokens"]),
        "generation_tokens": _cumulative(t_s, tl["emitted_tokens"]),
        "prefix_queries": _cumulative(first, rq["prefix_lookup_tokens"]),
        "prefix_hits": _cumulative(first, hit),
        "success:stop": _cumulative(np.where(finished & ~length, fin_t, np.nan), ones),
        "success:length": _cumulative(np.where(length, fin_t, np.nan), ones),
        "success:abort": never, "success:error": never, "success:repetition": never,
    }
    by_source = {d.source: d for d in defs}
    hists: dict[str, _Hist] = {}

    def add(source: str, times: ArrayLike, values: ArrayLike,
            weights: ArrayLike | None = None) -> None:
        if source in by_source:
            hists[source] = _Hist(by_source[source].buckets, times, values, weights)

    add("ttft", first, rq["ttft_s"])
    # inter-token latency: one sample per decoding sequence per step (that step's gap), and
    # one per resume (the whole pause), as result.summary() counts them
    resumed = ~np.isnan(pz["end_s"])
    add("itl", np.concatenate([t_s, pz["end_s"][resumed]]),
        np.concatenate([tl["gap_s"], pz["end_s"][resumed] - pz["start_s"][resumed]]),
        np.concatenate([tl["decoding"].astype(float), np.ones(int(resumed.sum()))]))
    # tokens per step: the prompts of the requests whose first token came in the step
    # (current V1: less their cached tokens) and every token the step emitted
    step_of_first = np.searchsorted(t_s, first[~np.isnan(first)])
    started = ~np.isnan(first)

    def per_step(weights: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.bincount(step_of_first, weights=weights[started],
                           minlength=len(t_s)).astype(np.float64, copy=False)

    emitted = tl["emitted_tokens"].astype(float)
    add("step_tokens", t_s, per_step((prompt - hit).astype(float)) + emitted)
    add("step_tokens_v010", t_s, per_step(prompt.astype(float)) + emitted)
    # n = 1 for every request (kvsim samples one sequence per request)
    add("req_n", first, ones)
    add("req_max_generation", first, max_tokens)
    # a finished request's phases (vllm/v1/metrics/stats.py, FinishedRequestStats)
    scheduled = rq["first_scheduled_s"]
    add("e2e", fin_t, rq["finish_s"] - rq["arrival_s"])
    add("queue_time", fin_t, scheduled - rq["arrival_s"])
    add("inference_time", fin_t, rq["finish_s"] - scheduled)
    add("prefill_time", fin_t, first - scheduled)
    add("decode_time", fin_t, rq["finish_s"] - first)
    with np.errstate(divide="ignore", invalid="ignore"):
        tpot = (rq["finish_s"] - first) / (generated - 1)
        per_prefill_token = (first - scheduled) / prompt
    add("req_tpot", np.where(generated > 1, fin_t, np.nan), tpot)   # only with 2+ tokens
    add("prefill_per_token", np.where(prompt > 0, fin_t, np.nan), per_prefill_token)
    add("req_max_tokens", fin_t, max_tokens)
    add("req_prefill_computed", fin_t, prompt - hit)
    add("req_preemptions", fin_t, rq["preemptions"])
    add("req_prompt_tokens", fin_t, prompt)
    add("req_generation_tokens", fin_t, generated)

    if offloading and result.host_tier is not None:
        _add_host_tier(result.host_tier, counters, add)

    info = cache_config_labels(cfg, version, total_blocks)
    if "engine" in labels:
        info["engine"] = labels["engine"]
    return RunMetrics(result, version, labels, defs, gauges, counters, hists, info,
                      start_unix_s, result.simulated_s)


def _add_host_tier(log: Table, counters: dict[str, _Steps],
                   add: Callable[[str, ArrayLike, ArrayLike], None]) -> None:
    """The host tier's series from ``result.host_tier``: each copy counted when it is done,
    as vLLM's worker reports a finished job (load: host to GPU, ``CPU_to_GPU``)."""
    t_s, op = log["t_s"], log["op"]
    for kind, transfer_type in ((TierOp.LOAD, "CPU_to_GPU"), (TierOp.STORE, "GPU_to_CPU")):
        done = op == kind
        counters[f"offload_bytes:{transfer_type}"] = _cumulative(t_s[done], log["bytes"][done])
        counters[f"offload_time:{transfer_type}"] = _cumulative(t_s[done], log["seconds"][done])
        add(f"offload_size:{transfer_type}", t_s[done], log["bytes"][done])
    dropped = op == TierOp.DROP
    counters["offload_dropped"] = _cumulative(t_s[dropped], np.ones(int(dropped.sum()),
                                                                    dtype=np.int64))


def as_run_metrics(result: SimResult | RunMetrics, version: str = "v1",
                   model_name: str | None = None) -> RunMetrics:
    """``result`` itself if it is a :class:`RunMetrics`, else :func:`run_metrics` of it: what
    every function that samples a run (a :class:`~kvsim.SimResult` or its metrics) starts from."""
    if isinstance(result, RunMetrics):
        return result
    return run_metrics(result, version=version, model_name=model_name)


def scrape_times(end_s: float, interval_s: float, until_s: float | None) -> NDArray[np.floating[Any]]:
    """The scrape instants ``0, interval_s, ...`` up to ``until_s`` (default ``end_s``), checked."""
    interval_s = check_float("interval_s", interval_s, min=0.1, max=3600)
    stop = end_s if until_s is None else check_float("until_s", until_s, min=0, max=MAX_SIMULATED_S)
    n = int(np.floor(stop / interval_s + 1e-9)) + 1
    if n > 200_000:
        raise KvsimError(f"interval_s={interval_s} gives {n:,} scrapes: expected at most "
                         "200,000 (a longer interval or a shorter run)")
    return np.arange(n) * interval_s


def scrape(result: SimResult | RunMetrics, *, interval_s: float = 15.0, version: str = "v1",
           model_name: str | None = None, until_s: float | None = None) -> Table:
    """The series as Prometheus stores them, one row per scrape at ``0, interval_s, ...``.

    Columns: ``t_s`` and one per series (``vllm:num_preemptions_total``,
    ``vllm:inter_token_latency_seconds_bucket{le="0.05"}``, ...), the constant
    ``model_name``/``engine`` labels left out of the column names.
    """
    rm = as_run_metrics(result, version, model_name)
    times = scrape_times(rm.end_s, interval_s, until_s)
    return Table({"t_s": times, **rm.sample_columns(times)})
