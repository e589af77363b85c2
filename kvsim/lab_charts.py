"""The lab's mission charts: where the pass band of a mission's resource lies.

Explained in chapter 5 (the missions' debriefs and static twins). The rows
come from :func:`kvsim.missions.mission_grid`, which scores every grid point
with :func:`kvsim.missions.score` itself, so the chart and the notebook's
verdict cannot disagree. No scoring runs here; the chart only encodes.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from .charts import DASHES, PALETTE, _alt, _finish, _need_rows
from .missions import get_mission

__all__ = ["mission_band_data", "mission_band_chart"]


def mission_band_data(mission, rows: Iterable[Mapping] | None = None,
                      others: Mapping | None = None) -> list[dict]:
    """Long rows for :func:`mission_band_chart`: for each value of the resource (the other
    levers at ``others``, by default the expert's), each SLO metric's worst seed as a share of
    its limit (1 = at the limit), and whether the point earns a star."""
    from .missions import expert_settings, mission_grid

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
                       subtitle: str | None = None, guess: float | None = None):
    """Each SLO metric's worst day over the resource, the limit as a rule at 1, the passing
    settings shaded and labelled, and the reader's ``guess`` (if any) as a dashed rule."""
    alt = _alt()
    m = get_mission(mission)
    rows = _need_rows(rows, ["x", "metric", "share", "passes"], "mission_band_chart")
    lever = m.lever(m.resource)
    names = list(dict.fromkeys(r["metric"] for r in rows))
    xs = sorted({r["x"] for r in rows})
    passing = sorted({r["x"] for r in rows if r["passes"]})
    ymax = max(2.0, min(max(r["share"] for r in rows), 6.0))
    data = [dict(r, share_c=min(r["share"], ymax)) for r in rows]
    x_enc = alt.X("x:Q", title=f"{lever.label or lever.name}",
                  scale=alt.Scale(domain=[xs[0], xs[-1]], nice=False))
    colour = alt.Color("metric:N", sort=names, title=None,
                       scale=alt.Scale(domain=names, range=PALETTE[:len(names)]))
    dash = alt.StrokeDash("metric:N", sort=names, title=None,
                          scale=alt.Scale(domain=names, range=DASHES[:len(names)]))
    lines = alt.Chart(alt.InlineData(values=data)).mark_line(point=True).encode(
        x=x_enc, y=alt.Y("share_c:Q", title="worst of 5 days / SLO limit (1 = at the limit)",
                         scale=alt.Scale(domain=[0, ymax])),
        color=colour, strokeDash=dash,
        tooltip=[alt.Tooltip("metric:N"), alt.Tooltip("x:Q", title=lever.name),
                 alt.Tooltip("worst:Q", title="worst day"), alt.Tooltip("unit:N"),
                 alt.Tooltip("stars:Q", title="stars")])
    limit = alt.Chart(alt.InlineData(values=[{"y": 1.0}])).mark_rule(color="black").encode(
        y="y:Q")
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
        band = [{"a": a - step / 2, "b": b + step / 2, "t": f"passes: {a:g} to {b:g}"}
                for a, b in spans]
        base = alt.Chart(alt.InlineData(values=band))
        layers.append(base.mark_rect(opacity=0.18, color=PALETTE[2]).encode(x="a:Q", x2="b:Q"))
        layers.append(base.mark_text(align="left", dx=3, dy=8, baseline="top").encode(
            x="a:Q", y=alt.value(0), text="t:N"))
    layers += [limit, lines]
    if guess is not None:
        layers.append(alt.Chart(alt.InlineData(values=[{"x": guess, "t": "your guess"}]))
                      .mark_rule(strokeDash=[4, 3], color="black").encode(x="x:Q"))
    where = (", ".join(f"{a:g} to {b:g}" for a, b in spans) if passing else "nowhere on the grid")
    description = (f"Mission {m.number}: for each {lever.name} from {xs[0]:g} to {xs[-1]:g}, the "
                   f"worst of five days for each target ({', '.join(names)}) divided by its "
                   f"limit. Every target is met, on every day, for {lever.name} {where}.")
    chart = alt.layer(*layers).properties(width="container", height=260,
                                          description=description)
    return _finish(chart, title, subtitle)
