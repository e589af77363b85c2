"""Runs compared: medians and spreads over seeds, in small multiples (chapters 2 to 5).

Generic forms (:func:`bars_chart`, :func:`lines_chart`, :func:`band_chart`,
:func:`spans_chart`, :func:`histogram_chart`) over the rows of
:func:`seed_summary`, and the charts of the engine's work: useful, recomputed
and rescued tokens (:func:`work_split_chart`) and the work rate over time
(:func:`work_rate_chart`).
"""
from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NotRequired, TypedDict

from kvsim.engine.result import SimResult, Table
from kvsim.errors import KvsimError, check_float

from .theme import (
    DASHES,
    MIN_FONT_PX,
    NEUTRAL,
    PALETTE,
    Width,
    check_width,
    finish_chart,
    fit_page,
    need_rows,
    number,
)

if TYPE_CHECKING:
    import altair as alt


class WorkSplitRow(TypedDict):
    """A run's tokens of one kind of work (:func:`work_split_data`)."""
    run: str
    kind: str
    tokens: int
    share_pct: float


class _WorkBar(TypedDict):
    """A segment of :func:`work_split_chart`'s bar: from ``a`` to ``b`` percent of the work."""
    run: str
    kind: str
    a: float
    b: float
    tokens: int
    label: str
    end: NotRequired[float]


class WorkRateRow(TypedDict):
    """The engine's tokens per second of one kind of work in one bin (:func:`work_rate_data`)."""
    t_min: float
    kind: str
    tok_s: float
    order: int


class _BandCell(TypedDict):
    """A cell of :func:`band_chart`'s grid: its two settings, its facet, whether it passes."""
    x: str
    y: str
    f: str
    ok: bool
    text: str


class _Bucket(TypedDict):
    """A histogram's bar: a bucket's edges (scaled) and its own count."""
    lo: float
    hi: float
    n: float
    label: str


class _HistogramMark(TypedDict):
    """A labelled rule of a histogram (a mean, a percentile), at ``x`` (scaled)."""
    x: float
    name: str

# --- chapter 2: runs compared ----------------------------------------------------------

def _median_spread(values: Iterable[float]) -> tuple[float, float, float]:
    import numpy as np

    a = np.asarray(list(values), dtype=float)
    return float(np.median(a)), float(a.min()), float(a.max())


def seed_summary(table: Table, by: Sequence[str], metrics: Sequence[str]) -> list[dict[str, object]]:
    """Median, min and max over seeds of ``metrics``, one row per ``by`` group.

    ``table`` is a :func:`kvsim.sweep` result (a :class:`kvsim.engine.result.Table`);
    rows come back in the sweep's grid order, each with the group's keys and
    ``<metric>``, ``<metric>_lo``, ``<metric>_hi`` and ``seeds``.
    """
    for name in list(by) + list(metrics):
        if name not in table:
            raise KvsimError(f"seed_summary: the table has no column {name!r}: expected one of "
                             f"{', '.join(table.columns)}")
    groups: dict[tuple[object, ...], list[int]] = {}
    keys = [tuple(_plain_value(table[b][i]) for b in by) for i in range(table.num_rows)]
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    rows = []
    for k, idx in groups.items():
        row: dict[str, object] = dict(zip(by, k, strict=True))
        for m in metrics:
            med, lo, hi = _median_spread(table[m][i] for i in idx)
            row.update({m: round(med, 4), f"{m}_lo": round(lo, 4), f"{m}_hi": round(hi, 4)})
        row["seeds"] = len(idx)
        rows.append(row)
    return rows


def _plain_value(x: object) -> object:
    """A table cell as a plain Python value (a NumPy scalar's ``item()``)."""
    item = getattr(x, "item", None)
    return item() if item is not None else x


