"""Length distributions: analytic means and quantiles, sampling, determinism, validation."""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvsim.errors import KvsimError
from kvsim.traffic.lengths import (
    MAX_LENGTH,
    BoundedPareto,
    Capped,
    Empirical,
    Fixed,
    Geometric,
    LengthDist,
    LogNormal,
    Uniform,
    as_lengths,
)

N = 200_000
SEED = 20240611
Z = NormalDist()


def draw(dist: LengthDist, n: int = N, seed: int = SEED) -> np.ndarray:
    return dist.sample(np.random.default_rng(seed), n)


# Independent references: each computes the integer quantile (smallest k with P(L <= k) >= q)
# or the mean straight from the definition, without calling the code under test.

def ref_uniform_q(lo, hi, q):
    return next(k for k in range(lo, hi + 1) if (k - lo + 1) / (hi - lo + 1) >= q)


def ref_geometric_q(mean, q):
    p, k, cdf = 1 / mean, 0, 0.0
    while cdf < q:
        k += 1
        cdf = 1 - (1 - p) ** k
    return k


def ref_lognormal_q(median, sigma, q):
    x = median * math.exp(sigma * Z.inv_cdf(q))
    return max(1, math.ceil(x - 0.5))       # the rounded length L <= k  <=>  X < k + 0.5


def ref_pareto_cdf(alpha, lo, hi, x):
    return (1 - (lo / x) ** alpha) / (1 - (lo / hi) ** alpha)


def ref_pareto_q(alpha, lo, hi, q):
    k = max(1, math.floor(lo))
    while ref_pareto_cdf(alpha, lo, hi, max(k + 0.5, lo)) < q:
        k += 1
    return k


def ref_pareto_mean(alpha, lo, hi, steps=2_000_000):
    # E[X] = lo + integral_lo^hi P(X > x) dx, midpoint rule on a log grid
    edges = np.geomspace(lo, hi, steps + 1)
    mid = np.sqrt(edges[1:] * edges[:-1])
    surv = 1 - ((1 - (lo / mid) ** alpha) / (1 - (lo / hi) ** alpha))
    return lo + float(np.sum(surv * np.diff(edges)))


CASES = [
    ("uniform", Uniform(3, 10), 6.5, lambda q: ref_uniform_q(3, 10, q)),
    ("geometric-250", Geometric(250), 250.0, lambda q: ref_geometric_q(250, q)),
    ("geometric-600", Geometric(600), 600.0, lambda q: ref_geometric_q(600, q)),
    ("lognormal", LogNormal(600, 0.7), 600 * math.exp(0.7**2 / 2),
     lambda q: ref_lognormal_q(600, 0.7, q)),
    ("pareto-1.2", BoundedPareto(1.2, 100, 32_000), ref_pareto_mean(1.2, 100, 32_000),
     lambda q: ref_pareto_q(1.2, 100, 32_000, q)),
    ("pareto-1.0", BoundedPareto(1.0, 50, 8_000), ref_pareto_mean(1.0, 50, 8_000),
     lambda q: ref_pareto_q(1.0, 50, 8_000, q)),
    ("empirical", Empirical([5, 1, 9, 9, 2, 40]), 66 / 6,
     lambda q: sorted([5, 1, 9, 9, 2, 40])[max(math.ceil(q * 6) - 1, 0)]),
]
QS = [0.05, 0.25, 0.5, 0.9, 0.95, 0.99]


@pytest.mark.parametrize("name,dist,mean,ref_q", CASES, ids=[c[0] for c in CASES])
def test_analytic_mean_and_quantiles_match_references(name, dist, mean, ref_q):
    assert dist.mean == pytest.approx(mean, rel=1e-6)
    for q in QS:
        assert dist.quantile(q) == ref_q(q), q


@pytest.mark.parametrize("name,dist,mean,ref_q", CASES, ids=[c[0] for c in CASES])
def test_samples_match_mean_and_quantiles(name, dist, mean, ref_q):
    x = draw(dist)
    assert x.dtype == np.int64 and x.shape == (N,) and x.min() >= 1
    # the sample mean is within 5 standard errors (+0.05 token for the rounding of continuous laws)
    assert abs(x.mean() - dist.mean) < 5 * x.std() / math.sqrt(N) + 0.05
    for q in QS:
        k = dist.quantile(q)
        tol = 5 * math.sqrt(q * (1 - q) / N)
        # k is the q-quantile of the integer law iff P(L < k) <= q <= P(L <= k)
        assert np.mean(x < k) <= q + tol, q
        assert np.mean(x <= k) >= q - tol, q


def test_fixed_is_constant():
    d = Fixed(850)
    x = draw(d, 1000)
    assert (x == 850).all() and x.dtype == np.int64
    assert d.mean == 850 and d.quantile(0.0) == d.quantile(1.0) == 850
    assert "850" in d.describe()


