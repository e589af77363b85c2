"""A :class:`~kvsim.SimResult` as the Prometheus metrics a vLLM server exposes: one import.

A facade, no logic of its own: it re-exports the public names of the modules
that do the work, under the path the book uses (``from kvsim.observe import
metrics``, ``kvsim.metrics``), so a chapter reaches them all by one name:

* :mod:`kvsim.observe.catalogue` -- the metric families per vLLM version
  (:data:`VERSIONS`, :class:`MetricDef`, :func:`metric_defs`, the bucket
  constants, :func:`series_name`, :func:`le_label`), with the vLLM files and
  commits they were read from;
* :mod:`kvsim.observe.series` -- a run as those series (:func:`run_metrics`,
  :class:`RunMetrics`) and :func:`scrape`, the samples as Prometheus stores them;
* :mod:`kvsim.observe.exposition` -- :func:`exposition`, the text ``GET
  /metrics`` returns at an instant;
* :mod:`kvsim.observe.promtool_tests` -- :func:`promtool_input_series` and
  :func:`promtool_test`, the run as a ``promtool test rules`` file;
* :mod:`kvsim.observe.panels` -- :func:`histogram_quantile`, PromQL's, over
  classic buckets;
* :mod:`kvsim.observe.introspection` -- :func:`kv_usage_breakdown`, what the
  KV-cache gauge counts, read from the engine.

kvsim's own modules import from those modules, not from here.

Explained in chapter 4, *Detecting preemption*.
"""
from __future__ import annotations

from .catalogue import (
    ITL_BUCKETS,
    REQUEST_LATENCY_BUCKETS,
    REQUEST_NUM_PREEMPTIONS_BUCKETS,
    TTFT_BUCKETS,
    V0_E2E_BUCKETS,
    V0_TPOT_BUCKETS,
    V0_TTFT_BUCKETS,
    VERSIONS,
    MetricDef,
    le_label,
    metric_defs,
    one_two_five_buckets,
    series_name,
)
from .exposition import exposition
from .introspection import kv_usage_breakdown
from .panels import histogram_quantile
from .promtool_tests import promtool_input_series, promtool_test
from .series import RunMetrics, as_run_metrics, run_metrics, scrape, scrape_times

__all__ = ["VERSIONS", "MetricDef", "metric_defs", "RunMetrics", "run_metrics", "scrape",
           "exposition", "promtool_input_series", "promtool_test", "kv_usage_breakdown",
           "histogram_quantile", "series_name", "TTFT_BUCKETS", "ITL_BUCKETS",
           "REQUEST_LATENCY_BUCKETS", "REQUEST_NUM_PREEMPTIONS_BUCKETS", "one_two_five_buckets",
           "V0_TTFT_BUCKETS", "V0_TPOT_BUCKETS", "V0_E2E_BUCKETS", "le_label", "as_run_metrics",
           "scrape_times"]
