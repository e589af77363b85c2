"""Seeded prompt- and output-length distributions, in whole tokens.

Explained in chapter 2, *Optimistic admission and preemption* (why the length
distribution, not its mean, decides how fast the cache fills) and used by the
workloads of chapter 5, *Belgavi's Book Store*.

Every distribution is a small frozen dataclass with

* ``sample(rng, n) -> np.ndarray[int64]`` — ``n`` lengths, every one ``>= 1``;
* ``mean`` — the mean (analytic; see each class for what is exact);
* ``quantile(q) -> int`` — the exact quantile of the integer distribution
  (the smallest length ``k`` with ``P(L <= k) >= q``);
* ``ppf(u)`` — the same quantile function, vectorised over an array of
  uniforms in ``[0, 1)``;
* ``describe() -> str`` — one short line for captions and summaries;
* ``capped(max_tokens)`` — the distribution of ``min(L, max_tokens)``.

**Sampling is by inversion.** ``sample(rng, n)`` draws exactly ``n`` uniforms
with ``rng.random(n)`` and returns ``ppf(u)``. So a request keeps its *rank*
when the distribution changes: with the same seed, the answers of
``Geometric(600)`` are each at least as long as those of ``Geometric(250)``
(common random numbers). That is what lets the book replay "the same traffic
with longer answers" (chapter 5, mission 3) and compare runs request by
request.

**Continuous families** (:class:`LogNormal`, :class:`BoundedPareto`) are
turned into whole tokens by rounding to the nearest integer (halves round
down) and raising anything below 1 to 1; their ``mean`` is the mean of the
continuous law, which the rounding moves by well under one token. Every length
is at most :data:`MAX_LENGTH`.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvsim.errors import KvsimError, check_float, check_int

from . import libm

if TYPE_CHECKING:
    from statistics import NormalDist

__all__ = [
    "MAX_LENGTH", "LengthDist", "Fixed", "Uniform", "Geometric", "LogNormal", "BoundedPareto",
    "Empirical", "Capped", "as_lengths",
]

#: The longest length any distribution produces (10**9 tokens); continuous
#: tails are clipped here so that lengths always fit comfortably in int64.
MAX_LENGTH = 10**9

#: Whole-token lengths, and the uniforms (or continuous lengths) they are computed from.
TokenArray: TypeAlias = NDArray[np.int64]
FloatArray: TypeAlias = NDArray[np.float64]



@functools.cache
def _std_normal() -> NormalDist:
    """The standard normal distribution. ``statistics`` is imported when it is first needed:
    at import it is a few ms of every run's start-up, and most runs draw no log-normal."""
    from statistics import NormalDist
    return NormalDist()


@functools.cache
def _z95() -> float:
    """The standard normal's 95th percentile."""
    return _std_normal().inv_cdf(0.95)


@functools.cache
def _norm_ppf_elementwise() -> np.ufunc:
    return np.frompyfunc(_std_normal().inv_cdf, 1, 1)


def _norm_ppf(uniforms: ArrayLike) -> FloatArray:
    """Standard normal quantile of each ``u`` in ``[0, 1)`` (``-inf`` at 0)."""
    u = np.asarray(uniforms, dtype=np.float64)
    z: FloatArray = np.full(u.shape, -np.inf)
    inside = u > 0.0
    if inside.any():
        z[inside] = np.asarray(_norm_ppf_elementwise()(u[inside]), dtype=np.float64)
    return z


def _round_tokens(lengths: ArrayLike) -> TokenArray:
    """Continuous lengths -> whole tokens in [1, MAX_LENGTH] (halves round down)."""
    x = np.ceil(np.asarray(lengths, dtype=np.float64) - 0.5)
    tokens: TokenArray = np.clip(np.nan_to_num(x, nan=1.0, posinf=MAX_LENGTH), 1,
                                 MAX_LENGTH).astype(np.int64)
    return tokens


def _check_q(q: object) -> float:
    return check_float("q", q, min=0.0, max=1.0)


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.3g}"


