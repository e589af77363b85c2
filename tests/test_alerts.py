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
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import yaml

import kvsim
from kvsim.observe import alerts as A
from kvsim.observe import promtool_tests

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "book" / "ch04-detecting-preemption.ipynb"
PROMETHEUS_YML = ROOT / "book" / "alerts" / "prometheus.yml"
REQUIRED = os.environ.get("KVBOOK_REQUIRE_PROMETHEUS", "") == "1"
LABELS = {"model_name": "llama-2-7b", "engine": "0", "job": "vllm", "instance": "gpu-0"}
EXTRA = {"job": "vllm", "instance": "gpu-0"}
SEED_AND_BETTER = ["VLLMKVCachePreemption", "VLLMKVCacheNearFull", "VLLMKVCachePinned",
                   "VLLMPreemptionsPer1k", "VLLMRequestsPreemptedRepeatedly",
                   "VLLMInterTokenLatencyTail", "VLLMQueueGrowingWhileKVPinned"]


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        message = (f"{tool} is not installed (Debian: apt-get install prometheus); "
                   "KVBOOK_REQUIRE_PROMETHEUS=1 makes this a failure")
        if REQUIRED:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


@lru_cache(maxsize=None)
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
    test = promtool_tests.promtool_test(result, rule_files=[str(A.RULES_FILE)], interval_s=15,
                           extra_labels=EXTRA,
                           alert_tests=A.alert_rule_tests(A.RULES_FILE, LABELS, firing, alerts))
    return A.run_promtool_test(test)


def test_promtool_check_rules_passes_on_the_shipped_rules():
    exe = need("promtool")
    proc = subprocess.run([exe, "check", "rules", str(A.RULES_FILE), str(A.SEED_RULES_FILE)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 7 rules found" in proc.stdout


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


def test_promtool_check_config_passes_on_the_books_prometheus_yml():
    exe = need("promtool")
    proc = subprocess.run([exe, "check", "config", str(PROMETHEUS_YML)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 1 rule files found" in proc.stdout and "SUCCESS: 7 rules found" in proc.stdout


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
    assert [ROOT / "book" / "alerts" / f for f in config["rule_files"]] == [A.RULES_FILE]
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
        assert {(ROOT / g["file"]).resolve() for g in groups} == {A.RULES_FILE}
        names = sorted(r["name"] for g in groups for r in g["rules"])
        assert names == sorted(A.rule_alerts(A.RULES_FILE.read_text()))
        assert len(names) == 7
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
