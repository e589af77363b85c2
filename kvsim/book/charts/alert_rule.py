"""Chapter 4's alert explorer as a chart: one rule's expression over the incident, and when it fires.

The timings come from :func:`kvsim.observe.rule_timing.alert_timing` (the rule
evaluated as ``promtool`` evaluates it); the live widget is
:func:`kvsim.book.widgets.alert_explorer`, which draws this chart for one rule.
:func:`alert_rule_chart` with ``interactive=True`` is its static twin: sliders
bound to Altair parameters pick a threshold, a window and a ``for`` from a
precomputed grid (:func:`alert_rule_data`), so it works with no kernel.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from kvsim.engine.result import SimResult, Table
from kvsim.errors import KvsimError, check_float
from kvsim.observe.rule_timing import RULES, AlertTiming, alert_timing, rule_values

from .theme import NEUTRAL, PALETTE, finish_chart

if TYPE_CHECKING:
    import altair as alt


class RuleCurvePoint(TypedDict):
    """The rule's expression ``v`` at minute ``t``, over a window of ``w`` minutes."""
    w: float
    t: float
    v: float


class AlertSpan(TypedDict):
    """A pending or firing spell (minutes) at one grid point (threshold, window, ``for``)."""
    th: float
    w: float
    f: float
    state: str
    start: float
    end: float


class AlertReadoutRow(TypedDict):
    """The readout line (:func:`alert_readout`) at one grid point."""
    th: float
    w: float
    f: float
    text: str


class AlertRuleData(TypedDict):
    """:func:`alert_rule_data`'s result, :func:`alert_rule_chart`'s input."""
    rule: str
    what: str
    curves: list[RuleCurvePoint]
    spans: list[AlertSpan]
    readouts: list[AlertReadoutRow]
    thresholds: list[float]
    windows: list[float]
    fors: list[float]
    first_pre_min: float | None
    t_end_min: float

#: The minutes the incident's rush begins and ends (``incident-day``).
RUSH_MIN = (15.0, 25.0)
#: Below this plot width (pixels) the readout's parts also break after their commas: a
#: part such as "fires at 26.25 min, 10.1 min after the first preemption" is about 410 px
#: in 13 px bold.
READOUT_SPLIT_PX = 440
#: The two states of an alert that has not resolved, in the chart's colours.
STATE_COLOURS = {"pending": PALETTE[1], "firing": PALETTE[3]}


def _sig(x: float) -> float:
    """A float to 6 significant digits (the saved spec reads the same on any CPU)."""
    return float(f"{float(x):.6g}")


def _min(seconds: float) -> str:
    return f"{seconds / 60:.2f} min"


def alert_readout(timing: AlertTiming) -> str:
    """One line: when the rule fires, how long after the first preemption, when it resolves.

    Its parts are joined by ``"; "``, where the chart breaks it into lines.
    """
    t = timing
    if t.fired:
        assert t.firing_s is not None
        line = f"fires at {_min(t.firing_s)}"
        if t.delay_s is not None:
            side = "after" if t.delay_s >= 0 else "before"
            line += f", {abs(t.delay_s) / 60:.1f} min {side} the first preemption"
        line += ("; still firing at the end" if t.resolved_s is None
                 else f"; resolves at {_min(t.resolved_s)}")
    elif t.pending_s is not None:
        longest = max((e.resolved_s if e.resolved_s is not None else t.pending_s) - e.pending_s
                      for e in t.episodes)
        line = (f"never fires: pending from {_min(t.pending_s)}; held {longest / 60:.2f} min "
                f"at most, under its for ({t.for_s / 60:g} min)")
    else:
        line = f"never fires: the expression never exceeds {t.threshold:g}"
    if t.false_alarms:
        line += f"; {t.false_alarms} false alarm{'s' if t.false_alarms != 1 else ''}"
    return line


def _grid(name: str, values: Sequence[float], lo: float, hi: float) -> list[float]:
    out = sorted({_sig(check_float(name, v, min=lo, max=hi)) for v in values})
    if not out:
        raise KvsimError(f"{name}=[] is empty: expected at least one value")
    steps = {round(b - a, 9) for a, b in pairwise(out)}
    if len(steps) > 1:
        raise KvsimError(f"{name}={out} is not evenly spaced: expected one step, so the "
                         "static chart's slider hits every value")
    return out


