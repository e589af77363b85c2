"""Chapter 4's alert explorer: when a rule fires (kvsim.observe.rule_timing), its widget, its twin.

The timings are checked by hand on small series, against the chapter's own
onsets, and at every evaluation against the real ``promtool test rules`` on
several points of the static twin's grid (skipped without promtool, as in
test_alerts.py). The widget builds for default and edge values and refuses bad
ones in one line; the twin's spec holds the whole grid with three bound sliders.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from test_alerts import EXTRA, LABELS, need

import kvsim
from kvsim.book import charts
from kvsim.book.exercises import ch04
from kvsim.engine.result import Table
from kvsim.errors import KvsimError
from kvsim.observe import alerts as A
from kvsim.observe import panels
from kvsim.observe import rule_timing as R
from kvsim.observe.promtool_tests import promtool_test

#: The grid of the chapter's static twin (see the notebook's twin cell).
GRID = dict(thresholds=[0, 1, 2, 3, 4], windows_min=[1, 2, 3, 4, 5], fors_min=list(range(11)))


def _table(**cols):
    return Table({k: np.asarray(v, dtype=float) for k, v in cols.items()})


@pytest.fixture(scope="module")
def incident():
    return kvsim.run_scenario("incident-day"), ch04.scraped()


# --- Prometheus's increase, by hand -------------------------------------------------------

def test_prometheus_increase_extrapolates_as_prometheus_2_42_does():
    t = [0, 15, 30, 45, 60]
    # a full window of samples: no stretch; 30 s of samples in a window of 30 s
    assert panels.prometheus_increase(t, [0, 1, 2, 3, 4], 30, [60])[0] == 2
    # between scrapes: 2 samples 15 s apart, 7.5 s from each edge, stretched to the window
    assert panels.prometheus_increase(t, [0, 1, 2, 3, 4], 30, [52.5])[0] == pytest.approx(2)
    # a reset (4 -> 1) adds the value before it: 3 - 0 + 4
    assert panels.prometheus_increase(t[:4], [0, 4, 1, 3], 45, [45])[0] == 7
    # the zero point caps the stretch at the start before the 1.1-gap test (2.42's order):
    # 5 -> 10 over 15 s reaches zero 15 s before the first sample, so 5 x 45 / 15
    assert panels.prometheus_increase([0, 15], [5, 10], 60, [30])[0] == pytest.approx(15)
    # fewer than two samples: nothing
    out = panels.prometheus_increase(t, [0, 1, 2, 3, 4], 10, [0, 5, 15])
    assert np.isnan(out).all()


def test_rule_values_on_known_series():
    tab = _table(t_s=[0, 15, 30, 45, 60], **{"vllm:num_preemptions_total": [0, 0, 1, 1, 3],
                                             "vllm:kv_cache_usage_perc": [0.2, 0.4, 0.6, 0.8, 1.0]})
    t, v = R.rule_values(tab, "preemptions", 30)
    assert list(t) == [0, 15, 30, 45, 60]
    assert np.isnan(v[0]) and list(v[1:]) == [0, 1, 1, 2]
    _, kv = R.rule_values(tab, "kv_usage", 30)            # both edges of [now - 30 s, now]
    assert kv == pytest.approx([0.2, 0.3, 0.4, 0.6, 0.8])
    t2, _ = R.rule_values(tab, "kv_usage", 30, evaluation_interval_s=30)
    assert list(t2) == [0, 30, 60]
    assert R.rule_expr("preemptions", 1, 120) == "increase(vllm:num_preemptions_total[2m]) > 1"
    assert R.rule_expr("kv_usage", 0.9, 90) == "avg_over_time(vllm:kv_cache_usage_perc[1m30s]) > 0.9"


def test_alert_timing_by_hand():
    # one preemption at 20 s, three more at 100-110 s; scraped every 15 s
    t = np.arange(0, 301, 15.0)
    counter = np.where(t >= 30, 1, 0) + np.where(t >= 105, 2, 0) + np.where(t >= 120, 1, 0)
    tab = _table(t_s=t, **{"vllm:num_preemptions_total": counter})
    pre = [20.0, 100.0, 104.0, 110.0]
    # increase over 1m > 1: holds from 105 (1 -> 3 in [45, 105]) to 150 (1 -> 4 in
    # [90, 150]), not at 165 (3 -> 4 in [105, 165])
    timing = R.alert_timing(None, "preemptions", threshold=1, window_s=60, for_s=30, tab=tab,
                            preemptions_s=pre)
    assert (timing.pending_s, timing.firing_s, timing.resolved_s) == (105, 135, 165)
    assert timing.delay_s == 135 - 20 and timing.fired and timing.false_alarms == 0
    assert timing.episodes == (R.Episode(105, 135, 165),)
    # threshold 0: the lone preemption is an episode of its own, until [30, 90] sees no rise
    zero = R.alert_timing(None, "preemptions", threshold=0, window_s=60, for_s=0, tab=tab,
                          preemptions_s=pre)
    assert zero.episodes == (R.Episode(30, 30, 90), R.Episode(105, 105, 180))
    assert zero.firing_s == 30 and zero.resolved_s == 90
    # a `for` longer than any episode: pending, never fires
    never = R.alert_timing(None, "preemptions", threshold=1, window_s=60, for_s=120, tab=tab,
                           preemptions_s=pre)
    assert not never.fired and never.pending_s == 105 and never.resolved_s is None
    assert never.delay_s is None and never.false_alarms == 0
    # the same series with no preemption known: every firing is a false alarm
    blind = R.alert_timing(None, "preemptions", threshold=0, window_s=60, for_s=0, tab=tab)
    assert blind.false_alarms == 2 and blind.first_preemption_s is None


def test_alert_timing_matches_the_chapters_onsets(incident):
    run, tab = incident
    seed = R.alert_timing(run, "preemptions", threshold=0, window_s=300, for_s=600, tab=tab)
    assert seed.firing_s == ch04.seed_rule_onset_s()
    assert seed.first_preemption_s == ch04.first_preemption_s()
    # the page, increase(...[2m]) >= 2 for 1m: on whole counts the same as "> 1"
    page = R.alert_timing(run, "preemptions", threshold=1, window_s=120, for_s=60, tab=tab)
    timing = ch04.page_timing()
    assert page.firing_s / 60 == pytest.approx(timing["page_min"])
    assert page.resolved_s / 60 == pytest.approx(timing["clear_min"])
    t = np.asarray(tab["t_s"], dtype=float)
    condition, for_s = panels.book_rules(tab)["VLLMKVCachePinned"]
    pinned = R.alert_timing(run, "kv_usage", threshold=0.9, window_s=120, for_s=for_s, tab=tab)
    assert pinned.firing_s == panels.onset(t, panels.firing(t, condition, for_s))
    assert pinned.false_alarms == 0 and seed.false_alarms == 0


def test_a_quiet_afternoon_counts_false_alarms():
    quiet = kvsim.run_scenario("belgavi", rate_per_s=1.0, warmup_s=0, duration_s=1200)
    assert quiet.summary()["preemptions"] == 0
    low = R.alert_timing(quiet, "kv_usage", threshold=0.1, window_s=60, for_s=0)
    assert low.fired and low.false_alarms == len(low.episodes) >= 1 and low.delay_s is None
    assert not R.alert_timing(quiet, "preemptions", threshold=0, window_s=300, for_s=0).fired


@pytest.mark.parametrize("rule, threshold, window_s, for_s", [
    ("preemptions", 1, 120, 60),        # the page
    ("preemptions", 0, 300, 600),       # seed 003's rule
    ("preemptions", 3, 60, 0),
    ("kv_usage", 0.9, 120, 120),        # the pinned-cache rule
    ("waiting", 10, 180, 60),
])
def test_promtool_agrees_at_every_evaluation(incident, rule, threshold, window_s, for_s):
    need("promtool")
    run, tab = incident
    rules = {"groups": [{"name": "explorer", "rules": [{
        "alert": "Explorer", "expr": R.rule_expr(rule, threshold, window_s),
        "for": R.promql_duration(for_s)}]}]}
    t, values = R.rule_values(tab, rule, window_s)
    fires = panels.firing(t, np.nan_to_num(values, nan=-np.inf) > threshold, for_s)
    timing = R.alert_timing(run, rule, threshold=threshold, window_s=window_s, for_s=for_s,
                            tab=tab)
    assert timing.fired and fires.sum() > 3 and (~fires).sum() > 3   # both kinds of evaluation
    assert timing.firing_s == t[np.argmax(fires)]
    tests = [{"eval_time": f"{int(x)}s", "alertname": "Explorer",
              "exp_alerts": [{"exp_labels": LABELS}] if f else []} for x, f in zip(t, fires, strict=True)]
    test = promtool_test(run, rule_files=["explorer.yml"], interval_s=15, extra_labels=EXTRA,
                         alert_tests=tests)
    ok, out = A.run_promtool_test(test, {"explorer.yml": yaml.safe_dump(rules)})
    assert ok, out


def test_promtool_test_of_the_explorer_fails_when_kvsim_is_wrong(incident):
    """The agreement above is not vacuous: one evaluation expected wrongly, promtool says so."""
    need("promtool")
    run, tab = incident
    timing = R.alert_timing(run, "preemptions", threshold=1, window_s=120, for_s=60, tab=tab)
    early = timing.firing_s - 15                   # still pending there
    rules = {"groups": [{"name": "explorer", "rules": [{
        "alert": "Explorer", "expr": R.rule_expr("preemptions", 1, 120), "for": "1m"}]}]}
    test = promtool_test(run, rule_files=["explorer.yml"], interval_s=15, extra_labels=EXTRA,
                         alert_tests=[{"eval_time": f"{int(early)}s", "alertname": "Explorer",
                                       "exp_alerts": [{"exp_labels": LABELS}]}])
    ok, out = A.run_promtool_test(test, {"explorer.yml": yaml.safe_dump(rules)})
    assert not ok and "Explorer" in out


@pytest.mark.parametrize("kwargs, needles", [
    (dict(rule="kv"), ["rule='kv'", "preemptions, kv_usage, waiting"]),
    (dict(threshold=-1), ["threshold=-1", "[0.0, 1000000.0]"]),
    (dict(rule="kv_usage", threshold=1.5), ["threshold=1.5", "[0.0, 1.0]", "kv_usage"]),
    (dict(window_s=0), ["window_s=0", "[1.0, 86400.0]"]),
    (dict(window_s=90.5), ["90.5", "whole number of seconds"]),
    (dict(for_s=-60), ["for_s=-60", "[0.0, 86400.0]"]),
    (dict(evaluation_interval_s=20), ["evaluation_interval_s=20", "multiple"]),
])
def test_bad_rules_are_refused_in_one_line(incident, kwargs, needles):
    run, tab = incident
    args = dict(rule="preemptions", threshold=1, window_s=120, for_s=60) | kwargs
    with pytest.raises(KvsimError) as exc:
        R.alert_timing(run, args.pop("rule"), tab=tab, **args)
    message = str(exc.value)
    assert "\n" not in message and all(n in message for n in needles), message


def test_alert_timing_needs_a_run_or_its_scrape():
    with pytest.raises(KvsimError, match="pass result=... or tab=..."):
        R.alert_timing(None, "preemptions", threshold=0, window_s=60, for_s=0)
    with pytest.raises(KvsimError, match="result=dict"):
        R.alert_timing({}, "preemptions", threshold=0, window_s=60, for_s=0)
    with pytest.raises(KvsimError, match="vllm:num_requests_waiting"):
        R.alert_timing(None, "waiting", threshold=0, window_s=60, for_s=0,
                       tab=_table(t_s=[0, 15]))


# --- the static twin -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def grid(incident):
    run, tab = incident
    return charts.alert_rule_data(run, "preemptions", tab=tab, **GRID)


def _floats(node):
    if isinstance(node, float):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from _floats(v)
    elif isinstance(node, list):
        for v in node:
            yield from _floats(v)


def test_the_twins_grid_is_complete_and_agrees_with_alert_timing(incident, grid):
    run, tab = incident
    keys = {(r["th"], r["w"], r["f"]) for r in grid["readouts"]}
    assert len(grid["readouts"]) == len(keys) == 5 * 5 * 11
    assert {r["w"] for r in grid["curves"]} == set(GRID["windows_min"])
    # every grid point that fires has a firing span, and only those
    fired = {k for k in keys if any(s["state"] == "firing" and (s["th"], s["w"], s["f"]) == k
                                    for s in grid["spans"])}
    for th, w, f in [(0, 5, 10), (1, 2, 1), (4, 1, 10), (2, 3, 0)]:
        timing = R.alert_timing(run, "preemptions", threshold=th, window_s=w * 60,
                                for_s=f * 60, tab=tab)
        text = next(r["text"] for r in grid["readouts"] if (r["th"], r["w"], r["f"]) == (th, w, f))
        assert text == charts.alert_readout(timing)
        assert ((th, w, f) in fired) == timing.fired
    seed = next(r["text"] for r in grid["readouts"] if (r["th"], r["w"], r["f"]) == (0, 5, 10))
    assert seed.startswith("fires at 27.75 min, 10.0 min after the first preemption")


def test_the_twin_binds_three_sliders_to_the_grid_with_portable_floats(grid):
    spec = charts.alert_rule_chart(grid, title="t", threshold=0, window_min=5,
                                   for_min=10).to_dict()
    binds = {p["name"]: (p["value"], p["bind"]) for p in spec["params"]}
    assert set(binds) == {"threshold", "window", "alert_for"}
    for name, values in (("threshold", GRID["thresholds"]), ("window", GRID["windows_min"]),
                         ("alert_for", GRID["fors_min"])):
        bind = binds[name][1]
        assert bind["input"] == "range"
        assert (bind["min"], bind["max"], bind["step"]) == (values[0], values[-1], 1)
    assert binds["window"][0] == 5 and binds["alert_for"][0] == 10
    assert spec["width"] == "container" and spec["config"] == charts.THEME
    assert all(x == float(f"{x:.6g}") for x in _floats(spec))
    text = json.dumps(spec)
    assert "symlog" in text and "first preemption" in text and "rush" in text
    with pytest.raises(KvsimError, match="not in the grid"):
        charts.alert_rule_chart(grid, title="t", window_min=7)
    with pytest.raises(KvsimError, match="evenly spaced"):
        charts.alert_rule_data(kvsim.run_scenario("incident-day"), "preemptions",
                               thresholds=[0, 1, 3], windows_min=[1], fors_min=[0])


def test_readouts_name_what_happened():
    def timing(**kw):
        base = dict(rule="preemptions", expr="e", threshold=1.0, window_s=60.0, for_s=600.0,
                    evaluation_interval_s=15.0, pending_s=None, firing_s=None, resolved_s=None,
                    first_preemption_s=100.0, delay_s=None, false_alarms=0, episodes=())
        return R.AlertTiming(**(base | kw))

    assert charts.alert_readout(timing()) == "never fires: the expression never exceeds 1"
    pending = timing(pending_s=300.0, episodes=(R.Episode(300.0, None, 420.0),))
    assert charts.alert_readout(pending) == ("never fires: pending from 5.00 min; held "
                                             "2.00 min at most, under its for (10 min)")
    early = timing(pending_s=30.0, firing_s=60.0, delay_s=-40.0, false_alarms=1,
                   episodes=(R.Episode(30.0, 60.0, None),))
    assert charts.alert_readout(early) == ("fires at 1.00 min, 0.7 min before the first "
                                           "preemption; still firing at the end; 1 false alarm")


# --- the live widget ----------------------------------------------------------------------

def _text(box) -> str:
    return box.children[-1].outputs[0]["data"]["text/plain"]


@pytest.mark.parametrize("kwargs", [
    {},
    dict(threshold=20, window_min=15, for_min=15),
    dict(threshold=0, window_min=1, for_min=0),
    dict(rule="kv_usage", threshold=0.9, window_min=2, for_min=2),
    dict(rule="kv_usage", threshold=1.0, window_min=1, for_min=0),
    dict(rule="waiting", threshold=100, window_min=15, for_min=15),
])
def test_the_widget_builds_at_default_and_edge_values(kwargs):
    pytest.importorskip("ipywidgets")
    from kvsim.book import widgets

    box = widgets.alert_explorer(**kwargs)
    text = _text(box)
    assert text.startswith(("fires at", "never fires")), text
    html = box.children[-1].outputs[0]["data"]["text/html"]
    assert "border-left:4px solid #a00" not in html          # no error box


def test_the_widget_follows_its_sliders():
    pytest.importorskip("ipywidgets")
    from kvsim.book import widgets

    box = widgets.alert_explorer()
    assert _text(box).startswith("fires at 27.75 min, 10.0 min after the first preemption")
    rule, preempt, kv, waiting, window, alert_for = box.children[:6]
    preempt.value, window.value, alert_for.value = 1.0, 2.0, 1.0      # the page
    assert _text(box).startswith("fires at 19.00 min, 1.3 min after the first preemption")
    rule.value = "kv_usage"
    assert kv.layout.display is None and preempt.layout.display == "none"
    window.value, alert_for.value = 2.0, 2.0                          # the pinned-cache rule
    assert _text(box).startswith("fires at 24.50 min")
    with pytest.raises(KvsimError, match=r"for_min=16.0 is out of range.*\[0.0, 15.0\]"):
        alert_for.value = 16.0


@pytest.mark.parametrize("kwargs, needles", [
    (dict(rule="nope"), ["rule='nope'", "preemptions, kv_usage, waiting"]),
    (dict(threshold=21), ["threshold=21", "[0.0, 20.0]", "slider"]),
    (dict(rule="kv_usage", threshold=0.3), ["threshold=0.3", "[0.5, 1.0]"]),
    (dict(window_min=0.5), ["window_min=0.5", "[1.0, 15.0]"]),
    (dict(for_min=-1), ["for_min=-1", "[0.0, 15.0]"]),
    (dict(for_min="soon"), ["for_min='soon'", "not a number"]),
])
def test_the_widget_refuses_a_bad_value_in_one_line(kwargs, needles):
    pytest.importorskip("ipywidgets")
    from kvsim.book import widgets

    with pytest.raises(KvsimError) as exc:
        widgets.alert_explorer(**kwargs)
    message = str(exc.value)
    assert "\n" not in message and all(n in message for n in needles), message
