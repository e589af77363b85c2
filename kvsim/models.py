"""Model specifications: the architecture figures that decide KV bytes per token.

Explained in chapter 1, *Bytes per token and capacity*.

A :class:`ModelSpec` holds just what the simulator needs from a model: how many
layers keep a paged KV cache, how many KV heads of which width they store (or,
for multi-head latent attention, how wide the compressed latent is), the
sliding windows, the fixed per-request state of hybrid (linear-attention)
layers, and the parameter counts that set the weight memory and the roofline
cost of a step.

Specs come from presets (:func:`list_models`) or from a real Hugging Face
``config.json`` (:meth:`ModelSpec.from_hf_config`). The presets are built from
the same parser, from the published configs' figures, and then carry the
published parameter counts, so the parser is exercised by every preset.

The per-token figure (:meth:`ModelSpec.kv_bytes_per_token`) charges every KV
layer the full context, sliding-window layers included, which is what vLLM's
V0 block manager does (one block table per sequence, the same for all layers).
:meth:`ModelSpec.kv_bytes_for_sequence` honours the windows instead: the
difference is what a hybrid allocator (vLLM V1's per-layer-group KV manager)
can save on long sequences.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from .errors import KvsimError, check_int

__all__ = [
    "DTYPE_BYTES", "ModelSpec", "ParamEstimate", "estimate_params",
    "get_model", "list_models", "PUBLISHED_PARAMS",
]

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

_ATTENTION_LAYER_TYPES = {"full_attention": "full", "attention": "full",
                          "sliding_attention": "sliding", "chunked_attention": "sliding"}
_LINEAR_LAYER_TYPES = {"linear_attention"}


@dataclass(frozen=True)
class ModelSpec:
    """What kvsim needs to know about a model (explained in chapter 1).

    ``num_params`` is the total parameter count; ``active_params`` the count
    touched per token (smaller than the total for mixture-of-experts models).
    ``kv_layers`` is the number of layers that hold a paged KV cache: all of
    them, except in hybrids whose linear-attention layers keep a fixed-size
    state instead (``state_bytes_per_request``). Multi-head latent attention
    (MLA, DeepSeek-V2/V3) is on when ``mla_kv_lora_rank > 0``: each KV layer
    stores one latent of ``mla_kv_lora_rank + mla_rope_head_dim`` elements per
    token, with no factor 2 for K and V. ``sliding_window_layers`` of the KV
    layers attend only to the last ``sliding_window`` tokens.

    ``dtype`` is the serving dtype of the weights and the default KV-cache
    dtype. ``weight_dtype`` (an addition to the shared contract; ``None`` means
    "same as ``dtype``") lets an FP8 checkpoint such as DeepSeek-V3 keep a
    16-bit KV cache while its weights take one byte per parameter.
    """

    name: str
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    num_params: int
    active_params: int
    kv_layers: int
    mla_kv_lora_rank: int = 0
    mla_rope_head_dim: int = 0
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    state_bytes_per_request: int = 0
    dtype: str = "bf16"
    max_model_len: int = 4096
    source: str = "custom"
    weight_dtype: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise KvsimError(f"name={self.name!r} is not valid: expected a non-empty string")
        p = f"model {self.name!r}: "

        def count(field: str, **bounds) -> int:
            # whole floats such as 6.74e9 are accepted and stored as int; strings are not
            value = getattr(self, field)
            if isinstance(value, str):
                raise KvsimError(f"{p}{field}={value!r} has the wrong type: expected an integer")
            value = check_int(p + field, value, **bounds)
            object.__setattr__(self, field, value)
            return value

        for field in ("num_layers", "hidden_size", "num_attention_heads", "head_dim",
                      "num_params", "max_model_len"):
            count(field, min=1)
        count("active_params", min=1, max=self.num_params)
        count("kv_layers", min=1, max=self.num_layers)
        for field in ("mla_kv_lora_rank", "mla_rope_head_dim", "state_bytes_per_request"):
            count(field, min=0)
        if self.mla_kv_lora_rank == 0:
            count("num_kv_heads", min=1, max=self.num_attention_heads)
            if self.mla_rope_head_dim:
                raise KvsimError(f"{p}mla_rope_head_dim={self.mla_rope_head_dim} needs "
                                 f"mla_kv_lora_rank > 0: expected 0 without MLA")
        else:
            count("num_kv_heads", min=1)
        if self.sliding_window is None:
            if self.sliding_window_layers:
                raise KvsimError(f"{p}sliding_window_layers={self.sliding_window_layers} "
                                 f"without a sliding_window: expected 0")
        else:
            count("sliding_window", min=1)
            count("sliding_window_layers", min=0, max=self.kv_layers)
        if self.dtype not in DTYPE_BYTES:
            raise KvsimError(f"{p}dtype={self.dtype!r} is not known: expected one of "
                             f"{', '.join(DTYPE_BYTES)}")
        if self.weight_dtype is not None and self.weight_dtype not in DTYPE_BYTES:
            raise KvsimError(f"{p}weight_dtype={self.weight_dtype!r} is not known: expected "
                             f"None or one of {', '.join(DTYPE_BYTES)}")
        if not isinstance(self.source, str):
            raise KvsimError(f"{p}source={self.source!r} is not valid: expected a string")

    # ------------------------------------------------------------------ derived
    @property
    def attention_kind(self) -> str:
        """``"mla"``, ``"mha"`` (KV heads = attention heads), ``"mqa"`` (one KV head) or ``"gqa"``."""
        if self.mla_kv_lora_rank > 0:
            return "mla"
        if self.num_kv_heads == self.num_attention_heads:
            return "mha"
        if self.num_kv_heads == 1:
            return "mqa"
        return "gqa"

    @property
    def weight_bytes(self) -> int:
        """Weight memory: ``num_params x`` bytes of ``weight_dtype`` (or ``dtype``)."""
        return self.num_params * DTYPE_BYTES[self.weight_dtype or self.dtype]

    def _kv_dtype_bytes(self, kv_dtype: str | None) -> int:
        if kv_dtype is None or kv_dtype == "auto":
            kv_dtype = self.dtype
        if kv_dtype not in DTYPE_BYTES:
            raise KvsimError(f"kv_dtype={kv_dtype!r} is not known: expected one of "
                             f"{', '.join(DTYPE_BYTES)} (or None/'auto' for the model's {self.dtype})")
        return DTYPE_BYTES[kv_dtype]

    def kv_bytes_per_token_per_layer(self, kv_dtype: str | None = None) -> int:
        """KV bytes one token costs in one KV layer.

        ``2 x num_kv_heads x head_dim x`` dtype bytes (K and V), or for MLA
        ``(mla_kv_lora_rank + mla_rope_head_dim) x`` dtype bytes (one latent).
        """
        b = self._kv_dtype_bytes(kv_dtype)
        if self.mla_kv_lora_rank > 0:
            return (self.mla_kv_lora_rank + self.mla_rope_head_dim) * b
        return 2 * self.num_kv_heads * self.head_dim * b

    def kv_bytes_per_token(self, kv_dtype: str | None = None) -> int:
        """KV-cache bytes per token, every KV layer charged the full context.

        ``2 x kv_layers x num_kv_heads x head_dim x`` dtype bytes; for MLA
        ``kv_layers x (kv_lora_rank + rope_dim) x`` dtype bytes. ``kv_dtype``
        defaults to the model's ``dtype``. Sliding-window layers are charged
        like full-attention ones, as vLLM's V0 block manager does; see
        :meth:`kv_bytes_for_sequence` for what a window-aware allocator needs.
        Explained in chapter 1, *Bytes per token and capacity*.

        >>> get_model("llama-2-7b").kv_bytes_per_token()
        524288
        """
        return self.kv_layers * self.kv_bytes_per_token_per_layer(kv_dtype)

    def kv_bytes_for_sequence(self, num_tokens: int, kv_dtype: str | None = None) -> int:
        """KV bytes a sequence of ``num_tokens`` needs when sliding windows are honoured.

        Full-attention layers hold every token; sliding-window layers hold at
        most ``sliding_window`` tokens. This is what a hybrid allocator (vLLM
        V1's per-layer-group KV cache manager) could save compared with
        ``num_tokens * kv_bytes_per_token()``, which is what kvsim's engine
        charges (the V0 block manager's rule). Block rounding is not applied,
        and the fixed ``state_bytes_per_request`` of linear-attention layers is
        not included. Explained in chapter 1, *Bytes per token and capacity*.
        """
        n = check_int("num_tokens", num_tokens, min=0)
        per_layer = self.kv_bytes_per_token_per_layer(kv_dtype)
        full_layers = self.kv_layers - self.sliding_window_layers
        windowed = min(n, self.sliding_window) if self.sliding_window else n
        return per_layer * (full_layers * n + self.sliding_window_layers * windowed)

    def to_dict(self) -> dict:
        """All fields plus ``attention_kind``, ``weight_bytes`` and ``kv_bytes_per_token``."""
        d = asdict(self)
        d.update(attention_kind=self.attention_kind, weight_bytes=self.weight_bytes,
                 kv_bytes_per_token=self.kv_bytes_per_token())
        return d

    # ------------------------------------------------------------- HF configs
    @classmethod
    def from_hf_config(cls, path_or_dict, *, name: str | None = None) -> "ModelSpec":
        """Build a spec from a Hugging Face ``config.json`` (a path, a folder holding one, or a dict).

        Understands dense GQA/MHA models (Llama, Mistral, Qwen2, Gemma 2/3,
        OPT), mixture-of-experts (Mixtral, Qwen-MoE, DeepSeek), multi-head
        latent attention (``kv_lora_rank``), sliding windows (``sliding_window``
        with ``layer_types`` or the model family's layer pattern) and hybrid
        linear/full attention (``layer_types`` or ``full_attention_interval``,
        as in Qwen3-Next: only the full-attention layers hold KV; the
        linear-attention layers' recurrent and convolution state goes to
        ``state_bytes_per_request``). ``num_params`` and ``active_params`` are
        estimated with :func:`estimate_params`. A malformed config raises
        :class:`KvsimError` naming the field. Explained in chapter 1.
        """
        cfg, source, default_name = _load_config(path_or_dict)
        arch = _parse_architecture(cfg)
        est = _estimate(cfg, arch)
        dtype, weight_dtype = _parse_dtypes(cfg)
        state_elems = arch["linear_layers"] * arch["linear_state_elems"]
        return cls(
            name=name or default_name,
            num_layers=arch["num_layers"],
            hidden_size=arch["hidden"],
            num_attention_heads=arch["heads"],
            num_kv_heads=arch["kv_heads"],
            head_dim=arch["head_dim"],
            num_params=est.total,
            active_params=est.active,
            kv_layers=arch["kv_layers"],
            mla_kv_lora_rank=arch["kv_lora_rank"],
            mla_rope_head_dim=arch["rope_dim"] if arch["kv_lora_rank"] else 0,
            sliding_window=arch["sliding_window"] if arch["sliding_layers"] else None,
            sliding_window_layers=arch["sliding_layers"],
            state_bytes_per_request=state_elems * DTYPE_BYTES[dtype],
            dtype=dtype,
            weight_dtype=weight_dtype,
            max_model_len=arch["max_model_len"],
            source=source,
        )


# ---------------------------------------------------------------------------
# config.json parsing


def _strict_int(name: str, value, *, min: int | None = None, max: int | None = None) -> int:
    """Like ``check_int`` but refuses strings and floats: config fields must be JSON integers."""
    if isinstance(value, bool) or not isinstance(value, int):
        rng = f">= {min}" if max is None else f"in [{min}, {max}]"
        raise KvsimError(f"{name}={value!r} has the wrong type: expected an integer {rng}")
    return check_int(name, value, min=min, max=max)


def _load_config(path_or_dict) -> tuple[dict, str, str]:
    if isinstance(path_or_dict, Mapping):
        cfg = dict(path_or_dict)
        name = cfg.get("_name_or_path") or cfg.get("model_type") or "hf-config"
        if not isinstance(name, str):
            name = "hf-config"
        return cfg, "hf-config:dict", Path(name).name or "hf-config"
    if not isinstance(path_or_dict, (str, Path)):
        raise KvsimError(f"config={path_or_dict!r} is not valid: expected a path to a "
                         f"config.json, a folder holding one, or a dict")
    path = Path(path_or_dict)
    if path.is_dir():
        path = path / "config.json"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise KvsimError(f"config path {str(path)!r} cannot be read ({reason}): expected a "
                         f"readable config.json") from None
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError as exc:
        raise KvsimError(f"config path {str(path)!r} is not valid JSON ({exc.msg} at line "
                         f"{exc.lineno} column {exc.colno}): expected a config.json object") from None
    if not isinstance(cfg, dict):
        raise KvsimError(f"config path {str(path)!r} holds a JSON {type(cfg).__name__}: "
                         f"expected a JSON object")
    stem = path.parent.name if path.stem == "config" and path.parent.name else path.stem
    return cfg, f"hf-config:{path}", stem or "hf-config"


def _text_config(cfg: dict) -> dict:
    """Multimodal configs nest the language model under ``text_config``."""
    if "num_hidden_layers" not in cfg and isinstance(cfg.get("text_config"), dict):
        merged = dict(cfg["text_config"])
        for key in ("torch_dtype", "dtype", "quantization_config", "_name_or_path"):
            if key in cfg and key not in merged:
                merged[key] = cfg[key]
        return merged
    return cfg


def _req(cfg: dict, key: str, *, min: int = 1) -> int:
    if key not in cfg or cfg[key] is None:
        raise KvsimError(f"config.json is missing field {key!r}: expected an integer >= {min}")
    return _strict_int(key, cfg[key], min=min)


def _opt(cfg: dict, key: str, default, *, min: int = 0):
    if cfg.get(key) is None:
        return default
    return _strict_int(key, cfg[key], min=min)


def _bool(cfg: dict, key: str, default: bool) -> bool:
    value = cfg.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise KvsimError(f"{key}={value!r} has the wrong type: expected true or false")
    return value


def _parse_dtypes(cfg: dict) -> tuple[str, str | None]:
    cfg = _text_config(cfg)
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


def _layer_kinds(cfg: dict, n: int) -> list[str]:
    """One of "full", "sliding", "linear" per layer."""
    mt = str(cfg.get("model_type", ""))
    types = cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != n:
            raise KvsimError(f"layer_types has {len(types) if isinstance(types, list) else types!r} "
                             f"entries: expected a list of num_hidden_layers={n} layer types")
        kinds = []
        for t in types:
            if t in _ATTENTION_LAYER_TYPES:
                kinds.append(_ATTENTION_LAYER_TYPES[t])
            elif t in _LINEAR_LAYER_TYPES:
                kinds.append("linear")
            else:
                raise KvsimError(f"layer_types entry {t!r} is not known: expected one of "
                                 f"{', '.join(sorted([*_ATTENTION_LAYER_TYPES, *_LINEAR_LAYER_TYPES]))}")
        return kinds
    interval = cfg.get("full_attention_interval")
    if interval is not None:
        k = _strict_int("full_attention_interval", interval, min=1)
        return ["full" if (i + 1) % k == 0 else "linear" for i in range(n)]
    window = cfg.get("sliding_window")
    if window is None or cfg.get("use_sliding_window") is False:
        return ["full"] * n
    if mt == "gemma2":                       # even layers slide (transformers' Gemma2)
        return ["sliding" if i % 2 == 0 else "full" for i in range(n)]
    if mt.startswith("gemma3"):
        p = _opt(cfg, "sliding_window_pattern", 6, min=1)
        return ["full" if (i + 1) % p == 0 else "sliding" for i in range(n)]
    if mt.startswith("qwen") and cfg.get("use_sliding_window"):
        first = _opt(cfg, "max_window_layers", 0)
        return ["sliding" if i >= first else "full" for i in range(n)]
    if mt.startswith("qwen"):                # Qwen configs carry a window they do not use
        return ["full"] * n
    return ["sliding"] * n                   # Mistral semantics: every layer slides


def _parse_architecture(cfg: dict) -> dict:
    cfg = _text_config(cfg)
    n = _req(cfg, "num_hidden_layers")
    hidden = _req(cfg, "hidden_size")
    heads = _req(cfg, "num_attention_heads")
    _req(cfg, "vocab_size")
    kv_heads = _opt(cfg, "num_key_value_heads", heads, min=1)
    kv_lora_rank = _opt(cfg, "kv_lora_rank", 0)
    rope_dim = _opt(cfg, "qk_rope_head_dim", 0)
    if kv_lora_rank:
        head_dim = _opt(cfg, "qk_nope_head_dim", 0) + rope_dim
        if head_dim <= 0:
            raise KvsimError("MLA config (kv_lora_rank > 0) needs qk_nope_head_dim and "
                             "qk_rope_head_dim: expected integers >= 1")
    else:
        if kv_heads > heads or heads % kv_heads:
            raise KvsimError(f"num_key_value_heads={kv_heads} does not divide "
                             f"num_attention_heads={heads}: expected a divisor of {heads}")
        head_dim = _opt(cfg, "head_dim", None, min=1)
        if head_dim is None:
            if hidden % heads:
                raise KvsimError(f"hidden_size={hidden} is not a multiple of "
                                 f"num_attention_heads={heads} and head_dim is missing: "
                                 f"expected an explicit head_dim")
            head_dim = hidden // heads
    kinds = _layer_kinds(cfg, n)
    kv_layers = sum(k != "linear" for k in kinds)
    if kv_layers == 0:
        raise KvsimError("config.json has no attention layer holding a KV cache: expected at "
                         "least one full or sliding attention layer")
    sliding = sum(k == "sliding" for k in kinds)
    window = None
    if sliding:
        window = cfg.get("sliding_window")
        if window is None:
            raise KvsimError("layer_types has sliding_attention layers but sliding_window is "
                             "missing: expected an integer >= 1")
        window = _strict_int("sliding_window", window, min=1)
    linear_layers = n - kv_layers
    linear_state = 0
    if linear_layers:
        needed = ("linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
                  "linear_num_key_heads", "linear_conv_kernel_dim")
        vals = {k: _req(cfg, k) for k in needed}
        conv_dim = (2 * vals["linear_num_key_heads"] * vals["linear_key_head_dim"]
                    + vals["linear_num_value_heads"] * vals["linear_value_head_dim"])
        # recurrent (delta-rule) state + the causal convolution's last kernel-1 inputs
        linear_state = (vals["linear_num_value_heads"] * vals["linear_key_head_dim"]
                        * vals["linear_value_head_dim"]
                        + conv_dim * (vals["linear_conv_kernel_dim"] - 1))
    max_len = None
    for key in ("max_position_embeddings", "n_positions", "seq_length", "max_sequence_length"):
        if cfg.get(key) is not None:
            max_len = _strict_int(key, cfg[key], min=1)
            break
    return dict(num_layers=n, hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
                kv_lora_rank=kv_lora_rank, rope_dim=rope_dim, kinds=kinds, kv_layers=kv_layers,
                sliding_layers=sliding, sliding_window=window, linear_layers=linear_layers,
                linear_state_elems=linear_state, max_model_len=max_len or 4096)


# ---------------------------------------------------------------------------
# parameter estimate


@dataclass(frozen=True)
class ParamEstimate:
    """Parameter counts estimated from a config: ``total``, ``active`` per token, ``embedding``.

    ``embedding`` counts the input embedding and the output head (once if
    tied); publishers differ on whether their "active" figure includes it.
    """

    total: int
    active: int
    embedding: int


def estimate_params(config) -> ParamEstimate:
    """Estimate parameter counts from a Hugging Face config (path or dict).

    Counts embeddings and the output head (unless tied), attention
    projections (GQA, gated attention, MLA low-rank projections, linear
    attention), the MLP or the mixture of experts (routed experts, shared
    experts, router), and the norms. Multi-token-prediction modules
    (DeepSeek's ``num_nextn_predict_layers``) are left out, as in the
    published totals. Exact for the Llama family; within about 1 % of the
    published totals of the shared test configs. Explained in chapter 1.
    """
    cfg, _, _ = _load_config(config)
    return _estimate(cfg, _parse_architecture(cfg))


def _estimate(cfg: dict, arch: dict) -> ParamEstimate:
    cfg = _text_config(cfg)
    mt = str(cfg.get("model_type", ""))
    n, h, heads, kvh, hd = (arch[k] for k in ("num_layers", "hidden", "heads", "kv_heads", "head_dim"))
    vocab = _req(cfg, "vocab_size")
    is_opt = mt == "opt" or "ffn_dim" in cfg
    tied = _bool(cfg, "tie_word_embeddings", mt.startswith("gemma") or is_opt)
    embedding = vocab * h * (1 if tied else 2)
    if is_opt:
        embedding += (_opt(cfg, "max_position_embeddings", 2048) + 2) * h  # learned positions

    # attention, per layer kind
    attn_bias = _bool(cfg, "attention_bias", mt in ("qwen2", "qwen2_moe") or is_opt)
    gated_q = 2 if mt == "qwen3_next" else 1           # Qwen3-Next: gated attention output
    qk_norm = 2 * hd if mt.startswith("qwen3") or mt.startswith("gemma3") else 0
    if arch["kv_lora_rank"]:
        r, rope = arch["kv_lora_rank"], arch["rope_dim"]
        nope = _opt(cfg, "qk_nope_head_dim", 0)
        v_dim = _opt(cfg, "v_head_dim", nope, min=1)
        q_rank = _opt(cfg, "q_lora_rank", 0)
        q = (h * q_rank + q_rank + q_rank * heads * (nope + rope)) if q_rank else h * heads * (nope + rope)
        full_attn = q + h * (r + rope) + r + r * heads * (nope + v_dim) + heads * v_dim * h
    else:
        full_attn = (h * heads * hd * gated_q + 2 * h * kvh * hd + heads * hd * h + qk_norm)
        if attn_bias:                                   # q, k, v biases; Qwen2 has no o_proj bias
            full_attn += heads * hd * gated_q + 2 * kvh * hd + (0 if mt.startswith("qwen2") else h)
    linear_attn = 0
    if arch["linear_layers"]:
        nk, nv = _req(cfg, "linear_num_key_heads"), _req(cfg, "linear_num_value_heads")
        dk, dv = _req(cfg, "linear_key_head_dim"), _req(cfg, "linear_value_head_dim")
        kern = _req(cfg, "linear_conv_kernel_dim")
        key_dim, value_dim = nk * dk, nv * dv
        linear_attn = (h * (2 * key_dim + 2 * value_dim) + h * 2 * nv      # in_proj_qkvz, in_proj_ba
                       + (2 * key_dim + value_dim) * kern                  # depthwise conv
                       + 2 * nv + dv + value_dim * h)                      # dt_bias, A_log, norm, out
    attention = sum(linear_attn if k == "linear" else full_attn for k in arch["kinds"])

    # MLP / mixture of experts
    inter_key = "ffn_dim" if is_opt else "intermediate_size"
    n_experts = next((cfg[k] for k in ("n_routed_experts", "num_local_experts", "num_experts")
                      if cfg.get(k)), 0)
    n_experts = _strict_int("num_experts", n_experts, min=0)

    def dense_mlp(inter: int) -> int:
        return (2 * h * inter + inter + h) if is_opt else 3 * h * inter

    mlp_total = mlp_active = 0
    if n_experts:
        top_k = _req(cfg, "num_experts_per_tok")
        expert_inter = _opt(cfg, "moe_intermediate_size", None, min=1) or _req(cfg, "intermediate_size")
        expert = 3 * h * expert_inter
        shared = 0
        if cfg.get("n_shared_experts"):
            shared = _strict_int("n_shared_experts", cfg["n_shared_experts"], min=0) * expert
        if cfg.get("shared_expert_intermediate_size"):
            shared = 3 * h * _req(cfg, "shared_expert_intermediate_size") + h  # plus its gate
        router = h * n_experts + (n_experts if cfg.get("topk_method") == "noaux_tc" else 0)
        first_dense = _opt(cfg, "first_k_dense_replace", 0)
        freq = _opt(cfg, "moe_layer_freq", 1, min=1)
        step = _opt(cfg, "decoder_sparse_step", 1, min=1)
        mlp_only = set(cfg.get("mlp_only_layers") or [])
        for i in range(n):
            moe = i >= first_dense and i % freq == 0 and (i + 1) % step == 0 and i not in mlp_only
            if moe:
                mlp_total += n_experts * expert + shared + router
                mlp_active += top_k * expert + shared + router
            else:
                d = dense_mlp(_req(cfg, "intermediate_size"))
                mlp_total += d
                mlp_active += d
    else:
        mlp_total = mlp_active = n * dense_mlp(_req(cfg, inter_key))

    norm_width = 2 * h if is_opt else h                  # LayerNorm has a bias, RMSNorm not
    norms_per_layer = 4 if mt.startswith("gemma2") or mt.startswith("gemma3") else 2
    norms = n * norms_per_layer * norm_width + norm_width   # MLA's latent norms are in full_attn

    total = embedding + attention + mlp_total + norms
    active = embedding + attention + mlp_active + norms
    return ParamEstimate(total=total, active=active, embedding=embedding)


# ---------------------------------------------------------------------------
# presets

#: Published parameter counts (total, active) the presets carry. The config
#: estimate is checked against these in the tests.
PUBLISHED_PARAMS: dict[str, tuple[int, int]] = {}

# Each preset is the published config.json's architecture figures (keys as in
# Hugging Face), the published parameter counts and the model card it comes from.
_PRESETS: dict[str, dict[str, Any]] = {
    "llama-2-7b": dict(
        source="meta-llama/Llama-2-7b-hf config.json; 6.74B parameters (model card)",
        params=(6_738_415_616, 6_738_415_616),
        config=dict(model_type="llama", num_hidden_layers=32, hidden_size=4096,
                    num_attention_heads=32, num_key_value_heads=32, intermediate_size=11008,
                    vocab_size=32000, max_position_embeddings=4096, torch_dtype="float16",
                    tie_word_embeddings=False)),
    "llama-3.1-8b": dict(
        source="meta-llama/Llama-3.1-8B config.json; 8.03B parameters (model card)",
        params=(8_030_261_248, 8_030_261_248),
        config=dict(model_type="llama", num_hidden_layers=32, hidden_size=4096,
                    num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                    intermediate_size=14336, vocab_size=128256, max_position_embeddings=131072,
                    torch_dtype="bfloat16", tie_word_embeddings=False)),
    "llama-3.1-70b": dict(
        source="meta-llama/Llama-3.1-70B config.json; 70.6B parameters (model card)",
        params=(70_553_706_496, 70_553_706_496),
        config=dict(model_type="llama", num_hidden_layers=80, hidden_size=8192,
                    num_attention_heads=64, num_key_value_heads=8, head_dim=128,
                    intermediate_size=28672, vocab_size=128256, max_position_embeddings=131072,
                    torch_dtype="bfloat16", tie_word_embeddings=False)),
    "mistral-7b": dict(
        source="mistralai/Mistral-7B-v0.1 config.json (sliding window 4096 on every layer); "
               "7.24B parameters (model card)",
        params=(7_241_732_096, 7_241_732_096),
        config=dict(model_type="mistral", num_hidden_layers=32, hidden_size=4096,
                    num_attention_heads=32, num_key_value_heads=8, intermediate_size=14336,
                    vocab_size=32000, max_position_embeddings=32768, sliding_window=4096,
                    torch_dtype="bfloat16", tie_word_embeddings=False)),
    "qwen2.5-7b": dict(
        source="Qwen/Qwen2.5-7B config.json; 7.61B parameters (model card)",
        params=(7_615_616_512, 7_615_616_512),
        config=dict(model_type="qwen2", num_hidden_layers=28, hidden_size=3584,
                    num_attention_heads=28, num_key_value_heads=4, intermediate_size=18944,
                    vocab_size=152064, max_position_embeddings=131072, sliding_window=131072,
                    use_sliding_window=False, torch_dtype="bfloat16", tie_word_embeddings=False)),
    "deepseek-v3": dict(
        source="deepseek-ai/DeepSeek-V3 config.json (MLA; FP8 weights, bf16 KV); 671B total, "
               "37B activated (model card; the 14B multi-token-prediction module excluded)",
        params=(671_000_000_000, 37_000_000_000),
        config=dict(model_type="deepseek_v3", num_hidden_layers=61, hidden_size=7168,
                    num_attention_heads=128, num_key_value_heads=128, intermediate_size=18432,
                    moe_intermediate_size=2048, n_routed_experts=256, n_shared_experts=1,
                    num_experts_per_tok=8, first_k_dense_replace=3, moe_layer_freq=1,
                    kv_lora_rank=512, q_lora_rank=1536, qk_nope_head_dim=128,
                    qk_rope_head_dim=64, v_head_dim=128, topk_method="noaux_tc",
                    vocab_size=129280, max_position_embeddings=163840, torch_dtype="bfloat16",
                    quantization_config={"quant_method": "fp8"}, tie_word_embeddings=False)),
    "gemma-2-9b": dict(
        source="google/gemma-2-9b config.json (sliding window 4096 on half the layers); "
               "9.24B parameters (model card)",
        params=(9_241_705_984, 9_241_705_984),
        config=dict(model_type="gemma2", num_hidden_layers=42, hidden_size=3584,
                    num_attention_heads=16, num_key_value_heads=8, head_dim=256,
                    intermediate_size=14336, vocab_size=256000, max_position_embeddings=8192,
                    sliding_window=4096, torch_dtype="bfloat16")),
    "opt-13b": dict(
        source="facebook/opt-13b config.json (MHA, learned positions); 12.85B parameters "
               "(the '13B' of the OPT paper)",
        params=(12_853_473_280, 12_853_473_280),
        config=dict(model_type="opt", num_hidden_layers=40, hidden_size=5120,
                    num_attention_heads=40, ffn_dim=20480, vocab_size=50272,
                    max_position_embeddings=2048, torch_dtype="float16",
                    word_embed_proj_dim=5120)),
}

_CACHE: dict[str, ModelSpec] = {}


def _build_preset(name: str) -> ModelSpec:
    if name not in _CACHE:
        entry = _PRESETS[name]
        spec = ModelSpec.from_hf_config(entry["config"], name=name)
        total, active = entry["params"]
        _CACHE[name] = replace(spec, num_params=total, active_params=active, source=entry["source"])
    return _CACHE[name]


PUBLISHED_PARAMS.update({k: v["params"] for k, v in _PRESETS.items()})


def preset_config(name: str) -> dict:
    """The config.json figures a preset is built from (a copy)."""
    if name not in _PRESETS:
        get_model(name)                     # raises the listing error
    return json.loads(json.dumps(_PRESETS[name]["config"]))


def list_models() -> list[str]:
    """Names of the model presets (explained in chapter 1)."""
    return list(_PRESETS)


def get_model(name_or_spec) -> ModelSpec:
    """A :class:`ModelSpec` from a preset name, a spec, or a path to a ``config.json``.

    Unknown names raise :class:`KvsimError` listing the valid ones.
    Explained in chapter 1, *Bytes per token and capacity*.
    """
    if isinstance(name_or_spec, ModelSpec):
        return name_or_spec
    if isinstance(name_or_spec, Mapping):
        return ModelSpec.from_hf_config(name_or_spec)
    if isinstance(name_or_spec, Path):
        return ModelSpec.from_hf_config(name_or_spec)
    if not isinstance(name_or_spec, str):
        raise KvsimError(f"model={name_or_spec!r} is not valid: expected a preset name "
                         f"({', '.join(list_models())}), a ModelSpec or a path to a config.json")
    key = name_or_spec.strip().lower()
    if key in _PRESETS:
        return _build_preset(key)
    if key and (name_or_spec.endswith(".json") or Path(name_or_spec).is_file()
                or Path(name_or_spec).is_dir()):
        return ModelSpec.from_hf_config(name_or_spec)
    raise KvsimError(f"model={name_or_spec!r} is not known: expected one of "
                     f"{', '.join(list_models())} or a path to a config.json")
