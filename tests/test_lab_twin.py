"""Chapter 5's lab without a kernel: the twin the site shows is kvsim's runs, bin for bin.

The committed notebook's twin (its saved chart spec, what the static site draws) is read
back and compared with fresh kvsim runs of sampled grid points: the KV blocks, the waiting
and swapped counts of every 2-second bin, the preemption ticks, the pool and the printed
on-call numbers. A reference binning written here (not :func:`kvsim.book.lab_charts.twin_run`)
says what each bin must hold. The chart's expressions are checked by drawing it in Vega
(vl-convert) with the drop-downs and the playhead set. Mission 3's chart is checked the
same way: with the FP8 cache the mission's own answer passes, with FP16 it fails. The
browser tests in tests/test_site.py move the same controls on the built page.
"""
from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter

import pytest

import kvsim
from kvsim import lab
from kvsim.book import lab_charts
from kvsim.lab import missions

from notebook_helpers import BOOK, read_chapter

NOTEBOOK = BOOK / "ch05-belgavis-book-store.ipynb"

#: Grid points compared with a fresh run: every mode, every day, headroom on and off.
SAMPLES = [(0.60, 600, 0.05, "v0-swap", 6), (0.80, 400, 0.0, "v1-recompute", 5),
           (0.70, 250, 0.10, "v0-recompute", 7), (0.60, 250, 0.0, "v0-swap", 5)]


def reference_bins(result, dt: float) -> dict:
    """Per ``dt``-second bin (bin i ends at (i + 1) * dt), the peak of each timeline column
    over the steps that end in it, an empty bin carrying the one before (0 at first), and
    the preemption events per bin."""
    t = [float(x) for x in result.timeline["t_s"]]
    n = math.ceil(float(result.simulated_s) / dt - 1e-9)

    def bin_of(x):
        return min(n - 1, max(0, math.ceil(x / dt - 1e-9) - 1))
    out = {}
    for name, col in (("kv", "kv_blocks_used"), ("waiting", "waiting"), ("swapped", "swapped")):
        peak = [None] * n
        for x, v in zip(t, result.timeline[col], strict=True):
            b = bin_of(x)
            peak[b] = int(v) if peak[b] is None else max(peak[b], int(v))
        last = 0
        for i in range(n):
            peak[i] = last if peak[i] is None else peak[i]
            last = peak[i]
        out[name] = peak
    out["ticks"] = dict(Counter(bin_of(float(x)) for x in result.events["t_s"]))
    return out


def _specs(cell) -> list[dict]:
    decoder = json.JSONDecoder()
    out = []
    for o in cell.get("outputs", []):
        html = "".join(o.get("data", {}).get("text/html", ""))
        if "altair-viz-" in html:
            i = html.index("})(", html.index("function(spec, embedOpt)")) + 3
            out.append(decoder.raw_decode(html, i)[0])
    return out


def _cell_spec(needle: str) -> dict:
    nb = read_chapter(NOTEBOOK)
    cells = [c for c in nb.cells if c.cell_type == "code" and needle in c.source]
    assert len(cells) == 1, f"{len(cells)} cells of chapter 5 call {needle}"
    (spec,) = _specs(cells[0])
    return spec


@pytest.fixture(scope="module")
def committed():
    """The committed twin: its spec and its rows by grid point."""
    spec = _cell_spec("lab_charts.lab_twin_chart(")
    (rows,) = [v for v in spec["datasets"].values() if v and "kv" in v[0]]
    by_point = {(r["util"], r["answers"], r["headroom"], r["mode"], r["seed"]): r for r in rows}
    assert len(by_point) == len(rows)
    return spec, by_point


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",")] if text else []


def test_the_committed_twin_holds_every_point_of_the_grid_and_binds_each_lever(committed):
    spec, rows = committed
    assert set(rows) == set(itertools.product(*lab.TWIN_GRID.values()))
    assert len(lab.TWIN_GRID["seed"]) >= 3                      # several days, not one
    params = {p["name"]: p for p in spec["params"]}
    for name, grid in zip(("util", "answers", "headroom", "mode", "seed"), lab.TWIN_GRID.values(),
                          strict=True):
        assert params[name]["bind"]["input"] == "select", name
        assert params[name]["bind"]["options"] == list(grid), name
    assert params["mode"]["bind"]["labels"] == [lab_charts.TWIN_MODE_LABELS[m]
                                                for m in lab.TWIN_GRID["preemption"]]
    # the playhead moves in whole bins and reads in whole seconds
    head = params["playhead"]["bind"]
    assert head["input"] == "range" and head["step"] == lab_charts.TWIN_BIN_S == head["min"]
    assert all(isinstance(head[k], int) for k in ("min", "max", "step"))
    assert isinstance(params["playhead"]["value"], int)
    assert head["name"].strip() == "playhead (s)"
    # the headroom lever is mission 4's, on its grid
    assert set(lab.TWIN_GRID["watermark"]) <= set(missions.get_mission(4).lever("watermark").grid)


