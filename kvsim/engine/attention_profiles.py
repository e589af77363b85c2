"""Measured attention kernels, and kvsim's error against them.

The shared profiles (:mod:`kvsim.engine.calibration`) hold the matmuls and the
element-wise operators of a layer, not its attention. Vidur profiles attention
too (``data/profiling/compute/<gpu>/<model>/attention.csv``), but microsoft/vidur
keeps those files as Git LFS pointers; the rows below are medians read from a
full copy, sw5sh/cs378-assignment3@7ac2fe9 (MIT, Copyright (c) Microsoft
Corporation), for Llama-2-7B (32 query heads, 32 KV heads, head size 128, block
size 16) with vLLM's FLASH_ATTENTION backend. Decode rows are ``attn_decode``
plus ``attn_output_reshape``; prefill rows are ``attn_prefill`` of one prompt
with no cached context. Microseconds per layer.

What they show, and what kvsim takes from them:

* **A floor per kernel.** The smallest decode kernel (one sequence, 32 tokens of
  context) takes 9-10 µs on the A100, where a matmul's fitted launch latency is
  7.5 µs: :attr:`kvsim.GPUSpec.attention_latency_s`.
* **A cost per sequence.** At a short context a decode kernel grows by about
  1.3 µs (A100) or 2.9 µs (A40) per sequence, far more than the KV it reads.
  kvsim charges :attr:`kvsim.GPUSpec.attention_s_per_seq_head` per sequence and
  per KV head of the GPU (the kernel's work units are sequence x KV head), so a
  grouped-query model pays less per sequence than Llama-2-7B.
* **Prefill is slower than the FLOPs say.** One 2,048-token prompt takes
  803 µs on the A100: about 14 % of peak on its causal FLOPs, where kvsim
  assumes :data:`kvsim.engine.costs.ATTENTION_EFFICIENCY` (50 %, the
  FlashAttention-2 paper's figure for long sequences). kvsim keeps 50 %
  (``NOTE(prefill-attention-efficiency)``): the rows are one GPU generation and
  one 2024 kernel, the H100's FlashAttention-3 runs far nearer its peak, and no
  H100 row exists to fit. :func:`attention_error_table` prints the gap.

``make bench`` prints :func:`attention_error_table`; tests/test_attention_profiles.py
pins the fit. Explained in chapter 3, *Swap versus recompute*.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kvsim.model.hardware import get_gpu
from kvsim.model.presets import get_model

from .step_cost import StepCost, attention_pairs

if TYPE_CHECKING:
    from .costs import GPULike

__all__ = ["AttentionRow", "ATTENTION_MEASURED", "ATTENTION_SOURCE", "predict_attention_s",
           "attention_error_table", "format_attention_table", "fit_decode_attention"]

ATTENTION_SOURCE = ("Vidur attention.csv (microsoft/vidur data/profiling/compute/<gpu>/"
                    "meta-llama/Llama-2-7b-hf; full copy in sw5sh/cs378-assignment3@7ac2fe9), "
                    "FLASH_ATTENTION, medians")


@dataclass(frozen=True)
class AttentionRow:
    """One measured kernel: GPU preset, ``kind`` ("decode" or "prefill"), ``batch`` sequences
    of ``tokens`` tokens each (decode: the context each reads; prefill: the prompt), and the
    measured median in seconds per layer."""

    gpu: str
    kind: str
    batch: int
    tokens: int
    measured_s: float


def _rows(gpu: str, kind: str, table: tuple[tuple[int, int, float], ...]) -> list[AttentionRow]:
    return [AttentionRow(gpu, kind, b, t, us * 1e-6) for b, t, us in table]


#: Llama-2-7B per-layer attention medians (µs) by (batch, tokens), from :data:`ATTENTION_SOURCE`.
ATTENTION_MEASURED: tuple[AttentionRow, ...] = tuple(
    _rows("a100-80gb", "decode", (
        (1, 32, 10), (1, 512, 15), (1, 2048, 30),
        (8, 32, 20), (8, 512, 75), (8, 2048, 217),
        (32, 32, 50), (32, 512, 187), (32, 2048, 631), (32, 4032, 1233),
        (80, 2048, 1437), (80, 4032, 2830)))
    + _rows("a100-80gb", "prefill", ((1, 128, 19), (1, 512, 109), (1, 2048, 803)))
    + _rows("a40-48gb", "decode", (
        (1, 32, 9), (8, 32, 28), (32, 32, 98), (80, 32, 233),
        (32, 576, 514), (64, 576, 979), (80, 576, 1196))))


def _cost(gpu: GPULike) -> StepCost:
    return StepCost(get_model("llama-2-7b"), get_gpu(gpu))


def predict_attention_s(row: AttentionRow, gpu: GPULike | None = None) -> float:
    """kvsim's seconds for one layer of the row's attention (the same terms a step charges:
    :meth:`StepCost.attention_launch_s` and the context-dependent part)."""
    cost = _cost(gpu or row.gpu)
    if row.kind == "decode":
        total = cost.attention_launch_s(row.batch) \
            + cost.decode_s_per_token * row.batch * row.tokens
    else:
        total = cost.attention_launch_s(row.batch) + row.batch * cost.prefill_attention_s(
            attention_pairs(0, row.tokens), row.tokens)
    return total / cost.attention_kernels


def attention_error_table(rows: Iterable[AttentionRow] = ATTENTION_MEASURED
                          ) -> list[dict[str, Any]]:
    """Per GPU and kind: rows, median and max |predicted / measured - 1|, and the median ratio."""
    groups: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        groups.setdefault((r.gpu, r.kind), []).append(predict_attention_s(r) / r.measured_s)
    table = []
    for (gpu, kind), ratios in sorted(groups.items()):
        a = np.array(ratios)
        table.append(dict(gpu=gpu, kind=kind, rows=len(a), median=float(np.median(np.abs(a - 1))),
                          max=float(np.abs(a - 1).max()), median_ratio=float(np.median(a))))
    return table


def format_attention_table(table: list[dict[str, Any]]) -> str:
    lines = [f"{'gpu':<10} {'kind':<8} {'rows':>5} {'median':>8} {'max':>7} {'kvsim/measured':>15}"]
    for t in table:
        lines.append(f"{t['gpu']:<10} {t['kind']:<8} {t['rows']:>5} {100 * t['median']:>7.1f}% "
                     f"{100 * t['max']:>6.1f}% {t['median_ratio']:>15.2f}")
    return "\n".join(lines)


def fit_decode_attention(gpu: str, rows: Iterable[AttentionRow] = ATTENTION_MEASURED
                         ) -> tuple[float, float]:
    """(attention_latency_s, attention_s_per_seq_head) that minimise the worst relative error
    over ``gpu``'s decode rows, on a grid of 0.1 µs and 1 ns: how the preset figures were found."""
    cost = _cost(gpu)
    heads, layers = get_model("llama-2-7b").num_kv_heads, cost.attention_kernels
    decode = [r for r in rows if r.gpu == gpu and r.kind == "decode"]
    measured = np.array([r.measured_s for r in decode])
    batch = np.array([r.batch for r in decode], dtype=float)
    context = np.array([cost.decode_s_per_token * r.batch * r.tokens / layers for r in decode])
    best = (np.inf, 0.0, 0.0)
    for floor in np.arange(5e-6, 15e-6, 1e-7):
        for per_head in np.arange(0, 150e-9, 1e-9):
            worst = float(np.max(np.abs((floor + batch * per_head * heads + context)
                                        / measured - 1)))
            if worst < best[0]:
                best = (worst, float(floor), float(per_head))
    return round(best[1], 7), round(best[2], 9)
