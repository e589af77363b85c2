"""The fixed per-request state of the stateful layer kinds (Mamba, linear attention, ...).

Explained in chapter 1, *Bytes per token and capacity*.

Hybrids' Mamba1/Mamba2 mixers, linear attention, short convolutions and
RG-LRU blocks keep no KV per token but a fixed state per request, counted
here in elements as vLLM's ``MambaStateShapeCalculator`` shapes it
(:func:`layer_state_elems`) and priced per element by
:func:`temporal_state_bytes`.
"""
from __future__ import annotations

from dataclasses import dataclass

from kvsim.errors import KvsimError
from kvsim.units import cdiv

from .config_json import HfConfig, first_int, first_set, optional_int, required_int, strict_int
from .dtypes import DTYPE_BYTES

__all__ = ["MambaDims", "mamba_dims", "layer_state_elems", "temporal_state_bytes"]

_MAMBA1_MODEL_TYPES = frozenset({"mamba", "falcon_mamba", "jamba"})
_STATE_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


@dataclass(frozen=True)
class MambaDims:
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


def mamba_dims(cfg: HfConfig, hidden: int) -> MambaDims:
    """Read a Mamba mixer's widths under every field name the families use.

    Mamba1 (``mamba``, ``falcon_mamba``, ``jamba``): d_inner is
    ``intermediate_size`` for the pure Mamba models, else
    ``mamba_expand`` x ``hidden_size``. Mamba2 (``mamba2``, ``nemotron_h``,
    ``bamba``, ``falcon_h1``, ``granitemoehybrid``, ``zamba2``): d_inner is
    ``mamba_d_ssm`` (Falcon-H1), else heads x head_dim, else expand x hidden.
    """
    mt = str(cfg.get("model_type", ""))
    state = first_int(cfg, ("mamba_d_state", "ssm_state_size", "state_size", "mamba_state_dim"))
    conv = first_int(cfg, ("mamba_d_conv", "conv_kernel", "mamba_conv_kernel", "conv_dimension"), 4)
    expand = first_int(cfg, ("mamba_expand", "expand", "expansion_factor"), 2)
    if mt in _MAMBA1_MODEL_TYPES:
        inner = expand * hidden
        if mt != "jamba" and cfg.get("intermediate_size") is not None:
            inner = strict_int("intermediate_size", cfg["intermediate_size"], min=1)
        key, rank = first_set(cfg, ("mamba_dt_rank", "time_step_rank"))
        dt_rank = cdiv(hidden, 16) if key is None or rank == "auto" else strict_int(key, rank, min=1)
        return MambaDims(version=1, inner=inner, state=state, conv=conv, dt_rank=dt_rank)
    plain = ("num_heads",) if mt == "mamba2" else ()
    heads = first_int(cfg, ("mamba_n_heads", "mamba_num_heads", "n_mamba_heads") + plain, 0, min=0)
    key, head_dim_field = first_set(cfg, ("mamba_d_head", "mamba_head_dim", "mamba_headdim")
                                    + (("head_dim",) if mt == "mamba2" else ()))
    head_dim = 0 if key is None or head_dim_field == "auto" else strict_int(key, head_dim_field, min=1)
    if cfg.get("mamba_d_ssm") is not None:
        inner = strict_int("mamba_d_ssm", cfg["mamba_d_ssm"], min=1)
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
    groups = first_int(cfg, ("mamba_n_groups", "n_groups", "mamba_ngroups", "mamba_num_groups"), 1)
    return MambaDims(version=2, inner=inner, state=state, conv=conv, heads=heads,
                      head_dim=head_dim, groups=groups)


def layer_state_elems(cfg: HfConfig, kind: str, hidden: int, heads: int, head_dim: int) -> tuple[int, int]:
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
        d = mamba_dims(cfg, hidden)
        if d.version == 1:
            return (d.conv - 1) * d.inner, d.inner * d.state
        return (d.conv - 1) * (d.inner + 2 * d.groups * d.state), d.heads * d.head_dim * d.state
    if kind == "linear" and cfg.get("linear_num_value_heads") is not None:
        nk, nv = required_int(cfg, "linear_num_key_heads"), required_int(cfg, "linear_num_value_heads")
        dk, dv = required_int(cfg, "linear_key_head_dim"), required_int(cfg, "linear_value_head_dim")
        kernel = required_int(cfg, "linear_conv_kernel_dim")
        return (2 * nk * dk + nv * dv) * (kernel - 1), nv * dk * dv
    if kind == "linear":
        return 0, heads * head_dim * head_dim
    if kind == "conv":
        return (first_int(cfg, ("conv_L_cache", "conv_l_cache"), 3) - 1) * hidden, 0
    if kind == "recurrent":
        width = optional_int(cfg, "lru_width", hidden, min=1)
        return (optional_int(cfg, "conv1d_width", 4, min=1) - 1) * width, width
    return 0, 0


def temporal_state_bytes(cfg: HfConfig, dtype: str) -> int:
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
