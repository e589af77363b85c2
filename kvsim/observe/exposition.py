"""The text exposition: what ``GET /metrics`` on a vLLM server returns at one instant.

One job: the text a scrape at simulated time ``t`` returns (Prometheus text
format 0.0.4 or OpenMetrics 1.0.0): the run's metric families at ``t``
(:meth:`kvsim.observe.series.RunMetrics.families`) written by
:mod:`kvsim.observe.text_format`, kvsim's own writer of the bytes vLLM's
exposition holds, whichever ``prometheus_client`` is installed.
:mod:`kvsim.observe.exporter` serves it live.

Explained in chapter 4, *Detecting preemption* (*What a vLLM server exposes*).
"""
from __future__ import annotations

from kvsim.engine.result import SimResult
from kvsim.errors import check_float

from .series import RunMetrics, as_run_metrics
from .text_format import openmetrics_text, prometheus_text

__all__ = ["exposition"]


def exposition(result: SimResult | RunMetrics, t: float, *, version: str = "v1",
               model_name: str | None = None, openmetrics: bool = False) -> str:
    """What ``GET /metrics`` returns at simulated time ``t`` (text 0.0.4, or OpenMetrics)."""
    rm = as_run_metrics(result, version, model_name)
    t = check_float("t", t, min=0)
    families = rm.families(t)
    return openmetrics_text(families) if openmetrics else prometheus_text(families)