@pytest.mark.parametrize("point", SAMPLES, ids=lambda p: "-".join(map(str, p)))
def test_the_committed_twin_is_kvsims_run_bin_for_bin(committed, point):
    _, rows = committed
    row = rows[point]
    fresh = lab.run_lab(**lab.twin_settings(point))
    ref = reference_bins(fresh, lab_charts.TWIN_BIN_S)
    n = len(_ints(row["kv"]))
    pad = n - len(ref["kv"])
    assert pad >= 0
    for name in ("kv", "waiting", "swapped"):
        want = ref[name] + [ref[name][-1]] * pad
        got = _ints(row[name]) or [0] * n           # an empty swapped column: no swap at all
        assert got == want, f"{point}: {name} differs from a fresh kvsim run"
    assert row["pool"] == fresh.total_blocks
    ticks = dict(zip(_ints(row["tick_bin"]), _ints(row["tick_n"]), strict=True))
    assert ticks == ref["ticks"]
    assert sum(ticks.values()) == fresh.events.num_rows == int(sum(fresh.timeline["preemptions"]))
    # the printed numbers are the run's on-call numbers, wrapped
    lines = [f"day (seed) {point[-1]}, after the warm-up:"] + lab.oncall_text(lab.oncall_numbers(fresh))
    assert row["text"].split() == " ".join(lines).split()
    assert all(len(line) <= lab_charts.TWIN_TEXT_CHARS for line in row["text"].split("\n"))
    if point[3] == "v0-swap" and fresh.summary()["swapped_out_bytes"] > 0:
        assert max(_ints(row["swapped"])) == int(max(fresh.timeline["swapped"])) > 0
        assert "swapped out" in row["text"]
    if point[3] != "v0-swap":
        assert row["swapped"] == ""


def test_twin_run_keeps_the_bins_and_the_pager_numbers_of_a_run():
    r = lab.run_lab(engine="v0", preemption_mode="swap", output_mean=600, seed=5)
    k = lab_charts.twin_run(r)
    ref = reference_bins(r, lab_charts.TWIN_BIN_S)
    assert (k["kv"], k["waiting"], k["swapped"]) == (ref["kv"], ref["waiting"], ref["swapped"])
    assert dict(zip(k["tick_bin"], k["tick_n"], strict=True)) == ref["ticks"]
    assert k["oncall"] == lab.oncall_numbers(r) and k["pool"] == r.total_blocks
    assert k["warmup_s"] == lab.LAB_BASE["warmup_s"]
    # the same through a sub-grid of twin_runs, with the reduction where the run was made
    grid = dict(lab.TWIN_GRID, gpu_memory_utilization=(0.60,), output_mean=(600,),
                watermark=(0.0,), preemption=("v0-swap",), seed=(5,))
    assert lab.twin_runs(grid=grid, each=lab_charts.twin_run) == {(0.60, 600, 0.0, "v0-swap", 5): k}


def test_twin_runs_refuses_a_grid_it_does_not_know():
    with pytest.raises(kvsim.KvsimError, match="expected gpu_memory_utilization"):
        lab.twin_runs(grid={"gpu_memory_utilization": (0.6,)})
    with pytest.raises(kvsim.KvsimError, match="preemption"):
        lab.twin_runs(grid=dict(lab.TWIN_GRID, preemption=("v1-swap",)))


def _vega_text(spec: dict, **values) -> list[str]:
    """The chart drawn by Vega (vl-convert) with its parameters at ``values``: every text."""
    vlc = pytest.importorskip("vl_convert")
    import altair as alt

    spec = json.loads(json.dumps(spec))
    for p in spec["params"]:
        if p["name"] in values:
            p["value"] = values[p["name"]]
    svg = vlc.vegalite_to_svg(spec, vl_version=".".join(alt.VEGALITE_VERSION.split(".")[:2]))
    texts = []
    for m in re.finditer(r"<text[^>]*>(.*?)</text>", svg, flags=re.S):
        parts = re.findall(r"<tspan[^>]*>(.*?)</tspan>", m.group(1), flags=re.S)
        texts.append("\n".join(parts) if parts else m.group(1))
    import html
    return [html.unescape(t) for t in texts]


