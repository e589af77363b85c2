"""Requests that can never run: refused one by one, or named in a one-line error.

Explained in chapter 2. A request can never run when its prompt leaves no room
for an answer in ``max_model_len``, when its longest possible prefill (a
resume after preemption: prompt + answer - 1 tokens) needs more blocks than a
request alone may hold, when guaranteed admission could never reserve it, or
when, without chunked prefill, that prefill exceeds the token budget. An
engine that admitted such a request would wait or thrash forever instead.

With ``unfit_requests="reject"`` (the default) the scheduler refuses each such
request when it arrives and serves the rest, as a vLLM server answers a prompt
longer than ``max_model_len`` with HTTP 400 and goes on; the reason is the
request's ``rejected`` code (:data:`REJECTION_REASONS`). ``"error"`` stops the
run at the first one instead, with a one-line error naming it
(:func:`check_requests_fit`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kvsim.errors import KvsimError
from kvsim.units import format_bytes

from .blocks.counting import blocks_for, request_blocks
from .policies import GuaranteedAdmission

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from numpy.typing import NDArray

    from .options import EngineConfig

__all__ = ["check_requests_fit", "unfit_reasons", "REJECTION_REASONS"]

#: Why a request was refused: ``SimResult.requests["rejected"]`` (0: it was served).
REJECTION_REASONS = {
    1: "prompt of max_model_len tokens or more",       # vLLM: HTTP 400, before the engine
    # NOTE(unfit-pool): vLLM refuses to start when max_model_len cannot fit the pool;
    # kvsim allows small pools (the book's toys) and refuses the requests that cannot fit
    2: "can never fit the KV pool",
    3: "guaranteed admission can never reserve it",
    4: "prefill over max_num_batched_tokens without chunked prefill",
}


def _request_blocks(cfg: EngineConfig, tokens: Any) -> Any:
    """The blocks a request of ``tokens`` tokens is admitted with (a window group's at most its
    admission cap: vLLM's own bound on what one request holds)."""
    if not cfg.kv_window_groups:
        return blocks_for(tokens, cfg.block_size)
    return request_blocks(tokens, cfg.block_size, cfg.kv_cache_groups, cfg.kv_window_groups,
                          cfg.window_cap_blocks)


def _unfit_masks(cfg: EngineConfig, prompts: NDArray[np.int64], outputs: NDArray[np.int64],
                 max_blocks: int) -> list[tuple[int, NDArray[np.bool_]]]:
    """``(reason code, requests it refuses)`` for each rule, in :data:`REJECTION_REASONS`' order."""
    capped = np.minimum(outputs, np.maximum(cfg.max_model_len - prompts, 0))
    masks = [(1, prompts >= cfg.max_model_len),
             (2, _request_blocks(cfg, prompts + capped - 1) > max_blocks)]
    if cfg.reserves_answers:
        masks.append((3, GuaranteedAdmission.reservations(cfg, prompts, capped)
                      > cfg.num_gpu_blocks))
    if not cfg.enable_chunked_prefill:
        masks.append((4, prompts + capped - 1 > cfg.max_num_batched_tokens))
    return masks


def unfit_reasons(cfg: EngineConfig, prompts: Sequence[int] | NDArray[np.integer[Any]],
                  outputs: Sequence[int] | NDArray[np.integer[Any]], *,
                  max_blocks: int) -> NDArray[np.int64]:
    """Each request's :data:`REJECTION_REASONS` code, the first rule it breaks (0: it fits)."""
    p = np.asarray(prompts, dtype=np.int64)
    o = np.asarray(outputs, dtype=np.int64)
    codes = np.zeros(len(p), dtype=np.int64)
    for code, mask in reversed(_unfit_masks(cfg, p, o, max_blocks)):
        codes[mask] = code
    return codes


def check_requests_fit(cfg: EngineConfig, model_name: str,
                       prompts: Sequence[int] | NDArray[np.integer[Any]],
                       outputs: Sequence[int] | NDArray[np.integer[Any]], *, first: int = 0,
                       max_blocks: int) -> None:
    """Raise a KvsimError naming the first request (number ``first + i``) that can never run.

    ``prompts`` and ``outputs`` are arrays of token counts (outputs already
    capped at ``max_tokens``); ``max_blocks`` is the most a request alone may
    hold (the pool, less V0's watermark).
    """
    prompt_arr = np.asarray(prompts, dtype=np.int64)
    output_arr = np.asarray(outputs, dtype=np.int64)
    if len(prompt_arr) == 0:
        return
    bs = cfg.block_size
    for code, mask in _unfit_masks(cfg, prompt_arr, output_arr, max_blocks):
        bad = np.flatnonzero(mask)
        if not bad.size:
            continue
        i = int(bad[0])
        p = int(prompt_arr[i])
        o = min(int(output_arr[i]), cfg.max_model_len - p)
        if code == 1:
            raise KvsimError(f"request {first + i} has a prompt of {p:,} tokens: "
                             f"expected fewer than max_model_len={cfg.max_model_len:,} "
                             f"({model_name} leaves room for at least one output token)")
        if code == 2:
            cap, blocks = max_blocks * bs, cfg.num_gpu_blocks
            raise KvsimError(
                f"request {first + i} (prompt {p} + output {o} tokens) can never fit the KV "
                f"pool: it needs up to {_request_blocks(cfg, p + o - 1)} blocks of {bs} tokens but the pool "
                f"has {blocks:,} block{'s' if blocks != 1 else ''} ({max_blocks:,} usable for "
                f"admission after the watermark, {cap:,} tokens, "
                f"{format_bytes(blocks * cfg.block_bytes, 'GB')}): expected prompt + output <= "
                f"{cap:,} tokens")
        if code == 3:
            capped = np.minimum(output_arr, np.maximum(cfg.max_model_len - prompt_arr, 0))
            GuaranteedAdmission.check_fits(cfg, prompt_arr, capped, first=first)
            raise RuntimeError("kvsim: the guaranteed-admission check disagrees with itself "
                               "(internal error)")
        n = p + o - 1
        raise KvsimError(
            f"request {first + i} (prompt {p} + output {o} tokens) needs a prefill of up to {n} "
            f"tokens but max_num_batched_tokens={cfg.max_num_batched_tokens} without chunked "
            f"prefill: expected max_num_batched_tokens >= {n}, or enable_chunked_prefill=True")
