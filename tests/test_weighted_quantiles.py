"""The summary's inter-token quantiles: several read from one sort equal each read alone."""
from __future__ import annotations

import numpy as np
import pytest

from kvsim.engine.result import weighted_quantile, weighted_quantiles


def _one_by_one(values, weights, q):
    """The definition, plainly: the smallest value whose cumulative weight reaches q."""
    pairs = sorted((v, w) for v, w in zip(values, weights, strict=True) if w > 0)
    total = sum(w for _, w in pairs)
    seen = 0.0
    for v, w in pairs:
        seen += w
        if seen >= q * total:
            return v
    return pairs[-1][0] if pairs else 0.0


@pytest.mark.parametrize("seed", range(20))
def test_quantiles_from_one_sort_equal_each_alone(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 300))
    values = rng.choice([0.01, 0.02, 0.5, 1.0], n) if seed % 2 else rng.random(n)   # ties too
    weights = rng.integers(0, 5, n).astype(float)                                    # zeros too
    qs = (0.0, 0.5, 0.95, 0.99, 1.0)
    together = weighted_quantiles(values, weights, qs)
    assert together == [weighted_quantile(values, weights, q) for q in qs]
    assert together == [_one_by_one(values.tolist(), weights.tolist(), q) for q in qs]


def test_no_weight_gives_zeros():
    assert weighted_quantiles([1.0, 2.0], [0.0, 0.0], (0.5, 0.99)) == [0.0, 0.0]
