"""Layer kinds: every way a ``config.json`` declares what each decoder layer is.

Explained in chapter 1, *Bytes per token and capacity*.

:func:`layer_kinds` gives one kind per decoder layer (:data:`LAYER_KINDS` is
the legend: which kinds hold KV for every token, for a window, or only a
fixed state), from transformers' ``layer_types`` or any of the hybrid
families' own declarations; :func:`layer_ffns` gives each layer's
feed-forward block (dense, mixture of experts, or none).
"""
from __future__ import annotations

from kvsim.errors import KvsimError

from .config_json import HfConfig, optional_int, strict_int

__all__ = ["LAYER_KINDS", "KV_KINDS", "WINDOW_KINDS", "layer_kinds", "layer_plan", "layer_ffns",
           "routed_experts"]

#: The layer kinds :func:`layer_kinds` gives each decoder layer, by what its
#: sequence mixer keeps for a request (explained in chapter 1).
LAYER_KINDS: dict[str, str] = {
    "full": "softmax attention over the whole context: KV for every token",
    "sliding": "sliding-window attention: KV for the last sliding_window tokens",
    "chunked": "chunked local attention (Llama 4): KV for at most attention_chunk_size tokens",
    "linear": "linear attention (Qwen3-Next gated delta net, MiniMax lightning): a fixed state",
    "mamba": "a Mamba1 or Mamba2 SSM mixer: a fixed convolution and SSM state",
    "conv": "a short-convolution mixer (LFM2): a fixed convolution state",
    "recurrent": "an RG-LRU block (RecurrentGemma): a fixed convolution and recurrent state",
    "hybrid": "attention and a Mamba2 mixer in one layer (Falcon-H1, Zamba2): KV and a fixed state",
    "mlp": "no sequence mixer, an MLP or MoE only (Nemotron-H '-' and 'E'): nothing per request",
}
#: The layer kinds that hold a paged KV cache.
KV_KINDS = frozenset({"full", "sliding", "chunked", "hybrid"})
#: The layer kinds that keep KV for a window of tokens only.
WINDOW_KINDS = frozenset({"sliding", "chunked"})

# transformers' ``layer_types`` values -> layer kinds
_LAYER_TYPES = {"full_attention": "full", "attention": "full", "sliding_attention": "sliding",
                "chunked_attention": "chunked", "linear_attention": "linear", "mamba": "mamba",
                "conv": "conv"}
# ``layers_block_type`` values -> (layer kind, the FFN a Nemotron-H block holds)
_BLOCK_TYPES = {"attention": ("full", None), "mamba": ("mamba", None), "hybrid": ("hybrid", None),
                "mlp": ("mlp", "dense"), "moe": ("mlp", "moe")}
# Nemotron-H's ``hybrid_override_pattern`` letters -> (layer kind, FFN)
_PATTERN_LETTERS = {"M": ("mamba", "none"), "*": ("full", "none"), "-": ("mlp", "dense"),
                    "E": ("mlp", "moe")}
_PATTERN_MEANING = {"M": "Mamba2", "*": "attention", "-": "MLP", "E": "MoE"}
_ATTENTION_FREE_MODEL_TYPES = frozenset({"mamba", "mamba2", "falcon_mamba"})


def layer_kinds(cfg: HfConfig, n: int) -> list[str]:
    """One layer kind per decoder layer (see :data:`LAYER_KINDS` for the legend).

    Reads, first match wins: ``layer_types`` (transformers' per-layer list),
    ``layers_block_type`` (Jamba, Zamba2, Bamba, Granite, newer Nemotron-H),
    ``hybrid_override_pattern`` (Nemotron-H), ``attn_type_list`` (MiniMax),
    ``block_types`` (RecurrentGemma), ``attn_layer_period``/``attn_layer_offset``
    (Jamba), ``attn_layer_indices`` (Bamba), ``full_attn_idxs`` (LFM2),
    ``full_attention_interval`` (Qwen3-Next), the model type (Falcon-H1: every
    layer is attention + Mamba2; Mamba, Mamba2, Falcon-Mamba: no attention),
    ``no_rope_layers`` with ``attention_chunk_size`` (Llama 4), and last the
    sliding-window rules of Gemma 2/3, Cohere2, Qwen2 and Mistral.
    """
    return layer_plan(cfg, n)[0]


