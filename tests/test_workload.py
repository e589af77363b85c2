"""Requests and generated workloads: validation, Poisson statistics, bursts, closed loop."""
from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from kvsim.errors import KvsimError
from kvsim.traffic.lengths import Capped, Fixed, Geometric, LogNormal
from kvsim.traffic.workload import CHUNK, Request, Workload

# ---- Request ------------------------------------------------------------------------------


def test_request_normalises_types():
    r = Request(np.int64(2), np.int32(850), 250.0, np.int8(-1))
    assert r == Request(2.0, 850, 250, -1)
    assert type(r.arrival_s) is float and type(r.prompt_tokens) is int
    assert type(r.output_tokens) is int and type(r.priority) is int
    assert Request(0, 1, 1).priority == 0


@pytest.mark.parametrize("args,pattern", [
    ((-1.0, 10, 10), r"arrival_s=-1.0 is out of range: expected a number \[0, 10000000\]"),
    ((math.inf, 10, 10), r"arrival_s=inf is not finite"),
    ((math.nan, 10, 10), r"arrival_s=nan is not finite"),
    ((0.0, 0, 10), r"prompt_tokens=0 is out of range: expected an integer \[1, "),
    ((0.0, 10, 0), r"output_tokens=0 is out of range"),
    ((0.0, 10.5, 10), r"prompt_tokens=10.5 is not a whole number"),
    ((0.0, 10, 10, 0.5), r"priority=0.5 is not a whole number"),
    ((0.0, True, 10), r"prompt_tokens=True is not a whole number"),
])
def test_request_validation(args, pattern):
    with pytest.raises(KvsimError, match=pattern):
        Request(*args)


def test_request_is_frozen():
    with pytest.raises(AttributeError):
        Request(0, 1, 1).prompt_tokens = 5


# ---- from_requests / from_arrays -----------------------------------------------------------


def test_from_requests_sorts_stably_and_accepts_tuples_and_dicts():
    w = Workload.from_requests([
        (2.0, 10, 11),
        Request(1.0, 20, 21, 5),
        (1.0, 30, 31, -2),
        {"arrival_s": 0.5, "prompt_tokens": 40, "output_tokens": 41},
        (1.0, 50, 51),
    ])
    assert w.arrival_s.tolist() == [0.5, 1.0, 1.0, 1.0, 2.0]
    # equal arrivals keep the given order
    assert w.prompt_tokens.tolist() == [40, 20, 30, 50, 10]
    assert w.output_tokens.tolist() == [41, 21, 31, 51, 11]
    assert w.priority.tolist() == [0, 5, -2, 0, 0]
    assert w.arrival_s.dtype == np.float64
    assert all(a.dtype == np.int64 for a in (w.prompt_tokens, w.output_tokens, w.priority))
    assert len(w) == 5 and not w.is_closed_loop and w.users is None
    assert w.requests()[1] == Request(1.0, 20, 21, 5)


def test_from_requests_names_the_bad_entry():
    with pytest.raises(KvsimError, match=r"requests\[1\]: output_tokens=0 is out of range"):
        Workload.from_requests([(0, 1, 1), (1, 2, 0)])
    with pytest.raises(KvsimError, match=r"requests\[0\]: .* is not a request"):
        Workload.from_requests([(0, 1)])
    with pytest.raises(KvsimError, match="is not a list"):
        Workload.from_requests(5)


def test_empty_workload_is_allowed():
    w = Workload.from_requests([])
    assert len(w) == 0 and w.arrival_s.shape == (0,) and "No requests" in w.describe()


def test_from_arrays_validates_with_the_index():
    with pytest.raises(KvsimError, match=r"prompt_tokens\[2\]=0 is out of range"):
        Workload.from_arrays([0, 1, 2], [5, 5, 0], [1, 1, 1])
    with pytest.raises(KvsimError, match=r"arrival_s\[1\]=-3.0 is out of range"):
        Workload.from_arrays([0, -3], [5, 5], [1, 1])
    with pytest.raises(KvsimError, match=r"output_tokens\[0\]=1.5 is not a whole number"):
        Workload.from_arrays([0], [5], [1.5])
    with pytest.raises(KvsimError, match=r"output_tokens has shape \(1,\): expected \(2,\)"):
        Workload.from_arrays([0, 1], [5, 5], [1])


