"""Chapter 4's figures, the panel functions behind them, and their agreement with promtool.

The chapter computes every dashboard panel and every alert condition from the
scraped series with :mod:`kvsim.observe.panels` (so it runs without Prometheus); here
the book's rule file goes through the real ``promtool test rules`` on the
same series, and the alerts promtool finds firing must be the ones the
chapter's functions say, at every evaluation away from a transition.
"""
from __future__ import annotations

import numpy as np
import pytest
import yaml
from test_alerts import EXTRA, LABELS, need

import kvsim
from kvsim.book import exercises
from kvsim.book.exercises import ch04, ch05
from kvsim.engine.costs import StepCost
from kvsim.engine.result import Table
from kvsim.errors import KvsimError
from kvsim.observe import alerts as A
from kvsim.observe import panels
from kvsim.observe.promtool_tests import promtool_test
from kvsim.observe.series import scrape
from kvsim.runs.scenarios import scenario_parameters

from engine_expectations import fluid_running, prefill_extra_s
from notebook_helpers import BOOK, glued, read_chapter

NOTEBOOK = BOOK / "ch04-detecting-preemption.ipynb"


# --- the incident ----------------------------------------------------------------------

def test_the_incident_is_quiet_then_storms_then_recovers():
    """Belgavi's server at 1.0/s runs about 8 requests (Little's law on the step time,
    tests/engine_expectations.py), under a third of the 25 its pool holds: no preemption. The
    rush's 1.8/s needs a bigger batch than Belgavi's 1.5/s, whose days already preempt a few
    dozen per 1,000 (test_seed_behaviour.py): a storm, past chapter 4's own per-1,000 alert
    threshold. After the rush the queue drains and the last ten minutes are as calm as the
    first fifteen."""
    run = kvsim.run_scenario("incident-day")
    params = scenario_parameters("incident-day")
    budget = kvsim.kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.60)
    capacity = budget.max_concurrent(850 + params["output_mean"])
    quiet, rush = params["base_rate_per_s"], params["storm_rate_per_s"]

    def batch(rate):
        return fluid_running("llama-2-7b", "a40-48gb", rate=rate, prompt=850, answer=params["output_mean"])

    assert batch(quiet) < capacity / 2
    ev = np.asarray(run.events["t_s"], dtype=float)
    healthy, end = ch04.HEALTHY_S, ch04.STORM_END_S
    assert (ev < healthy).sum() == 0
    storm = ((ev >= healthy) & (ev < end)).sum()
    rule = ch05.rule_per_1k(A.RULES_FILE)                   # chapter 4's per-1,000 threshold
    assert 1000 * storm / (rush * params["storm_s"]) > rule, "the rush is no storm by the book's rule"
    calm = (ev > end + 300).sum() / (run.simulated_s - end - 300)
    assert calm < storm / (end - healthy) / 10, "the last minutes are not calm again"
    # the run stops with the traffic; by then the queue has drained, so only what the pool
    # holds is unfinished
    s = run.summary()
    assert s["requests_arrived"] - s["requests_finished"] < capacity


def test_the_mean_hides_what_the_tail_and_the_pauses_show():
    board = ch04.dashboard()
    quiet = [r for r in board if 5 <= r["t_min"] <= 15]
    storm = [r for r in board if 15 <= r["t_min"] <= 30]
    mean_ratio = max(r["itl_mean_ms"] for r in storm) / np.median([r["itl_mean_ms"] for r in quiet])
    # seed 000: "mean latency rises only a little" (less than double) ...
    assert mean_ratio < 2
    # ... while "a few requests stall for one or more seconds"; the quiet tail is a step that
    # carries a prompt's prefill beside the quiet batch (StepCost; the histogram's buckets
    # blur it by up to half again)
    params = scenario_parameters("incident-day")
    n = round(fluid_running("llama-2-7b", "a40-48gb", rate=params["base_rate_per_s"], prompt=850,
                            answer=params["output_mean"]))
    cost = StepCost(kvsim.get_model("llama-2-7b"), kvsim.get_gpu("a40-48gb"))
    context = n * (850 + params["output_mean"])
    prefill_step_ms = 1e3 * (cost.step_s(n, n, decode_context=context)
                             + prefill_extra_s(cost, n, context, 850))
    assert max(r["itl_p99_ms"] for r in quiet) < 1.5 * prefill_step_ms
    assert max(r["gap_max_ms"] for r in storm) >= 1000.0


