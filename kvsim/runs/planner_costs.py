"""What a planned configuration costs, the cheapest one for a load, and the Pareto set.

Arithmetic only, on the rates :func:`kvsim.plan` found (no prices are built in:
the user gives ``{gpu name: dollars per GPU-hour}``):

* **GPU-hours per million requests** at a sustainable rate ``r`` (requests per
  second per replica) on ``g`` GPUs per replica (``tensor_parallel_size``):
  ``g * 1e6 / (3600 * r)``; times the GPU's price, dollars per million;
* **the cheapest configuration for a target load** ``L``: each configuration
  needs ``ceil(L / r)`` replicas, so ``ceil(L / r) * g`` GPUs; the one with
  the lowest dollars per hour (GPU-hours per hour without prices) wins, ties
  going to the configuration listed first;
* **the Pareto set**: the configurations no other one beats on both axes (a
  higher or equal rate and a lower or equal cost, one of them strictly).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kvsim.errors import KvsimError, check_float

__all__ = ["gpu_hours_per_million", "check_prices", "Replicas", "replicas_for", "pareto_front"]

#: The most a GPU-hour may be priced at (dollars): far above any real price.
MAX_PRICE_PER_HOUR = 1e6


def gpu_hours_per_million(rate_per_s: float, gpus_per_replica: int) -> float:
    """GPU-hours one million requests take at ``rate_per_s`` per replica (inf at rate 0)."""
    if rate_per_s <= 0:
        return math.inf
    return gpus_per_replica * 1e6 / (3600.0 * rate_per_s)


def check_prices(prices: object, gpus: Sequence[str]) -> dict[str, float] | None:
    """``prices`` as ``{gpu: dollars per hour}``, covering every GPU in ``gpus``; or ``None``."""
    if prices is None:
        return None
    if not isinstance(prices, Mapping):
        raise KvsimError(f"prices={prices!r:.60} is a {type(prices).__name__}: expected a mapping "
                         f"of GPU name to dollars per GPU-hour, e.g. {{'a40-48gb': 0.8}}")
    out = {}
    for gpu, price in prices.items():
        out[str(gpu)] = check_float(f"prices[{gpu!r}]", price, min=0, max=MAX_PRICE_PER_HOUR,
                                    min_open=True, why="dollars per GPU-hour")
    missing = sorted({g for g in gpus if g not in out})
    if missing:
        raise KvsimError(f"prices has no price for GPU {missing[0]!r}: expected a price for "
                         f"every GPU planned ({', '.join(sorted(set(gpus)))})")
    return out


@dataclass(frozen=True)
class Replicas:
    """How configuration ``index`` carries a target load: replicas, GPUs and what they cost."""

    index: int
    replicas: int
    gpus: int
    gpu_hours_per_hour: float
    dollars_per_hour: float | None
    dollars_per_million: float | None


def replicas_for(target_rate_per_s: float, rate_per_s: float, gpus_per_replica: int,
                 price: float | None, index: int) -> Replicas:
    """The replicas of one configuration (sustaining ``rate_per_s`` each) a target load needs."""
    # (1e-9: a target of exactly k times the rate needs k replicas, not k + 1)
    replicas = max(1, math.ceil(target_rate_per_s / rate_per_s - 1e-9))
    gpus = replicas * gpus_per_replica
    per_hour = gpus * price if price is not None else None
    per_million = per_hour * 1e6 / (3600.0 * target_rate_per_s) if per_hour is not None else None
    return Replicas(index, replicas, gpus, float(gpus), per_hour, per_million)


def pareto_front(points: Sequence[tuple[int, float, float]]) -> list[int]:
    """Indices of the ``(index, rate, cost)`` points that no other point dominates (a rate at
    least as high and a cost at most as low, one strictly), by rising rate."""
    front = []
    for i, rate, cost in points:
        dominated = any(r >= rate and c <= cost and (r > rate or c < cost)
                        for j, r, c in points if j != i)
        if not dominated:
            front.append((rate, cost, i))
    return [i for _, _, i in sorted(front)]
