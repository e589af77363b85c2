"""What the KV-cache gauge counts: the engine's own state beside ``vllm:kv_cache_usage_perc``.

One job: re-run a scenario step by step, stop at the step a scrape at ``at_s``
would see, and read the engine's block pool and running requests there
(:func:`kv_usage_breakdown`): the blocks the gauge counts as used, the tokens
really stored in them, and the cached blocks it counts as free.

Explained in chapter 4, *Detecting preemption* (*What a vLLM server exposes*).
"""
from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from kvsim.engine.loop import Engine, build_engine, simulate
from kvsim.errors import KvsimError, check_float
from kvsim.runs.scenarios import get_scenario

__all__ = ["kv_usage_breakdown", "KvUsageBreakdown"]

# --- what the KV gauge counts -------------------------------------------------------------

class _Stop(Exception):
    pass


class KvUsageBreakdown(TypedDict):
    """What :func:`kv_usage_breakdown` reads at one instant (see there)."""

    t_s: float
    requests_running: int
    blocks_total: int
    blocks_held: int
    gauge: float
    block_size: int
    tokens_stored: int
    token_capacity: int
    token_fill: float
    slack_tokens: int
    blocks_cached_free: int
    blocks_blank: int


@dataclass
class _Seen:
    """The engine's state after the step a scrape sees."""

    t_s: float
    stored: int
    free: int
    cached: int
    running: int


def kv_usage_breakdown(scenario: str, at_s: float, **overrides: object) -> KvUsageBreakdown:
    """What ``vllm:kv_cache_usage_perc`` counts at ``at_s``, beside what it does not.

    Reads the engine's state as a scrape at ``at_s`` sees it: after the last
    step that ended at or before ``at_s`` (the run with jumps finds that step;
    the same run step by step stops there). Returns integers and fractions side
    by side:

    * ``blocks_total``, ``blocks_held`` (by running requests, partly filled
      ones included) and ``gauge`` = held / total: what the metric shows;
    * ``tokens_stored`` (tokens whose KV is actually in those blocks),
      ``token_capacity`` = total x block size and ``token_fill`` = stored /
      capacity; ``slack_tokens`` = held x block size - stored (the unused tail
      of every request's last block);
    * ``blocks_cached_free`` (freed full blocks still in the prefix cache:
      evictable, so the gauge counts them as free) and ``blocks_blank``.
    """

    at_s = check_float("at_s", at_s, min=0)
    kwargs = get_scenario(scenario, **overrides)
    workload = kwargs.pop("workload")
    model, gpu = kwargs.pop("model"), kwargs.pop("gpu")
    ends = simulate(workload, model=model, gpu=gpu, **kwargs).timeline["t_s"]
    steps = int(np.searchsorted(ends, at_s, side="right"))     # steps ended by at_s
    if steps == 0 or at_s > ends[-1]:
        raise KvsimError(f"at_s={at_s} is out of range: expected a time from the first step's "
                         f"end ({ends[0]:.3f} s) to the run's end ({ends[-1]:.1f} s)")
    engine = build_engine(workload, model, gpu, dict(kwargs, step_by_step=True))
    seen: list[_Seen] = []

    def watch(e: Engine) -> None:
        if e.steps >= steps:
            snap = e.snapshot()
            running = set(snap.running)
            stored = sum(r.tokens for r in snap.requests if r.rid in running)
            seen.append(_Seen(t_s=snap.t_s, stored=int(stored), free=snap.free_blocks,
                              cached=snap.cached_free_blocks, running=len(running)))
            raise _Stop

    with suppress(_Stop):
        engine.run(after_step=watch)
    state = seen[0]
    total, bs = int(engine.cfg.num_gpu_blocks), int(engine.cfg.block_size)
    held = total - state.free
    return {
        "t_s": state.t_s, "requests_running": state.running,
        "blocks_total": total, "blocks_held": held, "gauge": held / total,
        "block_size": bs, "tokens_stored": state.stored, "token_capacity": total * bs,
        "token_fill": state.stored / (total * bs),
        "slack_tokens": held * bs - state.stored,
        "blocks_cached_free": state.cached, "blocks_blank": state.free - state.cached,
    }
