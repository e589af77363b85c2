"""Model specifications: the architecture figures that decide KV bytes per token.

Explained in chapter 1, *Bytes per token and capacity*.

A :class:`ModelSpec` holds just what the simulator needs from a model: how many
layers keep a paged KV cache, how many KV heads of which width they store (or,
for multi-head latent attention, how wide the compressed latent is), the
sliding (or chunked) windows, the fixed per-request state of the stateful
layers of hybrids (Mamba, linear attention, short convolutions, RG-LRU; see
:data:`LAYER_KINDS`), the context limit, and the parameter counts (or the
checkpoint's byte count) that set the weight memory and the roofline cost of a
step.

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
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Mapping

from kvsim.errors import KvsimError, check_int
from kvsim.units import cdiv

__all__ = [
    "DTYPE_BYTES", "LAYER_KINDS", "ModelSpec", "ComputeShape", "ParamEstimate", "estimate_params",
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

#: The layer kinds :func:`_layer_kinds` gives each decoder layer, by what its
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
_KV_KINDS = frozenset({"full", "sliding", "chunked", "hybrid"})
_WINDOW_KINDS = frozenset({"sliding", "chunked"})

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
_MAMBA1_MODEL_TYPES = frozenset({"mamba", "falcon_mamba", "jamba"})
# families whose transformers config ties the output head to the embedding by default
_TIED_BY_DEFAULT = frozenset({"recurrent_gemma", "lfm2", "zamba2", "mamba"})
_STATE_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
# the length fields vLLM's _get_and_verify_max_len reads (vllm/config/model.py)
_MAX_LEN_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
                 "model_max_length", "max_target_positions", "max_sequence_length",
                 "max_seq_length", "seq_len")


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
    ``checkpoint_bytes``, when set, is the checkpoint's own byte count (read
    from ``model.safetensors.index.json`` or a ``model.safetensors`` header)
    and is what :attr:`weight_bytes` returns. ``max_model_len`` is the
    context limit (:meth:`check_seq_len`).

    Hybrids: ``kv_layers`` counts the layers that attend (full, sliding,
    chunked, and Falcon-H1/Zamba2 layers that attend beside a Mamba2 mixer);
    ``state_bytes_per_request`` is the fixed state of every linear-attention,
    Mamba, short-convolution and RG-LRU mixer (see :data:`LAYER_KINDS`).
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
    vocab_size: int | None = None
    intermediate_size: int | None = None
    compute: "ComputeShape | None" = None
    checkpoint_bytes: int | None = None

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
        for field in ("vocab_size", "intermediate_size", "checkpoint_bytes"):
            if getattr(self, field) is not None:
                count(field, min=1)
        if self.compute is not None and not isinstance(self.compute, ComputeShape):
            raise KvsimError(f"{p}compute={self.compute!r:.60} is not valid: expected a "
                             f"kvsim.model.spec.ComputeShape or None")

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

    def tensor_parallel_problem(self, tp: int) -> str | None:
        """Why ``tp`` GPUs cannot split this model as vLLM does, or ``None`` when they can.

        vLLM requires the attention heads to divide evenly
        (``ModelConfig.verify_with_parallel_config``), the KV heads to divide
        over the GPUs or the GPUs over the KV heads (``QKVParallelLinear``:
        ``divide``, each GPU then keeps ``tp / kv_heads`` replicas), and the
        MLP width to divide (``MergedColumnParallelLinear``). MLA's latent is
        not split, so its KV heads set no rule.
        """
        if self.num_attention_heads % tp:
            return f"its {self.num_attention_heads} attention heads do not divide over {tp} GPUs"
        kv = self.num_kv_heads
        if self.attention_kind != "mla" and kv and (kv % tp if kv >= tp else tp % kv):
            return (f"its {kv} KV heads neither divide over {tp} GPUs nor {tp} GPUs over them")
        if self.intermediate_size and self.intermediate_size % tp:
            return f"its MLP width {self.intermediate_size} does not divide over {tp} GPUs"
        return None

    def check_tensor_parallel_size(self, tensor_parallel_size) -> int:
        """``tensor_parallel_size`` checked against this model (a one-line error names why not)."""
        tp = check_int("tensor_parallel_size", tensor_parallel_size, min=1, max=1024)
        why = self.tensor_parallel_problem(tp)
        if why is not None:
            fits = [n for n in range(1, 65) if self.tensor_parallel_problem(n) is None]
            raise KvsimError(f"tensor_parallel_size={tp} cannot split {self.name}: {why}: "
                             f"expected one of {', '.join(map(str, fits))}")
        return tp

    @property
    def kv_tensors(self) -> int:
        """Tensors cached per token in each KV layer: 2 (a key and a value), 1 for MLA (one latent).

        What a swap copies per block and layer, and the factor 2 of
        :meth:`kv_bytes_per_token` that MLA does not pay.
        """
        return 1 if self.attention_kind == "mla" else 2

    def compute_shape(self) -> "ComputeShape":
        """The matmul and element-wise work of a forward pass (see :class:`ComputeShape`).

        Built from the config for presets and parsed configs; a hand-made spec
        without one gets :meth:`ComputeShape.approximate`.
        """
        return self.compute if self.compute is not None else ComputeShape.approximate(self)

    @property
    def weight_bytes(self) -> int:
        """Weight memory: ``checkpoint_bytes`` when known, else ``num_params x`` bytes of
        ``weight_dtype`` (or ``dtype``)."""
        if self.checkpoint_bytes is not None:
            return self.checkpoint_bytes
        return self.num_params * DTYPE_BYTES[self.weight_dtype or self.dtype]

    def check_seq_len(self, n, what: str = "seq_len") -> int:
        """Return ``n`` if a sequence of ``n`` tokens fits ``max_model_len``, else raise.

        The one-line :class:`KvsimError` names ``what`` (``seq_len``, a
        request's length, ...), the value and the range, e.g.
        ``seq_len=8000 is out of range: expected an integer in [1, 4096], the
        max_model_len of llama-2-7b``. Like vLLM, which refuses a prompt
        longer than its ``max_model_len``.
        """
        rng = f"in [1, {self.max_model_len}], the max_model_len of {self.name}"
        if isinstance(n, bool) or n is None:
            raise KvsimError(f"{what}={n!r} is not a whole number: expected an integer {rng}")
        try:
            value = check_int(what, n)
        except KvsimError:
            raise KvsimError(f"{what}={n!r} is not a whole number: expected an integer {rng}") from None
        if not 1 <= value <= self.max_model_len:
            raise KvsimError(f"{what}={value} is out of range: expected an integer {rng}")
        return value

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
        defaults to the model's ``dtype``. NOTE(sliding-window-full-context):
        sliding-window layers are charged like full-attention ones, as vLLM's
        V0 block manager does (V1's hybrid allocator frees what leaves the window); see
        :meth:`kv_bytes_for_sequence` for what a window-aware allocator needs.
        Explained in chapter 1, *Bytes per token and capacity*.

        >>> get_model("llama-2-7b").kv_bytes_per_token()
        524288
        """
        return self.kv_layers * self.kv_bytes_per_token_per_layer(kv_dtype)

    def kv_bytes_for_sequence(self, num_tokens: int, kv_dtype: str | None = None) -> int:
        """KV bytes a sequence of ``num_tokens`` needs when sliding windows are honoured.

        Full-attention layers hold every token; sliding-window layers (and
        Llama 4's chunked-attention layers, whose chunk is the window) hold at
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
        OPT), mixture-of-experts (Mixtral, Qwen-MoE, DeepSeek, Llama 4,
        gpt-oss, MiniMax), multi-head latent attention (``kv_lora_rank``),
        sliding and chunked windows, and hybrids in every declaration style
        transformers configs use (see :func:`_layer_kinds`): Jamba, Bamba,
        Nemotron-H, Granite-4.0-H, Zamba2, Falcon-H1, Qwen3-Next, MiniMax,
        LFM2, RecurrentGemma. Only the layers that attend hold KV; the Mamba,
        linear-attention, short-convolution and RG-LRU mixers' fixed state
        goes to ``state_bytes_per_request``. A model with no attention layer
        at all (Mamba, Mamba2, Falcon-Mamba) keeps no KV cache, so a paged KV
        simulation does not apply: it raises :class:`KvsimError` saying so and
        giving its fixed state (:func:`estimate_params` still counts its
        parameters). ``num_params`` and ``active_params`` are estimated per
        layer kind with :func:`estimate_params`; when the config sits in a
        checkpoint folder with ``model.safetensors.index.json`` (or one
        ``model.safetensors``), its byte count becomes ``checkpoint_bytes``
        (the weight memory) and ``source`` says so. ``max_model_len`` is
        derived as vLLM does. A malformed config or index raises
        :class:`KvsimError` naming the field or file. Explained in chapter 1.
        """
        cfg, source, default_name = _load_config(path_or_dict)
        arch = _parse_architecture(cfg)
        est, shape = _account(cfg, arch)
        dtype, weight_dtype = _parse_dtypes(cfg)
        state_bytes = (arch["state_conv_elems"] * DTYPE_BYTES[dtype]
                       + arch["state_temporal_elems"] * _temporal_state_bytes(_text_config(cfg), dtype))
        checkpoint = _checkpoint_bytes(_config_folder(path_or_dict))
        if checkpoint is not None:
            source += f"; weights {checkpoint[0]:,} bytes from {checkpoint[1]}"
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
            state_bytes_per_request=state_bytes,
            dtype=dtype,
            weight_dtype=weight_dtype,
            max_model_len=arch["max_model_len"],
            source=source,
            vocab_size=_req(_text_config(cfg), "vocab_size"),
            intermediate_size=arch["intermediate_size"],
            compute=shape,
            checkpoint_bytes=checkpoint[0] if checkpoint is not None else None,
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


def _config_folder(path_or_dict) -> Path | None:
    """The folder a config path points into (``None`` for a dict)."""
    if not isinstance(path_or_dict, (str, Path)):
        return None
    path = Path(path_or_dict)
    return path if path.is_dir() else path.parent


def _checkpoint_bytes(folder: Path | None) -> tuple[int, str] | None:
    """The checkpoint's weight bytes and where they came from, or ``None``.

    ``model.safetensors.index.json``'s ``metadata.total_size`` (the bytes of
    every tensor of a sharded checkpoint), else the tensors listed in a single
    ``model.safetensors`` header (read without the tensors).
    """
    if folder is None:
        return None
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        return _index_total_size(index), f"{index} (metadata.total_size)"
    single = folder / "model.safetensors"
    if single.is_file():
        return _safetensors_data_bytes(single), f"{single} (header)"
    return None


def _index_total_size(path: Path) -> int:
    expected = "expected a JSON object whose metadata.total_size is an integer >= 1"
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise KvsimError(f"checkpoint index {str(path)!r} cannot be read ({reason}): "
                         f"{expected}") from None
    except json.JSONDecodeError as exc:
        raise KvsimError(f"checkpoint index {str(path)!r} is not valid JSON ({exc.msg} at line "
                         f"{exc.lineno}): {expected}") from None
    meta = index.get("metadata") if isinstance(index, dict) else None
    total = meta.get("total_size") if isinstance(meta, dict) else None
    if isinstance(total, bool) or not isinstance(total, (int, float)) or total < 1 \
            or total != int(total):
        raise KvsimError(f"checkpoint index {str(path)!r} has metadata.total_size={total!r}: {expected}")
    return int(total)


def _safetensors_data_bytes(path: Path) -> int:
    """Sum of the tensors' byte ranges in a safetensors header.

    The file starts with the header's length (8 bytes, little-endian), then
    the header: JSON mapping each tensor name to its dtype, shape and
    ``data_offsets`` (begin, end) in the data that follows.
    """
    expected = "expected a safetensors file (8-byte little-endian header length, then a JSON header)"
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            length = int.from_bytes(f.read(8), "little")
            if size < 8 or not 2 <= length <= min(size - 8, 100_000_000):
                raise KvsimError(f"checkpoint {str(path)!r} has a header length of {length} bytes "
                                 f"in a file of {size}: {expected}")
            header = json.loads(f.read(length).decode("utf-8"))
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise KvsimError(f"checkpoint {str(path)!r} cannot be read ({reason}): {expected}") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise KvsimError(f"checkpoint {str(path)!r} has a header that is not JSON: {expected}") from None
    if not isinstance(header, dict):
        raise KvsimError(f"checkpoint {str(path)!r} has a JSON {type(header).__name__} header: "
                         f"{expected}")
    total = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        offsets = info.get("data_offsets") if isinstance(info, dict) else None
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1]):
            raise KvsimError(f"checkpoint {str(path)!r} tensor {name!r:.60} has data_offsets="
                             f"{offsets!r:.40}: expected [begin, end] with 0 <= begin <= end")
        total += offsets[1] - offsets[0]
    if total < 1 or total > size - 8 - length:
        raise KvsimError(f"checkpoint {str(path)!r} lists {total} tensor bytes in a file of {size}: "
                         f"expected between 1 and {size - 8 - length}")
    return total


