"""When a one-threshold alert rule goes pending, fires and resolves on a run, as Prometheus sees it.

Explained in chapter 4, *Detecting preemption* (*Rules that fire in time*), whose
alert explorer (:func:`kvsim.book.widgets.alert_explorer`) and its static twin
(:func:`kvsim.book.charts.alert_rule_chart`) are built on :func:`alert_timing`.

A rule here has one of the shapes the chapter teaches (:data:`RULES`), with a
threshold, a window and a ``for``:

* ``preemptions`` -- ``increase(vllm:num_preemptions_total[window]) > threshold``
  (``> 0`` is seed 003's ``rate(...) > 0``; the book's page asks for two);
* ``kv_usage`` -- ``avg_over_time(vllm:kv_cache_usage_perc[window]) > threshold``
  (a fraction from 0 to 1, as vLLM exports it);
* ``waiting`` -- ``avg_over_time(vllm:num_requests_waiting[window]) > threshold``.

The expression is evaluated as ``promtool test rules`` (Prometheus 2.42, Debian
12's) evaluates a rule file: at ``0, evaluation_interval, 2 x evaluation_interval,
...`` on the scraped samples (:func:`kvsim.observe.series.scrape`); a range
``[window]`` holds the samples from ``now - window`` to ``now``, both ends
included; ``increase`` is :func:`kvsim.observe.panels.prometheus_increase`
(Prometheus's extrapolation, the one place kvsim computes it) and is absent
with fewer than two samples. An alert is *pending* from the first evaluation
at which the condition holds, *fires* once it has held for ``for``
(:func:`kvsim.observe.panels.firing`; with ``for: 0`` at once) and *resolves*
at the first evaluation at which it no longer holds. The tests compare every
evaluation with the real ``promtool``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kvsim.engine.result import SimResult, Table
from kvsim.errors import KvsimError, check_choice, check_float

from .panels import firing, prometheus_increase
from .series import scrape

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["RuleShape", "RULES", "Episode", "AlertTiming", "promql_duration", "rule_expr",
           "rule_values", "alert_timing"]


@dataclass(frozen=True)
class RuleShape:
    """One shape of rule: a PromQL function of one vLLM series, compared with ``>``."""

    name: str
    series: str
    function: str        # "increase" or "avg_over_time"
    what: str            # what the expression measures, with its unit
    max_threshold: float  # the largest threshold kvsim accepts (the smallest is 0)


#: The rule shapes of chapter 4's explorer, by name.
RULES: dict[str, RuleShape] = {r.name: r for r in (
    RuleShape("preemptions", "vllm:num_preemptions_total", "increase",
              "preemptions in the window (count)", 1e6),
    RuleShape("kv_usage", "vllm:kv_cache_usage_perc", "avg_over_time",
              "KV cache in use, averaged over the window (fraction)", 1.0),
    RuleShape("waiting", "vllm:num_requests_waiting", "avg_over_time",
              "waiting requests, averaged over the window (requests)", 1e6),
)}

#: The longest window and ``for`` kvsim evaluates (a day): longer ones see no incident.
MAX_DURATION_S = 86_400.0


@dataclass(frozen=True)
class Episode:
    """One spell of a rule's condition holding: seconds at which it went pending, fired
    (None: it never did) and resolved (None: it still held at the last evaluation)."""

    pending_s: float
    firing_s: float | None
    resolved_s: float | None


@dataclass(frozen=True)
class AlertTiming:
    """When a rule went pending, fired and resolved on a run (seconds, or None).

    ``pending_s``, ``firing_s`` and ``resolved_s`` are those of the first episode
    that fires (of the first episode at all when none fires: then ``firing_s``
    and ``resolved_s`` are None). ``delay_s`` is ``firing_s`` minus the run's first
    preemption (None when either is missing). ``false_alarms`` counts the firing
    episodes with no preemption from one window before going pending to
    resolving: every firing of a run with no preemption is one.
    """

    rule: str
    expr: str
    threshold: float
    window_s: float
    for_s: float
    evaluation_interval_s: float
    pending_s: float | None
    firing_s: float | None
    resolved_s: float | None
    first_preemption_s: float | None
    delay_s: float | None
    false_alarms: int
    episodes: tuple[Episode, ...]

    @property
    def fired(self) -> bool:
        """Whether the alert fired at all."""
        return self.firing_s is not None


def promql_duration(seconds: float) -> str:
    """A PromQL duration for whole seconds: ``120`` is ``"2m"``, ``90`` is ``"1m30s"``."""
    seconds = check_float("duration", seconds, min=0.0, max=MAX_DURATION_S)
    if not float(seconds).is_integer():
        raise KvsimError(f"duration={seconds} s is not a whole number of seconds: expected "
                         "whole seconds (PromQL durations here are written in h, m and s)")
    s = int(seconds)
    if s == 0:
        return "0s"
    parts = [(s // 3600, "h"), (s % 3600 // 60, "m"), (s % 60, "s")]
    return "".join(f"{n}{unit}" for n, unit in parts if n)


def _shape(rule: str) -> RuleShape:
    return RULES[check_choice("rule", rule, list(RULES))]


def _threshold(shape: RuleShape, threshold: float) -> float:
    return check_float("threshold", threshold, min=0.0, max=shape.max_threshold,
                       why=f"for the {shape.name} rule")


def _window(window_s: float) -> float:
    window_s = check_float("window_s", window_s, min=1.0, max=MAX_DURATION_S)
    if not window_s.is_integer():
        raise KvsimError(f"window_s={window_s} is not a whole number of seconds: expected "
                         "whole seconds, as a PromQL range is written here (1m30s)")
    return window_s


def rule_expr(rule: str, threshold: float, window_s: float) -> str:
    """The rule's PromQL, e.g. ``increase(vllm:num_preemptions_total[2m]) > 1``."""
    shape = _shape(rule)
    threshold = _threshold(shape, threshold)
    text = f"{threshold:.6g}"
    return f"{shape.function}({shape.series}[{promql_duration(_window(window_s))}]) > {text}"


