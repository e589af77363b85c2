"""Bytes per token and the KV-cache budget: how many tokens and blocks fit.

Explained in chapter 1, *Bytes per token and capacity*.

The budget follows vLLM V1's start-up arithmetic (``determine_available_memory``
in vllm/v1/worker/gpu_worker.py, then ``get_kv_cache_config`` in
vllm/v1/core/kv_cache_utils.py): take ``gpu_memory_utilization`` of the memory
CUDA reports, subtract the weights, the peak activation memory of a profiling
pass and the non-PyTorch memory, and cut the rest into blocks::

    usable       = round(memory_bytes x tensor_parallel_size x gpu_memory_utilization)
    kv_bytes     = usable - weight_bytes - activation_bytes
    block_bytes  = kv_bytes_per_token x block_size x group_size / kv_layers
    vllm_blocks  = kv_bytes // block_bytes        # what vLLM allocates and logs
    blocks       = vllm_blocks - 1                # V1 keeps one block as the "null block"
    tokens       = blocks // groups x block_size

A model whose KV layers are all full attention is one KV cache group of every
layer (``group_size = kv_layers``, one group); vLLM V1's hybrid allocator gives
sliding-window layers their own groups, and a block is one group's page
(:mod:`kvsim.model.kv_groups`).

``activation_bytes`` is, when not given, the peak of vLLM's profiling run
(:func:`peak_activation_bytes`: a forward pass of ``max_num_batched_tokens``
tokens and the sampler's fp32 logits for ``max_num_seqs`` rows) plus
:data:`~kvsim.model.vllm_defaults.NON_TORCH_BYTES` per GPU. Seed 000 does the sum
loosely ("roughly 2 GB of activations and runtime overhead", and 0.5 MB per
token where the cache takes 0.5 MiB); chapter 1 shows both. Every quantity is
an exact integer of bytes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from kvsim.errors import (
    KvsimError,
    check_choice,
    check_gpu_memory_utilization,
    check_int,
    check_num_gpu_blocks,
)
from kvsim.units import cdiv, format_bytes

from .dtypes import DTYPE_BYTES
from .hardware import GPUSpec, get_gpu
from .kv_groups import KVGroup, KVLayout
from .presets import ModelSource, get_model
from .spec import ModelSpec
from .vllm_defaults import (
    ACTIVATION_BYTES,
    ENGINES,
    NON_TORCH_BYTES,
    SAMPLER_LOGIT_BYTES,
    USAGE_CONTEXTS,
    VLLM_VERSION_DEFAULT,
    async_scheduling_default,
    batch_defaults,
    blocks_from_logged_tokens,
    check_vllm_version,
    startup_log_lines,
)

__all__ = ["KV_DTYPES", "BLOCK_SIZES", "kv_bytes_per_token", "kv_budget", "KVBudget",
           "peak_activation_bytes", "pinned_budget"]

#: KV-cache element formats and their bytes.
KV_DTYPES: dict[str, int] = dict(DTYPE_BYTES)

#: Accepted ``block_size`` values. vLLM accepts 1, 8, 16, 32, 64 and 128 (and
#: 256 in recent releases); kvsim also accepts 2 and 4 so the PagedAttention
#: paper's block-size study (1 to 256 tokens) can be replayed.
BLOCK_SIZES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _resolve_kv_dtype(model: ModelSpec, kv_dtype: str | None) -> str:
    if kv_dtype is None or kv_dtype == "auto":
        return model.dtype
    return check_choice("kv_dtype", kv_dtype, KV_DTYPES)


def kv_bytes_per_token(model: ModelSource, kv_dtype: str | None = None) -> int:
    """KV-cache bytes one token costs across all KV layers.

    ``model`` is a :class:`~kvsim.model.spec.ModelSpec`, a preset name or a path to
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
    ``weight_bytes`` and ``activation_bytes`` (peak activations plus
    non-PyTorch memory: ``peak_activation_bytes + non_torch_bytes`` when
    kvsim estimated them, 0 and 0 when a figure was given).
    ``kv_bytes_per_token`` is what one token costs the whole group (the
    model's figure, times the KV replication tensor parallelism forces when
    there are fewer KV heads than GPUs or the model uses MLA).
    ``layout`` is vLLM V1's KV cache groups (:mod:`kvsim.model.kv_groups`): one group of
    every layer unless the model has sliding-window layers, whose groups hold only their
    window; a block (``block_bytes``) is one group's page and every group draws from the
    same blocks. ``vllm_blocks`` is what vLLM allocates and logs (its ``num_gpu_blocks``;
    "GPU KV cache size: N tokens" was ``vllm_blocks // groups * block_size`` before
    0.23); ``blocks`` the usable ones (V1 keeps ``null_blocks = 1`` aside), which is what
    kvsim's ``num_gpu_blocks`` engine option means; ``tokens = blocks // groups *
    block_size``, the context the pool holds when every group holds every token.
    ``max_in_flight_tokens`` (``max_num_batched_tokens``, twice that with asynchronous
    scheduling: vLLM's ``VllmConfig.max_in_flight_tokens``) sizes a window group's
    admission cap (:meth:`kvsim.model.kv_groups.KVLayout.admission_blocks`).
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
    vllm_blocks: int = 0
    null_blocks: int = 0
    peak_activation_bytes: int = 0
    non_torch_bytes: int = 0
    engine: str = "v1"
    pinned: bool = False
    layout: KVLayout | None = None
    max_in_flight_tokens: int = 0

    @property
    def groups(self) -> KVLayout:
        """The KV cache groups (one group of every KV layer when none was given)."""
        if self.layout is None:
            return KVLayout((KVGroup(self.model.kv_layers),), self.model.kv_layers)
        return self.layout

    @property
    def log_tokens(self) -> int:
        """The pool in tokens as vLLM counts it, ``vllm_blocks // groups * block_size`` (the null
        block included, divided among the KV cache groups): what its start-up log prints as "GPU KV
        cache size: N tokens" before 0.23, and at any release when ``max_model_len`` is a multiple
        of ``block_size`` and the model keeps no per-request state and no window
        (:meth:`startup_log` prints each release's own figure)."""
        return self.vllm_blocks // len(self.groups.groups) * self.block_size

    def log_concurrency(self, max_model_len: int | None = None) -> float:
        """vLLM's "Maximum concurrency for N tokens per request": requests of ``max_model_len``.

        ``vllm_blocks / ceil(max_model_len / block_size)`` (vLLM V1's
        ``get_max_concurrency_for_kv_cache_config`` for full attention; it
        counts the null block, as its log does), the divisor summed over the KV
        cache groups, a window group's being its admission cap. ``max_model_len``
        defaults to the model's.
        """
        return self.vllm_blocks / self._log_blocks_per_request(self._log_length(max_model_len))

    def _log_length(self, max_model_len: int | None) -> int:
        length = self.model.max_model_len if max_model_len is None else max_model_len
        return check_int("max_model_len", length, min=1)

    def _log_blocks_per_request(self, length: int) -> int:
        return self.blocks_per_request(length) + self.state_blocks_per_request

    def blocks_per_request(self, seq_len: int) -> int:
        """Blocks one request of ``seq_len`` tokens counts, summed over the KV cache groups: a
        full group's ``ceil(seq_len / block_size)``, a window group's admission cap (vLLM's
        ``max_memory_usage_bytes // page``, :meth:`kvsim.model.kv_groups.KVLayout.admission_blocks`)."""
        seq_len = check_int("seq_len", seq_len, min=1)
        return self.groups.admission_blocks(seq_len, self.block_size, self.max_in_flight_tokens)

    def startup_log(self, max_model_len: int | None = None,
                    vllm_version: str = VLLM_VERSION_DEFAULT) -> list[str]:
        """What vLLM V1 release ``vllm_version`` logs about the pool at start-up, as kvsim predicts it.

        At 0.34: ``["GPU KV cache size: 27,776 tokens, Maximum concurrency for 4,096 tokens
        per request: 6.78x"]``; before 0.28 the two figures are two lines, and before 0.23 the
        size is ``vllm_blocks // groups * block_size`` rather than ``int(concurrency * max_model_len)``
        (:func:`kvsim.model.vllm_defaults.startup_log_lines`). Compare them with your
        server's log. A V0 budget has no such line (V0 logs its block counts). A model with
        sliding-window layers counts each window group at its admission cap
        (:meth:`blocks_per_request`), as vLLM 0.20 and later do.
        """
        if self.engine != "v1":
            raise KvsimError(f"startup_log() is vLLM V1's log; this budget is engine={self.engine!r}: "
                             "expected a budget made with engine='v1' (V0 logs its GPU block count, "
                             "vllm_blocks)")
        version = check_vllm_version(vllm_version)
        length = self._log_length(max_model_len)
        return startup_log_lines(version, num_blocks=self.vllm_blocks, block_size=self.block_size,
                                 max_model_len=length,
                                 blocks_per_request=self._log_blocks_per_request(length),
                                 num_groups=len(self.groups.groups))

    def blocks_for(self, seq_len: int) -> int:
        """Blocks a sequence of ``seq_len`` tokens holds: ``ceil(seq_len / block_size)``."""
        seq_len = check_int("seq_len", seq_len, min=1)
        return cdiv(seq_len, self.block_size)

    @property
    def state_blocks_per_request(self) -> int:
        """Blocks' worth of the fixed per-request state of hybrid models (0 for pure attention).

        A hybrid such as Qwen3-Next keeps a fixed recurrent state per request
        in its linear-attention layers (``model.state_bytes_per_request``);
        it comes out of the same memory, so each request costs
        ``ceil(state_bytes_per_request / block_bytes)`` blocks on top of its KV.
        """
        return cdiv(self.model.state_bytes_per_request, self.block_bytes)

    def max_concurrent(self, seq_len: int) -> int:
        """How many sequences of ``seq_len`` tokens fit at once: ``blocks // ceil(seq_len / block_size)``.

        The divisor is summed over the KV cache groups, a window group counting the
        fewer of ``ceil(seq_len / block_size)`` and its admission cap (what vLLM admits a
        request with, :meth:`kvsim.model.kv_groups.KVLayout.admission_blocks`; below the
        window the request's own blocks, as today). For hybrid models
        each request's fixed state (:attr:`state_blocks_per_request`) is added to it. Explained
        in chapter 1 (how many requests fit) and chapter 2 (sizing
        ``max_num_seqs`` from capacity at p95 length).
        """
        seq_len = check_int("seq_len", seq_len, min=1)
        held = self.groups.admission_blocks(seq_len, self.block_size, self.max_in_flight_tokens,
                                            at_most_own=True)
        return self.blocks // (held + self.state_blocks_per_request)

    def _groups_lines(self) -> list[str]:
        """The KV cache groups, for a model with a window group (no line otherwise)."""
        layout = self.groups
        if not layout.window_groups:
            return []
        return [f"KV groups       {layout.describe()} (a block is one group's page)"]

    def describe(self) -> str:
        """A multi-line human summary; every byte figure names its unit (GB and GiB)."""
        m, g = self.model, self.gpu
        tp = f" x{self.tensor_parallel_size}" if self.tensor_parallel_size > 1 else ""

        def both(n: int) -> str:
            return f"{format_bytes(n, 'GB')} = {format_bytes(n, 'GiB')}"

        if self.pinned:
            return "\n".join([
                f"model           {m.name} ({m.attention_kind.upper()}, {m.kv_layers} KV layers, "
                f"KV in {self.kv_dtype})",
                f"pool            pinned to {self.vllm_blocks:,} blocks as vLLM logs them "
                f"({self.log_tokens:,} tokens), {self.blocks:,} usable",
                f"KV pool         {both(self.kv_bytes)}",
                f"KV per token    {self.kv_bytes_per_token:,} B = "
                f"{format_bytes(self.kv_bytes_per_token, 'KiB', 1)}",
                f"block           {self.block_size} tokens = {self.block_bytes:,} B",
            ] + self._groups_lines() + [
                f"tokens          {self.tokens:,}",
            ])
        return "\n".join([
            f"model           {m.name} ({m.attention_kind.upper()}, {m.kv_layers} KV layers, "
            f"KV in {self.kv_dtype})",
            f"gpu             {g.name}{tp}: {both(g.memory_bytes * self.tensor_parallel_size)}, "
            f"gpu_memory_utilization {self.gpu_memory_utilization:g}",
            f"usable          {both(self.usable_bytes)}",
            f"weights         {both(self.weight_bytes)}",
            f"activations     {both(self.activation_bytes)}" + (
                f" (profiling peak {format_bytes(self.peak_activation_bytes, 'GiB')} + "
                f"non-torch {format_bytes(self.non_torch_bytes, 'GiB')})"
                if self.peak_activation_bytes else ""),
            f"KV pool         {both(self.kv_bytes)}",
            f"KV per token    {self.kv_bytes_per_token:,} B = "
            f"{format_bytes(self.kv_bytes_per_token, 'KiB', 1)} = "
            f"{format_bytes(self.kv_bytes_per_token, 'MB', 3)}",
            f"block           {self.block_size} tokens = {self.block_bytes:,} B = "
            f"{format_bytes(self.block_bytes, 'MiB', 2)}",
        ] + self._groups_lines() + [
            f"blocks          {self.blocks:,}" + (
                f" usable ({self.vllm_blocks:,} in vLLM's log, one kept as the null block)"
                if self.null_blocks else ""),
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
    """Smallest tensor-parallel size (one that splits the model, up to 64) that leaves one block."""
    for tp in range(1, 65):
        if model.tensor_parallel_problem(tp) is not None:
            continue
        num, den = _tp_kv_factor(model, tp)
        block = model.kv_bytes_per_token(kv_dtype) * num // den * block_size
        if round(gpu.memory_bytes * tp * util) - weight_bytes - activation_per_gpu * tp >= block:
            return tp
    return None


def peak_activation_bytes(model: ModelSource, *, max_num_batched_tokens: int, max_num_seqs: int,
                          tensor_parallel_size: int = 1) -> int:
    """Peak activation memory of vLLM's profiling run, per GPU (an estimate).

    vLLM measures it by running one forward pass of ``max_num_batched_tokens``
    dummy tokens and one sampler pass over ``max_num_seqs`` rows. kvsim counts
    the widest tensors alive at once: per token the MLP's gate/up output and
    activation (3 x ``intermediate_size``, split by tensor parallelism) and two
    hidden-size buffers, in 16 bits; plus fp32 logits of the vocabulary per
    sequence. For Llama-3.1-8B on an H100 (8,192 tokens, 1,024 sequences) that
    is 1.27 GiB; vLLM logs print "PyTorch activation peak memory takes
    1.19-1.24GiB" for that server. For mixture-of-experts models the config's
    ``intermediate_size`` (its dense layers or one expert) stands in for the
    MLP width.

    How the peak depends on ``max_model_len`` (per version): only through the
    tokens profiled. vLLM V1 profiles ``max_num_batched_tokens`` tokens
    (``profile_run`` in vllm/v1/worker/gpu_model_runner.py); with chunked prefill
    (V1's default) that is 8,192 or 2,048 whatever ``max_model_len`` is, and
    without it the budget is at least ``max_model_len``
    (:func:`~kvsim.model.vllm_defaults.max_num_batched_tokens_default`), so the
    peak grows with the context. vLLM V0 before chunked prefill was its default
    (0.6.x, contexts up to 32K) profiled ``max(max_model_len, 2048)`` tokens too:
    published logs at 20,000 and 29,000 tokens (vLLM issue #10517) show the
    peak growing by 0.92 GiB for 9,000 more tokens, about 7 % more per token
    than this count, so kvsim's pool at those contexts is 3-7 % too large
    (``benchmarks/startup_logs.py`` prints the table).
    """
    spec = get_model(model)
    tp = check_int("tensor_parallel_size", tensor_parallel_size, min=1, max=1024)
    tokens = check_int("max_num_batched_tokens", max_num_batched_tokens, min=1)
    seqs = check_int("max_num_seqs", max_num_seqs, min=1)
    inter = spec.intermediate_size or (8 * spec.hidden_size) // 3
    per_token = (3 * inter // tp + 2 * spec.hidden_size) * ACTIVATION_BYTES
    vocab = spec.vocab_size or 0
    return tokens * per_token + seqs * (vocab // tp) * SAMPLER_LOGIT_BYTES


def kv_budget(gpu: GPUSpec | str, model: ModelSource, *, gpu_memory_utilization: float,
              kv_dtype: str | None = None,
              block_size: int = 16, activation_bytes: int | None = None,
              weight_bytes: int | None = None, tensor_parallel_size: int = 1,
              max_num_batched_tokens: int | None = None, max_num_seqs: int | None = None,
              engine: str = "v1", usage_context: str = "server",
              async_scheduling: bool | None = None) -> KVBudget:
    """The KV pool left on ``gpu`` for ``model`` at ``gpu_memory_utilization``.

    ``gpu`` is a :class:`~kvsim.model.hardware.GPUSpec` or preset name; ``model`` a
    spec, preset name or ``config.json`` path. ``weight_bytes`` defaults to
    ``model.weight_bytes``. ``activation_bytes`` (everything but weights and
    KV: activations, CUDA context, buffers) defaults to vLLM's profiling peak
    for the batch limits (``max_num_batched_tokens`` and ``max_num_seqs``,
    by default vLLM's for this GPU class, ``usage_context`` and ``engine``)
    plus the non-PyTorch memory of every GPU. ``engine="v1"`` keeps one block
    aside as the null block, as vLLM V1 does, and cuts a model with sliding-window
    layers into its hybrid allocator's KV cache groups (:mod:`kvsim.model.kv_groups`);
    ``async_scheduling`` (default: vLLM's for the engine at the current release) and
    ``max_num_batched_tokens`` give the tokens in flight a window group's admission cap
    allows for.
    Raises :class:`KvsimError` when weights and activations do not leave room
    for a single block, saying both figures and the least utilisation that
    would. Explained in chapter 1, *Bytes per token and capacity*.
    """
    gpu = get_gpu(gpu)
    model = get_model(model)
    util = check_gpu_memory_utilization(gpu_memory_utilization)
    kv_dtype = _resolve_kv_dtype(model, kv_dtype)
    if isinstance(block_size, bool) or block_size not in BLOCK_SIZES:
        raise KvsimError(f"block_size={block_size!r} is not valid: expected one of "
                         f"{', '.join(map(str, BLOCK_SIZES))}")
    block_size = int(block_size)
    check_choice("engine", engine, ENGINES)
    check_choice("usage_context", usage_context, USAGE_CONTEXTS)
    tp = model.check_tensor_parallel_size(tensor_parallel_size)
    if weight_bytes is None:
        weight_bytes = model.weight_bytes
    weight_bytes = check_int("weight_bytes", weight_bytes, min=0)
    peak = non_torch = 0
    tokens_default, seqs_default = batch_defaults(gpu, usage_context, engine)
    in_flight = _max_in_flight_tokens(engine, max_num_batched_tokens or tokens_default,
                                      async_scheduling)
    if activation_bytes is None:
        peak = tp * peak_activation_bytes(
            model, max_num_batched_tokens=max_num_batched_tokens or tokens_default,
            max_num_seqs=max_num_seqs or seqs_default, tensor_parallel_size=tp)
        non_torch = tp * NON_TORCH_BYTES
        activation_bytes = peak + non_torch
    activation_bytes = check_int("activation_bytes", activation_bytes, min=0)

    mem_total = gpu.memory_bytes * tp
    usable = round(mem_total * util)
    layout, per_token, block_bytes = _block_layout(model, engine, kv_dtype, tp, block_size)
    null_blocks = 1 if engine == "v1" else 0
    kv_bytes = usable - weight_bytes - activation_bytes
    if kv_bytes < block_bytes * (1 + null_blocks):
        fixed = weight_bytes + activation_bytes
        least = _least_utilisation(mem_total, fixed + block_bytes * (1 + null_blocks))
        if least is None:
            tp_fit = _least_tp(gpu, model, util, kv_dtype, block_size, weight_bytes,
                               activation_bytes // tp)
            more = f"tensor_parallel_size >= {tp_fit} at this utilisation" if tp_fit else "more GPUs"
            hint = (f"no gpu_memory_utilization in (0, 1] fits on {tp} x {gpu.name}: expected "
                    f"{more}, a larger GPU or smaller weights")
        else:
            hint = f"expected gpu_memory_utilization >= {least:.2f}"
        what = ("leaves no KV memory" if kv_bytes <= 0 else
                f"leaves {format_bytes(kv_bytes, 'GB')}, less than "
                f"{'two blocks' if null_blocks else 'one block'} of "
                f"{format_bytes(block_bytes, 'MB')}")
        raise KvsimError(
            f"gpu_memory_utilization={util:g} {what} for {model.name} on {tp} x {gpu.name}: "
            f"usable {format_bytes(usable, 'GB')} vs weights {format_bytes(weight_bytes, 'GB')} "
            f"+ activations {format_bytes(activation_bytes, 'GB')} = "
            f"{format_bytes(fixed, 'GB')}; {hint}")
    vllm_blocks = kv_bytes // block_bytes
    blocks = vllm_blocks - null_blocks
    return KVBudget(gpu=gpu, model=model, gpu_memory_utilization=util, kv_dtype=kv_dtype,
                    block_size=block_size, tensor_parallel_size=tp, usable_bytes=usable,
                    weight_bytes=weight_bytes, activation_bytes=activation_bytes,
                    kv_bytes=kv_bytes, kv_bytes_per_token=per_token, block_bytes=block_bytes,
                    blocks=blocks, tokens=blocks // len(layout.groups) * block_size,
                    vllm_blocks=vllm_blocks, null_blocks=null_blocks, peak_activation_bytes=peak,
                    non_torch_bytes=non_torch, engine=engine, layout=layout,
                    max_in_flight_tokens=in_flight)


def _block_layout(model: ModelSpec, engine: str, kv_dtype: str, tp: int,
                  block_size: int) -> tuple[KVLayout, int, int]:
    """``(KV cache groups, KV bytes per token of every layer, bytes of one block)`` on ``tp``
    GPUs: a block is one group's page, ``group_size`` layers of ``block_size`` tokens."""
    layout = model.kv_layout(hybrid_allocator=engine == "v1")
    num, den = _tp_kv_factor(model, tp)
    per_layer = model.kv_bytes_per_token_per_layer(kv_dtype) * num // den
    return layout, per_layer * model.kv_layers, per_layer * layout.group_size * block_size


def _max_in_flight_tokens(engine: str, max_num_batched_tokens: int,
                          async_scheduling: bool | None) -> int:
    """vLLM's ``max_in_flight_tokens``: one step's tokens per batch that may be in flight (two
    batches with asynchronous scheduling, no pipeline parallelism)."""
    if async_scheduling is None:
        async_scheduling = async_scheduling_default(engine, VLLM_VERSION_DEFAULT)
    return (2 if async_scheduling else 1) * max_num_batched_tokens


def _blocks_logged(base: KVBudget, tokens: int, max_model_len: int | None, vllm_version: str) -> int:
    """The blocks (null block included) of the pool whose start-up line reads ``tokens``."""
    bs = base.block_size
    if base.engine != "v1":
        if tokens % bs:
            raise KvsimError(f"kv_cache_tokens={tokens:,} is not a multiple of block_size={bs}: "
                             "expected whole blocks of tokens (check the block size)")
        return tokens // bs
    version = check_vllm_version(vllm_version)
    length = base._log_length(max_model_len)
    blocks = blocks_from_logged_tokens(version, tokens, block_size=bs, max_model_len=length,
                                       blocks_per_request=base._log_blocks_per_request(length),
                                       num_groups=len(base.groups.groups))
    if blocks is None:
        raise KvsimError(f"kv_cache_tokens={tokens:,} is not a size vLLM {version} prints for "
                         f"{base.model.name} at block_size={bs} and max_model_len={length:,}: "
                         "expected the N of your server's 'GPU KV cache size: N tokens' line "
                         "(check the block size, max_model_len and vllm_version, or pin num_gpu_blocks)")
    return blocks


def pinned_budget(gpu: GPUSpec | str, model: ModelSource, *, num_gpu_blocks: int | None = None,
                  kv_cache_tokens: int | None = None, kv_dtype: str | None = None,
                  block_size: int = 16, tensor_parallel_size: int = 1,
                  engine: str = "v1", max_model_len: int | None = None,
                  vllm_version: str = VLLM_VERSION_DEFAULT,
                  max_num_batched_tokens: int | None = None,
                  async_scheduling: bool | None = None) -> KVBudget:
    """The KV pool of a real server, pinned to what it reports instead of computed from memory.

    Give exactly one of ``num_gpu_blocks`` (usable blocks, as kvsim's
    ``simulate`` option means it) or ``kv_cache_tokens`` (vLLM's start-up line
    "GPU KV cache size: N tokens", which counts every block: V1's null block
    included, so the usable pool is one block less). From vLLM 0.23 that N is
    ``int(concurrency x max_model_len)`` (:func:`kvsim.model.vllm_defaults.logged_tokens`),
    so the server's ``max_model_len`` (by default the model's) and ``vllm_version``
    say which pool printed it (with ``max_num_batched_tokens`` and ``async_scheduling`` for
    a model with sliding-window layers, see :func:`kv_budget`). Explained in chapter 1 (*calibrating on your own server*).
    """
    if (num_gpu_blocks is None) == (kv_cache_tokens is None):
        raise KvsimError("pinned_budget needs exactly one of num_gpu_blocks or kv_cache_tokens: "
                         "expected the figure from your server's start-up log")
    base = kv_budget(gpu, model, gpu_memory_utilization=1.0, kv_dtype=kv_dtype,
                     block_size=block_size, activation_bytes=0, weight_bytes=0,
                     tensor_parallel_size=tensor_parallel_size, engine=engine,
                     max_num_batched_tokens=max_num_batched_tokens,
                     async_scheduling=async_scheduling)
    bs = base.block_size
    if kv_cache_tokens is not None:
        kv_cache_tokens = check_int("kv_cache_tokens", kv_cache_tokens,
                                    min=(1 + base.null_blocks) * bs, max=10**12)
        blocks = _blocks_logged(base, kv_cache_tokens, max_model_len, vllm_version) - base.null_blocks
    else:
        blocks = check_num_gpu_blocks(num_gpu_blocks)
    total = blocks + base.null_blocks
    kv_bytes = total * base.block_bytes
    return KVBudget(gpu=base.gpu, model=base.model, gpu_memory_utilization=1.0,
                    kv_dtype=base.kv_dtype, block_size=bs,
                    tensor_parallel_size=base.tensor_parallel_size, usable_bytes=kv_bytes,
                    weight_bytes=0, activation_bytes=0, kv_bytes=kv_bytes,
                    kv_bytes_per_token=base.kv_bytes_per_token, block_bytes=base.block_bytes,
                    blocks=blocks, tokens=blocks // len(base.groups.groups) * bs,
                    vllm_blocks=total, null_blocks=base.null_blocks, engine=engine, pinned=True,
                    layout=base.layout, max_in_flight_tokens=base.max_in_flight_tokens)