def _text_config(cfg: dict) -> dict:
    """Multimodal configs nest the language model under ``text_config``."""
    if "num_hidden_layers" not in cfg and isinstance(cfg.get("text_config"), dict):
        merged = dict(cfg["text_config"])
        for key in ("torch_dtype", "dtype", "quantization_config", "_name_or_path",
                    "tie_word_embeddings"):
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


# ---------------------------------------------------------------------------
# layer kinds: every way a config.json declares what each decoder layer is


def _layer_kinds(cfg: dict, n: int) -> list[str]:
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
    return _layer_plan(cfg, n)[0]


def _layer_plan(cfg: dict, n: int) -> tuple[list[str], list[str] | None]:
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
        k = _strict_int("full_attention_interval", cfg["full_attention_interval"], min=1)
        return ["full" if (i + 1) % k == 0 else "linear" for i in range(n)], None
    if mt == "falcon_h1":                    # transformers' FalconH1Config: every layer "hybrid"
        return ["hybrid"] * n, None
    if mt in _ATTENTION_FREE_MODEL_TYPES:
        return ["mamba"] * n, None
    if cfg.get("attention_chunk_size") is not None and mt.startswith("llama4"):
        return _kinds_from_rope_layers(cfg, n), None
    return _sliding_window_kinds(cfg, n), None