def layer_plan(cfg: HfConfig, n: int) -> tuple[list[str], list[str] | None]:
    """The layer kinds, and the FFN of each layer when the declaration fixes it.

    The second item is ``None`` unless the declaration itself says which
    layers carry an MLP or a mixture of experts (Nemotron-H's pattern and
    block list, where a layer holds a mixer *or* an FFN); then it lists
    ``"dense"``, ``"moe"`` or ``"none"`` per layer.
    """
    mt = str(cfg.get("model_type", ""))
    if cfg.get("layer_types") is not None:
        return _kinds_from_layer_types(cfg["layer_types"], n), None
    if cfg.get("layers_block_type") is not None:
        return _kinds_from_block_types(cfg["layers_block_type"], n, mixer_only=mt == "nemotron_h")
    if cfg.get("hybrid_override_pattern") is not None:
        return _kinds_from_pattern(cfg["hybrid_override_pattern"], n)
    if cfg.get("attn_type_list") is not None:
        return _kinds_from_attn_type_list(cfg["attn_type_list"], n), None
    if cfg.get("block_types") is not None:
        return _kinds_from_recurrent_blocks(cfg["block_types"], n), None
    if cfg.get("attn_layer_period") is not None:
        return _kinds_from_attention_period(cfg, n), None
    if cfg.get("attn_layer_indices") is not None:
        return _kinds_from_indices("attn_layer_indices", cfg["attn_layer_indices"], n, "mamba"), None
    if cfg.get("full_attn_idxs") is not None:
        return _kinds_from_indices("full_attn_idxs", cfg["full_attn_idxs"], n, "conv"), None
    if cfg.get("full_attention_interval") is not None:
        k = strict_int("full_attention_interval", cfg["full_attention_interval"], min=1)
        return ["full" if (i + 1) % k == 0 else "linear" for i in range(n)], None
    if mt == "falcon_h1":                    # transformers' FalconH1Config: every layer "hybrid"
        return ["hybrid"] * n, None
    if mt in _ATTENTION_FREE_MODEL_TYPES:
        return ["mamba"] * n, None
    if cfg.get("attention_chunk_size") is not None and mt.startswith("llama4"):
        return _kinds_from_rope_layers(cfg, n), None
    return _sliding_window_kinds(cfg, n), None


def _kinds_from_layer_types(types: object, n: int) -> list[str]:
    """``layer_types``: one name per layer (gpt-oss, Gemma 3, Qwen3-Next, LFM2, Granite-4.0-H)."""
    if not isinstance(types, list) or len(types) != n:
        raise KvsimError(f"layer_types has {len(types) if isinstance(types, list) else types!r} "
                         f"entries: expected a list of num_hidden_layers={n} layer types")
    for t in types:
        if t not in _LAYER_TYPES:
            raise KvsimError(f"layer_types entry {t!r} is not known: expected one of "
                             f"{', '.join(sorted(_LAYER_TYPES))}")
    return [_LAYER_TYPES[t] for t in types]


def _kinds_from_block_types(types: object, n: int, *, mixer_only: bool) -> tuple[list[str], list[str] | None]:
    """``layers_block_type``: "mamba", "attention", "hybrid" (Zamba2), "mlp"/"moe" (Nemotron-H).

    With ``mixer_only`` (Nemotron-H) a layer holds either a mixer or an FFN,
    so the list also fixes the FFNs.
    """
    if not isinstance(types, list) or len(types) != n:
        raise KvsimError(f"layers_block_type has {len(types) if isinstance(types, list) else types!r} "
                         f"entries: expected a list of num_hidden_layers={n} block types")
    for t in types:
        if t not in _BLOCK_TYPES:
            raise KvsimError(f"layers_block_type entry {t!r} is not known: expected one of "
                             f"{', '.join(_BLOCK_TYPES)}")
    kinds = [_BLOCK_TYPES[t][0] for t in types]
    if not mixer_only:
        if "mlp" in kinds:
            raise KvsimError("layers_block_type has 'mlp'/'moe' blocks outside a Nemotron-H "
                             "model: expected model_type 'nemotron_h' for MLP-only blocks")
        return kinds, None
    return kinds, [_BLOCK_TYPES[t][1] or "none" for t in types]


