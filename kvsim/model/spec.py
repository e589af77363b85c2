"""Model specifications: the architecture figures that decide KV bytes per token.

Explained in chapter 1, *Bytes per token and capacity*.

A :class:`ModelSpec` holds just what the simulator needs from a model: how many
layers keep a paged KV cache, how many KV heads of which width they store (or,
for multi-head latent attention, how wide the compressed latent is), the
sliding (or chunked) windows, the fixed per-request state of the stateful
layers of hybrids (Mamba, linear attention, short convolutions, RG-LRU; see
:data:`~kvsim.model.layer_kinds.LAYER_KINDS`), the context limit, and the
parameter counts (or the checkpoint's byte count) that set the weight memory
and the roofline cost of a step.

Specs come from presets (:func:`~kvsim.model.presets.list_models`) or from a
real Hugging Face ``config.json`` (:meth:`ModelSpec.from_hf_config`, which
assembles what :mod:`~kvsim.model.architecture`,
:mod:`~kvsim.model.parameters` and :mod:`~kvsim.model.checkpoint` read). The
presets are built from the same parser, from the published configs' figures,
and then carry the published parameter counts, so the parser is exercised by
every preset.

The per-token figure (:meth:`ModelSpec.kv_bytes_per_token`) charges every KV
layer the full context, sliding-window layers included, which is what vLLM's
V0 block manager does (one block table per sequence, the same for all layers).
:meth:`ModelSpec.kv_bytes_for_sequence` honours the windows instead: the
difference is what a hybrid allocator (vLLM V1's per-layer-group KV manager)
can save on long sequences, and :meth:`ModelSpec.kv_layout` gives that allocator's
groups (:mod:`kvsim.model.kv_groups`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from kvsim.errors import KvsimError, check_int

from .architecture import parse_architecture
from .checkpoint import config_folder, read_checkpoint_bytes
from .config_json import HfConfig, load_config, required_int, text_config
from .dtypes import DTYPE_BYTES, serving_dtypes
from .kv_groups import KVLayout, kv_layout
from .layer_state import temporal_state_bytes
from .parameters import ComputeShape, account

__all__ = ["ModelSpec"]


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
    layers attend only to the last ``sliding_window`` tokens; ``chunked_window`` says they are
    Llama 4's chunked-local layers (the window is ``attention_chunk_size``), which vLLM manages
    apart and kvsim charges the full context (NOTE(kv-groups-full-context-kinds)).
    :meth:`kv_layout` gives vLLM V1's KV cache groups: sliding-window layers hold only their
    window there (:mod:`kvsim.model.kv_groups`).

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
    Mamba, short-convolution and RG-LRU mixer (see :data:`~kvsim.model.layer_kinds.LAYER_KINDS`).
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
    chunked_window: bool = False
    state_bytes_per_request: int = 0
    dtype: str = "bf16"
    max_model_len: int = 4096
    source: str = "custom"
    weight_dtype: str | None = None
    vocab_size: int | None = None
    intermediate_size: int | None = None
    compute: ComputeShape | None = None
    checkpoint_bytes: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise KvsimError(f"name={self.name!r} is not valid: expected a non-empty string")
        self._check_sizes()
        self._check_attention_shape()
        self._check_formats()
        self._check_optional_sizes()

    @property
    def _prefix(self) -> str:
        """How an error names this model."""
        return f"model {self.name!r}: "

    def _count(self, field: str, *, min: int, max: int | None = None) -> int:
        """The integer field ``field`` checked and stored as ``int`` (whole floats such as 6.74e9
        are accepted; strings are not)."""
        value = getattr(self, field)
        if isinstance(value, str):
            raise KvsimError(f"{self._prefix}{field}={value!r} has the wrong type: expected an "
                             f"integer")
        value = check_int(self._prefix + field, value, min=min, max=max)
        object.__setattr__(self, field, value)
        return value

    def _check_sizes(self) -> None:
        """The sizes every spec has: layers, widths, parameters, the context, the state."""
        for field in ("num_layers", "hidden_size", "num_attention_heads", "head_dim",
                      "num_params", "max_model_len"):
            self._count(field, min=1)
        self._count("active_params", min=1, max=self.num_params)
        self._count("kv_layers", min=1, max=self.num_layers)
        for field in ("mla_kv_lora_rank", "mla_rope_head_dim", "state_bytes_per_request"):
            self._count(field, min=0)

    def _check_attention_shape(self) -> None:
        """KV heads (at most the attention heads, unless MLA), MLA's rope part, the window."""
        p = self._prefix
        if self.mla_kv_lora_rank == 0:
            self._count("num_kv_heads", min=1, max=self.num_attention_heads)
            if self.mla_rope_head_dim:
                raise KvsimError(f"{p}mla_rope_head_dim={self.mla_rope_head_dim} needs "
                                 f"mla_kv_lora_rank > 0: expected 0 without MLA")
        else:
            self._count("num_kv_heads", min=1)
        if self.sliding_window is None:
            if self.sliding_window_layers:
                raise KvsimError(f"{p}sliding_window_layers={self.sliding_window_layers} "
                                 f"without a sliding_window: expected 0")
        else:
            self._count("sliding_window", min=1)
            self._count("sliding_window_layers", min=0, max=self.kv_layers)

    def _check_formats(self) -> None:
        """The number formats and the source's description."""
        p = self._prefix
        if self.dtype not in DTYPE_BYTES:
            raise KvsimError(f"{p}dtype={self.dtype!r} is not known: expected one of "
                             f"{', '.join(DTYPE_BYTES)}")
        if self.weight_dtype is not None and self.weight_dtype not in DTYPE_BYTES:
            raise KvsimError(f"{p}weight_dtype={self.weight_dtype!r} is not known: expected "
                             f"None or one of {', '.join(DTYPE_BYTES)}")
        if not isinstance(self.source, str):
            raise KvsimError(f"{p}source={self.source!r} is not valid: expected a string")

    def _check_optional_sizes(self) -> None:
        """The figures a spec may leave unset: vocabulary, MLP width, checkpoint, compute."""
        for field in ("vocab_size", "intermediate_size", "checkpoint_bytes"):
            if getattr(self, field) is not None:
                self._count(field, min=1)
        if not isinstance(self.chunked_window, bool):
            raise KvsimError(f"{self._prefix}chunked_window={self.chunked_window!r} is not valid: "
                             f"expected True or False")
        if self.compute is not None and not isinstance(self.compute, ComputeShape):
            raise KvsimError(f"{self._prefix}compute={self.compute!r:.60} is not valid: "
                             f"expected a kvsim.model.parameters.ComputeShape or None")

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

    def check_tensor_parallel_size(self, tensor_parallel_size: object) -> int:
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

    def compute_shape(self) -> ComputeShape:
        """The matmul and element-wise work of a forward pass (see :class:`~kvsim.model.parameters.ComputeShape`).

        Built from the config for presets and parsed configs; a hand-made spec
        without one gets :meth:`~kvsim.model.parameters.ComputeShape.approximate`.
        """
        return self.compute if self.compute is not None else ComputeShape.approximate(self)

    @property
    def weight_bytes(self) -> int:
        """Weight memory: ``checkpoint_bytes`` when known, else ``num_params x`` bytes of
        ``weight_dtype`` (or ``dtype``)."""
        if self.checkpoint_bytes is not None:
            return self.checkpoint_bytes
        return self.num_params * DTYPE_BYTES[self.weight_dtype or self.dtype]

    def check_seq_len(self, n: object, what: str = "seq_len") -> int:
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
        defaults to the model's ``dtype``. Sliding-window layers are counted like
        full-attention ones here: this is what one token costs while every layer still
        holds it (and the whole cost under vLLM V0's one block table); vLLM V1's hybrid
        allocator frees what leaves a window (:meth:`kv_layout`,
        :meth:`kv_bytes_for_sequence`).
        Explained in chapter 1, *Bytes per token and capacity*.

        >>> kvsim.get_model("llama-2-7b").kv_bytes_per_token()
        524288
        """
        return self.kv_layers * self.kv_bytes_per_token_per_layer(kv_dtype)

    def kv_layout(self, *, hybrid_allocator: bool = True) -> KVLayout:
        """vLLM V1's KV cache groups for this model (:func:`kvsim.model.kv_groups.kv_layout`).

        ``hybrid_allocator=False`` (vLLM V0) is one group of every KV layer. Chunked-local
        layers and stateful hybrids keep that one group too: NOTE(kv-groups-full-context-kinds).
        """
        hybrid = hybrid_allocator and not self.chunked_window and not self.state_bytes_per_request
        return kv_layout(self.kv_layers, self.sliding_window_layers, self.sliding_window,
                         hybrid_allocator=hybrid)

    def kv_bytes_for_sequence(self, num_tokens: int, kv_dtype: str | None = None) -> int:
        """KV bytes a sequence of ``num_tokens`` needs when sliding windows are honoured.

        Full-attention layers hold every token; sliding-window layers (and
        Llama 4's chunked-attention layers, whose chunk is the window) hold at
        most ``sliding_window`` tokens. This is what a hybrid allocator (vLLM
        V1's per-layer-group KV cache manager) can save compared with
        ``num_tokens * kv_bytes_per_token()`` (the V0 block manager's rule);
        :meth:`kv_layout` gives the groups kvsim's engine counts in blocks. Block rounding is not applied,
        and the fixed ``state_bytes_per_request`` of linear-attention layers is
        not included. Explained in chapter 1, *Bytes per token and capacity*.
        """
        n = check_int("num_tokens", num_tokens, min=0)
        per_layer = self.kv_bytes_per_token_per_layer(kv_dtype)
        full_layers = self.kv_layers - self.sliding_window_layers
        windowed = min(n, self.sliding_window) if self.sliding_window else n
        return per_layer * (full_layers * n + self.sliding_window_layers * windowed)

    def to_dict(self) -> dict[str, object]:
        """All fields plus ``attention_kind``, ``weight_bytes`` and ``kv_bytes_per_token``."""
        d = asdict(self)
        d.update(attention_kind=self.attention_kind, weight_bytes=self.weight_bytes,
                 kv_bytes_per_token=self.kv_bytes_per_token())
        return d

    # ------------------------------------------------------------- HF configs
    @classmethod
    def from_hf_config(cls, path_or_dict: object, *, name: str | None = None) -> ModelSpec:
        """Build a spec from a Hugging Face ``config.json`` (a path, a folder holding one, or a dict).

        Understands dense GQA/MHA models (Llama, Mistral, Qwen2, Gemma 2/3,
        OPT), mixture-of-experts (Mixtral, Qwen-MoE, DeepSeek, Llama 4,
        gpt-oss, MiniMax), multi-head latent attention (``kv_lora_rank``),
        sliding and chunked windows, and hybrids in every declaration style
        transformers configs use (see :func:`~kvsim.model.layer_kinds.layer_kinds`):
        Jamba, Bamba, Nemotron-H, Granite-4.0-H, Zamba2, Falcon-H1, Qwen3-Next,
        MiniMax, LFM2, RecurrentGemma. Only the layers that attend hold KV; the
        Mamba, linear-attention, short-convolution and RG-LRU mixers' fixed
        state goes to ``state_bytes_per_request``. A model with no attention
        layer at all (Mamba, Mamba2, Falcon-Mamba) keeps no KV cache, so a paged
        KV simulation does not apply: it raises :class:`KvsimError` saying so
        and giving its fixed state
        (:func:`~kvsim.model.parameters.estimate_params` still counts its
        parameters). ``num_params`` and ``active_params`` are estimated per
        layer kind with :func:`~kvsim.model.parameters.estimate_params`; when
        the config sits in a checkpoint folder with
        ``model.safetensors.index.json`` (or one ``model.safetensors``), its
        byte count becomes ``checkpoint_bytes`` (the weight memory) and
        ``source`` says so. ``max_model_len`` is
        derived as vLLM does. A malformed config or index raises
        :class:`KvsimError` naming the field or file. Explained in chapter 1.
        """
        cfg, source, default_name = load_config(path_or_dict)
        try:
            return cls._from_config(cfg, source, default_name, path_or_dict, name)
        except KvsimError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError,
                RecursionError) as exc:
            # A field of a shape no real config has (a list where a number goes, say) that
            # no reader above names: still one line, never a traceback.
            raise KvsimError(f"config {source.removeprefix('hf-config:')!r} has a field of a "
                             f"shape kvsim cannot read ({type(exc).__name__}: "
                             f"{' '.join(str(exc).split())[:80]}): expected a Hugging Face "
                             f"config.json") from None

    @classmethod
    def _from_config(cls, cfg: HfConfig, source: str, default_name: str, path_or_dict: object,
                     name: str | None) -> ModelSpec:
        arch = parse_architecture(cfg)
        est, shape = account(cfg, arch)
        dtype, weight_dtype = serving_dtypes(cfg)
        state_bytes = (arch["state_conv_elems"] * DTYPE_BYTES[dtype]
                       + arch["state_temporal_elems"] * temporal_state_bytes(text_config(cfg), dtype))
        checkpoint = read_checkpoint_bytes(config_folder(path_or_dict))
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
            chunked_window="chunked" in arch["kinds"],
            state_bytes_per_request=state_bytes,
            dtype=dtype,
            weight_dtype=weight_dtype,
            max_model_len=arch["max_model_len"],
            source=source,
            vocab_size=required_int(text_config(cfg), "vocab_size"),
            intermediate_size=arch["intermediate_size"],
            compute=shape,
            checkpoint_bytes=checkpoint[0] if checkpoint is not None else None,
        )
