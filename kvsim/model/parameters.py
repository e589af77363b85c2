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

from .architecture import Architecture, parse_architecture
from .config_json import (
    HfConfig,
    load_config,
    optional_bool,
    optional_int,
    required_int,
    text_config,
)
from .layer_weights import LayerWeights, Ledger

__all__ = ["ParamEstimate", "estimate_params", "ComputeShape", "account"]

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


def account(cfg: HfConfig, arch: Architecture) -> tuple[ParamEstimate, ComputeShape]:
    """Parameter counts and the compute shape, layer by layer and per layer kind.

    Each matmul is counted once with its input and output widths, so the same
    pass gives the weights (``ParamEstimate``) and what the cost model needs
    (:class:`ComputeShape`): TP-sharded and replicated weights, one routed
    expert, the activation widths, the number of matmul kernels and the
    widths the element-wise kernels move.

    The steps: the embeddings and the output head (:func:`_embedding_params`);
    then each layer, its sequence mixer (attention, MLA, linear attention, a
    Mamba1/Mamba2 mixer, a short convolution, an RG-LRU block, attention and
    Mamba2 side by side, or nothing) plus its FFN (a dense MLP, a mixture of
    experts, or nothing; see :func:`~kvsim.model.layer_kinds.layer_ffns`) and
    its norms, each counted by :class:`~kvsim.model.layer_weights.LayerWeights`;
    Zamba2's shared transformer blocks, counted once, though every hybrid layer
    runs one (kvsim's active count cannot exceed the total), so its compute is
    undercounted by those repeats; the final norm.
    """
    cfg = text_config(cfg)
    mt = str(cfg.get("model_type", ""))
    vocab = required_int(cfg, "vocab_size")
    embedding = _embedding_params(cfg, mt, vocab, arch["hidden"])
    ledger = Ledger()
    layers = LayerWeights(cfg, arch, ledger)
    for kind, ffn in zip(arch["kinds"], arch["ffns"], strict=True):
        layers.decoder_layer(kind, ffn)
    if mt == "zamba2":
        layers.zamba2_shared_blocks()
    layers.final_norm()
    estimate = ParamEstimate(total=embedding + ledger.total, active=embedding + ledger.active,
                             embedding=embedding)
    return estimate, _compute_shape(ledger, layers, lm_head_params=vocab * arch["hidden"])


def _embedding_params(cfg: HfConfig, mt: str, vocab: int, hidden: int) -> int:
    """The input embedding and the output head (once if tied), and OPT's learned positions."""
    is_opt = mt == "opt" or "ffn_dim" in cfg
    tied = optional_bool(cfg, "tie_word_embeddings",
                         optional_bool(cfg, "tie_embedding",
                                       mt.startswith("gemma") or is_opt or mt in _TIED_BY_DEFAULT))
    embedding = vocab * hidden * (1 if tied else 2)
    if is_opt:
        embedding += (optional_int(cfg, "max_position_embeddings", 2048) + 2) * hidden
    return embedding


def _compute_shape(ledger: Ledger, layers: LayerWeights, *, lm_head_params: int) -> ComputeShape:
    """What one forward pass computes, from the totals the layers were counted into."""
    return ComputeShape(
        dense_params=ledger.sharded, replicated_params=ledger.replicated,
        expert_params=ledger.expert, num_experts=layers.n_experts,
        experts_per_token=layers.top_k, act_replicated=ledger.act_replicated,
        act_sharded=ledger.act_sharded, gemms=ledger.gemms, norm_width=ledger.norm_width,
        mix_width=ledger.mix_width, lm_head_params=lm_head_params)


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
