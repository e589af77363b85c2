"""Chapter 6's figures: the capacity plan behind them, its chart, and the numbers its prose quotes.

The chapter plans Belgavi's traffic on cards of its own with :func:`kvsim.plan`
(:func:`kvsim.book.exercises.ch06.case_plan`). These tests check what the prose
says of that plan against the plan itself (the rates bracket the SLO's threshold,
the cheapest and the Pareto set are the planner's, the claims about kvsim's error
band hold), the Pareto chart and its static twin, and that every number glued in the
committed notebook is what kvsim computes now.
"""
from __future__ import annotations

import math

import pytest

from kvsim.book import charts
from kvsim.book.exercises import ch06
from kvsim.errors import KvsimError
from kvsim.runs.planner import misses
from kvsim.runs.planner_costs import pareto_front

from notebook_helpers import BOOK, glued, read_chapter

NOTEBOOK = BOOK / "ch06-planning-capacity.ipynb"


@pytest.fixture(scope="module")
def plan():
    return ch06.case_plan()


def test_every_configuration_holds_its_rate_on_every_seed_and_fails_just_above(plan):
    """The rate is the lowest seed's threshold: the SLO holds there on every seed (no seed is
    named as failing it), the median metrics there are inside the SLO, and a rate within the
    search's tolerance above it failed on the seed that set it."""
    assert len(plan.configs) == len(ch06.GPUS) * len(ch06.KV_DTYPES) * len(ch06.SCALES)
    for c in plan.configs:
        assert c.rate_per_s > 0 and not c.infeasible and not c.capped, c.reason
        assert c.failing_seeds == () and c.rate_per_s == min(c.seed_rates)
        assert not misses({**c.at_rate, "requests_rejected": 0}, plan.slo), c.at_rate
        assert c.failing_rate_per_s is not None
        assert c.rate_per_s < c.failing_rate_per_s <= c.rate_per_s * (1 + ch06.REL_TOL)


def test_the_a40_fp16_is_limited_by_the_ttft_knee_not_by_preemptions(plan):
    """The prose: at its rate the p99 TTFT is far inside the limit with no preemption, and less
    than a tenth more traffic fails the TTFT limit."""
    a40 = ch06.config("a40-48gb", "fp16")
    assert a40.limited_by == "ttft_p99_s"
    assert a40.at_rate["ttft_p99_s"] < ch06.SLO["ttft_p99_s"] / 4
    assert a40.at_rate["preemptions_per_1k"] == 0


def test_the_cheapest_and_the_pareto_set_are_the_planners_per_scale(plan):
    """The chapter reads the planner's own rules (Plan.cheapest, Plan.pareto) on the
    configurations of one step-time scale; the replicas are whole and the bill is replicas times
    the price."""
    for scale in ch06.SCALES:
        sub = ch06.at_scale(scale)
        assert {c.point["step_time_scale"] for c in sub.configs} == {scale}
        best = ch06.cheapest_at(scale)
        bills = {ch06.label(c): ch06.bill(c) for c in sub.configs}
        assert ch06.bill(best) == min(bills.values())
        for c in sub.configs:
            n = ch06.replicas(c.rate_per_s)
            assert (n - 1) * c.rate_per_s < ch06.TARGET_RATE <= n * c.rate_per_s
            assert ch06.bill(c) == n * ch06.PRICES[c.gpu]
    rows = charts.pareto_data(plan, ch06.label)
    for scale in ch06.SCALES:
        sub = ch06.at_scale(scale)
        front = {ch06.label(sub.configs[i]) for i in sub.pareto()}
        assert {r["config"] for r in rows if r["scale"] == scale and r["pareto"]} == front


def test_the_error_band_claims_hold(plan):
    """Slower steps lower every rate; the two FP8 configurations' dollars per million overlap
    across the band (no winner named there), while the peak's winner is the same at every
    scale."""
    for gpu in ch06.GPUS:
        for dtype in ch06.KV_DTYPES:
            rates = [ch06.config(gpu, dtype, s).rate_per_s for s in ch06.SCALES]
            assert rates[0] >= rates[1] >= rates[2] and rates[0] > rates[2], (gpu, dtype)
    a40 = [ch06.dollars_per_million("a40-48gb", "fp8", s) for s in ch06.SCALES]
    h100 = [ch06.dollars_per_million("h100-80gb", "fp8", s) for s in ch06.SCALES]
    assert min(h100) < max(a40) and min(a40) < max(h100)
    assert {ch06.label(ch06.cheapest_at(s)) for s in ch06.SCALES} == {"A40 FP8"}