def test_geometric_is_memoryless():
    """An answer that already has 500 tokens expects `mean` more (constant stop chance)."""
    x = draw(Geometric(250), 1_000_000)
    rest = x[x > 500] - 500
    assert abs(rest.mean() - 250) < 5 * rest.std() / math.sqrt(rest.size)


def test_seed_003_p95_constructor_hits_p95_exactly():
    """Seed 003 ("Throughput collapse under load"): p95 2k prompt + 4k output."""
    prompt = LogNormal.from_median_p95(600, 2000)
    output = LogNormal.from_median_p95(1000, 4000)
    assert prompt.quantile(0.95) == 2000 and output.quantile(0.95) == 4000
    assert prompt.quantile(0.5) == 600 and output.quantile(0.5) == 1000
    assert np.mean(draw(output) <= 4000) == pytest.approx(0.95, abs=0.003)
    assert prompt.sigma == pytest.approx(math.log(2000 / 600) / Z.inv_cdf(0.95))


def test_lognormal_from_mean_constructors():
    d = LogNormal.from_mean_p95(250, 700)
    assert d.mean == pytest.approx(250, rel=1e-12)
    assert d.quantile(0.95) == 700
    e = LogNormal.from_mean_sigma(250, 1.2)
    assert e.mean == pytest.approx(250, rel=1e-12) and e.sigma == 1.2
    x = draw(e)
    assert abs(x.mean() - 250) < 5 * x.std() / math.sqrt(N) + 0.05
    with pytest.raises(KvsimError, match=r"p95=1000 .*386\.8"):
        LogNormal.from_mean_p95(100, 1000)     # no log-normal has its p95 that far above its mean


def ref_capped_mean(values_probs, c):
    return sum(min(v, c) * p for v, p in values_probs)


@pytest.mark.parametrize("dist,c", [
    (Geometric(250), 300), (Geometric(600), 1500), (Uniform(10, 20), 14), (Uniform(10, 20), 50),
    (Empirical([1, 5, 5, 100]), 6), (Fixed(900), 500),
])
def test_capped_mean_is_exact_for_discrete_laws(dist, c):
    if isinstance(dist, Geometric):
        p = 1 / dist.mean
        ref = sum((1 - p) ** k for k in range(c))            # E[min(L, c)] = sum_{k<c} P(L > k)
    elif isinstance(dist, Uniform):
        support = range(dist.lo, dist.hi + 1)
        ref = ref_capped_mean([(v, 1 / len(support)) for v in support], c)
    elif isinstance(dist, Empirical):
        ref = ref_capped_mean([(v, 1 / len(dist.values)) for v in dist.values], c)
    else:
        ref = min(dist.n, c)
    capped = dist.capped(c)
    assert capped.mean == pytest.approx(ref, rel=1e-9)
    assert capped.quantile(0.999) <= c
    assert draw(capped, 10_000).max() <= c


@pytest.mark.parametrize("dist,c", [(LogNormal(500, 1.0), 1000),
                                    (BoundedPareto(1.2, 100, 32_000), 2000)])
def test_capped_mean_of_continuous_laws_matches_samples(dist, c):
    x = draw(dist.capped(c))
    assert x.max() == c
    assert abs(x.mean() - dist.capped(c).mean) < 5 * x.std() / math.sqrt(N) + 0.05


def test_capped_composes_and_fixed_stays_fixed():
    assert Capped(Capped(Geometric(50), 100), 40) == Capped(Geometric(50), 40)
    assert Geometric(50).capped(100).capped(400) == Capped(Geometric(50), 100)
    assert Fixed(900).capped(500) == Fixed(500)
    assert Geometric(5).capped(30).support_max == 30


def test_sampling_is_deterministic_per_seed():
    for _, dist, _, _ in CASES:
        a, b = draw(dist, 5000, seed=7), draw(dist, 5000, seed=7)
        assert a.tobytes() == b.tobytes()
        if dist.quantile(0.01) != dist.quantile(0.99):
            assert draw(dist, 5000, seed=8).tobytes() != a.tobytes()


def test_sampling_is_by_inversion_so_longer_laws_give_longer_samples():
    """Common random numbers: the same seed gives each answer a rank it keeps."""
    short, long_ = draw(Geometric(250)), draw(Geometric(600))
    assert (long_ >= short).all() and long_.mean() > 2 * short.mean()
    a, b = draw(LogNormal(250, 0.8)), draw(LogNormal(600, 0.8))
    assert (b >= a).all()
    u = np.random.default_rng(SEED).random(N)
    assert (Geometric(250).ppf(u) == short).all()


