"""The cost model's face: its constants, the step-time formula, and what a swap or a recompute costs.

Explained in chapter 3, *Swap versus recompute*. The formula (one, in one place) is
:class:`StepCost` (:mod:`kvsim.engine.step_cost`, compiled with the engine), and the
user's constants :class:`CostModel` (:mod:`kvsim.engine.cost_model`); both are named here
too. This module adds chapter 3's functions, which take the reader's numbers and check them
(:func:`swap_time_s`, :func:`recompute_time_s`, :func:`swap_round_trip_s`,
:func:`crossover_tokens`), and stays interpreted, so that a bad argument gets its one-line
error on both engines.
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from kvsim.errors import check_int
from kvsim.model.hardware import get_gpu
from kvsim.model.memory import kv_bytes_per_token
from kvsim.model.presets import get_model

from .blocks.counting import blocks_for
from .cost_model import ATTENTION_EFFICIENCY, CostModel
from .step_cost import (
    ALLREDUCE_LATENCY_S,
    CPU_OVERHEAD,
    ELEMENTWISE_KERNELS_PER_LAYER,
    ELEMENTWISE_LATENCY_FACTOR,
    ELEMENTWISE_PASSES,
    AttentionSpan,
    StepCost,
    StepTime,
    attention_pairs,
    window_kv_tokens,
    window_pairs,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any, TypeAlias

    from kvsim.model.hardware import GPUSpec
    from kvsim.model.spec import ModelSpec

    #: What :func:`kvsim.model.presets.get_model` and :func:`kvsim.model.hardware.get_gpu` take:
    #: a preset name, a spec, or (a model) a ``config.json`` path or its parsed dict.
    ModelLike: TypeAlias = str | Path | Mapping[str, Any] | ModelSpec
    GPULike: TypeAlias = str | GPUSpec

__all__ = ["CostModel", "StepCost", "StepTime", "swap_time_s", "recompute_time_s", "transfer_copies",
           "attention_pairs", "window_pairs", "window_kv_tokens", "AttentionSpan", "ATTENTION_EFFICIENCY",
           "CPU_OVERHEAD", "ELEMENTWISE_KERNELS_PER_LAYER", "ELEMENTWISE_PASSES",
           "ELEMENTWISE_LATENCY_FACTOR", "ALLREDUCE_LATENCY_S", "sign_changes"]


def transfer_copies(blocks: int, kv_layers: int, kv_factor: int = 2) -> int:
    """Number of block copies a swap issues: one per block, per layer, for K and for V."""
    return blocks * kv_layers * kv_factor


def swap_time_s(tokens: int, kv_bytes_per_token: int, pcie_bytes_per_s: float, *,
                block_size: int = 16, kv_layers: int = 0, kv_factor: int = 2,
                copy_overhead_s: float = 0.0) -> float:
    """One-way time to copy a sequence's KV between GPU and CPU.

    ``tokens`` are rounded up to whole blocks (a swap moves blocks). With
    ``copy_overhead_s=0`` this is the pure bandwidth figure of seeds 000/001
    (1,100 tokens x 0.5 MiB at 20 GB/s ~ 30 ms; 4K tokens x 128 KiB over PCIe
    4.0 ~ 17 ms each way, 34 ms round trip). Explained in chapter 3.

    NOTE(swap-clean-pcie): the copies run at the clean effective bandwidth plus a
    fixed overhead per copy, with no link contention and no staging buffer.
    """
    blocks = blocks_for(int(tokens), int(block_size))
    nbytes = blocks * block_size * int(kv_bytes_per_token)
    copies = transfer_copies(blocks, kv_layers, kv_factor)
    return nbytes / float(pcie_bytes_per_s) + copies * copy_overhead_s


def recompute_time_s(tokens: int, model: ModelLike, gpu: GPULike, cost: CostModel | None = None, *,
                     tensor_parallel_size: int = 1, engine: str = "v1") -> float:
    """Time of re-prefilling ``tokens`` tokens of one request alone, as one step.

    The same formula as every engine step (:meth:`StepCost.prefill_s`): the
    CPU overhead, every matmul, the quadratic attention and one output-head
    row. Explained in chapter 3.
    """

    n = check_int("tokens", tokens, min=1)
    return StepCost(get_model(model), get_gpu(gpu), cost, tensor_parallel_size=tensor_parallel_size,
                    engine=engine).prefill_s(n)


def seconds_per_prefill_token(model: ModelLike, gpu: GPULike, *, tokens: int = 2048,
                              cost: CostModel | None = None,
                              tensor_parallel_size: int = 1) -> float:
    """Average prefill time per token of a ``tokens``-long prompt in one step."""
    return recompute_time_s(tokens, model, gpu, cost, tensor_parallel_size=tensor_parallel_size) \
        / tokens



# --------------------------------------------------------------- chapter 3: the crossover

def swap_round_trip_s(tokens: int, model: ModelLike, gpu: GPULike, cost: CostModel | None = None, *,
                      block_size: int = 16) -> float:
    """Out and back in: twice :func:`swap_time_s` with the blocks' copies, as the engine charges it.

    ``cost`` may set ``pcie_bytes_per_s`` (else the GPU preset's) and
    ``swap_copy_overhead_s``. Explained in chapter 3.
    """

    n = check_int("tokens", tokens, min=1)
    bs = check_int("block_size", block_size, min=1, max=4096)
    m, g, cost = get_model(model), get_gpu(gpu), cost or CostModel()
    return 2 * swap_time_s(n, kv_bytes_per_token(m), cost.pcie_bytes_per_s or g.pcie_bytes_per_s,
                           block_size=bs, kv_layers=m.kv_layers, kv_factor=m.kv_tensors,
                           copy_overhead_s=cost.swap_copy_overhead_s)


def crossover_tokens(model: ModelLike, gpu: GPULike, cost: CostModel | None = None, *,
                     block_size: int = 16,
                     min_tokens: int = 16, max_tokens: int = 65_536) -> list[int]:
    """Sequence lengths at which recompute and a swap round trip cost the same.

    Each entry is the first length (in tokens, between ``min_tokens`` and
    ``max_tokens``) at which :func:`recompute_time_s` and
    :func:`swap_round_trip_s` change order; an empty list means one of them is
    cheaper at every length in the range. Recompute has a fixed part (a whole
    forward pass reads every weight) and a quadratic one (attention), a swap
    neither, so there can be two crossings. Explained in chapter 3.
    """
    lo_n = check_int("min_tokens", min_tokens, min=1)
    hi_n = check_int("max_tokens", max_tokens, min=lo_n + 1, max=1_048_576)

    def gap(n: int) -> float:
        return recompute_time_s(n, model, gpu, cost) - swap_round_trip_s(n, model, gpu, cost,
                                                                         block_size=block_size)

    return sign_changes(gap, lo_n, hi_n)


def sign_changes(gap: Callable[[int], float], lo_n: int, hi_n: int) -> list[int]:
    """The first lengths in ``[lo_n, hi_n]`` at which ``gap(n) > 0`` changes (quarter-octave scan,
    then bisection to the token): the search behind :func:`crossover_tokens`."""

    grid = sorted({lo_n, hi_n} | {int(round(lo_n * 2 ** (k / 4))) for k in range(200)
                                   if lo_n * 2 ** (k / 4) < hi_n})
    signs = [(n, gap(n) > 0) for n in grid]
    found = []
    for (a, sa), (b, sb) in itertools.pairwise(signs):
        if sa == sb:
            continue
        while b - a > 1:                      # bisect to the first length of the new order
            mid = (a + b) // 2
            if (gap(mid) > 0) == sa:
                a = mid
            else:
                b = mid
        found.append(b)
    return found
