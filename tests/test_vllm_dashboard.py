"""vLLM's own Grafana dashboard, run on kvsim: every panel returns data.

The dashboard is vLLM's example (``../shared/data/vllm-dashboard/grafana.json``,
examples/online_serving/prometheus_grafana at 004f771; SOURCES.md). A real
Prometheus scrapes ``kvsim exporter`` replaying a storm; each panel's PromQL,
its template variables filled as Grafana fills them, is queried over the run
through Prometheus's HTTP API and must return at least one number.

That dashboard predates the V1 renames: it reads `vllm:gpu_cache_usage_perc`
and `vllm:time_per_output_token_seconds`. Against the 0.10 series (which
exports both names) every panel has data; against current V1 exactly the
panels on renamed series stay empty, which is chapter 4's point about renames
silencing what watches them.
"""
from __future__ import annotations

import pytest
from test_alerts import api, has_a_number, need, scraped_storm

from kvsim.observe.lint import dashboard_expressions

MODEL = "llama-2-7b"
SPEED = 10.0                    # mission-1-storm's 120 simulated seconds in 12 wall seconds
RATE_INTERVAL = "5s"            # Grafana's $__rate_interval: 4 scrape intervals and more
RENAMED = {"Cache Utilization", "Time Per Output Token Latency"}


def panel_queries(dashboard_file) -> dict[str, list[str]]:
    """Each panel's PromQL, its variables filled as Grafana fills them (the linter's reader)."""
    out: dict[str, list[str]] = {}
    variables = {"model_name": MODEL, "__rate_interval": RATE_INTERVAL}
    for title, expr in dashboard_expressions(dashboard_file, variables):
        out.setdefault(title, []).append(expr)
    return out


def replay(tmp_path, version: str, dashboard_file) -> dict[str, bool]:
    """Scrape the storm exported as ``version`` and query every panel: ``{title: has data}``."""
    with scraped_storm(tmp_path, SPEED, "--vllm-version", version) as (prom_port, start, end):
        # the dashboard's template variable: label_values({__name__=~"vllm:.*"}, model_name)
        names = api(prom_port, "/api/v1/label/model_name/values",
                    **{"match[]": '{__name__=~"vllm:.*"}'})["data"]
        assert names == [MODEL]
        return {title: all(has_a_number(api(prom_port, "/api/v1/query_range", query=e, start=start,
                                            end=end, step=1)["data"]["result"]) for e in exprs)
                for title, exprs in panel_queries(dashboard_file).items()}


@pytest.fixture
def dashboard_file(shared_data):
    path = shared_data / "vllm-dashboard" / "grafana.json"
    if not path.is_file():
        pytest.skip("../shared/data/vllm-dashboard/grafana.json is absent")
    return path


def test_the_dashboard_reads_twelve_panels(dashboard_file):
    queries = panel_queries(dashboard_file)
    assert len(queries) == 12
    assert all("$" not in e for exprs in queries.values() for e in exprs)


def test_every_panel_has_data_on_the_010_series(dashboard_file, tmp_path):
    need("prometheus")
    seen = replay(tmp_path, "v1-0.10", dashboard_file)
    assert all(seen.values()), [t for t, ok in seen.items() if not ok]


def test_on_current_v1_only_the_renamed_panels_go_dark(dashboard_file, tmp_path):
    need("prometheus")
    seen = replay(tmp_path, "v1", dashboard_file)
    assert {t for t, ok in seen.items() if not ok} == RENAMED
