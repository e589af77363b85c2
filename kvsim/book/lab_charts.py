"""The lab's mission charts: where the pass band of a mission's resource lies.

Explained in chapter 5 (the missions' debriefs and static twins). The rows
come from :func:`kvsim.lab.missions.mission_grid`, which scores every grid point
with :func:`kvsim.lab.missions.score` itself, so the chart and the notebook's
verdict cannot disagree. No scoring runs here; the chart only encodes.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from kvsim.book.charts.theme import DASHES, PALETTE, altair, finish_chart, need_rows
from kvsim.lab.missions import expert_settings, get_mission, mission_grid
from kvsim.lab.replay import oncall_numbers, oncall_text

from .charts import timeline_data

__all__ = ["mission_band_data", "mission_band_chart"]


def mission_band_data(mission, rows: Iterable[Mapping] | None = None,
                      others: Mapping | None = None) -> list[dict]:
    """Long rows for :func:`mission_band_chart`: for each value of the resource (the other
    levers at ``others``, by default the expert's), each SLO metric's worst seed as a share of
    its limit (1 = at the limit), and whether the point earns a star."""

    m = get_mission(mission)
    rows = list(rows) if rows is not None else mission_grid(m)
    if others is None:
        expert = expert_settings(m)
        others = {k: v for k, v in expert.items() if k != m.resource}
    out = []
    for r in rows:
        if any(r[k] != v for k, v in others.items()):
            continue
        for key, limit, label, scale, unit in m.slo.items():
            out.append({"x": r[m.resource], "metric": label, "share": round(
                r[f"{key}_worst"] / limit, 4), "worst": round(r[f"{key}_worst"] * scale, 3),
                "unit": unit, "passes": bool(r["passes"]), "stars": int(r["stars"])})
    return out


def mission_band_chart(rows: Iterable[Mapping], mission, *, title: str,
                       subtitle: str | None = None, guess: float | None = None,
                       interactive: bool = True):
    """Each SLO metric's worst day over the resource, the limit as a rule at 1, the passing
    settings shaded and labelled, and the reader's ``guess`` (if any) as a dashed rule.

    ``interactive`` (the static site's twin): a slider sets the reader's guess and the
    band, the lines and the verdict appear only once the reader ticks "I have committed
    my guess"; both inputs are labelled "Mission N: ..." so the site keeps them in the
    browser's storage (book/_ext/static/kvbook/missions.js)."""
    alt = altair()
    m = get_mission(mission)
    rows = need_rows(rows, ["x", "metric", "share", "passes"], "mission_band_chart")
    lever = m.lever(m.resource)
    names = list(dict.fromkeys(r["metric"] for r in rows))
    xs = sorted({r["x"] for r in rows})
    passing = sorted({r["x"] for r in rows if r["passes"]})
    ymax = max(2.0, min(max(r["share"] for r in rows), 6.0))
    data = [dict(r, share_c=min(r["share"], ymax)) for r in rows]
    x_title = f"{lever.label or lever.name}"
    x_enc = alt.X("x:Q", title=x_title,
                  scale=alt.Scale(domain=[xs[0], xs[-1]], nice=False))
    colour = alt.Color("metric:N", sort=names, title=None,
                       scale=alt.Scale(domain=names, range=PALETTE[:len(names)]),
                       legend=alt.Legend(labelLimit=260, columns=1))
    dash = alt.StrokeDash("metric:N", sort=names, title=None,
                          scale=alt.Scale(domain=names, range=DASHES[:len(names)]))
    lines = alt.Chart(alt.InlineData(values=data)).mark_line(point=True).encode(
        x=x_enc, y=alt.Y("share_c:Q", title="worst of 5 days / SLO limit (1 = at the limit)",
                         scale=alt.Scale(domain=[0, ymax])),
        color=colour, strokeDash=dash,
        tooltip=[alt.Tooltip("metric:N"), alt.Tooltip("x:Q", title=lever.name),
                 alt.Tooltip("worst:Q", title="worst day"), alt.Tooltip("unit:N"),
                 alt.Tooltip("stars:Q", title="stars")])
    y_title = "worst of 5 days / SLO limit (1 = at the limit)"
    limit = alt.Chart(alt.InlineData(values=[{"y": 1.0}])).mark_rule(color="black").encode(
        y=alt.Y("y:Q", title=y_title))
    layers = []
    step = m.step
    if passing:
        spans, lo, prev = [], passing[0], passing[0]
        for v in passing[1:]:
            if v - prev > step * 1.5:
                spans.append((lo, prev))
                lo = v
            prev = v
        spans.append((lo, prev))
        band = [{"a": max(a - step / 2, xs[0]), "b": min(b + step / 2, xs[-1]),
                 "t": f"passes: {a:g} to {b:g}"} for a, b in spans]
        base = alt.Chart(alt.InlineData(values=band))
        x_a = alt.X("a:Q", title=x_title, scale=alt.Scale(domain=[xs[0], xs[-1]], nice=False))
        layers.append(base.mark_rect(opacity=0.18, color=PALETTE[2]).encode(x=x_a, x2="b:Q"))
        # the label ends at the band's right edge, so a band at the top of the range is not cut
        layers.append(base.mark_text(align="right", dx=-3, dy=8, baseline="top").encode(
            x=alt.X("b:Q", title=x_title, scale=alt.Scale(domain=[xs[0], xs[-1]], nice=False)),
            y=alt.value(0), text="t:N"))
    layers += [limit, lines]
    params = []
    if interactive:
        import json

        n = m.number
        p_guess = alt.param(name=f"guess_{n}", value=xs[0], bind=alt.binding_range(
            min=xs[0], max=xs[-1], step=step, name=f"Mission {n}: your guess, {lever.name} "))
        p_reveal = alt.param(name=f"reveal_{n}", value=False, bind=alt.binding_checkbox(
            name=f"Mission {n}: I have committed my guess; show the pass band "))
        params = [p_guess, p_reveal]
        # the band and the lines appear only after the reader commits
        layers = [layer.transform_filter(f"reveal_{n}") for layer in layers[:-2]] + \
                 [limit, lines.transform_filter(f"reveal_{n}")]
        marks = json.dumps([f"{v:.3f}" for v in passing])
        verdict = (f"reveal_{n} ? (indexof({marks}, format(guess_{n}, '.3f')) >= 0 ? "
                   f"'your guess ' + format(guess_{n}, '.2f') + ' passes on every day' : "
                   f"'your guess ' + format(guess_{n}, '.2f') + ' fails on some day') : "
                   f"'guess with the slider, then tick the box'")
        one = alt.Chart(alt.InlineData(values=[{}]))
        layers.append(one.transform_calculate(x=f"guess_{n}").mark_rule(
            strokeDash=[4, 3], color="black", strokeWidth=2).encode(
            x=alt.X("x:Q", title=x_title, scale=alt.Scale(domain=[xs[0], xs[-1]], nice=False))))
        layers.append(one.transform_calculate(t=verdict).mark_text(
            align="left", baseline="top", dx=4, dy=4, fontWeight="bold").encode(
            x=alt.value(0), y=alt.value(0), text="t:N"))
    if guess is not None:
        layers.append(alt.Chart(alt.InlineData(values=[{"x": guess, "t": "your guess"}]))
                      .mark_rule(strokeDash=[4, 3], color="black").encode(
                          x=alt.X("x:Q", title=x_title,
                                  scale=alt.Scale(domain=[xs[0], xs[-1]], nice=False))))
    where = (", ".join(f"{a:g} to {b:g}" for a, b in spans) if passing else "nowhere on the grid")
    description = (f"Mission {m.number}: for each {lever.name} from {xs[0]:g} to {xs[-1]:g}, the "
                   f"worst of five days for each target ({', '.join(names)}) divided by its "
                   f"limit. Every target is met, on every day, for {lever.name} {where}.")
    chart = alt.layer(*layers).properties(width="container", height=260,
                                          description=description)
    if params:
        chart = chart.add_params(*params)
    return finish_chart(chart, title, subtitle)


# ----------------------------------------------------------------------- the lab's twin

__all__ += ["lab_twin_data", "lab_twin_chart"]


def lab_twin_data(runs, *, points: int = 200) -> dict:
    """Rows for :func:`lab_twin_chart` from :func:`kvsim.lab.replay.twin_runs`.

    ``runs`` maps ``(gpu_memory_utilization, output_mean)`` to a run. Returns
    ``{"series", "ticks", "readout", "utils", "answers", "t_end"}``: the binned
    timeline of every run (:func:`kvsim.book.charts.timeline_data`, keyed by the two
    settings), its preemption ticks, and per run the on-call lines
    (:func:`kvsim.lab.replay.oncall_text`) that the chart prints for the chosen case.
    """


    labels = {f"{u:g}|{a}": (u, a) for u, a in runs}
    data = timeline_data({k: runs[v] for k, v in labels.items()}, points=points)
    for row in data["series"] + data["ticks"]:
        u, a = labels[row.pop("run")]
        row.update(util=u, answers=a)
    readout = []
    for (u, a), r in runs.items():
        n = oncall_numbers(r)
        for i, line in enumerate(oncall_text(n)):
            readout.append({"util": u, "answers": a, "line": i, "text": line})
    utils = sorted({u for u, _ in runs})
    answers = sorted({a for _, a in runs})
    return {"series": data["series"], "ticks": data["ticks"], "readout": readout,
            "utils": utils, "answers": answers, "t_end": data["t_end"]}


def lab_twin_chart(data: Mapping, *, title: str, subtitle: str | None = None, width: int = 560):
    """The lab without a kernel: pick memory and answer length, walk the precomputed run.

    Two drop-downs (keyboard reachable) choose the case; the chart shows that
    run's KV in use (percent of its pool, the full pool dashed) with a
    triangle at each preemption, the waiting queue beneath, a playhead slider,
    and the on-call numbers printed below. Nothing is simulated in the browser:
    every value is a kvsim run.
    """
    alt = altair()
    series, ticks, readout = data["series"], data["ticks"], data["readout"]
    t_end = round(float(data["t_end"]), 3)
    p_util = alt.param(name="util", value=data["utils"][0], bind=alt.binding_select(
        options=list(data["utils"]), name="gpu_memory_utilization "))
    p_ans = alt.param(name="answers", value=data["answers"][0], bind=alt.binding_select(
        options=list(data["answers"]), name="mean answer (tokens) "))
    step = round(t_end / max(1, len({r["t"] for r in series})), 3)
    p_t = alt.param(name="playhead", value=round(t_end / 2, 3), bind=alt.binding_range(
        min=0, max=t_end, step=step, name="playhead (s) "))
    pick = "datum.util == util && datum.answers == answers"
    x_scale = alt.Scale(domain=[0, t_end], nice=False)
    x_hidden = alt.X("t:Q", title="time (s)", scale=x_scale,
                     axis=alt.Axis(title=None, labels=False))
    x = alt.X("t:Q", title="time (s)", scale=x_scale)
    base = alt.Chart(alt.InlineData(values=series)).transform_filter(pick)
    kv = base.mark_area(color=PALETTE[0], opacity=0.35, line={"color": PALETTE[0]},
                        interpolate="step-before").encode(
        x=x_hidden, y=alt.Y("kv_pct:Q", title="KV in use (% of pool)",
                            scale=alt.Scale(domain=[0, 112])),
        tooltip=[alt.Tooltip("t:Q", format=",.1f", title="time (s)"),
                 alt.Tooltip("kv_pct:Q", format=".1f", title="KV in use (%)")])
    full = (alt.Chart(alt.InlineData(values=[{"y": 100}]))
            .mark_rule(strokeDash=[4, 3], color="black").encode(
                y=alt.Y("y:Q", title="KV in use (% of pool)")))
    tick_rows = ticks or [{"util": -1, "answers": -1, "t": 0, "preemptions": 0}]
    marks = (alt.Chart(alt.InlineData(values=tick_rows)).transform_filter(pick)
             .mark_point(shape="triangle-down", filled=True, color=PALETTE[3], size=60)
             .encode(x=x_hidden, y=alt.value(6),
                     tooltip=[alt.Tooltip("t:Q", format=",.1f", title="time (s)"),
                              alt.Tooltip("preemptions:Q", title="preemptions")]))
    rule = (alt.Chart(alt.InlineData(values=[{}])).transform_calculate(t="playhead")
            .mark_rule(color="black", strokeWidth=1.5).encode(
                x=alt.X("t:Q", title="time (s)", scale=x_scale)))

    def now(y_text, expr):
        return (base.transform_filter("datum.t <= playhead")
                .transform_window(rank="rank()", sort=[alt.SortField("t", order="descending")])
                .transform_filter("datum.rank == 1").transform_calculate(label=expr)
                .mark_text(align="left", dx=6, baseline="top")
                .encode(x=alt.X("t:Q", title="time (s)", scale=x_scale), y=alt.value(y_text),
                        text="label:N"))

    top = alt.layer(kv, full, marks, rule,
                    now(18, "format(datum.kv_pct, '.0f') + '% of the pool in use'")).properties(
        width=width, height=150, title=alt.TitleParams(
            "KV cache in use; ▼ a preemption", fontSize=13, anchor="start"))
    strip = alt.layer(
        base.mark_line(color=PALETTE[1], interpolate="step-before").encode(
            x=x, y=alt.Y("waiting:Q", title="waiting (requests)"),
            tooltip=[alt.Tooltip("t:Q", format=",.1f", title="time (s)"),
                     alt.Tooltip("waiting:Q", title="waiting")]),
        rule, now(2, "datum.waiting + ' waiting'")).properties(width=width, height=70)
    lines = (alt.Chart(alt.InlineData(values=readout)).transform_filter(pick)
             .mark_text(align="left", baseline="top", fontSize=13)
             .encode(x=alt.value(0), y=alt.Y("line:O", axis=None), text="text:N"))
    n_lines = max(r["line"] for r in readout) + 1
    text = lines.properties(width=width, height=19 * n_lines, title=alt.TitleParams(
        "The pager's view of this run", fontSize=13, anchor="start"))
    chart = alt.vconcat(top, strip, text, spacing=8).add_params(p_util, p_ans, p_t)
    cases = ", ".join(f"{u:g}" for u in data["utils"])
    lengths = ", ".join(str(a) for a in data["answers"])
    chart = chart.properties(description=(
        f"The lab's precomputed runs: gpu_memory_utilization {cases} and mean answers of "
        f"{lengths} tokens. Choose one; the chart shows KV cache in use over time with a mark "
        f"at each preemption, the waiting queue, and the run's on-call numbers as text."))
    return finish_chart(chart, title, subtitle)


# ------------------------------------------------------------- days of traffic compared

__all__ += ["days_chart"]


def days_chart(rows: Iterable[Mapping], *, case: str, panels, title,
               subtitle: str | None = None, width: int = 240):
    """One dot per day of traffic (seed), a black tick and a label at the median, per case.

    ``rows`` hold one run each: the ``case`` column, ``seed`` and the metrics;
    ``panels`` is a list of ``(column, axis title with unit, d3 format)``, one
    panel each, stacked. The cases are named on the y axis (not by colour), so
    the spread over days reads without a legend: "averages hide it".
    """
    import numpy as np

    alt = altair()
    rows = need_rows(rows, [case, "seed"] + [p[0] for p in panels], "days_chart")
    cases = list(dict.fromkeys(str(r[case]) for r in rows))
    out = []
    for col, axis_title, fmt in panels:
        dots = [{"case": str(r[case]), "seed": int(r["seed"]), "v": float(r[col])} for r in rows]
        med = [{"case": c, "v": float(np.median([d["v"] for d in dots if d["case"] == c]))}
               for c in cases]
        top = max(d["v"] for d in dots) * 1.15 or 1.0
        y = alt.Y("case:N", sort=cases, title=None, axis=alt.Axis(labelLimit=260),
                  scale=alt.Scale(paddingOuter=0.6))
        xs = alt.Scale(domain=[0, top])
        p = alt.Chart(alt.InlineData(values=dots)).mark_point(
            filled=True, size=70, opacity=0.7, color=PALETTE[0]).encode(
            x=alt.X("v:Q", title=axis_title, scale=xs), y=y,
            tooltip=[alt.Tooltip("case:N"), alt.Tooltip("seed:Q", title="seed (day)"),
                     alt.Tooltip("v:Q", format=fmt, title=axis_title)])
        mb = alt.Chart(alt.InlineData(values=med))
        tick = mb.mark_tick(color="black", thickness=3, size=26).encode(
            x=alt.X("v:Q", title=axis_title, scale=xs), y=y)
        label = mb.mark_text(dy=-17, color="black").encode(
            x=alt.X("v:Q", title=axis_title, scale=xs), y=y,
            text=alt.Text("v:Q", format=fmt))
        out.append(alt.layer(p, tick, label).properties(width=width, height=46 * len(cases)))
    chart = alt.vconcat(*out, spacing=12).resolve_scale(x="independent")
    return finish_chart(chart, title, subtitle)
