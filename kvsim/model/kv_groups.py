"""vLLM V1's KV cache groups: which layers share a block table, and how big a block is.

Explained in chapter 1, *Bytes per token and capacity*.

vLLM V1's hybrid allocator (on by default) gives every kind of attention layer
its own block tables: full-attention layers hold every token, sliding-window
layers only their window. It buckets the layers by kind and cuts the buckets
into groups of equal size, so that one block (one group's page) has the same
bytes in every group and all groups draw from one pool
(vllm/v1/core/kv_cache_planning.py at 0.34.0, ``_get_kv_cache_groups_uniform_page_size``
and ``get_kv_cache_config_from_groups``):

* the group size is the smallest bucket's layer count, or the largest's when
  that is under 1.5 times the smallest; a bucket of ``n`` layers makes
  ``cdiv(n, group_size)`` groups (the last one padded);
* a block is ``group_size`` layers' page; the pool has ``kv_bytes // block_bytes``
  of them, one kept aside as the null block.

A model whose layers are all of one kind is one group of all its layers (Mistral-7B
v0.1, every layer sliding, is one sliding-window group); Gemma-2-9B (21 full, 21
sliding) is two groups of 21 layers, so its blocks are half the all-layer block
and its pool has twice as many.

NOTE(kv-groups-full-context-kinds): Llama 4's chunked-local layers and the
attention layers of stateful hybrids (Mamba, linear attention) keep one group of
every KV layer charged the full context, as kvsim did before: vLLM gives them
their own managers (``ChunkedLocalAttentionManager``, ``MambaManager``) with
rules kvsim does not model. vLLM V0 (one block table per sequence) is one group
too.
"""
from __future__ import annotations

from dataclasses import dataclass

from kvsim.units import cdiv

__all__ = ["KVGroup", "KVLayout", "kv_layout"]


@dataclass(frozen=True)
class KVGroup:
    """One KV cache group: ``layers`` layers of one kind (fewer than the layout's group size
    when vLLM pads the group); ``window`` is None for full attention, else the
    sliding window in tokens."""

    layers: int
    window: int | None = None

    @property
    def kind(self) -> str:
        return "full" if self.window is None else "sliding"


@dataclass(frozen=True)
class KVLayout:
    """The groups of a model's KV layers and the layers one block holds (``group_size``)."""

    groups: tuple[KVGroup, ...]
    group_size: int

    @property
    def full_groups(self) -> int:
        return sum(g.window is None for g in self.groups)

    @property
    def window_groups(self) -> int:
        return len(self.groups) - self.full_groups

    @property
    def window(self) -> int | None:
        """The sliding window of the window groups (None: no window group)."""
        return next((g.window for g in self.groups if g.window is not None), None)

    def admission_blocks(self, max_model_len: int, block_size: int, max_in_flight_tokens: int,
                         *, at_most_own: bool = False) -> int:
        """Blocks one request of ``max_model_len`` tokens may need, summed over the groups: a
        full group ``cdiv(max_model_len, bs)``, a window group its admission cap
        ``cdiv(min(window - 1 + max_in_flight_tokens, max_model_len), bs) + 1``
        (``SlidingWindowSpec.max_admission_blocks_per_request``, vLLM 0.20 and later): what the
        start-up log's concurrency divides by. ``at_most_own`` caps a window group at the
        request's own ``cdiv(max_model_len, bs)`` (a request never holds more blocks than its
        tokens fill)."""
        full = cdiv(max_model_len, block_size)
        total = 0
        for g in self.groups:
            if g.window is None:
                total += full
            else:
                cap = window_admission_cap(g.window, max_model_len, block_size,
                                           max_in_flight_tokens)
                total += min(cap, full) if at_most_own else cap
        return total

    def describe(self) -> str:
        """``"2 groups of 21 layers: full, sliding window 4,096"``."""
        kinds = ", ".join("full" if g.window is None else f"sliding window {g.window:,}"
                          for g in self.groups)
        n = len(self.groups)
        return (f"{n} group{'s' if n > 1 else ''} of {self.group_size} layer"
                f"{'s' if self.group_size > 1 else ''}: {kinds}")


def window_admission_cap(window: int, max_model_len: int, block_size: int,
                         max_in_flight_tokens: int) -> int:
    """The most blocks a window group counts for one request at admission (vLLM's
    ``max_admission_blocks_per_request``): the window less one, plus the tokens that may be in
    flight, never more than the context, in blocks, plus one for a window straddling a
    block boundary."""
    return cdiv(min(window - 1 + max_in_flight_tokens, max_model_len), block_size) + 1


def kv_layout(kv_layers: int, sliding_window_layers: int, sliding_window: int | None, *,
              hybrid_allocator: bool) -> KVLayout:
    """The KV cache groups of a model with ``kv_layers`` KV layers, ``sliding_window_layers`` of
    them sliding over ``sliding_window`` tokens. ``hybrid_allocator=False`` (vLLM V0, chunked-local
    or stateful models: NOTE(kv-groups-full-context-kinds)) gives one full group of every layer."""
    if not hybrid_allocator or not sliding_window_layers or sliding_window is None:
        return KVLayout((KVGroup(kv_layers),), kv_layers)
    full = kv_layers - sliding_window_layers
    if full == 0:
        return KVLayout((KVGroup(kv_layers, sliding_window),), kv_layers)
    buckets = [(full, None), (sliding_window_layers, sliding_window)]
    smallest = min(n for n, _ in buckets)
    largest = max(n for n, _ in buckets)
    group_size = largest if largest < smallest * 1.5 else smallest
    groups: list[KVGroup] = []
    for n, window in buckets:
        count = cdiv(n, group_size)
        # vLLM deals a bucket's layers round-robin (layers[i::count]), so its groups differ by one
        groups += [KVGroup(n // count + (i < n % count), window) for i in range(count)]
    return KVLayout(tuple(groups), group_size)
