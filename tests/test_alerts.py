"""Alert rules proven with the real Prometheus tools on series generated from kvsim runs.

``promtool check rules`` on the shipped rules; ``promtool test rules`` on test
files written by :func:`kvsim.observe.promtool_tests.promtool_test` from a storm, a healthy
run and a recovery; the linter on good and bad rules; and end to end, a real
``prometheus`` server scraping ``kvsim exporter`` on loopback.

Without promtool/prometheus the tool-based tests skip with the reason, unless
``KVBOOK_REQUIRE_PROMETHEUS=1`` (set by ``make test``), which makes them fail.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import yaml

import kvsim
from kvsim.errors import KvsimError
from kvsim.observe import alerts as A
from kvsim.observe import lint as L
from kvsim.observe import promtool_tests

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "book" / "ch04-detecting-preemption.ipynb"
PROMETHEUS_YML = ROOT / "book" / "alerts" / "prometheus.yml"
#: The book's rules on the clock of chapter 4's replay at --speed 20 (generated, never edited).
FAST_RULES = ROOT / "book" / "alerts" / "kvsim-preemption.x20.rules.yml"
#: The speed of chapter 4's "Try it" replay.
RECIPE_SPEED = 20
REQUIRED = os.environ.get("KVBOOK_REQUIRE_PROMETHEUS", "") == "1"
LABELS = {"model_name": "llama-2-7b", "engine": "0", "job": "vllm", "instance": "gpu-0"}
EXTRA = {"job": "vllm", "instance": "gpu-0"}
SEED_AND_BETTER = ["VLLMKVCachePreemption", "VLLMKVCacheNearFull", "VLLMKVCachePinned",
                   "VLLMPreemptionsPer1k", "VLLMRequestsPreemptedRepeatedly",
                   "VLLMInterTokenLatencyTail", "VLLMQueueGrowingWhileKVPinned",
                   "VLLMPreemptionStorm"]
GUARDS = ["VLLMSeriesAbsent", "VLLMTargetUpSeriesMissing"]


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        message = (f"{tool} is not installed (Debian: apt-get install prometheus); "
                   "KVBOOK_REQUIRE_PROMETHEUS=1 makes this a failure")
        if REQUIRED:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


@cache
def run(kind: str):
    if kind == "storm":           # Belgavi traffic with 350-token answers: a sustained storm
        return kvsim.run_scenario("mission-1-storm", duration_s=1500)
    if kind == "healthy":         # the same server at 1 req/s: KV never fills
        return kvsim.run_scenario("belgavi", rate_per_s=1.0, warmup_s=0, duration_s=1200)
    if kind == "recovery":        # a five-minute burst at 3 req/s, then 0.7 req/s again
        return kvsim.run_scenario("mission-4-burst", duration_s=2400, burst_start_s=300,
                                  burst_s=300, base_rate_per_s=0.7)
    raise KeyError(kind)


def promtool_test(result, firing: dict, alerts=None) -> tuple[bool, str]:
    """promtool on the book's rules (labels only: :func:`alerts.testable_rules`)."""
    test = promtool_tests.promtool_test(result, rule_files=["rules.yml"], interval_s=15,
                           extra_labels=EXTRA,
                           alert_tests=A.alert_rule_tests(A.RULES_FILE, LABELS, firing, alerts))
    return A.run_promtool_test(test, {"rules.yml": A.testable_rules(A.RULES_FILE)})


def test_promtool_check_rules_passes_on_the_shipped_rules():
    exe = need("promtool")
    proc = subprocess.run([exe, "check", "rules", str(A.RULES_FILE), str(A.SEED_RULES_FILE)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 10 rules found" in proc.stdout


def _rule(body: str) -> str:
    """A rule file with one group ``g`` whose rules are ``body`` (indented as rules)."""
    return "groups:\n  - name: g\n    rules:\n" + body


def _laughs() -> str:
    lines = ["a: &a [{alert: A, expr: up}, {alert: A, expr: up}]"]
    for i in range(1, 9):
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 9) + "]")
    return "\n".join(lines + ["groups: [{name: g, rules: *i}]"]) + "\n"


#: Rule files Prometheus refuses (promtool check rules fails on each): the linter refuses
#: each in one line, before any vLLM-specific finding. (name, text, words of kvsim's line)
BROKEN_RULE_FILES = [
    ("for: banana", _rule("      - alert: A\n        expr: up\n        for: banana\n"),
     "for='banana' is not a valid duration"),
    ("for: 5 (no unit)", _rule("      - alert: A\n        expr: up\n        for: 5\n"),
     "for='5' is not a valid duration"),
    ("for: -5m", _rule("      - alert: A\n        expr: up\n        for: -5m\n"),
     "not a valid duration"),
    ("rules: 5", "groups:\n  - name: g\n    rules: 5\n", "rules=5 is not a list"),
    ("groups: a map", "groups: {a: 1}\n", "groups={'a': 1} is not a list"),
    ("a list at the top", "- a\n", "no 'groups' list"),
    ("an unknown top field", "groups: []\nextra: 1\n", "field 'extra' Prometheus does not know"),
    ("an unknown group field", "groups:\n  - name: g\n    evaluation: 1m\n    rules: []\n",
     "field 'evaluation' Prometheus does not know"),
    ("an unknown rule field", _rule("      - alert: A\n        expr: up\n        severity: x\n"),
     "field 'severity' Prometheus does not know"),
    ("a mapping key twice", _rule("      - alert: A\n        alert: B\n        expr: up\n"),
     "mapping key 'alert' already defined"),
    ("record and alert", _rule("      - alert: A\n        record: b\n        expr: up\n"),
     "both of 'record' and 'alert'"),
    ("neither record nor alert", _rule("      - expr: up\n"), "neither of 'record' and 'alert'"),
    ("no expr", _rule("      - alert: A\n"), "has no expr"),
    ("an expr that is a map", _rule("      - alert: A\n        expr: {a: b}\n"), "has no expr"),
    ("an expr that does not parse", _rule("      - alert: A\n        expr: 'sum(('\n"),
     "the expression does not parse"),
    ("a bad recording rule name", _rule("      - record: 'bad name'\n        expr: up\n"),
     "is not a valid recording rule name"),
    ("a bad label name", _rule("      - alert: A\n        expr: up\n        labels:\n"
                               "          bad-name: x\n"), "invalid name 'bad-name'"),
    ("a label value that is a list", _rule("      - alert: A\n        expr: up\n"
                                           "        labels:\n          severity: [1, 2]\n"),
     "severity=[1, 2] is not a string"),
    ("a recording rule with for", _rule("      - record: a:b\n        expr: up\n"
                                        "        for: 5m\n"), "a recording rule has no 'for'"),
    ("an unclosed template", _rule("      - alert: A\n        expr: up\n        annotations:\n"
                                   "          summary: '{{ $value '\n"), "unclosed or unopened"),
    ("a bad interval", "groups:\n  - name: g\n    interval: 1x\n    rules: []\n",
     "interval='1x' is not a valid duration"),
    ("a limit that is text", "groups:\n  - name: g\n    limit: abc\n    rules: []\n",
     "limit='abc' is not an integer"),
    ("a group name twice", "groups:\n  - name: g\n    rules: []\n  - name: g\n    rules: []\n",
     "group name 'g' is repeated"),
    ("a group without a name", "groups:\n  - rules: []\n", "has no name"),
    ("a billion laughs", _laughs(), "more than 100,000 YAML nodes"),
    ("YAML nested 10,000 deep", "groups: " + "[" * 10_000 + "]" * 10_000 + "\n",
     "nested more than 64 levels deep"),
]