def _interval(t: np.ndarray, evaluation_interval_s: float | None) -> float:
    """The evaluation interval: the scrape interval unless given."""
    if evaluation_interval_s is None:
        return float(t[1] - t[0]) if len(t) > 1 else 15.0
    return check_float("evaluation_interval_s", evaluation_interval_s, min=1.0, max=3600.0)


def _evaluation_indices(t: np.ndarray, evaluation_interval_s: float) -> np.ndarray:
    """The scrapes at which promtool evaluates: 0, E, 2E, ... (E a multiple of the scrape)."""
    if len(t) < 2:
        raise KvsimError(f"the scrape has {len(t)} sample(s): expected at least two")
    step = float(t[1] - t[0])
    ratio = evaluation_interval_s / step
    if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
        raise KvsimError(f"evaluation_interval_s={evaluation_interval_s} is not a multiple of "
                         f"the scrape interval: expected {step:g} s, {2 * step:g} s, ...")
    return np.arange(0, len(t), int(round(ratio)))


def rule_values(tab: Table, rule: str, window_s: float, *,
                evaluation_interval_s: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The rule's expression (before ``> threshold``) at every rule evaluation.

    Returns ``(times, values)`` in seconds and the expression's unit
    (:attr:`RuleShape.what`); NaN where Prometheus returns nothing (``increase``
    over fewer than two samples). ``evaluation_interval_s`` defaults to the
    scrape interval and must be a multiple of it.
    """
    shape = _shape(rule)
    window_s = _window(window_s)
    if "t_s" not in tab:
        raise KvsimError("the table has no t_s column: expected kvsim.observe.series.scrape(...)")
    t = np.asarray(tab["t_s"], dtype=float)
    if shape.series not in tab:
        raise KvsimError(f"series {shape.series!r} is not in the scrape: the {shape.name} rule "
                         "needs it (a vLLM V1 scrape has it)")
    values = np.asarray(tab[shape.series], dtype=float)
    idx = _evaluation_indices(t, _interval(t, evaluation_interval_s))
    at = t[idx]
    if shape.function == "increase":
        return at, prometheus_increase(t, values, window_s, at)
    # avg_over_time: the samples in [now - window, now] (times are whole milliseconds)
    t_ms = np.round(t * 1000).astype(np.int64)
    at_ms = np.round(at * 1000).astype(np.int64)
    lo = np.searchsorted(t_ms, at_ms - int(round(window_s * 1000)), side="left")
    hi = np.searchsorted(t_ms, at_ms, side="right")
    csum = np.concatenate([[0.0], np.cumsum(values)])
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (csum[hi] - csum[lo]) / (hi - lo)
    return at, np.where(hi > lo, mean, np.nan)


def _episodes(t: np.ndarray, holds: np.ndarray, fires: np.ndarray) -> list[Episode]:
    out, i, n = [], 0, len(t)
    while i < n:
        if not holds[i]:
            i += 1
            continue
        j = i
        while j < n and holds[j]:
            j += 1
        on = np.flatnonzero(fires[i:j])
        out.append(Episode(pending_s=float(t[i]),
                           firing_s=float(t[i + on[0]]) if on.size else None,
                           resolved_s=float(t[j]) if j < n else None))
        i = j
    return out


def alert_timing(result: SimResult | None, rule: str, *, threshold: float, window_s: float,
                 for_s: float, tab: Table | None = None, interval_s: float = 15.0,
                 evaluation_interval_s: float | None = None,
                 preemptions_s: ArrayLike | None = None) -> AlertTiming:
    """When the rule ``expr > threshold`` with ``for: for_s`` goes pending, fires and
    resolves on a run (see the module's notes for the Prometheus semantics).

    ``result`` is a run (its first preemption comes from its events, and it is
    scraped every ``interval_s`` unless ``tab``, its scrape, is given). With
    ``result=None`` pass ``tab`` and, for the delay and the false alarms,
    ``preemptions_s`` (the preemptions' times, seconds).
    """
    shape = _shape(rule)
    threshold = _threshold(shape, threshold)
    window_s = _window(window_s)
    for_s = check_float("for_s", for_s, min=0.0, max=MAX_DURATION_S)
    if result is not None and not isinstance(result, SimResult):
        raise KvsimError(f"result={type(result).__name__} is not supported: expected a "
                         "kvsim.SimResult (or None with tab=...)")
    if tab is None:
        if result is None:
            raise KvsimError("alert_timing needs a run or its scrape: pass result=... or tab=...")
        tab = scrape(result, interval_s=interval_s)
    if preemptions_s is None:
        preemptions_s = [] if result is None else result.events["t_s"]
    pre = np.sort(np.asarray(preemptions_s, dtype=float))
    t, values = rule_values(tab, rule, window_s, evaluation_interval_s=evaluation_interval_s)
    holds = np.nan_to_num(values, nan=-np.inf) > threshold
    fires = firing(t, holds, for_s)
    episodes = _episodes(t, holds, fires)
    first = next((e for e in episodes if e.firing_s is not None),
                 episodes[0] if episodes else None)
    first_pre = float(pre[0]) if pre.size else None
    end = float(t[-1])

    def quiet(e: Episode) -> bool:
        stop = end if e.resolved_s is None else e.resolved_s
        return not bool(((pre >= e.pending_s - window_s) & (pre <= stop)).any())

    firing_s = None if first is None else first.firing_s
    return AlertTiming(
        rule=shape.name, expr=rule_expr(rule, threshold, window_s), threshold=threshold,
        window_s=window_s, for_s=for_s,
        evaluation_interval_s=_interval(np.asarray(tab["t_s"], dtype=float), evaluation_interval_s),
        pending_s=None if first is None else first.pending_s, firing_s=firing_s,
        resolved_s=None if first is None or firing_s is None else first.resolved_s,
        first_preemption_s=first_pre,
        delay_s=None if firing_s is None or first_pre is None else firing_s - first_pre,
        false_alarms=sum(1 for e in episodes if e.firing_s is not None and quiet(e)),
        episodes=tuple(episodes))
