"""Chapter 3's charts: the data come from kvsim.engine.costs, the charts follow the theme."""
from __future__ import annotations

import pytest

import kvsim
from kvsim.book import charts
from kvsim.engine.costs import CostModel, crossover_tokens, recompute_time_s, swap_round_trip_s

LENGTHS = [256, 1024, 4096, 16384, 65536]
LINKS = {"Gen4": 25e9, "shared": 4e9}


@pytest.fixture(scope="module")
def rows():
    return charts.swap_recompute_data("llama-3.1-8b", ["a40-48gb", "h100-80gb"], links=LINKS,
                                      block_sizes=[16, 64], lengths=LENGTHS)


def test_curves_are_the_cost_model(rows):
    for r in rows:
        if r["kind"] != "curve":
            continue
        if r["mode"] == "recompute":
            assert r["link"] == "any" and r["bs"] == 0
            assert r["ms"] == pytest.approx(1e3 * recompute_time_s(r["n"], "llama-3.1-8b", r["gpu"]),
                                            abs=1e-3)
        else:
            want = swap_round_trip_s(r["n"], "llama-3.1-8b", r["gpu"],
                                     CostModel(pcie_bytes_per_s=LINKS[r["link"]]), block_size=r["bs"])
            assert r["ms"] == pytest.approx(1e3 * want, abs=1e-3)
    assert sum(r["kind"] == "curve" for r in rows) == 2 * len(LENGTHS) * (1 + 2 * 2)


def test_each_setting_has_its_crossings_or_a_verdict(rows):
    for g in ("a40-48gb", "h100-80gb"):
        for link, bw in LINKS.items():
            for bs in (16, 64):
                mine = [r for r in rows if r["kind"] == "cross" and (r["gpu"], r["link"], r["bs"])
                        == (g, link, bs)]
                cross = crossover_tokens("llama-3.1-8b", g, CostModel(pcie_bytes_per_s=bw),
                                         block_size=bs, min_tokens=256, max_tokens=65536)
                if cross:
                    assert [r["n"] for r in mine] == cross
                else:
                    assert len(mine) == 1 and mine[0]["n"] is None
                    assert "cheaper at every length" in mine[0]["label"]
    a40 = [r for r in rows if r["kind"] == "cross" and r["gpu"] == "a40-48gb" and r["link"] == "Gen4"]
    assert all(r["label"] == "swap is cheaper at every length" for r in a40)


def test_ratio_rows_are_recompute_over_swap(rows):
    ratio = [r for r in rows if r["kind"] == "ratio"]
    assert len(ratio) == 2 * len(LENGTHS) * 2 * 2
    for r in ratio:
        want = recompute_time_s(r["n"], "llama-3.1-8b", r["gpu"]) / swap_round_trip_s(
            r["n"], "llama-3.1-8b", r["gpu"], CostModel(pcie_bytes_per_s=LINKS[r["link"]]),
            block_size=r["bs"])
        assert r["ratio"] == pytest.approx(want, rel=1e-3)


def test_the_static_twin_binds_link_and_block_size(rows):
    spec = charts.swap_recompute_chart(rows, interactive=True, title="t").to_dict()
    names = {p["name"] for p in spec.get("params", [])}
    assert names == {"link", "bs"}
    assert spec["config"] == charts.THEME
    assert "format(datum.value / 1024, 'd') + 'K'" in str(spec)      # 1K, 4K, 16K, 64K
    fixed = charts.swap_recompute_chart(rows, title="t", link="shared", block_size=64).to_dict()
    assert not fixed.get("params") and fixed["width"] == "container"
    assert "datum.link === 'shared'" in str(fixed) or "'shared'" in str(fixed)


def test_swap_recompute_chart_rejects_what_the_rows_lack(rows):
    with pytest.raises(kvsim.KvsimError, match="link='Gen5' is not in the rows"):
        charts.swap_recompute_chart(rows, title="t", link="Gen5")
    with pytest.raises(kvsim.KvsimError, match="block_size=32 is not in the rows"):
        charts.swap_recompute_chart(rows, title="t", block_size=32)
    with pytest.raises(kvsim.KvsimError, match="no ratio rows"):
        charts.swap_recompute_chart([r for r in rows if r["kind"] != "ratio"], title="t")
    with pytest.raises(kvsim.KvsimError, match=r"links\['x'\]"):
        charts.swap_recompute_data("llama-3.1-8b", ["a40-48gb"], links={"x": -1.0},
                                   block_sizes=[16], lengths=[256])
    with pytest.raises(kvsim.KvsimError, match="must not be empty"):
        charts.swap_recompute_data("llama-3.1-8b", ["a40-48gb"], links={}, block_sizes=[16],
                                   lengths=[256])


def test_block_size_data_is_the_study_and_the_chart_marks_the_default():
    rows = charts.block_size_data("opt-13b", "a100-80gb", tokens=1024, block_sizes=[1, 16, 256])
    rc = {r["bs"]: r["ms"] for r in rows if r["mode"] == "recompute"}
    sw = {r["bs"]: r["ms"] for r in rows if r["mode"] != "recompute"}
    assert len(set(rc.values())) == 1 and sw[1] > sw[16] > sw[256]
    assert sw[16] == pytest.approx(1e3 * swap_round_trip_s(1024, "opt-13b", "a100-80gb"), abs=1e-3)
    spec = charts.block_size_chart(rows, title="t", here=16).to_dict()
    assert "vLLM's default, 16" in str(spec)
    with pytest.raises(kvsim.KvsimError, match="here=8 is not a block size"):
        charts.block_size_chart(rows, title="t", here=8)
    with pytest.raises(kvsim.KvsimError, match="block_sizes=\\[\\] is empty"):
        charts.block_size_data("opt-13b", "a100-80gb", tokens=1024, block_sizes=[])


def test_spread_data_is_median_and_range_over_seeds():
    rows = charts.spread_data({(16, "swap"): [3.0, 1.0, 2.0, 10.0, 4.0], ("x", "y"): [5.0]})
    assert rows[0] == {"case": 16, "series": "swap", "median": 3.0, "lo": 1.0, "hi": 10.0,
                       "seeds": 5}
    with pytest.raises(kvsim.KvsimError, match="expected one finite number per seed"):
        charts.spread_data({("a", "b"): [1.0, float("nan")]})
    with pytest.raises(kvsim.KvsimError, match="is not a \\(case, series\\) pair"):
        charts.spread_data({"a": [1.0]})
    with pytest.raises(kvsim.KvsimError, match="is empty"):
        charts.spread_data({})


def test_spread_chart_draws_numeric_and_categorical_cases_in_the_theme():
    num = charts.spread_data({(b, m): [1.0, 2.0] for b in (8, 16) for m in ("swap", "recompute")})
    spec = charts.spread_chart(num, title="t", x_title="block (tokens)", y_title="ms (ms)",
                               log_x=True).to_dict()
    assert spec["config"] == charts.THEME and "log" in str(spec)
    assert "indexof(['swap', 'recompute'], datum.series)" in str(spec)   # side by side
    cat = charts.spread_data({("a", "p"): [1.0], ("b", "p"): [2.0]})
    spec = charts.spread_chart(cat, title="t", x_title="case", y_title="ms (ms)").to_dict()
    assert "'type': 'nominal'" in str(spec)
    assert spec["layer"][0]["encoding"]["y"]["field"] == "case"        # one row per case