def test_gpu_hours_and_dollars_follow_the_chapters_equations(plan):
    for i, c in enumerate(plan.configs):
        hours = 1e6 / (3600 * c.rate_per_s)                      # eq-gpu-hours, g = 1
        assert math.isclose(ch06.gpu_hours(c.rate_per_s), hours)
        assert math.isclose(plan.dollars_per_million(i), hours * ch06.PRICES[c.gpu])


def test_the_pareto_chart_and_its_twin():
    rows = charts.pareto_data(ch06.case_plan(), ch06.label)
    assert {r["scale"] for r in rows} == set(ch06.SCALES)
    twin = charts.pareto_chart(rows, title="t").to_dict()
    (param,) = twin["params"]
    assert param["bind"]["input"] == "radio" and param["bind"]["options"] == list(ch06.SCALES)
    assert param["value"] == 1.0
    still = charts.pareto_chart([r for r in rows if r["scale"] == 1.0], title="t").to_dict()
    assert "params" not in still
    with pytest.raises(KvsimError, match="scale=0.5"):
        charts.pareto_chart(rows, title="t", scale=0.5)
    with pytest.raises(KvsimError, match="lacks"):
        charts.pareto_chart([{"config": "x"}], title="t")


def test_pareto_data_needs_prices():
    import dataclasses

    with pytest.raises(KvsimError, match="no prices"):
        charts.pareto_data(dataclasses.replace(ch06.case_plan(), prices=None), ch06.label)


def test_pareto_rows_are_the_plans_front():
    """A row is on the front exactly when no configuration of its scale is both faster and
    cheaper (planner_costs.pareto_front on the rows themselves)."""
    rows = charts.pareto_data(ch06.case_plan(), ch06.label)
    for scale in ch06.SCALES:
        mine = [r for r in rows if r["scale"] == scale]
        front = set(pareto_front([(i, r["rate"], r["dollars"]) for i, r in enumerate(mine)]))
        assert [r["pareto"] for r in mine] == [i in front for i in range(len(mine))]


def test_the_glued_numbers_are_what_kvsim_computes_now():
    nb = read_chapter(NOTEBOOK)
    got = glued(nb)
    a40, h100 = ch06.config("a40-48gb", "fp16"), ch06.config("h100-80gb", "fp8")
    best = ch06.cheapest_at()
    expected = {
        "a40_rate": a40.rate_per_s, "a40_lo": a40.spread[0], "a40_hi": a40.spread[2],
        "a40_fail": a40.failing_rate_per_s, "h100_rate": h100.rate_per_s,
        "a40fp8_rate": ch06.config("a40-48gb", "fp8").rate_per_s,
        "a40fp8_usd": ch06.dollars_per_million("a40-48gb", "fp8"),
        "h100fp8_usd": ch06.dollars_per_million("h100-80gb", "fp8"),
        "best_n": ch06.replicas(best.rate_per_s), "best_bill": ch06.bill(best),
        "slow_rate": ch06.config("a40-48gb", "fp8", 1.1).rate_per_s,
        "fast_rate": ch06.config("a40-48gb", "fp8", 0.9).rate_per_s,
        "plan_runs": ch06.case_plan().runs, "target": ch06.TARGET_RATE,
    }
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, rel=1e-5), name


def test_no_dollar_sign_opens_inline_math_before_a_glued_number():
    """MyST's dollarmath reads ``$`` ... ``$`` as inline math: two prices written ``${eval}...``
    in one paragraph rendered as raw roles on the site. Every dollar sign before a number is
    escaped (``\\$``)."""
    import re

    nb = read_chapter(NOTEBOOK)
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "\\${eval}" in prose
    assert not re.findall(r"(?<!\\)\$\{eval\}", prose)