def _kinds_from_layer_types(types, n: int) -> list[str]:
    """``layer_types``: one name per layer (gpt-oss, Gemma 3, Qwen3-Next, LFM2, Granite-4.0-H)."""
    if not isinstance(types, list) or len(types) != n:
        raise KvsimError(f"layer_types has {len(types) if isinstance(types, list) else types!r} "
                         f"entries: expected a list of num_hidden_layers={n} layer types")
    for t in types:
        if t not in _LAYER_TYPES:
            raise KvsimError(f"layer_types entry {t!r} is not known: expected one of "
                             f"{', '.join(sorted(_LAYER_TYPES))}")
    return [_LAYER_TYPES[t] for t in types]


def _kinds_from_block_types(types, n: int, *, mixer_only: bool) -> tuple[list[str], list[str] | None]:
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


def _kinds_from_pattern(pattern, n: int) -> tuple[list[str], list[str]]:
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


def _kinds_from_attn_type_list(values, n: int) -> list[str]:
    """``attn_type_list`` (MiniMax-Text-01/M1): 0 lightning (linear) attention, 1 softmax attention."""
    if not isinstance(values, list) or len(values) != n:
        raise KvsimError(f"attn_type_list has {len(values) if isinstance(values, list) else values!r} "
                         f"entries: expected a list of num_hidden_layers={n} values 0 or 1")
    for v in values:
        if isinstance(v, bool) or v not in (0, 1):
            raise KvsimError(f"attn_type_list entry {v!r} is not known: expected 0 (lightning "
                             f"attention) or 1 (softmax attention)")
    return ["full" if v == 1 else "linear" for v in values]


def _kinds_from_recurrent_blocks(block_types, n: int) -> list[str]:
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


def _kinds_from_attention_period(cfg: dict, n: int) -> list[str]:
    """Jamba: attention where ``i % attn_layer_period == attn_layer_offset``, Mamba elsewhere."""
    period = _strict_int("attn_layer_period", cfg["attn_layer_period"], min=1)
    offset = _strict_int("attn_layer_offset", cfg.get("attn_layer_offset", 0), min=0, max=period - 1)
    return ["full" if i % period == offset else "mamba" for i in range(n)]


def _kinds_from_indices(field: str, indices, n: int, other: str) -> list[str]:
    """Attention at the listed layers, ``other`` elsewhere (Bamba's Mamba2, LFM2's short conv)."""
    if not isinstance(indices, list):
        raise KvsimError(f"{field}={indices!r:.60} is not valid: expected a list of layer indices "
                         f"in [0, {n - 1}]")
    chosen = {_strict_int(f"{field} entry", i, min=0, max=n - 1) for i in indices}
    return ["full" if i in chosen else other for i in range(n)]


def _kinds_from_rope_layers(cfg: dict, n: int) -> list[str]:
    """Llama 4: RoPE layers attend in chunks of ``attention_chunk_size``; NoPE layers are global.

    ``no_rope_layers[i]`` is 1 where layer i uses RoPE (chunked local
    attention in vLLM's Llama4Attention) and 0 for a global NoPE layer; an
    absent or empty list means one NoPE layer every ``no_rope_layer_interval``
    (4) layers, as transformers' Llama4TextConfig builds it.
    """
    flags = cfg.get("no_rope_layers")
    if not flags:
        interval = _opt(cfg, "no_rope_layer_interval", 4, min=1)
        flags = [int((i + 1) % interval != 0) for i in range(n)]
    if not isinstance(flags, list) or len(flags) != n:
        raise KvsimError(f"no_rope_layers has {len(flags) if isinstance(flags, list) else flags!r} "
                         f"entries: expected a list of num_hidden_layers={n} values 0 or 1")
    for v in flags:
        if isinstance(v, bool) or v not in (0, 1):
            raise KvsimError(f"no_rope_layers entry {v!r} is not known: expected 1 (RoPE, chunked "
                             f"attention) or 0 (NoPE, global attention)")
    return ["chunked" if v else "full" for v in flags]


def _sliding_window_kinds(cfg: dict, n: int) -> list[str]:
    """The sliding-window families that declare no per-layer list (transformers' rules)."""
    mt = str(cfg.get("model_type", ""))
    window = cfg.get("sliding_window")
    if window is None or cfg.get("use_sliding_window") is False:
        return ["full"] * n
    if mt == "gemma2":                       # even layers slide (transformers' Gemma2)
        return ["sliding" if i % 2 == 0 else "full" for i in range(n)]
    if mt.startswith("gemma3") or mt == "cohere2":   # every p-th layer is global
        p = _opt(cfg, "sliding_window_pattern", 6 if mt.startswith("gemma3") else 4, min=1)
        return ["full" if (i + 1) % p == 0 else "sliding" for i in range(n)]
    if mt.startswith("qwen") and cfg.get("use_sliding_window"):
        first = _opt(cfg, "max_window_layers", 0)
        return ["sliding" if i >= first else "full" for i in range(n)]
    if mt.startswith("qwen"):                # Qwen configs carry a window they do not use
        return ["full"] * n
    return ["sliding"] * n                   # Mistral semantics: every layer slides


def _layer_ffns(cfg: dict, kinds: list[str], declared: list[str] | None) -> list[str]:
    """The feed-forward block of each layer: ``"dense"``, ``"moe"`` or ``"none"``.

    Mixer-only families (Mamba, Mamba2, Falcon-Mamba; Zamba2, whose MLP sits
    in its shared transformer blocks) have none. Jamba's MoE layers are where
    ``i % expert_layer_period == expert_layer_offset``; Llama 4 may list its
    ``moe_layers`` or space them by ``interleave_moe_layer_step``; the rest
    follow ``first_k_dense_replace``, ``moe_layer_freq``, ``decoder_sparse_step``
    and ``mlp_only_layers`` (DeepSeek, Qwen-MoE).
    """
    if declared is not None:
        if "moe" in declared and not _num_experts(cfg):
            raise KvsimError("the layer pattern has MoE layers but n_routed_experts is missing: "
                             "expected an integer >= 1")
        return declared
    mt = str(cfg.get("model_type", ""))
    n = len(kinds)
    if mt in _ATTENTION_FREE_MODEL_TYPES or mt == "zamba2":
        return ["none"] * n
    experts = _num_experts(cfg)
    if not experts:
        return ["dense"] * n
    if mt == "jamba":
        if experts <= 1:
            return ["dense"] * n
        period = _opt(cfg, "expert_layer_period", 2, min=1)
        offset = _opt(cfg, "expert_layer_offset", 1)
        return ["moe" if i % period == offset else "dense" for i in range(n)]
    if cfg.get("moe_layers") is not None:
        listed = cfg["moe_layers"]
        if not isinstance(listed, list):
            raise KvsimError(f"moe_layers={listed!r:.60} is not valid: expected a list of layer "
                             f"indices in [0, {n - 1}]")
        chosen = {_strict_int("moe_layers entry", i, min=0, max=n - 1) for i in listed}
        return ["moe" if i in chosen else "dense" for i in range(n)]
    first_dense = _opt(cfg, "first_k_dense_replace", 0)
    freq = _opt(cfg, "moe_layer_freq", 1, min=1)
    step = (_opt(cfg, "decoder_sparse_step", None, min=1)
            or _opt(cfg, "interleave_moe_layer_step", 1, min=1))
    mlp_only = set(cfg.get("mlp_only_layers") or [])
    return ["moe" if i >= first_dense and i % freq == 0 and (i + 1) % step == 0
            and i not in mlp_only else "dense" for i in range(n)]


def _num_experts(cfg: dict) -> int:
    n_experts = next((cfg[k] for k in ("n_routed_experts", "num_local_experts", "num_experts")
                      if cfg.get(k)), 0)
    return _strict_int("num_experts", n_experts, min=0)