class LengthDist:
    """Base class of every length distribution (see the module docstring)."""

    @property
    def support_max(self) -> int | None:
        """Largest possible length, or ``None`` when the distribution is unbounded."""
        return None

    if TYPE_CHECKING:
        # ``mean`` (a float) is defined by every subclass: a property, or for Geometric the
        # parameter itself (a dataclass field, which a property here would give a default).
        @property
        def mean(self) -> float: ...

    def ppf(self, u: ArrayLike) -> TokenArray:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def _capped_mean(self, max_tokens: int) -> float:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, n: int) -> TokenArray:
        """``n`` lengths (int64, all ``>= 1``) drawn by inversion of ``rng.random(n)``."""
        if not isinstance(rng, np.random.Generator):
            raise KvsimError(f"rng={rng!r} is not a generator: expected numpy.random.Generator "
                             "(e.g. numpy.random.default_rng(0))")
        n = check_int("n", n, min=0)
        return self.ppf(rng.random(n))

    def quantile(self, q: float) -> int:
        """The smallest length ``k`` with ``P(L <= k) >= q``, for ``q`` in [0, 1]."""
        q = _check_q(q)
        if q == 1.0:
            if self.support_max is None:
                raise KvsimError(f"q=1.0 is out of range for the unbounded {type(self).__name__} "
                                 "distribution: expected a number in [0, 1)")
            return int(self.support_max)
        return int(self.ppf(np.array([q]))[0])

    def capped_mean(self, max_tokens: int) -> float:
        """Mean of ``min(L, max_tokens)``; exact for discrete distributions."""
        return self._capped_mean(check_int("max_tokens", max_tokens, min=1, max=MAX_LENGTH))

    def capped(self, max_tokens: int) -> LengthDist:
        """The distribution of ``min(L, max_tokens)`` (what ``max_tokens`` does to answers)."""
        return Capped(self, max_tokens)

    def describe(self) -> str:
        """One line: family, parameters, mean and p50/p95."""
        return (f"{self._params()}: mean {_fmt(self.mean)}, p50 {self.quantile(0.5):,}, "
                f"p95 {self.quantile(0.95):,} tokens")

    def _params(self) -> str:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError


@dataclass(frozen=True)
class Fixed(LengthDist):
    """Every request has exactly ``n`` tokens (the seed articles' 850-token prompts)."""

    n: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", check_int("n", self.n, min=1, max=MAX_LENGTH))

    @property
    def support_max(self) -> int:
        return self.n

    def ppf(self, u: ArrayLike) -> TokenArray:
        return np.full(np.shape(u), self.n, dtype=np.int64)

    @property
    def mean(self) -> float:
        """Exact."""
        return float(self.n)

    def _capped_mean(self, max_tokens: int) -> float:
        return float(min(self.n, max_tokens))

    def capped(self, max_tokens: int) -> LengthDist:
        return Fixed(min(self.n, check_int("max_tokens", max_tokens, min=1, max=MAX_LENGTH)))

    def describe(self) -> str:
        return f"fixed {self.n:,} tokens"

    def _params(self) -> str:
        return f"fixed {self.n:,}"


@dataclass(frozen=True)
class Uniform(LengthDist):
    """Whole numbers from ``lo`` to ``hi`` inclusive, each equally likely."""

    lo: int
    hi: int

    def __post_init__(self) -> None:
        lo = check_int("lo", self.lo, min=1, max=MAX_LENGTH)
        hi = check_int("hi", self.hi, min=lo, max=MAX_LENGTH)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @property
    def support_max(self) -> int:
        return self.hi

    def ppf(self, u: ArrayLike) -> TokenArray:
        u = np.asarray(u, dtype=np.float64)
        n = self.hi - self.lo + 1
        j = np.maximum(np.ceil(u * n) - 1, 0)
        lengths: TokenArray = (self.lo + np.minimum(j, n - 1)).astype(np.int64)
        return lengths

    @property
    def mean(self) -> float:
        """Exact: ``(lo + hi) / 2``."""
        return (self.lo + self.hi) / 2

    def _capped_mean(self, max_tokens: int) -> float:
        c = max_tokens
        if c >= self.hi:
            return self.mean
        if c <= self.lo:
            return float(c)
        n = self.hi - self.lo + 1
        below = (self.lo + c - 1) * (c - self.lo) / 2      # sum of lo .. c-1
        return (below + c * (self.hi - c + 1)) / n

    def _params(self) -> str:
        return f"uniform {self.lo:,}..{self.hi:,}"


