"""kvsim.observe's catalogue, series, exposition and promtool files: a SimResult as the
Prometheus series a vLLM server exposes (and ``kvsim.observe.metrics``, their facade).

Every exposition is parsed back with prometheus_client's own parser; names,
types, labels and buckets are checked against the lists read from vLLM's
source (kvsim/observe/catalogue.py names the files and commits); values against the
run's own tables and summary.
"""
from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

import kvsim
from kvsim.observe import metrics
from kvsim.observe.catalogue import one_two_five_buckets
from kvsim.observe.exposition import exposition
from kvsim.observe.introspection import kv_usage_breakdown
from kvsim.observe.panels import histogram_quantile
from kvsim.observe.promtool_tests import promtool_input_series, promtool_test
from kvsim.observe.series import run_metrics, scrape


@cache
def storm():
    return kvsim.run_scenario("mission-1-storm")


def families(text):
    return {f.name: f for f in text_string_to_metric_families(text)}


REQUIRED_V1 = {
    "vllm:num_preemptions": "counter", "vllm:kv_cache_usage_perc": "gauge",
    "vllm:num_requests_running": "gauge", "vllm:num_requests_waiting": "gauge",
    "vllm:prompt_tokens": "counter", "vllm:generation_tokens": "counter",
    "vllm:time_to_first_token_seconds": "histogram",
    "vllm:inter_token_latency_seconds": "histogram",
    "vllm:e2e_request_latency_seconds": "histogram",
    "vllm:request_num_preemptions": "histogram", "vllm:prefix_cache_queries": "counter",
    "vllm:prefix_cache_hits": "counter", "vllm:cache_config_info": "gauge",
}


def test_v1_names_types_and_labels():
    fam = families(exposition(storm(), 60.0))
    for name, kind in REQUIRED_V1.items():
        assert name in fam, name
        assert fam[name].type == kind, name
    assert "vllm:gpu_cache_usage_perc" not in fam          # gone from current V1
    for f in fam.values():
        for s in f.samples:
            # vLLM's cache_config_info carries the cache config's fields and engine only
            if f.name != "vllm:cache_config_info":
                assert s.labels["model_name"] == "llama-2-7b"
            assert s.labels["engine"] == "0"


def test_counters_carry_total_and_created():
    text = exposition(storm(), 60.0)
    samples = {s.name for f in text_string_to_metric_families(text) for s in f.samples}
    for base in ("vllm:num_preemptions", "vllm:prompt_tokens", "vllm:generation_tokens",
                 "vllm:request_success"):
        assert base + "_total" in samples and base + "_created" in samples
    assert "vllm:num_preemptions_total{" in text and "vllm:num_preemptions{" not in text


def test_buckets_are_vllms():
    fam = families(exposition(storm(), 120.0))
    def edges(name):
        return [s.labels["le"] for s in fam[name].samples if s.name.endswith("_bucket")]
    assert edges("vllm:time_to_first_token_seconds")[:4] == ["0.001", "0.005", "0.01", "0.02"]
    assert edges("vllm:time_to_first_token_seconds")[-2:] == ["2560.0", "+Inf"]
    assert "2.0" not in edges("vllm:time_to_first_token_seconds")
    assert edges("vllm:inter_token_latency_seconds") == [
        "0.01", "0.025", "0.05", "0.075", "0.1", "0.15", "0.2", "0.3", "0.4", "0.5", "0.75",
        "1.0", "2.5", "5.0", "7.5", "10.0", "20.0", "40.0", "80.0", "+Inf"]
    assert edges("vllm:request_num_preemptions") == ["1.0", "2.0", "3.0", "4.0", "5.0", "10.0",
                                                     "20.0", "+Inf"]
    assert one_two_five_buckets(100) == (1, 2, 5, 10, 20, 50, 100)
    assert edges("vllm:request_prompt_tokens")[-2] == "2000.0"   # llama-2-7b: 4,096 tokens


