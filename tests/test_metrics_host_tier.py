"""The host tier's metric families (``kv_offloading_size``): what vLLM 0.34.0's native
``OffloadingConnector`` registers (vllm/distributed/kv_transfer/kv_connector/v1/offloading/
metrics.py): the flat ``vllm:kv_offload_{load,store}_{bytes,time}`` counters and ``_size``
histograms, ``vllm:kv_offload_allocation_failure``, and the deprecated families by
``transfer_type`` it still keeps up to date, all registered before every other family.
Each copy counts when it is done (``result.host_tier``).
"""
from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

import kvsim
from kvsim.engine.blocks.host_tier import TierOp
from kvsim.observe.catalogue import KV_OFFLOAD_SIZE_BUCKETS, le_label, metric_defs
from kvsim.observe.exposition import exposition
from kvsim.observe.lint import lint_promql
from kvsim.observe.series import run_metrics, scrape


@cache
def long_day(size: float | None = 0.5) -> kvsim.SimResult:
    """The long-prompt day with a tier of ``size`` GiB: it loads, stores and drops stores."""
    opts = {} if size is None else {"kv_offloading_size": size}
    return kvsim.run_scenario("belgavi-long", **opts)


def _value(text: str, sample: str, **labels: str) -> float:
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise AssertionError(f"{sample} {labels} is not in the scrape")


def test_the_log_adds_up_to_the_tiers_totals():
    r = long_day()
    log, c = r.host_tier, r.counters
    assert log is not None and long_day(None).host_tier is None
    op = log["op"]
    assert int(log["blocks"][op == TierOp.STORE].sum()) == c["kv_offload_stored_blocks"]
    assert int(log["bytes"][op == TierOp.STORE].sum()) == c["kv_offload_store_bytes"]
    assert int(log["blocks"][op == TierOp.LOAD].sum()) == c["kv_offload_loaded_blocks"]
    assert int((op == TierOp.DROP).sum()) == c["kv_offload_allocation_failures"] > 0
    assert int(log["blocks"][op == TierOp.LOAD].sum()) * 16 == int(r.requests["loaded_tokens"].sum())
    link = kvsim.get_gpu(r.config["gpu"]).pcie_bytes_per_s
    copied = op != TierOp.DROP
    assert np.allclose(log["seconds"][copied], log["bytes"][copied] / link, rtol=1e-12)
    assert (log["seconds"][~copied] == 0).all()


def test_the_families_come_first_in_vllms_order_only_with_the_tier():
    names = [d.name for d in metric_defs("v1", host_tier=True)][:10]
    assert names == ["vllm:kv_offload_total_bytes", "vllm:kv_offload_total_time",
                     "vllm:kv_offload_size", "vllm:kv_offload_load_bytes",
                     "vllm:kv_offload_load_time", "vllm:kv_offload_load_size",
                     "vllm:kv_offload_store_bytes", "vllm:kv_offload_store_time",
                     "vllm:kv_offload_store_size", "vllm:kv_offload_allocation_failure"]
    assert metric_defs("v1", host_tier=True)[10:] == metric_defs("v1")
    assert metric_defs("v0", host_tier=True) == metric_defs("v0")
    assert "vllm:kv_offload_load_bytes_total" not in exposition(long_day(None), 60.0)
    sglang = kvsim.run_scenario("belgavi-long", admission="sglang", enable_hierarchical_cache=True)
    assert "vllm:kv_offload_" not in exposition(sglang, 60.0)   # SGLang's tier is not vLLM's


def test_a_scrape_at_the_end_counts_every_copy_as_the_log_does():
    r = long_day()
    log, op = r.host_tier, r.host_tier["op"]
    text = exposition(r, r.simulated_s + 1.0)
    for kind, direction, flat in ((TierOp.LOAD, "CPU_to_GPU", "load"),
                                  (TierOp.STORE, "GPU_to_CPU", "store")):
        done = op == kind
        nbytes, seconds = float(log["bytes"][done].sum()), float(log["seconds"][done].sum())
        assert _value(text, f"vllm:kv_offload_{flat}_bytes_total") == nbytes
        assert _value(text, "vllm:kv_offload_total_bytes_total", transfer_type=direction) == nbytes
        assert _value(text, f"vllm:kv_offload_{flat}_time_total") == pytest.approx(seconds)
        assert _value(text, "vllm:kv_offload_total_time_total", transfer_type=direction) == \
            pytest.approx(seconds)
        assert _value(text, f"vllm:kv_offload_{flat}_size_count") == int(done.sum())
        assert _value(text, "vllm:kv_offload_size_count", transfer_type=direction) == \
            int(done.sum())
        # a bucket counts the copies of at most its edge
        edge = KV_OFFLOAD_SIZE_BUCKETS[4]
        assert _value(text, f"vllm:kv_offload_{flat}_size_bucket", le=le_label(edge)) == \
            int((log["bytes"][done] <= edge).sum())
    assert _value(text, "vllm:kv_offload_allocation_failure_total") == \
        r.counters["kv_offload_allocation_failures"]


def test_counters_grow_when_copies_are_done():
    """Sampled every 15 s, the load counter steps up by exactly the loads done in between."""
    r = long_day()
    log = r.host_tier
    table = scrape(r, interval_s=15.0)
    times = np.asarray(table["t_s"])
    loads = log["op"] == TierOp.LOAD
    expected = [float(log["bytes"][loads & (log["t_s"] <= t)].sum()) for t in times]
    assert np.asarray(table["vllm:kv_offload_load_bytes_total"]).tolist() == expected
    assert np.asarray(table['vllm:kv_offload_total_bytes_total{transfer_type="CPU_to_GPU"}']
                      ).tolist() == expected
    assert expected[-1] > 0 and np.all(np.diff(expected) >= 0)


def test_the_cache_config_names_the_tier():
    """vLLM's CacheConfig carries ``kv_offloading_size`` (GiB) and the backend."""
    text = exposition(long_day(), 10.0)
    assert _value(text, "vllm:cache_config_info", kv_offloading_size="0.5",
                  kv_offloading_backend="native") == 1.0
    assert _value(exposition(long_day(None), 10.0), "vllm:cache_config_info",
                  kv_offloading_size="None") == 1.0


def test_the_scrape_parses_and_a_rule_on_the_families_lints_clean():
    rm = run_metrics(long_day())
    text = exposition(rm, 120.0)
    parsed = {f.name: f.type for f in text_string_to_metric_families(text)}
    assert parsed["vllm:kv_offload_load_bytes"] == "counter"
    assert parsed["vllm:kv_offload_size"] == "histogram"
    assert lint_promql("rate(vllm:kv_offload_load_bytes_total[5m])") == []
    found = lint_promql("rate(vllm:kv_offload_total_bytes_total[5m])")
    assert [f.kind for f in found] == ["deprecated-name"]


def test_the_cli_summary_says_what_the_tier_did():
    from kvsim.cli.simulate import summary_text
    r = long_day()
    line = summary_text(r).splitlines()[2]
    assert line == (f"# host tier: vLLM's kv_offloading_size=0.5 GiB, 64 blocks; "
                    f"{int(r.requests['loaded_tokens'].sum()):,} tokens loaded back, "
                    f"{r.counters['kv_offload_stored_blocks']:,} blocks stored, "
                    f"{r.counters['kv_offload_allocation_failures']:,} stores dropped for room "
                    "(over the whole run)")
    assert "host tier" not in summary_text(long_day(None))