def bars_chart(rows: Iterable[Mapping[str, object]], *, category: str,
               panels: Sequence[tuple[str, str] | tuple[str, str, str]],
               title: str, subtitle: str | None = None, label_format: str = ",.1f",
               width: Width = "container") -> alt.TopLevelMixin:
    """One horizontal bar per ``category`` value, one panel per metric (stacked), each bar labelled.

    ``width`` is each panel's: ``"container"`` (the default) follows the page, a
    number of pixels fixes it.

    ``panels`` is a list of ``(column, axis title with unit)`` or ``(column,
    axis title, d3 format of the labels)``. Where a row has
    ``<column>_lo`` and ``<column>_hi`` (from :func:`seed_summary`), a black
    rule shows the spread over seeds. Categories keep the rows' order.
    """
    import altair as alt

    width = check_width(width, "bars_chart")
    formatted = [(p[0], p[1], p[2] if len(p) == 3 else label_format) for p in panels]
    rows = need_rows(rows, [category] + [p[0] for p in formatted], "bars_chart")
    order = list(dict.fromkeys(str(r[category]) for r in rows))
    charts = []
    for col, axis_title, fmt in formatted:
        data = [{"cat": str(r[category]), "v": r[col], "lo": r.get(f"{col}_lo", r[col]),
                 "hi": r.get(f"{col}_hi", r[col])} for r in rows]
        base = alt.Chart(alt.InlineData(values=data))
        y = alt.Y("cat:N", sort=order, title=None, axis=alt.Axis(labelLimit=200))
        top = max(max(number(d["hi"], f"bars_chart: {col}_hi") for d in data), 1e-9) * 1.45
        bar = base.mark_bar(color=PALETTE[0], height=18).encode(
            x=alt.X("v:Q", title=axis_title, scale=alt.Scale(domain=[0, top])), y=y,
            tooltip=[alt.Tooltip("cat:N", title=category), alt.Tooltip("v:Q", format=fmt),
                     alt.Tooltip("lo:Q", format=fmt, title="lowest seed"),
                     alt.Tooltip("hi:Q", format=fmt, title="highest seed")])
        spread = base.mark_rule(color="black").encode(x=alt.X("lo:Q", title=axis_title), x2="hi:Q",
                                                      y=y)
        text = base.mark_text(align="left", dx=4).encode(
            x=alt.X("hi:Q", title=axis_title), y=y, text=alt.Text("v:Q", format=fmt))
        charts.append(alt.layer(bar, spread, text).properties(width=width, height=30 * len(order)))
    # panels stacked, not side by side: each stays readable on a phone
    chart = alt.vconcat(*charts, spacing=10).resolve_scale(x="independent")
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)


