"""How far a swap-versus-recompute comparison can be trusted: kvsim's measured error band.

Explained in chapter 3, *Swap versus recompute* ("How sure is the sign?").

A comparison of two costs is only as good as the model behind both. Two
uncertainties dominate chapter 3's:

* **The compute side.** kvsim's step time against measured kernels: for each
  GPU preset with profiles, :data:`PREFILL_ERROR` is the 10th and 90th
  percentile of ``predicted / measured - 1`` over Vidur's measured matmul and
  element-wise times of one layer, at batches of :data:`PREFILL_ERROR_MIN_TOKENS`
  tokens or more (a recompute is a prefill of at least that many) on one GPU
  (:func:`kvsim.engine.calibration.prefill_error_band` recomputes them from the
  profiles; a test pins these figures to it). A negative error means kvsim is
  fast, so the real recompute takes up to ``predicted / (1 + lo)``. Attention,
  the CPU overhead and the LM head are not in those profiles: the band covers
  the part that was measured, and the chapter says so.
* **The link.** The effective PCIe bandwidth depends on the host (pinned
  memory, the root complex, NUMA placement). :data:`LINK_RANGE` spans from
  the source articles' "effective 20 GB/s" to the presets' 25 GB/s for PCIe
  4.0 x16, as fractions of each preset's figure (the same fractions for a
  Gen5 link).

:func:`ratio_band` combines the two extremes (the slowest recompute against
the fastest swap, and the reverse); :func:`verdict` states a winner only when
the whole band lies on one side of 1.
"""
from __future__ import annotations

import itertools
from dataclasses import replace
from typing import TYPE_CHECKING

from kvsim.errors import check_int
from kvsim.model.hardware import get_gpu

from .costs import CostModel, recompute_time_s, sign_changes, swap_round_trip_s

if TYPE_CHECKING:
    from .costs import GPULike, ModelLike

__all__ = ["PREFILL_ERROR", "PREFILL_ERROR_MIN_TOKENS", "LINK_RANGE", "prefill_error",
           "ratio_band", "verdict", "VERDICTS", "uncertain_lengths"]

#: Batches at least this long count for the recompute band (chapter 3's requests are longer).
PREFILL_ERROR_MIN_TOKENS = 256

#: ``(p10, p90)`` of kvsim's signed relative error (predicted / measured - 1) on measured
#: matmul plus element-wise layer times, batches >= 256 tokens, one GPU (Vidur's profiles,
#: microsoft/vidur @7d47513, the models of ``../shared/data/vidur-profiling/SOURCES.md``).
PREFILL_ERROR = {
    "a100-80gb": (-0.134, 0.004),
    "a40-48gb": (-0.092, 0.040),
    "h100-80gb": (-0.057, 0.102),
}

#: Effective link bandwidth as a fraction of a preset's figure: the articles' 20 GB/s
#: against the presets' 25 GB/s (PCIe 4.0 x16), up to the preset itself.
LINK_RANGE = (0.8, 1.0)

#: What :func:`verdict` can say.
VERDICTS = ("swap", "recompute", "within error")


def prefill_error(gpu: GPULike) -> tuple[float, float]:
    """:data:`PREFILL_ERROR` of a GPU preset; a GPU without profiles gets the widest band measured.

    NOTE(unprofiled-gpu): the L40S, H200 and other presets have no measured kernels here, so
    their band is the union of the measured ones rather than a figure of their own.
    """
    name = get_gpu(gpu).name
    if name in PREFILL_ERROR:
        return PREFILL_ERROR[name]
    return (min(lo for lo, _ in PREFILL_ERROR.values()), max(hi for _, hi in PREFILL_ERROR.values()))


def ratio_band(tokens: int, model: ModelLike, gpu: GPULike, cost: CostModel | None = None, *,
               block_size: int = 16) -> tuple[float, float, float]:
    """``(low, kvsim, high)`` of recompute time / swap round trip for one request.

    ``kvsim`` is the cost model's own ratio (:func:`~kvsim.engine.costs.recompute_time_s` over
    :func:`~kvsim.engine.costs.swap_round_trip_s`). ``low`` pairs the fastest recompute the
    measured error allows with the slowest link of :data:`LINK_RANGE`; ``high`` the slowest
    recompute with the fastest link. Above 1 a swap is cheaper.
    """
    n = check_int("tokens", tokens, min=1)
    g = get_gpu(gpu)
    cost = cost or CostModel()
    link = cost.pcie_bytes_per_s or g.pcie_bytes_per_s
    err_lo, err_hi = prefill_error(g)
    recompute = recompute_time_s(n, model, g, cost)
    swaps = [swap_round_trip_s(n, model, g, replace(cost, pcie_bytes_per_s=link * f),
                               block_size=block_size) for f in LINK_RANGE]
    swap = swap_round_trip_s(n, model, g, cost, block_size=block_size)
    low = recompute / (1 + err_hi) / max(swaps)
    high = recompute / (1 + err_lo) / min(swaps)
    return low, recompute / swap, high


def verdict(tokens: int, model: ModelLike, gpu: GPULike, cost: CostModel | None = None, *,
            block_size: int = 16) -> str:
    """Which is cheaper, said only when the whole :func:`ratio_band` agrees (one of :data:`VERDICTS`)."""
    low, _, high = ratio_band(tokens, model, gpu, cost, block_size=block_size)
    if low > 1:
        return VERDICTS[0]
    if high < 1:
        return VERDICTS[1]
    return VERDICTS[2]


def uncertain_lengths(model: ModelLike, gpu: GPULike, cost: CostModel | None = None, *,
                      block_size: int = 16, min_tokens: int = 16,
                      max_tokens: int = 65_536) -> list[tuple[int, int]]:
    """The length ranges ``(first, last)`` in which :func:`verdict` names no winner.

    Each is a stretch of lengths around a crossing of
    :func:`~kvsim.engine.costs.crossover_tokens` where the band straddles 1, found with the
    same search (:func:`~kvsim.engine.costs.sign_changes`) on the band's two edges.
    """
    lo_n = check_int("min_tokens", min_tokens, min=1)
    hi_n = check_int("max_tokens", max_tokens, min=lo_n + 1, max=1_048_576)

    def straddles(n: int) -> bool:
        low, _, high = ratio_band(n, model, gpu, cost, block_size=block_size)
        return low <= 1 <= high

    edges = sorted(set(sign_changes(lambda n: ratio_band(n, model, gpu, cost,
                                                         block_size=block_size)[0] - 1, lo_n, hi_n))
                   | set(sign_changes(lambda n: ratio_band(n, model, gpu, cost,
                                                           block_size=block_size)[2] - 1,
                                      lo_n, hi_n)))
    bounds = [lo_n, *edges, hi_n + 1]
    ranges = []
    for a, b in itertools.pairwise(bounds):
        if a < b and straddles(a):
            ranges.append((a, b - 1))
    return ranges
