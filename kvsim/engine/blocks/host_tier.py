"""The host-memory KV tier: vLLM V1's native ``OffloadingConnector`` (``--kv-offloading-size``).

Explained in chapter 3, *Swap versus recompute*, and in ``docs/research/kv-tiers.md``
(what vLLM 0.34.0 does, file by file). A CPU copy of the blocks a request computes, so
that a later request, or the same one after a preemption, loads them over PCIe instead
of computing them again. What is modelled, as vLLM 0.23 and later do it:

* **Capacity**: ``floor(kv_offloading_size x 2**30 / block bytes)`` blocks, a block's
  bytes rounded up to the 4 KiB page (vllm/v1/kv_offload/cpu/spec.py; one CPU block per
  GPU block, the default ``blocks_per_chunk``).
* **What is stored, and when**: the full blocks of a request's *prompt*
  (``offload_prompt_only``, the default since 0.23), offered in the step that fills
  them and copied asynchronously during the next step (the worker defers each store
  to the start of the next step); a block is readable once its copy is done, at
  the end of that step. A block already on the CPU is not stored again, it only
  becomes recent (``prepare_store`` drops present keys).
* **Eviction**: least recently used first among the blocks whose copy is done; a
  request's blocks share its rank, its last blocks evicted before its first. A store
  that cannot find room is dropped whole (``vllm:kv_offload_allocation_failure``).
* **Preemption** (since 0.14, PR #29870): the victim's stores in flight are finished
  before its GPU blocks are reused, so it finds them when it comes back.
* **Loads**: :meth:`HostTier.lookup` gives the longest run of ready blocks after a GPU
  prefix hit; the scheduler loads them asynchronously (the request waits, holding its
  blocks, until the copy is done: :mod:`kvsim.engine.scheduler`).

The same tier is SGLang's HiCache (``enable_hierarchical_cache``, python/sglang/srt/mem_cache
in 0.5.23, its default ``write_through`` policy): sized in tokens (:func:`hicache_blocks`),
storing what SGLang's radix cache takes (each prefill chunk's blocks, and a finished
request's whole sequence), and loading a hit in the step that admits the request (the
scheduler; at least :data:`HICACHE_LOAD_BACK_THRESHOLD` tokens).

Keys name a block by its content, as the prefix cache does (:mod:`.manager`,
:meth:`KVCacheManager.block_keys`).
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence
from enum import IntEnum

from kvsim.units import cdiv

__all__ = ["HostTier", "TierOp", "PAGE_BYTES", "host_tier_blocks", "hicache_blocks",
           "HICACHE_LOAD_BACK_THRESHOLD"]

#: The page a CPU block is rounded up to (``mmap.PAGESIZE`` on the x86 and Arm servers vLLM
#: runs on: vllm/v1/kv_offload/cpu/shared_offload_region.py aligns each block to it).
PAGE_BYTES = 4096


def host_tier_blocks(size_bytes: int, block_bytes: int) -> tuple[int, int]:
    """``(blocks, bytes per block)`` of a tier of ``size_bytes``: each block page-aligned."""
    per_block = cdiv(block_bytes, PAGE_BYTES) * PAGE_BYTES
    return size_bytes // per_block, per_block


class TierOp(IntEnum):
    """What the tier's log records (``result.host_tier``'s ``op``)."""

    #: a store's copy to the host is done (one per request and step)
    STORE = 0
    #: a load's copy back to the GPU is done (one per admission that loads)
    LOAD = 1
    #: a store found no room and was dropped (vLLM's allocation failure)
    DROP = 2


#: SGLang does not load a host hit shorter than this many tokens (it recomputes them):
#: ``UnifiedRadixCache.load_back_threshold`` (python/sglang/srt/mem_cache/unified_radix_cache.py,
#: 0.5.23).
HICACHE_LOAD_BACK_THRESHOLD = 10


def hicache_blocks(device_tokens: int, ratio: float, size_gb: int, bytes_per_token: int,
                   block_size: int) -> int:
    """Blocks of SGLang's HiCache host pool (python/sglang/srt/mem_cache/pool_host/base.py,
    0.5.23): ``size_gb x 10**9 // bytes_per_token`` tokens (the GPU's own bytes per token) when
    ``--hicache-size`` is set, else ``ratio x`` the GPU pool's tokens; then whole pages (kvsim's
    blocks) plus one spare page, as SGLang sizes an independent pool."""
    tokens = size_gb * 10**9 // bytes_per_token if size_gb > 0 else int(device_tokens * ratio)
    return tokens // block_size + 1


class HostTier:
    """The CPU tier's blocks by key: ready ones in LRU order, pending stores by request.

    ``issued``: stores offered in the current step (copied during the next);
    ``in_flight``: stores being copied in the current step; both by request, in order.
    Counters: ``stored_blocks``, ``loaded_blocks``, ``allocation_failures``.
    """

    def __init__(self, capacity_blocks: int, block_bytes: int) -> None:
        self.capacity = capacity_blocks
        self.block_bytes = block_bytes
        self.ready: OrderedDict[Hashable, int] = OrderedDict()   # key -> owner, oldest first
        self.issued: dict[int, list[Hashable]] = {}
        self.in_flight: dict[int, list[Hashable]] = {}
        self.pending: set[Hashable] = set()
        self.offered: dict[int, int] = {}     # blocks of each request's prompt offered so far
        self.stored_blocks = self.loaded_blocks = self.allocation_failures = 0

    @property
    def used(self) -> int:
        """Blocks the tier holds: ready ones and those being stored."""
        return len(self.ready) + len(self.pending)

    # ------------------------------------------------------------------ stores
    def offer(self, rid: int, keys: Sequence[Hashable]) -> int:
        """``rid``'s newly filled blocks: the missing ones are stored (copied in the next step),
        present ones become recent; with no room for all of them, none is stored. Returns how
        many blocks a dropped store asked for (0: nothing was dropped)."""
        ready, pending = self.ready, self.pending
        new = [k for k in keys if k not in ready and k not in pending]
        for k in keys:
            if k in ready:
                ready.move_to_end(k)
        if not new:
            return 0
        short = self.used + len(new) - self.capacity
        # NOTE(host-tier-loads-unpinned): vLLM does not evict a block while a load reads it;
        # kvsim's loads copy at admission in its books, so any ready block may be evicted.
        # NOTE(hicache-host-eviction): SGLang evicts only host-only leaves of its tree (blocks
        # the GPU no longer holds); kvsim evicts the least recently used, whichever they are
        if short > 0:
            if short > len(ready):            # not enough whose copy is done to evict
                self.allocation_failures += 1
                return len(new)
            for _ in range(short):
                ready.popitem(last=False)
        self.issued.setdefault(rid, []).extend(new)
        pending.update(new)
        return 0

    def end_step(self) -> list[tuple[int, int]]:
        """A step ended: the copies it made are done, the stores it issued start copying.
        Returns the copies done, ``(request, blocks)``: one per request, as vLLM's worker
        runs one store job per request and step."""
        # NOTE(host-tier-store-in-a-step): a store's copy is done within the step after it is
        # issued, whatever its size; vLLM's copy can take longer (its completion is reported)
        done = [(rid, len(keys)) for rid, keys in self.in_flight.items()]
        for rid, keys in self.in_flight.items():
            self._make_ready(rid, keys)
        self.in_flight, self.issued = self.issued, {}
        return done

    def flush(self, rid: int) -> list[int]:
        """``rid`` is preempted: its stores are finished before its GPU blocks are reused.
        Returns the blocks of each store it finished."""
        # NOTE(host-tier-free-flush): vLLM's worker blocks until those copies are done (a few
        # blocks' copy time in that step); kvsim finishes them at no cost
        done = []
        for queue in (self.in_flight, self.issued):
            keys = queue.pop(rid, None)
            if keys:
                self._make_ready(rid, keys)
                done.append(len(keys))
        return done

    def _make_ready(self, rid: int, keys: list[Hashable]) -> None:
        ready = self.ready
        for k in keys:
            self.pending.discard(k)
            ready[k] = rid
        self.stored_blocks += len(keys)
        self._rank(keys)

    def _rank(self, keys: Sequence[Hashable]) -> None:
        """The request's blocks become the most recent, its last ones the first to go."""
        ready = self.ready
        for k in reversed(keys):
            if k in ready:
                ready.move_to_end(k)

    def forget(self, rid: int) -> None:
        """``rid`` finished or was preempted: its next admission offers its prompt again."""
        self.offered.pop(rid, None)

    # ------------------------------------------------------------------- loads
    def lookup(self, keys: Sequence[Hashable]) -> int:
        """How many of ``keys``, from the first, are ready on the CPU (the first miss stops)."""
        ready = self.ready
        n = 0
        for k in keys:
            if k not in ready:
                break
            n += 1
        return n

    def load(self, keys: Sequence[Hashable]) -> None:
        """``keys`` are copied back to the GPU: a load counts as a use (LRU)."""
        self._rank(keys)
        self.loaded_blocks += len(keys)