def lines_chart(rows: Iterable[Mapping[str, object]], *, x: tuple[str, str], series: str,
                panels: Sequence[tuple[str, str, str]], title: str, subtitle: str | None = None,
                marks: Sequence[float] = (), width: Width = "container", stacked: bool = False,
                points: bool = True, height: int = 200) -> alt.TopLevelMixin:
    """Small multiples of lines over ``x``, one line per ``series`` value.

    ``x`` is ``(column, axis title)``; ``panels`` is a list of ``(column,
    axis title, "linear" or "log")``, side by side, or one above the other
    with ``stacked`` (a dashboard over time). Each line has its own dash, named
    in one legend of dash and colour (never colour alone); a band shows the spread over seeds when the
    rows carry ``<column>_lo``/``_hi``. ``marks`` are x values to mark with a
    rule ("you are here"). ``width`` is each panel's: ``"container"`` (the
    default) follows the page, and then the panels always stack (side by side
    they would not fit a phone); a number of pixels fixes it.
    """
    import altair as alt

    width = check_width(width, "lines_chart")
    stacked = stacked or width == "container"
    x_col, x_title = x
    rows = need_rows(rows, [x_col, series] + [c for c, _, _ in panels], "lines_chart")
    names = list(dict.fromkeys(str(r[series]) for r in rows))
    if len(names) > len(DASHES):
        raise KvsimError(f"lines_chart: {len(names)} series is too many: expected at most "
                         f"{len(DASHES)}")
    # one legend, colour and dash together (never colour alone); it wraps on a phone
    legend = alt.Legend(title=None, orient="top", symbolType="stroke", symbolStrokeWidth=2,
                        symbolSize=400, symbolOpacity=1,
                        columns=1 if width == "container" else 0)
    colour = alt.Color("s:N", sort=names, legend=legend,
                       scale=alt.Scale(domain=names, range=PALETTE[:len(names)]))
    dash = alt.StrokeDash("s:N", sort=names, legend=legend,
                          scale=alt.Scale(domain=names, range=DASHES[:len(names)]))
    x_max = max(number(r[x_col], f"lines_chart: {x_col}") for r in rows)
    charts = []
    for col, axis_title, scale_type in panels:
        data = [{"x": r[x_col], "s": str(r[series]), "v": r[col], "lo": r.get(f"{col}_lo", r[col]),
                 "hi": r.get(f"{col}_hi", r[col])} for r in rows]
        if scale_type == "log":      # a log axis has no place for 0 (or a missing value)
            data = [d for d in data if d["v"] is not None and number(d["v"], col) > 0
                    and number(d["lo"], f"{col}_lo") > 0]
        else:
            data = [d for d in data if d["v"] is not None]
        if not data:
            raise KvsimError(f"lines_chart: no value of {col!r} to draw"
                             + (" above 0 on its log axis" if scale_type == "log" else ""))
        base = alt.Chart(alt.InlineData(values=data))
        y_scale = alt.Scale(type="log") if scale_type == "log" else alt.Scale(zero=True)
        y_axis = alt.Axis(title=axis_title)
        if scale_type == "log":    # one tick per power of ten, not Vega's nine per decade
            import math

            low = min(number(d["lo"], f"{col}_lo") for d in data if number(d["lo"], f"{col}_lo") > 0)
            high = max(number(d["hi"], f"{col}_hi") for d in data)
            y_axis = alt.Axis(title=axis_title, format="~g", values=[
                10.0 ** k for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)])
        xe = alt.X("x:Q", title=x_title, scale=alt.Scale(domain=[0, x_max * 1.25]))
        band = base.mark_area(opacity=0.15).encode(
            x=xe, y=alt.Y("lo:Q", scale=y_scale, title=axis_title), y2="hi:Q", color=colour)
        line = base.mark_line(point=points).encode(
            x=xe, y=alt.Y("v:Q", title=axis_title, axis=y_axis, scale=y_scale), color=colour,
            strokeDash=dash,
            tooltip=[alt.Tooltip("s:N", title=series), alt.Tooltip("x:Q", title=x_title),
                     alt.Tooltip("v:Q", format=",.2f", title=axis_title)])
        layers = [band, line]
        if marks:
            layers.append(alt.Chart(alt.InlineData(values=[{"x": m} for m in marks]))
                          .mark_rule(strokeDash=[2, 2], color="black").encode(
                              x=alt.X("x:Q", title=x_title)))
        charts.append(alt.layer(*layers).properties(width=width, height=height))
    chart = alt.vconcat(*charts, spacing=8) if stacked else alt.hconcat(*charts, spacing=16)
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)


def band_chart(rows: Iterable[Mapping[str, object]], *, x: tuple[str, str], y: tuple[str, str],
               facet: str, passes: str, label: str, title: str,
               subtitle: str | None = None) -> alt.TopLevelMixin:
    """A grid of settings per ``facet`` value: each cell says its figures and whether it passes.

    Rows carry the two settings (``x``, ``y``: ``(column, axis title)``), the
    ``facet`` column, a boolean ``passes`` column and a ``label`` text ("|"
    breaks a line); a passing cell is filled (and its text starts with a tick), so the band of settings
    that meet the target shows without colour alone.
    """
    import altair as alt

    rows = need_rows(rows, [x[0], y[0], facet, passes, label], "band_chart")
    data: list[_BandCell] = [
        {"x": str(r[x[0]]), "y": str(r[y[0]]), "f": str(r[facet]), "ok": bool(r[passes]),
         "text": ("✓ " if r[passes] else "") + str(r[label])} for r in rows]
    xs = list(dict.fromkeys(d["x"] for d in data))
    ys = list(dict.fromkeys(d["y"] for d in data))
    facets = list(dict.fromkeys(d["f"] for d in data))

    def grid(f: str) -> alt.LayerChart | alt.FacetChart:
        rows_f = [d for d in data if d["f"] == f]
        base = alt.Chart(alt.InlineData(values=rows_f))
        cells = base.mark_rect(stroke=NEUTRAL).encode(
            x=alt.X("x:N", sort=xs, title=x[1], axis=alt.Axis(labelAngle=0)),
            y=alt.Y("y:N", sort=ys, title=y[1]),
            color=alt.Color("ok:N", legend=None,
                            scale=alt.Scale(domain=[False, True], range=["white", PALETTE[2]])))
        text = base.mark_text(fontSize=MIN_FONT_PX, lineBreak="|").encode(
            x=alt.X("x:N", sort=xs), y=alt.Y("y:N", sort=ys), text="text:N",
            color=alt.condition("datum.ok", alt.value("white"), alt.value("black")))
        return alt.layer(cells, text).properties(
            width="container", height=56 * len(ys),
            title=alt.TitleParams(f, fontSize=13, fontWeight="normal", anchor="middle"))

    # one grid per facet value, one above the other, each as wide as the page
    chart = alt.vconcat(*[grid(f) for f in facets], spacing=16)
    return finish_chart(fit_page(chart), title, subtitle)