@dataclass(frozen=True)
class Geometric(LengthDist):
    """Lengths 1, 2, 3, ... where generation stops with constant probability per token.

    With stop probability ``p = 1 / mean`` after every token, the length ``L``
    has ``P(L = k) = (1 - p)**(k - 1) * p``: the memoryless model of an answer
    (a request that has already produced 500 tokens expects ``mean`` more).
    """

    mean: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", check_float("mean", self.mean, min=1.0, max=MAX_LENGTH))

    @property
    def p(self) -> float:
        """Probability of stopping after each token (``1 / mean``); ``mean`` is exact."""
        return 1.0 / self.mean

    def ppf(self, u: ArrayLike) -> TokenArray:
        u = np.asarray(u, dtype=np.float64)
        if self.mean == 1.0:
            return np.ones(u.shape, dtype=np.int64)
        k = np.ceil(libm.log1p(-u) / math.log1p(-self.p))
        return np.clip(k, 1, MAX_LENGTH).astype(np.int64)

    def _capped_mean(self, max_tokens: int) -> float:
        """Exact: ``(1 - (1 - p)**max_tokens) / p``."""
        return (1.0 - (1.0 - self.p) ** max_tokens) / self.p

    def _params(self) -> str:
        return f"geometric (mean {_fmt(self.mean)})"


@dataclass(frozen=True)
class LogNormal(LengthDist):
    """Log-normal lengths, given by their ``median`` and log-scale ``sigma``.

    ``log(L)`` is normal with mean ``log(median)`` and standard deviation
    ``sigma``; ``p95 = median * exp(1.645 * sigma)``. Most people know a median
    and a p95 rather than ``sigma``, hence :meth:`from_median_p95`, and
    :meth:`from_mean_p95` / :meth:`from_mean_sigma` for a known mean. A
    moderately heavy tail: the shape of real prompt lengths and of many
    answer lengths.
    """

    median: float
    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "median", check_float("median", self.median, min=1.0,
                                                       max=MAX_LENGTH))
        object.__setattr__(self, "sigma", check_float("sigma", self.sigma, min=0.0, max=10.0,
                                                      min_open=True))

    @classmethod
    def from_median_p95(cls, median: float, p95: float) -> LogNormal:
        """The log-normal with this median and 95th percentile (``quantile(0.95)`` is ``p95``).

        Seed 003's load test ("p95 2k prompt + 4k output") is
        ``LogNormal.from_median_p95(m, 2000)`` for the prompts.
        """
        median = check_float("median", median, min=1.0, max=MAX_LENGTH)
        p95 = check_float("p95", p95, min=median, max=MAX_LENGTH, min_open=True)
        return cls(median, math.log(p95 / median) / _z95())

    @classmethod
    def from_mean_sigma(cls, mean: float, sigma: float) -> LogNormal:
        """The log-normal with this mean and log-scale ``sigma``."""
        mean = check_float("mean", mean, min=1.0, max=MAX_LENGTH)
        sigma = check_float("sigma", sigma, min=0.0, max=10.0, min_open=True)
        return cls(mean * math.exp(-sigma * sigma / 2), sigma)

    @classmethod
    def from_mean_p95(cls, mean: float, p95: float) -> LogNormal:
        """The log-normal with this mean and 95th percentile.

        Needs ``mean < p95 <= 3.868 * mean`` (a log-normal cannot put its p95
        further above its mean); of the two solutions, the one with the smaller
        ``sigma`` is returned.
        """
        mean = check_float("mean", mean, min=1.0, max=MAX_LENGTH)
        z95 = _z95()
        limit = mean * math.exp(z95 * z95 / 2)
        p95 = check_float("p95", p95, min=mean, max=round(limit, 6), min_open=True)
        disc = max(z95 * z95 - 2 * math.log(p95 / mean), 0.0)
        sigma = z95 - math.sqrt(disc)
        return cls(mean * math.exp(-sigma * sigma / 2), sigma)

    @property
    def mu(self) -> float:
        """Mean of ``log(L)``."""
        return math.log(self.median)

    def ppf(self, u: ArrayLike) -> TokenArray:
        return _round_tokens(self.median * libm.exp(self.sigma * _norm_ppf(u)))

    @property
    def mean(self) -> float:
        """``median * exp(sigma**2 / 2)`` (continuous law)."""
        return self.median * math.exp(self.sigma * self.sigma / 2)

    def _capped_mean(self, max_tokens: int) -> float:
        """Continuous law: ``E[min(X, c)]``, in closed form."""
        c, s, mu = float(max_tokens), self.sigma, self.mu
        lc = math.log(c)
        return (self.mean * _std_normal().cdf((lc - mu - s * s) / s)
                + c * (1.0 - _std_normal().cdf((lc - mu) / s)))

    def _params(self) -> str:
        return f"log-normal (median {_fmt(self.median)}, sigma {self.sigma:.3g})"


