"""kvsim.book.charts: the data functions agree with kvsim, and the charts carry the book's theme."""
from __future__ import annotations

import re

import pytest

import kvsim
from kvsim.book import charts


def test_the_kv_dtype_is_the_models_own_unless_asked():
    assert charts.kv_dtype_label("llama-2-7b") == "fp16"
    assert charts.kv_dtype_label("llama-3.1-8b") == "bf16"
    assert charts.kv_dtype_label("llama-2-7b", "fp8") == "fp8"
    with pytest.raises(kvsim.KvsimError, match="kv_dtype='fp4'.*expected one of"):
        charts.kv_dtype_label("llama-2-7b", "fp4")


def test_bytes_per_token_rows_name_the_real_dtype_and_match_kvsim():
    rows = charts.bytes_per_token_data(["llama-2-7b", "llama-3.1-8b"])
    got = {(r["model"], r["kv_dtype"]): r["bytes"] for r in rows}
    assert got == {("llama-2-7b", "fp16"): 524_288, ("llama-2-7b", "fp8"): 262_144,
                   ("llama-3.1-8b", "bf16"): 131_072, ("llama-3.1-8b", "fp8"): 65_536}


def _spec(chart) -> dict:
    return chart.to_dict()


def test_every_chart_carries_the_theme_and_a_title():
    b = kvsim.kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.6)
    built = [
        charts.bytes_per_token_chart(charts.bytes_per_token_data(["llama-2-7b"]), title="T"),
        charts.budget_chart(charts.budget_data({"A40": b}), title="T"),
        charts.capacity_by_length_chart(
            charts.capacity_by_length_data({"fp16": b}, prompt_tokens=850, output_tokens=[250, 600]),
            marks=[("fp16", 250, "today")], title="T"),
        charts.capacity_chart(charts.capacity_grid(["llama-2-7b"], "a40-48gb", utilizations=[0.5, 0.6],
                                                   output_tokens=[250, 500], prompt_tokens=850),
                              here=("llama-2-7b", 0.6, "Belgavi"), title="T"),
    ]
    for chart in built:
        spec = _spec(chart)
        assert spec["config"] == charts.THEME and spec["title"]["text"] == "T"


def test_theme_text_is_at_least_12px_and_the_palette_is_okabe_ito():
    sizes = [v for part in charts.THEME.values() if isinstance(part, dict)
             for k, v in part.items() if "FontSize" in k or k == "fontSize"]
    assert sizes and min(sizes) >= charts.MIN_FONT_PX == 12
    assert charts.THEME["range"]["category"][:3] == ["#0072B2", "#E69F00", "#009E73"]


def test_you_are_here_marks_must_exist_in_the_data():
    b = kvsim.kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.6)
    rows = charts.capacity_by_length_data({"fp16": b}, prompt_tokens=850, output_tokens=[250])
    with pytest.raises(kvsim.KvsimError, match="mark"):
        charts.capacity_by_length_chart(rows, marks=[("fp16", 600, "x")])
    grid = charts.capacity_grid(["llama-2-7b"], "a40-48gb", utilizations=[0.6], output_tokens=[250],
                                prompt_tokens=850)
    with pytest.raises(kvsim.KvsimError, match="util"):
        charts.capacity_chart(grid, here=("llama-2-7b", 0.7, "x"))
    with pytest.raises(kvsim.KvsimError, match="model"):
        charts.capacity_chart(grid, here=("qwen2.5-7b", 0.6, "x"))


def test_capacity_by_length_follows_max_concurrent():
    b = kvsim.kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.6)
    rows = charts.capacity_by_length_data({"x": b}, prompt_tokens=850, output_tokens=[250, 600])
    assert [r["requests"] for r in rows] == [b.max_concurrent(1_100), b.max_concurrent(1_450)] == [25, 19]