# ---------------------------------------------------------------------------
# fixed per-request state of the stateful layer kinds


def _first(cfg: dict, keys: tuple[str, ...]):
    """The first of ``keys`` the config sets (not null), as ``(key, value)``, or ``(None, None)``."""
    for key in keys:
        if cfg.get(key) is not None:
            return key, cfg[key]
    return None, None


def _first_int(cfg: dict, keys: tuple[str, ...], default=None, *, min: int = 1) -> int:
    key, value = _first(cfg, keys)
    if key is None:
        if default is None:
            raise KvsimError(f"config.json is missing field {keys[0]!r} (or {', '.join(keys[1:])}): "
                             f"expected an integer >= {min}")
        return default
    return _strict_int(key, value, min=min)


@dataclass(frozen=True)
class _MambaDims:
    """A Mamba mixer's widths: ``version`` 1 (Mamba1, selective scan) or 2 (Mamba2, SSD).

    ``inner`` is the expanded width d_inner, ``state`` d_state, ``conv`` the
    causal-convolution kernel d_conv; Mamba2 adds ``heads`` x ``head_dim``
    (= ``inner``) and ``groups`` of B/C; Mamba1 adds ``dt_rank``.
    """

    version: int
    inner: int
    state: int
    conv: int
    heads: int = 0
    head_dim: int = 0
    groups: int = 1
    dt_rank: int = 0


def _mamba_dims(cfg: dict, hidden: int) -> _MambaDims:
    """Read a Mamba mixer's widths under every field name the families use.

    Mamba1 (``mamba``, ``falcon_mamba``, ``jamba``): d_inner is
    ``intermediate_size`` for the pure Mamba models, else
    ``mamba_expand`` x ``hidden_size``. Mamba2 (``mamba2``, ``nemotron_h``,
    ``bamba``, ``falcon_h1``, ``granitemoehybrid``, ``zamba2``): d_inner is
    ``mamba_d_ssm`` (Falcon-H1), else heads x head_dim, else expand x hidden.
    """
    mt = str(cfg.get("model_type", ""))
    state = _first_int(cfg, ("mamba_d_state", "ssm_state_size", "state_size", "mamba_state_dim"))
    conv = _first_int(cfg, ("mamba_d_conv", "conv_kernel", "mamba_conv_kernel", "conv_dimension"), 4)
    expand = _first_int(cfg, ("mamba_expand", "expand", "expansion_factor"), 2)
    if mt in _MAMBA1_MODEL_TYPES:
        inner = expand * hidden
        if mt != "jamba" and cfg.get("intermediate_size") is not None:
            inner = _strict_int("intermediate_size", cfg["intermediate_size"], min=1)
        key, rank = _first(cfg, ("mamba_dt_rank", "time_step_rank"))
        dt_rank = cdiv(hidden, 16) if rank in (None, "auto") else _strict_int(key, rank, min=1)
        return _MambaDims(version=1, inner=inner, state=state, conv=conv, dt_rank=dt_rank)
    plain = ("num_heads",) if mt == "mamba2" else ()
    heads = _first_int(cfg, ("mamba_n_heads", "mamba_num_heads", "n_mamba_heads") + plain, 0, min=0)
    key, head_dim = _first(cfg, ("mamba_d_head", "mamba_head_dim", "mamba_headdim")
                           + (("head_dim",) if mt == "mamba2" else ()))
    head_dim = 0 if head_dim in (None, "auto") else _strict_int(key, head_dim, min=1)
    if cfg.get("mamba_d_ssm") is not None:
        inner = _strict_int("mamba_d_ssm", cfg["mamba_d_ssm"], min=1)
    elif heads and head_dim:
        inner = heads * head_dim
    else:
        inner = expand * hidden
    if not heads and not head_dim:
        raise KvsimError("config.json is missing field 'mamba_n_heads' (or mamba_num_heads, "
                         "n_mamba_heads, mamba_d_head): expected an integer >= 1")
    heads = heads or inner // head_dim
    head_dim = head_dim or inner // heads
    if heads * head_dim != inner:
        raise KvsimError(f"Mamba2 heads={heads} x head_dim={head_dim} does not match its inner "
                         f"width {inner}: expected heads x head_dim = {inner}")
    groups = _first_int(cfg, ("mamba_n_groups", "n_groups", "mamba_ngroups", "mamba_num_groups"), 1)
    return _MambaDims(version=2, inner=inner, state=state, conv=conv, heads=heads,
                      head_dim=head_dim, groups=groups)


def _layer_state_elems(cfg: dict, kind: str, hidden: int, heads: int, head_dim: int) -> tuple[int, int]:
    """Elements of one layer's fixed per-request state: ``(conv, temporal)``.

    The shapes are those of vLLM's ``MambaStateShapeCalculator``
    (vllm/model_executor/layers/mamba/mamba_utils.py), at TP size 1:

    * Mamba1: conv ``(d_conv - 1) x d_inner``, temporal ``d_inner x d_state``.
    * Mamba2 (also the Mamba half of Falcon-H1 and Zamba2 "hybrid" layers):
      conv ``(d_conv - 1) x (d_inner + 2 x n_groups x d_state)``, temporal
      ``nheads x head_dim x d_state``.
    * Gated delta net (Qwen3-Next ``linear_*`` fields): conv
      ``(kernel - 1) x (2 x key heads x key dim + value heads x value dim)``,
      temporal ``value heads x value dim x key dim``.
    * Lightning attention (MiniMax): temporal ``heads x head_dim x head_dim``.
    * Short conv (LFM2): conv ``(conv_L_cache - 1) x hidden_size``.
    * RG-LRU (RecurrentGemma, not served by vLLM; transformers' cache):
      conv ``(conv1d_width - 1) x lru_width``, temporal ``lru_width``.
    """
    if kind in ("mamba", "hybrid"):
        d = _mamba_dims(cfg, hidden)
        if d.version == 1:
            return (d.conv - 1) * d.inner, d.inner * d.state
        return (d.conv - 1) * (d.inner + 2 * d.groups * d.state), d.heads * d.head_dim * d.state
    if kind == "linear" and cfg.get("linear_num_value_heads") is not None:
        nk, nv = _req(cfg, "linear_num_key_heads"), _req(cfg, "linear_num_value_heads")
        dk, dv = _req(cfg, "linear_key_head_dim"), _req(cfg, "linear_value_head_dim")
        kernel = _req(cfg, "linear_conv_kernel_dim")
        return (2 * nk * dk + nv * dv) * (kernel - 1), nv * dk * dv
    if kind == "linear":
        return 0, heads * head_dim * head_dim
    if kind == "conv":
        return (_first_int(cfg, ("conv_L_cache", "conv_l_cache"), 3) - 1) * hidden, 0
    if kind == "recurrent":
        width = _opt(cfg, "lru_width", hidden, min=1)
        return (_opt(cfg, "conv1d_width", 4, min=1) - 1) * width, width
    return 0, 0


