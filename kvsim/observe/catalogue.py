"""The metric catalogue: the families a vLLM server exposes, per vLLM version.

One job: say which metrics a chosen vLLM version registers -- their names,
types, documentation strings, label names and histogram buckets
(:class:`MetricDef`, :data:`VERSIONS`, :func:`metric_defs`) -- and how their
series are named (:func:`series_name`, :func:`le_label`). What a run puts in
them is :mod:`kvsim.observe.series`; the text a scrape returns is
:mod:`kvsim.observe.exposition`.

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

Explained in chapter 4, *Detecting preemption* (*What a vLLM server exposes*).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from kvsim.errors import check_choice, check_int

from .text_format import format_value

__all__ = ["VERSIONS", "VersionSpec", "MetricDef", "metric_defs", "series_name", "le_label", "TTFT_BUCKETS",
           "ITL_BUCKETS", "REQUEST_LATENCY_BUCKETS", "REQUEST_NUM_PREEMPTIONS_BUCKETS",
           "V0_TTFT_BUCKETS", "V0_TPOT_BUCKETS", "V0_E2E_BUCKETS", "one_two_five_buckets",
           "ITERATION_TOKENS_BUCKETS", "REQUEST_PARAMS_N_BUCKETS", "PREFILL_TOKEN_TIME_BUCKETS",
           "FINISHED_REASONS", "FINISHED_REASONS_V010", "WAITING_REASONS", "SLEEP_STATES",
           "PROMPT_SOURCES", "KV_OFFLOAD_SIZE_BUCKETS", "TRANSFER_TYPES", "kv_offload_defs"]

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
    out: list[int] = []
    exp = 0
    while True:
        for m in (1, 2, 5):
            v = m * 10 ** exp
            if v > max_value:
                return tuple(out)
            out.append(v)
        exp += 1


#: vllm/v1/metrics/buckets.py ITERATION_TOKENS_BUCKETS: tokens per engine step.
ITERATION_TOKENS_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
#: REQUEST_PARAMS_N_BUCKETS: the ``n`` sampling parameter.
REQUEST_PARAMS_N_BUCKETS = (1, 2, 5, 10, 20)
#: loggers.py at 005a810 (0.10): ``vllm:time_per_prefill_token_request_seconds``.
PREFILL_TOKEN_TIME_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)

#: vllm/distributed/kv_transfer/kv_connector/v1/offloading/metrics.py (0.34.0)
#: ``TRANSFER_SIZE_BUCKETS``: bytes per copy of the host tier.
KV_OFFLOAD_SIZE_BUCKETS = (1e6, 5e6, 10e6, 20e6, 40e6, 60e6, 80e6, 100e6, 150e6, 200e6)
#: ``transfer_type`` values of the host tier's deprecated families (``_TransferType.ALL``).
TRANSFER_TYPES = ("CPU_to_GPU", "GPU_to_CPU")

#: ``finished_reason`` values of ``vllm:request_success`` (vllm/v1/engine/__init__.py,
#: ``FINISH_REASON_STRINGS``): current V1 has five, the 0.10 series three.
FINISHED_REASONS = ("stop", "length", "abort", "error", "repetition")
FINISHED_REASONS_V010 = ("stop", "length", "abort")
#: ``vllm:num_requests_waiting_by_reason``'s ``reason`` values (loggers.py,
#: ``WAITING_REASON_CAPACITY`` and ``WAITING_REASON_DEFERRED``).
WAITING_REASONS = ("capacity", "deferred")
#: ``vllm:engine_sleep_state``'s ``sleep_state`` values.
SLEEP_STATES = ("awake", "weights_offloaded", "discard_all")
#: ``vllm:prompt_tokens_by_source``'s ``source`` values (stats.py, ``PromptTokenStats``).
PROMPT_SOURCES = ("local_compute", "local_cache_hit", "external_kv_transfer")


@dataclass(frozen=True)
class MetricDef:
    """One metric family: ``name`` as registered (counters without ``_total``).

    ``source`` names what in the run it is made of (:mod:`kvsim.observe.series`);
    a family with one more label (``label``, e.g. ``finished_reason``) has one
    series per value in ``values``, made of ``source:value``.
    """

    name: str
    kind: str            # "counter" | "gauge" | "histogram" | "info"
    doc: str
    source: str
    buckets: tuple[float, ...] = ()
    deprecated: str = ""  # the name that replaces it, if deprecated
    label: str = ""
    values: tuple[str, ...] = ()

    @property
    def scraped_names(self) -> tuple[str, ...]:
        """The sample names a scrape shows (``_total``, ``_created``, ``_bucket`` ...)."""
        if self.kind == "counter":
            return (self.name + "_total", self.name + "_created")
        if self.kind == "histogram":
            return tuple(self.name + s for s in ("_bucket", "_count", "_sum", "_created"))
        return (self.name,)

    def sources(self) -> list[tuple[dict[str, str], str]]:
        """``(extra labels, source)`` of each series of the family."""
        if not self.label:
            return [({}, self.source)]
        return [({self.label: v}, f"{self.source}:{v}") for v in self.values]


def _v1_defs(max_model_len: int, *, v010: bool) -> list[MetricDef]:
    """Current V1 (``v010=False``) or the 0.10 series, in the order loggers.py registers them."""
    tok = one_two_five_buckets(max_model_len)
    current = not v010
    d = [
        MetricDef("vllm:num_requests_running", "gauge",
                  "Number of requests in model execution batches.", "running"),
        MetricDef("vllm:num_requests_waiting", "gauge",
                  "Number of requests waiting to be processed.", "waiting"),
    ]
    if current:
        d += [
            MetricDef("vllm:num_requests_waiting_by_reason", "gauge",
                      "Number of waiting requests by reason. Reason labels: 'capacity' = "
                      "waiting for scheduling capacity; 'deferred' = deferred by transient "
                      "constraints (LoRA budget, KV transfer, blocked status). Sum of all "
                      "reasons equals vllm:num_requests_waiting.", "waiting_by_reason",
                      label="reason", values=WAITING_REASONS),
            MetricDef("vllm:engine_sleep_state", "gauge",
                      "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means "
                      "engine is awake; weights_offloaded = 1 means sleep level 1; discard_all "
                      "= 1 means sleep level 2.", "sleep_state", label="sleep_state",
                      values=SLEEP_STATES),
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
    ]
    if current:
        d += [
            MetricDef("vllm:external_prefix_cache_queries", "counter",
                      "External prefix cache queries from KV connector cross-instance cache "
                      "sharing, in terms of number of queried tokens.", "zero"),
            MetricDef("vllm:external_prefix_cache_hits", "counter",
                      "External prefix cache hits from KV connector cross-instance cache "
                      "sharing, in terms of number of cached tokens.", "zero"),
            MetricDef("vllm:mm_cache_queries", "counter",
                      "Multi-modal cache queries, in terms of number of queried items.", "zero"),
            MetricDef("vllm:mm_cache_hits", "counter",
                      "Multi-modal cache hits, in terms of number of cached items.", "zero"),
        ]
    d += [
        MetricDef("vllm:num_preemptions", "counter",
                  "Cumulative number of preemption from the engine.", "preemptions"),
        MetricDef("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.",
                  "prompt_tokens_first"),
    ]
    if current:
        d += [
            MetricDef("vllm:prompt_tokens_by_source", "counter",
                      "Number of prompt tokens by source.", "prompt_by_source", label="source",
                      values=PROMPT_SOURCES),
            MetricDef("vllm:prompt_tokens_cached", "counter",
                      "Number of cached prompt tokens (local + external).", "prompt_cached"),
        ]
    d += [
        MetricDef("vllm:generation_tokens", "counter", "Number of generation tokens processed.",
                  "generation_tokens"),
        MetricDef("vllm:request_success", "counter", "Count of successfully processed requests.",
                  "success", label="finished_reason",
                  values=FINISHED_REASONS_V010 if v010 else FINISHED_REASONS),
        MetricDef("vllm:request_prompt_tokens", "histogram", "Number of prefill tokens processed.",
                  "req_prompt_tokens", tok),
        MetricDef("vllm:request_generation_tokens", "histogram",
                  "Number of generation tokens processed.", "req_generation_tokens", tok),
        MetricDef("vllm:iteration_tokens_total", "histogram",
                  "Histogram of number of tokens per engine_step.",
                  "step_tokens_v010" if v010 else "step_tokens", ITERATION_TOKENS_BUCKETS),
        MetricDef("vllm:request_max_num_generation_tokens", "histogram",
                  "Histogram of maximum number of requested generation tokens.",
                  "req_max_generation", tok),
        MetricDef("vllm:request_params_n", "histogram", "Histogram of the n request parameter.",
                  "req_n", REQUEST_PARAMS_N_BUCKETS),
        MetricDef("vllm:request_params_max_tokens", "histogram",
                  "Histogram of the max_tokens request parameter.", "req_max_tokens", tok),
        MetricDef("vllm:time_to_first_token_seconds", "histogram",
                  "Histogram of time to first token in seconds.", "ttft", TTFT_BUCKETS),
    ]
    if v010:
        d += [
            MetricDef("vllm:time_per_output_token_seconds", "histogram",
                      "Histogram of time per output token in seconds.", "itl", ITL_BUCKETS,
                      deprecated="vllm:inter_token_latency_seconds"),
            MetricDef("vllm:time_per_prefill_token_request_seconds", "histogram",
                      "Time spent per token during prefill  phase in seconds", "prefill_per_token",
                      PREFILL_TOKEN_TIME_BUCKETS),
        ]
    else:
        d += [
            MetricDef("vllm:inter_token_latency_seconds", "histogram",
                      "Histogram of inter-token latency in seconds.", "itl", ITL_BUCKETS),
            MetricDef("vllm:request_time_per_output_token_seconds", "histogram",
                      "Histogram of time_per_output_token_seconds per request.", "req_tpot",
                      ITL_BUCKETS),
        ]
    d += [
        MetricDef("vllm:e2e_request_latency_seconds", "histogram",
                  "Histogram of e2e request latency in seconds.", "e2e", REQUEST_LATENCY_BUCKETS),
        MetricDef("vllm:request_queue_time_seconds", "histogram",
                  "Histogram of time spent in WAITING phase for request.", "queue_time",
                  REQUEST_LATENCY_BUCKETS),
        MetricDef("vllm:request_inference_time_seconds", "histogram",
                  "Histogram of time spent in RUNNING phase for request.", "inference_time",
                  REQUEST_LATENCY_BUCKETS),
        MetricDef("vllm:request_prefill_time_seconds", "histogram",
                  "Histogram of time spent in PREFILL phase for request.", "prefill_time",
                  REQUEST_LATENCY_BUCKETS),
        MetricDef("vllm:request_decode_time_seconds", "histogram",
                  "Histogram of time spent in DECODE phase for request.", "decode_time",
                  REQUEST_LATENCY_BUCKETS),
    ]
    if current:
        d += [
            MetricDef("vllm:request_prefill_kv_computed_tokens", "histogram",
                      "Histogram of new KV tokens computed during prefill (excluding cached "
                      "tokens).", "req_prefill_computed", tok),
            MetricDef("vllm:request_num_preemptions", "histogram",
                      "Number of preemptions per request.", "req_preemptions",
                      REQUEST_NUM_PREEMPTIONS_BUCKETS),
        ]
    d.append(MetricDef("vllm:cache_config_info", "info",
                       "Information of the LLMEngine CacheConfig", "cache_config"))
    return d


def kv_offload_defs() -> list[MetricDef]:
    """The host tier's families (vLLM's native ``OffloadingConnector``, ``kv_offloading_size``),
    as 0.34.0 registers them before every other family (``KVConnectorPromMetrics``, created
    first in loggers.py): the deprecated families by ``transfer_type``, then the flat ones
    (vllm/distributed/kv_transfer/kv_connector/v1/offloading/metrics.py).

    NOTE(metrics-export): the connector's lookup-delay histograms (the time its Python lookup
    takes), the CPU-space gauges and allocation-size histogram of the CPU spec and
    ``vllm:kv_offload_config_info`` are left out.
    """
    flat = "use vllm:kv_offload_load_* / vllm:kv_offload_store_*"
    return [
        MetricDef("vllm:kv_offload_total_bytes", "counter",
                  "Number of bytes offloaded by KV connector", "offload_bytes",
                  deprecated=flat, label="transfer_type", values=TRANSFER_TYPES),
        MetricDef("vllm:kv_offload_total_time", "counter",
                  "Total time measured by all KV offloading operations", "offload_time",
                  deprecated=flat, label="transfer_type", values=TRANSFER_TYPES),
        MetricDef("vllm:kv_offload_size", "histogram",
                  "Histogram of KV offload transfer size, in bytes.", "offload_size",
                  KV_OFFLOAD_SIZE_BUCKETS, deprecated=flat, label="transfer_type",
                  values=TRANSFER_TYPES),
        MetricDef("vllm:kv_offload_load_bytes", "counter",
                  "Total bytes loaded from offload storage to GPU.", "offload_bytes:CPU_to_GPU"),
        MetricDef("vllm:kv_offload_load_time", "counter",
                  "Total load time from offload storage to GPU, in seconds.",
                  "offload_time:CPU_to_GPU"),
        MetricDef("vllm:kv_offload_load_size", "histogram",
                  "Histogram of KV offload load operation size, in bytes.",
                  "offload_size:CPU_to_GPU", KV_OFFLOAD_SIZE_BUCKETS),
        MetricDef("vllm:kv_offload_store_bytes", "counter",
                  "Total bytes stored from GPU to offload storage.", "offload_bytes:GPU_to_CPU"),
        MetricDef("vllm:kv_offload_store_time", "counter",
                  "Total store time from GPU to offload storage, in seconds.",
                  "offload_time:GPU_to_CPU"),
        MetricDef("vllm:kv_offload_store_size", "histogram",
                  "Histogram of KV offload store operation size, in bytes.",
                  "offload_size:GPU_to_CPU", KV_OFFLOAD_SIZE_BUCKETS),
        MetricDef("vllm:kv_offload_allocation_failure", "counter",
                  "Number of KV offload store allocation attempts that failed.",
                  "offload_dropped"),
    ]


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
        # NOTE(metrics-export): V0 creates a finished_reason series when a request first
        # finishes with it; kvsim shows the three from the start
        MetricDef("vllm:request_success", "counter", "Count of successfully processed requests.",
                  "success", label="finished_reason", values=FINISHED_REASONS_V010),
    ]


class VersionSpec(TypedDict):
    """One exposition version: its constant label names, whether counters and histograms
    carry ``_created`` samples, and the vLLM source it follows."""

    labels: tuple[str, ...]
    created: bool
    source: str


#: Each version: its label names, whether counters carry ``_created``, and its source.
VERSIONS: dict[str, VersionSpec] = {
    "v1": VersionSpec(labels=("model_name", "engine"), created=True,
                      source="vllm/v1/metrics/loggers.py (V1) with buckets.py at 139b1c3"),
    "v1-0.10": VersionSpec(labels=("model_name", "engine"), created=True,
                           source="vllm/v1/metrics/loggers.py at 005a810 (0.10 series)"),
    "v0": VersionSpec(labels=("model_name",), created=False,
                      source="vllm/engine/metrics.py at 00c33e8 (V0)"),
}


def metric_defs(version: str = "v1", max_model_len: int = 4096, *,
                host_tier: bool = False) -> list[MetricDef]:
    """The metric families of ``version`` (see :data:`VERSIONS`); with ``host_tier`` (current V1
    only) the host tier's first (:func:`kv_offload_defs`)."""
    version = check_choice("version", version, list(VERSIONS))
    max_model_len = check_int("max_model_len", max_model_len, min=1, max=10**8)
    if version == "v0":
        return _v0_defs(max_model_len)
    defs = _v1_defs(max_model_len, v010=(version == "v1-0.10"))
    return kv_offload_defs() + defs if host_tier and version == "v1" else defs


def series_name(name: str, labels: Mapping[str, str] | None = None) -> str:
    """``name{k="v",...}`` with labels sorted, as Prometheus prints a series."""
    if not labels:
        return name
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


def le_label(edge: float) -> str:
    """A bucket edge as its ``le`` label reads in a series name (as vLLM's exposition writes
    it, :func:`kvsim.observe.text_format.format_value`: 1.0 -> "1.0")."""
    return format_value(edge)
