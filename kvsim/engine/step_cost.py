"""How long one engine step takes: the step-time formula, priced for one model on one GPU.

The engine prices every step here (:meth:`StepCost.plan_s`); one formula, in one place
(:class:`StepCost`): everything else (:func:`kvsim.engine.costs.recompute_time_s`,
:func:`kvsim.engine.costs.swap_time_s`, the calibration tables of
:mod:`kvsim.engine.calibration`) calls it. Its constants are the user's
:class:`kvsim.engine.cost_model.CostModel` (checked there); this module is compiled with the
engine (kvsim/engine/native.py) and takes only what the engine and the checked constants
give it. Explained in chapter 3, *Swap versus recompute*.

A step is one forward pass over a batch of ``n_tokens`` new tokens from
``n_seqs`` sequences (decodes contribute one token each, prefill chunks their
length). Its time is a sum, because a GPU runs the kernels of a forward pass
one after another (:eq:`step-time` in chapter 3)::

    step_s = cpu_s(n_seqs)                    # scheduler, input preparation, sampling
           + linear_s(n_tokens)               # the matmuls of every layer
           + elementwise_s(n_tokens)          # norms, rotary embeddings, activations, adds
           + lm_head_s(n_seqs)                # the output head, once per sequence
           + allreduce_s(n_tokens)            # tensor parallelism: two all-reduces a layer
           + attention_launch_s(n_seqs)       # a floor per attention kernel, a cost per sequence
           + attention_s(pairs, kv_tokens)    # prefill: quadratic; decode: reads the KV cache
           + swap_s                           # blocking PCIe copies (V0 swap), if any

The attention term counts what each kind of layer reads (:class:`AttentionSpan`): a
decoding sequence at context ``c`` reads, over the KV layers,

    full_layers x c + window_layers x min(c, window)          layer-tokens

and a prefill chunk's query at position ``x`` attends to ``x + 1`` keys in a full layer,
``min(x + 1, window)`` in a sliding-window layer (:func:`attention_pairs`,
:func:`window_pairs`); each layer-token costs its FLOPs and its KV bytes.

With ``async_scheduling`` (vLLM V1's overlapped engine loop) the CPU term does not add: a
step lasts the larger of ``cpu_s`` and the sum of the GPU terms (:meth:`StepCost.step_s`).

Each kernel costs ``kernel_latency_s + flops / (peak_flops x matmul_efficiency)
+ bytes / (hbm_bytes_per_s x memory_efficiency)``: compute time plus memory
time plus a launch latency, *added*, not the larger of the two. Summing is what
the measured kernels show between the two limits (a batch of 128-512 tokens
takes about the sum), and it is what makes a mixed batch cost what it costs:
a prefill chunk in a step lengthens that step for every decoding stream.

Calibration (:mod:`kvsim.engine.calibration`, ``make bench``): ``matmul_efficiency``,
``memory_efficiency`` and ``kernel_latency_s`` of each GPU preset are fitted
to measured per-layer matmul times of Vidur's profiles (A100, H100, A40;
batches of 1 to 4,096 tokens, tensor parallelism 1 to 8), one set of three
numbers per GPU for every model. The attention kernels' floor and per-sequence
cost (``attention_latency_s``, ``attention_s_per_seq_head``) are fitted to
Vidur's measured decode kernels (:mod:`kvsim.engine.attention_profiles`).
The other constants are documented below.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kvsim.errors import KvsimError
from kvsim.model.dtypes import DTYPE_BYTES
from kvsim.model.memory import kv_bytes_per_token as _kv_bytes
from kvsim.model.vllm_defaults import (
    ACTIVATION_BYTES,
    async_scheduling_default,
    vllm_version_default,
)

from .cost_model import CostModel
from .plan import EVICTED

if TYPE_CHECKING:
    from kvsim.model.hardware import GPUSpec
    from kvsim.model.spec import ModelSpec

    from .plan import StepPlan

__all__ = ["StepCost", "StepTime", "AttentionSpan", "attention_pairs", "window_pairs",
           "window_kv_tokens", "CPU_OVERHEAD", "ELEMENTWISE_KERNELS_PER_LAYER", "ELEMENTWISE_PASSES",
           "ELEMENTWISE_LATENCY_FACTOR", "ALLREDUCE_LATENCY_S"]

#: Per-step CPU time by engine mode, ``(fixed_s, per_sequence_s)``: the
#: scheduler, input preparation and sampling (and, in V0, output processing
#: and detokenisation, which V1 moves to another process and overlaps with the
#: GPU). Fitted to the medians of Vidur's measured vLLM CPU overheads
#: (``data/profiling/a100/cpu_overheads.csv``, Llama-2-7B, batches 8-64):
#: schedule + sampler + prepare inputs is about 1.0 ms + 0.038 ms per sequence,
#: and adding the output processing gives 1.2 ms + 0.100 ms per sequence.
CPU_OVERHEAD = {"v1": (1.0e-3, 38e-6), "v0": (1.2e-3, 100e-6)}

#: Element-wise kernels per decoder layer (two norms, two residual adds, the
#: rotary embedding, the MLP activation). Each moves its widths
#: ``ELEMENTWISE_PASSES`` times (a read and a write, plus the norms' extra
#: reads), and is a short kernel: half a matmul's launch latency. Both factors
#: are fitted to the same profiles' element-wise operators (about 10 % of a
#: step; :mod:`kvsim.engine.calibration` prints their errors).
ELEMENTWISE_KERNELS_PER_LAYER = 6
ELEMENTWISE_PASSES = 2.25
ELEMENTWISE_LATENCY_FACTOR = 0.5

#: Tensor-parallel all-reduce: a fixed latency per call (NCCL's small-message
#: latency within one node is a few microseconds; vLLM's custom all-reduce is
#: in the same range) plus a ring's 2 (tp - 1) / tp of the bytes over the link.
ALLREDUCE_LATENCY_S = 8e-6


@dataclass(frozen=True)
class StepTime:
    """One step's time as its named terms (Vidur's ``ExecutionTime``): :meth:`StepCost.step_parts`.

    The terms of the module docstring's formula, in seconds; :attr:`total_s` adds
    them in :meth:`StepCost.step_s`'s order, so it is that step's time to the bit.
    """

    cpu_s: float                  #: scheduler, input preparation, sampling
    linear_s: float               #: the matmuls of every layer
    elementwise_s: float          #: norms, rotary embeddings, activations, adds
    lm_head_s: float              #: the output head, once per sequence
    allreduce_s: float            #: tensor parallelism's all-reduces (0 on one GPU)
    attention_launch_s: float     #: the attention kernels' floor and per-sequence cost
    decode_attention_s: float     #: decoding sequences reading their KV
    prefill_attention_s: float    #: prefill chunks' attention
    swap_s: float                 #: blocking PCIe copies (V0 swap)
    overlapped: bool              #: asynchronous scheduling: the CPU term overlaps the GPU's
    host_load_s: float = 0.0      #: SGLang HiCache's loads, overlapped layer by layer with the rest

    @property
    def fixed_gpu_s(self) -> float:
        """The GPU's terms that do not depend on the context (:meth:`StepCost.fixed_gpu_s`)."""
        return (self.linear_s + self.elementwise_s + self.lm_head_s + self.allreduce_s
                + self.attention_launch_s)

    @property
    def gpu_s(self) -> float:
        """The GPU's terms, summed (swap copies apart)."""
        return self.fixed_gpu_s + self.decode_attention_s + self.prefill_attention_s

    @property
    def total_s(self) -> float:
        """The step's duration: the sum of every term, or with ``overlapped`` the larger of
        the CPU's and the GPU's (swap copies are V0's, which never overlaps); at least as
        long as the step's host loads (:meth:`StepCost.plan_s`)."""
        if self.overlapped:
            gpu = self.gpu_s
            total = gpu if gpu >= self.cpu_s else self.cpu_s
        else:
            total = (self.cpu_s + self.fixed_gpu_s + self.decode_attention_s
                     + self.prefill_attention_s + self.swap_s)
        return total if total >= self.host_load_s else self.host_load_s