@dataclass(frozen=True)
class BoundedPareto(LengthDist):
    """A power-law tail between ``lo`` and ``hi`` tokens: ``P(X > x) ~ (lo / x)**alpha``.

    The heavy tail of reasoning-style answers (seed 003, "Throughput collapse
    under load": a handful of requests grow to 8k-32k tokens while most stay
    short). Smaller ``alpha`` = heavier tail; ``alpha <= 1`` means the mean is
    dominated by the rare long ones, and only ``hi`` keeps it finite.
    """

    alpha: float
    lo: float
    hi: float

    def __post_init__(self) -> None:
        alpha = check_float("alpha", self.alpha, min=0.0, max=100.0, min_open=True)
        lo = check_float("lo", self.lo, min=1.0, max=MAX_LENGTH)
        hi = check_float("hi", self.hi, min=lo, max=MAX_LENGTH, min_open=True)
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @property
    def support_max(self) -> int:
        return int(_round_tokens(np.array([self.hi]))[0])

    def _k(self) -> float:
        # (a float ** a float is typed Any: a negative base would give a complex)
        mass: float = 1.0 - (self.lo / self.hi) ** self.alpha
        return mass

    def ppf(self, u: ArrayLike) -> TokenArray:
        u = np.asarray(u, dtype=np.float64)
        x = self.lo * libm.power(1.0 - u * self._k(), -1.0 / self.alpha)
        return _round_tokens(np.minimum(x, self.hi))

    def _partial(self, c: float) -> float:
        """``E[X; X <= c]`` for ``lo <= c <= hi`` (continuous law)."""
        a, lo = self.alpha, self.lo
        if a == 1.0:
            return lo * math.log(c / lo) / self._k()
        partial: float = a * lo**a * (c ** (1 - a) - lo ** (1 - a)) / ((1 - a) * self._k())
        return partial

    @property
    def mean(self) -> float:
        """Closed form for the continuous law."""
        return self._partial(self.hi)

    def _capped_mean(self, max_tokens: int) -> float:
        """Continuous law: ``E[min(X, c)]``, in closed form."""
        c = float(max_tokens)
        if c >= self.hi:
            return self.mean
        if c <= self.lo:
            return c
        survive: float = ((self.lo / c) ** self.alpha - (self.lo / self.hi) ** self.alpha) / self._k()
        return self._partial(c) + c * survive

    def _params(self) -> str:
        return f"bounded Pareto (alpha {self.alpha:.3g}, {_fmt(self.lo)}..{_fmt(self.hi)})"


