"""The cost model's constants: :class:`CostModel`, the user's overrides of the step-time formula.

Every constant is also an engine option of :func:`kvsim.simulate`; each is checked here, in
one line naming the value and its range (:class:`kvsim.errors.KvsimError`). The formula that
reads them is :class:`kvsim.engine.step_cost.StepCost` (compiled, where the engine is:
kvsim/engine/native.py); this module stays interpreted, so that a wrong type or value of the
user's gets this one-line error on both engines, never a compiled class's ``TypeError``.
Explained in chapter 3, *Swap versus recompute*.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from kvsim.errors import KvsimError, check_float

__all__ = ["ATTENTION_EFFICIENCY", "CostModel"]

#: Fraction of dense peak FLOPs that FlashAttention-style attention kernels
#: reach. FlashAttention-2 reports "50-73% of the theoretical maximum FLOPs/s
#: on A100" (Dao, 2023); serving batches (causal, variable length) sit at the
#: low end, so kvsim uses 0.5 on every GPU.
#: NOTE(prefill-attention-efficiency): Vidur's measured A100 prefill kernels reach about
#: 14% (:mod:`kvsim.engine.attention_profiles`, 0.31x of kvsim's time); kvsim keeps the paper's
#: figure, since one 2024 kernel on one GPU generation is not the H100's FlashAttention-3.
ATTENTION_EFFICIENCY = 0.5


@dataclass(frozen=True)
class CostModel:
    """Constants of the step-time model that are not properties of a GPU.

    Every one is also an engine option of :func:`kvsim.simulate`. ``None``
    means "the default": the GPU preset's calibrated figure, or the engine
    mode's CPU overhead.

    Attributes:
        step_overhead_s: fixed CPU time of every step; default by engine mode
            (:data:`kvsim.engine.step_cost.CPU_OVERHEAD`).
        seq_overhead_s: CPU time per scheduled sequence per step.
        matmul_efficiency: override the GPU's fitted matmul efficiency.
        memory_efficiency: override the GPU's fitted HBM efficiency.
        kernel_latency_s: override the GPU's fitted per-kernel latency.
        attention_efficiency: fraction of peak FLOPs attention kernels reach.
        swap_copy_overhead_s: fixed cost of one GPU<->CPU block copy (one
            block of one layer's K or V): a ``cudaMemcpyAsync`` call, a few
            microseconds.
        pcie_bytes_per_s: effective one-direction PCIe bandwidth; ``None``
            uses the GPU preset's figure.
        step_time_scale: multiply every part of a step's time (CPU, kernels,
            attention, all-reduce) by this factor, leaving the PCIe copies of a
            swap alone: one knob that makes the whole GPU (and its host)
            uniformly slower or faster. ``kvsim twin`` fits it to a real
            server's inter-token histogram (:mod:`kvsim.observe.twin`).
    """

    step_overhead_s: float | None = None
    seq_overhead_s: float | None = None
    matmul_efficiency: float | None = None
    memory_efficiency: float | None = None
    kernel_latency_s: float | None = None
    attention_efficiency: float = ATTENTION_EFFICIENCY
    swap_copy_overhead_s: float = 3e-6
    pcie_bytes_per_s: float | None = None
    step_time_scale: float = 1.0

    def __post_init__(self) -> None:
        for name, lo, hi in (("step_overhead_s", 0, 10), ("seq_overhead_s", 0, 1),
                             ("kernel_latency_s", 0, 1)):
            if getattr(self, name) is not None:
                check_float(name, getattr(self, name), min=lo, max=hi)
        for name in ("matmul_efficiency", "memory_efficiency"):
            if getattr(self, name) is not None:
                check_float(name, getattr(self, name), min=0, max=1, min_open=True)
        check_float("attention_efficiency", self.attention_efficiency, min=0, max=1, min_open=True)
        check_float("swap_copy_overhead_s", self.swap_copy_overhead_s, min=0, max=1)
        if self.pcie_bytes_per_s is not None:
            check_float("pcie_bytes_per_s", self.pcie_bytes_per_s, min=0, min_open=True)
        check_float("step_time_scale", self.step_time_scale, min=0.01, max=100)

    @classmethod
    def names(cls) -> list[str]:
        """The constants' names (each is also an engine option of ``simulate``)."""
        return [f.name for f in fields(cls)]

    def with_options(self, **overrides: Any) -> CostModel:   # checked by __post_init__
        unknown = set(overrides) - set(self.names())
        if unknown:
            raise KvsimError(f"cost-model constant {sorted(unknown)[0]!r} is not known: "
                             f"expected one of {', '.join(self.names())}")
        return replace(self, **overrides)

