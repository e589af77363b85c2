"""A plan as text: one row per configuration, then the Pareto set, the cheapest for a load, the
cost of the search. What ``kvsim plan`` prints, and ``print(format_plan(plan))`` in a notebook."""
from __future__ import annotations

from kvsim.errors import check_float

from .planner import RATE_RANGE, Plan

__all__ = ["format_plan"]


def _number(value: float) -> str:
    return f"{value:.3g}" if value == value else "-"          # NaN: nothing measured


def format_plan(plan: Plan, target_rate_per_s: float | None = None) -> str:
    """The plan as aligned text; with ``target_rate_per_s``, the cheapest configuration for it."""
    if target_rate_per_s is not None:
        target_rate_per_s = check_float("target_rate_per_s", target_rate_per_s, min=0,
                                        max=RATE_RANGE[1], min_open=True,
                                        why="requests per second")
    table = plan.table()
    names = list(plan.configs[0].point)
    priced = plan.prices is not None
    header = ["#", *names, "rate_per_s", "seeds_min-max", "limited_by", "runs", "ttft_p99_s",
              "$_per_million" if priced else "gpu_h_per_million"]
    rows = [header]
    for i, config in enumerate(plan.configs):
        low, _, high = config.spread
        cost = table["dollars_per_million"][i] if priced else table["gpu_hours_per_million"][i]
        rate = _number(config.rate_per_s) + ("+" if config.capped else "")
        rows.append([str(i), *(str(config.point[n]) for n in names), rate,
                     f"{_number(low)}-{_number(high)}",
                     config.infeasible.upper() if config.infeasible else config.limited_by,
                     str(config.runs), _number(config.at_rate.get("ttft_p99_s", float("nan"))),
                     _number(cost) if config.rate_per_s > 0 else "-"])
    widths = [max(len(row[j]) for row in rows) for j in range(len(header))]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    slo = ", ".join(f"{k} {'>=' if k == 'goodput_fraction' else '<='} {v:g}"
                    for k, v in plan.slo.items())
    lines.append("")
    lines.append(f"SLO: {slo}; on every one of seeds {', '.join(map(str, plan.seeds))}; "
                 f"rates within {plan.rel_tol:.0%} ('+': the top of the range searched)")
    for i, config in enumerate(plan.configs):
        if config.infeasible or config.failing_seeds:
            lines.append(f"#{i}: {config.reason}")
    front = plan.pareto()
    if front:
        axis = "dollars per million requests" if priced else "GPU-hours per million requests"
        lines.append(f"Pareto set (rate against {axis}): "
                     + ", ".join(f"#{i}" for i in front))
    if target_rate_per_s is not None:
        best = plan.cheapest(target_rate_per_s)
        if best is None:
            lines.append(f"For {target_rate_per_s:g} req/s: no configuration holds the SLO")
        else:
            cost = (f"${best.dollars_per_hour:,.2f} an hour, ${best.dollars_per_million:,.2f} "
                    f"per million requests" if best.dollars_per_hour is not None
                    else f"{best.gpu_hours_per_hour:g} GPU-hours an hour")
            lines.append(f"For {target_rate_per_s:g} req/s: #{best.index} x {best.replicas} "
                         f"replica(s), {best.gpus} GPU(s), {cost}")
    lines.append(f"Search: {plan.runs} runs ({plan.runs_made} made, "
                 f"{plan.runs - plan.runs_made} read back from the run cache) in {plan.rounds} "
                 f"rounds")
    return "\n".join(lines)