def test_the_gauge_counts_blocks_not_tokens():
    b = ch04.gauge_breakdown()
    assert b["blocks_held"] == round(b["gauge"] * b["blocks_total"])
    assert b["token_fill"] < b["gauge"]
    assert b["slack_tokens"] == b["blocks_held"] * b["block_size"] - b["tokens_stored"] > 0
    assert 0 < b["slack_tokens"] < b["requests_running"] * b["block_size"]


# --- kvsim.observe.panels ----------------------------------------------------------------------

def _table(**cols):
    return Table({k: np.asarray(v, dtype=float) for k, v in cols.items()})


def test_increase_avg_min_deriv_on_known_series():
    tab = _table(t_s=[0, 15, 30, 45, 60], c=[0, 1, 3, 6, 10], g=[1, 2, 3, 4, 5])
    assert list(panels.increase(tab, "c", 30)) == [0, 1, 3, 5, 7]
    assert list(panels.avg_over_time(tab, "g", 30)) == [1, 1.5, 2, 3, 4]
    assert list(panels.min_over_time(tab, "g", 15)) == [1, 1, 2, 3, 4]
    assert np.allclose(panels.deriv(tab, "g", 60)[1:], 1 / 15)
    with pytest.raises(KvsimError, match="series 'nope'"):
        panels.increase(tab, "nope", 30)
    with pytest.raises(KvsimError, match="window_s"):
        panels.increase(tab, "c", 0)


def test_firing_needs_the_condition_for_the_whole_for_duration():
    t = np.arange(0, 100, 10.0)
    cond = np.array([0, 1, 1, 1, 0, 1, 1, 1, 1, 1], dtype=bool)
    fires = panels.firing(t, cond, 20)
    assert list(np.flatnonzero(fires)) == [3, 7, 8, 9]
    assert panels.onset(t, fires) == 30 and panels.onset(t, np.zeros(10, bool)) is None
    assert list(panels.firing(t, cond, 0)) == list(cond)


def test_quantiles_from_windows_of_buckets():
    edges = (0.1, 0.2)
    tab = _table(t_s=[0, 60], **{'h_bucket{le="0.1"}': [0, 50], 'h_bucket{le="0.2"}': [0, 100],
                                'h_bucket{le="+Inf"}': [0, 100], "h_sum": [0, 12],
                                "h_count": [0, 100]})
    q = panels.histogram_quantile_over(tab, "h", 0.75, 60, edges)
    assert np.isnan(q[0]) and q[1] == pytest.approx(0.15)
    assert panels.mean_over(tab, "h", 60)[1] == pytest.approx(0.12)


def test_every_book_rule_has_its_condition():
    assert set(panels.book_rules(ch04.scraped())) == set(A.rule_alerts(A.RULES_FILE))


def _transitions(t, fires):
    return t[np.flatnonzero(np.diff(fires.astype(int)))]


def test_promtool_fires_the_alerts_the_chapter_computes():
    need("promtool")
    run = kvsim.run_scenario("incident-day")
    tab = scrape(run, interval_s=15)
    t = np.asarray(tab["t_s"], dtype=float)
    fires = {name: panels.firing(t, c, f) for name, (c, f) in panels.book_rules(tab).items()}
    tests, fired = [], 0
    for name, f in fires.items():
        # every minute, but not within two minutes of this alert's own transitions
        edges = _transitions(t, f)
        probe = [x for x in np.arange(120, t[-1] - 60, 60.0)
                 if not len(edges) or np.min(np.abs(edges - x)) >= 120]
        firing = {x: [name] if f[int(np.searchsorted(t, x))] else [] for x in probe}
        fired += sum(bool(v) for v in firing.values())
        tests += A.alert_rule_tests(A.RULES_FILE, LABELS, firing, alerts=[name])
    assert len(tests) > 150 and fired > 5            # both firing and silent evaluations
    test = promtool_test(run, rule_files=["rules.yml"], interval_s=15,
                                 extra_labels=EXTRA, alert_tests=tests)
    ok, out = A.run_promtool_test(test, {"rules.yml": A.testable_rules(A.RULES_FILE)})
    assert ok, out


