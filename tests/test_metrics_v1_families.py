"""Every metric family a current vLLM V1 server exports, and what each one counts.

The family table below is what vLLM's ``PrometheusStatLogger`` registers
(vllm/v1/metrics/loggers.py with ``num_requests_waiting_by_reason``; buckets
from vllm/v1/metrics/buckets.py at 139b1c3; ``finished_reason`` from
vllm/v1/engine/__init__.py's ``FINISH_REASON_STRINGS``; cache_config_info's
labels from vllm/config/cache.py at 002f10e), less the families a server only
registers behind a flag (spec decoding, LoRA, KV-cache residency, corrupted
requests). Values are checked against identities vLLM's own definitions imply
(``vllm/v1/metrics/stats.py``, ``FinishedRequestStats``): queue + inference =
e2e, prefill + decode = inference, the sources of the prompt tokens add up to
the prompt tokens, the waiting reasons to the waiting gauge.
"""
from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

import kvsim
from kvsim.observe.catalogue import metric_defs
from kvsim.observe.exposition import exposition
from kvsim.observe.series import CACHE_CONFIG_FIELDS, scrape

#: (name as registered, type, extra label and its values) in loggers.py's order.
V1_FAMILIES = [
    ("vllm:num_requests_running", "gauge", None),
    ("vllm:num_requests_waiting", "gauge", None),
    ("vllm:num_requests_waiting_by_reason", "gauge", ("reason", ("capacity", "deferred"))),
    ("vllm:engine_sleep_state", "gauge",
     ("sleep_state", ("awake", "weights_offloaded", "discard_all"))),
    ("vllm:kv_cache_usage_perc", "gauge", None),
    ("vllm:prefix_cache_queries", "counter", None),
    ("vllm:prefix_cache_hits", "counter", None),
    ("vllm:external_prefix_cache_queries", "counter", None),
    ("vllm:external_prefix_cache_hits", "counter", None),
    ("vllm:mm_cache_queries", "counter", None),
    ("vllm:mm_cache_hits", "counter", None),
    ("vllm:num_preemptions", "counter", None),
    ("vllm:prompt_tokens", "counter", None),
    ("vllm:prompt_tokens_by_source", "counter",
     ("source", ("local_compute", "local_cache_hit", "external_kv_transfer"))),
    ("vllm:prompt_tokens_cached", "counter", None),
    ("vllm:generation_tokens", "counter", None),
    ("vllm:request_success", "counter",
     ("finished_reason", ("stop", "length", "abort", "error", "repetition"))),
    ("vllm:request_prompt_tokens", "histogram", None),
    ("vllm:request_generation_tokens", "histogram", None),
    ("vllm:iteration_tokens_total", "histogram", None),
    ("vllm:request_max_num_generation_tokens", "histogram", None),
    ("vllm:request_params_n", "histogram", None),
    ("vllm:request_params_max_tokens", "histogram", None),
    ("vllm:time_to_first_token_seconds", "histogram", None),
    ("vllm:inter_token_latency_seconds", "histogram", None),
    ("vllm:request_time_per_output_token_seconds", "histogram", None),
    ("vllm:e2e_request_latency_seconds", "histogram", None),
    ("vllm:request_queue_time_seconds", "histogram", None),
    ("vllm:request_inference_time_seconds", "histogram", None),
    ("vllm:request_prefill_time_seconds", "histogram", None),
    ("vllm:request_decode_time_seconds", "histogram", None),
    ("vllm:request_prefill_kv_computed_tokens", "histogram", None),
    ("vllm:request_num_preemptions", "histogram", None),
    ("vllm:cache_config_info", "info", None),
]


@cache
def storm():
    return kvsim.run_scenario("mission-1-storm")


def end_values(result, **kw):
    """The last scrape's value of every series (a dict keyed by series name)."""
    tab = scrape(result, interval_s=1.0, until_s=float(np.ceil(result.simulated_s)), **kw)
    return {c: float(tab[c][-1]) for c in tab.columns}, tab


def test_current_v1_registers_every_family_in_vllms_order():
    defs = metric_defs("v1", 4096)
    got = [(d.name, d.kind, (d.label, d.values) if d.label else None) for d in defs]
    assert got == V1_FAMILIES


def test_the_exposition_shows_every_family_with_its_labels():
    r = storm()
    fam = {f.name: f for f in text_string_to_metric_families(exposition(r, r.simulated_s))}
    for name, kind, extra in V1_FAMILIES:
        key = name if kind != "counter" else name       # the parser drops _total
        assert key in fam, name
        assert fam[key].type == ("gauge" if kind == "info" else kind), name
        if extra:
            label, values = extra
            seen = {s.labels[label] for s in fam[key].samples}
            assert seen == set(values), name


def test_cache_config_info_carries_every_cache_config_field():
    r = storm()
    fam = {f.name: f for f in text_string_to_metric_families(exposition(r, 1.0))}
    (sample,) = fam["vllm:cache_config_info"].samples
    assert set(sample.labels) == set(CACHE_CONFIG_FIELDS) | {"engine"}
    assert sample.labels["cache_dtype"] == "auto"            # vLLM's default: the model's dtype
    assert sample.labels["num_gpu_blocks"] == str(r.total_blocks)
    assert sample.labels["kv_cache_size_tokens"] == str(r.total_blocks * 16)
    fp8 = kvsim.run_scenario("mission-1-storm", kv_dtype="fp8", until_s=5.0)
    fam8 = {f.name: f for f in text_string_to_metric_families(exposition(fp8, 1.0))}
    assert fam8["vllm:cache_config_info"].samples[0].labels["cache_dtype"] == "fp8"


