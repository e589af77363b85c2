"""Number formats: the bytes per element of each, and which ones a ``config.json`` serves in.

Explained in chapter 1, *Bytes per token and capacity*.

:data:`DTYPE_BYTES` is the one table of bytes per element (weights, KV cache
and the stateful layers' state); :func:`serving_dtypes` reads a config's
``torch_dtype`` and quantisation as vLLM's ``--dtype auto`` serves them.
"""
from __future__ import annotations

from kvsim.errors import KvsimError

from .config_json import QUANTIZATION_METHODS, HfConfig, nested_config, text_config

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


def serving_dtypes(cfg: HfConfig) -> tuple[str, str | None]:
    """``(dtype, weight_dtype)`` a config is served in: ``torch_dtype``, and ``"fp8"`` for FP8 weights."""
    cfg = text_config(cfg)
    raw = cfg.get("torch_dtype", cfg.get("dtype"))
    if raw is None:
        dtype = "bf16"
    elif isinstance(raw, str) and raw in _HF_DTYPES:
        dtype = _HF_DTYPES[raw]
    else:
        raw = raw if len(repr(raw)) <= 40 else f"{repr(raw)[:37]}..."
        raise KvsimError(f"torch_dtype={raw!r} is not known: expected one of "
                         f"{', '.join(sorted(_HF_DTYPES))}")
    weight_dtype = None
    q = nested_config(cfg, "quantization_config", "quant_method and its parameters")
    if q is not None:
        method = q.get("quant_method")
        if not isinstance(method, str) or method.lower() not in QUANTIZATION_METHODS:
            shown = repr(method) if len(repr(method)) <= 40 else repr(method)[:37] + "..."
            raise KvsimError(f"quantization_config quant_method={shown} is not a method vLLM "
                             f"loads: expected one of {', '.join(QUANTIZATION_METHODS)}")
        if method.lower() == "fp8":
            weight_dtype = "fp8"
    return dtype, weight_dtype