def alert_rule_data(result: SimResult, rule: str = "preemptions", *,
                    thresholds: Sequence[float], windows_min: Sequence[float],
                    fors_min: Sequence[float], tab: Table | None = None,
                    interval_s: float = 15.0) -> AlertRuleData:
    """Every grid point of a rule on a run, for :func:`alert_rule_chart`.

    Returns ``{"rule", "what", "curves", "spans", "readouts", "thresholds",
    "windows", "fors", "first_pre_min", "t_end_min"}``: curve rows ``{w, t, v}``
    (the expression over a window of ``w`` minutes at each evaluation, ``t`` in
    minutes), span rows ``{th, w, f, state, start, end}`` (each pending and
    firing spell, minutes) and one readout row ``{th, w, f, text}`` per grid
    point (:func:`alert_readout`). Each list of values must be evenly spaced.
    """
    if not isinstance(result, SimResult):
        raise KvsimError(f"result={type(result).__name__} is not supported: expected a "
                         "kvsim.SimResult")
    shape = RULES.get(rule)
    if shape is None:
        raise KvsimError(f"rule={rule!r} is not known: expected one of {', '.join(RULES)}")
    ths = _grid("thresholds", thresholds, 0.0, shape.max_threshold)
    ws = _grid("windows_min", windows_min, 0.25, 1440.0)
    fs = _grid("fors_min", fors_min, 0.0, 1440.0)
    if tab is None:
        from kvsim.observe.series import scrape

        tab = scrape(result, interval_s=interval_s)
    curves: list[RuleCurvePoint] = []
    spans: list[AlertSpan] = []
    readouts: list[AlertReadoutRow] = []
    t_end = 0.0
    first = None
    for w in ws:
        t, v = rule_values(tab, rule, w * 60)
        t_end = float(t[-1]) / 60
        curves += [{"w": w, "t": _sig(a / 60), "v": _sig(b)} for a, b in zip(t, v, strict=True)
                   if np.isfinite(b)]
        for th in ths:
            for f in fs:
                timing = alert_timing(result, rule, threshold=th, window_s=w * 60, for_s=f * 60,
                                      tab=tab)
                first = timing.first_preemption_s
                readouts.append({"th": th, "w": w, "f": f, "text": alert_readout(timing)})
                for e in timing.episodes:
                    stop = float(t[-1]) if e.resolved_s is None else e.resolved_s
                    fire = stop if e.firing_s is None else e.firing_s
                    if fire > e.pending_s:
                        spans.append({"th": th, "w": w, "f": f, "state": "pending",
                                      "start": _sig(e.pending_s / 60), "end": _sig(fire / 60)})
                    if e.firing_s is not None:
                        spans.append({"th": th, "w": w, "f": f, "state": "firing",
                                      "start": _sig(e.firing_s / 60), "end": _sig(stop / 60)})
    return {"rule": rule, "what": shape.what, "curves": curves, "spans": spans,
            "readouts": readouts, "thresholds": ths, "windows": ws, "fors": fs,
            "first_pre_min": None if first is None else _sig(first / 60),
            "t_end_min": _sig(t_end)}


def _pick(values: list[float], start: float | None, name: str) -> float:
    picked = values[0] if start is None else _sig(start)
    if picked not in values:
        raise KvsimError(f"{name}={picked!r} is not in the grid: expected one of {values} (the "
                         "static chart's slider keeps to its precomputed values; the live "
                         "alert_explorer takes any)")
    return picked