def test_values_match_the_run():
    r = storm()
    s = r.summary()
    end = r.simulated_s
    fam = families(exposition(r, end))
    val = {(x.name, tuple(sorted(x.labels.items()))): x.value for f in fam.values()
           for x in f.samples}
    def one(name, **extra):
        lab = dict(model_name="llama-2-7b", engine="0", **extra)
        return val[(name, tuple(sorted(lab.items())))]
    assert one("vllm:num_preemptions_total") == s["preemptions"] == r.events.num_rows
    assert one("vllm:generation_tokens_total") == int(r.timeline["emitted_tokens"].sum())
    assert one("vllm:e2e_request_latency_seconds_count") == s["requests_finished"]
    assert one("vllm:request_success_total", finished_reason="stop") == s["requests_finished"]
    started = ~np.isnan(r.requests["first_token_s"])
    assert one("vllm:time_to_first_token_seconds_count") == int(started.sum())
    # V1 counts each prompt once, at its first token: recomputed tokens never show here
    assert one("vllm:prompt_tokens_total") == int(r.requests["prompt_tokens"][started].sum())
    assert one("vllm:request_num_preemptions_sum") == int(
        r.requests["preemptions"][~np.isnan(r.requests["finish_s"])].sum())
    last = r.timeline.num_rows - 1
    assert one("vllm:kv_cache_usage_perc") == pytest.approx(
        r.timeline["kv_blocks_used"][last] / r.total_blocks)
    # the inter-token histogram holds the gaps the summary's ITL percentiles are taken over
    count = one("vllm:inter_token_latency_seconds_count")
    assert count == r.timeline["decoding"].sum() + int((~np.isnan(r.pauses["end_s"])).sum())