def attention_pairs(context_before: int, chunk: int) -> int:
    """(query, key) pairs of causal attention for ``chunk`` new tokens after ``context_before``.

    The token at position x attends to x + 1 positions (itself included), so a
    chunk costs ``chunk x context_before + chunk (chunk + 1) / 2`` pairs:
    quadratic in the prompt, which is why re-prefilling a long request costs
    more than linearly. In a sliding-window layer: :func:`window_pairs`.
    """
    c, s = int(chunk), int(context_before)
    return c * s + c * (c + 1) // 2


def window_pairs(context_before: int, chunk: int, window: int) -> int:
    """:func:`attention_pairs` in a sliding-window layer: the token at position x attends to
    ``min(x + 1, window)`` positions (vLLM's FlashAttention backend passes ``window_size =
    (window - 1, 0)``: the token and the ``window - 1`` before it)."""
    start, end = int(context_before), int(context_before) + int(chunk)
    growing_end = min(end, window)             # positions x < window attend to x + 1
    pairs = growing_end * (growing_end + 1) // 2 - start * (start + 1) // 2 \
        if start < growing_end else 0
    return pairs + window * (end - max(start, window)) if end > window else pairs


def window_kv_tokens(context_before: int, chunk: int, window: int) -> int:
    """KV tokens a chunk reads in a sliding-window layer: from ``window - 1`` before its first
    token to its last (every position when the context is shorter)."""
    start = int(context_before)
    return start + int(chunk) - max(0, start + 1 - window)


