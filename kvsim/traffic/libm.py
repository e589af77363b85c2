"""Elementwise ``log1p``, ``exp`` and powers that give the same bits on every CPU.

numpy chooses the machine code of its float64 ``log1p``, ``exp``, ``log`` and
``power`` loops when it is imported: on a CPU with AVX-512 it runs its own
vectorised versions, elsewhere it calls the C library (``libm``). The two
differ in the last bit for a few percent of inputs (measured with numpy 2.4:
7% of ``log1p`` values, 5% of ``exp`` and ``power``). kvsim turns uniforms into
arrival times and request lengths with these functions, so a last bit that
moves can move an arrival past an engine step, and then a whole run differs
from one machine to the next.

These helpers call Python's :mod:`math` (the C library) value by value, which
gives numpy's result on a CPU without AVX-512 and the same result on one with
it. They cost about 0.1 µs per value, which is nothing beside the engine's
work per request. Only the sampling of a workload uses them; the engine itself
adds, multiplies and divides (exact in IEEE arithmetic on every CPU).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["log1p", "exp", "power"]


def _each(fn: Callable[[float], float], x: ArrayLike) -> NDArray[np.float64]:
    a = np.asarray(x, dtype=np.float64)
    flat = np.fromiter(map(fn, a.ravel().tolist()), dtype=np.float64, count=a.size)
    return flat.reshape(a.shape)


def log1p(x: ArrayLike) -> NDArray[np.float64]:
    """``log(1 + x)`` of each value (``-inf`` at -1, NaN below), as the C library computes it."""
    def one(v: float) -> float:
        if v > -1.0 or v != v:
            return math.log1p(v)
        return -math.inf if v == -1.0 else math.nan
    return _each(one, x)


def exp(x: ArrayLike) -> NDArray[np.float64]:
    """``e ** x`` of each value (``inf`` where it overflows), as the C library computes it."""
    def one(v: float) -> float:
        try:
            return math.exp(v)
        except OverflowError:
            return math.inf
    return _each(one, x)


def power(x: ArrayLike, y: float) -> NDArray[np.float64]:
    """``x ** y`` of each value of ``x`` for one exponent ``y``, as the C library computes it."""
    y = float(y)

    def one(v: float) -> float:
        try:
            return math.pow(v, y)
        except (OverflowError, ValueError):
            with np.errstate(all="ignore"):      # inf, 0 or nan, as numpy's own loops give
                return float(np.float64(v) ** y)
    return _each(one, x)