def test_glue_numbers_records_portable_numbers_and_refuses_text(monkeypatch):
    import IPython.display

    from kvsim.book import notebook
    from kvsim.book.notebook import GLUE_MIME, glue_numbers, glued

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda data, **kw: shown.append((data, kw)))
    monkeypatch.setattr(notebook, "_GLUED", {})
    glue_numbers(a=1, b=2 / 3, **{"ch01-x": 1_735})
    # one record per number, in myst-nb's scrapbook format, floats to 6 significant digits
    assert [(d[GLUE_MIME], kw["metadata"]["scrapbook"]["name"]) for d, kw in shown] == [
        ("1", "a"), ("0.666667", "b"), ("1735", "ch01-x")]
    assert all(kw["raw"] for _, kw in shown)
    assert glued("b:.2f") == "0.67" and glued("ch01-x:,d") == "1,735" and glued("a") == "1"
    with pytest.raises(kvsim.KvsimError, match="glue_numbers\\(c='x'\\): expected a number"):
        glue_numbers(c="x")
    with pytest.raises(kvsim.KvsimError, match="no number named 'bb'.*did you mean b"):
        glued("bb:.2f")
    with pytest.raises(kvsim.KvsimError, match="format spec ',d' does not fit 0.666667"):
        glued("b:,d")


def test_chapter_timing_reads_the_notebooks_own_minutes(tmp_path, monkeypatch):
    import json

    from kvsim.book.notebook import chapter_timing

    timing = {"teaching": [{"section": "A", "minutes": 9}, {"section": "B", "minutes": 7}], "exercises": 25}
    (tmp_path / "ch09-x.ipynb").write_text(json.dumps({"cells": [], "metadata": {"kvbook": {"timing": timing}}}))
    (tmp_path / "ch09-y.ipynb").write_text(json.dumps({"cells": [], "metadata": {}}))
    monkeypatch.chdir(tmp_path)
    assert chapter_timing("ch09-x.ipynb") == "Teaching: 16 min · Exercises: 25 min"
    with pytest.raises(kvsim.KvsimError, match="no metadata.kvbook.timing"):
        chapter_timing("ch09-y.ipynb")
    with pytest.raises(kvsim.KvsimError, match="cannot read the notebook"):
        chapter_timing("ch09-z.ipynb")


# --- the timeline ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def storm():
    return kvsim.run_scenario("belgavi-long")


def test_timeline_bins_keep_peaks_and_every_preemption(storm):
    import numpy as np

    d = charts.timeline_data(storm, points=200)
    rows = d["series"]
    assert len(rows) == 200 and d["runs"] == ["run"]
    kv = np.asarray(storm.timeline["kv_blocks_used"]) * 100 / storm.total_blocks
    assert max(r["kv_pct"] for r in rows) == round(float(kv.max()), 2)
    assert max(r["waiting"] for r in rows) == int(np.asarray(storm.timeline["waiting"]).max())
    assert sum(t["preemptions"] for t in d["ticks"]) == storm.events.num_rows == int(np.asarray(storm.timeline["preemptions"]).sum())
    assert [r["t"] for r in rows] == sorted(r["t"] for r in rows)
    assert d == charts.timeline_data(storm, points=200)        # deterministic


def test_timeline_carries_state_through_empty_bins():
    reqs = [kvsim.Request(0.0, 850, 250), kvsim.Request(50.0, 850, 250)]
    r = kvsim.simulate(reqs, model="llama-2-7b", gpu="a40-48gb", gpu_memory_utilization=0.6)
    rows = charts.timeline_data(r, points=100)["series"]
    idle = [row for row in rows if 20 < row["t"] < 45]
    assert idle and all(row["kv_pct"] == idle[0]["kv_pct"] for row in idle)


def test_timeline_rejects_what_is_not_a_run():
    with pytest.raises(kvsim.KvsimError, match="SimResult"):
        charts.timeline_data({"a": 1})
    with pytest.raises(kvsim.KvsimError, match="points"):
        charts.timeline_data(kvsim.run_scenario("belgavi"), points=3)


def test_timeline_chart_compiles_in_vega_with_a_playhead_and_aligned_runs(storm):
    vlc = pytest.importorskip("vl_convert")
    import altair as alt

    calm = kvsim.run_scenario("belgavi")
    spec = charts.timeline_chart(charts.timeline_data({"calm": calm, "storm": storm}),
                                 title="Longer answers pin the cache").to_dict()
    assert spec["config"] == charts.THEME
    (param,) = spec["params"]
    assert param["name"] == "playhead" and param["bind"]["input"] == "range"
    assert len(spec["vconcat"]) == 4                    # two runs, each a KV panel and a queue strip
    domains = {json_dumps(p["layer"][0]["encoding"]["x"]["scale"]) for p in spec["vconcat"]}
    assert len(domains) == 1                            # one time axis for every panel
    svg = vlc.vegalite_to_svg(spec, vl_version=".".join(alt.VEGALITE_VERSION.split(".")[:2]))
    assert "<svg" in svg and "preemption" in svg