@pytest.mark.parametrize("offset_ms, fires", [(-3.0, True), (+3.0, False)])
def test_a_threshold_just_inside_the_storm_fires_and_just_outside_does_not(offset_ms, fires):
    """The threshold exercise's range, proven at both edges with promtool."""
    need("promtool")
    edge = ch04.storm_p99_max() + offset_ms
    rules = {"groups": [{"name": "t", "rules": [{
        "alert": "ITLTail",
        "expr": "histogram_quantile(0.99, sum by (le, model_name, engine, job, instance) "
                "(rate(vllm:inter_token_latency_seconds_bucket[5m]))) > " + repr(edge / 1e3)}]}]}
    run = kvsim.run_scenario("incident-day")
    tab = scrape(run, interval_s=15)
    t = np.asarray(tab["t_s"], dtype=float)
    p99 = panels.histogram_quantile_over(tab, "vllm:inter_token_latency_seconds", 0.99, 300.0)
    peak_t = float(t[np.nanargmax(p99)])
    exp = [{"exp_labels": LABELS}] if fires else []
    test = promtool_test(run, rule_files=["t.yml"], interval_s=15, extra_labels=EXTRA,
                                 alert_tests=[{"eval_time": f"{int(peak_t)}s",
                                               "alertname": "ITLTail", "exp_alerts": exp}])
    ok, out = A.run_promtool_test(test, {"t.yml": yaml.safe_dump(rules)})
    assert ok, out
    # and the quiet quarter hour never crosses the lower edge of the range
    assert ch04.healthy_p99_max() < ch04.storm_p99_max() - 3.0


def test_the_threshold_check_accepts_the_range_only():
    lo, hi = ch04.healthy_p99_max(), ch04.storm_p99_max()
    assert exercises.evaluate("ch04-threshold", (lo + hi) / 2).status == "right"
    assert exercises.evaluate("ch04-threshold", lo + 1).status == "right"
    assert exercises.evaluate("ch04-threshold", lo - 1).status == "wrong"
    assert exercises.evaluate("ch04-threshold", hi + 1).status == "wrong"


# --- the chapter -----------------------------------------------------------------------

def test_notebook_glue_matches_kvsim():
    g = glued(read_chapter(NOTEBOOK))
    assert g["mean_storm"] / g["mean_quiet"] < 2 and g["gap_storm_s"] > 1
    b = ch04.gauge_breakdown()
    assert g["held"] == b["blocks_held"] and g["slack"] == b["slack_tokens"]
    # after a wave of finishes the gauge reads low while many freed blocks stay cached
    after = ch04.gauge_breakdown(ch04.AFTER_STORM_S)
    assert g["cached"] == after["blocks_cached_free"] > 0.25 * after["blocks_total"]
    assert after["gauge"] < 0.5 and g["after_min"] == ch04.AFTER_STORM_S / 60
    # the exercise asks about an instant the prose does not show
    assert g["ch04-blocks-held"] != g["held"]
    # a 15 s scrape misses the top of the queue the engine saw
    assert g["engine_peak_waiting"] >= g["peak_waiting"]
    assert g["inc_storm_min"] == scenario_parameters("incident-day")["storm_s"] / 60
    assert g["scrape_s"] == ch04.SCRAPE_S
    # the source's rule fires after the rush (minute 25); the pinned warning before it
    assert g["seed_rule_min"] > 25 > g["pinned_min"] > g["first_pre_min"] > 15
    assert g["n_seed_findings"] >= 1 and g["n_book_findings"] == 0
    # the page fires inside the rush, within 3 minutes of the first preemption, and clears
    # within 5 of the storm's last one (promtool agrees: test_alerts.py)
    page = ch04.page_timing()
    assert {k: g[k] for k in page} == pytest.approx(page, abs=1e-3)
    assert 0 < g["page_lag_min"] <= 3 and g["page_min"] < 25 and 0 < g["clear_lag_min"] <= 5
    assert g["page_min"] < g["pinned_min"]
    assert g["cb_pre"] < 1 and g["cb_kv"] < 90 and g["mb_kv"] > 95
    for ex_id in (i for i in exercises.list_exercises() if i.startswith("ch04-")):
        assert g[ex_id] == exercises.expected(ex_id), ex_id