def work_split_data(runs: Mapping[str, SimResult]) -> list[WorkSplitRow]:
    """Tokens each run processed, split into useful work, recomputation and cache rescues.

    ``runs`` maps a label to a :class:`kvsim.engine.result.SimResult`. Per run:
    ``useful`` (prompt tokens prefilled once, plus decoded tokens),
    ``recomputed`` (prompt and answer tokens prefilled again after a
    preemption) and ``rescued`` (tokens a resumed request found in the prefix
    cache instead: work *avoided*, not done), each also as a share of the
    work done.
    """
    import numpy as np


    if not isinstance(runs, Mapping) or not runs:
        raise KvsimError("work_split_data: runs must be a non-empty mapping of label to SimResult")
    rows: list[WorkSplitRow] = []
    for label, r in runs.items():
        if not isinstance(r, SimResult):
            raise KvsimError(f"work_split_data: runs[{label!r}] is a {type(r).__name__}: "
                             "expected a SimResult")
        done = int(np.sum(r.timeline["prefill_tokens"]) + np.sum(r.timeline["decode_tokens"]))
        recomputed = int(np.sum(r.requests["recomputed_tokens"]))
        rescued = int(np.sum(r.requests["rescued_tokens"]))
        for kind, tokens in (("useful", done - recomputed), ("recomputed", recomputed),
                             ("rescued by the prefix cache", rescued)):
            rows.append({"run": str(label), "kind": kind, "tokens": tokens,
                         "share_pct": round(100.0 * tokens / done, 2) if done else 0.0})
    return rows