@dataclass(frozen=True, repr=False)
class Empirical(LengthDist):
    """Resample from observed lengths (e.g. a trace's output lengths), each equally likely.

    ``values`` may be any sequence or array of whole numbers ``>= 1``; it is
    stored sorted, so two ``Empirical`` of the same multiset are equal.
    """

    values: tuple[int, ...]
    _arr: TokenArray = field(init=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        try:
            raw = np.asarray(self.values)
        except Exception:  # noqa: BLE001 - ragged or odd input
            raise KvsimError(f"values={self.values!r:.60} is not a sequence of whole numbers: "
                             "expected lengths >= 1") from None
        if raw.ndim != 1 or raw.size == 0:
            raise KvsimError(f"values (shape {raw.shape}) is not a non-empty 1-d sequence: "
                             "expected at least one length >= 1")
        ok = raw.dtype.kind in "iu" or (raw.dtype.kind == "f" and bool(
            np.isfinite(raw).all() and (raw == np.floor(raw)).all()))
        if ok and not (raw.min() >= 1 and raw.max() <= MAX_LENGTH):
            bad = (raw.min() if raw.min() < 1 else raw.max()).item()
            raise KvsimError(f"values contains {bad!r}: expected whole numbers in "
                             f"[1, {MAX_LENGTH}]")
        if not ok:      # name the first bad value (or accept an object array of whole numbers)
            raw = np.array([check_int(f"values[{i}]", v, min=1, max=MAX_LENGTH)
                            for i, v in enumerate(raw.tolist())], dtype=np.int64)
        arr = np.sort(raw.astype(np.int64))
        arr.setflags(write=False)
        object.__setattr__(self, "values", tuple(arr.tolist()))
        object.__setattr__(self, "_arr", arr)

    def __repr__(self) -> str:
        return f"Empirical(<{len(self.values):,} values, mean {self.mean:,.1f}>)"

    @property
    def support_max(self) -> int:
        return int(self._arr[-1])

    def ppf(self, u: ArrayLike) -> TokenArray:
        u = np.asarray(u, dtype=np.float64)
        n = self._arr.size
        j = np.clip(np.ceil(u * n) - 1, 0, n - 1).astype(np.int64)
        lengths: TokenArray = self._arr[j]
        return lengths

    @property
    def mean(self) -> float:
        """Exact: the mean of ``values``."""
        return float(self._arr.mean())

    def _capped_mean(self, max_tokens: int) -> float:
        """Exact."""
        return float(np.minimum(self._arr, max_tokens).mean())

    def _params(self) -> str:
        return f"empirical ({self._arr.size:,} values)"


@dataclass(frozen=True)
class Capped(LengthDist):
    """``min(L, max_tokens)``: what a ``max_tokens`` limit does to a length distribution."""

    dist: LengthDist
    max_tokens: int

    def __post_init__(self) -> None:
        if not isinstance(self.dist, LengthDist):
            raise KvsimError(f"dist={self.dist!r} is not a length distribution: expected one of "
                             "Fixed, Uniform, Geometric, LogNormal, BoundedPareto, Empirical, "
                             "Capped")
        c = check_int("max_tokens", self.max_tokens, min=1, max=MAX_LENGTH)
        object.__setattr__(self, "max_tokens", c)
        if isinstance(self.dist, Capped):        # min(min(L, a), b) = min(L, min(a, b))
            object.__setattr__(self, "max_tokens", min(c, self.dist.max_tokens))
            object.__setattr__(self, "dist", self.dist.dist)

    @property
    def support_max(self) -> int:
        inner = self.dist.support_max
        return self.max_tokens if inner is None else min(inner, self.max_tokens)

    def ppf(self, u: ArrayLike) -> TokenArray:
        return np.minimum(self.dist.ppf(u), self.max_tokens)

    @property
    def mean(self) -> float:
        """The inner distribution's ``capped_mean`` (exact where that one is)."""
        return self.dist._capped_mean(self.max_tokens)

    def _capped_mean(self, max_tokens: int) -> float:
        return self.dist._capped_mean(min(self.max_tokens, max_tokens))

    def _params(self) -> str:
        return f"{self.dist._params()} capped at {self.max_tokens:,}"


def as_lengths(x: object, name: str = "lengths") -> LengthDist:
    """An ``int`` becomes :class:`Fixed`; a length distribution passes through.

    ``name`` is used in the error message (e.g. ``"prompt"`` or ``"output"``).
    """
    if isinstance(x, LengthDist):
        return x
    if isinstance(x, (bool, type(None))) or not isinstance(x, (int, float, str, np.integer,
                                                                 np.floating)):
        raise KvsimError(f"{name}={x!r:.60} is not a length: expected a whole number of tokens "
                         "in [1, 1000000000] or a distribution from kvsim.traffic.lengths "
                         "(Fixed, Uniform, Geometric, LogNormal, BoundedPareto, Empirical)")
    return Fixed(check_int(name, x, min=1, max=MAX_LENGTH))