class AttentionSpan:
    """What attention reads, per kind of layer: the one formula for a step's attention work.

    Full-attention layers attend to the whole context; sliding-window layers to at
    most ``window`` positions (:func:`window_pairs`). A step's attention is counted in
    *units*: one token (or one (query, key) pair) in ``unit_layers`` KV layers, the
    greatest common divisor of the two kinds' layer counts, so that every count is
    an integer and a model without windows counts plain tokens (its unit is every
    layer). A decoding request at context ``c`` attends to ``full_weight x c +
    window_weight x min(c, window)`` units (:meth:`decode_units`); Mistral-7B (every
    layer sliding) counts ``min(c, 4,096)``, Gemma-2-9B (21 full, 21 sliding) ``c +
    min(c, 4,096)`` units of 21 layers. The cost model prices a unit
    (:attr:`StepCost.decode_s_per_unit`); the scheduler, the decode runs' timing and
    the reference engine count them here.

    NOTE(chunked-local-attention): Llama 4's chunked-local layers attend within their
    chunk only; kvsim prices them over the whole context, like full layers.
    """

    __slots__ = ("window", "full_weight", "window_weight", "unit_layers", "kv_layers")

    def __init__(self, kv_layers: int, window_layers: int = 0, window: int = 0) -> None:
        if not window or not window_layers:
            window_layers, window = 0, 0
        full = kv_layers - window_layers
        unit = math.gcd(full, window_layers)     # gcd(n, 0) == n: no windows, one unit of all
        self.kv_layers, self.unit_layers, self.window = kv_layers, unit, window
        self.full_weight, self.window_weight = full // unit, window_layers // unit

    @classmethod
    def of(cls, model: ModelSpec) -> AttentionSpan:
        """The span of ``model``'s attention: its sliding-window layers (not chunked-local ones,
        NOTE(chunked-local-attention)) over ``sliding_window``, whatever the engine mode or
        admission policy.
        NOTE(sglang-llama-family-window): SGLang 0.5.23 builds Mistral-7B as a Llama
        (srt/models/llama.py passes no window to its attention), so it attends over the whole
        context there, while Gemma-2 slides (srt/models/gemma2.py); kvsim's SGLang policy
        windows both."""
        if model.chunked_window or not model.sliding_window:
            return cls(model.kv_layers)
        return cls(model.kv_layers, model.sliding_window_layers, model.sliding_window)

    def decode_units(self, context: int) -> int:
        """Units a decoding request attends to at ``context`` tokens (its new one included)."""
        w = self.window
        if not w:
            return context
        return self.full_weight * context + self.window_weight * (context if context < w else w)

    def prefill_pair_units(self, context_before: int, chunk: int) -> int:
        """(query, key) pairs of a prefill chunk, in units."""
        pairs = attention_pairs(context_before, chunk)
        if not self.window:
            return pairs
        return (self.full_weight * pairs
                + self.window_weight * window_pairs(context_before, chunk, self.window))

    def prefill_kv_units(self, context_before: int, chunk: int) -> int:
        """KV tokens a prefill chunk reads, in units."""
        if not self.window:
            return context_before + chunk
        return (self.full_weight * (context_before + chunk)
                + self.window_weight * window_kv_tokens(context_before, chunk, self.window))