def test_a_finished_requests_phases_add_up():
    """queue + inference = e2e and prefill + decode = inference, summed over requests."""
    r = storm()
    v, _ = end_values(r)
    finished = int(np.sum(~np.isnan(r.requests["finish_s"])))
    assert finished > 0 and r.events.num_rows > 0         # a run with preemptions
    for name in ("e2e_request_latency", "request_queue_time", "request_inference_time",
                 "request_prefill_time", "request_decode_time"):
        assert v[f"vllm:{name}_seconds_count"] == finished, name
    e2e, queue = v["vllm:e2e_request_latency_seconds_sum"], v["vllm:request_queue_time_seconds_sum"]
    infer = v["vllm:request_inference_time_seconds_sum"]
    assert queue + infer == pytest.approx(e2e, rel=1e-9)
    assert v["vllm:request_prefill_time_seconds_sum"] + v["vllm:request_decode_time_seconds_sum"] \
        == pytest.approx(infer, rel=1e-9)
    assert queue > 0                                    # the storm makes requests wait
    rq = r.requests
    done = ~np.isnan(rq["finish_s"])
    several = int(np.sum(done & (rq["generated_tokens"] > 1)))
    assert v["vllm:request_time_per_output_token_seconds_count"] == several


def test_first_scheduled_lies_between_arrival_and_first_token():
    rq = storm().requests
    started = ~np.isnan(rq["first_token_s"])
    assert (rq["first_scheduled_s"][started] >= rq["arrival_s"][started]).all()
    assert (rq["first_scheduled_s"][started] < rq["first_token_s"][started]).all()
    # the queue time is the wait before the first admission, not the pauses after it
    preempted = started & (rq["preemptions"] > 0)
    assert preempted.any()
    assert ((rq["first_scheduled_s"] - rq["arrival_s"])[preempted]
            < (rq["first_token_s"] - rq["arrival_s"])[preempted]).all()


def test_prompt_token_sources_add_up_to_the_prompt_tokens():
    wl = kvsim.Workload.poisson(1.5, 60, prompt=850, output=kvsim.Geometric(250), seed=0)
    r = kvsim.simulate(wl.with_shared_prefix(512), model="llama-2-7b", gpu="a40-48gb",
                       gpu_memory_utilization=0.6)          # a system prompt: cache hits
    v, _ = end_values(r)
    src = {s: v[f'vllm:prompt_tokens_by_source_total{{source="{s}"}}']
           for s in ("local_compute", "local_cache_hit", "external_kv_transfer")}
    assert sum(src.values()) == v["vllm:prompt_tokens_total"]
    assert src["local_cache_hit"] == v["vllm:prompt_tokens_cached_total"] > 0
    assert src["external_kv_transfer"] == 0
    assert v["vllm:prefix_cache_hits_total"] == src["local_cache_hit"]


def test_waiting_reasons_add_up_to_the_waiting_gauge():
    _, tab = end_values(storm())
    capacity = tab['vllm:num_requests_waiting_by_reason{reason="capacity"}']
    deferred = tab['vllm:num_requests_waiting_by_reason{reason="deferred"}']
    assert np.array_equal(capacity + deferred, tab["vllm:num_requests_waiting"])
    assert capacity.max() > 0 and not deferred.any()
    assert (tab['vllm:engine_sleep_state{sleep_state="awake"}'] == 1).all()


def test_iteration_tokens_observe_every_step():
    r = storm()
    v, _ = end_values(r)
    rq, tl = r.requests, r.timeline
    started = ~np.isnan(rq["first_token_s"])
    computed = int((rq["prompt_tokens"] - rq["prefix_hit_tokens"])[started].sum())
    assert v["vllm:iteration_tokens_total_count"] == tl.num_rows
    assert v["vllm:iteration_tokens_total_sum"] == computed + int(tl["emitted_tokens"].sum())
    assert v["vllm:request_params_n_count"] == int(started.sum())
    assert v['vllm:request_params_n_bucket{le="1.0"}'] == int(started.sum())   # n = 1


def test_an_answer_cut_by_max_tokens_finishes_for_length():
    r = kvsim.run_scenario("mission-1-storm", max_tokens=100)
    v, _ = end_values(r)
    rq = r.requests
    done = ~np.isnan(rq["finish_s"])
    capped = int(np.sum(done & (rq["generated_tokens"] >= 100)))
    assert 0 < capped < int(done.sum())
    assert v['vllm:request_success_total{finished_reason="length"}'] == capped
    assert v['vllm:request_success_total{finished_reason="stop"}'] == int(done.sum()) - capped
    assert v["vllm:request_params_max_tokens_count"] == int(done.sum())
    assert v['vllm:request_params_max_tokens_bucket{le="100.0"}'] == int(done.sum())
    # without max_tokens every answer ends at its own stop token
    s, _ = end_values(storm())
    assert s['vllm:request_success_total{finished_reason="length"}'] == 0


def test_the_010_series_keeps_its_own_families():
    names = {d.name for d in metric_defs("v1-0.10", 4096)}
    assert "vllm:time_per_prefill_token_request_seconds" in names
    assert "vllm:request_queue_time_seconds" in names
    assert "vllm:num_requests_waiting_by_reason" not in names
    assert "vllm:request_time_per_output_token_seconds" not in names
    success = next(d for d in metric_defs("v1-0.10", 4096) if d.name == "vllm:request_success")
    assert success.values == ("stop", "length", "abort")