def work_split_chart(rows: Iterable[WorkSplitRow], *, title: str, subtitle: str | None = None,
                     width: Width = "container") -> alt.TopLevelMixin:
    """The recompute tax: per run, the share of the engine's work that was recomputation.

    Bars of useful work and recomputation stacked to 100% of the tokens
    processed, with the tokens rescued by the prefix cache as an outlined bar
    beyond them (work the engine did *not* do); every segment is labelled.
    ``width``: ``"container"`` (the default) follows the page; pixels fix it.
    """
    import altair as alt

    width = check_width(width, "work_split_chart")
    rows = need_rows(rows, ["run", "kind", "tokens", "share_pct"], "work_split_chart")
    runs = list(dict.fromkeys(r["run"] for r in rows))
    data: list[_WorkBar] = []
    for name in runs:
        useful = next(r for r in rows if r["run"] == name and r["kind"] == "useful")
        redo = next(r for r in rows if r["run"] == name and r["kind"] == "recomputed")
        saved = next(r for r in rows if r["run"] == name and r["kind"].startswith("rescued"))
        label = name + ": " + (f"{redo['share_pct']:.1f}% recomputed" if redo["tokens"]
                               else "no recompute")
        if saved["tokens"]:
            label += f", {saved['share_pct']:.1f}% rescued"
        label = "\n".join(textwrap.wrap(label, 44))       # fits a phone's page
        data += [{"run": name, "kind": "useful", "a": 0, "b": useful["share_pct"],
                  "tokens": useful["tokens"], "label": f"{useful['share_pct']:.0f}% useful"},
                 {"run": name, "kind": "recomputed", "a": useful["share_pct"], "b": 100.0,
                  "tokens": redo["tokens"], "label": label},
                 {"run": name, "kind": "rescued", "a": 100.0, "b": 100.0 + saved["share_pct"],
                  "tokens": saved["tokens"], "label": ""}]
    ends = {d["run"]: max(e["b"] for e in data if e["run"] == d["run"] and
                          (e["kind"] != "rescued" or e["tokens"])) for d in data}
    for d in data:
        d["end"] = ends[d["run"]]
    kinds = ["useful", "recomputed", "rescued"]
    base = alt.Chart(alt.InlineData(values=data))
    # each run is named in the label above its bar (no axis labels to narrow a phone's plot)
    y = alt.Y("run:N", sort=runs, title=None, axis=None)
    x_top = max(100.0, max(d["b"] for d in data))
    fill = base.transform_filter("datum.kind != 'rescued'").mark_bar(height=20).encode(
        x=alt.X("a:Q", title="tokens processed (% of the run's work)",
                scale=alt.Scale(domain=[0, x_top])), x2="b:Q", y=y,
        color=alt.Color("kind:N", legend=None,
                        scale=alt.Scale(domain=kinds, range=[PALETTE[0], PALETTE[3], PALETTE[2]])),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("kind:N"),
                 alt.Tooltip("tokens:Q", format=",d")])
    outline = base.transform_filter("datum.kind == 'rescued' && datum.tokens > 0").mark_bar(
        height=20, fill="white", stroke=PALETTE[2], strokeDash=[4, 2], strokeWidth=2).encode(
        x=alt.X("a:Q", title="tokens processed (% of the run's work)"), x2="b:Q", y=y,
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("tokens:Q", format=",d")])
    # the label above its bar, from the left edge: it never runs past a phone's page
    lines = max(d["label"].count("\n") + 1 for d in data)
    labels = base.transform_filter("datum.kind == 'recomputed'").mark_text(
        align="left", baseline="bottom", lineBreak="\n", yOffset=-12).encode(
        x=alt.value(0), y=y, text="label:N")
    inside = base.transform_filter("datum.kind == 'useful'").mark_text(
        align="left", dx=6, color="white").encode(
        x=alt.X("a:Q", title="tokens processed (% of the run's work)"), y=y, text="label:N")
    chart = alt.layer(fill, outline, inside, labels).properties(width=width,
                                                                    height=(40 + 16 * lines) * len(runs))
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)


def spans_chart(rows: Iterable[Mapping[str, object]], *, title: str, subtitle: str | None = None,
                x_title: str = "time (min)", marks: Sequence[float] = (),
                width: Width = "container") -> alt.TopLevelMixin:
    """One row per item with a bar from ``start`` to ``end`` (an alert's firing span) and a
    text label (``label``, e.g. "never fires"); ``start`` None draws only the label.

    Each row's label, under its bar from the left edge, names the item and says
    its ``label`` ("VLLMKVCachePinned: from minute 21.8"), so a long name never
    narrows a phone's plot. ``width``: ``"container"`` (the default) follows
    the page; pixels fix it.
    """
    import altair as alt

    width = check_width(width, "spans_chart")
    rows = need_rows(rows, ["rule", "start", "end", "label"], "spans_chart")
    order = [str(r["rule"]) for r in rows]
    x_max = max([number(r["end"], "spans_chart: end") for r in rows if r["end"] is not None]
                + list(marks) + [1.0])
    data = [{"rule": str(r["rule"]), "start": r["start"], "end": r["end"],
             "label": f"{r['rule']}: {r['label']}"} for r in rows]
    base = alt.Chart(alt.InlineData(values=data))
    # the item is named in the label under its bar (no axis labels to narrow a phone's plot)
    y = alt.Y("rule:N", sort=order, title=None, axis=None)
    x = alt.X("start:Q", title=x_title, scale=alt.Scale(domain=[0, x_max]))
    bars = base.transform_filter("datum.start != null").mark_bar(
        height=14, yOffset=-9, color=PALETTE[3]).encode(
        x=x, x2="end:Q", y=y, tooltip=[alt.Tooltip("rule:N"), alt.Tooltip("label:N")])
    labels = base.mark_text(align="left", baseline="middle", yOffset=8).encode(
        x=alt.value(0), y=y, text="label:N")
    layers = [bars, labels]
    if marks:
        layers.append(alt.Chart(alt.InlineData(values=[{"m": m} for m in marks]))
                      .mark_rule(strokeDash=[2, 2], color="black")
                      .encode(x=alt.X("m:Q", title=x_title)))
    chart = alt.layer(*layers).properties(width=width, height=40 * len(order))
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)


