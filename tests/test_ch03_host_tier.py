"""Chapter 3's host-tier section: its runs, its band prediction, its exercise and its chart.

The section's claims are pinned here against fresh kvsim runs (five seeds each, the run cache
makes them cheap): what a tier of each size does to Belgavi's storm, where a tier pays (shared
documents it holds, a fast link) and where it adds nothing (a tier too small, an overload's
tail, a slow link), each sign beyond the seeds' spread, seed by seed.
"""
from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest

from kvsim.book import charts, checks_site, exercises
from kvsim.book.charts.host_tier import (
    TIER_METRICS,
    host_tier_chart,
    host_tier_data,
    host_tier_spread,
    size_label,
)
from kvsim.book.exercises import ch03, ch03_tier
from kvsim.engine.blocks.host_tier import host_tier_blocks
from kvsim.errors import KvsimError
from kvsim.model.memory import kv_bytes_per_token
from kvsim.units import GiB

from notebook_helpers import BOOK, glued, read_chapter

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def storm():
    return ch03_tier.storm_rows()


@pytest.fixture(scope="module")
def documents():
    return ch03_tier.documents_rows()


def test_the_section_runs_the_chapters_seeds():
    assert ch03_tier.SEEDS == ch03.SEEDS


def test_a_tier_turns_the_storms_recomputes_into_loads_beyond_the_seeds_spread(storm):
    spread = {r["size"]: r for r in host_tier_spread(storm)}
    off, big = spread["off"], spread[size_label(ch03_tier.PREDICT_SIZE)]
    assert big["recomputed_tokens_hi"] < off["recomputed_tokens_lo"] / 4
    assert big["loaded_tokens_lo"] > 0 and off["loaded_tokens_hi"] == 0
    cuts = ch03_tier.recompute_cut(ch03_tier.PREDICT_SIZE, storm)
    assert len(cuts) == len(ch03_tier.SEEDS) and min(cuts) > 75


