"""The book's timeline of a run.

:func:`timeline_chart` draws one or more runs: the KV cache in use over time
with a tick at every preemption, the waiting (and swapped) queue beneath, and
a playhead slider that walks the run, aligned on one time axis so two
policies on the same trace compare at a glance.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict

from kvsim.engine.result import SimResult
from kvsim.errors import KvsimError, check_int

from .theme import DASHES, PALETTE, Width, check_width, finish_chart, fit_page, need_rows

if TYPE_CHECKING:
    import altair as alt


class TimelineRow(TypedDict):
    """One bin of one run: its end time (s), the KV in use (% of the pool), the queues' peaks."""
    run: str
    t: float
    kv_pct: float
    waiting: int
    swapped: int


class PreemptionTick(TypedDict):
    """A bin of one run in which preemptions happened, and how many."""
    run: str
    t: float
    preemptions: int


class TimelineData(TypedDict):
    """:func:`timeline_data`'s result, :func:`timeline_chart`'s input."""
    series: list[TimelineRow]
    ticks: list[PreemptionTick]
    runs: list[str]
    t_end: float

# --- the timeline of a run -------------------------------------------------------------

def timeline_data(runs: SimResult | Mapping[str, SimResult], *, points: int = 400) -> TimelineData:
    """A run's (or several runs') timeline, binned for a chart that stays small.

    ``runs`` is a :class:`kvsim.engine.result.SimResult` or a mapping of label to
    results (drawn top to bottom in that order). The time axis is cut into
    ``points`` equal bins over the longest run; each bin keeps the *highest*
    KV usage, waiting and swapped counts it saw (a short spike is not averaged
    away), and an empty bin carries the state before it. Returns
    ``{"series": rows, "ticks": rows, "runs": labels, "t_end": seconds}``:
    series rows ``{run, t, kv_pct, waiting, swapped}`` (``kv_pct``: blocks
    held over the pool, as vLLM's ``kv_cache_usage_perc`` counts, in percent),
    tick rows ``{run, t, preemptions}``, one per bin with preemptions.
    """
    import numpy as np


    if isinstance(runs, SimResult):
        runs = {"run": runs}
    if not isinstance(runs, Mapping) or not runs:
        raise KvsimError("timeline_data: runs must be a SimResult or a non-empty mapping of "
                         "label to SimResult")
    points = check_int("points", points, min=10, max=5_000)
    for label, r in runs.items():
        if not isinstance(r, SimResult):
            raise KvsimError(f"timeline_data: runs[{label!r}] is a {type(r).__name__}: "
                             f"expected a SimResult (from kvsim.simulate)")
    t_end = max(float(r.simulated_s) for r in runs.values())
    if not t_end > 0:
        raise KvsimError("timeline_data: the runs simulated no time (simulated_s = 0)")
    edges = np.linspace(0.0, t_end, points + 1)
    series: list[TimelineRow] = []
    ticks: list[PreemptionTick] = []
    for label, r in runs.items():
        tl = r.timeline
        t = np.asarray(tl["t_s"], dtype=float)
        cols = {"kv": np.asarray(tl["kv_blocks_used"], dtype=float) * 100.0 / r.total_blocks,
                "waiting": np.asarray(tl["waiting"], dtype=float),
                "swapped": np.asarray(tl["swapped"], dtype=float)}
        # bin b holds the steps ending in (edges[b], edges[b + 1]]
        bins = np.clip(np.searchsorted(edges, t, side="left") - 1, 0, points - 1)
        peak: dict[str, np.ndarray] = {}
        for name, values in cols.items():
            binned = np.full(points, np.nan)
            if len(t):
                np.fmax.at(binned, bins, values)
            # an empty bin carries the state before it (0 before the first step)
            filled = np.where(np.isnan(binned), -1.0, binned)
            last = 0.0
            for i in range(points):
                if filled[i] < 0:
                    filled[i] = last
                else:
                    last = filled[i]
            peak[name] = filled
        for i in range(points):
            series.append({"run": str(label), "t": round(float(edges[i + 1]), 3),
                           "kv_pct": round(float(peak["kv"][i]), 2),
                           "waiting": int(peak["waiting"][i]), "swapped": int(peak["swapped"][i])})
        ev = np.asarray(r.events["t_s"], dtype=float)
        if len(ev):
            counts = np.bincount(np.clip(np.searchsorted(edges, ev, side="left") - 1, 0, points - 1),
                                 minlength=points)
            for tick in np.nonzero(counts)[0]:
                ticks.append({"run": str(label), "t": round(float(edges[tick + 1]), 3),
                              "preemptions": int(counts[tick])})
    return {"series": series, "ticks": ticks, "runs": [str(k) for k in runs], "t_end": t_end}