def histogram_chart(edges: Sequence[float], counts: Sequence[float], *, marks: Mapping[str, float],
                    title: str, subtitle: str | None = None, x_title: str = "latency (ms)",
                    scale: float = 1e3, width: Width = "container") -> alt.TopLevelMixin:
    """A latency histogram as Prometheus keeps it: one bar per bucket (cumulative ``counts``
    turned into per-bucket counts, ``+Inf`` last), on a log axis, with a labelled rule at
    each of ``marks`` (``{"mean": s, "p99": s, ...}``, in the same unit as ``edges``).

    A mark's label sits on the side of its rule with more room (right of a rule
    in the axis's left part, left of one further right), so it stays inside a
    phone's plot. ``width``: ``"container"`` (the default) follows the page;
    pixels fix it.
    """
    import math

    import altair as alt

    width = check_width(width, "histogram_chart")
    edge_list = [float(e) for e in edges]
    count_list = [float(c) for c in counts]
    if len(count_list) != len(edge_list) + 1 or not edge_list:
        raise KvsimError(f"histogram_chart: counts has {len(count_list)} values: expected "
                         f"{len(edge_list) + 1} (one per edge and +Inf)")
    rows: list[_Bucket] = []
    lo, prev = edge_list[0] / 2, 0.0
    for edge, c in zip(edge_list, count_list[:-1], strict=True):     # +Inf's count is not a bar
        rows.append({"lo": round(lo * scale, 4), "hi": round(edge * scale, 4),
                     "n": c - prev, "label": f"le={edge:g}"})
        lo, prev = edge, c
    rows = [r for r in rows if r["n"] > 0]
    mark_rows: list[_HistogramMark] = [{"x": round(v * scale, 4), "name": f"{k} {v * scale:,.0f}"}
                                       for k, v in marks.items()]
    # where each mark falls along the log axis (0 at its left end, 1 at its right)
    low = math.log10(min([r["lo"] for r in rows] + [m["x"] for m in mark_rows if m["x"] > 0]))
    high = math.log10(max([r["hi"] for r in rows] + [m["x"] for m in mark_rows]))
    span = (high - low) or 1.0

    def decades(lo: float, hi: float) -> list[float]:
        """One tick per power of ten (Vega's nine per decade crowd a phone's axis)."""
        return [10.0 ** k for k in range(math.floor(lo), math.ceil(hi) + 1)]

    base = alt.Chart(alt.InlineData(values=rows))
    x = alt.X("lo:Q", title=x_title, scale=alt.Scale(type="log"),
              axis=alt.Axis(values=decades(low, high), format=",~g"))
    n_max = max(r["n"] for r in rows)
    bars = base.mark_rect(color=PALETTE[0], opacity=0.8, stroke="white").encode(
        x=x, x2="hi:Q", y=alt.Y("n:Q", title="inter-token gaps (count, log scale)",
                               scale=alt.Scale(type="log"),
                               axis=alt.Axis(values=decades(0, math.log10(n_max)),
                                             format=",~g")),
        tooltip=[alt.Tooltip("label:N", title="bucket"), alt.Tooltip("n:Q", format=",.0f")])
    rules = alt.Chart(alt.InlineData(values=mark_rows)).mark_rule(
        color="black", strokeDash=[4, 3]).encode(x=alt.X("x:Q", title=x_title))

    def right_side(v: float) -> bool:
        return v <= 0 or (math.log10(v) - low) / span < 0.6

    # one label per mark, each a line lower than the last, so that close marks stay legible
    names = [alt.Chart(alt.InlineData(values=[row])).mark_text(
        align="left" if right_side(row["x"]) else "right",
        dx=4 if right_side(row["x"]) else -4, dy=14 * i, baseline="top").encode(
        x=alt.X("x:Q", title=x_title), y=alt.value(0), text="name:N")
        for i, row in enumerate(mark_rows)]
    chart = alt.layer(bars, rules, *names).properties(width=width, height=220)
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)