def _temporal_state_bytes(cfg: dict, dtype: str) -> int:
    """Bytes per element of the temporal (SSM) state.

    vLLM's ``mamba_ssm_cache_dtype`` defaults to ``"auto"``: the conv-state
    dtype, i.e. the model dtype. For Nemotron-H, vLLM's
    ``NemotronHForCausalLMConfig`` hook (vllm/model_executor/models/config.py)
    takes the config's ``mamba_ssm_cache_dtype``, else float32.
    """
    if str(cfg.get("model_type", "")) != "nemotron_h":
        return DTYPE_BYTES[dtype]
    raw = cfg.get("mamba_ssm_cache_dtype", "float32")
    if raw == "auto":
        return DTYPE_BYTES[dtype]
    if raw not in _STATE_DTYPE_BYTES:
        raise KvsimError(f"mamba_ssm_cache_dtype={raw!r} is not known: expected one of "
                         f"{', '.join(_STATE_DTYPE_BYTES)} or 'auto'")
    return _STATE_DTYPE_BYTES[raw]


# ---------------------------------------------------------------------------
# max_model_len


def _max_model_len(cfg: dict) -> int:
    """The context limit vLLM derives from a config (``_get_and_verify_max_len``).

    The smallest of the length fields vLLM looks at, ``model_max_length``
    taking precedence, 2048 when none is set (vLLM's fallback); then a
    ``rope_scaling`` (or ``rope_parameters``) whose type is not ``su``,
    ``longrope`` or ``llama3`` multiplies it by its ``factor`` (``yarn`` from
    its ``original_max_position_embeddings``), except for Gemma 3, whose
    length is already scaled (vllm/config/model.py).
    """
    lengths = [_strict_int(k, cfg[k], min=1) for k in _MAX_LEN_KEYS if cfg.get(k) is not None]
    derived = min(lengths) if lengths else 2048
    if cfg.get("model_max_length") is not None:
        derived = _strict_int("model_max_length", cfg["model_max_length"], min=1)
    if "gemma3" in str(cfg.get("model_type", "")):
        return derived
    for rope in _rope_scalings(cfg):
        kind = rope.get("rope_type", rope.get("type"))
        if kind is None or kind in ("su", "longrope", "llama3"):
            continue
        factor = rope.get("factor", 1.0)
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 0:
            raise KvsimError(f"rope_scaling factor={factor!r} is not valid: expected a number > 0")
        if kind == "yarn":
            derived = _req(rope, "original_max_position_embeddings")
        return int(derived * factor)
    return derived


def _rope_scalings(cfg: dict) -> list[dict]:
    """``rope_scaling``, or transformers v5's ``rope_parameters`` (flat, or one per layer type)."""
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    if not isinstance(rope, dict):
        return []
    if rope and all(isinstance(v, dict) for v in rope.values()):
        return list(rope.values())
    return [rope]


# ---------------------------------------------------------------------------
# the architecture


def _parse_architecture(cfg: dict, *, require_kv: bool = True) -> dict:
    """The figures a spec needs, from a config; ``require_kv`` refuses a model with no KV layer."""
    cfg = _text_config(cfg)
    mt = str(cfg.get("model_type", ""))
    n = _req(cfg, "num_hidden_layers")
    hidden = _req(cfg, "hidden_size")
    kinds, declared_ffns = _layer_plan(cfg, n)
    kv_layers = sum(k in _KV_KINDS for k in kinds)
    if kv_layers or "linear" in kinds:
        heads = _req(cfg, "num_attention_heads")
    else:
        heads = _opt(cfg, "num_attention_heads", 1, min=1)
    _req(cfg, "vocab_size")
    ffns = _layer_ffns(cfg, kinds, declared_ffns)
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
        head_dim = _attention_head_dim(cfg, mt, hidden, heads, needed=kv_layers > 0)
    conv_elems = temporal_elems = 0
    state_error = None
    try:
        for kind in kinds:
            conv, temporal = _layer_state_elems(cfg, kind, hidden, heads, head_dim)
            conv_elems += conv
            temporal_elems += temporal
    except KvsimError as exc:
        if kv_layers or not require_kv:
            raise
        state_error = exc
    if kv_layers == 0 and require_kv:
        raise _no_kv_cache_error(cfg, kinds, None if state_error else (conv_elems, temporal_elems))
    window_kinds = [k for k in kinds if k in _WINDOW_KINDS]
    window = _attention_window(cfg, set(window_kinds)) if window_kinds else None
    inter = cfg.get("ffn_dim", cfg.get("intermediate_size"))
    inter = _strict_int("intermediate_size", inter, min=1) if inter is not None else None
    return dict(num_layers=n, hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
                intermediate_size=inter,
                kv_lora_rank=kv_lora_rank, rope_dim=rope_dim, kinds=kinds, ffns=ffns,
                kv_layers=kv_layers, sliding_layers=len(window_kinds), sliding_window=window,
                state_conv_elems=conv_elems, state_temporal_elems=temporal_elems,
                max_model_len=_max_model_len(cfg))


def _attention_head_dim(cfg: dict, mt: str, hidden: int, heads: int, *, needed: bool) -> int:
    """``head_dim`` (or ``attention_head_dim``), else hidden / heads; Zamba2 attends over 2 x hidden."""
    key, value = _first(cfg, ("head_dim", "attention_head_dim") if mt != "mamba2" else ())
    if key is not None:
        return _strict_int(key, value, min=1)
    width = 2 * hidden if mt == "zamba2" else hidden      # transformers' Zamba2Config
    if width % heads:
        if not needed:
            return 1
        raise KvsimError(f"hidden_size={hidden} is not a multiple of "
                         f"num_attention_heads={heads} and head_dim is missing: "
                         f"expected an explicit head_dim")
    return width // heads


def _attention_window(cfg: dict, window_kinds: set[str]) -> int:
    """The one window of the windowed layers: ``sliding_window``, RecurrentGemma's
    ``attention_window_size``, or Llama 4's ``attention_chunk_size``."""
    windows = {}
    if "sliding" in window_kinds:
        key, value = _first(cfg, ("sliding_window", "attention_window_size"))
        if key is None:
            raise KvsimError("layer_types has sliding_attention layers but sliding_window is "
                             "missing: expected an integer >= 1")
        windows[key] = _strict_int(key, value, min=1)
    if "chunked" in window_kinds:
        if cfg.get("attention_chunk_size") is None:
            raise KvsimError("layer_types has chunked_attention layers but attention_chunk_size "
                             "is missing: expected an integer >= 1")
        windows["attention_chunk_size"] = _strict_int("attention_chunk_size",
                                                      cfg["attention_chunk_size"], min=1)
    if len(set(windows.values())) > 1:
        shown = ", ".join(f"{k}={v}" for k, v in windows.items())
        raise KvsimError(f"the windowed layers have two windows ({shown}): expected one window, "
                         f"as kvsim keeps a single sliding_window")
    return next(iter(windows.values()))


