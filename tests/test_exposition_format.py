"""kvsim.observe.text_format: kvsim writes the bytes of ``/metrics`` itself.

The bytes must be the ones vLLM's exposition holds (prometheus_client 0.20-0.22,
the releases requirements.txt pins one of): every scenario's exposition is
compared with what the installed prometheus_client writes for the same
families, in both formats. The OpenMetrics comparison needs a client older than
0.23 (the pinned one); later releases write ``vllm_`` sample names, the trap
kvsim's own writer avoids (tests/test_prometheus_client_newest.py runs kvsim
against the newest release).
"""
from __future__ import annotations

from functools import cache
from importlib.metadata import version as installed_version

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_text

import kvsim
from kvsim.errors import KvsimError
from kvsim.observe.exposition import exposition
from kvsim.observe.series import run_metrics
from kvsim.observe.text_format import Family, format_value, openmetrics_text, prometheus_text

CLIENT = tuple(int(part) for part in installed_version("prometheus_client").split(".")[:2])
#: the first prometheus_client that writes `vllm:` samples as `vllm_` in OpenMetrics
CLIENT_TRAP_FROM = (0, 23)


@cache
def storm():
    return kvsim.run_scenario("mission-1-storm")


def client_bytes(families: list[Family], openmetrics: bool) -> str:
    """What the installed prometheus_client writes for the same families."""
    metrics = []
    for fam in families:
        metric = Metric(fam.name, fam.doc, fam.type)
        for sample in fam.samples:
            metric.add_sample(sample.name, sample.labels, sample.value)
        metrics.append(metric)

    class Fixed:
        def collect(self):
            return metrics

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Fixed())
    return (generate_openmetrics if openmetrics else generate_latest)(registry).decode("utf-8")


@pytest.mark.parametrize("version", ["v1", "v1-0.10", "v0"])
@pytest.mark.parametrize("openmetrics", [False, True], ids=["text-0.0.4", "openmetrics"])
def test_the_bytes_are_the_pinned_clients(version, openmetrics):
    if openmetrics and CLIENT >= CLIENT_TRAP_FROM:
        pytest.skip(f"prometheus_client {installed_version('prometheus_client')} writes vllm_ "
                    "sample names in OpenMetrics: the reference is a client older than 0.23 "
                    "(requirements.txt pins one)")
    rm = run_metrics(storm(), version=version)
    # an empty server, the storm under way, and the drained end
    for t in (0.0, 33.3, rm.end_s + 1.0):
        ours = exposition(rm, t, openmetrics=openmetrics)
        assert ours == client_bytes(rm.families(t), openmetrics), (version, t)


def test_openmetrics_keeps_the_colon_and_text_splits_created_out():
    om = exposition(storm(), 60.0, openmetrics=True)
    text = exposition(storm(), 60.0)
    assert om.endswith("# EOF\n") and "\nvllm_" not in om
    assert '\nvllm:num_preemptions_total{engine="0",model_name="llama-2-7b"} ' in om
    # OpenMetrics: the counter's _created right after its _total, under the family's TYPE
    block = om.split("# TYPE vllm:num_preemptions counter\n")[1].split("# HELP")[0]
    assert [line.split("{")[0] for line in block.splitlines()] == \
        ["vllm:num_preemptions_total", "vllm:num_preemptions_created"]
    # text 0.0.4: TYPE names the _total, and _created is a gauge family of its own
    assert "# TYPE vllm:num_preemptions_total counter\n" in text
    assert "# TYPE vllm:num_preemptions_created gauge\n" in text
    assert not text.rstrip().endswith("# EOF")


@pytest.mark.parametrize("value, expected", [
    (1.0, "1.0"), (0.05, "0.05"), (1e-05, "1e-05"), (0.0, "0.0"), (999999.0, "999999.0"),
    (1e6, "1e+06"), (1500000.0, "1.5e+06"), (123456789.0, "1.23456789e+08"),
    (12345678901.0, "1.2345678901e+10"), (-2500000.0, "-2.5e+06"), (1e22, "1e+22"),
    (float("inf"), "+Inf"), (float("-inf"), "-Inf"), (float("nan"), "NaN"),
])
def test_values_are_written_as_vllm_writes_them(value, expected):
    assert format_value(value) == expected


def test_escapes_round_trip_through_both_parsers():
    awkward = 'a "quoted" back\\slash\nand a newline'
    fam = Family("kv:odd", 'help with "quotes", a \\ and\na newline', "gauge")
    fam.add("kv:odd", {"zeta": awkward, "alpha": "plain"}, 2.5)
    text, om = prometheus_text([fam]), openmetrics_text([fam])
    assert '{alpha="plain",zeta=' in text           # labels sorted, no spaces
    for parsed in (next(parse_text(text)), next(parse_openmetrics(om))):
        assert parsed.samples[0].labels == {"zeta": awkward, "alpha": "plain"}
        assert parsed.samples[0].value == 2.5
        assert parsed.documentation == fam.doc


def test_an_info_family_is_a_gauge_in_text_and_info_in_openmetrics():
    fam = Family("vllm:cache_config", "config", "info")
    fam.add("vllm:cache_config_info", {"block_size": "16"}, 1.0)
    assert prometheus_text([fam]).splitlines()[:2] == \
        ["# HELP vllm:cache_config_info config", "# TYPE vllm:cache_config_info gauge"]
    assert openmetrics_text([fam]).splitlines()[1] == "# TYPE vllm:cache_config info"


@pytest.mark.parametrize("family, message", [
    (Family("kv:x", "d", "summary"), "type='summary' of family 'kv:x' is not supported: "
                                     "expected one of counter, gauge, histogram, info"),
    (Family("9lives", "d", "gauge"), "metric name '9lives' is not valid"),
])
def test_bad_families_are_refused_in_one_line(family, message):
    for writer in (prometheus_text, openmetrics_text):
        with pytest.raises(KvsimError) as err:
            writer([family])
        assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_bad_label_name_is_refused_in_one_line():
    fam = Family("kv:x", "d", "gauge")
    fam.add("kv:x", {"bad-label": "v"}, 1.0)
    with pytest.raises(KvsimError, match=r"^label name 'bad-label' of 'kv:x' is not valid"):
        prometheus_text([fam])
