"""The weights of a decoder layer's modules, matmul by matmul (what ``account`` adds up).

Explained in chapter 1, *Bytes per token and capacity* (the weight memory), and
chapter 3, *Swap versus recompute* (the compute shape the cost model times).

:class:`Ledger` keeps the running totals (parameters, and what a forward pass
computes); :class:`LayerWeights` counts one module at a time into it: each
sequence mixer (attention, MLA, linear attention, the Mamba1/Mamba2 mixers,
a short convolution, an RG-LRU block), each feed-forward block (a dense MLP, a
mixture of experts), the norms, and Zamba2's shared blocks. The module shapes
follow the transformers modeling files of each family (``modeling_jamba``,
``modeling_nemotron_h``, ``modeling_bamba``, ``modeling_falcon_h1``,
``modeling_zamba2``, ``modeling_mamba``/``mamba2``, ``modeling_lfm2``,
``modeling_recurrent_gemma``, ``modeling_minimax``, ``modeling_llama4``,
``modeling_gpt_oss``, ``modeling_granitemoehybrid``).
"""
from __future__ import annotations

from kvsim.errors import KvsimError
from kvsim.units import cdiv

from .architecture import Architecture
from .config_json import (
    HfConfig,
    first_int,
    first_set,
    optional_bool,
    optional_int,
    required_int,
    strict_int,
)
from .layer_kinds import routed_experts
from .layer_state import MambaDims, mamba_dims

__all__ = ["Ledger", "LayerWeights"]

#: The sequence mixers that are softmax attention over a KV cache.
_ATTENTION_KINDS = ("full", "sliding", "chunked")


class Ledger:
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


