"""Per-request state of one run: columns indexed by request id, in arrival order.

The engine keeps every request's state in plain lists (one per quantity, the
request id is the index) rather than in per-request objects: the loop touches
a few fields of a few requests per step, and lists keep that cheap.

Legend (tokens unless said otherwise):

* set when the request arrives: ``prompt``, ``output`` (its answer length,
  capped at ``max_tokens`` and by ``max_model_len``), ``priority``,
  ``arrival`` (s), ``truncated`` (1 if ``max_model_len`` cut the answer);
* ``target`` — tokens to compute before its next token: the prompt, or after
  a recompute the prompt and everything generated so far;
* ``computed`` — tokens of ``target`` computed so far (while it prefills);
* ``generated`` — tokens emitted so far;
  :data:`kvsim.engine.blocks.decode_group.IN_DECODE_GROUP` (-1) while
  the request is a member of the decode group, whose closed form holds its
  count (read it through :meth:`kvsim.engine.scheduler.Scheduler.generated_now`:
  no stale count is ever readable);
* ``high`` — the most tokens whose KV it ever held before a preemption (what
  a recompute computes *again*);
* counters: ``preemptions``, ``recomputed``, ``rescued`` (found in the prefix
  cache on resume), ``loaded`` (copied back from the host tier), ``swaps``, ``lookup_tokens`` / ``hit_tokens`` (its prefix
  cache query at first admission); ``rejected``: why the scheduler refused it
  (:data:`kvsim.engine.fit.REJECTION_REASONS`; 0: served);
* times (s, NaN until they happen): ``first_token``, ``last_token``,
  ``finish``, ``first_scheduled`` (the start of the step that first admitted
  it: vLLM's ``scheduled_ts``); ``max_gap`` and ``paused`` (s) from its pauses.

An open loop knows every request up front, so its columns are filled at once
(:meth:`RequestTable.add_all`) and ``count`` says how many have arrived; a
closed loop adds each request as its user sends it (:meth:`RequestTable.add`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, DTypeLike, NDArray

__all__ = ["RequestTable"]

_NAN = float("nan")
#: Columns set from the request itself.
ARRIVAL_COLUMNS = ("prompt", "output", "priority", "arrival", "target", "truncated")
#: Columns that start at zero.
ZERO_COLUMNS = ("generated", "computed", "high", "preemptions", "recomputed", "rescued", "swaps",
                "max_gap", "paused", "lookup_tokens", "hit_tokens", "rejected", "loaded")
#: Times that start as NaN.
NAN_COLUMNS = ("first_token", "finish", "last_token", "first_scheduled")


class RequestTable:
    """The per-request columns (see the module docstring); ``count`` requests have arrived."""

    # The columns (set in __init__ by name; declared here for type checkers).
    prompt: list[int]
    output: list[int]
    priority: list[int]
    arrival: list[float]
    target: list[int]
    truncated: list[int]
    generated: list[int]
    computed: list[int]
    high: list[int]
    preemptions: list[int]
    recomputed: list[int]
    rescued: list[int]
    loaded: list[int]
    swaps: list[int]
    max_gap: list[float]
    paused: list[float]
    lookup_tokens: list[int]
    hit_tokens: list[int]
    rejected: list[int]
    first_token: list[float]
    finish: list[float]
    last_token: list[float]
    first_scheduled: list[float]

    def __init__(self, max_model_len: int) -> None:
        self.max_model_len = max_model_len
        for name in ARRIVAL_COLUMNS + ZERO_COLUMNS + NAN_COLUMNS:
            setattr(self, name, [])
        self.count = 0

    def add(self, arrival_s: float, prompt: int, output: int, priority: int) -> int:
        """A request that arrives now; returns its id."""
        rid = len(self.prompt)
        out = min(output, max(self.max_model_len - prompt, 0))
        self.prompt.append(prompt)
        self.output.append(out)
        self.priority.append(priority)
        self.arrival.append(arrival_s)
        self.target.append(prompt)
        self.truncated.append(int(out < output))
        for name in ZERO_COLUMNS:
            getattr(self, name).append(0)
        for name in NAN_COLUMNS:
            getattr(self, name).append(_NAN)
        self.count = rid + 1
        return rid

    def add_all(self, arrival_s: ArrayLike, prompt: ArrayLike, output: ArrayLike,
                priority: ArrayLike) -> None:
        """Every request of an open loop, before any arrives (arrays in arrival order)."""
        prompt = np.asarray(prompt, dtype=np.int64)
        output = np.asarray(output, dtype=np.int64)
        capped = np.minimum(output, np.maximum(self.max_model_len - prompt, 0))
        n = len(prompt)
        self.prompt.extend(prompt.tolist())
        self.output.extend(capped.tolist())
        self.priority.extend(np.asarray(priority).tolist())
        self.arrival.extend(np.asarray(arrival_s, dtype=float).tolist())
        self.target.extend(prompt.tolist())
        self.truncated.extend((capped < output).astype(np.int64).tolist())
        for name in ZERO_COLUMNS:
            getattr(self, name).extend([0] * n)
        for name in NAN_COLUMNS:
            getattr(self, name).extend([_NAN] * n)

    def column(self, name: str, dtype: DTypeLike) -> NDArray[Any]:
        """The column of the ``count`` requests that arrived, as an array."""
        return np.array(getattr(self, name)[:self.count], dtype=dtype)
