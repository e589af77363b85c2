"""The text exposition: what ``GET /metrics`` on a vLLM server returns at one instant.

One job: the text a scrape at simulated time ``t`` returns (Prometheus text
format 0.0.4 or OpenMetrics), via ``prometheus_client.generate_latest`` on a
registry filled from the run's series at ``t`` (:mod:`kvsim.observe.series`).
The text always comes from the ``prometheus_client`` library (the one vLLM
itself uses), never from hand-written strings; :mod:`kvsim.observe.exporter`
serves it live.

Explained in chapter 4, *Detecting preemption* (*What a vLLM server exposes*).
"""
from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

from kvsim.errors import check_float

from .series import as_run_metrics

__all__ = ["exposition"]


def exposition(result, t: float, *, version: str = "v1", model_name: str | None = None,
               openmetrics: bool = False) -> str:
    """What ``GET /metrics`` returns at simulated time ``t`` (prometheus_client's exposition)."""
    rm = as_run_metrics(result, version, model_name)
    t = check_float("t", t, min=0)
    registry = CollectorRegistry(auto_describe=False)

    class _At:
        def collect(self):
            return rm.families(t)

    registry.register(_At())
    gen = generate_openmetrics if openmetrics else generate_latest
    return gen(registry).decode("utf-8")