def test_scrape_table_is_cumulative_and_sampled():
    r = storm()
    t = scrape(r, interval_s=15)
    assert t["t_s"][1] - t["t_s"][0] == 15
    assert t.num_rows == int(r.simulated_s // 15) + 1
    for col in ("vllm:num_preemptions_total", "vllm:generation_tokens_total",
                'vllm:inter_token_latency_seconds_bucket{le="0.5"}'):
        assert np.all(np.diff(t[col]) >= 0), col
    assert t["vllm:num_preemptions_total"][0] == 0
    # a sample shows the state after the last step at or before the scrape
    i = 4
    k = np.searchsorted(r.timeline["t_s"], t["t_s"][i], side="right") - 1
    assert t["vllm:num_requests_waiting"][i] == r.timeline["waiting"][k]
    b = t['vllm:inter_token_latency_seconds_bucket{le="0.1"}']
    assert np.all(b <= t['vllm:inter_token_latency_seconds_bucket{le="+Inf"}'])


def test_exposition_is_deterministic_and_both_formats():
    a = exposition(storm(), 33.3)
    assert a == exposition(kvsim.run_scenario("mission-1-storm"), 33.3)
    om = exposition(storm(), 33.3, openmetrics=True)
    assert om.rstrip().endswith("# EOF")
    assert "vllm:num_preemptions_total{" in om


def test_v0_and_v010_names():
    fam0 = families(exposition(storm(), 60.0, version="v0"))
    assert "vllm:gpu_cache_usage_perc" in fam0 and "vllm:num_requests_swapped" in fam0
    assert "vllm:kv_cache_usage_perc" not in fam0
    assert "vllm:time_per_output_token_seconds" in fam0
    for f in fam0.values():
        for s in f.samples:
            assert "engine" not in s.labels or f.name == "vllm:cache_config"
            assert not s.name.endswith("_created")            # disable_created_metrics()
    # V0 counted every scheduled prefill token, recomputed ones included
    end = storm().simulated_s
    v0 = families(exposition(storm(), end, version="v0"))["vllm:prompt_tokens"]
    assert v0.samples[0].value == int(storm().timeline["prefill_tokens"].sum())
    fam10 = families(exposition(storm(), 60.0, version="v1-0.10"))
    assert "vllm:gpu_cache_usage_perc" in fam10 and "vllm:kv_cache_usage_perc" in fam10
    g = {f: fam10[f].samples[0].value for f in ("vllm:gpu_cache_usage_perc",
                                                  "vllm:kv_cache_usage_perc")}
    assert g["vllm:gpu_cache_usage_perc"] == g["vllm:kv_cache_usage_perc"]


def test_promtool_input_series():
    r = storm()
    series = promtool_input_series(r, interval_s=30, extra_labels={"job": "vllm"})
    by = {s["series"]: s["values"] for s in series}
    key = 'vllm:num_preemptions_total{engine="0",job="vllm",model_name="llama-2-7b"}'
    values = [float(v) for v in by[key].split()]
    assert len(values) == int(r.simulated_s // 30) + 1
    assert values[-1] == r.events.num_rows
    assert all("_created" not in s["series"] for s in series)
    doc = yaml.safe_load(promtool_test(r, rule_files=["x.yml"], interval_s=30))
    assert doc["tests"][0]["interval"] == "30s" and doc["rule_files"] == ["x.yml"]


def test_histogram_quantile_matches_promql():
    edges = (0.1, 0.2, 0.5)
    assert histogram_quantile(0.5, edges, [10, 20, 20, 20]) == pytest.approx(0.1)
    assert histogram_quantile(0.75, edges, [10, 20, 20, 20]) == pytest.approx(0.15)
    assert histogram_quantile(0.99, edges, [0, 0, 0, 5]) == 0.5     # rank in +Inf
    assert histogram_quantile(0.25, edges, [10, 20, 20, 20]) == pytest.approx(0.05)
    assert np.isnan(histogram_quantile(0.5, edges, [0, 0, 0, 0]))


def test_kv_usage_breakdown_counts_blocks_not_tokens():
    b = kv_usage_breakdown("mission-1-storm", 60.0)
    r = storm()
    row = int(np.searchsorted(r.timeline["t_s"], b["t_s"]))
    assert r.timeline["t_s"][row] == b["t_s"]
    assert b["blocks_held"] == r.timeline["kv_blocks_used"][row]
    assert b["blocks_cached_free"] == r.timeline["kv_blocks_cached"][row]
    assert b["gauge"] == b["blocks_held"] / b["blocks_total"]
    # every running request's last block is partly filled: slack below one block each
    assert 0 <= b["slack_tokens"] < b["requests_running"] * b["block_size"]
    assert b["tokens_stored"] + b["slack_tokens"] == b["blocks_held"] * b["block_size"]
    assert b["token_fill"] < b["gauge"]
    assert all(isinstance(b[k], int) for k in ("blocks_held", "tokens_stored", "slack_tokens"))


@pytest.mark.parametrize("call, match", [
    (lambda: exposition(storm(), -1.0), "t=-1.0"),
    (lambda: exposition(storm(), 1.0, version="v2"), "version='v2'"),
    (lambda: scrape(storm(), interval_s=0), "interval_s=0"),
    (lambda: run_metrics("not a result"), "expected a kvsim.SimResult"),
    (lambda: kv_usage_breakdown("mission-1-storm", 10_000.0), "at_s=10000.0"),
    (lambda: histogram_quantile(1.5, (1,), [0, 1]), "q=1.5"),
])
def test_bad_input_is_one_line(call, match):
    with pytest.raises(kvsim.KvsimError, match=match.replace("(", r"\(").replace(".", r"\.")) as e:
        call()
    assert "\n" not in str(e.value)


def test_the_gauge_breakdown_is_the_state_a_scrape_at_that_instant_sees():
    """kv_usage_breakdown reads the engine after the last step that ended by at_s, as a
    scrape does: its gauge is the exposition's, sample for sample."""
    run = kvsim.run_scenario("incident-day")
    for at_s in (1_200.0, 1_320.0):
        b = kv_usage_breakdown("incident-day", at_s)
        line = next(x for x in exposition(run, at_s).splitlines()
                    if x.startswith("vllm:kv_cache_usage_perc"))
        assert float(line.split()[-1]) == b["gauge"]
        assert b["t_s"] <= at_s
    with pytest.raises(kvsim.KvsimError, match=r"at_s=1000000.0 is out of range"):
        kv_usage_breakdown("incident-day", 1e6)


def test_kvsim_observe_metrics_is_a_facade_over_the_modules_that_do_the_work():
    """The book's ``metrics`` (``from kvsim.observe import metrics``, ``kvsim.metrics``) hands
    on the same objects as their home modules, and defines nothing of its own."""
    assert kvsim.metrics is metrics
    for name in metrics.__all__:
        value = getattr(metrics, name)
        home = getattr(value, "__module__", None)
        if home is None:                                          # a constant: find its home
            home = next(f"kvsim.observe.{m}" for m in ("catalogue", "series") if
                        getattr(importlib.import_module(f"kvsim.observe.{m}"), name, None) is value)
        assert home != "kvsim.observe.metrics", name
        assert getattr(importlib.import_module(home), name) is value, name
    tree = ast.parse(Path(metrics.__file__).read_text(encoding="utf-8"))
    logic = [type(n).__name__ for n in tree.body
             if not isinstance(n, (ast.ImportFrom, ast.Import, ast.Expr, ast.Assign))]
    assert not logic, f"kvsim/observe/metrics.py is a facade only: {logic}"
    assert [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets] == ["__all__"]