class LayerWeights:
    """Counts each module of a config's decoder layers into a :class:`Ledger`.

    Built once per config: it reads the fields every layer shares (in a fixed order,
    so a config with several bad fields always names the same one first); each method
    then counts one module. In the formulas ``h`` is the hidden size.
    """

    def __init__(self, cfg: HfConfig, arch: Architecture, ledger: Ledger) -> None:
        mt = str(cfg.get("model_type", ""))
        self.cfg, self.arch, self.ledger, self.model_type = cfg, arch, ledger, mt
        self.hidden, self.heads = arch["hidden"], arch["heads"]
        self.kv_heads, self.head_dim = arch["kv_heads"], arch["head_dim"]
        self.is_opt = mt == "opt" or "ffn_dim" in cfg
        # attention
        self.attention_bias = optional_bool(cfg, "attention_bias",
                                            mt in ("qwen2", "qwen2_moe") or self.is_opt)
        self.query_gate = 2 if mt == "qwen3_next" or optional_bool(cfg, "attn_output_gate",
                                                                   False) else 1
        self.qk_norm = 2 * self.head_dim if mt.startswith(("qwen3", "gemma3")) or mt == "lfm2" else 0
        # MLP / mixture of experts
        self.n_experts = routed_experts(cfg)
        self.mlp_gated = mt != "nemotron_h"                      # Nemotron-H: relu2, up and down only
        self.top_k = self.expert_inter = 0
        if self.n_experts:
            self.top_k = required_int(cfg, "num_experts_per_tok")
            self.expert_inter = (optional_int(cfg, "moe_intermediate_size", None, min=1)
                                 or required_int(cfg, "intermediate_size"))
        inter_key = "ffn_dim" if self.is_opt else "intermediate_size"
        self.dense_width = _dense_ffn_width(cfg, mt, inter_key) if "dense" in arch["ffns"] else 0
        # norms: LayerNorm has a bias, RMSNorm not
        self.norm_width = 2 * self.hidden if self.is_opt else self.hidden
        self.norms_per_layer = 4 if mt.startswith(("gemma2", "gemma3")) else 2

    # ------------------------------------------------------------------ a decoder layer

    def decoder_layer(self, kind: str, ffn: str) -> None:
        """One layer: its sequence mixer, its feed-forward block, its norms and residual adds."""
        self.sequence_mixer(kind)
        self.feed_forward(ffn)
        self.layer_norms(kind, ffn)

    def sequence_mixer(self, kind: str) -> None:
        """The mixer a layer of ``kind`` holds (see :func:`~kvsim.model.layer_kinds.layer_kinds`)."""
        if kind in _ATTENTION_KINDS:
            self.attention()
        elif kind == "linear":
            if self.cfg.get("linear_num_value_heads") is not None:
                self.gated_delta_net()
            else:
                self.lightning_attention()
        elif kind == "mamba":
            self.mamba_mixer()
        elif kind == "hybrid":
            if self.model_type == "zamba2":     # the shared block's output projection, adapters
                self.zamba2_hybrid_extras()
            else:
                self.attention()                # Falcon-H1: attention beside the Mamba2 mixer
            self.mamba_mixer()
        elif kind == "conv":
            self.short_conv()
        elif kind == "recurrent":
            self.rg_lru_block()

    def feed_forward(self, ffn: str) -> None:
        """A layer's feed-forward block: a mixture of experts, a dense MLP, or none."""
        if ffn == "moe":
            self.moe_mlp()
        elif ffn == "dense":
            self.dense_mlp(self.dense_width, gated=self.mlp_gated,
                           bias=self.model_type == "recurrent_gemma")

    def layer_norms(self, kind: str, ffn: str) -> None:
        """A layer's norms (their weights) and the widths the norms and residual adds read."""
        sublayers = (kind != "mlp") + (ffn != "none")
        norms = self.norms_per_layer if sublayers == 2 else 1
        self.ledger.other(norms * self.norm_width)
        self.ledger.norm(norms * self.hidden + sublayers * self.hidden)

    def final_norm(self) -> None:
        self.ledger.other(self.norm_width)

    # ------------------------------------------------------------------ attention

    def attention(self, width: int | None = None) -> None:
        """Softmax attention: MLA's low-rank projections, or grouped-query attention reading
        ``width`` (default the hidden size)."""
        if self.arch["kv_lora_rank"]:
            self.latent_attention()
        else:
            self.grouped_query_attention(self.hidden if width is None else width)

    def latent_attention(self) -> None:
        """Multi-head latent attention (DeepSeek): q and kv through low-rank projections."""
        acc, cfg, h, heads = self.ledger, self.cfg, self.hidden, self.heads
        r, rope = self.arch["kv_lora_rank"], self.arch["rope_dim"]
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

    def grouped_query_attention(self, width: int) -> None:
        """Fused QKV (a gated query doubles q), the output projection, biases and sinks."""
        acc, mt, hd, kvh = self.ledger, self.model_type, self.head_dim, self.kv_heads
        q_out = self.heads * hd * self.query_gate
        acc.matmul(width, q_out + 2 * kvh * hd, shard="out")      # fused QKV
        acc.matmul(self.heads * hd, self.hidden, shard="in")       # output projection
        acc.other(self.qk_norm)
        if self.attention_bias:                         # q, k, v biases; Qwen2 has no o_proj bias
            acc.other(q_out + 2 * kvh * hd + (0 if mt.startswith("qwen2") else self.hidden))
        if mt == "recurrent_gemma":
            acc.other(self.hidden)                      # o_proj bias
        if mt == "gpt_oss":
            acc.other(self.heads)                       # attention sinks
        acc.mix((self.heads + kvh) * hd)                # rotary embedding of q and k

    def gated_delta_net(self) -> None:
        """Qwen3-Next's linear attention."""
        acc, cfg, h = self.ledger, self.cfg, self.hidden
        nk, nv = required_int(cfg, "linear_num_key_heads"), required_int(cfg, "linear_num_value_heads")
        dk, dv = required_int(cfg, "linear_key_head_dim"), required_int(cfg, "linear_value_head_dim")
        kern = required_int(cfg, "linear_conv_kernel_dim")
        key_dim, value_dim = nk * dk, nv * dv
        acc.matmul(h, 2 * key_dim + 2 * value_dim, shard="out")   # in_proj_qkvz
        acc.matmul(h, 2 * nv, shard="out")                         # in_proj_ba
        acc.matmul(value_dim, h, shard="in")                       # out_proj
        acc.other((2 * key_dim + value_dim) * kern + 2 * nv + dv)  # conv, dt_bias, A_log, norm
        acc.mix(2 * key_dim + 2 * value_dim)

    def lightning_attention(self) -> None:
        """MiniMax's linear attention."""
        acc, h = self.ledger, self.hidden
        inner = self.heads * self.head_dim
        acc.matmul(h, 3 * inner, shard="out")           # qkv_proj
        acc.matmul(h, inner, shard="out")               # output_gate
        acc.matmul(inner, h, shard="in")                # out_proj
        acc.other(inner)                                # norm
        acc.mix(4 * inner)

    # ------------------------------------------------------------------ state-space and recurrent mixers

    def mamba_mixer(self) -> None:
        """A Mamba1 or Mamba2 mixer, with its convolution's and projections' biases if set."""
        cfg = self.cfg
        dims = mamba_dims(cfg, self.hidden)
        conv_bias = optional_bool(cfg, first_set(cfg, ("mamba_conv_bias", "use_conv_bias"))[0]
                                  or "use_conv_bias", True)
        proj_bias = optional_bool(cfg, first_set(cfg, ("mamba_proj_bias", "use_bias",
                                                       "add_bias_linear"))[0]
                                  or "use_bias", False)
        if dims.version == 1:
            self.mamba1_mixer(dims, conv_bias=conv_bias, proj_bias=proj_bias)
        else:
            self.mamba2_mixer(dims, conv_bias=conv_bias, proj_bias=proj_bias)

    def mamba1_mixer(self, d: MambaDims, *, conv_bias: bool, proj_bias: bool) -> None:
        """MambaMixer / JambaMambaMixer."""
        acc, h = self.ledger, self.hidden
        acc.matmul(h, 2 * d.inner, shard="out")                # in_proj: x and gate z
        acc.other(d.inner * d.conv + (d.inner if conv_bias else 0))   # depthwise conv1d
        acc.matmul(d.inner, d.dt_rank + 2 * d.state, shard="in")      # x_proj: dt, B, C
        acc.matmul(d.dt_rank, d.inner, shard="out")            # dt_proj
        acc.other(d.inner + d.inner * d.state + d.inner)       # dt_proj bias, A_log, D
        if self.model_type == "jamba":
            acc.other(d.dt_rank + 2 * d.state)                 # dt, B and C layernorms
        acc.matmul(d.inner, h, shard="in")                     # out_proj
        if proj_bias:
            acc.other(2 * d.inner + h)
        acc.mix(3 * d.inner)

    def mamba2_mixer(self, d: MambaDims, *, conv_bias: bool, proj_bias: bool) -> None:
        """MambaMixer2: x, B and C go through the convolution."""
        acc, h = self.ledger, self.hidden
        conv_dim = d.inner + 2 * d.groups * d.state
        acc.matmul(h, d.inner + conv_dim + d.heads, shard="out")   # in_proj: z, xBC, dt
        acc.other(conv_dim * d.conv + (conv_dim if conv_bias else 0))
        acc.other(3 * d.heads)                                     # dt_bias, A_log, D
        if self.model_type != "falcon_h1" or optional_bool(self.cfg, "mamba_rms_norm", False):
            acc.other(d.inner)                                     # gated RMSNorm
        acc.matmul(d.inner, h, shard="in")                         # out_proj
        if proj_bias:
            acc.other(d.inner + conv_dim + d.heads + h)
        acc.mix(conv_dim + d.inner)

    def short_conv(self) -> None:
        """LFM2's Lfm2ShortConv."""
        acc, h = self.ledger, self.hidden
        kernel = first_int(self.cfg, ("conv_L_cache", "conv_l_cache"), 3)
        bias = optional_bool(self.cfg, "conv_bias", False)
        acc.matmul(h, 3 * h, shard="out")               # in_proj: B, C, x
        acc.other(h * kernel + (h if bias else 0))      # depthwise conv1d
        acc.matmul(h, h, shard="in")                    # out_proj
        if bias:
            acc.other(4 * h)
        acc.mix(3 * h)

    def rg_lru_block(self) -> None:
        """RecurrentGemma's recurrent block."""
        acc, h = self.ledger, self.hidden
        width = optional_int(self.cfg, "lru_width", h, min=1)
        block = width // self.heads                     # the gates are block-diagonal, one block a head
        acc.matmul(h, 2 * width, shard="out")           # linear_y, linear_x
        acc.other(2 * width)                            # their biases
        acc.other(width * optional_int(self.cfg, "conv1d_width", 4, min=1) + width)   # conv_1d, bias
        acc.other(2 * width * block + 2 * width + width)   # input/recurrent gates, biases, a_param
        acc.matmul(width, h, shard="in")                # linear_out
        acc.other(h)                                    # its bias
        acc.mix(3 * width)

    # ------------------------------------------------------------------ feed-forward blocks

    def dense_mlp(self, inter: int, *, gated: bool = True, bias: bool = False) -> None:
        """OPT's fc1/fc2 with biases, a gated MLP (gate and up fused, then down) or up/down."""
        acc, h = self.ledger, self.hidden
        if self.is_opt:                                 # fc1, fc2 with biases
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

    def moe_mlp(self) -> None:
        """The router and the routed experts, then the family's shared experts."""
        self.ledger.matmul(self.hidden, self.n_experts, replicated=True)     # router
        if self.model_type == "nemotron_h":
            self.nemotron_h_experts()
        elif self.model_type == "gpt_oss":                  # router and experts have biases
            self.ledger.other(self.n_experts)
            self.ledger.expert_layer(self.hidden, self.expert_inter, self.n_experts, self.top_k,
                                     extra_per_expert=2 * self.expert_inter + self.hidden)
        else:
            if self.cfg.get("topk_method") == "noaux_tc":
                self.ledger.other(self.n_experts)           # e_score_correction_bias
            self.ledger.expert_layer(self.hidden, self.expert_inter, self.n_experts, self.top_k)
            self.shared_experts()

    def nemotron_h_experts(self) -> None:
        """Nemotron-H: a sigmoid router with a correction bias, up/down experts, a shared one."""
        cfg = self.cfg
        self.ledger.other(self.n_experts)
        self.ledger.expert_layer(self.hidden, self.expert_inter, self.n_experts, self.top_k,
                                 gated=False)
        shared = optional_int(cfg, "moe_shared_expert_intermediate_size", 0)
        if shared:
            self.dense_mlp(shared * optional_int(cfg, "n_shared_experts", 1, min=1), gated=False)

    def shared_experts(self) -> None:
        """The experts every token uses beside the routed ones, as each family names them."""
        cfg = self.cfg
        if cfg.get("n_shared_experts"):
            shared = strict_int("n_shared_experts", cfg["n_shared_experts"], min=0)
            if shared:
                self.dense_mlp(shared * self.expert_inter)
        if cfg.get("shared_expert_intermediate_size"):
            self.dense_mlp(required_int(cfg, "shared_expert_intermediate_size"))
            self.ledger.matmul(self.hidden, 1, replicated=True)    # the shared expert's gate
        if self.model_type.startswith("llama4"):
            self.dense_mlp(required_int(cfg, "intermediate_size"))   # Llama 4's shared expert
        if cfg.get("shared_intermediate_size"):
            self.dense_mlp(required_int(cfg, "shared_intermediate_size"))   # Granite-4.0-H's shared MLP

    # ------------------------------------------------------------------ Zamba2

    def zamba2_hybrid_extras(self) -> None:
        """What a Zamba2 hybrid layer adds to the shared block it runs (transformers' modeling_zamba2).

        Its own ``linear`` (hidden x hidden) after the shared block, the shared
        MLP's per-layer gate/up adapter (hidden -> adapter_rank -> 2 x intermediate)
        and, with ``use_shared_attention_adapter``, q/k/v adapters
        (2 x hidden -> adapter_rank -> 2 x hidden each).
        """
        acc, cfg, h = self.ledger, self.cfg, self.hidden
        rank = first_int(cfg, ("adapter_rank", "lora_rank"), 128)
        acc.matmul(h, h, shard="out")
        acc.matmul(h, rank, replicated=True)
        acc.matmul(rank, 2 * _zamba2_mlp_width(cfg, h), shard="out")
        flag = first_set(cfg, ("use_shared_attention_adapter", "use_shared_attention_lora"))[0]
        if flag and optional_bool(cfg, flag, False):
            for _ in range(3):
                acc.matmul(2 * h, rank, replicated=True)
                acc.matmul(rank, 2 * h, shard="out")

    def zamba2_shared_blocks(self) -> None:
        """Zamba2's shared transformer blocks, counted once each (every hybrid layer runs one)."""
        h = self.hidden
        for _ in range(optional_int(self.cfg, "num_mem_blocks", 1, min=1)):
            self.ledger.other(2 * h + h)            # input_layernorm (2 x hidden), pre_ff_layernorm
            self.attention(width=2 * h)
            self.dense_mlp(_zamba2_mlp_width(self.cfg, h))


