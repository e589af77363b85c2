"""A bounded fuzz of the books: refusals, closed loops and tight pools (issue 30).

Each example is drawn from a seeded generator (the same examples on every run):
open loops whose longest requests often cannot fit, closed loops of up to 40
users with no think time whose requests are often all refused (and that must
stop after ``max_errors``), pools from one block to a little more than the
longest request, V0 and V1, every admission policy, ``until_s`` cuts. Every
run is made with ``check=True`` (the engine asserts its invariants after every
step and its books at the end: ``kvsim/engine/invariants.py``), and the test
checks what a reader of the result relies on:

* every request that arrived finished, was refused, or is still in the engine
  at the end (the last row's running, waiting and swapped), and a refused one
  never ran;
* ``simulated_s`` is the timeline's last time, whatever the last event was;
* the exporter's gauges at the end of the run agree with the last row (no
  waiting request that was refused);
* a closed loop sends nothing after it stopped, and stops within ``users``
  refusals of ``max_errors``; the number of requests is bounded by
  construction.

The whole file takes a few seconds (``FUZZ_EXAMPLES`` runs of tens of requests).
"""
from __future__ import annotations

import random

import numpy as np
import pytest

import kvsim
from kvsim.observe.series import run_metrics

MODEL, GPU = "llama-2-7b", "a100-80gb"
#: Examples per run of the suite (each one a few milliseconds to a few tens).
FUZZ_EXAMPLES = 150


def _draw(rng: random.Random):
    """``(workload, options)``: a tight pool more often than not, refusals often."""
    bs = rng.choice([1, 4, 16])
    longest = rng.choice([40, 120, 400])
    if rng.random() < 0.5:
        n = rng.randint(1, 30)
        reqs = [kvsim.Request(round(rng.uniform(0, 2.0), 3), rng.randint(1, longest),
                              rng.randint(1, 60), rng.randint(0, 2)) for _ in range(n)]
        wl = kvsim.Workload.from_requests(reqs)
    else:
        wl = kvsim.Workload.closed_loop(
            users=rng.choice([1, 3, 10, 40]), duration_s=rng.choice([0.5, 2.0, 30.0]),
            prompt=kvsim.Uniform(1, longest), output=kvsim.Uniform(1, 40),
            think_s=rng.choice([0.0, 0.0, 0.01]), ramp_s=rng.choice([0.0, 0.05]),
            seed=rng.randint(0, 9), max_errors=rng.choice([1, 5, 50, 1000]))
    fit = -(-(longest + 60) // bs)
    opts = dict(engine=rng.choice(["v1", "v1", "v0"]), block_size=bs,
                num_gpu_blocks=rng.randint(1, fit + 4),          # often too small
                admission=rng.choice(["optimistic", "optimistic", "guaranteed", "sglang"]),
                max_num_seqs=rng.randint(1, 16))
    if rng.random() < 0.3:
        opts["max_model_len"] = rng.randint(20, longest)        # long prompts refused
    if rng.random() < 0.2:
        opts["until_s"] = rng.choice([0.1, 0.5, 1.5])
    if opts["engine"] == "v0":
        opts["enable_prefix_caching"] = False
    return wl, opts


@pytest.fixture(scope="module")
def fuzzed():
    out = []
    for seed in range(FUZZ_EXAMPLES):
        wl, opts = _draw(random.Random(seed))
        try:
            r = kvsim.simulate(wl, model=MODEL, gpu=GPU, check=True, **opts)
        except kvsim.KvsimError as e:            # a bad combination is an answer too
            out.append((wl, opts, e))
            continue
        out.append((wl, opts, r))
    return out


def test_the_fuzz_reaches_refusals_stops_and_tight_pools(fuzzed):
    runs = [r for _, _, r in fuzzed if isinstance(r, kvsim.SimResult)]
    assert len(runs) >= 0.9 * FUZZ_EXAMPLES
    refused = [r for r in runs if (r.requests["rejected"] > 0).any()]
    stopped = [r for r in runs if r.counters["load_stopped_s"] is not None]
    all_refused = [r for r in runs if r.requests.num_rows and (r.requests["rejected"] > 0).all()]
    preempted = [r for r in runs if r.summary()["preemptions"] > 0]
    assert len(refused) >= 40 and len(stopped) >= 10 and len(all_refused) >= 10, \
        (len(refused), len(stopped), len(all_refused))
    assert len(preempted) >= 10                  # tight pools that still serve


def test_the_books_balance_whatever_the_last_event(fuzzed):
    for _wl, opts, r in fuzzed:
        if not isinstance(r, kvsim.SimResult):
            continue
        rq, tl, s = r.requests, r.timeline, r.summary()
        refused = rq["rejected"] > 0
        finished = ~np.isnan(rq["finish_s"])
        left = (int(tl["running"][-1] + tl["waiting"][-1] + tl["swapped"][-1])
                if tl.num_rows else 0)
        # every request: finished, refused, or still in the engine when the run stopped
        # (the last row, plus those that arrived during the last step of a cut run)
        assert int(finished.sum()) + int(refused.sum()) + left <= rq.num_rows, opts
        if opts.get("until_s") is None:
            assert int(finished.sum()) + int(refused.sum()) == rq.num_rows, opts
            assert left == 0, opts
        assert not (finished | ~np.isnan(rq["first_scheduled_s"]))[refused].any()
        assert s["requests_arrived"] == rq.num_rows and s["requests_rejected"] == refused.sum()
        assert s["simulated_s"] == (float(tl["t_s"][-1]) if tl.num_rows else 0.0)
        # the exporter's gauges at the end are the last row's: no refused request waiting
        if tl.num_rows:
            m = run_metrics(r)
            end = m.end_s
            assert float(m.value("waiting", end)[0]) == float(tl["waiting"][-1])
            assert float(m.value("running", end)[0]) == float(tl["running"][-1])


def test_closed_loops_are_bounded_by_construction(fuzzed):
    for wl, opts, r in fuzzed:
        if not isinstance(r, kvsim.SimResult) or not wl.is_closed_loop:
            continue
        rq = r.requests
        n_refused = int((rq["rejected"] > 0).sum())
        stopped = r.counters["load_stopped_s"]
        if stopped is None:
            assert n_refused < wl.max_errors, opts
        else:
            assert wl.max_errors <= n_refused < wl.max_errors + wl.users, opts
            assert (rq["arrival_s"] <= stopped).all()
            assert "max_errors" in r.counters["load_stop_reason"]
        # the refused requests are bounded whatever the duration: users x duration / 1 ms
        # (24 million for 40 users over 10 minutes) before the stop rule
        assert n_refused < wl.max_errors + wl.users
