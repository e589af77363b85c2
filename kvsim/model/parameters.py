"""Parameter accounting: a config's weights counted matmul by matmul, and the compute shape.

Explained in chapter 1, *Bytes per token and capacity* (the weight memory), and
chapter 3, *Swap versus recompute* (the compute shape the cost model times).

One pass over the decoder layers (:func:`account`) counts every matmul with its
input and output widths, so it gives both the parameter counts
(:class:`ParamEstimate`, :func:`estimate_params`) and what one forward pass
computes (:class:`ComputeShape`, which :mod:`kvsim.engine.costs` turns into
time).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Protocol

from kvsim.errors import KvsimError, check_int
from kvsim.units import cdiv

from .architecture import Architecture, parse_architecture
from .config_json import (
    HfConfig,
    first_int,
    first_set,
    load_config,
    optional_bool,
    optional_int,
    required_int,
    strict_int,
    text_config,
)
from .layer_kinds import routed_experts
from .layer_state import mamba_dims

__all__ = ["ParamEstimate", "estimate_params", "ComputeShape", "account"]

#: The largest ``block_ffn_dim_multiplier`` (LFM2) kvsim accepts: real ones are about 1.
_MAX_FFN_MULTIPLIER = 64

# families whose transformers config ties the output head to the embedding by default
_TIED_BY_DEFAULT = frozenset({"recurrent_gemma", "lfm2", "zamba2", "mamba"})


@dataclass(frozen=True)
class ParamEstimate:
    """Parameter counts estimated from a config: ``total``, ``active`` per token, ``embedding``.

    ``embedding`` counts the input embedding and the output head (once if
    tied); publishers differ on whether their "active" figure includes it.
    """

    total: int
    active: int
    embedding: int


def estimate_params(config: object) -> ParamEstimate:
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
    cfg, _, _ = load_config(config)
    return _estimate(cfg, parse_architecture(cfg, require_kv=False))


def _estimate(cfg: HfConfig, arch: Architecture) -> ParamEstimate:
    return account(cfg, arch)[0]


def account(cfg: HfConfig, arch: Architecture) -> tuple[ParamEstimate, ComputeShape]:  # noqa: C901 - complexity 47, split into named steps next
    """Parameter counts and the compute shape, layer by layer and per layer kind.

    Each matmul is counted once with its input and output widths, so the same
    pass gives the weights (``ParamEstimate``) and what the cost model needs
    (:class:`ComputeShape`): TP-sharded and replicated weights, one routed
    expert, the activation widths, the number of matmul kernels and the
    widths the element-wise kernels move.

    Each layer is its sequence mixer (attention, MLA, linear attention, a
    Mamba1/Mamba2 mixer, a short convolution, an RG-LRU block, attention and
    Mamba2 side by side, or nothing) plus its FFN (a dense MLP, a mixture of
    experts, or nothing; see :func:`~kvsim.model.layer_kinds.layer_ffns`). The module shapes follow
    the transformers modeling files of each family (``modeling_jamba``,
    ``modeling_nemotron_h``, ``modeling_bamba``, ``modeling_falcon_h1``,
    ``modeling_zamba2``, ``modeling_mamba``/``mamba2``, ``modeling_lfm2``,
    ``modeling_recurrent_gemma``, ``modeling_minimax``, ``modeling_llama4``,
    ``modeling_gpt_oss``, ``modeling_granitemoehybrid``). Zamba2's shared
    transformer blocks are counted once, though every hybrid layer runs one
    (kvsim's active count cannot exceed the total), so its compute is
    undercounted by those repeats.
    """
    cfg = text_config(cfg)
    mt = str(cfg.get("model_type", ""))
    n, h, heads, kvh, hd = (arch[k] for k in ("num_layers", "hidden", "heads", "kv_heads", "head_dim"))
    vocab = required_int(cfg, "vocab_size")
    is_opt = mt == "opt" or "ffn_dim" in cfg
    tied = optional_bool(cfg, "tie_word_embeddings",
                 optional_bool(cfg, "tie_embedding", mt.startswith("gemma") or is_opt or mt in _TIED_BY_DEFAULT))
    embedding = vocab * h * (1 if tied else 2)
    if is_opt:
        embedding += (optional_int(cfg, "max_position_embeddings", 2048) + 2) * h  # learned positions

    acc = _Ledger()

    # attention, per layer kind
    attn_bias = optional_bool(cfg, "attention_bias", mt in ("qwen2", "qwen2_moe") or is_opt)
    gated_q = 2 if mt == "qwen3_next" or optional_bool(cfg, "attn_output_gate", False) else 1  # gated output
    qk_norm = 2 * hd if mt.startswith(("qwen3", "gemma3")) or mt == "lfm2" else 0

    def full_attention(width: int = h) -> None:
        if arch["kv_lora_rank"]:
            r, rope = arch["kv_lora_rank"], arch["rope_dim"]
            nope = optional_int(cfg, "qk_nope_head_dim", 0)
            v_dim = optional_int(cfg, "v_head_dim", nope, min=1)
            q_rank = optional_int(cfg, "q_lora_rank", 0)
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
        nk, nv = required_int(cfg, "linear_num_key_heads"), required_int(cfg, "linear_num_value_heads")
        dk, dv = required_int(cfg, "linear_key_head_dim"), required_int(cfg, "linear_value_head_dim")
        kern = required_int(cfg, "linear_conv_kernel_dim")
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
        d = mamba_dims(cfg, h)
        conv_bias = optional_bool(cfg, first_set(cfg, ("mamba_conv_bias", "use_conv_bias"))[0]
                          or "use_conv_bias", True)
        proj_bias = optional_bool(cfg, first_set(cfg, ("mamba_proj_bias", "use_bias", "add_bias_linear"))[0]
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
        if mt != "falcon_h1" or optional_bool(cfg, "mamba_rms_norm", False):
            acc.other(d.inner)                                     # gated RMSNorm
        acc.matmul(d.inner, h, shard="in")                         # out_proj
        if proj_bias:
            acc.other(d.inner + conv_dim + d.heads + h)
        acc.mix(conv_dim + d.inner)

    def short_conv() -> None:                           # LFM2's Lfm2ShortConv
        kernel = first_int(cfg, ("conv_L_cache", "conv_l_cache"), 3)
        bias = optional_bool(cfg, "conv_bias", False)
        acc.matmul(h, 3 * h, shard="out")               # in_proj: B, C, x
        acc.other(h * kernel + (h if bias else 0))      # depthwise conv1d
        acc.matmul(h, h, shard="in")                    # out_proj
        if bias:
            acc.other(4 * h)
        acc.mix(3 * h)

    def rg_lru_block() -> None:                         # RecurrentGemma's recurrent block
        width = optional_int(cfg, "lru_width", h, min=1)
        block = width // heads                          # the gates are block-diagonal, one block a head
        acc.matmul(h, 2 * width, shard="out")           # linear_y, linear_x
        acc.other(2 * width)                            # their biases
        acc.other(width * optional_int(cfg, "conv1d_width", 4, min=1) + width)   # conv_1d and its bias
        acc.other(2 * width * block + 2 * width + width)   # input/recurrent gates, biases, a_param
        acc.matmul(width, h, shard="in")                # linear_out
        acc.other(h)                                    # its bias
        acc.mix(3 * width)

    # MLP / mixture of experts
    inter_key = "ffn_dim" if is_opt else "intermediate_size"
    n_experts = routed_experts(cfg)
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
        top_k = required_int(cfg, "num_experts_per_tok")
        expert_inter = optional_int(cfg, "moe_intermediate_size", None, min=1) or required_int(cfg, "intermediate_size")

    def moe_mlp() -> None:
        acc.matmul(h, n_experts, replicated=True)       # router
        if mt == "nemotron_h":                          # sigmoid router with a correction bias
            acc.other(n_experts)
            acc.expert_layer(h, expert_inter, n_experts, top_k, gated=False)
            shared = optional_int(cfg, "moe_shared_expert_intermediate_size", 0)
            if shared:
                dense_mlp(shared * optional_int(cfg, "n_shared_experts", 1, min=1), gated=False)
            return
        if mt == "gpt_oss":                             # router and experts have biases
            acc.other(n_experts)
            acc.expert_layer(h, expert_inter, n_experts, top_k, extra_per_expert=2 * expert_inter + h)
            return
        if cfg.get("topk_method") == "noaux_tc":
            acc.other(n_experts)                        # e_score_correction_bias
        acc.expert_layer(h, expert_inter, n_experts, top_k)
        if cfg.get("n_shared_experts"):
            shared = strict_int("n_shared_experts", cfg["n_shared_experts"], min=0)
            if shared:
                dense_mlp(shared * expert_inter)
        if cfg.get("shared_expert_intermediate_size"):
            dense_mlp(required_int(cfg, "shared_expert_intermediate_size"))
            acc.matmul(h, 1, replicated=True)           # the shared expert's gate
        if mt.startswith("llama4"):
            dense_mlp(required_int(cfg, "intermediate_size"))   # Llama 4's shared expert
        if cfg.get("shared_intermediate_size"):
            dense_mlp(required_int(cfg, "shared_intermediate_size"))   # Granite-4.0-H's shared MLP

    dense_width = _dense_ffn_width(cfg, mt, inter_key) if "dense" in arch["ffns"] else 0
    norm_width = 2 * h if is_opt else h                 # LayerNorm has a bias, RMSNorm not
    norms_per_layer = 4 if mt.startswith(("gemma2", "gemma3")) else 2
    for kind, ffn in zip(arch["kinds"], arch["ffns"], strict=True):
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
        for _ in range(optional_int(cfg, "num_mem_blocks", 1, min=1)):
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


def _dense_ffn_width(cfg: HfConfig, mt: str, inter_key: str) -> int:
    """The width of the dense FFN layers.

    Llama 4: ``intermediate_size_mlp``; RecurrentGemma: half of
    ``intermediate_size`` (its gate and up each have that width); LFM2:
    ``block_ff_dim`` (or ``intermediate_size``), cut to 2/3, times
    ``block_ffn_dim_multiplier`` and rounded up to ``block_multiple_of`` when
    ``block_auto_adjust_ff_dim`` (transformers' Lfm2MLP); Granite-4.0-H:
    ``shared_intermediate_size``; otherwise ``intermediate_size``.
    """
    if cfg.get("intermediate_size_mlp") is not None:
        return required_int(cfg, "intermediate_size_mlp")
    if mt == "recurrent_gemma":
        return required_int(cfg, "intermediate_size") // 2
    if mt == "lfm2":
        width = first_int(cfg, ("block_ff_dim", "intermediate_size"))
        if optional_bool(cfg, "block_auto_adjust_ff_dim", True):
            width = int(2 * width / 3)
            multiplier = cfg.get("block_ffn_dim_multiplier", 1.0)
            if multiplier is not None:
                if isinstance(multiplier, bool) or not isinstance(multiplier, (int, float)) \
                        or not 0 < multiplier <= _MAX_FFN_MULTIPLIER:
                    raise KvsimError(f"block_ffn_dim_multiplier={multiplier!r:.60} is not valid: "
                                     f"expected a number in (0, {_MAX_FFN_MULTIPLIER}] or null")
                step = optional_int(cfg, "block_multiple_of", 256, min=1)
                width = step * cdiv(int(multiplier * width), step)
        return width
    if mt.startswith("granitemoe") and cfg.get("shared_intermediate_size"):
        return required_int(cfg, "shared_intermediate_size")
    return required_int(cfg, inter_key)


def _zamba2_mlp_width(cfg: HfConfig, h: int) -> int:
    return first_int(cfg, ("intermediate_size", "ffn_hidden_size"), 4 * h)


def _zamba2_hybrid_extras(cfg: HfConfig, acc: _Ledger, h: int) -> None:
    """What a Zamba2 hybrid layer adds to the shared block it runs (transformers' modeling_zamba2).

    Its own ``linear`` (hidden x hidden) after the shared block, the shared
    MLP's per-layer gate/up adapter (hidden -> adapter_rank -> 2 x intermediate)
    and, with ``use_shared_attention_adapter``, q/k/v adapters
    (2 x hidden -> adapter_rank -> 2 x hidden each).
    """
    rank = first_int(cfg, ("adapter_rank", "lora_rank"), 128)
    acc.matmul(h, h, shard="out")
    acc.matmul(h, rank, replicated=True)
    acc.matmul(rank, 2 * _zamba2_mlp_width(cfg, h), shard="out")
    flag = first_set(cfg, ("use_shared_attention_adapter", "use_shared_attention_lora"))[0]
    if flag and optional_bool(cfg, flag, False):
        for _ in range(3):
            acc.matmul(2 * h, rank, replicated=True)
            acc.matmul(rank, 2 * h, shard="out")


class _Ledger:
    """Running totals of one model's parameters and compute shape (see :func:`account`)."""

    def __init__(self) -> None:
        self.total = self.active = 0
        self.sharded = self.replicated = self.expert = 0
        self.act_replicated = self.act_sharded = self.gemms = 0
        self.norm_width = self.mix_width = 0

    def matmul(self, n_in: int, n_out: int, *, shard: str = "", replicated: bool = False) -> None:
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
                     gated: bool = True, extra_per_expert: int = 0) -> None:
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

    def other(self, params: int) -> None:
        """Parameters that are not matmul weights (norms, biases, convolutions)."""
        self.total += params
        self.active += params

    def norm(self, width: int) -> None:
        self.norm_width += width

    def mix(self, width: int) -> None:
        self.mix_width += width


class LayerWidths(Protocol):
    """What :meth:`ComputeShape.approximate` reads of a spec (a
    :class:`~kvsim.model.spec.ModelSpec`, which imports this module)."""

    @property
    def hidden_size(self) -> int: ...
    @property
    def num_layers(self) -> int: ...
    @property
    def intermediate_size(self) -> int | None: ...
    @property
    def active_params(self) -> int: ...
    @property
    def num_attention_heads(self) -> int: ...
    @property
    def num_kv_heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...


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

    def __post_init__(self) -> None:
        for f in fields(self):
            check_int(f"compute.{f.name}", getattr(self, f.name), min=0)
        if self.num_experts and not 1 <= self.experts_per_token <= self.num_experts:
            raise KvsimError(f"compute.experts_per_token={self.experts_per_token} is out of "
                             f"range: expected an integer in [1, {self.num_experts}]")

    @classmethod
    def approximate(cls, spec: LayerWidths) -> ComputeShape:
        """A dense stand-in for a hand-made spec: every active parameter in matmuls.

        Used when ``spec`` (a :class:`~kvsim.model.spec.ModelSpec`) carries no
        ``compute`` (one built by hand rather than from a config): four
        matmuls per layer, activation widths of a Llama-shaped layer (``hidden_size`` in and out, an MLP
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
