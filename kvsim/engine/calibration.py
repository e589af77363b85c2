"""Calibration of the cost model against measured kernel timings (Vidur's profiles).

Vidur (Agrawal et al., MLSys 2024) publishes per-layer operator timings of real
models on real GPUs: one row per batch of ``num_tokens`` tokens (1 to 4,096)
at one tensor-parallel degree (1 to 8), with the median milliseconds of the
four matmuls of a Llama layer (``attn_pre_proj`` = QKV, ``attn_post_proj``,
``mlp_up_proj`` = gate and up, ``mlp_down_proj``) and of its element-wise
operators. This module reads those CSV files (``<gpu>_<model>_mlp.csv``, as
the book's shared data folder names them), predicts every row with kvsim's own
cost model (:class:`kvsim.engine.costs.StepCost` on a one-layer model parsed from the
row's shape by :meth:`kvsim.ModelSpec.from_hf_config`) and fits the three
per-GPU constants. ``make bench`` prints the error table; the tests pin it.

The data are never copied into the repository; the fitted constants (three
numbers per GPU, in :mod:`kvsim.model.hardware`) are derived figures, with the
source named. Explained in chapter 3, *Swap versus recompute*.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kvsim.errors import KvsimError
from kvsim.model.hardware import get_gpu
from kvsim.model.spec import ModelSpec

from .step_cost import StepCost

if TYPE_CHECKING:
    from kvsim.model.hardware import GPUSpec

    from .costs import GPULike

__all__ = ["ProfileRow", "read_profiles", "predict", "error_table", "fit_gpu",
           "PROFILE_GPUS", "MATMULS", "ELEMENTWISE"]

#: Profile file prefix -> kvsim GPU preset.
PROFILE_GPUS = {"a100": "a100-80gb", "h100": "h100-80gb", "a40": "a40-48gb"}
MATMULS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")
ELEMENTWISE = ("input_layernorm", "attn_rope", "post_attention_layernorm", "mlp_act", "add")


@dataclass(frozen=True)
class ProfileRow:
    """One measured batch: the GPU, the model's layer shape, the batch, the medians (seconds)."""

    gpu: str
    model: str
    num_tokens: int
    tensor_parallel_size: int
    config: tuple[int, int, int, int, int]   # (hidden, heads, kv_heads, intermediate, vocab)
    matmul_s: float          # sum of the four matmuls' medians
    elementwise_s: float     # sum of the element-wise operators' medians


def read_profiles(folder: str | Path) -> list[ProfileRow]:
    """Every row of every ``<gpu>_<model>_mlp.csv`` in ``folder`` (a clear error if none)."""
    folder = Path(folder)
    files = sorted(folder.glob("*_mlp.csv"))
    if not files:
        raise KvsimError(f"profile folder {str(folder)!r} holds no <gpu>_<model>_mlp.csv file: "
                         f"expected Vidur's profiles (see its SOURCES.md)")
    rows = []
    for path in files:
        gpu_key, _, rest = path.name.partition("_")
        if gpu_key not in PROFILE_GPUS:
            raise KvsimError(f"profile {path.name}: GPU {gpu_key!r} is not known: expected one of "
                             f"{', '.join(PROFILE_GPUS)}")
        model = rest[: -len("_mlp.csv")]
        with path.open(newline="") as f:
            for r in csv.DictReader(f):
                cfg = (int(r["n_embd"]), int(r["n_head"]), int(r["n_kv_head"]),
                       int(r["n_expanded_embd"]), int(r["vocab_size"]))
                rows.append(ProfileRow(
                    gpu=PROFILE_GPUS[gpu_key], model=model, num_tokens=int(r["num_tokens"]),
                    tensor_parallel_size=int(r["num_tensor_parallel_workers"]), config=cfg,
                    matmul_s=1e-3 * sum(float(r[f"time_stats.{k}.median"]) for k in MATMULS),
                    elementwise_s=1e-3 * sum(float(r[f"time_stats.{k}.median"])
                                             for k in ELEMENTWISE)))
    return rows


def _layer_model(config: tuple[int, int, int, int, int]) -> ModelSpec:
    """A one-layer Llama-shaped model with the profile's widths, parsed like any config.json."""

    hidden, heads, kv_heads, inter, vocab = config
    return ModelSpec.from_hf_config(dict(
        model_type="llama", num_hidden_layers=1, hidden_size=hidden, num_attention_heads=heads,
        num_key_value_heads=kv_heads, intermediate_size=inter, vocab_size=vocab,
        torch_dtype="float16", tie_word_embeddings=False), name=f"layer-{hidden}")


_MODELS: dict[tuple[int, int, int, int, int], ModelSpec] = {}


def _cost(row: ProfileRow, gpu: GPUSpec) -> StepCost:

    key = row.config
    if key not in _MODELS:
        _MODELS[key] = _layer_model(key)
    return StepCost(_MODELS[key], gpu, tensor_parallel_size=row.tensor_parallel_size)


def predict(row: ProfileRow, gpu: GPULike | None = None) -> tuple[float, float]:
    """kvsim's (matmul seconds, element-wise seconds) for one profile row's batch."""

    cost = _cost(row, get_gpu(gpu or row.gpu))
    return cost.linear_s(row.num_tokens), cost.elementwise_s(row.num_tokens)


