"""The cost model: how long one engine step takes, and what a swap or a recompute costs.

A roofline-style model with every constant named and overridable. Explained in
chapter 3, *Swap versus recompute* (transfer and prefill costs) and used by the
engine for every step.

One engine step (one forward pass over the batch) takes::

    step_s = step_overhead_s
           + max(flops / (peak_flops * mfu),             # compute-bound part
                 bytes_read / (hbm_bytes_per_s * hbm_efficiency))   # memory-bound part
           + swap_s                                        # blocking PCIe copies, if any

* ``flops`` = 2 x active_params per token processed (prefill and decode tokens
  alike) + causal attention: 4 x attention layers x (heads x head_dim) x context
  per token (QK^T and AV). The attention term is why re-prefilling a long
  request costs more than linearly (chapter 2's collapse experiment).
* ``bytes_read`` = the weights once per step + the KV of every token attended
  (each decoding sequence reads its whole context; a prefill chunk reads the
  context before it and itself).
* ``swap_s`` = bytes / effective PCIe bandwidth + copies x ``swap_copy_overhead_s``
  where copies = blocks x layers x 2 (one copy per block per layer for K and
  for V, as vLLM's ``swap_blocks`` does), so small blocks make swap slow — the
  PagedAttention paper's block-size result.

Calibration (chapter 3 and 5 reproduce these): with ``mfu=0.31`` a 7B model
(6.74 B parameters) on the seeds' 48 GB card (362 TFLOPS dense FP16) prefills
at ~0.12 ms per token (seed 000: "an illustrative 0.12 ms per prefill token");
``hbm_efficiency`` and ``step_overhead_s`` are set so that Belgavi's Book Store
(1.5 req/s, 850-token prompts, 250-token answers) settles at about 21 running
requests (seed 000).
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

from .errors import KvsimError, check_float

__all__ = ["CostModel", "swap_time_s", "recompute_time_s", "transfer_copies"]


@dataclass(frozen=True)
class CostModel:
    """Named constants of the step-time model (see the module docstring).

    Attributes:
        step_overhead_s: fixed cost of every engine step (scheduling, kernel
            launches, sampling, detokenisation); seconds.
        mfu: fraction of the GPU's dense peak FLOPs reached by batched matmuls.
        hbm_efficiency: fraction of datasheet HBM bandwidth reached by decode.
        swap_copy_overhead_s: fixed cost of one GPU<->CPU block copy (one block
            of one layer's K or V); seconds.
        pcie_bytes_per_s: effective one-direction PCIe bandwidth; ``None``
            uses the GPU preset's figure.
    """

    step_overhead_s: float = 0.010
    mfu: float = 0.31
    hbm_efficiency: float = 0.82
    swap_copy_overhead_s: float = 5e-6
    pcie_bytes_per_s: float | None = None

    def __post_init__(self):
        check_float("step_overhead_s", self.step_overhead_s, min=0, max=10)
        check_float("mfu", self.mfu, min=0, max=1, min_open=True)
        check_float("hbm_efficiency", self.hbm_efficiency, min=0, max=1, min_open=True)
        check_float("swap_copy_overhead_s", self.swap_copy_overhead_s, min=0, max=1)
        if self.pcie_bytes_per_s is not None:
            check_float("pcie_bytes_per_s", self.pcie_bytes_per_s, min=0, min_open=True)

    @classmethod
    def names(cls) -> list[str]:
        """The constants' names (each is also an engine option of ``simulate``)."""
        return [f.name for f in fields(cls)]

    def with_options(self, **overrides) -> "CostModel":
        unknown = set(overrides) - set(self.names())
        if unknown:
            raise KvsimError(f"cost-model constant {sorted(unknown)[0]!r} is not known: "
                             f"expected one of {', '.join(self.names())}")
        return replace(self, **overrides)


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
    """
    blocks = -(-int(tokens) // int(block_size))
    nbytes = blocks * block_size * int(kv_bytes_per_token)
    copies = transfer_copies(blocks, kv_layers, kv_factor)
    return nbytes / float(pcie_bytes_per_s) + copies * copy_overhead_s


def recompute_time_s(tokens: int, model, gpu, cost: CostModel | None = None) -> float:
    """Compute time of re-prefilling ``tokens`` tokens alone (one prefill).

    Linear part 2 x active_params per token plus causal attention; at the
    default ``mfu`` a 7B model on the 48 GB card costs ~0.12 ms per token, so
    1,100 tokens take ~130 ms (seed 000). Explained in chapter 3.
    """
    from .models import get_model
    from .hardware import get_gpu

    model, gpu = get_model(model), get_gpu(gpu)
    cost = cost or CostModel()
    n = int(tokens)
    flops = 2 * model.active_params * n + attention_flops(model, 0, n)
    return flops / (gpu.peak_flops * cost.mfu)


def attention_flops(model, context_before: int, chunk: int) -> int:
    """FLOPs of causal attention for ``chunk`` new tokens after ``context_before`` tokens.

    Each new token at position x attends to x tokens: QK^T and AV cost
    2 x q_dim x x FLOPs each per attention layer.
    """
    c, s = int(chunk), int(context_before)
    attended = c * s + c * (c + 1) // 2
    return 4 * model.kv_layers * model.num_attention_heads * model.head_dim * attended
