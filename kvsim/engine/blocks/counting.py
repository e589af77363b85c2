"""Tokens to blocks: the one block arithmetic of the engine.

A request that stores ``tokens`` tokens of KV holds ``ceil(tokens / block_size)``
blocks (vLLM's ``cdiv``); its next token starts a new block when ``tokens`` is a
multiple of the block size. Every other module of the engine asks these two
functions (or :class:`kvsim.engine.blocks.manager.KVCacheManager`, which asks
them); a test (tests/test_layers.py) checks that no engine module outside
:mod:`kvsim.engine.blocks` divides by a block size itself.
"""
from __future__ import annotations

from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from kvsim.units import cdiv

__all__ = ["blocks_for", "block_position", "skipped_blocks", "request_blocks"]


@overload
def blocks_for(tokens: int, block_size: int) -> int: ...
@overload
def blocks_for(tokens: NDArray[np.integer[Any]], block_size: int) -> NDArray[np.integer[Any]]: ...
def blocks_for(tokens: int | NDArray[np.integer[Any]],
               block_size: int) -> int | NDArray[np.integer[Any]]:
    """Blocks that ``tokens`` tokens of KV fill (an int, or an array of counts)."""
    return cdiv(tokens, block_size)


@overload
def block_position(tokens: int, block_size: int) -> int: ...
@overload
def block_position(tokens: NDArray[np.integer[Any]], block_size: int) -> NDArray[np.integer[Any]]: ...
def block_position(tokens: int | NDArray[np.integer[Any]],
                   block_size: int) -> int | NDArray[np.integer[Any]]:
    """Where the next token lands in its block: 0 when it starts a new one (a floor
    modulo, so a negative ``tokens``, an offset from a step counter, works too)."""
    return tokens % block_size


def skipped_blocks(processed: int, window: int, block_size: int) -> int:
    """Blocks wholly before a sliding window once ``processed`` tokens are processed: the
    window's first token is ``max(0, processed - window + 1)`` (vLLM 0.34's
    ``SlidingWindowManager.get_num_skipped_tokens``; ``remove_skipped_blocks`` frees them)."""
    return max(0, processed - window + 1) // block_size


@overload
def request_blocks(tokens: int, block_size: int, groups: int, window_groups: int,
                   window_cap: int) -> int: ...
@overload
def request_blocks(tokens: NDArray[np.integer[Any]], block_size: int, groups: int,
                   window_groups: int, window_cap: int) -> NDArray[np.integer[Any]]: ...
def request_blocks(tokens: int | NDArray[np.integer[Any]], block_size: int, groups: int,
                   window_groups: int, window_cap: int) -> int | NDArray[np.integer[Any]]:
    """Blocks a request of ``tokens`` tokens is admitted with over ``groups`` KV cache groups:
    ``ceil(tokens / bs)`` in each, but at most ``window_cap`` in each of the ``window_groups``
    (vLLM's ``max_admission_blocks_per_request``; 0 window groups: every group holds all)."""
    full = cdiv(tokens, block_size)
    if not window_groups:
        return full * groups
    capped = min(full, window_cap) if isinstance(full, int) else np.minimum(full, window_cap)
    return full * (groups - window_groups) + capped * window_groups