#: The kinds of work in :func:`work_rate_data`, bottom to top of the stack.
WORK_KINDS = ("prompts, first pass", "recomputed", "decoded")


def work_rate_data(result: SimResult, *, bin_s: float = 60.0) -> list[WorkRateRow]:
    """The engine's tokens per second by kind of work, in bins of ``bin_s`` seconds.

    From the run's timeline: prompt tokens prefilled for the first time
    (``prefill_tokens - recomputed_tokens``), tokens prefilled again after a
    preemption (``recomputed_tokens``) and decoded tokens. Rows ``{t_min, kind,
    tok_s, order}``; goodput is the decoded share, throughput the whole stack.
    """
    import numpy as np


    if not isinstance(result, SimResult):
        raise KvsimError(f"work_rate_data: result is a {type(result).__name__}: expected a "
                         "SimResult")
    bin_s = check_float("bin_s", bin_s, min=1.0, max=86_400.0)
    tl = result.timeline
    t = np.asarray(tl["t_s"], dtype=float)
    bins = np.floor(t / bin_s).astype(int)
    n = int(bins.max()) + 1 if len(bins) else 0
    redo = np.asarray(tl["recomputed_tokens"], dtype=float)
    parts = {"prompts, first pass": np.asarray(tl["prefill_tokens"], dtype=float) - redo,
             "recomputed": redo, "decoded": np.asarray(tl["decode_tokens"], dtype=float)}
    rows: list[WorkRateRow] = []
    for order, kind in enumerate(WORK_KINDS):
        per_bin = np.bincount(bins, weights=parts[kind], minlength=n) / bin_s
        rows += [{"t_min": round((b + 0.5) * bin_s / 60.0, 3), "kind": kind,
                  "tok_s": round(float(v), 1), "order": order} for b, v in enumerate(per_bin)]
    return rows


def work_rate_chart(rows: Iterable[WorkRateRow], *, title: str, subtitle: str | None = None,
                    marks: Sequence[float] = (), label_at: float | None = None,
                    width: Width = "container") -> alt.TopLevelMixin:
    """A stacked area of the engine's work by kind over time, each band named in place.

    ``width``: ``"container"`` (the default) follows the page; pixels fix it.
    """
    import altair as alt

    width = check_width(width, "work_rate_chart")
    rows = need_rows(rows, ["t_min", "kind", "tok_s", "order"], "work_rate_chart")
    kinds = [k for k in WORK_KINDS if any(r["kind"] == k for r in rows)]
    colour = alt.Color("kind:N", sort=kinds, legend=None,
                       scale=alt.Scale(domain=kinds, range=[PALETTE[0], PALETTE[3], PALETTE[2]]))
    x = alt.X("t_min:Q", title="time (min)")
    y_title = "engine work (tokens/s)"
    base = alt.Chart(alt.InlineData(values=list(rows)))
    area = base.mark_area(interpolate="step-after", opacity=0.85).encode(
        x=x, y=alt.Y("tok_s:Q", title=y_title, stack=True), color=colour,
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("t_min:Q", title="minute"), alt.Tooltip("kind:N"),
                 alt.Tooltip("tok_s:Q", format=",.0f", title="tokens/s")])
    at = label_at if label_at is not None else max(r["t_min"] for r in rows) / 2
    nearest = min({r["t_min"] for r in rows}, key=lambda v: abs(v - at))
    labels = (base.transform_stack(stack="tok_s", groupby=["t_min"], as_=["y0", "y1"],
                                   sort=[alt.SortField("order")])
              .transform_filter(f"datum.t_min == {nearest} && datum.tok_s > 0")
              .transform_calculate(mid="(datum.y0 + datum.y1) / 2")
              .mark_text(align="left", dx=4, color="black").encode(
                  x=x, y=alt.Y("mid:Q", title=y_title), text="kind:N"))
    layers = [area, labels]
    if marks:
        layers.append(alt.Chart(alt.InlineData(values=[{"m": m} for m in marks]))
                      .mark_rule(strokeDash=[2, 2], color="black")
                      .encode(x=alt.X("m:Q", title="time (min)")))
    chart = alt.layer(*layers).properties(width=width, height=220)
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)
