"""A config's architecture: the figures a model spec needs, read from a ``config.json``.

Explained in chapter 1, *Bytes per token and capacity*.

:func:`parse_architecture` gathers the layer count, the widths, the heads
(GQA/MHA/MQA, or MLA's latent), the layer kinds and FFNs, the sliding or
chunked window, the stateful layers' state and the context limit vLLM derives
(``_get_and_verify_max_len``). :class:`~kvsim.model.spec.ModelSpec` and
:func:`~kvsim.model.parameters.estimate_params` build on it.
"""
from __future__ import annotations

from typing import TypedDict

from kvsim.errors import KvsimError

from .config_json import (
    CONFIG_BOUNDS,
    HfConfig,
    first_set,
    nested_config,
    optional_int,
    required_int,
    strict_int,
    text_config,
)
from .dtypes import DTYPE_BYTES, serving_dtypes
from .layer_kinds import KV_KINDS, WINDOW_KINDS, layer_ffns, layer_plan
from .layer_state import layer_state_elems, temporal_state_bytes

__all__ = ["parse_architecture", "Architecture"]

# the length fields vLLM's _get_and_verify_max_len reads (vllm/config/model.py)
_MAX_LEN_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
                 "model_max_length", "max_target_positions", "max_sequence_length",
                 "max_seq_length", "seq_len")


#: The largest RoPE scaling factor kvsim accepts (real ones are 2 to 64).
_MAX_ROPE_FACTOR = 1024

#: The most layers a config may declare: real models have at most a few hundred (Llama 3.1
#: 405B: 126); a larger number is a typo, and kvsim keeps a list per layer.
MAX_LAYERS = 4096


class Architecture(TypedDict):
    """What :func:`parse_architecture` reads from a config (widths in elements, per layer lists
    one entry a layer)."""

    num_layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate_size: int | None
    kv_lora_rank: int
    rope_dim: int
    kinds: list[str]
    ffns: list[str]
    kv_layers: int
    sliding_layers: int
    sliding_window: int | None
    state_conv_elems: int
    state_temporal_elems: int
    max_model_len: int


def parse_architecture(cfg: HfConfig, *, require_kv: bool = True) -> Architecture:
    """The figures a spec needs, from a config; ``require_kv`` refuses a model with no KV layer."""
    cfg = text_config(cfg)
    mt = str(cfg.get("model_type", ""))
    n = required_int(cfg, "num_hidden_layers", max=MAX_LAYERS)
    hidden = required_int(cfg, "hidden_size")
    kinds, declared_ffns = layer_plan(cfg, n)
    kv_layers = sum(k in KV_KINDS for k in kinds)
    if kv_layers or "linear" in kinds:
        heads = required_int(cfg, "num_attention_heads")
    else:
        heads = optional_int(cfg, "num_attention_heads", 1, min=1)
    required_int(cfg, "vocab_size")
    ffns = layer_ffns(cfg, kinds, declared_ffns)
    kv_heads = optional_int(cfg, "num_key_value_heads", heads, min=1)
    kv_lora_rank = optional_int(cfg, "kv_lora_rank", 0)
    rope_dim = optional_int(cfg, "qk_rope_head_dim", 0)
    if kv_lora_rank:
        head_dim = optional_int(cfg, "qk_nope_head_dim", 0) + rope_dim
        if head_dim <= 0:
            raise KvsimError("MLA config (kv_lora_rank > 0) needs qk_nope_head_dim and "
                             "qk_rope_head_dim: expected integers >= 1")
    else:
        if kv_heads > heads or heads % kv_heads:
            raise KvsimError(f"num_key_value_heads={kv_heads} does not divide "
                             f"num_attention_heads={heads}: expected a divisor of {heads}")
        head_dim = _attention_head_dim(cfg, mt, hidden, heads, needed=kv_layers > 0)
    conv_elems = temporal_elems = 0
    state_error = None
    try:
        for kind in kinds:
            conv, temporal = layer_state_elems(cfg, kind, hidden, heads, head_dim)
            conv_elems += conv
            temporal_elems += temporal
    except KvsimError as exc:
        if kv_layers or not require_kv:
            raise
        state_error = exc
    if kv_layers == 0 and require_kv:
        raise _no_kv_cache_error(cfg, kinds, None if state_error else (conv_elems, temporal_elems))
    window_kinds = [k for k in kinds if k in WINDOW_KINDS]
    window = _attention_window(cfg, set(window_kinds)) if window_kinds else None
    inter = cfg.get("ffn_dim", cfg.get("intermediate_size"))
    inter = strict_int("intermediate_size", inter, min=1) if inter is not None else None
    return Architecture(num_layers=n, hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
                        intermediate_size=inter,
                        kv_lora_rank=kv_lora_rank, rope_dim=rope_dim, kinds=kinds, ffns=ffns,
                        kv_layers=kv_layers, sliding_layers=len(window_kinds),
                        sliding_window=window, state_conv_elems=conv_elems,
                        state_temporal_elems=temporal_elems, max_model_len=_max_model_len(cfg))


