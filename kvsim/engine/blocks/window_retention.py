"""Sliding-window layers and the prefix cache: which window blocks stay cached, what they hit.

vLLM V1 (0.34.0, vllm/v1/core/single_type_kv_cache_manager.py, kv_cache_coordinator.py,
block_pool.py) keeps a sliding-window group's prefix cache sparse:

* **What a window group's hit needs.** A request may resume at ``h`` blocks only if the
  blocks of the last ``window - 1`` tokens before ``h`` are cached: ``need =
  ceil((window - 1) / bs)`` contiguous cached blocks ending at ``h`` (or every block from the
  first one, when ``h <= need``). ``SlidingWindowManager.find_longest_cache_hit`` scans from
  the right (``max_length // bs`` blocks) and stops at the first run of ``need`` cached
  blocks; with none, the run that starts at block 0 is the hit (:func:`window_hit_blocks`).
* **Which blocks get a hash** (``cache_blocks`` masks them with
  ``SlidingWindowManager.reachable_block_mask``, ``BlockPool.cache_full_blocks`` skips the
  masked ones): ``prefix_cache_retention_interval`` ``None`` ("dense", vLLM's default before
  0.29) hashes every full block; ``N > 0`` hashes the ``need`` blocks that end each
  ``N``-token segment; ``0`` (the default from 0.29) only the ``need`` blocks that end at
  each *reachable boundary*: the replay boundary ``num_prompt_tokens - 1``
  (``replay_boundaries``, without EAGLE) and a shared-prefix junction the coordinator
  detected (``shared_prefix_boundary``), each floored to the block
  (:func:`retained_window_blocks`). Full-attention groups hash every full block.
* **What happens to them when freed.** ``BlockPool.free_blocks`` appends a freed block that
  carries a hash to the free queue's tail (it stays findable until reused, LRU) and
  prepends one without (reused first). So the blocks a window group gives back as the window
  moves (``remove_skipped_blocks``, last block first) and those it still holds when the
  request finishes or is preempted (``free``, last block first) keep their hash exactly when
  the mask gave them one; the rest are reused first.
* **The hit every group agrees on** (``HybridKVCacheCoordinator.find_longest_cache_hit``,
  one pass when the model is one full-attention kind and one other kind, full attention
  first): the full group's longest run ``L``, then the window group's hit within ``L``; the
  request's hit is the smaller, and when the window group stops short of ``L`` the junction
  ``L`` becomes the request's ``shared_prefix_boundary`` (``KVCacheManager.get_computed_blocks``),
  so the window group keeps the blocks that end there for the next request
  (:func:`agreed_hit_blocks`). A model whose every layer slides is one group
  (``UnitaryKVCacheCoordinator``): no junction.

The rules here are on block indices; :mod:`kvsim.engine.blocks.window_cache` runs them
block by block in the engine.

Legend: ``bs`` block size; ``need`` the contiguous cached blocks a window group's hit
needs; ``h`` a hit, in blocks; ``L`` the full group's hit, in blocks.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from kvsim.errors import KvsimError
from kvsim.units import cdiv

__all__ = ["DENSE", "window_hit_need", "replay_boundary", "retained_window_blocks",
           "window_hit_blocks", "agreed_hit_blocks", "check_retention_interval"]

#: kvsim's spelling of vLLM's ``prefix_cache_retention_interval=None``: every full block of a
#: window group is hashed (its default before 0.29).
DENSE: Final = "dense"


def window_hit_need(window: int, block_size: int) -> int:
    """Contiguous cached blocks a window group's hit needs: the window less one token, in
    blocks (``SlidingWindowManager._contiguous_blocks_for_hit`` without EAGLE)."""
    return cdiv(window - 1, block_size)


def replay_boundary(num_prompt_tokens: int) -> int:
    """Where a later request replaying a prompt can resume: its last token is recomputed for
    the logits, so ``num_prompt_tokens - 1`` (``replay_boundaries`` without EAGLE)."""
    return num_prompt_tokens - 1


def retained_window_blocks(start_block: int, end_block: int, *, window: int, block_size: int,
                           retention_interval: int | str,
                           boundaries: Sequence[int] = ()) -> list[bool] | None:
    """Which of a window group's full blocks ``start_block .. end_block - 1`` get a hash when
    they are cached (True: hashed, findable once freed); None: all of them.

    ``boundaries`` are token positions a later request can resume at (the replay boundary,
    a shared-prefix junction). vLLM's cache-hit alignment is one block here (every group
    has kvsim's block size), so a boundary is floored to its block and ``reachable_block_mask``'s
    segment tails cover every block when the retention is dense.
    """
    need = window_hit_need(window, block_size)
    if retention_interval == DENSE:
        return None
    assert isinstance(retention_interval, int)
    mask = [False] * (end_block - start_block)
    if retention_interval > 0:
        per_segment = retention_interval // block_size
        if need >= per_segment:
            return None
        for i in range(start_block, end_block):
            if i % per_segment >= per_segment - need:
                mask[i - start_block] = True
    for tokens in boundaries:
        end = tokens // block_size
        for j in range(max(start_block, end - need), min(end_block, end)):
            mask[j - start_block] = True
    return mask


def window_hit_blocks(cached: Callable[[int], bool], max_blocks: int, need: int) -> int:
    """A window group's hit, in blocks, among the first ``max_blocks`` (``cached(i)``: block
    ``i`` is findable): the first run of ``need`` cached blocks from the right ends it; with
    none, the run of cached blocks from block 0 (``SlidingWindowManager.find_longest_cache_hit``)."""
    run = 0
    for i in range(max_blocks - 1, -1, -1):
        if cached(i):
            run += 1
            if run >= need:
                return i + run
        else:
            run = 0
    return run


def agreed_hit_blocks(full_hit: int | None, window_cached: Callable[[int], bool],
                      max_blocks: int, need: int) -> tuple[int, int]:
    """The hit every group agrees on, in blocks, and the junction the window group should keep
    (0: none): ``full_hit`` is the full-attention group's longest run (None: the model has no
    full group), the window group's hit is then sought within it (one pass of
    ``HybridKVCacheCoordinator.find_longest_cache_hit``; ``KVCacheManager.get_computed_blocks``
    pins ``full_hit`` as the junction when the window group stops short of it)."""
    if full_hit is None:
        return window_hit_blocks(window_cached, max_blocks, need), 0
    limit = min(full_hit, max_blocks)
    hit = window_hit_blocks(window_cached, limit, need)
    return hit, (limit if hit < limit else 0)


def check_retention_interval(value: int | str, *, block_size: int, window_groups: int) -> None:
    """vLLM's checks of ``prefix_cache_retention_interval`` (``_validate_prefix_cache_retention_interval``):
    a positive interval is a multiple of the block size (the scheduler's) and needs a
    sliding-window group; one line names what is wrong."""
    if value == DENSE or value == 0:
        return
    assert isinstance(value, int)
    if not window_groups:
        raise KvsimError(f"prefix_cache_retention_interval={value} has no effect on a model "
                         "without sliding-window layers: expected 0 or 'dense' (vLLM refuses a "
                         "positive interval there)")
    if value % block_size:
        raise KvsimError(f"prefix_cache_retention_interval={value} is out of range: expected "
                         f"0, 'dense' or a positive multiple of block_size={block_size}")
