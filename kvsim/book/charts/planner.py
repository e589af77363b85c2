"""Chapter 6's capacity chart: each configuration's sustainable rate against what it costs.

:func:`pareto_data` reads a :class:`kvsim.runs.planner.Plan` (it re-derives nothing: the
rates, their seeds' spread, the dollars and the Pareto set are the plan's) into rows,
one per configuration and step-time scale; :func:`pareto_chart` draws them: a point
per configuration at (rate, dollars per million requests), its seeds' thresholds as a
horizontal bar, the Pareto set marked by shape and joined by a line, each point
labelled. With several step-time scales in the rows (kvsim's cost error, see
:mod:`kvsim.engine.uncertainty`), radio buttons choose one: the chart's static twin,
which works on the site with no kernel.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict

from kvsim.errors import KvsimError
from kvsim.runs.planner import ConfigPlan, Plan

from .theme import PALETTE, data_values, finish_chart, need_rows, number

if TYPE_CHECKING:
    import altair as alt

__all__ = ["ParetoRow", "pareto_data", "pareto_chart", "SCALE_KEY"]

#: The grid key whose values are kvsim's step-time scales (the cost model's error).
SCALE_KEY = "step_time_scale"


class ParetoRow(TypedDict):
    """One configuration at one step-time scale."""

    config: str            # the configuration's label, e.g. "A40 FP16"
    scale: float           # every engine step times this (1.0: kvsim's own step time)
    rate: float            # sustainable rate (requests per second, the lowest seed's threshold)
    rate_hi: float         # the highest seed's threshold
    dollars: float         # dollars per million requests at ``rate``
    pareto: bool           # on the Pareto front of its scale


def pareto_data(plan: Plan, label: Callable[[ConfigPlan], str]) -> list[ParetoRow]:
    """Rows for :func:`pareto_chart`: every feasible configuration of ``plan``, labelled by
    ``label(config)``, at each step-time scale the plan's grid holds (1.0 if none).

    The Pareto set is the plan's own, computed per scale on the configurations of that
    scale (a scale is a different engine, not another configuration to choose)."""
    if plan.prices is None:
        raise KvsimError("pareto_data: the plan has no prices: expected kvsim.plan(..., "
                         "prices={gpu: dollars per GPU-hour})")
    scales = sorted({_scale(c) for c in plan.configs})
    rows: list[ParetoRow] = []
    for scale in scales:
        members = [i for i, c in enumerate(plan.configs)
                   if _scale(c) == scale and c.rate_per_s > 0]
        front = set(_front(plan, members))
        for i in members:
            c = plan.configs[i]
            dollars = plan.dollars_per_million(i)
            assert dollars is not None            # the plan has prices (checked above)
            rows.append(ParetoRow(config=label(c), scale=scale, rate=round(c.rate_per_s, 4),
                                  rate_hi=round(c.spread[2], 4), dollars=round(dollars, 3),
                                  pareto=i in front))
    return rows


def _scale(config: ConfigPlan) -> float:
    """A configuration's step-time scale (1.0 when the grid has none)."""
    return float(number(config.point.get(SCALE_KEY, 1.0), SCALE_KEY))


def _front(plan: Plan, members: Sequence[int]) -> list[int]:
    """The plan's Pareto set (rate against dollars) among ``members``."""
    from kvsim.runs.planner_costs import pareto_front

    points = []
    for i in members:
        dollars = plan.dollars_per_million(i)
        assert dollars is not None
        points.append((i, plan.configs[i].rate_per_s, dollars))
    return pareto_front(points)


def pareto_chart(rows: Iterable[Mapping[str, object]], *, title: str | Sequence[str],
                 subtitle: str | Sequence[str] | None = None,
                 scale: float = 1.0) -> alt.TopLevelMixin:
    """Sustainable rate (x) against dollars per million requests (y), one point per
    configuration; with more than one step-time scale in the rows, radio buttons choose it
    (starting at ``scale``)."""
    import altair as alt

    listed = need_rows(rows, ["config", "scale", "rate", "rate_hi", "dollars", "pareto"],
                       "pareto_chart")
    scales = sorted({float(str(r["scale"])) for r in listed})
    if scale not in scales:
        raise KvsimError(f"scale={scale!r} is not in the rows: expected one of {scales}")
    names = list(dict.fromkeys(str(r["config"]) for r in listed))
    if len(names) > len(PALETTE):
        raise KvsimError(f"pareto_chart: {len(names)} configurations: expected at most "
                         f"{len(PALETTE)}")
    if len(scales) > 1:
        pick_scale = alt.param(name="scale", value=scale, bind=alt.binding_radio(
            options=scales, name="kvsim's step time × "))
        params = [pick_scale]
        keep = alt.datum.scale == pick_scale
    else:
        params = []
        keep = alt.datum.scale == scale
    top_rate = max(float(str(r["rate_hi"])) for r in listed)
    top_dollars = max(float(str(r["dollars"])) for r in listed)
    x = alt.X("rate:Q", title="sustainable rate (requests/s per replica)",
              scale=alt.Scale(domain=[0, top_rate * 1.1], nice=False))
    y = alt.Y("dollars:Q", title="cost (dollars per million requests)",
              scale=alt.Scale(domain=[0, top_dollars * 1.15], nice=False))
    colour = alt.Color("config:N", sort=names, legend=None,
                       scale=alt.Scale(domain=names, range=PALETTE[:len(names)]))
    base = alt.Chart().transform_filter(keep)
    tips = [alt.Tooltip("config:N", title="configuration"),
            alt.Tooltip("rate:Q", format=".2f", title="rate, every seed (req/s)"),
            alt.Tooltip("rate_hi:Q", format=".2f", title="best seed (req/s)"),
            alt.Tooltip("dollars:Q", format=",.1f", title="$ per million requests")]
    spread = base.mark_rule(strokeWidth=2, opacity=0.6).encode(
        x=x, x2="rate_hi:Q", y=y, color=colour)
    front_line = base.transform_filter(alt.datum.pareto).mark_line(
        color="black", strokeDash=[4, 3]).encode(x=x, y=y, order="rate:Q")
    points = base.mark_point(size=110, filled=True, opacity=1).encode(
        x=x, y=y, color=colour,
        shape=alt.Shape("front:N", title=None, sort=["Pareto set", "dominated"],
                        scale=alt.Scale(domain=["Pareto set", "dominated"],
                                        range=["diamond", "circle"]),
                        legend=alt.Legend(orient="top")),
        tooltip=tips).transform_calculate(
        front="datum.pareto ? 'Pareto set' : 'dominated'")
    labels = base.mark_text(align="left", dx=8, dy=-10).encode(
        x=x, y=y, color=colour, text="config:N")
    chart = alt.layer(spread, front_line, points, labels, data=data_values(listed)).properties(
        width="container", height=300, padding={"right": 60})
    for p in params:
        chart = chart.add_params(p)
    return finish_chart(chart, title, subtitle)