def _dense_ffn_width(cfg: HfConfig, mt: str, inter_key: str) -> int:
    """The width of the dense FFN layers.

    Llama 4: ``intermediate_size_mlp``; RecurrentGemma: half of
    ``intermediate_size`` (its gate and up each have that width); LFM2:
    :func:`_lfm2_ffn_width`; Granite-4.0-H: ``shared_intermediate_size``;
    otherwise ``intermediate_size``.
    """
    if cfg.get("intermediate_size_mlp") is not None:
        return required_int(cfg, "intermediate_size_mlp")
    if mt == "recurrent_gemma":
        return required_int(cfg, "intermediate_size") // 2
    if mt == "lfm2":
        return _lfm2_ffn_width(cfg)
    if mt.startswith("granitemoe") and cfg.get("shared_intermediate_size"):
        return required_int(cfg, "shared_intermediate_size")
    return required_int(cfg, inter_key)


#: The largest ``block_ffn_dim_multiplier`` (LFM2) kvsim accepts: real ones are about 1.
_MAX_FFN_MULTIPLIER = 64


def _lfm2_ffn_width(cfg: HfConfig) -> int:
    """LFM2's MLP width: ``block_ff_dim`` (or ``intermediate_size``), cut to 2/3, times
    ``block_ffn_dim_multiplier`` and rounded up to ``block_multiple_of`` when
    ``block_auto_adjust_ff_dim`` (transformers' Lfm2MLP)."""
    width = first_int(cfg, ("block_ff_dim", "intermediate_size"))
    if not optional_bool(cfg, "block_auto_adjust_ff_dim", True):
        return width
    width = int(2 * width / 3)
    multiplier = cfg.get("block_ffn_dim_multiplier", 1.0)
    if multiplier is None:
        return width
    if isinstance(multiplier, bool) or not isinstance(multiplier, (int, float)) \
            or not 0 < multiplier <= _MAX_FFN_MULTIPLIER:
        raise KvsimError(f"block_ffn_dim_multiplier={multiplier!r:.60} is not valid: "
                         f"expected a number in (0, {_MAX_FFN_MULTIPLIER}] or null")
    step = optional_int(cfg, "block_multiple_of", 256, min=1)
    return step * cdiv(int(multiplier * width), step)


def _zamba2_mlp_width(cfg: HfConfig, h: int) -> int:
    return first_int(cfg, ("intermediate_size", "ffn_hidden_size"), 4 * h)