def test_quantile_of_one_and_out_of_range():
    assert Uniform(2, 9).quantile(1) == 9
    assert BoundedPareto(1.5, 10, 1000).quantile(1.0) == 1000
    assert Empirical([3, 8]).quantile(1) == 8
    with pytest.raises(KvsimError, match="q=1.0 .*unbounded Geometric"):
        Geometric(10).quantile(1.0)
    with pytest.raises(KvsimError, match=r"q=1\.5 .*\[0\.0, 1\.0\]"):
        Fixed(3).quantile(1.5)


def test_sample_validates_rng_and_n():
    assert draw(Geometric(3), 0).shape == (0,)
    with pytest.raises(KvsimError, match="rng=.*numpy.random.Generator"):
        Geometric(3).sample(np.random.RandomState(0), 3)
    with pytest.raises(KvsimError, match="n=-1"):
        Geometric(3).sample(np.random.default_rng(0), -1)


def test_extreme_tails_stay_in_range():
    x = LogNormal(1000, 10.0).ppf(np.array([0.0, 1e-300, 0.5, 1 - 2**-53]))
    assert x.min() == 1 and x.max() == MAX_LENGTH and x[2] == 1000


def test_as_lengths():
    assert as_lengths(850) == Fixed(850)
    assert as_lengths(np.int64(7)) == Fixed(7)
    g = Geometric(250)
    assert as_lengths(g) is g
    with pytest.raises(KvsimError, match=r"output=0 .*\[1, 1000000000\]"):
        as_lengths(0, "output")
    with pytest.raises(KvsimError, match=r"prompt=\[1, 2\] is not a length"):
        as_lengths([1, 2], "prompt")
    with pytest.raises(KvsimError, match=r"prompt=2\.5 is not a whole number"):
        as_lengths(2.5, "prompt")
    with pytest.raises(KvsimError, match="prompt=None"):
        as_lengths(None, "prompt")


@pytest.mark.parametrize("make,pattern", [
    (lambda: Fixed(0), r"n=0 is out of range: expected an integer \[1, "),
    (lambda: Uniform(5, 2), r"hi=2 is out of range: expected an integer \[5, "),
    (lambda: Geometric(0.5), r"mean=0.5 is out of range: expected a number \[1.0, "),
    (lambda: LogNormal(100, 0), r"sigma=0 is out of range: expected a number \(0.0, 10.0\]"),
    (lambda: LogNormal(0.2, 1), r"median=0.2 is out of range"),
    (lambda: LogNormal.from_median_p95(600, 500), r"p95=500 is out of range: .*\(600.0, "),
    (lambda: BoundedPareto(0, 1, 10), r"alpha=0 is out of range"),
    (lambda: BoundedPareto(1.2, 100, 50), r"hi=50 is out of range: .*\(100.0, "),
    (lambda: Empirical([]), r"non-empty"),
    (lambda: Empirical([3, 0]), r"values contains 0: expected whole numbers in \[1, "),
    (lambda: Empirical([3, 1.5]), r"values\[1\]=1.5 is not a whole number"),
    (lambda: Capped(Geometric(5), 0), r"max_tokens=0 is out of range"),
    (lambda: Capped(5, 10), r"dist=5 is not a length distribution"),
])
def test_bad_parameters_name_the_value_and_range(make, pattern):
    with pytest.raises(KvsimError, match=pattern):
        make()


def test_empirical_is_order_free_and_short_to_print():
    a, b = Empirical(np.array([3, 1, 2])), Empirical([2, 3, 1])
    assert a == b and hash(a) == hash(b)
    big = Empirical(np.arange(1, 20_001))
    assert len(repr(big)) < 80 and big.mean == pytest.approx(10_000.5)


@settings(max_examples=60, deadline=None)
@given(family=st.sampled_from(["geometric", "lognormal", "uniform", "pareto"]),
       a=st.floats(1.0, 5000.0), b=st.floats(0.05, 3.0), cap=st.integers(1, 10_000),
       qs=st.lists(st.floats(0.0, 0.999), min_size=2, max_size=6))
def test_quantiles_monotone_and_samples_valid(family, a, b, cap, qs):
    dist = {"geometric": lambda: Geometric(a),
            "lognormal": lambda: LogNormal(a, b),
            "uniform": lambda: Uniform(int(a), int(a) + int(b * 100)),
            "pareto": lambda: BoundedPareto(b, a, a * 50)}[family]()
    for d in (dist, dist.capped(cap)):
        qs_sorted = sorted(qs)
        values = [d.quantile(q) for q in qs_sorted]
        assert values == sorted(values) and min(values) >= 1
        x = draw(d, 500, seed=1)
        assert x.dtype == np.int64 and x.min() >= 1
        if d.support_max is not None:
            assert x.max() <= d.support_max