def _attention_head_dim(cfg: HfConfig, mt: str, hidden: int, heads: int, *, needed: bool) -> int:
    """``head_dim`` (or ``attention_head_dim``), else hidden / heads; Zamba2 attends over 2 x hidden."""
    key, value = first_set(cfg, ("head_dim", "attention_head_dim") if mt != "mamba2" else ())
    if key is not None:
        return strict_int(key, value, min=1)
    width = 2 * hidden if mt == "zamba2" else hidden      # transformers' Zamba2Config
    if width % heads:
        if not needed:
            return 1
        raise KvsimError(f"hidden_size={hidden} is not a multiple of "
                         f"num_attention_heads={heads} and head_dim is missing: "
                         f"expected an explicit head_dim")
    return width // heads


def _attention_window(cfg: HfConfig, window_kinds: set[str]) -> int:
    """The one window of the windowed layers: ``sliding_window``, RecurrentGemma's
    ``attention_window_size``, or Llama 4's ``attention_chunk_size``."""
    windows = {}
    if "sliding" in window_kinds:
        key, value = first_set(cfg, ("sliding_window", "attention_window_size"))
        if key is None:
            raise KvsimError("layer_types has sliding_attention layers but sliding_window is "
                             "missing: expected an integer >= 1")
        windows[key] = strict_int(key, value, min=1)
    if "chunked" in window_kinds:
        if cfg.get("attention_chunk_size") is None:
            raise KvsimError("layer_types has chunked_attention layers but attention_chunk_size "
                             "is missing: expected an integer >= 1")
        windows["attention_chunk_size"] = strict_int("attention_chunk_size",
                                                      cfg["attention_chunk_size"], min=1)
    if len(set(windows.values())) > 1:
        shown = ", ".join(f"{k}={v}" for k, v in windows.items())
        raise KvsimError(f"the windowed layers have two windows ({shown}): expected one window, "
                         f"as kvsim keeps a single sliding_window")
    return next(iter(windows.values()))


def _no_kv_cache_error(cfg: HfConfig, kinds: list[str], state: tuple[int, int] | None) -> KvsimError:
    counts = ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds))
    if state is None:
        held = "only a fixed per-request state"
    else:
        dtype = serving_dtypes(cfg)[0]
        nbytes = state[0] * DTYPE_BYTES[dtype] + state[1] * temporal_state_bytes(cfg, dtype)
        held = f"only a fixed per-request state of {nbytes:,} bytes"
    return KvsimError(f"config.json has no attention layer holding a KV cache ({counts} layers): "
                      f"the model keeps {held}, so a paged KV-cache simulation does not apply: "
                      f"expected at least one full, sliding, chunked or hybrid attention layer")


def _max_model_len(cfg: HfConfig) -> int:
    """The context limit vLLM derives from a config (``_get_and_verify_max_len``).

    The smallest of the length fields vLLM looks at, ``model_max_length``
    taking precedence, 2048 when none is set (vLLM's fallback); then a
    ``rope_scaling`` (or ``rope_parameters``) whose type is not ``su``,
    ``longrope`` or ``llama3`` multiplies it by its ``factor`` (``yarn`` from
    its ``original_max_position_embeddings``), except for Gemma 3, whose
    length is already scaled (vllm/config/model.py).
    """
    lengths = [strict_int(k, cfg[k], min=1) for k in _MAX_LEN_KEYS if cfg.get(k) is not None]
    derived = min(lengths) if lengths else 2048
    if cfg.get("model_max_length") is not None:
        derived = strict_int("model_max_length", cfg["model_max_length"], min=1)
    if "gemma3" in str(cfg.get("model_type", "")):
        return derived
    for rope in _rope_scalings(cfg):
        kind = rope.get("rope_type", rope.get("type"))
        if kind is None or kind in ("su", "longrope", "llama3"):
            continue
        factor = rope.get("factor", 1.0)
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) \
                or not 0 < factor <= _MAX_ROPE_FACTOR:
            shown = factor if len(repr(factor)) <= 40 else f"{repr(factor)[:37]}..."
            raise KvsimError(f"rope_scaling factor={shown!r} is not valid: expected a finite "
                             f"number in (0, {_MAX_ROPE_FACTOR}]")
        if kind == "yarn":
            derived = required_int(rope, "original_max_position_embeddings")
        return strict_int("max_model_len (the context after RoPE scaling)",
                          int(derived * factor), min=1, max=CONFIG_BOUNDS["max_position_embeddings"])
    return derived


def _rope_scalings(cfg: HfConfig) -> list[HfConfig]:
    """``rope_scaling``, or transformers v5's ``rope_parameters`` (flat, or one per layer type)."""
    for key in ("rope_scaling", "rope_parameters"):
        nested_config(cfg, key, "the RoPE scaling: rope_type, factor, ...")
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    if not isinstance(rope, dict):
        return []
    if rope and all(isinstance(v, dict) for v in rope.values()):
        return list(rope.values())
    return [rope]
