"""The book's simulated comparisons under a 10% error in the cost model (issue 18, item 2).

kvsim's step times are within about 10% of measured kernels (kvsim.engine.uncertainty), so a
comparison the book states as a winner or a sign must survive every step taking 10% longer or
shorter (``step_time_scale`` 0.9 and 1.1, :class:`kvsim.CostModel`). Chapter 3's analytic signs
are checked in tests/test_uncertainty.py; these are the simulated ones of chapters 2 and 5, each
stated in the prose and glued from the same runs at scale 1 (tests/test_ch0N_numbers.py).
"""
from __future__ import annotations

import numpy as np
import pytest

import kvsim
from kvsim.book.exercises import ch02, ch05

from notebook_helpers import BOOK, glued, read_chapter

SCALES = (0.9, 1.1)


def _fixes(scale: float) -> dict:
    return {name: kvsim.sweep({"scenario": "belgavi-long", **ch05.FIXES[name],
                               "step_time_scale": scale}, None, seeds=ch05.FIX_SEEDS,
                              progress=False)
            for name in ch05.FIXES}


def _med(table, key):
    return float(np.median(table[key]))


@pytest.mark.parametrize("scale", SCALES)
def test_chapter_5s_fixes_keep_their_order_with_every_step_10_percent_off(scale):
    """Chapter 5: the cap ends the overload, the cap with FP8 ends the storm, FP8 or memory alone
    shortens the queue but preempts more, and max_num_seqs 12 ends it by queueing the most.
    (Whether the cap alone cuts the preemption count is the next test's.)"""
    fx = _fixes(scale)
    base, cap, both = fx["as it is"], fx["1. max_tokens 400"], fx["2. + FP8 KV"]
    assert _med(cap, "ttft_p95_s") < _med(base, "ttft_p95_s") / 10
    assert max(both["preemptions"]) == 0
    for alone in (fx["FP8 KV alone"], fx["3. memory 0.80 alone"]):
        assert _med(alone, "preemptions_per_1k") > _med(base, "preemptions_per_1k")
        assert _med(alone, "ttft_p95_s") < _med(base, "ttft_p95_s")
    seqs = fx["4. max_num_seqs 12 alone"]
    assert max(seqs["preemptions"]) == 0
    assert _med(seqs, "ttft_p95_s") == max(_med(t, "ttft_p95_s") for t in fx.values())


def test_chapter_5_calls_the_caps_cut_in_preemptions_within_error_exactly_when_it_flips():
    """At kvsim's step times the cap alone cuts preemptions per 1,000; if a 10% error in the
    step time undoes that, the chapter must say so (and must not, if it holds)."""
    base, cap = ch05.fix_under_error("as it is"), ch05.fix_under_error("1. max_tokens 400")
    assert cap[1.0] < base[1.0]
    flips = any(cap[k] >= base[k] for k in ch05.ERROR_SCALES)
    md = "\n".join(c.source for c in read_chapter(BOOK / "ch05-belgavis-book-store.ipynb").cells
                   if c.cell_type == "markdown")
    assert ("Its cut in preemptions is within kvsim's error" in " ".join(md.split())) == flips
    g = glued(read_chapter(BOOK / "ch05-belgavis-book-store.ipynb"))
    assert (g["cap_slow_pre"], g["base_slow_pre"]) == pytest.approx(
        (cap[ch05.ERROR_SCALES[1]], base[ch05.ERROR_SCALES[1]]), abs=1e-3)


@pytest.mark.parametrize("scale", SCALES)
def test_chapter_2s_engines_keep_their_signs_with_every_step_10_percent_off(scale):
    """Chapter 2's engines on Belgavi: guaranteed admission runs fewer requests, queues longer
    and pauses no stream; SGLang never preempts but starts newcomers later than vLLM."""
    def summary(adm):
        return kvsim.sweep({"scenario": "belgavi", "max_tokens": ch02.MAX_TOKENS, "admission": adm,
                            "step_time_scale": scale}, None, seeds=ch02.SEEDS, progress=False)
    opt, gua, sgl = (summary(a) for a in ("optimistic", "guaranteed", "sglang"))
    assert max(gua["preemptions"]) == 0 and max(sgl["preemptions"]) == 0
    assert _med(opt, "preemptions_per_1k") > 0
    assert _med(gua, "mean_running") < _med(opt, "mean_running")
    assert _med(gua, "ttft_p95_s") > _med(opt, "ttft_p95_s")
    assert _med(gua, "max_gap_s") < _med(opt, "max_gap_s")
    assert _med(sgl, "ttft_p95_s") > _med(opt, "ttft_p95_s")