def test_the_prose_about_which_rule_leads_holds():
    """The gauge-based rule lags the counter (and the page); the p99 tail rule fires only at the
    rush's end or after it; the first preemption comes that many minutes into the rush."""
    g = glued(read_chapter(NOTEBOOK))
    assert g["first_pre_min"] < g["page_min"] < g["pinned_min"]
    assert g["rush_to_first_min"] == pytest.approx(g["first_pre_min"] - ch04.HEALTHY_S / 60, abs=1e-3)
    assert g["gauge_now"] == ch04.gauge_breakdown()["gauge"]
    tab = ch04.scraped()
    t = np.asarray(tab["t_s"], dtype=float)
    condition, for_s = panels.book_rules(tab)["VLLMInterTokenLatencyTail"]
    assert panels.onset(t, panels.firing(t, condition, for_s)) >= ch04.STORM_END_S


def test_firing_times_agrees_with_the_chapters_onsets(tmp_path):
    """``kvsim lint-rules FILE --against SCENARIO`` (alerts.firing_times) runs promtool; its
    first firing minute of every alert is the chapter's onset rounded up to the minute."""
    need("promtool")
    run = kvsim.run_scenario("incident-day")
    fired = A.firing_times(A.RULES_FILE, run)
    tab = scrape(run, interval_s=15)
    t = np.asarray(tab["t_s"], dtype=float)
    for name, (condition, for_s) in panels.book_rules(tab).items():
        on = panels.onset(t, panels.firing(t, condition, for_s))
        if on is None:
            assert fired[name] == [], name
        else:
            assert fired[name] and 0 <= fired[name][0] - on < 60 + 1e-9, (name, on, fired[name])
    with pytest.raises(KvsimError, match="does not exist"):
        A.firing_times(tmp_path / "missing.yml", run)


def test_lint_rules_against_a_scenario_at_the_terminal(capsys):
    need("promtool")
    from kvsim.cli import main

    status = main(["lint-rules", str(A.SEED_RULES_FILE), "--against", "incident-day"])
    out = capsys.readouterr().out
    assert status == 1 and "absent-name" in out
    assert "VLLMKVCacheNearFull: never fires" in out and "VLLMKVCachePreemption: fires from" in out


def test_histogram_chart_draws_per_bucket_counts_and_names_bad_input():
    from kvsim.book import charts

    spec = charts.histogram_chart((0.1, 0.2), [5, 7, 10], marks={"mean": 0.12}, title="t").to_dict()
    bars = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "rect")
    rows = spec["datasets"][bars["data"]["name"]]
    assert [r["n"] for r in rows] == [5, 2]                        # cumulative -> per bucket
    with pytest.raises(KvsimError, match="expected 3"):
        charts.histogram_chart((0.1, 0.2), [5, 7], marks={}, title="t")


def test_work_rate_splits_the_engines_work_without_losing_a_token():
    from kvsim.book import charts

    run = kvsim.run_scenario("thrash-loop")
    rows = charts.work_rate_data(run, bin_s=30.0)
    total = {k: sum(r["tok_s"] for r in rows if r["kind"] == k) * 30.0 for k in charts.WORK_KINDS}
    tl = run.timeline
    assert total["recomputed"] == pytest.approx(int(tl["recomputed_tokens"].sum()), abs=30)
    assert total["recomputed"] == pytest.approx(run.summary()["recomputed_tokens"], abs=30)
    assert total["prompts, first pass"] + total["recomputed"] == pytest.approx(
        int(tl["prefill_tokens"].sum()), abs=60)
    assert total["decoded"] == pytest.approx(int(tl["decode_tokens"].sum()), abs=30)
    spec = charts.work_rate_chart(rows, title="t").to_dict()
    assert spec["title"]["text"] == "t"
    with pytest.raises(KvsimError, match="SimResult"):
        charts.work_rate_data({"not": "a run"})