def timeline_chart(data: TimelineData, *, title: str, subtitle: str | None = None,
                   playhead: bool = True, width: Width = "container") -> alt.TopLevelMixin:
    """The book's timeline: per run, KV usage with preemption ticks over a queue strip.

    ``data`` comes from :func:`timeline_data`. Every run gets a panel of KV
    cache in use (percent of its pool, a dashed line at 100%) with a
    downward triangle above the area at each preemption (its tooltip gives the
    count), and beneath it a strip of the waiting queue (and the swapped
    requests, dashed, when there are any); all panels share one time axis. With
    ``playhead``, a slider bound to an Altair parameter moves a vertical line
    through every panel and prints the state there, so the static page can
    walk the run with no kernel; past the run's middle the printed state sits
    left of the line, so it never runs past a phone's page. ``width`` is each
    panel's: ``"container"`` (the default) follows the page, a number of pixels
    fixes it.
    """
    import altair as alt

    for key in ("series", "ticks", "runs", "t_end"):
        if key not in data:
            raise KvsimError(f"timeline_chart: data lacks {key!r}: build it with timeline_data")
    series = need_rows(data["series"], ["run", "t", "kv_pct", "waiting", "swapped"], "timeline_chart")
    ticks = list(data["ticks"])
    runs, t_end = list(data["runs"]), float(data["t_end"])
    width = check_width(width, "timeline_chart")
    x_scale = alt.Scale(domain=[0, round(t_end, 3)], nice=False)
    x = alt.X("t:Q", title="time (s)", scale=x_scale)
    step = round(t_end / max(1, len({r["t"] for r in series}) // len(runs)), 3) or t_end
    p_t = alt.param(name="playhead", value=round(t_end / 2, 3),
                    bind=alt.binding_range(min=0, max=round(t_end, 3), step=step,
                                           name="Playhead (s) ")) if playhead else None
    any_swapped = any(r["swapped"] for r in series)
    top_kv = max(110.0, max(r["kv_pct"] for r in series) + 10)
    half = round(t_end / 2, 3)          # past it, the playhead's text is left of the line

    def playhead_layers(y_text: float, text_expr: str, rows: Sequence[TimelineRow]) -> list[alt.Chart]:
        if p_t is None:
            return []
        rule = (alt.Chart(alt.InlineData(values=[{}])).transform_calculate(t="playhead")
                .mark_rule(color="black", strokeWidth=1.5).encode(
                    x=alt.X("t:Q", title="time (s)", scale=x_scale)))
        now = (alt.Chart(alt.InlineData(values=rows))
               .transform_filter("datum.t <= playhead")
               .transform_window(rank="rank()", sort=[alt.SortField("t", order="descending")])
               .transform_filter("datum.rank == 1")
               .transform_calculate(label=text_expr)
               .mark_text(baseline="top", align={"expr": f"playhead > {half} ? 'right' : 'left'"},
                          dx={"expr": f"playhead > {half} ? -6 : 6"})
               .encode(x=alt.X("t:Q", title="time (s)", scale=x_scale), y=alt.value(y_text),
                       text="label:N"))
        return [rule, now]

    panels = []
    for index, label in enumerate(runs):
        last_panel = index == len(runs) - 1
        rows = [r for r in series if r["run"] == label]
        marks = [t for t in ticks if t["run"] == label]
        base = alt.Chart(alt.InlineData(values=rows))
        kv = base.mark_area(color=PALETTE[0], opacity=0.35, line={"color": PALETTE[0]},
                            interpolate="step-before").encode(
            x=alt.X("t:Q", title="time (s)", scale=x_scale,
                    axis=alt.Axis(title=None, labels=False)),
            y=alt.Y("kv_pct:Q", title="KV in use (% of pool)",
                         scale=alt.Scale(domain=[0, top_kv])),
            tooltip=[alt.Tooltip("t:Q", format=",.1f", title="time (s)"),
                     alt.Tooltip("kv_pct:Q", format=".1f", title="KV in use (%)")])
        full = (alt.Chart(alt.InlineData(values=[{"y": 100}])).mark_rule(strokeDash=[4, 3], color="black")
                .encode(y=alt.Y("y:Q", title="KV in use (% of pool)")))
        layers: list[alt.Chart] = [kv, full]
        if marks:
            layers.append(alt.Chart(alt.InlineData(values=marks)).mark_point(
                shape="triangle-down", filled=True, color=PALETTE[3], size=60).encode(
                x=x, y=alt.value(6),
                tooltip=[alt.Tooltip("t:Q", format=",.1f", title="time (s)"),
                         alt.Tooltip("preemptions:Q", title="preemptions")]))
        layers += playhead_layers(18, "format(datum.kv_pct, '.0f') + '% of the pool in use'", rows)
        n_pre = sum(t["preemptions"] for t in marks)
        panel_title = f"{label}: {n_pre:,} preemption{'s' if n_pre != 1 else ''} (▼)"
        top = alt.layer(*layers).properties(width=width, height=140,
                                            title=alt.TitleParams(panel_title, fontSize=13,
                                                                  anchor="start"))
        names = ["waiting", "swapped"] if any_swapped else ["waiting"]
        queue = alt.Chart(alt.InlineData(values=rows)).transform_fold([*names], as_=["series", "n"])
        strip_x = x if last_panel else alt.X("t:Q", title="time (s)", scale=x_scale,
                                             axis=alt.Axis(title=None, labels=False))
        strip = queue.mark_line(interpolate="step-before").encode(
            x=strip_x, y=alt.Y("n:Q", title="requests (count)"),
            color=alt.Color("series:N", sort=names, title=None, legend=None,
                            scale=alt.Scale(domain=names, range=[PALETTE[1], PALETTE[4]][:len(names)])),
            strokeDash=alt.StrokeDash("series:N", sort=names, legend=None,
                                      scale=alt.Scale(domain=names, range=DASHES[:len(names)])),
            tooltip=[alt.Tooltip("t:Q", format=",.1f", title="time (s)"),
                     alt.Tooltip("series:N", title="queue"), alt.Tooltip("n:Q", title="requests")])
        last_t = max(r["t"] for r in rows)
        strip_names = queue.transform_filter(f"datum.t == {last_t}").mark_text(
            align="left", dx=4).encode(
            x=x, y=alt.Y("n:Q", title="requests (count)"), text="series:N",
            color=alt.Color("series:N", sort=names, legend=None,
                            scale=alt.Scale(domain=names, range=[PALETTE[1], PALETTE[4]][:len(names)])))
        strip_layers = [strip, strip_names] + playhead_layers(
            2, "datum.waiting + ' waiting' + (datum.swapped > 0 ? ', ' + datum.swapped + ' swapped' : '')",
            rows)
        bottom = alt.layer(*strip_layers).properties(width=width, height=60)
        panels += [top, bottom]
    chart = alt.vconcat(*panels, spacing=6).resolve_scale(color="independent",
                                                           strokeDash="independent")
    if p_t is not None:
        chart = chart.add_params(p_t)
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)