@pytest.mark.parametrize("name, text, words", BROKEN_RULE_FILES,
                         ids=[b[0] for b in BROKEN_RULE_FILES])
def test_the_linter_refuses_every_rule_file_promtool_refuses(tmp_path, name, text, words):
    """The linter is at least as strict as Prometheus (issue 30): a file ``promtool check
    rules`` (Prometheus 2.42, Debian's) refuses is refused in one line naming it, exit 2,
    before any vLLM-specific finding."""
    exe = need("promtool")
    path = tmp_path / "broken.rules.yml"
    path.write_text(text)
    checked = subprocess.run([exe, "check", "rules", str(path)], capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode != 0, checked.stdout + checked.stderr     # Prometheus refuses it
    with pytest.raises(KvsimError) as info:
        A.lint_rules(path)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg and words in msg, msg
    proc = _cli(str(path))
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1
    assert words in proc.stderr


def test_what_promtool_accepts_the_linter_reads_and_where_it_is_stricter(tmp_path):
    """Files promtool accepts: the linter reads them (the shipped rules, keep_firing_for,
    an empty group, a label written as a number); an alert on a bare number, which promtool
    accepts, is a constant-expr finding; and the linter's stated caps refuse a 20,000-term
    expression promtool would take (kvsim's parser could not)."""
    exe = need("promtool")
    ok = {"keep_firing_for.yml": _rule("      - alert: A\n        expr: up == 0\n"
                                       "        keep_firing_for: 5m\n        labels:\n"
                                       "          severity: 5\n"),
          "empty.yml": "groups:\n  - name: g\n    rules: []\n",
          "number.yml": _rule("      - alert: Always\n        expr: 5\n"),
          "long.yml": _rule("      - alert: Long\n        expr: "
                            + " + ".join(["vllm:num_requests_waiting"] * 20_000) + "\n")}
    for name, text in ok.items():
        (tmp_path / name).write_text(text)
        checked = subprocess.run([exe, "check", "rules", str(tmp_path / name)],
                                 capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, (name, checked.stdout + checked.stderr)
    assert A.lint_rules(tmp_path / "keep_firing_for.yml") == []
    assert A.lint_rules(tmp_path / "empty.yml") == []
    assert [f.kind for f in A.lint_rules(tmp_path / "number.yml")] == ["constant-expr"]
    with pytest.raises(KvsimError, match="expected at most 16,384"):
        A.lint_rules(tmp_path / "long.yml")


def test_the_storm_fires_every_preemption_alert():
    need("promtool")
    r = run("storm")
    end = 60 * int(r.simulated_s // 60) - 60
    ok, out = promtool_test(r, {end: SEED_AND_BETTER})
    assert ok, out


def test_a_healthy_run_fires_nothing():
    need("promtool")
    r = run("healthy")
    assert r.summary()["preemptions"] == 0
    ok, out = promtool_test(r, {t: [] for t in (300, 600, 900, 1140)})
    assert ok, out


def test_the_near_full_alert_leads_the_preemption_alert():
    need("promtool")
    r = run("storm")
    first = float(r.events["t_s"][0])
    # five minutes after the first preemption: the confirmation (rate > 0 for 10m) is still
    # pending, the leading rule (KV above 90% over 2m, for 2m) is already firing
    lead = 60 * int(np.ceil((first + 300) / 60))
    trio = ["VLLMKVCachePinned", "VLLMKVCachePreemption", "VLLMKVCacheNearFull"]
    ok, out = promtool_test(r, {lead: ["VLLMKVCachePinned"]}, trio)
    assert ok, out
    # ten minutes later the confirmation fires; the seed's own near-full rule (avg over 5m,
    # for 15m) has not yet: as written it trails the alert it should announce
    later = 60 * int(np.ceil((first + 660) / 60))
    ok, out = promtool_test(r, {later: ["VLLMKVCachePinned", "VLLMKVCachePreemption"]}, trio)
    assert ok, out


def test_alerts_resolve_after_the_burst():
    need("promtool")
    r = run("recovery")
    last = float(r.events["t_s"][-1])
    quiet = 60 * int(np.ceil((last + 660) / 60))
    assert quiet < r.simulated_s
    ok, out = promtool_test(r, {600: ["VLLMKVCachePinned"], quiet: []},
                            ["VLLMKVCachePinned", "VLLMKVCachePreemption"])
    assert ok, out
    ok, out = promtool_test(r, {quiet: []})
    assert ok, out


def test_a_wrong_expectation_fails():
    """The promtool tests above can fail: claim the healthy run storms."""
    need("promtool")
    ok, out = promtool_test(run("healthy"), {600: ["VLLMKVCachePreemption"]})
    assert not ok and "VLLMKVCachePreemption" in out


def test_the_seed_rule_never_fires_on_v1():
    """Seed 003's near-full rule watches vllm:gpu_cache_usage_perc, which V1 does not expose."""
    need("promtool")
    r = run("storm")
    rules = A.SEED_RULES_FILE.read_text()
    test = promtool_tests.promtool_test(r, rule_files=["seed.yml"], interval_s=15, extra_labels=EXTRA,
                           alert_tests=[{"eval_time": "1380s", "alertname": "VLLMKVCacheNearFull",
                                         "exp_alerts": []}])
    ok, out = A.run_promtool_test(test, {"seed.yml": rules})
    assert ok, out
    # while on a V0 server (the name it was written for) it fires
    test0 = promtool_tests.promtool_test(r, rule_files=["seed.yml"], interval_s=15, version="v0",
                            extra_labels=EXTRA, alert_tests=[{
                                "eval_time": "1380s", "alertname": "VLLMKVCacheNearFull",
                                "exp_alerts": [{"exp_labels": {"model_name": "llama-2-7b", **EXTRA},
                                                "exp_annotations": A.rule_alerts(rules)
                                                ["VLLMKVCacheNearFull"]["annotations"]}]}])
    ok, out = A.run_promtool_test(test0, {"seed.yml": rules})
    assert ok, out


# --- the page and the guards ---------------------------------------------------------------

STORMS = {   # scenario -> (overrides, the end of its storm: the last preemption before it, s)
    "incident-day": ({}, 1800.0),
    "incident-day-seed-2": ({"seed": 2}, 1800.0),
    "mission-4-burst": (dict(duration_s=2400, burst_start_s=300, burst_s=300,
                             base_rate_per_s=0.7), 2400.0),
}


def _spans(times: list[float], every_s: float) -> list[tuple[float, float]]:
    """Firing evaluations as (first, last) spans."""
    out: list[tuple[float, float]] = []
    for t in times:
        if out and t - out[-1][1] <= every_s + 1e-6:
            out[-1] = (out[-1][0], t)
        else:
            out.append((t, t))
    return out


@pytest.mark.parametrize("name", list(STORMS))
def test_the_page_fires_within_three_minutes_and_clears_within_five(name):
    """VLLMPreemptionStorm, as promtool evaluates it every 15 s on the scraped storm: it fires
    within 3 minutes of the first preemption and stops within 5 of the storm's last one."""
    need("promtool")
    overrides, storm_end = STORMS[name]
    r = kvsim.run_scenario(name.split("-seed-")[0], **overrides)
    ev = np.asarray(r.events["t_s"], dtype=float)
    first, last = float(ev[0]), float(ev[ev < storm_end].max())
    fired = A.firing_times(A.testable_rules(A.RULES_FILE), r, every_s=15)
    spans = [s for s in _spans(fired["VLLMPreemptionStorm"], 15) if s[1] >= first]
    assert spans, fired
    assert 0 < spans[0][0] - first <= 180, (spans, first)
    resolved = spans[-1][1] + 15
    assert 0 < resolved - last <= 300 and resolved < r.simulated_s, (spans, last)


@pytest.mark.parametrize("kind", ["healthy", "load-test-40"])
def test_no_page_on_a_healthy_server(kind):
    need("promtool")
    r = run(kind) if kind == "healthy" else kvsim.run_scenario(kind)
    assert r.summary()["preemptions"] == 0
    fired = A.firing_times(A.testable_rules(A.RULES_FILE), r, every_s=60)
    assert fired["VLLMPreemptionStorm"] == [] and all(v == [] for v in fired.values()), fired


def _series(result, version="v1", rename=None, up=False) -> list[dict]:
    rows = promtool_tests.promtool_input_series(result, interval_s=15, version=version,
                                                extra_labels=EXTRA)
    if rename:
        rows = [dict(r, series=rename(r["series"])) for r in rows]
    if up:
        n = len(rows[0]["values"].split())
        rows.append({"series": 'up{job="vllm", instance="gpu-0"}', "values": f"1x{n - 1}"})
    return rows


def _guard_test(rows, at_s: int, expected: dict) -> tuple[bool, str]:
    tests = [{"eval_time": f"{at_s}s", "alertname": name,
              "exp_alerts": [{"exp_labels": dict(labels, severity="warning")}
                             for labels in expected.get(name, [])]} for name in GUARDS]
    doc = {"rule_files": ["rules.yml"], "evaluation_interval": "15s",
           "tests": [{"interval": "15s", "input_series": rows, "alert_rule_test": tests}]}
    return A.run_promtool_test(yaml.safe_dump(doc, sort_keys=False, width=10**9),
                               {"rules.yml": A.testable_rules(A.RULES_FILE)})


def test_the_guards_stay_silent_on_a_server_with_every_series():
    need("promtool")
    ok, out = _guard_test(_series(run("healthy"), up=True), 900, {})
    assert ok, out


def test_the_guards_name_the_series_an_older_release_lacks():
    """On the 0.10 series the two rules on V1's newest histograms are dead; the guard says so."""
    need("promtool")
    rows = _series(run("healthy"), version="v1-0.10", up=True)
    missing = ["vllm:inter_token_latency_seconds_bucket", "vllm:request_num_preemptions_bucket"]
    ok, out = _guard_test(rows, 900, {"VLLMSeriesAbsent": [{"series": s} for s in missing]})
    assert ok, out
    # and these are exactly the rules the header of the rule file calls dead on 0.10
    dead = {f.rule for f in A.lint_rules(A.RULES_FILE, version="v1-0.10")} - set(GUARDS)
    header = A.RULES_FILE.read_text().split("groups:", 1)[0]
    assert dead == {"VLLMRequestsPreemptedRepeatedly", "VLLMInterTokenLatencyTail"}
    assert all(rule in header for rule in dead) and "v1-0.10" in header


def test_the_guards_fire_on_the_vllm_underscore_trap():
    """A server whose prometheus_client writes vllm_ names (OpenMetrics, 0.23+): the target
    is up, every vllm: series is gone, and both guards fire -- after their ten minutes only."""
    need("promtool")
    rows = _series(run("healthy"), rename=lambda s: s.replace("vllm:", "vllm_", 1), up=True)
    assert all(not r["series"].startswith("vllm:") for r in rows)
    keys = ["vllm:num_preemptions_total", "vllm:kv_cache_usage_perc", "vllm:num_requests_waiting",
            "vllm:request_success_total", "vllm:inter_token_latency_seconds_bucket",
            "vllm:request_num_preemptions_bucket"]
    expected = {"VLLMSeriesAbsent": [{"series": s} for s in keys],
                "VLLMTargetUpSeriesMissing": [{"job": "vllm", "instance": "gpu-0"}]}
    ok, out = _guard_test(rows, 900, expected)
    assert ok, out
    ok, out = _guard_test(rows, 540, {})                 # 9 minutes: still pending
    assert ok, out


def _rendered(out: str) -> dict:
    """The annotations promtool printed for the first alert it got."""
    block = re.search(r"Annotations:\{(.*)\}\s*$", out, re.M).group(1)
    return {k: json.loads(f'"{v}"') for k, v in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', block)}


def test_every_rule_says_what_and_where_to_read_and_its_templates_render():
    need("promtool")
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    owner, repo = config["repository"]["url"].rstrip("/").split("/")[-2:]
    page = f"https://{owner}.github.io/{repo}/book/{CHAPTER.stem}.html#"
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    md = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    anchors = {re.sub(r"[^a-z0-9]+", "-", h.lower()).strip("-")
               for h in re.findall(r"^#+ (.+)$", md, re.M)}
    anchors |= set(re.findall(r"^\(([\w-]+)\)=$", md, re.M))
    rules = A.rule_alerts(A.RULES_FILE)
    for name, r in rules.items():
        ann = r["annotations"]
        assert {"summary", "description", "runbook_url"} <= set(ann), name
        assert ann["runbook_url"].startswith(page), name
        assert ann["runbook_url"][len(page):] in anchors, (name, ann["runbook_url"])
    assert sum("$value" in r["annotations"]["summary"] + r["annotations"]["description"]
               for r in rules.values()) >= 7
    # promtool expands them on the storm: the number, the labels, no template left
    r = run("storm")
    for name, at in (("VLLMPreemptionStorm", 600), ("VLLMKVCachePinned", 600),
                     ("VLLMInterTokenLatencyTail", 900)):
        test = promtool_tests.promtool_test(r, rule_files=["rules.yml"], interval_s=15,
                                            extra_labels=EXTRA, alert_tests=[{
                                                "eval_time": f"{at}s", "alertname": name,
                                                "exp_alerts": []}])
        ok, out = A.run_promtool_test(test, {"rules.yml": A.RULES_FILE.read_text()})
        assert not ok, out
        got = _rendered(out)
        text = got["summary"] + " " + got["description"]
        assert "{{" not in text and "<error" not in text and "gpu-0" in text, got
        assert re.search(r"\d", got["summary"]), got


def test_amtool_accepts_the_sample_alertmanager_config_and_routes_the_page():
    exe = need("amtool")
    proc = subprocess.run([exe, "check-config", str(A.ALERTMANAGER_FILE)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and "SUCCESS" in proc.stdout, proc.stdout + proc.stderr
    for name, r in A.rule_alerts(A.RULES_FILE).items():
        receiver = {"warning": "page", "info": "ticket"}[r["labels"]["severity"]]
        proc = subprocess.run([exe, "config", "routes", "test",
                               f"--config.file={A.ALERTMANAGER_FILE}",
                               f"--verify.receivers={receiver}", f"alertname={name}",
                               f"severity={r['labels']['severity']}", "instance=gpu-0"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and proc.stdout.split() == [receiver], (name, proc.stdout)
    # the check can fail: a page must not land in the ticket queue
    proc = subprocess.run([exe, "config", "routes", "test", f"--config.file={A.ALERTMANAGER_FILE}",
                           "--verify.receivers=ticket", "severity=warning"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0


# --- lint my dashboard --------------------------------------------------------------------

def test_lint_passes_the_shipped_rules():
    assert A.lint_rules(A.RULES_FILE) == []


@pytest.mark.parametrize("expr, kind", [
    ("rate(vllm:num_preemptions[5m]) > 0", "counter-without-total"),
    ("avg_over_time(vllm:gpu_cache_usage_perc[5m]) > 0.85", "absent-name"),
    ('sum(rate(vllm:time_to_first_token_seconds_bucket{le="2"}[5m]))', "bucket-edge"),
    ("rate(vllm:kv_cache_usage_perc[5m]) > 0", "rate-of-gauge"),
    ("rate(vllm:inter_token_latency_seconds_sum[5m]) / "
     "rate(vllm:inter_token_latency_seconds_count[5m]) > 0.1", "mean-latency"),
    ("histogram_quantile(0.99, sum by (model_name) "
     "(rate(vllm:inter_token_latency_seconds_bucket[5m])))", "quantile-without-le"),
    ('rate(vllm:inter_token_latency_seconds_bucket{le="1"}[5m])', "bucket-edge-format"),
    ("vllm:num_requests_swapped > 0", "absent-name"),
    ("vllm:made_up_metric > 0", "unknown-name"),
    ("avg_over_time(vllm:kv_cache_usage_perc[5m]) > 85", "gauge-range"),
    ("histogram_quantile(0.99, sum(rate(vllm:inter_token_latency_seconds_bucket[5m])))",
     "quantile-without-le"),
    ("histogram_quantile(0.99, sum(rate(vllm:inter_token_latency_seconds_bucket[5m])) "
     "by (model_name))", "quantile-without-le"),
])
def test_lint_catches_each_classic_mistake(expr, kind):
    kinds = [f.kind for f in A.lint_promql(expr)]
    assert kinds == [kind]


@pytest.mark.parametrize("expr", [
    "rate(vllm:num_preemptions_total[5m]) > 0",
    'sum(rate(vllm:time_to_first_token_seconds_bucket{le="2.5"}[5m]))',
    "avg_over_time(vllm:kv_cache_usage_perc[5m]) > 0.85",
    "deriv(vllm:num_requests_waiting[5m]) > 0",
    "histogram_quantile(0.99, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket[5m])))",
    # the postfix form of by, and a gauge scaled to percent on purpose
    "histogram_quantile(0.99, sum(rate(vllm:inter_token_latency_seconds_bucket[5m])) by (le))",
    "100 * avg_over_time(vllm:kv_cache_usage_perc[5m]) > 85",
    "histogram_quantile(0.99, rate(vllm:inter_token_latency_seconds_bucket[5m])) > 0.2",
])
def test_lint_passes_good_expressions(expr):
    assert A.lint_promql(expr) == []


def test_lint_depends_on_the_version():
    assert A.lint_promql("vllm:gpu_cache_usage_perc > 0.9", version="v0") == []
    assert [f.kind for f in A.lint_promql("vllm:gpu_cache_usage_perc > 0.9",
                                          version="v1-0.10")] == ["deprecated-name"]
    # V0's TTFT buckets stop at 10 s
    assert [f.kind for f in A.lint_promql(
        'vllm:time_to_first_token_seconds_bucket{le="20.0"}', version="v0")] == ["bucket-edge"]


def test_lint_cli(tmp_path):
    bad = subprocess.run([sys.executable, "-m", "kvsim", "lint-rules", str(A.SEED_RULES_FILE),
                          "--json"], capture_output=True, text=True, timeout=30)
    assert bad.returncode == 1
    found = json.loads(bad.stdout)
    assert [(f["rule"], f["kind"]) for f in found] == [("VLLMKVCacheNearFull", "absent-name")]
    good = subprocess.run([sys.executable, "-m", "kvsim", "lint-rules", str(A.RULES_FILE)],
                          capture_output=True, text=True, timeout=30)
    assert good.returncode == 0 and "no findings" in good.stdout
    junk = tmp_path / "junk.yml"
    junk.write_text("groups: [")
    bad_yaml = subprocess.run([sys.executable, "-m", "kvsim", "lint-rules", str(junk)],
                              capture_output=True, text=True, timeout=30)
    assert bad_yaml.returncode == 2 and bad_yaml.stderr.count("\n") == 1


@pytest.mark.parametrize("expr, kind, words", [
    # the OpenMetrics trap: prometheus_client 0.23+ writes vllm_ sample names
    ("rate(vllm_num_preemptions_total[5m]) > 0", "underscore-name",
     ["vllm:num_preemptions_total", "0.23", "OpenMetrics", "Accept: application/openmetrics-text"]),
    ("vllm_made_up_metric > 0", "unknown-name", ["nearest"]),
    ("rate((", "unparsable", ["does not parse", "rate(("]),
    ("sum by (le) (rate(vllm:num_preemptions_total[5m])", "unparsable", ["parenthesis"]),
    ("foo(vllm:num_preemptions_total)", "unparsable", ["foo"]),
    # a series the version lacks: the version and what to use
    ('histogram_quantile(0.99, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket[5m])))',
     "absent-name", ["v1-0.10", "vllm:time_per_output_token_seconds_bucket"]),
    ('sum(rate(vllm:request_num_preemptions_bucket{le="1"}[10m]))', "absent-name",
     ["v1-0.10", "(it is in v1)", "no equivalent"]),
    ("absent(vllm:request_num_preemptions_count)", "absent-name", ["always true", "v1-0.10"]),
    ('vllm:request_success_total{finished_reason="repetition"}', "label-value",
     ["v1-0.10", "stop, length, abort"]),
    ('vllm:num_requests_waiting_by_reason > 0', "absent-name", ["v1-0.10"]),
    # a 0-1 gauge against a percentage, through functions, aggregations and set operators
    ("max by (instance) (vllm:kv_cache_usage_perc) > 90", "gauge-range", ["0.9"]),
    ("90 < avg_over_time(vllm:kv_cache_usage_perc[5m])", "gauge-range", ["0.9"]),
    ("(vllm:kv_cache_usage_perc > 95) and on (instance) vllm:num_requests_waiting > 0",
     "gauge-range", ["0.95"]),
    # quantiles over aggregations that drop le, however they are nested or spelled
    ("histogram_quantile(0.9, sum without (le) (rate(vllm:e2e_request_latency_seconds_bucket[5m])))",
     "quantile-without-le", ["without (le)"]),
    ("histogram_quantile(0.9, sum by (le) (max by (instance) "
     "(rate(vllm:e2e_request_latency_seconds_bucket[5m]))))", "quantile-without-le", ["max by"]),
])
def test_lint_parses_and_reports_each_finding(expr, kind, words):
    version = "v1-0.10" if "v1-0.10" in words else "v1"
    found = A.lint_promql(expr, version=version, rule="R")
    assert [f.kind for f in found] == [kind], found
    text = str(found[0])
    assert text.startswith(f"R: [{kind}] ") and "\n" not in text
    for w in words:
        assert w in found[0].message, (w, found[0].message)


@pytest.mark.parametrize("expr", [
    '"vllm:kv_cache_usage_perc > 90"',                           # a string, not a selector
    'label_replace(absent(vllm:kv_cache_usage_perc), "series", "vllm:gpu_cache_usage_perc", "", "")',
    "vllm:kv_cache_usage_perc > bool 0.9",
    "count(vllm:kv_cache_usage_perc > 0.9) > 2",                 # a count, not a fraction
    "sum(vllm:num_requests_waiting) > 90",
    "up{job=\"vllm\"} == 1 unless on (job, instance) vllm:kv_cache_usage_perc",
    "histogram_quantile(0.9, topk(3, rate(vllm:e2e_request_latency_seconds_bucket[5m])))",
    'vllm:request_success_total{finished_reason=~"stop|length"}',
    "rate(vllm:e2e_request_latency_seconds_sum[5m]) / rate(vllm:e2e_request_latency_seconds_count[5m])",
])
def test_lint_has_no_false_alarm_on_sound_queries(expr):
    assert A.lint_promql(expr) == []


def test_the_label_checks_know_each_familys_labels():
    found = A.lint_promql('vllm:num_preemptions_total{finished_reason="stop"}')
    assert [f.kind for f in found] == ["label-not-on-family"]
    assert "engine, model_name" in found[0].message
    # a target label (job, instance, pod ...) is nobody's business but the scrape's
    assert A.lint_promql('vllm:num_preemptions_total{pod="a", job="vllm"}') == []
    # V0 has no engine label
    assert [f.kind for f in A.lint_promql('vllm:num_preemptions_total{engine="0"}',
                                          version="v0")] == ["label-not-on-family"]


def test_an_unparsable_rule_is_one_line_naming_the_rule(tmp_path):
    """promtool refuses a rule file whose expression does not parse, so the linter refuses
    it too, in one line naming the rule, before any vLLM finding (issue 30); a single
    --expr that does not parse stays an ``unparsable`` finding."""
    path = tmp_path / "r.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "g", "rules": [
        {"alert": "Broken", "expr": "rate(("},
        {"alert": "Fine", "expr": "rate(vllm:num_preemptions_total[5m]) > 0"}]}]}))
    with pytest.raises(KvsimError, match=r"rule 1 \(Broken\): the expression does not parse "
                                         r"\(.*\): `rate\(\(`$"):
        A.lint_rules(path)
    proc = subprocess.run([sys.executable, "-m", "kvsim", "lint-rules", str(path)],
                          capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1
    assert "(Broken): the expression does not parse" in proc.stderr
    found = A.lint_promql("rate((")
    assert [f.kind for f in found] == ["unparsable"]


def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "kvsim", "lint-rules", *argv],
                          capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


@pytest.mark.parametrize("name, content, flag, words", [
    ("binary.yml", b"\x7fELF\x02\x01\x01\x00\x00\x00", None, "binary file"),
    ("latin1.yml", "groups: caf\u00e9\n".encode("latin-1"), None, "not UTF-8 text"),
    ("junk.yml", b"groups: [", None, "not valid YAML"),
    ("list.yml", b"- 1\n- 2\n", None, "no 'groups' list"),
    ("board.json", b'{"panels": [', "--dashboard", "not valid JSON"),
    ("board.yml", b"groups: []\n", "--dashboard", "not valid JSON"),
    ("rows.json", b'{"title": "x"}', "--dashboard", "no 'panels' list"),
    ("binary.json", b"\x00\x01\x02", "--dashboard", "binary file"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, name, content, flag, words):
    path = tmp_path / name
    path.write_bytes(content)
    proc = _cli(*([flag] if flag else []), str(path))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_lint_exit_codes(tmp_path):
    assert _cli("--expr", "vllm:kv_cache_usage_perc > 0.9").returncode == 0
    assert _cli("--expr", "vllm:kv_cache_usage_perc > 90").returncode == 1
    assert _cli("--expr", "rate((").returncode == 1
    # a deprecated name is a note: it works on this release
    note = _cli("--expr", "vllm:gpu_cache_usage_perc > 0.9", "--vllm-version", "v1-0.10")
    assert note.returncode == 0 and note.stdout.startswith("note: [deprecated-name]")
    strict = _cli("--expr", "vllm:gpu_cache_usage_perc > 0.9", "--vllm-version", "v1-0.10", "--strict")
    assert strict.returncode == 1
    assert _cli("--expr", "").returncode == 2
    assert _cli(str(tmp_path / "missing.yml")).returncode == 2
    assert _cli("--var", "a=b", "--expr", "up").returncode == 2
    board = tmp_path / "b.json"
    board.write_text(json.dumps({"panels": [{"title": "p", "targets": [
        {"expr": "vllm:kv_cache_usage_perc{model_name=\"$model\"} > 90"}]}]}))
    assert _cli("--dashboard", str(board)).returncode == 2            # $model has no value
    found = _cli("--dashboard", str(board), "--var", "model=m", "--json")
    assert found.returncode == 1
    assert [(f["rule"], f["kind"]) for f in json.loads(found.stdout)] == [("p", "gauge-range")]


def _vllm_dashboard(shared_data: Path) -> tuple[Path, dict]:
    """vLLM's example dashboard, and its template variables as SOURCES.md's files fill them:
    $model_name its current value, $__rate_interval four of prometheus.yaml's scrape intervals."""
    folder = shared_data / "vllm-dashboard"
    board = folder / "grafana.json"
    if not board.is_file():
        pytest.skip(f"{board} is absent")
    scrape = yaml.safe_load((folder / "prometheus.yaml").read_text())["global"]["scrape_interval"]
    seconds = int(scrape.rstrip("s"))
    return board, {"__rate_interval": f"{4 * seconds}s"}


def test_the_vllm_dashboard_has_no_finding_on_its_own_release(shared_data):
    board, variables = _vllm_dashboard(shared_data)
    exprs = L.dashboard_expressions(board, variables)
    assert len(exprs) >= 25 and not any("$" in e for _, e in exprs)
    # written for the 0.10-era names: on that release, only notes (two families deprecated)
    found = A.lint_dashboard(board, version="v1-0.10", variables=variables)
    assert {f.severity for f in found} == {"note"}
    assert {f.text.rsplit("_", 1)[0] if f.text.endswith(("_bucket", "_sum", "_count"))
            else f.text for f in found} == {"vllm:time_per_output_token_seconds",
                                            "vllm:gpu_cache_usage_perc"}
    # on current V1 those two are gone; with them renamed, the dashboard is clean there too
    assert {f.kind for f in A.lint_dashboard(board, variables=variables)} == {"absent-name"}
    renamed = board.read_text().replace("vllm:time_per_output_token_seconds",
                                        "vllm:inter_token_latency_seconds")
    renamed = renamed.replace("vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc")
    assert A.lint_dashboard(renamed, variables=variables) == []
    proc = _cli("--dashboard", str(board), "--var", f"__rate_interval={variables['__rate_interval']}",
                "--vllm-version", "v1-0.10")
    assert proc.returncode == 0 and proc.stdout.startswith("note: ")


# --- end to end: a real Prometheus scrapes kvsim exporter --------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(port: int, path: str, **params):
    url = f"http://127.0.0.1:{port}{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read().decode())


def wait_for(check, timeout_s: float, what: str):
    deadline = time.time() + timeout_s
    last = None
    while time.time() < deadline:
        try:
            last = check()
            if last:
                return last
        except OSError as exc:
            last = exc
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def has_a_number(result: list[dict]) -> bool:
    """A range query's result holds at least one sample that is a number."""
    return any(not np.isnan(float(v)) for series in result for _, v in series["values"])


@contextmanager
def scraped_storm(tmp_path, speed: float, *exporter_args: str):
    """A real Prometheus scraping ``kvsim exporter`` replaying mission-1-storm at ``speed``
    (every second), for the whole storm and a few scrapes of its end: yields
    ``(prometheus port, wall start, wall end)``; both stop afterwards."""
    exe = need("prometheus")
    prom_port, exp_port = free_port(), free_port()
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [{"job_name": "vllm",
                            "static_configs": [{"targets": [f"127.0.0.1:{exp_port}"]}]}]}))
    procs = []
    try:
        procs.append(subprocess.Popen(
            [exe, f"--config.file={tmp_path / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'data'}",
             f"--web.listen-address=127.0.0.1:{prom_port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for(lambda: urllib.request.urlopen(f"http://127.0.0.1:{prom_port}/-/ready",
                                                timeout=2).status == 200, 30,
                 "prometheus to be ready")
        start = time.time()
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "kvsim", "exporter", "--scenario", "mission-1-storm",
             "--speed", str(speed), "--port", str(exp_port), *exporter_args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT))
        time.sleep(120.0 / speed + 4.0)           # the whole storm, then a few scrapes of its end
        yield prom_port, start, time.time()
    finally:
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_prometheus_scrapes_the_exporter_end_to_end(tmp_path):
    exe = need("prometheus")
    expected = kvsim.run_scenario("mission-1-storm").events.num_rows
    assert expected > 0
    prom_port, exp_port = free_port(), free_port()
    # The shipped rule's shape on a wall clock compressed 20x: 5m -> 15s, 10m -> 3s.
    (tmp_path / "rules.yml").write_text(yaml.safe_dump({"groups": [{"name": "e2e", "rules": [
        {"alert": "VLLMKVCachePreemption", "expr": "rate(vllm:num_preemptions_total[15s]) > 0",
         "for": "3s", "labels": {"severity": "warning"}}]}]}))
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(tmp_path / "rules.yml")],
        "scrape_configs": [{"job_name": "vllm",
                            "static_configs": [{"targets": [f"127.0.0.1:{exp_port}"]}]}]}))
    procs = []
    try:
        prom = subprocess.Popen([exe, f"--config.file={tmp_path / 'prometheus.yml'}",
                                 f"--storage.tsdb.path={tmp_path / 'data'}",
                                 f"--web.listen-address=127.0.0.1:{prom_port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        procs.append(prom)
        wait_for(lambda: urllib.request.urlopen(
            f"http://127.0.0.1:{prom_port}/-/ready", timeout=2).status == 200, 30,
            "prometheus to be ready")
        exporter = subprocess.Popen([sys.executable, "-m", "kvsim", "exporter", "--scenario",
                                     "mission-1-storm", "--speed", "20", "--port",
                                     str(exp_port)], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
        procs.append(exporter)

        def firing():
            alerts = api(prom_port, "/api/v1/alerts")["data"]["alerts"]
            return [a for a in alerts if a["labels"]["alertname"] == "VLLMKVCachePreemption"
                    and a["state"] == "firing"]
        fired = wait_for(firing, 30, "the preemption alert to fire")
        assert fired[0]["labels"]["model_name"] == "llama-2-7b"
        assert fired[0]["labels"]["engine"] == "0"

        def final_count():
            res = api(prom_port, "/api/v1/query", query="vllm:num_preemptions_total")
            vals = res["data"]["result"]
            return vals and float(vals[0]["value"][1]) == expected and vals
        got = wait_for(final_count, 30, f"vllm:num_preemptions_total == {expected}")
        assert got[0]["metric"]["job"] == "vllm"
        # and once the run is over, the rate falls to zero and the alert resolves
        wait_for(lambda: not firing(), 40, "the alert to resolve")
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    assert exporter.returncode == 0


# --- the chapter's recipe, as written --------------------------------------------------

def recipe_commands() -> list[list[str]]:
    """The commands of the bash block under "Try it: a real Prometheus" in chapter 4."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    text = next("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"
                and "## Try it: a real Prometheus" in "".join(c["source"]))
    section = text.split("## Try it: a real Prometheus", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1).replace("\\\n", " ")
    return [shlex.split(line) for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def flag(argv: list[str], name: str) -> str:
    values = [a.split("=", 1)[1] for a in argv if a.startswith(name + "=")]
    if not values and name in argv:
        values = [argv[argv.index(name) + 1]]
    assert len(values) == 1, (name, argv)
    return values[0]


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_the_fast_rule_file_is_the_books_rules_on_the_replays_clock():
    """Generated, never edited: it is exactly what `kvsim lint-rules --at-speed 20` writes, and
    promtool loads it."""
    from kvsim.observe.rule_clock import rules_at_speed
    source = A.RULES_FILE.relative_to(ROOT).as_posix()
    assert FAST_RULES.read_text() == rules_at_speed(A.RULES_FILE, RECIPE_SPEED, source=source), (
        f"regenerate it: python -m kvsim lint-rules {source} --at-speed {RECIPE_SPEED} > "
        f"{FAST_RULES.relative_to(ROOT)}")
    exe = need("promtool")
    proc = subprocess.run([exe, "check", "rules", str(FAST_RULES)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and "SUCCESS: 10 rules found" in proc.stdout, proc.stdout


def test_on_the_replays_clock_every_alert_fires_in_the_same_simulated_minutes():
    """The incident scraped every 20 simulated seconds: as a real server's Prometheus sees it
    with the book's rules, and as chapter 4's Prometheus sees the --speed 20 replay (a scrape
    and an evaluation every wall second) with the fast rules. Every alert fires in the same
    simulated minutes, to within one minute at either end."""
    need("promtool")
    result = kvsim.run_scenario("incident-day")
    real = A.firing_times(A.RULES_FILE, result, interval_s=20)
    fast = A.firing_times(FAST_RULES, result, interval_s=20, speed=RECIPE_SPEED)
    assert real.keys() == fast.keys()
    assert real["VLLMPreemptionStorm"], "the page must fire on the incident"
    for name in real:
        a, b = real[name], fast[name]
        assert bool(a) == bool(b), (name, a, b)
        if a:
            assert abs(a[0] - b[0]) <= 60 and abs(a[-1] - b[-1]) <= 60, (name, a, b)


def test_on_chapter_5s_normal_day_the_rules_page_as_the_chapter_says():
    """Chapter 5's normal Belgavi day preempts past the per-1,000 threshold: the book's rules
    page on it (issue 29 item 4), and the chapter names exactly the rules that do, the page
    firing in the first minutes; the rest stay quiet."""
    need("promtool")
    fired = A.firing_times(A.RULES_FILE, kvsim.run_scenario("belgavi"))
    firing = {name for name, times in fired.items() if times}
    assert firing == {"VLLMPreemptionsPer1k", "VLLMPreemptionStorm"}, fired
    assert fired["VLLMPreemptionStorm"][0] <= fired["VLLMPreemptionsPer1k"][0]
    chapter = "".join("".join(c["source"]) for c in json.loads(
        (ROOT / "book" / "ch05-belgavis-book-store.ipynb").read_text())["cells"]
        if c["cell_type"] == "markdown")
    said = set(re.findall(r"`(VLLM\w+)`", chapter))
    assert said & set(fired) == firing, (said, firing)


def test_promtool_check_config_passes_on_the_books_prometheus_yml():
    exe = need("promtool")
    proc = subprocess.run([exe, "check", "config", str(PROMETHEUS_YML)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 1 rule files found" in proc.stdout and "SUCCESS: 10 rules found" in proc.stdout


def test_the_chapters_prometheus_recipe_works_as_written(tmp_path):
    """Chapter 4's two commands, run from the repository's root with their ports and flags;
    only ``kvsim`` becomes ``python -m kvsim`` (this checkout) and the TSDB folder a temporary
    one. Prometheus must report the exporter up, answer a query on a vllm: series and have
    loaded the book's rules."""
    exe = need("prometheus")
    need("promtool")
    commands = recipe_commands()
    config_flag = f"--config.file={PROMETHEUS_YML.relative_to(ROOT)}"
    assert [c[:2] for c in commands] == [["kvsim", "exporter"], ["prometheus", config_flag]]
    exporter_argv, prom_argv = commands
    exp_port = int(flag(exporter_argv, "--port"))
    prom_host, prom_port = flag(prom_argv, "--web.listen-address").rsplit(":", 1)
    prom_port = int(prom_port)
    assert prom_host == "127.0.0.1" and prom_port != 9090     # not Debian's system service
    config = yaml.safe_load(PROMETHEUS_YML.read_text())
    targets = [t for job in config["scrape_configs"] for sc in job["static_configs"]
               for t in sc["targets"]]
    assert targets == [f"127.0.0.1:{exp_port}"]
    assert [ROOT / "book" / "alerts" / f for f in config["rule_files"]] == [FAST_RULES]
    assert float(flag(exporter_argv, "--speed")) == RECIPE_SPEED
    busy = [p for p in (exp_port, prom_port) if not port_is_free(p)]
    if busy:
        pytest.skip(f"port(s) {busy} of the chapter's recipe are in use on this machine")
    storage = flag(prom_argv, "--storage.tsdb.path")
    prom_argv = [exe] + [f"--storage.tsdb.path={tmp_path / 'data'}"
                         if a == f"--storage.tsdb.path={storage}" else a for a in prom_argv[1:]]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = []
    try:
        exporter = subprocess.Popen([sys.executable, "-m", "kvsim", *exporter_argv[1:]],
                                    cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        procs.append(exporter)
        ready = exporter.stdout.readline()               # the exporter listens from here
        assert ready.startswith(f"kvsim exporter: serving /metrics on "
                                f"http://127.0.0.1:{exp_port} "), ready
        prom = subprocess.Popen(prom_argv, cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        procs.append(prom)
        wait_for(lambda: urllib.request.urlopen(
            f"http://127.0.0.1:{prom_port}/-/ready", timeout=2).status == 200, 60,
            "prometheus to be ready")

        def target_up():
            active = api(prom_port, "/api/v1/targets")["data"]["activeTargets"]
            return [t for t in active if t["scrapeUrl"] == f"http://127.0.0.1:{exp_port}/metrics"
                    and t["health"] == "up"]
        up = wait_for(target_up, 30, "the exporter's target to be up")
        assert up[0]["labels"]["job"] == "vllm"

        def series():
            res = api(prom_port, "/api/v1/query", query="vllm:kv_cache_usage_perc")
            return res["data"]["result"]
        got = wait_for(series, 30, "vllm:kv_cache_usage_perc to be queryable")
        assert got[0]["metric"]["model_name"] == "llama-2-7b"

        groups = api(prom_port, "/api/v1/rules")["data"]["groups"]
        assert {(ROOT / g["file"]).resolve() for g in groups} == {FAST_RULES}
        names = sorted(r["name"] for g in groups for r in g["rules"])
        assert names == sorted(A.rule_alerts(A.RULES_FILE.read_text()))
        assert len(names) == 10

        # the page fires live, on the replay's clock (the incident's storm starts about
        # 17 simulated minutes in: under a minute of wall time at --speed 20)
        def paging():
            alerts = api(prom_port, "/api/v1/alerts")["data"]["alerts"]
            return [a for a in alerts if a["labels"]["alertname"] == "VLLMPreemptionStorm"
                    and a["state"] == "firing"]
        fired = wait_for(paging, 120, "VLLMPreemptionStorm to fire on the replay")
        assert fired[0]["labels"]["severity"] == "warning"
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    assert exporter.returncode == 0 and "Traceback" not in exporter.stderr.read()
