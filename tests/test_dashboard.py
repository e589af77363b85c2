"""The book's Grafana dashboard (book/alerts/kvsim-preemption.dashboard.json), beside its rules.

Structure: the JSON loads, Grafana's layout rules hold (unique ids, panels inside
the 24-column grid, none overlapping), every panel queries the dashboard's
Prometheus datasource variable, every query parses with the PromQL parser
``kvsim lint-rules`` uses and names only samples kvsim's exporter writes, and
``kvsim lint-rules --dashboard`` finds nothing. Content: the panels chapter 4
teaches (the cache, the queue, preemptions per second and per 1,000 requests,
the TTFT and inter-token p99) and one panel per alert rule of
kvsim-preemption.rules.yml holding exactly what the rule compares, with its
threshold drawn.

Live (marked ``promtool``, needs Debian's ``prometheus``): a real Prometheus
scrapes ``kvsim exporter`` replaying a storm, and every query of the dashboard,
its variables filled as Grafana fills them, returns a number over the run
through Prometheus's HTTP API.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import promql_parser as pq
import pytest
import yaml
from test_alerts import api, has_a_number, scraped_storm

import kvsim
from kvsim.observe.lint import dashboard_expressions, lint_dashboard
from kvsim.observe.series import run_metrics

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "book" / "alerts" / "kvsim-preemption.dashboard.json"
RULES = ROOT / "book" / "alerts" / "kvsim-preemption.rules.yml"
#: the rule file's guards watch for vanished series (absent(...), up): no graph shows that
GUARD_GROUP = "kvsim-guards"
#: Grafana 12's classic dashboard model (its dashboard migrations end at 42)
SCHEMA_VERSION = 42
MODEL = "llama-2-7b"


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def graph_panels(doc: dict) -> list[dict]:
    """Every panel but the rows (rows' own panels included)."""
    out = []
    for panel in doc["panels"]:
        if panel["type"] == "row":
            out += panel.get("panels", [])
        else:
            out.append(panel)
    return out


def selectors(expr: str) -> list:
    """Every vector selector of a PromQL expression (the parser's syntax tree)."""
    stack, out = [pq.parse(expr)], []
    while stack:
        node = stack.pop()
        if isinstance(node, pq.VectorSelector):
            out.append(node)
        elif isinstance(node, pq.BinaryExpr):
            stack += [node.lhs, node.rhs]
        elif isinstance(node, pq.AggregateExpr):
            stack += [x for x in (node.param, node.expr) if x is not None]
        elif isinstance(node, pq.Call):
            stack += list(node.args)
        elif isinstance(node, (pq.ParenExpr, pq.UnaryExpr, pq.SubqueryExpr)):
            stack.append(node.expr)
        elif isinstance(node, pq.MatrixSelector):
            stack.append(node.vector_selector)
    return out


def normal(expr: str) -> str:
    """An expression as the parser prints it back (spacing and `{}` do not matter)."""
    return str(pq.parse(expr))


def exported_sample_names() -> set[str]:
    """Every sample name ``kvsim exporter`` writes (current V1 metric names)."""
    rm = run_metrics(kvsim.run_scenario("mission-1-storm"), version="v1")
    return {s.name for fam in rm.families(rm.end_s) for s in fam.samples}


def alert_rules() -> list[dict]:
    doc = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return [r for g in doc["groups"] if g["name"] != GUARD_GROUP for r in g["rules"] if "alert" in r]


# --- structure --------------------------------------------------------------------------

def test_the_dashboard_is_current_grafana_json_with_a_prometheus_datasource_variable():
    doc = dashboard()
    assert doc["schemaVersion"] == SCHEMA_VERSION and doc["uid"] and doc["title"]
    variables = {v["name"]: v for v in doc["templating"]["list"]}
    datasources = [v for v in variables.values() if v["type"] == "datasource"]
    assert [v["query"] for v in datasources] == ["prometheus"]
    uid = "${" + datasources[0]["name"] + "}"
    assert variables["model_name"]["datasource"] == {"type": "prometheus", "uid": uid}
    for panel in graph_panels(doc):
        assert panel["datasource"] == {"type": "prometheus", "uid": uid}, panel["title"]
        assert panel["targets"], f"panel {panel['title']!r} has no query"
        for target in panel["targets"]:
            assert target["datasource"] == {"type": "prometheus", "uid": uid}, panel["title"]
            assert target["expr"].strip(), panel["title"]
        ref_ids = [t["refId"] for t in panel["targets"]]
        assert len(set(ref_ids)) == len(ref_ids), panel["title"]


def test_ids_are_unique_and_the_panels_tile_the_grid_without_overlap():
    panels = dashboard()["panels"]
    ids = [p["id"] for p in panels] + [q["id"] for p in panels for q in p.get("panels", [])]
    assert len(set(ids)) == len(ids) and all(isinstance(i, int) for i in ids)
    cells: dict[tuple[int, int], str] = {}
    for panel in panels:
        pos = panel["gridPos"]
        assert pos["w"] > 0 and pos["h"] > 0 and pos["x"] >= 0 and pos["y"] >= 0, panel["title"]
        assert pos["x"] + pos["w"] <= 24, f"{panel['title']!r} runs past Grafana's 24 columns"
        for x in range(pos["x"], pos["x"] + pos["w"]):
            for y in range(pos["y"], pos["y"] + pos["h"]):
                assert (x, y) not in cells, f"{panel['title']!r} overlaps {cells[(x, y)]!r}"
                cells[(x, y)] = panel["title"]


def test_every_query_parses_and_names_only_samples_the_exporter_writes():
    exported = exported_sample_names()
    queries = dashboard_expressions(DASHBOARD)
    assert len(queries) == 18
    for title, expr in queries:
        found = selectors(expr)                  # raises on a query that does not parse
        assert found, (title, expr)
        for vs in found:
            assert vs.name in exported, f"{title}: {vs.name!r} is not a sample kvsim exports"


def test_the_linter_finds_nothing_in_the_api_and_on_the_command_line():
    assert lint_dashboard(DASHBOARD) == []
    proc = subprocess.run([sys.executable, "-m", "kvsim", "lint-rules", "--dashboard",
                           str(DASHBOARD), "--strict"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("no findings"), proc.stdout


# --- content ----------------------------------------------------------------------------

def test_the_model_variable_defaults_to_all_models():
    queries = dict(dashboard_expressions(DASHBOARD))
    # "All" is selected: Grafana sends the variable's allValue, and so does the linter
    assert queries["KV cache usage"] == 'vllm:kv_cache_usage_perc{model_name=~".*"}'
    picked = dict(dashboard_expressions(DASHBOARD, {"model_name": MODEL}))
    assert picked["KV cache usage"] == f'vllm:kv_cache_usage_perc{{model_name=~"{MODEL}"}}'


def test_it_shows_what_chapter_4_watches():
    by_title: dict[str, list[str]] = {}
    for title, expr in dashboard_expressions(DASHBOARD):
        by_title.setdefault(title, []).append(expr)
    names = {title: {vs.name for e in exprs for vs in selectors(e)} for title, exprs in by_title.items()}
    assert names["KV cache usage"] == {"vllm:kv_cache_usage_perc"}
    assert names["Requests running and waiting"] == {"vllm:num_requests_running",
                                                     "vllm:num_requests_waiting"}
    assert names["Preemptions per second"] == {"vllm:num_preemptions_total"}
    assert names["Preemptions per 1,000 finished requests"] == {"vllm:num_preemptions_total",
                                                                "vllm:request_success_total"}
    for title, family in (("Time to first token, p50 and p99", "vllm:time_to_first_token_seconds"),
                          ("Inter-token latency, p50 and p99", "vllm:inter_token_latency_seconds")):
        quantiles = sorted(float(str(pq.parse(e).args[0])) for e in by_title[title])
        assert quantiles == [0.5, 0.99] and names[title] == {family + "_bucket"}, title


def test_one_panel_per_alert_rule_holds_what_the_rule_compares_and_its_threshold():
    panels = {p["title"]: p for p in graph_panels(dashboard())}
    rules = alert_rules()
    assert len(rules) == 8
    for rule in rules:
        panel = panels[rule["alert"]]
        expr = pq.parse(rule["expr"])
        comparisons = [expr.lhs, expr.rhs] if str(expr.op) == "and" else [expr]
        assert [normal(t["expr"]) for t in panel["targets"]] == [str(c.lhs) for c in comparisons]
        assert rule["for"] in panel["description"] and rule["annotations"]["runbook_url"] in \
            panel["description"], rule["alert"]
        if len(comparisons) == 1:
            steps = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
            assert [s["value"] for s in steps[1:]] == [float(str(expr.rhs))], rule["alert"]
    guards = [r["alert"] for g in yaml.safe_load(RULES.read_text())["groups"]
              if g["name"] == GUARD_GROUP for r in g["rules"]]
    assert guards and all(g in dashboard()["description"] for g in guards)


# --- live: a real Prometheus scraping the exporter ----------------------------------------

@pytest.mark.promtool
def test_every_query_returns_data_from_a_real_prometheus_scraping_the_exporter(tmp_path):
    # mission-1-storm's 120 simulated seconds in 12 wall seconds
    with scraped_storm(tmp_path, 10.0) as (prom_port, start, end):
        # the model variable's query: label_values(vllm:num_requests_running, model_name)
        models = api(prom_port, "/api/v1/label/model_name/values",
                     **{"match[]": "vllm:num_requests_running"})["data"]
        assert models == [MODEL]
        # Grafana's $__rate_interval at a 1 s scrape: four scrape intervals and more
        queries = dashboard_expressions(DASHBOARD, {"model_name": MODEL, "__rate_interval": "5s"})
        empty = []
        for title, expr in queries:
            answer = api(prom_port, "/api/v1/query_range", query=expr, start=start, end=end, step=1)
            assert answer["status"] == "success", (title, expr, answer)
            if not has_a_number(answer["data"]["result"]):
                empty.append(f"{title}: {expr}")
        assert not empty, empty
