"""The KV layer: the only place that counts KV blocks.

Explained in chapter 2, *Optimistic admission and preemption* (blocks on
demand) and chapter 3, *Swap versus recompute* (what the prefix cache rescues).

* :mod:`.counting`: tokens to blocks, the one block arithmetic;
* :mod:`.pool`: the free-block queue and the prefix cache (vLLM's ``BlockPool``);
* :mod:`.manager`: per-request block tables, what the scheduler asks
  (vLLM's ``KVCacheManager``);
* :mod:`.decode_group`: the decoding requests' blocks in closed form;
* :mod:`.window_frees`: the blocks their sliding windows free, in closed form;
* :mod:`.window_retention`, :mod:`.block_queue`, :mod:`.window_cache`: sliding windows with
  the prefix cache on, block by block.
"""
from __future__ import annotations

from .counting import block_position, blocks_for
from .decode_group import IN_DECODE_GROUP, DecodeGroup
from .manager import KVCacheManager
from .pool import BlockPool, Hit
from .window_cache import WindowCacheManager

__all__ = ["BlockPool", "DecodeGroup", "Hit", "IN_DECODE_GROUP", "KVCacheManager", "WindowCacheManager", "blocks_for",
           "block_position"]