class StepCost:
    """Step times for one model on one GPU (or TP group): the formula of the module docstring.

    Built once per simulation. Every time kvsim reports comes from
    :meth:`step_s` (or :meth:`fixed_s` plus ``decode_s_per_unit`` times the
    decode context, which is the same sum for a pure decode step).

    Args:
        model, gpu: a :class:`kvsim.ModelSpec` and a :class:`kvsim.GPUSpec`.
        cost: a :class:`CostModel` (overrides).
        tensor_parallel_size: GPUs sharing the model.
        kv_bytes_per_token: KV bytes a token costs the whole group.
        engine: ``"v1"`` or ``"v0"`` (decides the CPU overhead default).
        async_scheduling: vLLM V1's asynchronous scheduling: the CPU work of a step
            overlaps the GPU's, so a step lasts the longer of the two (:meth:`step_s`);
            without it the two add up. ``None``: the default of ``engine``'s newest release
            (:func:`kvsim.model.vllm_defaults.async_scheduling_default`: on for V1 from 0.14,
            off on V0); the engine passes the run's own setting.
    """

    def __init__(self, model: ModelSpec, gpu: GPUSpec, cost: CostModel | None = None, *,
                 tensor_parallel_size: int = 1, kv_bytes_per_token: int | None = None,
                 engine: str = "v1", async_scheduling: bool | None = None) -> None:
        cost = cost or CostModel()
        tp = model.check_tensor_parallel_size(tensor_parallel_size)
        if engine not in CPU_OVERHEAD:
            raise KvsimError(f"engine={engine!r} is not known: expected one of v1, v0")
        self.model, self.gpu, self.cost, self.tp = model, gpu, cost, tp
        if async_scheduling is None:
            async_scheduling = async_scheduling_default(engine, vllm_version_default(engine))
        self.async_scheduling = bool(async_scheduling)
        shape = model.compute_shape()
        self.shape = shape
        fixed_cpu, per_seq_cpu = CPU_OVERHEAD[engine]
        # step_time_scale multiplies each per-unit time below, so every part of a step
        # (and so the whole step, swap copies apart) is exactly that factor longer
        k = float(cost.step_time_scale)
        self.time_scale = k
        self.cpu_fixed_s = k * float(cost.step_overhead_s if cost.step_overhead_s is not None
                                     else fixed_cpu)
        self.cpu_per_seq_s = k * float(cost.seq_overhead_s if cost.seq_overhead_s is not None
                                       else per_seq_cpu)
        ec = cost.matmul_efficiency or gpu.matmul_efficiency
        em = cost.memory_efficiency or gpu.memory_efficiency
        self.latency_s = k * float(cost.kernel_latency_s if cost.kernel_latency_s is not None
                                   else gpu.kernel_latency_s)
        # seconds per FLOP and per byte, one GPU of the group
        self.s_per_flop = k / (gpu.peak_flops * ec)
        self.s_per_byte = k / (gpu.hbm_bytes_per_s * em)
        self.s_per_attn_flop = k / (gpu.peak_flops * cost.attention_efficiency)
        self.weight_bytes_per_param = DTYPE_BYTES[model.weight_dtype or model.dtype]
        self.pcie_bytes_per_s = float(cost.pcie_bytes_per_s or gpu.pcie_bytes_per_s)
        self.swap_copy_s = float(cost.swap_copy_overhead_s)

        kvb = int(kv_bytes_per_token if kv_bytes_per_token is not None else _kv_bytes(model))
        # attention: per (query, key) pair, 2 FLOPs for QK^T and 2 for AV per head dim
        heads_per_gpu = model.num_attention_heads / tp
        self.attn_flops_per_pair = 4.0 * model.kv_layers * heads_per_gpu * model.head_dim
        self.kv_read_bytes_per_token = kvb / tp          # the group's KV, sharded
        self.attention_kernels = model.kv_layers
        # one attention kernel per KV layer: its floor, and per scheduled sequence and KV head
        # of this GPU (tensor parallelism splits the KV heads; a GPU keeps at least one)
        self.attn_latency_s = k * float(gpu.attention_latency_s)  # type: ignore[arg-type]
        kv_heads_per_gpu = max(1, model.num_kv_heads // tp)
        self.attn_seq_s = k * float(gpu.attention_s_per_seq_head) * kv_heads_per_gpu
        #: seconds per token of decode context in every KV layer (each decoding sequence reads
        #: its KV and attends to it)
        self.decode_s_per_token = (self.attn_flops_per_pair * self.s_per_attn_flop
                                   + self.kv_read_bytes_per_token * self.s_per_byte)
        #: what each kind of layer attends to (:class:`AttentionSpan`): a step's attention is
        #: counted in its units, one token in ``span.unit_layers`` of the KV layers
        self.span = span = AttentionSpan.of(model)
        if span.unit_layers == span.kv_layers:     # every layer of one kind: a unit is a token
            self.flops_per_pair_unit = self.attn_flops_per_pair
            self.kv_read_bytes_per_unit = self.kv_read_bytes_per_token
            self.decode_s_per_unit = self.decode_s_per_token
        else:
            share = span.unit_layers / span.kv_layers
            self.flops_per_pair_unit = self.attn_flops_per_pair * share
            self.kv_read_bytes_per_unit = self.kv_read_bytes_per_token * share
            #: the slope of a pure decode step: seconds per unit of decode context
            self.decode_s_per_unit = (self.flops_per_pair_unit * self.s_per_attn_flop
                                      + self.kv_read_bytes_per_unit * self.s_per_byte)
        self._fixed: dict[tuple[int, int], float] = {}
        self._fixed_gpu: dict[tuple[int, int], float] = {}

    # ------------------------------------------------------------------ parts
    def linear_work(self, n_tokens: int) -> tuple[int, float, float]:
        """(kernels, FLOPs, bytes) of the decoder layers' matmuls for ``n_tokens`` tokens.

        Per GPU of the group: tensor parallelism splits the sharded weights,
        FLOPs and activations; replicated weights are read whole by every GPU.
        """
        s, tp, n = self.shape, self.tp, n_tokens
        expert_weights = 0.0
        if s.num_experts:
            # distinct experts a batch touches when each token picks k of E uniformly
            # NOTE(moe-uniform-routing): real routers are skewed (a batch touches fewer experts)
            touched = s.num_experts * (1.0 - (1.0 - s.experts_per_token / s.num_experts) ** n)
            expert_weights = touched * s.expert_params / tp
        flops = 2.0 * n * (s.dense_params / tp + s.replicated_params
                           + s.experts_per_token * s.expert_params / tp)
        weights = (s.dense_params / tp + s.replicated_params + expert_weights) \
            * self.weight_bytes_per_param
        act = n * (s.act_replicated + s.act_sharded / tp) * ACTIVATION_BYTES
        return s.gemms, flops, weights + act

    def linear_s(self, n_tokens: int) -> float:
        """All matmuls of the decoder layers for ``n_tokens`` tokens (one GPU of the group)."""
        kernels, flops, nbytes = self.linear_work(n_tokens)
        return kernels * self.latency_s + flops * self.s_per_flop + nbytes * self.s_per_byte

    def elementwise_s(self, n_tokens: int) -> float:
        """Norms, rotary embeddings, activations and residual adds (memory-bound)."""
        s = self.shape
        kernels = ELEMENTWISE_KERNELS_PER_LAYER * self.model.num_layers
        moved = n_tokens * (s.norm_width + s.mix_width / self.tp) * ACTIVATION_BYTES \
            * ELEMENTWISE_PASSES
        return kernels * self.latency_s * ELEMENTWISE_LATENCY_FACTOR + moved * self.s_per_byte

    def lm_head_s(self, n_seqs: int) -> float:
        """The output head: one row per sequence (vLLM computes logits only at each last token)."""
        p = self.shape.lm_head_params / self.tp
        if p == 0 or n_seqs == 0:
            return 0.0
        width = self.model.hidden_size + self.shape.lm_head_params / self.model.hidden_size / self.tp
        return (self.latency_s + 2.0 * n_seqs * p * self.s_per_flop
                + (p * self.weight_bytes_per_param + n_seqs * width * ACTIVATION_BYTES)
                * self.s_per_byte)

    def allreduce_s(self, n_tokens: int) -> float:
        """Two all-reduces of the hidden state per layer under tensor parallelism."""
        if self.tp == 1:
            return 0.0
        nbytes = n_tokens * self.model.hidden_size * ACTIVATION_BYTES
        # GPUSpec.__post_init__ replaces a None interconnect_bytes_per_s by pcie_bytes_per_s
        ring = 2.0 * (self.tp - 1) / self.tp * nbytes / self.gpu.interconnect_bytes_per_s  # type: ignore[operator]
        return self.time_scale * 2 * self.model.num_layers * (ALLREDUCE_LATENCY_S + ring)

    def cpu_s(self, n_seqs: int) -> float:
        return self.cpu_fixed_s + self.cpu_per_seq_s * n_seqs

    def attention_launch_s(self, n_seqs: int) -> float:
        """The part of the attention kernels that does not depend on the context: one kernel
        per KV layer (its launch floor) plus what each scheduled sequence adds to it per KV
        head of this GPU (the per-sequence work of a FlashAttention kernel, measured beyond
        the KV it reads; :data:`kvsim.engine.attention_profiles.ATTENTION_MEASURED`)."""
        return self.attention_kernels * (self.attn_latency_s + n_seqs * self.attn_seq_s)

    def _fixed_uncached(self, n_tokens: int, n_seqs: int) -> float:
        return self.cpu_s(n_seqs) + self.fixed_gpu_s(n_tokens, n_seqs)

    def fixed_gpu_s(self, n_tokens: int, n_seqs: int) -> float:
        """The GPU's part of :meth:`fixed_s` (memoised): what an asynchronous step overlaps
        its CPU work with."""
        key = (n_tokens, n_seqs)
        t = self._fixed_gpu.get(key)
        if t is None:
            t = self._fixed_gpu[key] = (self.linear_s(n_tokens) + self.elementwise_s(n_tokens)
                                        + self.lm_head_s(n_seqs) + self.allreduce_s(n_tokens)
                                        + self.attention_launch_s(n_seqs))
        return t

    # --------------------------------------------------------------- the step
    def fixed_s(self, n_tokens: int, n_seqs: int) -> float:
        """Everything in a step but the context-dependent attention (memoised)."""
        key = (n_tokens, n_seqs)
        t = self._fixed.get(key)
        if t is None:
            t = self._fixed[key] = self._fixed_uncached(n_tokens, n_seqs)
        return t

    def prefill_attention_s(self, pairs: int, kv_tokens: int) -> float:
        """Attention of prefill chunks: ``pairs`` (query, key) pairs, ``kv_tokens`` read, both in
        :attr:`span`'s units (:meth:`AttentionSpan.prefill_pair_units`)."""
        return pairs * self.flops_per_pair_unit * self.s_per_attn_flop \
            + kv_tokens * self.kv_read_bytes_per_unit * self.s_per_byte

    def swap_s(self, nbytes: int, copies: int) -> float:
        """Blocking swap copies inside a step: bytes over PCIe plus a fixed cost per copy."""
        if nbytes == 0 and copies == 0:
            return 0.0
        return nbytes / self.pcie_bytes_per_s + copies * self.swap_copy_s

    def transfer_s(self, nbytes: int) -> float:
        """A copy of ``nbytes`` between host and GPU memory over PCIe, in the background of
        the steps (the host tier's loads)."""
        return nbytes / self.pcie_bytes_per_s

    def step_s(self, n_tokens: int, n_seqs: int, decode_context: int = 0,
               prefill_pairs: int = 0, prefill_kv_tokens: int = 0, swap_bytes: int = 0,
               swap_copies: int = 0) -> float:
        """Duration of one step (the formula of the module docstring).

        ``decode_context``: the sum over decoding sequences of the tokens each
        attends to; ``prefill_pairs``/``prefill_kv_tokens``: the prefill
        chunks' attention pairs and the KV tokens they read. All three are in
        :attr:`span`'s units (:class:`AttentionSpan`: tokens, for a model without
        sliding windows). A pure decode step is exactly ``fixed_s(n, n) +
        decode_s_per_unit * decode_context`` (with ``async_scheduling``: the larger of
        ``fixed_gpu_s(n, n) + decode_s_per_unit * decode_context`` and ``cpu_s(n)``).
        """
        if self.async_scheduling:
            # V1's engine core schedules step N+1 and processes step N's output while the
            # GPU runs step N (vLLM PRs #19970, #23569): the step lasts the longer of the two.
            # NOTE(async-serial-remainder): the per-step synchronisation that remains (the
            # sampled tokens back to the CPU) is not charged.
            gpu = self.fixed_gpu_s(n_tokens, n_seqs) + self.decode_s_per_unit * decode_context
            if prefill_pairs or prefill_kv_tokens:
                gpu = gpu + self.prefill_attention_s(prefill_pairs, prefill_kv_tokens)
            cpu = self.cpu_s(n_seqs)
            return gpu if gpu >= cpu else cpu
        t = self.fixed_s(n_tokens, n_seqs) + self.decode_s_per_unit * decode_context
        if prefill_pairs or prefill_kv_tokens:
            t = t + self.prefill_attention_s(prefill_pairs, prefill_kv_tokens)
        if swap_bytes or swap_copies:
            t = t + self.swap_s(swap_bytes, swap_copies)
        return t

    def step_parts(self, n_tokens: int, n_seqs: int, decode_context: int = 0,
                   prefill_pairs: int = 0, prefill_kv_tokens: int = 0, swap_bytes: int = 0,
                   swap_copies: int = 0) -> StepTime:
        """:meth:`step_s`'s step as its named terms (:class:`StepTime`; ``total_s`` is
        ``step_s``). For reading and testing a term; the engine calls :meth:`step_s`."""
        prefill = self.prefill_attention_s(prefill_pairs, prefill_kv_tokens) \
            if prefill_pairs or prefill_kv_tokens else 0.0
        return StepTime(self.cpu_s(n_seqs), self.linear_s(n_tokens), self.elementwise_s(n_tokens),
                        self.lm_head_s(n_seqs), self.allreduce_s(n_tokens),
                        self.attention_launch_s(n_seqs), self.decode_s_per_unit * decode_context,
                        prefill, 0.0 if self.async_scheduling else self.swap_s(swap_bytes, swap_copies),
                        self.async_scheduling)

    def plan_s(self, plan: StepPlan) -> float:
        """Duration of one step as the scheduler planned it (a :class:`kvsim.engine.plan.StepPlan`).

        A plan that runs nothing (every candidate was evicted) lasts as long as
        its swap copies; a ``DECODE_RUN`` plan's first step is priced here too.
        """
        if plan.kind == EVICTED:
            return self.swap_s(plan.swap_out_bytes, plan.swap_copies)
        step = self.step_s(*self.step_terms(plan))
        if plan.host_load_bytes:
            # NOTE(hicache-load-overlap): SGLang copies a loaded prefix layer by layer while
            # the forward pass runs (each layer's attention waits for its copy); kvsim's step
            # lasts the larger of the two, with no per-layer wait
            load = self.transfer_s(plan.host_load_bytes)
            if load > step:
                return load
        return step

    def plan_parts(self, plan: StepPlan) -> StepTime:
        """:meth:`plan_s` as named terms: what each part of the planned step costs."""
        if plan.kind == EVICTED:
            return StepTime(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                            self.swap_s(plan.swap_out_bytes, plan.swap_copies), False)
        parts = self.step_parts(*self.step_terms(plan))
        if plan.host_load_bytes:
            return replace(parts, host_load_s=self.transfer_s(plan.host_load_bytes))
        return parts

    def prefill_s(self, tokens: int, context_before: int = 0) -> float:
        """One step that only prefills ``tokens`` tokens of one sequence after ``context_before``."""
        span = self.span
        return self.step_s(tokens, 1, prefill_pairs=span.prefill_pair_units(context_before, tokens),
                           prefill_kv_tokens=span.prefill_kv_units(context_before, tokens))

    def step_terms(self, plan: StepPlan) -> tuple[int, int, int, int, int, int, int]:
        """What :meth:`step_s` takes, for a planned step: ``(n_tokens, n_seqs, decode_context,
        prefill_pairs, prefill_kv_tokens, swap_bytes, swap_copies)`` (the plan counts its
        decode context in :attr:`span`'s units already)."""
        pairs = kv_tokens = prefill_tokens = 0
        span = self.span
        if span.window:
            for _, start, c in plan.chunks:
                pairs += span.prefill_pair_units(start, c)
                kv_tokens += span.prefill_kv_units(start, c)
                prefill_tokens += c
        else:
            for _, start, c in plan.chunks:
                pairs += attention_pairs(start, c)
                kv_tokens += start + c
                prefill_tokens += c
        decode_seqs = plan.decode_seqs
        return (decode_seqs + prefill_tokens, decode_seqs + len(plan.chunks), plan.context_tokens,
                pairs, kv_tokens, plan.swap_out_bytes + plan.swap_in_bytes, plan.swap_copies)