def test_timeline_draws_the_swapped_queue_only_when_there_is_one():
    v0 = kvsim.run_scenario("mission-2-slow-pcie")
    assert v0.summary()["swapped_out_bytes"] > 0
    spec = charts.timeline_chart(charts.timeline_data(v0), title="t").to_dict()
    assert '"swapped"' in json_dumps(spec)
    calm = charts.timeline_chart(charts.timeline_data(kvsim.run_scenario("belgavi")), title="t").to_dict()
    assert '"swapped"' not in json_dumps(calm["vconcat"][1])


def json_dumps(x) -> str:
    import json

    return json.dumps(x, sort_keys=True)


# --- charts follow the page's width (a phone's 390 px as well as a desktop's) ---------

def _vl_version() -> str:
    import altair as alt

    return ".".join(alt.VEGALITE_VERSION.split(".")[:2])


def _svg_texts(spec: dict) -> list[str]:
    """Every text line Vega draws for ``spec`` (through vl_convert, no browser)."""
    import html
    import re

    vlc = pytest.importorskip("vl_convert")
    svg = vlc.vegalite_to_svg(spec, vl_version=_vl_version())
    return [html.unescape(t) for t in re.findall(r">([^<>]+)</(?:text|tspan)>", svg)]


@pytest.fixture(scope="module")
def incident():
    return kvsim.run_scenario("incident-day")


def _page_charts(incident):
    """Chapter 1's and 4's chart functions, and the timeline, each at its default width."""
    b = kvsim.kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.6)
    grid = charts.capacity_grid(["llama-2-7b", "llama-3.1-8b"], "a40-48gb",
                                utilizations=[0.5, 0.6], output_tokens=[250, 500],
                                prompt_tokens=850)
    spans = [dict(rule="VLLMKVCachePinned", start=21.75, end=25.75, label="from minute 21.8"),
             dict(rule="VLLMKVCacheNearFull", start=None, end=None, label="never fires")]
    return {
        "budget_chart": lambda **kw: charts.budget_chart(charts.budget_data({"A40": b}),
                                                         title="T", **kw),
        "capacity_chart": lambda **kw: charts.capacity_chart(grid, title="T", **kw),
        "spans_chart": lambda **kw: charts.spans_chart(spans, title="T", marks=[15, 25], **kw),
        "histogram_chart": lambda **kw: charts.histogram_chart(
            (0.1, 0.2), [5, 7, 10], marks={"mean": 0.12}, title="T", **kw),
        "work_rate_chart": lambda **kw: charts.work_rate_chart(
            charts.work_rate_data(incident), title="T", **kw),
        "timeline_chart": lambda **kw: charts.timeline_chart(charts.timeline_data(incident),
                                                             title="T", **kw),
    }


def _collect(spec, pick) -> list:
    """Every ``pick(node)`` that is not None, over the spec's dicts, depth first."""
    found = []
    if isinstance(spec, dict):
        item = pick(spec)
        if item is not None:
            found.append(item)
        for value in spec.values():
            found += _collect(value, pick)
    elif isinstance(spec, list):
        for value in spec:
            found += _collect(value, pick)
    return found


def _widths(spec) -> list:
    return _collect(spec, lambda d: d.get("width"))


def test_chapter_1_and_4_charts_follow_the_page_and_a_fixed_width_still_holds(incident):
    for name, build in _page_charts(incident).items():
        spec = build().to_dict()
        assert set(_widths(spec)) == {"container"}, name
        assert spec["autosize"] == {"type": "fit-x", "contains": "padding"}, name
        fixed = build(width=320).to_dict()
        assert set(_widths(fixed)) == {320} and "autosize" not in fixed, name
        with pytest.raises(kvsim.KvsimError, match=f"{name}'s width in pixels"):
            build(width=2_000)


