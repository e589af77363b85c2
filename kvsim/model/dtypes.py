"""Number formats: the bytes per element of each, and which ones a ``config.json`` serves in.

Explained in chapter 1, *Bytes per token and capacity*.

:data:`DTYPE_BYTES` is the one table of bytes per element (weights, KV cache
and the stateful layers' state); :func:`serving_dtypes` reads a config's
``torch_dtype`` and quantisation as vLLM's ``--dtype auto`` serves them.
"""
from __future__ import annotations

from kvsim.errors import KvsimError

from .config_json import text_config

__all__ = ["DTYPE_BYTES", "serving_dtypes"]

#: Bytes per element of the number formats kvsim knows (weights and KV cache).
DTYPE_BYTES: dict[str, int] = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1}

# Hugging Face ``torch_dtype`` strings -> kvsim dtype names. A float32
# checkpoint is served in 16-bit by vLLM's ``--dtype auto`` (it never serves
# fp32 by default), so it maps to bf16.
_HF_DTYPES = {
    "bfloat16": "bf16", "bf16": "bf16",
    "float16": "fp16", "fp16": "fp16", "half": "fp16",
    "float32": "bf16", "float": "bf16", "fp32": "bf16",
}


def serving_dtypes(cfg: dict) -> tuple[str, str | None]:
    """``(dtype, weight_dtype)`` a config is served in: ``torch_dtype``, and ``"fp8"`` for FP8 weights."""
    cfg = text_config(cfg)
    raw = cfg.get("torch_dtype", cfg.get("dtype"))
    if raw is None:
        dtype = "bf16"
    elif isinstance(raw, str) and raw in _HF_DTYPES:
        dtype = _HF_DTYPES[raw]
    else:
        raise KvsimError(f"torch_dtype={raw!r} is not known: expected one of "
                         f"{', '.join(sorted(_HF_DTYPES))}")
    weight_dtype = None
    q = cfg.get("quantization_config")
    if isinstance(q, dict) and str(q.get("quant_method", "")).lower() == "fp8":
        weight_dtype = "fp8"
    return dtype, weight_dtype
