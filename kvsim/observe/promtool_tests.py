"""A run as the input of ``promtool test rules``: alert rules tested on a simulated incident.

One job: write the run's scraped samples (:mod:`kvsim.observe.series`) as the
``input_series`` of a ``promtool test rules`` file (:func:`promtool_input_series`),
and a whole test file around them (:func:`promtool_test`, YAML text). Running
``promtool`` on it is :mod:`kvsim.observe.alerts`.

Explained in chapter 4, *Detecting preemption* (*Rules that fire in time*).
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import yaml

from kvsim.errors import KvsimError, check_float

from .catalogue import series_name
from .series import as_run_metrics, scrape_times

if TYPE_CHECKING:
    from kvsim.engine.result import SimResult

    from .series import RunMetrics

__all__ = ["promtool_input_series", "promtool_test"]


def _fmt(v: float) -> str:
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


def promtool_input_series(result: SimResult | RunMetrics, *, interval_s: float = 15.0,
                          version: str = "v1", model_name: str | None = None,
                          until_s: float | None = None,
                          extra_labels: Mapping[str, str] | None = None) -> list[dict[str, str]]:
    """``input_series`` entries of a ``promtool test rules`` file: one per scraped series.

    ``extra_labels`` (e.g. ``{"job": "vllm", "instance": "gpu-0"}``) are added
    to every series, as Prometheus's target labels would be.
    """
    rm = as_run_metrics(result, version, model_name)
    times = scrape_times(rm.end_s, interval_s, until_s)
    base = dict(rm.labels, **(extra_labels or {}))
    out: list[dict[str, str]] = []
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


def promtool_test(result: SimResult | RunMetrics, *, rule_files: Sequence[str | os.PathLike[str]],
                  alert_tests: Sequence[Mapping[str, object]] | None = None,
                  promql_tests: Sequence[Mapping[str, object]] | None = None,
                  interval_s: float = 15.0, evaluation_interval_s: float | None = None,
                  version: str = "v1", model_name: str | None = None,
                  until_s: float | None = None,
                  extra_labels: Mapping[str, str] | None = None) -> str:
    """A complete ``promtool test rules`` file (YAML text) whose input is this run.

    ``alert_tests`` are promtool's ``alert_rule_test`` entries (``eval_time``,
    ``alertname``, ``exp_alerts``); ``promql_tests`` its ``promql_expr_test``.
    """
    if not rule_files:
        raise KvsimError("rule_files=[] is empty: expected at least one rule file path")
    interval_s = check_float("interval_s", interval_s, min=0.1, max=3600)
    test: dict[str, object] = {
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