def test_budget_and_spans_name_each_bar_in_its_label_not_on_an_axis():
    b = kvsim.kv_budget("a40-48gb", "llama-2-7b", gpu_memory_utilization=0.6)
    rows = charts.budget_data({"A40": b})
    texts = _svg_texts(charts.budget_chart(rows, title="T").to_dict())
    kv = next(r for r in rows if r["part"] == "KV cache")
    assert f"KV cache: {kv['gb']:,.2f} GB = {kv['gib']:,.2f} GiB" in texts
    spans = [dict(rule="VLLMKVCachePinned", start=21.75, end=25.75, label="from minute 21.8"),
             dict(rule="VLLMKVCacheNearFull", start=None, end=None, label="never fires")]
    texts = _svg_texts(charts.spans_chart(spans, title="T").to_dict())
    assert {"VLLMKVCachePinned: from minute 21.8", "VLLMKVCacheNearFull: never fires"} <= set(texts)
    assert "VLLMKVCachePinned" not in texts                 # no axis label beside the bars


def test_capacity_chart_stacks_a_panel_per_model_under_one_slider():
    models = ["llama-2-7b", "llama-3.1-8b", "mistral-7b"]
    grid = charts.capacity_grid(models, "a40-48gb", utilizations=[0.5, 0.6],
                                output_tokens=[250, 500], prompt_tokens=850)
    spec = charts.capacity_chart(grid, here=("llama-2-7b", 0.6, "Belgavi"), title="T").to_dict()
    assert [p["title"]["text"] for p in spec["vconcat"]] == models
    (param,) = spec["params"]
    assert param["name"] == "answer" and param["bind"]["input"] == "range"
    texts = _svg_texts(spec)
    assert texts.count("Belgavi") == 1                      # circled in its own model's panel
    assert texts.count("gpu_memory_utilization (share)") == 1   # the shared axis named once
    # one y scale: a panel that fits several times the requests is drawn several times higher
    assert spec["resolve"]["scale"]["y"] == "shared"
    wrapped = charts.capacity_chart(grid, title="T", width=220, columns=2).to_dict()
    assert wrapped["columns"] == 2 and len(wrapped["concat"]) == 3


def test_histogram_labels_a_mark_on_the_side_with_room_and_ticks_each_decade():
    spec = charts.histogram_chart((0.01, 0.1, 1.0, 10.0), [100, 150, 160, 161, 161],
                                  marks={"mean": 0.02, "longest": 8.0}, title="T").to_dict()
    labels = {spec["datasets"][layer["data"]["name"]][0]["name"]: layer["mark"]
              for layer in spec["layer"] if layer["mark"]["type"] == "text"}
    assert labels["mean 20"]["align"] == "left" and labels["longest 8,000"]["align"] == "right"
    bars = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "rect")
    assert bars["encoding"]["x"]["axis"]["values"] == [1.0, 10.0, 100.0, 1_000.0, 10_000.0]


def test_the_alert_readout_breaks_after_its_commas_only_on_a_narrow_plot(incident):
    grid = charts.alert_rule_data(incident, "preemptions", thresholds=[0], windows_min=[5],
                                  fors_min=[10])
    spec = charts.alert_rule_chart(grid, title="T", interactive=False).to_dict()
    readout = grid["readouts"][0]["text"]
    assert re.fullmatch(r"fires at [\d.]+ min, [\d.]+ min after the first preemption; "
                        r"resolves at [\d.]+ min", readout), readout
    fires, resolves = readout.split("; ")
    at, after = fires.split(", ")
    narrow = _svg_texts(spec)                                # Vega's default view: 300 px
    assert [at + ",", after, resolves] == [t for t in narrow if t in (at + ",", after, resolves)]
    assert readout not in narrow and fires not in narrow
    wide = _svg_texts(dict(spec, width=charts.alert_rule.READOUT_SPLIT_PX + 160))
    assert readout.split("; ") == [t for t in wide if t.startswith(("fires", "resolves"))]


def test_the_playhead_text_turns_left_of_its_line_past_the_runs_middle(incident):
    import json

    data = charts.timeline_data(incident)
    spec = charts.timeline_chart(data, title="T").to_dict()
    half = round(float(data["t_end"]) / 2, 3)
    aligns = {json.dumps(m.get("align"), sort_keys=True) for m in _marks(spec)
              if m.get("type") == "text" and isinstance(m.get("align"), dict)}
    assert aligns == {json.dumps({"expr": f"playhead > {half} ? 'right' : 'left'"})}


def _marks(spec) -> list[dict]:
    return _collect(spec, lambda d: d["mark"] if isinstance(d.get("mark"), dict) else None)