def _kinds_from_pattern(pattern: object, n: int) -> tuple[list[str], list[str]]:
    """Nemotron-H's ``hybrid_override_pattern``: M Mamba2, * attention, - MLP, E MoE."""
    letters = ", ".join(f"{k} ({v})" for k, v in _PATTERN_MEANING.items())
    if not isinstance(pattern, str) or len(pattern) != n:
        got = f"{len(pattern)} letters" if isinstance(pattern, str) else f"the value {pattern!r:.40}"
        raise KvsimError(f"hybrid_override_pattern has {got}: expected a string of "
                         f"num_hidden_layers={n} letters from {letters}")
    for i, c in enumerate(pattern):
        if c not in _PATTERN_LETTERS:
            raise KvsimError(f"hybrid_override_pattern letter {c!r} at layer {i} is not known: "
                             f"expected one of {letters}")
    return [_PATTERN_LETTERS[c][0] for c in pattern], [_PATTERN_LETTERS[c][1] for c in pattern]


def _kinds_from_attn_type_list(values: object, n: int) -> list[str]:
    """``attn_type_list`` (MiniMax-Text-01/M1): 0 lightning (linear) attention, 1 softmax attention."""
    if not isinstance(values, list) or len(values) != n:
        raise KvsimError(f"attn_type_list has {len(values) if isinstance(values, list) else values!r} "
                         f"entries: expected a list of num_hidden_layers={n} values 0 or 1")
    for v in values:
        if isinstance(v, bool) or v not in (0, 1):
            raise KvsimError(f"attn_type_list entry {v!r} is not known: expected 0 (lightning "
                             f"attention) or 1 (softmax attention)")
    return ["full" if v == 1 else "linear" for v in values]


def _kinds_from_recurrent_blocks(block_types: object, n: int) -> list[str]:
    """``block_types`` (RecurrentGemma): "recurrent"/"attention", repeated to the layer count.

    transformers' RecurrentGemmaConfig repeats the list cyclically; its
    attention is local, over the last ``attention_window_size`` tokens.
    """
    if not isinstance(block_types, list) or not block_types:
        raise KvsimError(f"block_types={block_types!r:.60} is not valid: expected a non-empty list "
                         f"of 'recurrent' and 'attention'")
    names = {"recurrent": "recurrent", "attention": "sliding"}
    for t in block_types:
        if t not in names:
            raise KvsimError(f"block_types entry {t!r} is not known: expected 'recurrent' or "
                             f"'attention'")
    return [names[block_types[i % len(block_types)]] for i in range(n)]


def _kinds_from_attention_period(cfg: HfConfig, n: int) -> list[str]:
    """Jamba: attention where ``i % attn_layer_period == attn_layer_offset``, Mamba elsewhere."""
    period = strict_int("attn_layer_period", cfg["attn_layer_period"], min=1)
    offset = strict_int("attn_layer_offset", cfg.get("attn_layer_offset", 0), min=0, max=period - 1)
    return ["full" if i % period == offset else "mamba" for i in range(n)]


def _kinds_from_indices(field: str, indices: object, n: int, other: str) -> list[str]:
    """Attention at the listed layers, ``other`` elsewhere (Bamba's Mamba2, LFM2's short conv)."""
    if not isinstance(indices, list):
        raise KvsimError(f"{field}={indices!r:.60} is not valid: expected a list of layer indices "
                         f"in [0, {n - 1}]")
    chosen = {strict_int(f"{field} entry", i, min=0, max=n - 1) for i in indices}
    return ["full" if i in chosen else other for i in range(n)]


def _kinds_from_rope_layers(cfg: HfConfig, n: int) -> list[str]:
    """Llama 4: RoPE layers attend in chunks of ``attention_chunk_size``; NoPE layers are global.

    ``no_rope_layers[i]`` is 1 where layer i uses RoPE (chunked local
    attention in vLLM's Llama4Attention) and 0 for a global NoPE layer; an
    absent or empty list means one NoPE layer every ``no_rope_layer_interval``
    (4) layers, as transformers' Llama4TextConfig builds it.
    """
    flags = cfg.get("no_rope_layers")
    if not flags:
        interval = optional_int(cfg, "no_rope_layer_interval", 4, min=1)
        flags = [int((i + 1) % interval != 0) for i in range(n)]
    if not isinstance(flags, list) or len(flags) != n:
        raise KvsimError(f"no_rope_layers has {len(flags) if isinstance(flags, list) else flags!r} "
                         f"entries: expected a list of num_hidden_layers={n} values 0 or 1")
    for v in flags:
        if isinstance(v, bool) or v not in (0, 1):
            raise KvsimError(f"no_rope_layers entry {v!r} is not known: expected 1 (RoPE, chunked "
                             f"attention) or 0 (NoPE, global attention)")
    return ["chunked" if v else "full" for v in flags]