def _no_kv_cache_error(cfg: dict, kinds: list[str], state: tuple[int, int] | None) -> KvsimError:
    counts = ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds))
    if state is None:
        held = "only a fixed per-request state"
    else:
        dtype = _parse_dtypes(cfg)[0]
        nbytes = state[0] * DTYPE_BYTES[dtype] + state[1] * _temporal_state_bytes(cfg, dtype)
        held = f"only a fixed per-request state of {nbytes:,} bytes"
    return KvsimError(f"config.json has no attention layer holding a KV cache ({counts} layers): "
                      f"the model keeps {held}, so a paged KV-cache simulation does not apply: "
                      f"expected at least one full, sliding, chunked or hybrid attention layer")


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

    Counts embeddings and the output head (unless tied), each layer's
    sequence mixer by its kind (GQA, gated attention, MLA low-rank
    projections, linear attention, Mamba1/Mamba2 mixers, short convolutions,
    RG-LRU blocks, Zamba2's shared blocks), the MLP or the mixture of experts
    (routed experts, shared experts, router), and the norms. Works for
    attention-free models (Mamba) too. Multi-token-prediction modules
    (DeepSeek's ``num_nextn_predict_layers``) are left out, as in the
    published totals. Exact for the Llama family; within about 1 % of the
    published totals of the shared test configs. Explained in chapter 1.
    """
    cfg, _, _ = _load_config(config)
    return _estimate(cfg, _parse_architecture(cfg, require_kv=False))


def _estimate(cfg: dict, arch: dict) -> ParamEstimate:
    return _account(cfg, arch)[0]


def _account(cfg: dict, arch: dict) -> tuple[ParamEstimate, "ComputeShape"]:
    """Parameter counts and the compute shape, layer by layer and per layer kind.

    Each matmul is counted once with its input and output widths, so the same
    pass gives the weights (``ParamEstimate``) and what the cost model needs
    (:class:`ComputeShape`): TP-sharded and replicated weights, one routed
    expert, the activation widths, the number of matmul kernels and the
    widths the element-wise kernels move.

    Each layer is its sequence mixer (attention, MLA, linear attention, a
    Mamba1/Mamba2 mixer, a short convolution, an RG-LRU block, attention and
    Mamba2 side by side, or nothing) plus its FFN (a dense MLP, a mixture of
    experts, or nothing; see :func:`_layer_ffns`). The module shapes follow
    the transformers modeling files of each family (``modeling_jamba``,
    ``modeling_nemotron_h``, ``modeling_bamba``, ``modeling_falcon_h1``,
    ``modeling_zamba2``, ``modeling_mamba``/``mamba2``, ``modeling_lfm2``,
    ``modeling_recurrent_gemma``, ``modeling_minimax``, ``modeling_llama4``,
    ``modeling_gpt_oss``, ``modeling_granitemoehybrid``). Zamba2's shared
    transformer blocks are counted once, though every hybrid layer runs one
    (kvsim's active count cannot exceed the total), so its compute is
    undercounted by those repeats.
    """
    cfg = _text_config(cfg)
    mt = str(cfg.get("model_type", ""))
    n, h, heads, kvh, hd = (arch[k] for k in ("num_layers", "hidden", "heads", "kv_heads", "head_dim"))
    vocab = _req(cfg, "vocab_size")
    is_opt = mt == "opt" or "ffn_dim" in cfg
    tied = _bool(cfg, "tie_word_embeddings",
                 _bool(cfg, "tie_embedding", mt.startswith("gemma") or is_opt or mt in _TIED_BY_DEFAULT))
    embedding = vocab * h * (1 if tied else 2)
    if is_opt:
        embedding += (_opt(cfg, "max_position_embeddings", 2048) + 2) * h  # learned positions

    acc = _Ledger()

    # attention, per layer kind
    attn_bias = _bool(cfg, "attention_bias", mt in ("qwen2", "qwen2_moe") or is_opt)
    gated_q = 2 if mt == "qwen3_next" or _bool(cfg, "attn_output_gate", False) else 1  # gated output
    qk_norm = 2 * hd if mt.startswith("qwen3") or mt.startswith("gemma3") or mt == "lfm2" else 0

    def full_attention(width: int = h) -> None:
        if arch["kv_lora_rank"]:
            r, rope = arch["kv_lora_rank"], arch["rope_dim"]
            nope = _opt(cfg, "qk_nope_head_dim", 0)
            v_dim = _opt(cfg, "v_head_dim", nope, min=1)
            q_rank = _opt(cfg, "q_lora_rank", 0)
            if q_rank:                                  # q down (whole on every GPU), q up (sharded)
                acc.matmul(h, q_rank, replicated=True)
                acc.matmul(q_rank, heads * (nope + rope), shard="out")
                acc.other(q_rank)                       # q_a_layernorm
            else:
                acc.matmul(h, heads * (nope + rope), shard="out")
            acc.matmul(h, r + rope, replicated=True)    # kv down-projection (the latent)
            acc.other(r)                                # kv_a_layernorm
            acc.matmul(r, heads * (nope + v_dim), shard="out")
            acc.matmul(heads * v_dim, h, shard="in")
            acc.mix(heads * (nope + rope))
            return
        q_out = heads * hd * gated_q
        acc.matmul(width, q_out + 2 * kvh * hd, shard="out")      # fused QKV
        acc.matmul(heads * hd, h, shard="in")                      # output projection
        acc.other(qk_norm)
        if attn_bias:                                   # q, k, v biases; Qwen2 has no o_proj bias
            acc.other(q_out + 2 * kvh * hd + (0 if mt.startswith("qwen2") else h))
        if mt == "recurrent_gemma":
            acc.other(h)                                # o_proj bias
        if mt == "gpt_oss":
            acc.other(heads)                            # attention sinks
        acc.mix((heads + kvh) * hd)                     # rotary embedding of q and k

    def gated_delta_net() -> None:                      # Qwen3-Next linear attention
        nk, nv = _req(cfg, "linear_num_key_heads"), _req(cfg, "linear_num_value_heads")
        dk, dv = _req(cfg, "linear_key_head_dim"), _req(cfg, "linear_value_head_dim")
        kern = _req(cfg, "linear_conv_kernel_dim")
        key_dim, value_dim = nk * dk, nv * dv
        acc.matmul(h, 2 * key_dim + 2 * value_dim, shard="out")   # in_proj_qkvz
        acc.matmul(h, 2 * nv, shard="out")                         # in_proj_ba
        acc.matmul(value_dim, h, shard="in")                       # out_proj
        acc.other((2 * key_dim + value_dim) * kern + 2 * nv + dv)  # conv, dt_bias, A_log, norm
        acc.mix(2 * key_dim + 2 * value_dim)

    def lightning_attention() -> None:                  # MiniMax linear attention
        inner = heads * hd
        acc.matmul(h, 3 * inner, shard="out")           # qkv_proj
        acc.matmul(h, inner, shard="out")               # output_gate
        acc.matmul(inner, h, shard="in")                # out_proj
        acc.other(inner)                                # norm
        acc.mix(4 * inner)

    def mamba_mixer() -> None:
        d = _mamba_dims(cfg, h)
        conv_bias = _bool(cfg, _first(cfg, ("mamba_conv_bias", "use_conv_bias"))[0]
                          or "use_conv_bias", True)
        proj_bias = _bool(cfg, _first(cfg, ("mamba_proj_bias", "use_bias", "add_bias_linear"))[0]
                          or "use_bias", False)
        if d.version == 1:                              # MambaMixer / JambaMambaMixer
            acc.matmul(h, 2 * d.inner, shard="out")                # in_proj: x and gate z
            acc.other(d.inner * d.conv + (d.inner if conv_bias else 0))   # depthwise conv1d
            acc.matmul(d.inner, d.dt_rank + 2 * d.state, shard="in")      # x_proj: dt, B, C
            acc.matmul(d.dt_rank, d.inner, shard="out")            # dt_proj
            acc.other(d.inner + d.inner * d.state + d.inner)       # dt_proj bias, A_log, D
            if mt == "jamba":
                acc.other(d.dt_rank + 2 * d.state)                 # dt, B and C layernorms
            acc.matmul(d.inner, h, shard="in")                     # out_proj
            if proj_bias:
                acc.other(2 * d.inner + h)
            acc.mix(3 * d.inner)
            return
        conv_dim = d.inner + 2 * d.groups * d.state     # MambaMixer2: x, B and C go through the conv
        acc.matmul(h, d.inner + conv_dim + d.heads, shard="out")   # in_proj: z, xBC, dt
        acc.other(conv_dim * d.conv + (conv_dim if conv_bias else 0))
        acc.other(3 * d.heads)                                     # dt_bias, A_log, D
        if mt != "falcon_h1" or _bool(cfg, "mamba_rms_norm", False):
            acc.other(d.inner)                                     # gated RMSNorm
        acc.matmul(d.inner, h, shard="in")                         # out_proj
        if proj_bias:
            acc.other(d.inner + conv_dim + d.heads + h)
        acc.mix(conv_dim + d.inner)

    def short_conv() -> None:                           # LFM2's Lfm2ShortConv
        kernel = _first_int(cfg, ("conv_L_cache", "conv_l_cache"), 3)
        bias = _bool(cfg, "conv_bias", False)
        acc.matmul(h, 3 * h, shard="out")               # in_proj: B, C, x
        acc.other(h * kernel + (h if bias else 0))      # depthwise conv1d
        acc.matmul(h, h, shard="in")                    # out_proj
        if bias:
            acc.other(4 * h)
        acc.mix(3 * h)

    def rg_lru_block() -> None:                         # RecurrentGemma's recurrent block
        width = _opt(cfg, "lru_width", h, min=1)
        block = width // heads                          # the gates are block-diagonal, one block a head
        acc.matmul(h, 2 * width, shard="out")           # linear_y, linear_x
        acc.other(2 * width)                            # their biases
        acc.other(width * _opt(cfg, "conv1d_width", 4, min=1) + width)   # conv_1d and its bias
        acc.other(2 * width * block + 2 * width + width)   # input/recurrent gates, biases, a_param
        acc.matmul(width, h, shard="in")                # linear_out
        acc.other(h)                                    # its bias
        acc.mix(3 * width)

    # MLP / mixture of experts
    inter_key = "ffn_dim" if is_opt else "intermediate_size"
    n_experts = _num_experts(cfg)
    mlp_gated = mt != "nemotron_h"                      # Nemotron-H: relu2, up and down only

    def dense_mlp(inter: int, *, gated: bool = True, bias: bool = False) -> None:
        if is_opt:                                      # fc1, fc2 with biases
            acc.matmul(h, inter, shard="out")
            acc.matmul(inter, h, shard="in")
            acc.other(inter + h)
            acc.mix(inter)
        elif gated:                                     # gate and up fused, then down
            acc.matmul(h, 2 * inter, shard="out")
            acc.matmul(inter, h, shard="in")
            if bias:
                acc.other(2 * inter + h)
            acc.mix(3 * inter)
        else:                                           # up, then down
            acc.matmul(h, inter, shard="out")
            acc.matmul(inter, h, shard="in")
            if bias:
                acc.other(inter + h)
            acc.mix(2 * inter)

    top_k = expert_inter = 0
    if n_experts:
        top_k = _req(cfg, "num_experts_per_tok")
        expert_inter = _opt(cfg, "moe_intermediate_size", None, min=1) or _req(cfg, "intermediate_size")

    def moe_mlp() -> None:
        acc.matmul(h, n_experts, replicated=True)       # router
        if mt == "nemotron_h":                          # sigmoid router with a correction bias
            acc.other(n_experts)
            acc.expert_layer(h, expert_inter, n_experts, top_k, gated=False)
            shared = _opt(cfg, "moe_shared_expert_intermediate_size", 0)
            if shared:
                dense_mlp(shared * _opt(cfg, "n_shared_experts", 1, min=1), gated=False)
            return
        if mt == "gpt_oss":                             # router and experts have biases
            acc.other(n_experts)
            acc.expert_layer(h, expert_inter, n_experts, top_k, extra_per_expert=2 * expert_inter + h)
            return
        if cfg.get("topk_method") == "noaux_tc":
            acc.other(n_experts)                        # e_score_correction_bias
        acc.expert_layer(h, expert_inter, n_experts, top_k)
        if cfg.get("n_shared_experts"):
            shared = _strict_int("n_shared_experts", cfg["n_shared_experts"], min=0)
            if shared:
                dense_mlp(shared * expert_inter)
        if cfg.get("shared_expert_intermediate_size"):
            dense_mlp(_req(cfg, "shared_expert_intermediate_size"))
            acc.matmul(h, 1, replicated=True)           # the shared expert's gate
        if mt.startswith("llama4"):
            dense_mlp(_req(cfg, "intermediate_size"))   # Llama 4's shared expert
        if cfg.get("shared_intermediate_size"):
            dense_mlp(_req(cfg, "shared_intermediate_size"))   # Granite-4.0-H's shared MLP

    dense_width = _dense_ffn_width(cfg, mt, inter_key) if "dense" in arch["ffns"] else 0
    norm_width = 2 * h if is_opt else h                 # LayerNorm has a bias, RMSNorm not
    norms_per_layer = 4 if mt.startswith("gemma2") or mt.startswith("gemma3") else 2
    for kind, ffn in zip(arch["kinds"], arch["ffns"]):
        if kind in ("full", "sliding", "chunked"):
            full_attention()
        elif kind == "linear":
            gated_delta_net() if cfg.get("linear_num_value_heads") is not None else lightning_attention()
        elif kind == "mamba":
            mamba_mixer()
        elif kind == "hybrid":
            if mt == "zamba2":                          # the shared block's output projection, adapters
                _zamba2_hybrid_extras(cfg, acc, h)
            else:
                full_attention()                        # Falcon-H1: attention beside the Mamba2 mixer
            mamba_mixer()
        elif kind == "conv":
            short_conv()
        elif kind == "recurrent":
            rg_lru_block()
        if ffn == "moe":
            moe_mlp()
        elif ffn == "dense":
            dense_mlp(dense_width, gated=mlp_gated, bias=mt == "recurrent_gemma")
        sublayers = (kind != "mlp") + (ffn != "none")
        norms = norms_per_layer if sublayers == 2 else 1
        acc.other(norms * norm_width)
        acc.norm(norms * h + sublayers * h)             # the norms and the residual adds
    if mt == "zamba2":                                  # the shared transformer blocks, once each
        for _ in range(_opt(cfg, "num_mem_blocks", 1, min=1)):
            acc.other(2 * h + h)                        # input_layernorm (2 x hidden), pre_ff_layernorm
            full_attention(width=2 * h)
            dense_mlp(_zamba2_mlp_width(cfg, h))
    acc.other(norm_width)                               # final norm

    total = embedding + acc.total
    active = embedding + acc.active
    lm_head = vocab * h
    shape = ComputeShape(
        dense_params=acc.sharded, replicated_params=acc.replicated,
        expert_params=acc.expert, num_experts=n_experts, experts_per_token=top_k,
        act_replicated=acc.act_replicated, act_sharded=acc.act_sharded, gemms=acc.gemms,
        norm_width=acc.norm_width, mix_width=acc.mix_width, lm_head_params=lm_head)
    return ParamEstimate(total=total, active=active, embedding=embedding), shape


def _dense_ffn_width(cfg: dict, mt: str, inter_key: str) -> int:
    """The width of the dense FFN layers.

    Llama 4: ``intermediate_size_mlp``; RecurrentGemma: half of
    ``intermediate_size`` (its gate and up each have that width); LFM2:
    ``block_ff_dim`` (or ``intermediate_size``), cut to 2/3, times
    ``block_ffn_dim_multiplier`` and rounded up to ``block_multiple_of`` when
    ``block_auto_adjust_ff_dim`` (transformers' Lfm2MLP); Granite-4.0-H:
    ``shared_intermediate_size``; otherwise ``intermediate_size``.
    """
    if cfg.get("intermediate_size_mlp") is not None:
        return _req(cfg, "intermediate_size_mlp")
    if mt == "recurrent_gemma":
        return _req(cfg, "intermediate_size") // 2
    if mt == "lfm2":
        width = _first_int(cfg, ("block_ff_dim", "intermediate_size"))
        if _bool(cfg, "block_auto_adjust_ff_dim", True):
            width = int(2 * width / 3)
            multiplier = cfg.get("block_ffn_dim_multiplier", 1.0)
            if multiplier is not None:
                step = _opt(cfg, "block_multiple_of", 256, min=1)
                width = step * cdiv(int(multiplier * width), step)
        return width
    if mt.startswith("granitemoe") and cfg.get("shared_intermediate_size"):
        return _req(cfg, "shared_intermediate_size")
    return _req(cfg, inter_key)


def _zamba2_mlp_width(cfg: dict, h: int) -> int:
    return _first_int(cfg, ("intermediate_size", "ffn_hidden_size"), 4 * h)


def _zamba2_hybrid_extras(cfg: dict, acc: "_Ledger", h: int) -> None:
    """What a Zamba2 hybrid layer adds to the shared block it runs (transformers' modeling_zamba2).

    Its own ``linear`` (hidden x hidden) after the shared block, the shared
    MLP's per-layer gate/up adapter (hidden -> adapter_rank -> 2 x intermediate)
    and, with ``use_shared_attention_adapter``, q/k/v adapters
    (2 x hidden -> adapter_rank -> 2 x hidden each).
    """
    rank = _first_int(cfg, ("adapter_rank", "lora_rank"), 128)
    acc.matmul(h, h, shard="out")
    acc.matmul(h, rank, replicated=True)
    acc.matmul(rank, 2 * _zamba2_mlp_width(cfg, h), shard="out")
    flag = _first(cfg, ("use_shared_attention_adapter", "use_shared_attention_lora"))[0]
    if flag and _bool(cfg, flag, False):
        for _ in range(3):
            acc.matmul(2 * h, rank, replicated=True)
            acc.matmul(rank, 2 * h, shard="out")


class _Ledger:
    """Running totals of one model's parameters and compute shape (see :func:`_account`)."""

    def __init__(self):
        self.total = self.active = 0
        self.sharded = self.replicated = self.expert = 0
        self.act_replicated = self.act_sharded = self.gemms = 0
        self.norm_width = self.mix_width = 0

    def matmul(self, n_in: int, n_out: int, *, shard: str = "", replicated: bool = False):
        """A dense matmul every token uses; ``shard`` is the side tensor parallelism splits."""
        p = n_in * n_out
        self.total += p
        self.active += p
        self.gemms += 1
        if replicated:
            self.replicated += p
            self.act_replicated += n_in + n_out
        else:
            self.sharded += p
            self.act_replicated += n_out if shard == "in" else n_in
            self.act_sharded += n_in if shard == "in" else n_out

    def expert_layer(self, h: int, inter: int, experts: int, top_k: int, *,
                     gated: bool = True, extra_per_expert: int = 0):
        """A layer of routed experts, two fused kernels: gate/up fused then down, or up then down.

        ``gated=False`` is an up/down expert (Nemotron-H's relu2 experts);
        ``extra_per_expert`` counts each expert's non-matmul parameters (gpt-oss biases).
        """
        widths = 3 if gated else 2
        per_expert = widths * h * inter
        self.total += experts * (per_expert + extra_per_expert)
        self.active += top_k * (per_expert + extra_per_expert)
        self.expert += per_expert
        self.gemms += 2
        self.act_replicated += top_k * 2 * h
        self.act_sharded += top_k * widths * inter
        self.mix_width += top_k * widths * inter

    def other(self, params: int):
        """Parameters that are not matmul weights (norms, biases, convolutions)."""
        self.total += params
        self.active += params

    def norm(self, width: int):
        self.norm_width += width

    def mix(self, width: int):
        self.mix_width += width


@dataclass(frozen=True)
class ComputeShape:
    """What one forward pass computes, per token, summed over the decoder layers.

    The cost model (:mod:`kvsim.engine.costs`) turns these into time; every field is
    counted from the config, matmul by matmul (explained in chapter 3).

    * ``dense_params`` — matmul weights every token uses that tensor
      parallelism splits across GPUs (attention projections, dense MLPs,
      shared experts); ``replicated_params`` — those every GPU keeps whole
      (MLA's down-projections, MoE routers).
    * ``expert_params`` — one routed expert, summed over the MoE layers;
      ``num_experts`` of them per layer, ``experts_per_token`` used per token.
    * ``act_replicated`` / ``act_sharded`` — the input plus output widths of
      every matmul (elements per token), split by whether TP shards them.
    * ``gemms`` — matmul kernels per forward pass (a Llama layer has four:
      QKV, output, gate/up, down).
    * ``norm_width`` — hidden-size widths the norms and residual adds read per
      token; ``mix_width`` — the widths of element-wise work TP shards (rotary
      embeddings, the MLP activation).
    * ``lm_head_params`` — vocabulary x hidden: the output head, run once per
      sequence per step.
    """

    dense_params: int
    replicated_params: int
    expert_params: int
    num_experts: int
    experts_per_token: int
    act_replicated: int
    act_sharded: int
    gemms: int
    norm_width: int
    mix_width: int
    lm_head_params: int

    def __post_init__(self):
        for f in fields(self):
            check_int(f"compute.{f.name}", getattr(self, f.name), min=0)
        if self.num_experts and not 1 <= self.experts_per_token <= self.num_experts:
            raise KvsimError(f"compute.experts_per_token={self.experts_per_token} is out of "
                             f"range: expected an integer in [1, {self.num_experts}]")

    @classmethod
    def approximate(cls, spec: "ModelSpec") -> "ComputeShape":
        """A dense stand-in for a hand-made spec: every active parameter in matmuls.

        Used when a :class:`ModelSpec` carries no ``compute`` (one built by
        hand rather than from a config): four matmuls per layer, activation
        widths of a Llama-shaped layer (``hidden_size`` in and out, an MLP
        about 2.7 x wider), no output head.
        """
        h, n = spec.hidden_size, spec.num_layers
        inter = spec.intermediate_size or (8 * h) // 3
        return cls(dense_params=spec.active_params, replicated_params=0, expert_params=0,
                   num_experts=0, experts_per_token=0, act_replicated=4 * h * n,
                   act_sharded=n * (2 * spec.num_attention_heads * spec.head_dim
                                    + 2 * spec.num_kv_heads * spec.head_dim + 3 * inter),
                   gemms=4 * n, norm_width=4 * h * n,
                   mix_width=n * ((spec.num_attention_heads + spec.num_kv_heads) * spec.head_dim
                                  + 3 * inter),
                   lm_head_params=0)


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