def alert_rule_chart(data: AlertRuleData, *, title: str, subtitle: str | None = None,
                     threshold: float | None = None, window_min: float | None = None,
                     for_min: float | None = None, interactive: bool = True,
                     height: int = 280) -> alt.TopLevelMixin:
    """A rule's expression over the run, its threshold, and its pending and firing spans.

    ``data`` comes from :func:`alert_rule_data`. The line is the expression for
    the chosen window, the dashed line the threshold; shaded spans show when
    the alert is pending (orange, labelled) and firing (vermillion, labelled),
    the grey band the rush, the dotted line the first preemption, and a line
    of text the readout. With ``interactive``, three sliders bound to Altair
    parameters pick the threshold, the window and the ``for`` among the
    precomputed values (``threshold``, ``window_min`` and ``for_min`` set where
    they start; a value off the grid is refused, never moved onto it).
    """
    import altair as alt

    for key in ("curves", "spans", "readouts", "thresholds", "windows", "fors", "what",
                "first_pre_min", "t_end_min"):
        if key not in data:
            raise KvsimError(f"alert_rule_chart: data lacks {key!r}: build it with "
                             "alert_rule_data")
    ths, ws, fs = list(data["thresholds"]), list(data["windows"]), list(data["fors"])
    th0 = _pick(ths, threshold, "threshold")
    w0 = _pick(ws, window_min, "window_min")
    f0 = _pick(fs, for_min, "for_min")
    height = int(check_float("height", height, min=150, max=600))

    def step(values: list[float]) -> float:
        return _sig(values[1] - values[0]) if len(values) > 1 else 1.0

    params = []
    if interactive:
        p_th = alt.param(name="threshold", value=th0, bind=alt.binding_range(
            min=ths[0], max=ths[-1], step=step(ths), name="Threshold "))
        p_w = alt.param(name="window", value=w0, bind=alt.binding_range(
            min=ws[0], max=ws[-1], step=step(ws), name="Window (min) "))
        p_f = alt.param(name="alert_for", value=f0, bind=alt.binding_range(
            min=fs[0], max=fs[-1], step=step(fs), name="for (min) "))
        params = [p_th, p_w, p_f]
        th, w, f = "threshold", "window", "alert_for"
    else:
        th, w, f = repr(th0), repr(w0), repr(f0)
    # compare within a tolerance: a slider's steps are sums of floats
    same_w = f"abs(datum.w - {w}) < 1e-6"
    same_point = f"abs(datum.th - {th}) < 1e-6 && {same_w} && abs(datum.f - {f}) < 1e-6"

    t_end = float(data["t_end_min"])
    x = alt.X("t:Q", title="time (min)", scale=alt.Scale(domain=[0, t_end], nice=False))
    curve_rows = list(data["curves"])
    top = max([r["v"] for r in curve_rows] + ths) * 1.15 or 1.0
    # counts of preemptions span 0 to a hundred: a symlog axis keeps thresholds of 1 or 2 apart
    symlog = data.get("rule") == "preemptions"
    what = str(data["what"])
    if symlog:
        what = what.replace(")", ", symlog scale)")
    y_scale = alt.Scale(domain=[0, _sig(top)], type="symlog" if symlog else "linear")
    axis = alt.Axis(values=[v for v in (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
                            if v <= top]) if symlog else alt.Axis()
    y = alt.Y("v:Q", title=what, scale=y_scale, axis=axis)
    states = list(STATE_COLOURS)

    rush = alt.Chart(alt.InlineData(values=[{"a": RUSH_MIN[0], "b": RUSH_MIN[1]}])).mark_rect(
        color=NEUTRAL, opacity=0.35).encode(x=alt.X("a:Q", title="time (min)",
                                                    scale=alt.Scale(domain=[0, t_end],
                                                                    nice=False)),
                                            x2="b:Q")
    rush_text = alt.Chart(alt.InlineData(values=[{"a": RUSH_MIN[0]}])).mark_text(
        align="left", baseline="bottom", dx=3, dy=-2).encode(
        x=alt.X("a:Q", title="time (min)"), y=alt.value(height), text=alt.value("rush"))
    spans = (alt.Chart(alt.InlineData(values=list(data["spans"]))).transform_filter(same_point))
    span_rects = spans.mark_rect(opacity=0.3).encode(
        x=alt.X("start:Q", title="time (min)", scale=alt.Scale(domain=[0, t_end], nice=False)),
        x2="end:Q",
        color=alt.Color("state:N", legend=None,
                        scale=alt.Scale(domain=states, range=list(STATE_COLOURS.values()))),
        tooltip=[alt.Tooltip("state:N", title="alert"),
                 alt.Tooltip("start:Q", format=".2f", title="from (min)"),
                 alt.Tooltip("end:Q", format=".2f", title="to (min)")])
    # the two labels on two rows, so a short pending spell does not hide "firing"
    span_text = [spans.transform_filter(alt.datum.state == state).mark_text(
        align="left", baseline="top", dx=3, color="black").encode(
        x=alt.X("start:Q", title="time (min)"), y=alt.value(row), text="state:N")
        for state, row in zip(STATE_COLOURS, (40, 58), strict=True)]
    line = (alt.Chart(alt.InlineData(values=curve_rows)).transform_filter(same_w)
            .mark_line(color=PALETTE[0], interpolate="step-after").encode(
                x=x, y=y, tooltip=[alt.Tooltip("t:Q", format=".2f", title="time (min)"),
                                   alt.Tooltip("v:Q", format=".3~f", title="value")]))
    readouts = alt.Chart(alt.InlineData(values=list(data["readouts"]))).transform_filter(
        same_point)
    limit = readouts.mark_rule(color="black", strokeDash=[6, 3]).encode(
        y=alt.Y("th:Q", title=what, scale=y_scale, axis=axis))
    limit_text = readouts.mark_text(align="right", baseline="bottom", dy=-2).encode(
        x=alt.datum(t_end), y=alt.Y("th:Q", title=what, scale=y_scale, axis=axis),
        text=alt.value("threshold"))
    # the readout above the plot, a line per part; where the plot is narrower than a
    # part's line (a phone), each part breaks after its commas too; the lines grow upwards
    text = (readouts.transform_calculate(
                lines=f"split(width < {READOUT_SPLIT_PX} ? replace(datum.text, "
                      "regexp(', ', 'g'), ',; ') : datum.text, '; ')")
            .mark_text(align="left", baseline="top", fontSize=13, fontWeight="bold",
                       lineHeight=16, limit={"expr": "width"},
                       dy={"expr": "-16 * length(datum.lines)"})
            .encode(x=alt.value(0), y=alt.value(-8), text="lines:N"))
    layers = [rush, rush_text, span_rects, *span_text, line, limit, limit_text, text]
    if data["first_pre_min"] is not None:
        pre = alt.Chart(alt.InlineData(values=[{"t": data["first_pre_min"]}]))
        layers += [pre.mark_rule(color="black", strokeDash=[2, 2]).encode(
                       x=alt.X("t:Q", title="time (min)")),
                   pre.mark_text(align="right", baseline="top", dx=-3, dy=40).encode(
                       x=alt.X("t:Q", title="time (min)"), y=alt.value(0),
                       text=alt.value("first preemption"))]
    chart = alt.layer(*layers).properties(width="container", height=height)
    for p in params:
        chart = chart.add_params(p)
    return finish_chart(chart, title, subtitle)
