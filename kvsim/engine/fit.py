"""Requests that can never run: checked up front, each named in a one-line error.

Explained in chapter 2. A request can never run when its prompt leaves no room
for an answer in ``max_model_len``, when its longest possible prefill (a
resume after preemption: prompt + answer - 1 tokens) needs more blocks than a
request alone may hold, when guaranteed admission could never reserve it, or
when, without chunked prefill, that prefill exceeds the token budget. An
engine that admitted such a request would wait or thrash forever instead.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kvsim.errors import KvsimError
from kvsim.units import cdiv, format_bytes

from .policies import GuaranteedAdmission

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from numpy.typing import NDArray

    from .options import EngineConfig

__all__ = ["check_requests_fit"]


def check_requests_fit(cfg: EngineConfig, model_name: str,
                       prompts: Sequence[int] | NDArray[np.integer[Any]],
                       outputs: Sequence[int] | NDArray[np.integer[Any]], *, first: int = 0,
                       max_blocks: int) -> None:
    """Raise a KvsimError naming the first request (number ``first + i``) that can never run.

    ``prompts`` and ``outputs`` are arrays of token counts (outputs already
    capped at ``max_tokens``); ``max_blocks`` is the most a request alone may
    hold (the pool, less V0's watermark).
    """
    prompts = np.asarray(prompts, dtype=np.int64)
    outputs = np.asarray(outputs, dtype=np.int64)
    if len(prompts) == 0:
        return
    bs = cfg.block_size
    long = np.flatnonzero(prompts >= cfg.max_model_len)
    if long.size:
        i = int(long[0])
        raise KvsimError(f"request {first + i} has a prompt of {int(prompts[i]):,} tokens: "
                         f"expected fewer than max_model_len={cfg.max_model_len:,} "
                         f"({model_name} leaves room for at least one output token)")
    outputs = np.minimum(outputs, cfg.max_model_len - prompts)
    need = cdiv(prompts + outputs - 1, bs)       # the longest prefill a resume can need
    bad = np.flatnonzero(need > max_blocks)
    if bad.size:
        i = int(bad[0])
        p, o = int(prompts[i]), int(outputs[i])
        cap = max_blocks * bs
        blocks = cfg.num_gpu_blocks
        raise KvsimError(
            f"request {first + i} (prompt {p} + output {o} tokens) can never fit the KV pool: "
            f"it needs up to {int(need[i])} blocks of {bs} tokens but the pool has "
            f"{blocks:,} block{'s' if blocks != 1 else ''} ({max_blocks:,} usable for admission "
            f"after the watermark, {cap:,} tokens, "
            f"{format_bytes(blocks * cfg.block_bytes, 'GB')}): expected prompt + output <= "
            f"{cap:,} tokens")
    if cfg.admission == "guaranteed":
        # outputs is an int64 array (np.asarray, then np.minimum, which numpy types as Any)
        GuaranteedAdmission.check_fits(cfg, prompts, outputs, first=first)  # type: ignore[arg-type]
    if not cfg.enable_chunked_prefill:
        bad = np.flatnonzero(prompts + outputs - 1 > cfg.max_num_batched_tokens)
        if bad.size:
            i = int(bad[0])
            n = int(prompts[i] + outputs[i] - 1)
            raise KvsimError(
                f"request {first + i} (prompt {int(prompts[i])} + output {int(outputs[i])} "
                f"tokens) needs a prefill of up to {n} tokens but max_num_batched_tokens="
                f"{cfg.max_num_batched_tokens} without chunked prefill: expected "
                f"max_num_batched_tokens >= {n}, or enable_chunked_prefill=True")