def test_a_quarter_gib_tier_is_smaller_than_one_prompt_and_drops_its_stores(storm):
    blocks, _ = host_tier_blocks(GiB // 4, 16 * kv_bytes_per_token("llama-2-7b"))
    assert blocks < 850 // 16
    quarter = [r for r in storm if r["size"] == "0.25"]
    assert all(r["dropped_stores"] > 100 for r in quarter)
    cuts = ch03_tier.recompute_cut(0.25, storm)
    assert max(cuts) < 10                                   # next to nothing saved


def test_the_overloads_tail_does_not_move_beyond_the_days_spread(storm):
    moves = ch03_tier.paired_change(storm, "ttft_p99_s", "off", size_label(ch03_tier.PREDICT_SIZE))
    spread = {r["size"]: r for r in host_tier_spread(storm)}["off"]
    day_spread = 100 * (spread["ttft_p99_s_hi"] / spread["ttft_p99_s_lo"] - 1)
    assert max(abs(m) for m in moves) < 5 < day_spread


def test_what_stays_recomputed_is_about_the_answers_generated_before_preemption(storm):
    big = [r for r in storm if r["size"] == size_label(ch03_tier.PREDICT_SIZE)]
    per_preemption = [r["recomputed_tokens"] / r["preemptions"] for r in big]
    # 600-token answers on average: far less than a prompt's 850, far more than its partial block
    assert all(850 % 16 < p < 850 / 2 for p in per_preemption)


def test_documents_pay_only_when_the_tier_holds_them_all_and_the_link_is_fast(documents):
    fast = ch03_tier.paired_change(documents, "ttft_p50_s", "off", "24")
    small = ch03_tier.paired_change(documents, "ttft_p50_s", "off", "16")
    slow = ch03_tier.paired_change(documents, "ttft_p50_s", "off", "24 (4 GB/s)")
    assert max(fast) < -30                                  # every seed, far beyond the rest
    assert max(abs(x) for x in small) < 5
    assert min(slow) > 0                                    # worse than no tier, every seed
    held_bytes = ch03_tier.DOCUMENTS * ch03_tier.DOCUMENT_TOKENS * kv_bytes_per_token("llama-2-7b")
    assert 16 * GiB < held_bytes < 24 * GiB


def test_unknown_sizes_and_cases_are_named_in_one_line(storm):
    with pytest.raises(ValueError, match=r"size_gib=3\.0 is not one of the storm's sizes"):
        ch03_tier.recompute_cut(3.0, storm)
    with pytest.raises(ValueError, match=r"case '64' is not in the rows"):
        ch03_tier.paired_change(storm, "ttft_p99_s", "off", "64")
    with pytest.raises(KvsimError, match=r"host_tier_data: sizes_gib=\[\]"):
        host_tier_data("belgavi-long", [], [0])
    with pytest.raises(KvsimError, match="host_tier_spread: rows=\\[\\] is empty"):
        host_tier_spread([])


def test_the_spread_is_the_median_and_range_of_each_size(storm):
    spread = host_tier_spread(storm)
    assert [r["size"] for r in spread] == [size_label(s) for s in ch03_tier.STORM_SIZES]
    for row in spread:
        runs = [r for r in storm if r["size"] == row["size"]]
        assert row["seeds"] == len(ch03_tier.SEEDS)
        for metric in TIER_METRICS:
            values = sorted(float(r[metric]) for r in runs)
            assert row[f"{metric}_lo"] == pytest.approx(values[0], rel=1e-3)
            assert row[f"{metric}_hi"] == pytest.approx(values[-1], rel=1e-3)
            assert row[metric] == pytest.approx(values[len(values) // 2], rel=1e-3)


def test_the_chart_draws_every_size_and_follows_the_theme(storm):
    spec = host_tier_chart(host_tier_spread(storm), title="t", subtitle="s").to_dict()
    assert spec["config"]["axis"]["labelFontSize"] >= charts.MIN_FONT_PX
    assert len(spec["vconcat"]) == 2                        # tokens above, the tail below
    values = [v for data in spec["datasets"].values() for v in data]
    sizes = {size_label(s) for s in ch03_tier.STORM_SIZES}
    tokens = [v for v in values if "series" in v]
    tail = [v for v in values if "series" not in v]
    assert {v["size"] for v in tokens} == {v["size"] for v in tail} == sizes
    assert {v["series"] for v in tokens} == {"recomputed", "loaded from the tier"}
    assert all(v["lo"] <= v["median"] <= v["hi"] for v in values)


# ---------------------------------------------------------------- a prediction answered by a band

def test_a_guess_inside_the_band_is_close_and_the_band_is_named():
    value, _ = exercises.PREDICTIONS["ch03-predict-tier-cut"].solve()
    low, high = exercises.PREDICTIONS["ch03-predict-tier-cut"].band()
    assert low < value < high
    for guess in (low, high, (low + high) / 2):
        v = exercises.judge_prediction("ch03-predict-tier-cut", guess)
        assert v.status == "close" and "inside kvsim's band" in v.message
        assert f"its range over seeds: {exercises.plain(low)} to {exercises.plain(high)}" in v.message
    below = exercises.judge_prediction("ch03-predict-tier-cut", low * 0.7)
    assert below.status == "off" and "its range over seeds" in below.message


def test_a_band_widens_what_counts_as_close(monkeypatch):
    base = exercises.Prediction(id="ch99-predict-band", question="q", unit="%",
                                solve=lambda: (50.0, "why"), rel_tol=0.05)
    banded = dataclasses.replace(base, band=lambda: (30.0, 60.0), band_label="its range")
    monkeypatch.setitem(exercises.PREDICTIONS, base.id, base)
    assert exercises.judge_prediction(base.id, 35).status == "off"
    monkeypatch.setitem(exercises.PREDICTIONS, base.id, banded)
    inside = exercises.judge_prediction(base.id, 35)
    assert inside.status == "close"
    assert inside.message.startswith("You predicted 35 %; kvsim shows 50 % (its range: 30 to 60)")
    assert exercises.judge_prediction(base.id, 61).status == "off"


def _site_data() -> dict:
    """The checks' data the site runs on, as committed (test_site_checks.py proves it is what
    kvsim computes now; computing it again here would rerun every chapter's checks)."""
    return checks_site.read_site_data((ROOT / checks_site.DATA_PATH).read_text(encoding="utf-8"))


def test_the_site_data_carries_the_band():
    predictions = _site_data()["predictions"]
    entry = predictions["ch03-predict-tier-cut"]
    low, high = exercises.PREDICTIONS["ch03-predict-tier-cut"].band()
    assert entry["band"] == [low, high] and entry["band_label"] == "its range over seeds"
    assert entry["band_text"] == [exercises.plain(low), exercises.plain(high)]
    assert "band" not in predictions["ch03-predict-copies"]


def test_the_answer_key_shows_the_band():
    path = ROOT / "book" / "_ext" / "kvbook_answer_key.py"
    spec = importlib.util.spec_from_file_location("kvbook_answer_key", path)
    key = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(key)
    _, rows = key.chapter_key_rows(_site_data(), [], ["ch03-predict-tier-cut", "ch03-predict-copies"])
    low, high = exercises.PREDICTIONS["ch03-predict-tier-cut"].band()
    assert rows[0][1].endswith(f"% (its range over seeds: {exercises.plain(low)} to "
                               f"{exercises.plain(high)})")
    assert "(" not in rows[1][1]                            # a plain value stays plain


# ---------------------------------------------------------------- the exercise

def test_the_document_load_is_its_full_blocks_over_the_link():
    want = 1e3 * (1_000 // 16) * 16 * kv_bytes_per_token("llama-2-7b") / 25e9
    assert exercises.expected("ch03-tier-load") == pytest.approx(want)
    assert exercises.evaluate("ch03-tier-load", round(want, 1)).status == "right"
    for slip, hint in ((want * 63 / 62, "partial block"), (2 * want, "one way"),
                       (want / 1e3, "seconds")):
        v = exercises.evaluate("ch03-tier-load", slip)
        assert v.status == "wrong" and hint in v.message


def test_the_chapter_glues_what_the_section_computes(storm):
    nb = read_chapter(BOOK / "ch03-swap-vs-recompute.ipynb")
    g = glued(nb)
    spread = {r["size"]: r for r in host_tier_spread(storm)}
    assert g["rc_off_k"] == pytest.approx(spread["off"]["recomputed_tokens"] / 1e3, rel=1e-3)
    cuts = ch03_tier.recompute_cut(ch03_tier.PREDICT_SIZE, storm)
    assert (g["cut_lo"], g["cut_hi"]) == pytest.approx((min(cuts), max(cuts)), rel=1e-3)
    assert g["ch03-tier-load"] == pytest.approx(exercises.expected("ch03-tier-load"), rel=1e-4)