def _sliding_window_kinds(cfg: HfConfig, n: int) -> list[str]:
    """The sliding-window families that declare no per-layer list (transformers' rules)."""
    mt = str(cfg.get("model_type", ""))
    window = cfg.get("sliding_window")
    if window is None or cfg.get("use_sliding_window") is False:
        return ["full"] * n
    if mt == "gemma2":                       # even layers slide (transformers' Gemma2)
        return ["sliding" if i % 2 == 0 else "full" for i in range(n)]
    if mt.startswith("gemma3") or mt == "cohere2":   # every p-th layer is global
        p = optional_int(cfg, "sliding_window_pattern", 6 if mt.startswith("gemma3") else 4, min=1)
        return ["full" if (i + 1) % p == 0 else "sliding" for i in range(n)]
    if mt.startswith("qwen") and cfg.get("use_sliding_window"):
        first = optional_int(cfg, "max_window_layers", 0)
        return ["sliding" if i >= first else "full" for i in range(n)]
    if mt.startswith("qwen"):                # Qwen configs carry a window they do not use
        return ["full"] * n
    return ["sliding"] * n                   # Mistral semantics: every layer slides


def layer_ffns(cfg: HfConfig, kinds: list[str], declared: list[str] | None) -> list[str]:
    """The feed-forward block of each layer: ``"dense"``, ``"moe"`` or ``"none"``.

    Mixer-only families (Mamba, Mamba2, Falcon-Mamba; Zamba2, whose MLP sits
    in its shared transformer blocks) have none. Jamba's MoE layers are where
    ``i % expert_layer_period == expert_layer_offset``; Llama 4 may list its
    ``moe_layers`` or space them by ``interleave_moe_layer_step``; the rest
    follow ``first_k_dense_replace``, ``moe_layer_freq``, ``decoder_sparse_step``
    and ``mlp_only_layers`` (DeepSeek, Qwen-MoE).
    """
    if declared is not None:
        if "moe" in declared and not routed_experts(cfg):
            raise KvsimError("the layer pattern has MoE layers but n_routed_experts is missing: "
                             "expected an integer >= 1")
        return declared
    mt = str(cfg.get("model_type", ""))
    n = len(kinds)
    if mt in _ATTENTION_FREE_MODEL_TYPES or mt == "zamba2":
        return ["none"] * n
    experts = routed_experts(cfg)
    if not experts:
        return ["dense"] * n
    if mt == "jamba":
        if experts <= 1:
            return ["dense"] * n
        period = optional_int(cfg, "expert_layer_period", 2, min=1)
        offset = optional_int(cfg, "expert_layer_offset", 1)
        return ["moe" if i % period == offset else "dense" for i in range(n)]
    if cfg.get("moe_layers") is not None:
        listed = cfg["moe_layers"]
        if not isinstance(listed, list):
            raise KvsimError(f"moe_layers={listed!r:.60} is not valid: expected a list of layer "
                             f"indices in [0, {n - 1}]")
        chosen = {strict_int("moe_layers entry", i, min=0, max=n - 1) for i in listed}
        return ["moe" if i in chosen else "dense" for i in range(n)]
    first_dense = optional_int(cfg, "first_k_dense_replace", 0)
    freq = optional_int(cfg, "moe_layer_freq", 1, min=1)
    step = (optional_int(cfg, "decoder_sparse_step", None, min=1)
            or optional_int(cfg, "interleave_moe_layer_step", 1, min=1))
    mlp_only = _mlp_only_layers(cfg)
    return ["moe" if i >= first_dense and i % freq == 0 and (i + 1) % step == 0
            and i not in mlp_only else "dense" for i in range(n)]


def _mlp_only_layers(cfg: HfConfig) -> set[int]:
    """The layer indices ``mlp_only_layers`` keeps dense (Qwen-MoE): a list of integers >= 0
    (absent, null or empty: none); anything else is a one-line error."""
    listed = cfg.get("mlp_only_layers") or []
    if not isinstance(listed, list):
        raise KvsimError(f"mlp_only_layers={listed!r:.60} is not valid: expected a list of layer "
                         f"indices >= 0")
    return {strict_int("mlp_only_layers entry", i, min=0) for i in listed}


def routed_experts(cfg: HfConfig) -> int:
    """Routed experts per MoE layer (``n_routed_experts``, ``num_local_experts`` or ``num_experts``; 0 if dense)."""
    n_experts = next((cfg[k] for k in ("n_routed_experts", "num_local_experts", "num_experts")
                      if cfg.get(k)), 0)
    return strict_int("num_experts", n_experts, min=0)