def error_table(rows: list[ProfileRow],
                gpus: dict[str, GPUSpec] | None = None) -> list[dict[str, Any]]:
    """Per GPU and model: rows, median and max |relative error|, share within 15 % (matmuls).

    ``gpus`` maps preset names to (possibly refitted) :class:`kvsim.GPUSpec`.
    """
    groups: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for r in rows:
        gpu = (gpus or {}).get(r.gpu, r.gpu)
        lin, elem = predict(r, gpu)
        groups.setdefault((r.gpu, r.model), []).append((lin / r.matmul_s - 1,
                                                        elem / r.elementwise_s - 1))
    table = []
    for (gpu, model), errs in sorted(groups.items()):
        e = np.abs(np.array(errs))
        table.append(dict(gpu=gpu, model=model, rows=len(errs),
                          matmul_median=float(np.median(e[:, 0])), matmul_max=float(e[:, 0].max()),
                          matmul_within_15=float((e[:, 0] <= 0.15).mean()),
                          elementwise_median=float(np.median(e[:, 1]))))
    return table


def prefill_error_band(rows: list[ProfileRow], *, min_tokens: int = 256,
                       percentiles: tuple[float, float] = (10, 90)) -> dict[str, tuple[float, float]]:
    """Per GPU: percentiles of the signed error ``predicted / measured - 1`` of one layer's
    matmuls plus element-wise operators, at batches of ``min_tokens`` or more on one GPU.

    What :data:`kvsim.engine.uncertainty.PREFILL_ERROR` states (rounded to 3 decimals).
    """
    errs: dict[str, list[float]] = {}
    for r in rows:
        if r.num_tokens < min_tokens or r.tensor_parallel_size != 1:
            continue
        lin, elem = predict(r)
        errs.setdefault(r.gpu, []).append((lin + elem) / (r.matmul_s + r.elementwise_s) - 1)
    return {gpu: (round(float(np.percentile(e, percentiles[0])), 3),
                  round(float(np.percentile(e, percentiles[1])), 3))
            for gpu, e in sorted(errs.items())}


def format_error_table(table: list[dict[str, Any]]) -> str:
    lines = [f"{'gpu':<10} {'profiled model':<22} {'rows':>5} {'median':>8} {'max':>7} "
             f"{'<=15%':>7} {'elementwise median':>19}"]
    for t in table:
        lines.append(f"{t['gpu']:<10} {t['model']:<22} {t['rows']:>5} "
                     f"{100 * t['matmul_median']:>7.1f}% {100 * t['matmul_max']:>6.1f}% "
                     f"{100 * t['matmul_within_15']:>6.1f}% {100 * t['elementwise_median']:>18.1f}%")
    return "\n".join(lines)


def fit_gpu(rows: list[ProfileRow], gpu_name: str) -> dict[str, Any]:
    """The (matmul_efficiency, memory_efficiency, kernel_latency_s) with the smallest worst error.

    The model is linear in 1/efficiency and in the latency, so the fit is a
    small minimax (Chebyshev) problem over the GPU's rows: a coarse grid, then
    a shrinking local search. Efficiencies are capped at 1.
    """

    gpu = get_gpu(gpu_name)
    mine = [r for r in rows if r.gpu == gpu.name]
    if not mine:
        raise KvsimError(f"no profile rows for gpu {gpu.name!r}")
    parts = []
    for r in mine:
        kernels, flops, nbytes = _cost(r, gpu).linear_work(r.num_tokens)
        parts.append((kernels, flops / gpu.peak_flops, nbytes / gpu.hbm_bytes_per_s, r.matmul_s))
    k, f, b, m = (np.array(c, dtype=float) for c in zip(*parts, strict=True))

    def worst(ec: float, em: float, lat: float) -> float:
        return float(np.abs((k * lat + f / ec + b / em) / m - 1).max())

    best = min((worst(ec, em, lat), ec, em, lat)
               for ec in np.arange(0.50, 1.0001, 0.05) for em in np.arange(0.50, 1.0001, 0.05)
               for lat in np.arange(0, 12.1e-6, 1e-6))
    step = np.array([0.025, 0.025, 0.5e-6])
    x = np.array(best[1:])
    while step[0] > 1e-4:
        improved = False
        for d in np.ndindex(3, 3, 3):
            cand = np.clip(x + (np.array(d) - 1) * step, [0.3, 0.3, 0.0], [1.0, 1.0, 1e-4])
            e = worst(*cand)
            if e < best[0] - 1e-12:
                best, x, improved = (e, *cand), cand, True
        if not improved:
            step = step / 2
    ec, em, lat = (float(v) for v in x)
    return dict(gpu=gpu.name, matmul_efficiency=round(ec, 2), memory_efficiency=round(em, 2),
                kernel_latency_s=round(lat * 2e6) / 2e6, worst=best[0])


def refit(rows: list[ProfileRow]) -> dict[str, GPUSpec]:
    """Presets with freshly fitted constants, for every GPU the rows cover."""

    out = {}
    for name in sorted({r.gpu for r in rows}):
        fit = fit_gpu(rows, name)
        out[name] = replace(get_gpu(name), matmul_efficiency=fit["matmul_efficiency"],
                            memory_efficiency=fit["memory_efficiency"],
                            kernel_latency_s=fit["kernel_latency_s"])
    return out