def test_the_twin_chart_reads_the_chosen_run_at_the_playhead():
    points = SAMPLES[:2]
    runs = {p: lab.run_lab(**lab.twin_settings(p)) for p in points}
    data = lab_charts.lab_twin_data(runs)
    spec = lab_charts.lab_twin_chart(data, title="t").to_dict()
    util, answers, headroom, mode, seed = points[0]
    ref = reference_bins(runs[points[0]], lab_charts.TWIN_BIN_S)
    at = 180
    i = at // lab_charts.TWIN_BIN_S - 1
    texts = _vega_text(spec, util=util, answers=answers, headroom=headroom, mode=mode,
                       seed=seed, playhead=at)
    pool = runs[points[0]].total_blocks
    assert f"{at} s: up to {ref['kv'][i]:,} of {pool:,} blocks in use" in texts
    assert (f"up to {ref['waiting'][i]:,} waiting, {ref['swapped'][i]:,} swapped to CPU"
            in texts)
    assert f"pool: {pool:,} blocks" in texts
    assert any(t.startswith(f"day (seed) {seed},") for t in texts)
    # the other run: no swap, so the readout names none
    util, answers, headroom, mode, seed = points[1]
    ref = reference_bins(runs[points[1]], lab_charts.TWIN_BIN_S)
    texts = _vega_text(spec, util=util, answers=answers, headroom=headroom, mode=mode,
                       seed=seed, playhead=60)
    assert f"up to {ref['waiting'][60 // lab_charts.TWIN_BIN_S - 1]:,} waiting" in texts
    assert f"60 s: up to {ref['kv'][29]:,} of {runs[points[1]].total_blocks:,} blocks in use" in texts


def test_the_twin_chart_refuses_a_start_off_its_grid():
    data = lab_charts.lab_twin_data({SAMPLES[1]: lab.run_lab(**lab.twin_settings(SAMPLES[1]))})
    with pytest.raises(kvsim.KvsimError, match="not on the twin's grid"):
        lab_charts.lab_twin_chart(data, title="t", start={"seed": 9})
    with pytest.raises(kvsim.KvsimError, match="not a lever"):
        lab_charts.lab_twin_chart(data, title="t", start={"warp": 1})
    with pytest.raises(kvsim.KvsimError, match="expected \\(gpu_memory_utilization"):
        lab_charts.lab_twin_data({"a": lab_charts.twin_run(lab.run_lab())})


# --- mission 3: the FP8 lever on the site -------------------------------------------------

def test_mission_3s_committed_chart_passes_the_answer_under_fp8_and_not_fp16():
    spec = _cell_spec("lab_charts.mission_band_data(3,")
    params = {p["name"]: p for p in spec["params"]}
    view = params["view_3"]["bind"]
    assert view["input"] == "select" and view["options"] == ["fp16", "fp8"]
    assert params["view_3"]["value"] == missions.get_mission(3).lever("kv_dtype").start
    assert {"guess_3", "reveal_3"} <= set(params)
    expert = missions.expert_settings(3)
    assert expert["kv_dtype"] == "fp8"
    answer = expert["gpu_memory_utilization"]
    guess = {"guess_3": answer, "reveal_3": True}
    assert f"your guess {answer:.2f} passes on every day" in _vega_text(
        spec, view_3="fp8", **guess)
    assert f"your guess {answer:.2f} fails on some day" in _vega_text(
        spec, view_3="fp16", **guess)
    # before the box is ticked, no verdict and no band
    texts = _vega_text(spec, view_3="fp8", guess_3=answer)
    assert "guess with the slider, then tick the box" in texts
    assert not any(t.startswith("passes:") for t in texts)


def test_mission_band_data_keeps_every_value_of_by():
    m = missions.get_mission(3)
    grid = [dict(max_tokens=cap, kv_dtype=d, gpu_memory_utilization=u, passes=(d == "fp8"),
                 max_num_seqs=missions.expert_settings(3)["max_num_seqs"],
                 stars=1 if d == "fp8" else 0,
                 **{f"{k}_worst": 0.5 * limit for k, limit, *_ in m.slo.items()})
            for cap in (400, 500) for d in ("fp16", "fp8") for u in (0.60, 0.65)]
    rows = lab_charts.mission_band_data(3, grid, others={"max_tokens": 400}, by="kv_dtype")
    assert {(r["by"], r["x"]) for r in rows} == {(d, u) for d in ("fp16", "fp8") for u in (0.60, 0.65)}
    assert len(rows) == 4 * len(list(m.slo.items()))
    spec = lab_charts.mission_band_chart(rows, 3, title="t").to_dict()
    assert "with kv_dtype fp16, for gpu_memory_utilization nowhere on the grid" in spec["description"]
    assert "with kv_dtype fp8, for gpu_memory_utilization 0.6 to 0.65" in spec["description"]
    with pytest.raises(kvsim.KvsimError, match="is the resource"):
        lab_charts.mission_band_data(3, grid, by="gpu_memory_utilization")
    with pytest.raises(kvsim.KvsimError, match="not a lever"):
        lab_charts.mission_band_data(3, grid, by="warp")
