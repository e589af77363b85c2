"""The lab's charts: where the pass band of a mission's resource lies, and the lab's twin.

Explained in chapter 5 (the missions' debriefs and static twins). The band's rows
come from :func:`kvsim.lab.missions.mission_grid`, which scores every grid point
with :func:`kvsim.lab.missions.score` itself, so the chart and the notebook's
verdict cannot disagree. No scoring runs here; the chart only encodes. The lab's
twin (:func:`lab_twin_chart`) draws :func:`kvsim.lab.twin_runs`'s precomputed runs.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NotRequired, TypedDict

from kvsim.book.charts.theme import (
    DASHES,
    NEUTRAL,
    PALETTE,
    Width,
    check_width,
    finish_chart,
    fit_page,
    need_rows,
    number,
)
from kvsim.engine.result import SimResult
from kvsim.errors import KvsimError
from kvsim.lab.missions import LeverValue, MissionLike, expert_settings, get_mission, mission_grid
from kvsim.lab.replay import TwinPoint, oncall_numbers, oncall_text

if TYPE_CHECKING:
    import altair as alt

__all__ = ["mission_band_data", "mission_band_chart"]


class BandRow(TypedDict):
    """One SLO metric at one value ``x`` of a mission's resource (:func:`mission_band_data`):
    its worst day as a share of the limit, in its unit, and whether the point passes."""
    x: float
    metric: str
    share: float
    worst: float
    unit: str
    passes: bool
    stars: int
    by: NotRequired[LeverValue]
    by_lever: NotRequired[str]


def mission_band_data(mission: MissionLike, rows: Iterable[Mapping[str, LeverValue]] | None = None,
                      others: Mapping[str, LeverValue] | None = None,
                      by: str | None = None) -> list[BandRow]:
    """Long rows for :func:`mission_band_chart`: for each value of the resource (the other
    levers at ``others``, each one it leaves out at the expert's), each SLO metric's worst
    seed as a share of its limit (1 = at the limit), and whether the point earns a star.

    ``by`` names one more lever (mission 3's ``kv_dtype``) whose every value is kept: each
    row then says its value in ``by`` (and the lever in ``by_lever``), and the chart lets the
    reader choose it."""

    m = get_mission(mission)
    grid = list(rows) if rows is not None else mission_grid(m)
    if by is not None:
        if by == m.resource:
            raise KvsimError(f"mission_band_data: by={by!r} is the resource on the x axis: "
                             f"expected another of mission {m.number}'s levers")
        m.lever(by)                                  # a lever of this mission, or one line
    # the levers ``others`` leaves out stay at the expert's (mission 3's max_num_seqs)
    expert = expert_settings(m)
    fixed = dict({k: v for k, v in expert.items() if k != m.resource}, **(others or {}))
    fixed = {k: v for k, v in fixed.items() if k != by}
    out: list[BandRow] = []
    for r in grid:
        if any(r[k] != v for k, v in fixed.items()):
            continue
        for key, limit, label, scale, unit in m.slo.items():
            worst = number(r[f"{key}_worst"], f"{key}_worst")
            row: BandRow = {"x": number(r[m.resource], m.resource), "metric": label,
                            "share": round(worst / limit, 4), "worst": round(worst * scale, 3),
                            "unit": unit, "passes": bool(r["passes"]),
                            "stars": int(number(r["stars"], "stars"))}
            if by is not None:
                row["by"] = r[by]
                row["by_lever"] = by
            out.append(row)
    return out


def _spans(passing: list[float], step: float) -> list[tuple[float, float]]:
    """Runs of neighbouring grid values (no gap over 1.5 steps) as ``(low, high)``."""
    if not passing:
        return []
    spans, lo, prev = [], passing[0], passing[0]
    for v in passing[1:]:
        if v - prev > step * 1.5:
            spans.append((lo, prev))
            lo = v
        prev = v
    spans.append((lo, prev))
    return spans


def mission_band_chart(rows: Iterable[BandRow], mission: MissionLike, *, title: str,
                       subtitle: str | None = None, guess: float | None = None,
                       interactive: bool = True, by_start: LeverValue = None) -> alt.TopLevelMixin:
    """Each SLO metric's worst day over the resource, the limit as a rule at 1, the passing
    settings shaded and labelled, and the reader's ``guess`` (if any) as a dashed rule.

    ``interactive`` (the static site's twin): a slider sets the reader's guess and the
    band, the lines and the verdict appear only once the reader ticks "I have committed
    my guess"; both inputs are labelled "Mission N: ..." so the site keeps them in the
    browser's storage (book/_ext/static/kvbook/missions.js).

    Rows from ``mission_band_data(..., by=lever)`` add a drop-down of that lever (mission
    3's KV cache dtype), starting at ``by_start`` (by default the ticket's own value): the
    lines, the band and the verdict follow it. It is a view, not the guess, so it never
    locks."""
    import altair as alt

    m = get_mission(mission)
    checked = need_rows(rows, ["x", "metric", "share", "passes"], "mission_band_chart")
    lever = m.lever(m.resource)
    n = m.number
    names = list(dict.fromkeys(r["metric"] for r in checked))
    xs = sorted({r["x"] for r in checked})
    has_by = all("by" in r for r in checked)
    views = list(dict.fromkeys(r["by"] for r in checked)) if has_by else [None]
    by_lever = m.lever(checked[0].get("by_lever", "")) if has_by else None
    if by_lever is not None:
        if by_start is None:
            by_start = by_lever.start if by_lever.start in views else views[0]
        if by_start not in views:
            raise KvsimError(f"mission_band_chart: by_start={by_start!r}: expected one of "
                             f"{', '.join(map(str, views))}")
    passing = {v: sorted({r["x"] for r in checked if r["passes"] and r.get("by") == v})
               for v in views}
    step = m.step
    spans = {v: _spans(passing[v], step) for v in views}
    ymax = max(2.0, min(max(r["share"] for r in checked), 6.0))
    data = [dict(r, share_c=min(r["share"], ymax)) for r in checked]
    x_title = f"{lever.label or lever.name}"
    x_scale = alt.Scale(domain=[xs[0], xs[-1]], nice=False)
    x_enc = alt.X("x:Q", title=x_title, scale=x_scale)
    colour = alt.Color("metric:N", sort=names, title=None,
                       scale=alt.Scale(domain=names, range=PALETTE[:len(names)]),
                       legend=alt.Legend(labelLimit=260, columns=1))
    dash = alt.StrokeDash("metric:N", sort=names, title=None,
                          scale=alt.Scale(domain=names, range=DASHES[:len(names)]))
    y_title = "worst of 5 days / SLO limit (1 = at the limit)"
    lines = alt.Chart(alt.InlineData(values=data)).mark_line(point=True).encode(
        x=x_enc, y=alt.Y("share_c:Q", title=y_title, scale=alt.Scale(domain=[0, ymax])),
        color=colour, strokeDash=dash,
        tooltip=[alt.Tooltip("metric:N"), alt.Tooltip("x:Q", title=lever.name),
                 alt.Tooltip("worst:Q", title="worst day"), alt.Tooltip("unit:N"),
                 alt.Tooltip("stars:Q", title="stars")])
    limit = alt.Chart(alt.InlineData(values=[{"y": 1.0}])).mark_rule(color="black").encode(
        y=alt.Y("y:Q", title=y_title))
    layers = []
    band = [{"a": max(a - step / 2, xs[0]), "b": min(b + step / 2, xs[-1]),
             "t": f"passes: {a:g} to {b:g}", **({"by": v} if has_by else {})}
            for v in views for a, b in spans[v]]
    if band:
        base = alt.Chart(alt.InlineData(values=band))
        x_a = alt.X("a:Q", title=x_title, scale=x_scale)
        layers.append(base.mark_rect(opacity=0.18, color=PALETTE[2]).encode(x=x_a, x2="b:Q"))
        # the label ends at the band's right edge, so a band at the top of the range is not
        # cut, and sits below the verdict's line (a phone's page holds both only one above
        # the other)
        layers.append(base.mark_text(align="right", dx=-3, dy=26 if interactive else 8,
                                     baseline="top").encode(
            x=alt.X("b:Q", title=x_title, scale=x_scale), y=alt.value(0), text="t:N"))
    params = []
    view_param = f"view_{n}"
    if by_lever is not None:
        params.append(alt.param(name=view_param, value=by_start, bind=alt.binding_select(
            options=views, labels=[f"{v} (the ticket's)" if v == by_lever.start else str(v)
                                   for v in views],
            name=f"Mission {n}: {by_lever.label or by_lever.name} ")))
        shown = f"datum.by == {view_param}"
        layers = [layer.transform_filter(shown) for layer in layers]
        lines = lines.transform_filter(shown)
    if interactive:
        p_guess = alt.param(name=f"guess_{n}", value=xs[0], bind=alt.binding_range(
            min=xs[0], max=xs[-1], step=step, name=f"Mission {n}: your guess, {lever.name} "))
        p_reveal = alt.param(name=f"reveal_{n}", value=False, bind=alt.binding_checkbox(
            name=f"Mission {n}: I have committed my guess; show the pass band "))
        params = [p_guess, p_reveal] + params
        # the band and the lines appear only after the reader commits
        layers = [layer.transform_filter(f"reveal_{n}") for layer in layers] + \
                 [limit, lines.transform_filter(f"reveal_{n}")]
        marks = {v: json.dumps([f"{x:.3f}" for x in passing[v]]) for v in views}
        if has_by:                  # the passing settings of the view the reader chose
            chosen = marks[views[-1]]
            for v in reversed(views[:-1]):
                chosen = f"({view_param} == {json.dumps(v)} ? {marks[v]} : {chosen})"
        else:
            chosen = marks[None]
        verdict = (f"reveal_{n} ? (indexof({chosen}, format(guess_{n}, '.3f')) >= 0 ? "
                   f"'your guess ' + format(guess_{n}, '.2f') + ' passes on every day' : "
                   f"'your guess ' + format(guess_{n}, '.2f') + ' fails on some day') : "
                   f"'guess with the slider, then tick the box'")
        one = alt.Chart(alt.InlineData(values=[{}]))
        layers.append(one.transform_calculate(x=f"guess_{n}").mark_rule(
            strokeDash=[4, 3], color="black", strokeWidth=2).encode(
            x=alt.X("x:Q", title=x_title, scale=x_scale)))
        layers.append(one.transform_calculate(t=verdict).mark_text(
            align="left", baseline="top", dx=4, dy=4, fontWeight="bold").encode(
            x=alt.value(0), y=alt.value(0), text="t:N"))
    else:
        layers += [limit, lines]
    if guess is not None:
        layers.append(alt.Chart(alt.InlineData(values=[{"x": guess, "t": "your guess"}]))
                      .mark_rule(strokeDash=[4, 3], color="black").encode(
                          x=alt.X("x:Q", title=x_title, scale=x_scale)))

    def where(v: LeverValue) -> str:
        return ", ".join(f"{a:g} to {b:g}" for a, b in spans[v]) or "nowhere on the grid"
    if by_lever is not None:
        met = "; ".join(f"with {by_lever.name} {v}, for {lever.name} {where(v)}" for v in views)
    else:
        met = f"for {lever.name} {where(None)}"
    description = (f"Mission {m.number}: for each {lever.name} from {xs[0]:g} to {xs[-1]:g}, the "
                   f"worst of five days for each target ({', '.join(names)}) divided by its "
                   f"limit. Every target is met, on every day, {met}.")
    chart = alt.layer(*layers).properties(width="container", height=260,
                                          description=description)
    if params:
        chart = chart.add_params(*params)
    return finish_chart(fit_page(chart), title, subtitle)


# ----------------------------------------------------------------------- the lab's twin

__all__ += ["TWIN_BIN_S", "TWIN_TEXT_CHARS", "TWIN_MODE_LABELS", "twin_run", "lab_twin_data",
            "lab_twin_chart"]

#: The twin's time step: each run is kept as the peak of every 2-second bin (the playhead's
#: step), so a short spike is not averaged away and the page stays light.
TWIN_BIN_S = 2

#: Characters per line of the twin's printed numbers: each line fits a phone's page.
TWIN_TEXT_CHARS = 42

#: The preemption choices as the twin's drop-down names them.
TWIN_MODE_LABELS = {"v1-recompute": "vLLM V1, recompute", "v0-recompute": "V0, recompute",
                    "v0-swap": "V0, swap to CPU"}


class TwinRun(TypedDict):
    """One run as the twin keeps it (:func:`twin_run`)."""
    kv: list[int]
    waiting: list[int]
    swapped: list[int]
    tick_bin: list[int]
    tick_n: list[int]
    pool: int
    warmup_s: float
    end_s: float
    oncall: dict[str, float | int]


class TwinRow(TypedDict):
    """One run as :func:`lab_twin_chart` reads it: its five settings, its bins as
    comma-separated integers, and the pager's text."""
    util: float | str
    answers: float | str
    headroom: float | str
    mode: float | str
    seed: float | str
    pool: int
    kv: str
    waiting: str
    swapped: str
    tick_bin: str
    tick_n: str
    text: str


class TwinData(TypedDict):
    """:func:`lab_twin_data`'s result, :func:`lab_twin_chart`'s input."""
    runs: list[TwinRow]
    levers: dict[str, list[float | str]]
    bin_s: int
    t_end: int
    warmup_s: float
    max_pool: int
    oncall: dict[TwinPoint, dict[str, float | int]]


def twin_run(result: SimResult) -> TwinRun:
    """One run as the twin keeps it: what :func:`lab_twin_chart` draws, nothing more.

    ``kv``, ``waiting``, ``swapped``: per :data:`TWIN_BIN_S`-second bin of the run (bin
    ``i`` ends at ``(i + 1) * TWIN_BIN_S`` s), the most KV blocks held, requests waiting and
    requests swapped to CPU memory in it (an empty bin carries the state before it);
    ``tick_bin``, ``tick_n``: the bins with preemptions and how many (the run's
    ``events``); ``pool``: the pool's blocks; ``warmup_s``, ``end_s``; ``oncall``:
    :func:`kvsim.lab.replay.oncall_numbers`. Module-level, so a process pool can apply it
    where the run was made (:func:`kvsim.lab.twin_runs`'s ``each``)."""
    import numpy as np

    tl = result.timeline
    t = np.asarray(tl["t_s"], dtype=float)
    n = max(1, int(np.ceil(float(result.simulated_s) / TWIN_BIN_S - 1e-9)))
    bins = np.clip(np.ceil(t / TWIN_BIN_S - 1e-9).astype(int) - 1, 0, n - 1)
    peaks: dict[str, list[int]] = {}
    for name, col in (("kv", "kv_blocks_used"), ("waiting", "waiting"), ("swapped", "swapped")):
        peak = np.full(n, -1, dtype=np.int64)
        np.maximum.at(peak, bins, np.asarray(tl[col], dtype=np.int64))
        last = 0
        for i in range(n):                 # an empty bin carries the state before it
            if peak[i] < 0:
                peak[i] = last
            last = peak[i]
        peaks[name] = [int(v) for v in peak]
    ev = np.asarray(result.events["t_s"], dtype=float)
    ev_bins = np.clip(np.ceil(ev / TWIN_BIN_S - 1e-9).astype(int) - 1, 0, n - 1)
    counts = np.bincount(ev_bins, minlength=n)
    hit = np.nonzero(counts)[0]
    return {"kv": peaks["kv"], "waiting": peaks["waiting"], "swapped": peaks["swapped"],
            "tick_bin": [int(i) for i in hit], "tick_n": [int(counts[i]) for i in hit],
            "pool": int(result.total_blocks), "warmup_s": float(result.config["warmup_s"]),
            "end_s": float(result.simulated_s), "oncall": oncall_numbers(result)}


def _twin_text(seed: float | str, n: Mapping[str, object]) -> str:
    """The pager's lines for one run, wrapped to :data:`TWIN_TEXT_CHARS` (continuations
    indented), one text with line breaks."""
    import re
    import textwrap

    lines = [f"day (seed) {seed}, after the warm-up:"] + oncall_text(n)
    out = []
    for line in lines:
        line = re.sub(r"(\d) (s|ms|GB)\b", "\\1\u00a0\\2", line)   # "2.1 s" stays on one line
        # an indent of no-break spaces: a chart's text drops leading plain ones
        out += textwrap.wrap(line, TWIN_TEXT_CHARS, subsequent_indent="\u00a0\u00a0",
                             break_on_hyphens=False) or [""]
    return "\n".join(out)


def _joined(values: Iterable[int]) -> str:
    """Integers as one comma-separated string: the chart splits it again (a list of a
    hundred numbers per run would make the spec slow to build and check)."""
    return ",".join(str(int(v)) for v in values)


def _held(values: Sequence[int], pad: int) -> list[int]:
    """``values`` with its last value repeated ``pad`` more times (a run that ended holds its state)."""
    return list(values) + [values[-1]] * pad


def lab_twin_data(runs: Mapping[TwinPoint, SimResult | TwinRun]) -> TwinData:
    """Rows for :func:`lab_twin_chart` from :func:`kvsim.lab.twin_runs`.

    ``runs`` maps ``(gpu_memory_utilization, output_mean, watermark, preemption, seed)``
    to a run, or to :func:`twin_run` of one (what ``twin_runs(each=twin_run)`` returns).
    Returns ``{"runs", "levers", "bin_s", "t_end", "warmup_s", "max_pool", "oncall"}``:
    one row per run (the five settings, :func:`twin_run`'s arrays as comma-separated
    integers, ``swapped`` empty where it is all zero, the pager's text), each lever's
    values in grid order, the time axis, and per point the on-call numbers
    (:func:`kvsim.lab.replay.oncall_numbers`).
    """
    kept = {p: (twin_run(r) if isinstance(r, SimResult) else r) for p, r in runs.items()}
    if not kept:
        raise KvsimError("lab_twin_data: runs is empty: expected kvsim.lab.twin_runs()")
    for p in kept:
        if not (isinstance(p, tuple) and len(p) == 5):
            raise KvsimError(f"lab_twin_data: key {p!r}: expected (gpu_memory_utilization, "
                             f"output_mean, watermark, preemption, seed) as twin_runs gives")
    n = max(len(k["kv"]) for k in kept.values())
    rows: list[TwinRow] = []
    for (util, answers, headroom, mode, seed), k in kept.items():
        pad = n - len(k["kv"])                # a shorter run holds its last state
        swapped = _held(k["swapped"], pad)
        rows.append({"util": util, "answers": answers, "headroom": headroom, "mode": mode,
                     "seed": seed, "pool": k["pool"], "kv": _joined(_held(k["kv"], pad)),
                     "waiting": _joined(_held(k["waiting"], pad)),
                     # all zero (no swap): left empty, the chart reads a missing value as 0
                     "swapped": _joined(swapped) if any(swapped) else "",
                     "tick_bin": _joined(k["tick_bin"]), "tick_n": _joined(k["tick_n"]),
                     "text": _twin_text(seed, k["oncall"])})
    levers = {name: list(dict.fromkeys(p[i] for p in kept))
              for i, name in enumerate(("util", "answers", "headroom", "mode", "seed"))}
    warmups = {k["warmup_s"] for k in kept.values()}
    return {"runs": rows, "levers": levers, "bin_s": TWIN_BIN_S, "t_end": n * TWIN_BIN_S,
            "warmup_s": max(warmups), "max_pool": max(k["pool"] for k in kept.values()),
            "oncall": {p: k["oncall"] for p, k in kept.items()}}


def lab_twin_chart(data: TwinData, *, title: str, subtitle: str | None = None,
                   width: Width = "container", start: Mapping[str, float | str] | None = None,
                   pager: bool = True) -> alt.TopLevelMixin:
    """The lab without a kernel: choose a precomputed run, walk it with the playhead.

    Drop-downs (keyboard reachable) choose memory, mean answer length, admission
    headroom (``watermark``), engine and preemption mode, and the day (``seed``);
    ``start`` sets their first values (by default each lever's first). For that run the
    chart shows KV blocks in use over time with the pool's size as a dashed rule, a red
    tick at each preemption and the warm-up shaded; beneath it the waiting queue and, in
    swap mode, the requests parked in CPU memory; then a bar that follows the playhead (the
    blocks in use then, against the pool) and the run's on-call numbers. Nothing is
    simulated in the browser: every value is a kvsim run. ``width``: ``"container"`` (the
    default) follows the page; pixels fix it. A lever with one value gets no drop-down
    (the live panel draws one run this way, with ``pager=False``: it prints the on-call
    numbers itself).
    """
    import altair as alt

    for key in ("runs", "levers", "bin_s", "t_end", "warmup_s", "max_pool"):
        if key not in data:
            raise KvsimError(f"lab_twin_chart: data lacks {key!r}: build it with lab_twin_data")
    width = check_width(width, "lab_twin_chart")
    rows, levers = list(data["runs"]), data["levers"]
    dt, t_end = int(data["bin_s"]), int(data["t_end"])
    chosen = dict(start or {})
    unknown = [k for k in chosen if k not in levers]
    if unknown:
        raise KvsimError(f"lab_twin_chart: start {unknown[0]!r} is not a lever: expected one "
                         f"of {', '.join(levers)}")
    first = {k: chosen.get(k, v[0]) for k, v in levers.items()}
    for k, v in first.items():
        if v not in levers[k]:
            raise KvsimError(f"lab_twin_chart: start {k}={v!r} is not on the twin's grid: "
                             f"expected one of {', '.join(map(str, levers[k]))}")

    def select(name: str, label: str, shown: Callable[[float | str], str]) -> alt.Parameter:
        if len(levers[name]) == 1:
            return alt.param(name=name, value=first[name])
        return alt.param(name=name, value=first[name], bind=alt.binding_select(
            options=list(levers[name]), labels=[shown(v) for v in levers[name]], name=label))
    params = [
        select("util", "gpu_memory_utilization ", lambda v: f"{v:.2f}"),
        select("answers", "mean answer (tokens) ", str),
        select("headroom", "admission headroom (watermark) ",
               lambda v: "0 (none)" if v == 0 else f"{v:.2f}"),
        select("mode", "engine, preemption mode ", lambda v: TWIN_MODE_LABELS.get(str(v), str(v))),
        select("seed", "day of traffic (seed) ", str),
    ]
    p_t = alt.param(name="playhead", value=min(t_end, dt * round(t_end / 2 / dt)),
                    bind=alt.binding_range(min=dt, max=t_end, step=dt, name="playhead (s) "))
    pick = " && ".join(f"datum.{k} == {k}" for k in levers)
    top_y = round(data["max_pool"] * 1.2)
    x_scale = alt.Scale(domain=[0, t_end], nice=False)
    x_bare = alt.X("t:Q", title="time (s)", scale=x_scale, axis=alt.Axis(title=None, labels=False))
    x_time = alt.X("t:Q", title="time (s)", scale=x_scale)
    y_kv = alt.Y("kv:Q", title="KV blocks in use (blocks)", scale=alt.Scale(domain=[0, top_y]))
    # the runs are the concatenation's data, inherited by every view without its own
    # (built and checked once, not once per view)
    run = alt.Chart().transform_filter(pick)
    # each run's bins are comma-separated integers: split, flatten, numbered (bin i ends
    # at i * dt seconds)
    series = (run.transform_calculate(kv="split(datum.kv, ',')",
                                      waiting="split(datum.waiting, ',')",
                                      swapped="datum.swapped ? split(datum.swapped, ',') : []")
              .transform_flatten(["kv", "waiting", "swapped"])
              .transform_window(i="row_number()")
              .transform_calculate(t=f"datum.i * {dt}", kv="toNumber(datum.kv)",
                                   waiting="toNumber(datum.waiting)",
                                   swapped="datum.swapped ? toNumber(datum.swapped) : 0"))
    warm = alt.Chart(alt.InlineData(values=[{"a": 0, "b": data["warmup_s"]}]))
    layers = [
        warm.mark_rect(color=NEUTRAL, opacity=0.35).encode(
            x=alt.X("a:Q", title="time (s)", scale=x_scale), x2="b:Q"),
        warm.mark_text(align="left", baseline="top", dx=3).encode(
            x=alt.X("a:Q", title="time (s)", scale=x_scale), y=alt.value(18),
            text=alt.value("warm-up")),
        series.mark_area(color=PALETTE[0], opacity=0.35, line={"color": PALETTE[0]},
                         interpolate="step-before").encode(
            x=x_bare, y=y_kv,
            tooltip=[alt.Tooltip("t:Q", title="time (s)"),
                     alt.Tooltip("kv:Q", format=",", title="KV blocks in use")]),
        run.mark_rule(strokeDash=[4, 3], color="black").encode(
            y=alt.Y("pool:Q", title="KV blocks in use (blocks)", scale=alt.Scale(domain=[0, top_y]))),
        run.transform_calculate(t=str(t_end), label="'pool: ' + format(datum.pool, ',') + ' blocks'")
        .mark_text(align="right", baseline="bottom", dx=-4, dy=-3).encode(
            x=x_bare, y=alt.Y("pool:Q", title="KV blocks in use (blocks)",
                              scale=alt.Scale(domain=[0, top_y])), text="label:N"),
        run.transform_filter("datum.tick_bin != ''")
        .transform_calculate(tick_bin="split(datum.tick_bin, ',')",
                             tick_n="split(datum.tick_n, ',')")
        .transform_flatten(["tick_bin", "tick_n"])
        .transform_calculate(t=f"(toNumber(datum.tick_bin) + 1) * {dt}",
                             tick_n="toNumber(datum.tick_n)")
        .mark_tick(orient="vertical", color=PALETTE[3], thickness=2, size=12).encode(
            x=x_bare, y=alt.value(7),
            tooltip=[alt.Tooltip("t:Q", title="time (s)"),
                     alt.Tooltip("tick_n:Q", title="preemptions")]),
    ]
    playhead = (alt.Chart(alt.InlineData(values=[{}])).transform_calculate(t="playhead")
                .mark_rule(color="black", strokeWidth=1.5).encode(x=x_bare))
    top = alt.layer(*layers, playhead).properties(
        width=width, height=170,
        title=alt.TitleParams("KV blocks in use; red ticks: preemptions", fontSize=13,
                              anchor="start"))
    names = ["waiting", "swapped to CPU"]
    queue = (series.transform_calculate(**{"swapped to CPU": "datum.swapped"})
             .transform_fold([*names], as_=["queue", "n"])
             .transform_filter("datum.queue == 'waiting' || indexof(mode, 'swap') >= 0"))
    legend = alt.Legend(title=None, orient="top", symbolType="stroke", symbolStrokeWidth=2,
                        labelLimit=300, labelExpr="datum.label == 'waiting' ? 'waiting' : "
                                  "'swapped to CPU (swap mode)'")
    strip = alt.layer(
        queue.mark_line(interpolate="step-before").encode(
            x=x_time, y=alt.Y("n:Q", title="requests (count)"),
            color=alt.Color("queue:N", sort=names, legend=legend,
                            scale=alt.Scale(domain=names, range=[PALETTE[1], PALETTE[4]])),
            strokeDash=alt.StrokeDash("queue:N", sort=names, legend=legend,
                                      scale=alt.Scale(domain=names, range=DASHES[:2])),
            tooltip=[alt.Tooltip("t:Q", title="time (s)"), alt.Tooltip("queue:N"),
                     alt.Tooltip("n:Q", title="requests")]),
        playhead.encode(x=x_time)).properties(width=width, height=80)
    now = series.transform_filter("datum.t == playhead")
    x_blocks = alt.X("v:Q", title="KV blocks (blocks)", scale=alt.Scale(domain=[0, top_y]),
                     axis=None)
    bar = alt.layer(
        now.transform_calculate(v="datum.pool").mark_bar(
            color="white", stroke="black", height=14).encode(
            x=x_blocks, y=alt.value(44)),
        now.transform_calculate(v="datum.kv").mark_bar(color=PALETTE[0], height=14).encode(
            x=x_blocks, y=alt.value(44)),
        now.transform_calculate(label=(
            "format(datum.t, 'd') + ' s: up to ' + format(datum.kv, ',') + ' of ' + "
            "format(datum.pool, ',') + ' blocks in use'")).mark_text(
            align="left", baseline="top").encode(x=alt.value(0), y=alt.value(0), text="label:N"),
        now.transform_calculate(label=(
            "'up to ' + format(datum.waiting, ',') + ' waiting' + "
            "(indexof(mode, 'swap') >= 0 ? ', ' + format(datum.swapped, ',') + "
            "' swapped to CPU' : '')")).mark_text(
            align="left", baseline="top").encode(x=alt.value(0), y=alt.value(17), text="label:N"),
    ).properties(width=width, height=54, view={"stroke": None}, title=alt.TitleParams(
        "At the playhead", fontSize=13, anchor="start"))
    n_lines = max(r["text"].count("\n") + 1 for r in rows)
    text = run.mark_text(align="left", baseline="top", lineBreak="\n", lineHeight=16).encode(
        x=alt.value(0), y=alt.value(0), text="text:N").properties(
        width=width, height=16 * n_lines, view={"stroke": None}, title=alt.TitleParams(
            "The pager's view of this run", fontSize=13, anchor="start"))
    views = [top, strip, bar] + ([text] if pager else [])
    chart = (alt.vconcat(*views, spacing=10, data=alt.InlineData(values=rows))
             .resolve_scale(x="independent", color="independent", strokeDash="independent")
             .add_params(*params, p_t))
    described = "; ".join(
        f"{name} " + ", ".join(map(str, values)) for name, values in levers.items())
    chart = chart.properties(description=(
        f"The lab's {len(rows)} precomputed kvsim runs ({described}). Choose one; the chart "
        f"shows the KV blocks in use over time against the pool, a red tick at each "
        f"preemption, the waiting queue and in swap mode the requests swapped to CPU memory, "
        f"the state at the playhead and the run's on-call numbers as text."))
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)


# ------------------------------------------------------------- days of traffic compared

__all__ += ["days_chart"]


class _DayDot(TypedDict):
    """One day's (seed's) value of a metric for one case."""
    case: str
    seed: int
    v: float


class _DayMedian(TypedDict):
    """A case's median over its days."""
    case: str
    v: float


def days_chart(rows: Iterable[Mapping[str, object]], *, case: str,
               panels: Sequence[tuple[str, str, str]], title: str,
               subtitle: str | None = None, width: Width = "container") -> alt.TopLevelMixin:
    """One dot per day of traffic (seed), a black tick and a label at the median, per case.

    ``rows`` hold one run each: the ``case`` column, ``seed`` and the metrics;
    ``panels`` is a list of ``(column, axis title with unit, d3 format)``, one
    panel each, stacked. Each case is named under its row of dots (not by colour,
    and not on an axis that would narrow a phone's plot), so the spread over days
    reads without a legend: "averages hide it". ``width``: ``"container"`` (the
    default) follows the page; a number fixes it in pixels.
    """
    width = check_width(width, "days_chart")
    import altair as alt
    import numpy as np

    checked = need_rows(rows, [case, "seed"] + [p[0] for p in panels], "days_chart")
    cases = list(dict.fromkeys(str(r[case]) for r in checked))
    out = []
    for col, axis_title, fmt in panels:
        dots: list[_DayDot] = [{"case": str(r[case]), "seed": int(number(r["seed"], "seed")),
                                "v": float(number(r[col], col))} for r in checked]
        med: list[_DayMedian] = [{"case": c, "v": float(np.median([d["v"] for d in dots if d["case"] == c]))}
               for c in cases]
        top = max(d["v"] for d in dots) * 1.15 or 1.0
        y = alt.Y("case:N", sort=cases, title=None, axis=None, scale=alt.Scale(paddingOuter=0.6))
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
        names = alt.Chart(alt.InlineData(values=[{"case": c} for c in cases])).mark_text(
            align="left", baseline="top", dy=14, color="black").encode(
            x=alt.value(0), y=y, text="case:N")
        out.append(alt.layer(p, tick, label, names).properties(width=width,
                                                               height=58 * len(cases)))
    chart = alt.vconcat(*out, spacing=12).resolve_scale(x="independent")
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)
