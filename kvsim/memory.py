"""Bytes per token and the KV-cache budget: how many tokens and blocks fit.

Explained in chapter 1, *Bytes per token and capacity*.

The budget follows vLLM's start-up arithmetic: take ``gpu_memory_utilization``
of the GPU memory, subtract the weights and the activation/runtime overhead
that profiling finds, and cut the rest into blocks of ``block_size`` tokens::

    usable     = round(memory_bytes * tensor_parallel_size * gpu_memory_utilization)
    kv_bytes   = usable - weight_bytes - activation_bytes
    block_bytes = kv_bytes_per_token * block_size
    blocks     = kv_bytes // block_bytes
    tokens     = blocks * block_size

Every quantity is an exact integer of bytes. Seed 000 ("KV Cache Preemption in
vLLM") does the same sum loosely and divides 13.3 GB by "0.5 MB" (500,000 B)
per token; kvsim divides by the exact 0.5 MiB (524,288 B), so its token count
is 1.048576 times smaller (the MiB/MB ratio). Chapter 1 shows both.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import KvsimError, check_choice, check_float, check_int
from .hardware import GPUSpec, get_gpu
from .models import DTYPE_BYTES, ModelSpec, get_model
from .units import GB, format_bytes

__all__ = ["KV_DTYPES", "BLOCK_SIZES", "DEFAULT_ACTIVATION_BYTES", "kv_bytes_per_token",
           "kv_budget", "KVBudget"]

#: KV-cache element formats and their bytes.
KV_DTYPES: dict[str, int] = dict(DTYPE_BYTES)

#: Accepted ``block_size`` values. vLLM accepts 1, 8, 16, 32, 64 and 128 (and
#: 256 in recent releases); kvsim also accepts 2 and 4 so the PagedAttention
#: paper's block-size study (1 to 256 tokens) can be replayed.
BLOCK_SIZES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256)

#: Activation and runtime overhead per GPU when none is given: seed 000's
#: "roughly 2 GB of activations and runtime overhead" (decimal GB).
DEFAULT_ACTIVATION_BYTES: int = 2 * GB


def _resolve_kv_dtype(model: ModelSpec, kv_dtype) -> str:
    if kv_dtype is None or kv_dtype == "auto":
        return model.dtype
    return check_choice("kv_dtype", kv_dtype, KV_DTYPES)


def kv_bytes_per_token(model, kv_dtype: str | None = None) -> int:
    """KV-cache bytes one token costs across all KV layers.

    ``model`` is a :class:`~kvsim.models.ModelSpec`, a preset name or a path to
    a ``config.json``; ``kv_dtype`` (one of :data:`KV_DTYPES`) defaults to the
    model's dtype. ``2 x kv_layers x kv_heads x head_dim x`` dtype bytes, or
    ``kv_layers x (kv_lora_rank + rope_dim) x`` dtype bytes for MLA.
    Explained in chapter 1, *Bytes per token and capacity*.

    >>> kv_bytes_per_token("llama-2-7b")
    524288
    >>> kv_bytes_per_token("llama-2-7b", "fp8")
    262144
    """
    spec = get_model(model)
    return spec.kv_bytes_per_token(_resolve_kv_dtype(spec, kv_dtype))


def _tp_kv_factor(model: ModelSpec, tp: int) -> tuple[int, int]:
    """(numerator, denominator) of the KV replication a tensor-parallel group pays.

    vLLM shards KV heads over the group; when there are fewer KV heads than
    GPUs each GPU still keeps one (``max(kv_heads, tp) / kv_heads``). The MLA
    latent is not sharded at all: every GPU keeps the whole latent (``tp``).
    """
    if tp == 1:
        return 1, 1
    if model.attention_kind == "mla":
        return tp, 1
    return max(model.num_kv_heads, tp), model.num_kv_heads


@dataclass(frozen=True)
class KVBudget:
    """The KV pool a configuration leaves, in exact bytes, blocks and tokens.

    ``usable_bytes`` is ``gpu_memory_utilization`` of the memory of all
    ``tensor_parallel_size`` GPUs; ``kv_bytes`` what is left after
    ``weight_bytes`` and ``activation_bytes``. ``kv_bytes_per_token`` is what
    one token costs the whole group (the model's figure, times the KV
    replication tensor parallelism forces when there are fewer KV heads than
    GPUs or the model uses MLA). ``tokens = blocks * block_size``.
    Explained in chapter 1, *Bytes per token and capacity*.
    """

    gpu: GPUSpec
    model: ModelSpec
    gpu_memory_utilization: float
    kv_dtype: str
    block_size: int
    tensor_parallel_size: int
    usable_bytes: int
    weight_bytes: int
    activation_bytes: int
    kv_bytes: int
    kv_bytes_per_token: int
    block_bytes: int
    blocks: int
    tokens: int

    def blocks_for(self, seq_len: int) -> int:
        """Blocks a sequence of ``seq_len`` tokens holds: ``ceil(seq_len / block_size)``."""
        seq_len = check_int("seq_len", seq_len, min=1)
        return -(-seq_len // self.block_size)

    @property
    def state_blocks_per_request(self) -> int:
        """Blocks' worth of the fixed per-request state of hybrid models (0 for pure attention).

        A hybrid such as Qwen3-Next keeps a fixed recurrent state per request
        in its linear-attention layers (``model.state_bytes_per_request``);
        it comes out of the same memory, so each request costs
        ``ceil(state_bytes_per_request / block_bytes)`` blocks on top of its KV.
        """
        return -(-self.model.state_bytes_per_request // self.block_bytes)

    def max_concurrent(self, seq_len: int) -> int:
        """How many sequences of ``seq_len`` tokens fit at once: ``blocks // ceil(seq_len / block_size)``.

        For hybrid models each request's fixed state
        (:attr:`state_blocks_per_request`) is added to the divisor. Explained
        in chapter 1 (how many requests fit) and chapter 2 (sizing
        ``max_num_seqs`` from capacity at p95 length).
        """
        return self.blocks // (self.blocks_for(seq_len) + self.state_blocks_per_request)

    def describe(self) -> str:
        """A multi-line human summary; every byte figure names its unit (GB and GiB)."""
        m, g = self.model, self.gpu
        tp = f" x{self.tensor_parallel_size}" if self.tensor_parallel_size > 1 else ""

        def both(n: int) -> str:
            return f"{format_bytes(n, 'GB')} = {format_bytes(n, 'GiB')}"

        return "\n".join([
            f"model           {m.name} ({m.attention_kind.upper()}, {m.kv_layers} KV layers, "
            f"KV in {self.kv_dtype})",
            f"gpu             {g.name}{tp}: {both(g.memory_bytes * self.tensor_parallel_size)}, "
            f"gpu_memory_utilization {self.gpu_memory_utilization:g}",
            f"usable          {both(self.usable_bytes)}",
            f"weights         {both(self.weight_bytes)}",
            f"activations     {both(self.activation_bytes)}",
            f"KV pool         {both(self.kv_bytes)}",
            f"KV per token    {self.kv_bytes_per_token:,} B = "
            f"{format_bytes(self.kv_bytes_per_token, 'KiB', 1)} = "
            f"{format_bytes(self.kv_bytes_per_token, 'MB', 3)}",
            f"block           {self.block_size} tokens = {self.block_bytes:,} B = "
            f"{format_bytes(self.block_bytes, 'MiB', 2)}",
            f"blocks          {self.blocks:,}",
            f"tokens          {self.tokens:,}",
        ] + ([f"state/request   {format_bytes(m.state_bytes_per_request, 'MB')} = "
              f"{self.state_blocks_per_request:,} blocks (linear-attention layers)"]
             if m.state_bytes_per_request else []))


def _least_utilisation(mem_total: int, needed: int) -> float | None:
    """Smallest utilisation (rounded up to 0.01) whose usable bytes cover ``needed``, or None."""
    u = math.ceil(needed / mem_total * 100) / 100
    while u <= 1.0 and round(mem_total * u) < needed:
        u = round(u + 0.01, 2)
    return u if u <= 1.0 else None


def _least_tp(gpu: GPUSpec, model: ModelSpec, util: float, kv_dtype: str, block_size: int,
              weight_bytes: int, activation_per_gpu: int) -> int | None:
    """Smallest tensor-parallel size (dividing the heads, up to 64) that leaves one block."""
    for tp in range(1, 65):
        if model.num_attention_heads % tp:
            continue
        num, den = _tp_kv_factor(model, tp)
        block = model.kv_bytes_per_token(kv_dtype) * num // den * block_size
        if round(gpu.memory_bytes * tp * util) - weight_bytes - activation_per_gpu * tp >= block:
            return tp
    return None


def kv_budget(gpu, model, *, gpu_memory_utilization, kv_dtype: str | None = None,
              block_size: int = 16, activation_bytes: int | None = None,
              weight_bytes: int | None = None, tensor_parallel_size: int = 1) -> KVBudget:
    """The KV pool left on ``gpu`` for ``model`` at ``gpu_memory_utilization``.

    ``gpu`` is a :class:`~kvsim.hardware.GPUSpec` or preset name; ``model`` a
    spec, preset name or ``config.json`` path. ``weight_bytes`` defaults to
    ``model.weight_bytes``; ``activation_bytes`` to 2 GB per GPU (seed 000).
    Raises :class:`KvsimError` when weights and activations do not leave room
    for a single block, saying both figures and the least utilisation that
    would. Explained in chapter 1, *Bytes per token and capacity*.
    """
    gpu = get_gpu(gpu)
    model = get_model(model)
    util = check_float("gpu_memory_utilization", gpu_memory_utilization, min=0, max=1,
                       min_open=True)
    kv_dtype = _resolve_kv_dtype(model, kv_dtype)
    if isinstance(block_size, bool) or block_size not in BLOCK_SIZES:
        raise KvsimError(f"block_size={block_size!r} is not valid: expected one of "
                         f"{', '.join(map(str, BLOCK_SIZES))}")
    block_size = int(block_size)
    tp = check_int("tensor_parallel_size", tensor_parallel_size, min=1, max=1024)
    if model.num_attention_heads % tp:
        raise KvsimError(f"tensor_parallel_size={tp} does not divide the "
                         f"{model.num_attention_heads} attention heads of {model.name}: "
                         f"expected a divisor of {model.num_attention_heads}")
    if weight_bytes is None:
        weight_bytes = model.weight_bytes
    weight_bytes = check_int("weight_bytes", weight_bytes, min=0)
    if activation_bytes is None:
        activation_bytes = DEFAULT_ACTIVATION_BYTES * tp
    activation_bytes = check_int("activation_bytes", activation_bytes, min=0)

    mem_total = gpu.memory_bytes * tp
    usable = round(mem_total * util)
    num, den = _tp_kv_factor(model, tp)
    per_token = model.kv_bytes_per_token(kv_dtype) * num // den
    block_bytes = per_token * block_size
    kv_bytes = usable - weight_bytes - activation_bytes
    if kv_bytes < block_bytes:
        fixed = weight_bytes + activation_bytes
        least = _least_utilisation(mem_total, fixed + block_bytes)
        if least is None:
            tp_fit = _least_tp(gpu, model, util, kv_dtype, block_size, weight_bytes,
                               activation_bytes // tp)
            more = f"tensor_parallel_size >= {tp_fit} at this utilisation" if tp_fit else "more GPUs"
            hint = (f"no gpu_memory_utilization in (0, 1] fits on {tp} x {gpu.name}: expected "
                    f"{more}, a larger GPU or smaller weights")
        else:
            hint = f"expected gpu_memory_utilization >= {least:.2f}"
        what = ("leaves no KV memory" if kv_bytes <= 0 else
                f"leaves {format_bytes(kv_bytes, 'GB')}, less than one block of "
                f"{format_bytes(block_bytes, 'MB')}")
        raise KvsimError(
            f"gpu_memory_utilization={util:g} {what} for {model.name} on {tp} x {gpu.name}: "
            f"usable {format_bytes(usable, 'GB')} vs weights {format_bytes(weight_bytes, 'GB')} "
            f"+ activations {format_bytes(activation_bytes, 'GB')} = "
            f"{format_bytes(fixed, 'GB')}; {hint}")
    blocks = kv_bytes // block_bytes
    return KVBudget(gpu=gpu, model=model, gpu_memory_utilization=util, kv_dtype=kv_dtype,
                    block_size=block_size, tensor_parallel_size=tp, usable_bytes=usable,
                    weight_bytes=weight_bytes, activation_bytes=activation_bytes,
                    kv_bytes=kv_bytes, kv_bytes_per_token=per_token, block_bytes=block_bytes,
                    blocks=blocks, tokens=blocks * block_size)