def test_arrays_are_read_only_and_workload_immutable():
    w = Workload.poisson(2, 30, seed=1)
    for a in (w.arrival_s, w.prompt_tokens, w.output_tokens, w.priority):
        with pytest.raises(ValueError):
            a[0] = 1
    with pytest.raises(AttributeError):
        w.users = 3
    with pytest.raises(KvsimError, match="Workload.poisson"):
        Workload()
    src = np.array([0.0, 1.0])
    v = Workload.from_arrays(src, [1, 1], [1, 1])
    src[0] = 9.0                      # the workload holds its own copy
    assert v.arrival_s[0] == 0.0


def test_pickle_round_trip_keeps_arrays_read_only():
    w = Workload.poisson(2, 30, seed=1)
    v = pickle.loads(pickle.dumps(w))
    assert v.arrival_s.tobytes() == w.arrival_s.tobytes()
    assert not v.arrival_s.flags.writeable


# ---- Poisson --------------------------------------------------------------------------------


def test_poisson_count_and_gaps_over_a_long_window():
    rate, duration = 5.0, 20_000.0
    w = Workload.poisson(rate, duration, seed=3)
    lam = rate * duration
    assert abs(len(w) - lam) < 5 * math.sqrt(lam)
    a = w.arrival_s
    assert a[0] >= 0 and a[-1] < duration and (np.diff(a) >= 0).all()
    gaps = np.diff(a)
    assert abs(gaps.mean() - 1 / rate) < 5 * (1 / rate) / math.sqrt(gaps.size)
    # exponential gaps: P(gap > 1/rate) = 1/e, P(gap > 3/rate) = e^-3
    for m in (1, 3):
        p = math.exp(-m)
        assert abs(np.mean(gaps > m / rate) - p) < 5 * math.sqrt(p * (1 - p) / gaps.size)
    # counts in disjoint 10 s windows are Poisson: variance close to the mean
    counts = np.bincount((a // 10).astype(int), minlength=int(duration // 10))
    assert counts.var() / counts.mean() == pytest.approx(1.0, abs=0.1)


def test_poisson_is_deterministic_per_seed():
    kw = dict(prompt=LogNormal(850, 0.5), output=Geometric(250))
    a, b = Workload.poisson(1.5, 600, seed=11, **kw), Workload.poisson(1.5, 600, seed=11, **kw)
    for col in ("arrival_s", "prompt_tokens", "output_tokens", "priority"):
        assert getattr(a, col).tobytes() == getattr(b, col).tobytes()
    c = Workload.poisson(1.5, 600, seed=12, **kw)
    assert c.arrival_s.tobytes() != a.arrival_s.tobytes()
    assert c.output_tokens.tobytes() != a.output_tokens.tobytes()


def test_poisson_lengths_follow_the_distributions():
    w = Workload.poisson(10, 5000, prompt=Fixed(850), output=Geometric(250), seed=5, priority=3)
    assert (w.prompt_tokens == 850).all() and (w.priority == 3).all()
    out = w.output_tokens
    assert abs(out.mean() - 250) < 5 * out.std() / math.sqrt(out.size)
    assert w.prompt == Fixed(850) and w.output == Geometric(250) and w.seed == 5


def test_same_seed_same_traffic_with_longer_answers():
    """Chapter 5, mission 3: changing the answer length keeps every arrival and prompt."""
    short = Workload.poisson(1.5, 3600, prompt=LogNormal(850, 0.4), output=Geometric(250), seed=4)
    long_ = Workload.poisson(1.5, 3600, prompt=LogNormal(850, 0.4), output=Geometric(600), seed=4)
    assert short.arrival_s.tobytes() == long_.arrival_s.tobytes()
    assert short.prompt_tokens.tobytes() == long_.prompt_tokens.tobytes()
    assert (long_.output_tokens >= short.output_tokens).all()
    assert long_.output_tokens.mean() > 2 * short.output_tokens.mean()


def test_longer_window_appends_and_rate_compresses_time():
    a, b = Workload.poisson(2, 300, seed=9), Workload.poisson(2, 3000, seed=9)
    assert b.arrival_s[:len(a)].tobytes() == a.arrival_s.tobytes()
    assert b.arrival_s[len(a)] >= 300
    fast, slow = Workload.poisson(4, 300, seed=9), Workload.poisson(2, 600, seed=9)
    assert np.array_equal(fast.arrival_s, slow.arrival_s / 2)


def test_poisson_validation():
    with pytest.raises(KvsimError, match=r"rate_per_s=-1 is out of range: expected a number >= 0"):
        Workload.poisson(-1, 10)
    with pytest.raises(KvsimError, match=r"duration_s=0 is out of range: expected a number > 0"):
        Workload.poisson(1, 0)
    with pytest.raises(KvsimError, match=r"seed=-1 is out of range"):
        Workload.poisson(1, 10, seed=-1)
    with pytest.raises(KvsimError, match=r"output=0 is out of range"):
        Workload.poisson(1, 10, output=0)
    with pytest.raises(KvsimError, match=r"expected requests is out of range: expected at most"):
        Workload.poisson(1e6, 1e6)
    assert len(Workload.poisson(0, 100)) == 0


# ---- piecewise (bursts) ---------------------------------------------------------------------


def test_piecewise_produces_the_burst_and_the_quiet_spell():
    segs = [(2000, 1.5), (500, 6.0), (300, 0.0), (2000, 1.5)]
    w = Workload.piecewise(segs, seed=2)
    edges = np.cumsum([0] + [d for d, _ in segs])
    counts = np.histogram(w.arrival_s, bins=edges)[0]
    for (d, r), n in zip(segs, counts, strict=True):
        lam = d * r
        assert abs(n - lam) <= 5 * math.sqrt(lam), (d, r, n)
    assert counts[2] == 0                             # nothing arrives at rate 0
    assert counts[1] / 500 > 3 * counts[0] / 2000     # the burst is ~4x the base rate
    assert w.duration_s == 4800 and w.arrival_s[-1] < 4800


def test_single_segment_piecewise_is_poisson():
    a = Workload.piecewise([(600, 1.5)], output=Geometric(250), seed=8)
    b = Workload.poisson(1.5, 600, output=Geometric(250), seed=8)
    assert a.arrival_s.tobytes() == b.arrival_s.tobytes()
    assert a.output_tokens.tobytes() == b.output_tokens.tobytes()


def test_piecewise_leading_zero_rate_and_validation():
    w = Workload.piecewise([(100, 0), (100, 2.0)], seed=1)
    assert w.arrival_s.min() >= 100 and len(w) > 100
    with pytest.raises(KvsimError, match="segments=\\[\\] is empty"):
        Workload.piecewise([])
    with pytest.raises(KvsimError, match=r"segments\[1\]=\(5,\) is not a pair"):
        Workload.piecewise([(5, 1), (5,)])
    with pytest.raises(KvsimError, match=r"segments\[0\] rate_per_s=-2 is out of range"):
        Workload.piecewise([(5, -2)])


# ---- closed loop ----------------------------------------------------------------------------


def closed(**kw):
    args = dict(users=80, duration_s=600, prompt=LogNormal.from_median_p95(800, 2000),
                output=LogNormal.from_median_p95(1000, 4000), seed=6)
    args.update(kw)
    return Workload.closed_loop(**args)


def test_closed_loop_attributes():
    w = closed(think_s=2.0, ramp_s=40.0, priority=1)
    assert w.is_closed_loop and w.users == 80 and w.think_s == 2.0 and w.ramp_s == 40.0
    assert w.duration_s == 600 and w.request_priority == 1 and w.arrival_s is None
    assert w.user_start_s.tolist() == [i * 40.0 / 80 for i in range(80)]
    assert "80 users" in w.describe() and "p95 4,000" in w.describe()
    with pytest.raises(KvsimError, match="len\\(\\) needs an open-loop workload"):
        len(w)
    with pytest.raises(KvsimError, match="next_lengths\\(\\) is for closed-loop"):
        Workload.poisson(1, 10).next_lengths(0)


def test_next_lengths_does_not_depend_on_chunking_or_order():
    n = 3 * CHUNK + 17
    in_order = closed()
    seq = [in_order.next_lengths(k) for k in range(n)]
    shuffled = closed()
    order = np.random.default_rng(0).permutation(n)
    got = {int(k): shuffled.next_lengths(int(k)) for k in order}
    assert [got[k] for k in range(n)] == seq
    p, o = closed().lengths_for(n)
    assert list(zip(p.tolist(), o.tolist(), strict=True)) == seq
    # asking for a far request first, then an early one, on a fresh workload
    fresh = closed()
    assert fresh.next_lengths(n - 1) == seq[-1] and fresh.next_lengths(5) == seq[5]
    assert all(type(x) is int and x >= 1 for pair in seq[:50] for x in pair)
    assert closed(seed=7).lengths_for(100)[1].tobytes() != o[:100].tobytes()


def test_closed_loop_lengths_follow_the_seed_003_distributions():
    """Seed 003 ("Throughput collapse under load"): p95 2k prompt + 4k output."""
    p, o = closed().lengths_for(50_000)
    assert np.quantile(p, 0.95) == pytest.approx(2000, rel=0.03)
    assert np.quantile(o, 0.95) == pytest.approx(4000, rel=0.03)


def test_closed_loop_request_k_matches_open_loop_request_k():
    c = closed()
    w = Workload.poisson(5, 600, prompt=c.prompt, output=c.output, seed=c.seed)
    p, o = c.lengths_for(len(w))
    assert np.array_equal(p, w.prompt_tokens) and np.array_equal(o, w.output_tokens)


def test_closed_loop_validation():
    with pytest.raises(KvsimError, match=r"users=0 is out of range"):
        closed(users=0)
    with pytest.raises(KvsimError, match=r"think_s=-1 is out of range"):
        closed(think_s=-1)
    with pytest.raises(KvsimError, match=r"k=-1 is out of range"):
        closed().next_lengths(-1)
    with pytest.raises(KvsimError, match="scaled\\(\\) needs an open-loop workload"):
        closed().scaled(2)


# ---- transformations and summaries ----------------------------------------------------------


def test_capped_open_loop():
    w = Workload.poisson(3, 600, output=Geometric(250), seed=1)
    c = w.capped(300)
    assert np.array_equal(c.output_tokens, np.minimum(w.output_tokens, 300))
    assert c.output_tokens.max() == 300 and w.output_tokens.max() > 300   # original untouched
    assert c.arrival_s.tobytes() == w.arrival_s.tobytes()
    assert c.output == Capped(Geometric(250), 300)
    assert not c.output_tokens.flags.writeable
    with pytest.raises(KvsimError, match="max_tokens=0 is out of range"):
        w.capped(0)


def test_capped_closed_loop_caps_next_lengths():
    w = closed()
    c = w.capped(1500)
    for k in range(0, 5000, 7):
        p, o = w.next_lengths(k)
        assert c.next_lengths(k) == (p, min(o, 1500))


def test_scaled_divides_arrival_times():
    w = Workload.poisson(1, 100, seed=1)
    s = w.scaled(4)
    assert np.array_equal(s.arrival_s, w.arrival_s / 4) and s.duration_s == 25
    assert s.prompt_tokens.tobytes() == w.prompt_tokens.tobytes()


def test_describe_reports_count_rate_and_lengths():
    w = Workload.from_requests([(0, 100, 10), (1, 300, 30), (2, 200, 20), (4, 400, 40)])
    text = w.describe()
    assert "4 requests over 4 s (1.00 req/s)" in text
    assert "prompts: mean 250, p50 200, p95 400 tokens" in text
    assert "answers: mean 25, p50 20, p95 40 tokens" in text
    assert "requests" in repr(w)


def test_conversation_draws_need_a_closed_loop_of_conversations():
    """next_followup() and turns_of() on a workload without turns once escaped as an
    AttributeError traceback (a None distribution); now a one-line error."""
    for workload in (closed(), Workload.poisson(1, 10)):
        with pytest.raises(KvsimError, match=r"next_followup\(\) is for closed loops of "
                                             r"conversations: expected a workload made with "
                                             r"Workload.closed_loop\(..., turns=...\)"):
            workload.next_followup(0)
        with pytest.raises(KvsimError, match=r"turns_of\(\) is for closed loops of conversations"):
            workload.turns_of(0)
    talks = closed(turns=3, followup=40)
    assert talks.turns_of(0) == 3 and talks.next_followup(5) == 40


def test_open_columns_and_closed_loop_plan_name_the_wrong_kind_of_loop():
    open_loop = Workload.poisson(1, 10)
    columns = open_loop.open_columns("len()")
    assert columns.arrival_s is open_loop.arrival_s and columns.priority is open_loop.priority
    with pytest.raises(KvsimError, match=r"the closed-loop arrivals needs a closed-loop workload"):
        open_loop.closed_loop_plan("the closed-loop arrivals")
    plan = closed(think_s=2.0, priority=1).closed_loop_plan("the closed-loop arrivals")
    assert (plan.think_s, plan.request_priority, plan.max_errors) == (2.0, 1, 1000)
    with pytest.raises(KvsimError, match=r"describe\(\) needs an open-loop workload"):
        closed().open_columns("describe()")


def test_to_csv_refuses_what_is_neither_a_path_nor_an_open_file():
    with pytest.raises(KvsimError, match=r"path_or_file=42 is not a path or an open file: "
                                         r"expected a file path or a text file open for writing"):
        Workload.poisson(1, 10).to_csv(42)
