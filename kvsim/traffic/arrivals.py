"""Arrivals as the engine consumes them: open loop (fixed times) and closed loop (users).

Explained in chapter 2 (the closed-loop load test) and chapter 5 (open-loop
traffic and traces).

Both sources say when the next request arrives. An open loop's requests are
known up front (the engine reads their lengths at once and pulls them by
count, :meth:`OpenArrivals.pull_until`); a closed loop hands the engine
:class:`NewRequest` records as its users send them. A closed loop also hears when each request
finishes: its user sends the next request ``think_s`` later. With
``turns > 1`` a user's requests form conversations: each turn's prompt is the
previous turn's prompt and answer plus a new message, so the whole history is
resent (and can hit the prefix cache); a conversation ends after its drawn
number of turns, or earlier when the next turn would exceed ``max_model_len``.
"""
from __future__ import annotations

import bisect
import heapq
import math
from typing import NamedTuple

import numpy as np

from kvsim.errors import KvsimError
from kvsim.units import MAX_SIMULATED_S

from .workload import MAX_REQUESTS, Workload

__all__ = ["NewRequest", "OpenArrivals", "ClosedArrivals", "make_arrivals"]


class NewRequest(NamedTuple):
    """What the engine needs to know about an arriving request.

    ``prefix_group`` (-1: none) and ``prefix_tokens`` name its shared prefix;
    ``session`` (-1: none) the conversation whose stream its tokens continue.
    ``index`` is its position in the workload (open loop) or issue order
    (closed loop), for error messages.
    """

    arrival_s: float
    prompt_tokens: int
    output_tokens: int
    priority: int
    prefix_group: int
    prefix_tokens: int
    session: int
    # a field named like tuple's index() method, which it hides: the engine reads req.index
    index: int  # type: ignore[assignment]


#: How long a closed-loop client takes to hear that its request was refused and send the
#: next: one HTTP round trip to the API server (a named floor, so that users who think for
#: 0 s and are always refused do not send infinitely many requests in one instant).
REFUSAL_ROUND_TRIP_S = 0.001


class OpenArrivals:
    """A fixed list of arrivals (Poisson, piecewise, a trace, a list of requests)."""

    closed_loop = False
    #: An open loop sends every request whatever happens (it never stops early).
    stopped_s: float | None = None
    stop_reason: str | None = None

    def __init__(self, wl: Workload, *, until_s: float, max_tokens: int | None):
        columns = wl.open_columns("the open-loop arrivals")
        arr = columns.arrival_s
        if until_s < math.inf:
            arr = arr[arr < until_s]
        n = len(arr)
        self.times: list[float] = arr.tolist()
        self.n = n
        self.prompt: list[int] = columns.prompt_tokens[:n].tolist()
        out = columns.output_tokens[:n]
        if max_tokens is not None:
            out = np.minimum(out, max_tokens)
        self.output: list[int] = out.tolist()
        self.priority: list[int] = columns.priority[:n].tolist()
        self.prefix_tokens = wl.prefix_tokens
        self.prefix_group: list[int] = wl.prefix_groups_of(n).tolist() if wl.prefix_tokens else []
        self.next = 0
        self._next_times: list[float] = self.times + [math.inf]      # a sentinel after the last arrival

    def next_time(self) -> float:
        return self._next_times[self.next]

    def pull_until(self, t: float) -> int:
        """Take every request that has arrived by ``t``; returns how many have been taken so far.

        The engine knows each request's lengths from :attr:`prompt` and
        :attr:`output` already (request ``i`` of the workload is request ``i``).
        """
        if self._next_times[self.next] <= t:
            self.next = bisect.bisect_right(self.times, t, self.next)
        return self.next

    def prefix_of(self, i: int) -> tuple[int, int]:
        """Request ``i``'s shared prefix: ``(prefix_group, prefix_tokens)``, ``(-1, 0)`` for none."""
        if not self.prefix_tokens:
            return -1, 0
        return self.prefix_group[i], min(self.prefix_tokens, self.prompt[i])

    def arrived_by(self, t: float) -> int:
        """Requests that have arrived by ``t`` but were not pulled yet."""
        if self._next_times[self.next] > t:
            return 0
        return bisect.bisect_right(self.times, t, self.next) - self.next

    def finished(self, rid: int, t: float) -> bool:
        """A request finished; returns whether a later request can continue its stream (never)."""
        return False

    def rejected(self, rid: int, t: float) -> None:
        """A request was refused at ``t`` (an open loop sends the rest regardless)."""

    def sending(self, t: float) -> bool:
        """Whether the source still sends at ``t`` (an open loop always does)."""
        return True


class ClosedArrivals:
    """``users`` clients, each sending its next request ``think_s`` after the last finished.

    The load test is bounded by construction: it stops sending once ``max_errors`` of its
    requests have been refused, or once it has sent :data:`MAX_REQUESTS` (whichever comes
    first); :attr:`stopped_s` and :attr:`stop_reason` then say when and why, and the requests
    already sent are served. See :meth:`rejected`.
    """

    closed_loop = True

    def __init__(self, wl: Workload, *, until_s: float, max_tokens: int | None,
                 max_model_len: int):
        plan = wl.closed_loop_plan("the closed-loop arrivals")
        self.wl = wl
        self.think_s = plan.think_s
        self.request_priority = plan.request_priority
        self.until = until_s
        self.max_tokens = max_tokens
        self.max_model_len = max_model_len
        self.pending = [(t_u, u) for u, t_u in enumerate(plan.user_start_s.tolist())
                        if t_u < wl.duration_s and t_u < until_s]
        heapq.heapify(self.pending)
        # each user's shared-prefix group (Workload.prefix_groups_of: in turn, or by popularity)
        self.prefix_group: list[int] = (wl.prefix_groups_of(len(plan.user_start_s)).tolist()
                                        if wl.prefix_tokens else [])
        self.issued = 0
        self.user_of: dict[int, int] = {}
        # conversations: per user (session id, turns left, history tokens, shared-prefix
        # tokens: fixed by the first turn, so every turn names the same tokens the same way)
        self.conversation: dict[int, tuple[int, int, int, int]] = {}
        self.sessions = 0
        self.multi_turn = wl.turns is not None
        self.max_errors = plan.max_errors
        self.refused = 0
        self.stopped_s: float | None = None
        self.stop_reason: str | None = None

    def next_time(self) -> float:
        return self.pending[0][0] if self.pending else math.inf

    def _lengths(self, user: int, k: int) -> tuple[int, int, int, int, int]:
        """(prompt, output, session, turns left after this one, shared-prefix tokens) of
        request ``k`` from ``user``."""
        p, out = self.wl.next_lengths(k)
        if self.max_tokens is not None:
            out = min(out, self.max_tokens)
        shared = min(self.wl.prefix_tokens, p)
        if not self.multi_turn:
            return p, out, -1, 0, shared
        conv = self.conversation.get(user)
        if conv is not None:
            session, left, history, shared = conv
            p2 = history + self.wl.next_followup(k)
            if p2 + out <= self.max_model_len:
                return p2, out, session, left - 1, shared
            shared = min(self.wl.prefix_tokens, p)
        session = self.sessions
        self.sessions += 1
        return p, out, session, self.wl.turns_of(session) - 1, shared

    def pull_next(self, t: float) -> tuple[NewRequest, int] | None:
        """The earliest request issued by ``t`` (None when there is none), with its user; the
        caller assigns it its engine id through :meth:`bind`, and handles it (a refusal may
        make its user send again before the next one) before it asks for the next: so the
        requests are issued in time order, and none after the load test stopped."""
        if self.pending and self.pending[0][0] <= t:
            out = self.pull(t, 1)
            return out[0] if out else None
        return None

    def pull(self, t: float, most: int | None = None) -> list[tuple[NewRequest, int]]:
        """Requests issued by ``t`` (at most ``most``); the caller assigns each its engine id
        through :meth:`bind`."""
        out: list[tuple[NewRequest, int]] = []
        while self.pending and self.pending[0][0] <= t and (most is None or len(out) < most):
            if self.issued >= MAX_REQUESTS:
                self._stop(self.pending[0][0], f"it had sent {MAX_REQUESTS:,} requests, the "
                                               f"most one workload may hold")
                break
            t_a, user = heapq.heappop(self.pending)
            k = self.issued
            self.issued += 1
            p, o, session, left, shared = self._lengths(user, k)
            if session >= 0:
                self.conversation[user] = (session, left, p + o, shared)
            group = self.prefix_group[user] if self.wl.prefix_tokens else -1
            out.append((NewRequest(t_a, p, o, self.request_priority, group,
                                   shared if group >= 0 else 0, session, k), user))
        return out

    def bind(self, rid: int, user: int) -> None:
        self.user_of[rid] = user

    def arrived_by(self, t: float) -> int:
        return sum(1 for t_u, _ in self.pending if t_u <= t)

    def sending(self, t: float) -> bool:
        """Whether the load test still sends at ``t``: until it stopped (requests sent at the
        instant it stopped were already on their way)."""
        return self.stopped_s is None or t <= self.stopped_s

    def _stop(self, t: float, why: str) -> None:
        """The load test stops sending at ``t`` (no user sends again)."""
        if self.stopped_s is None:
            self.stopped_s, self.stop_reason = t, why
        self.pending = []

    def finished(self, rid: int, t: float) -> bool:
        """``rid``'s user sends its next request ``think_s`` later; True if it continues the session."""
        user = self.user_of.pop(rid)
        t_next = t + self.think_s
        if self.stopped_s is None and t_next < self.wl.duration_s and t_next < self.until:
            heapq.heappush(self.pending, (t_next, user))
            conv = self.conversation.get(user)
            if conv is not None and conv[1] > 0:
                return True
        self.conversation.pop(user, None)
        return False

    def rejected(self, rid: int, t: float) -> None:
        """``rid`` was refused at ``t`` (an HTTP 400).

        As the load generators the book's load tests stand for do (``vllm bench serve``
        with ``--max-concurrency``, LLMPerf), the refusal counts as a failed request and
        its user goes on at once, with no back-off: a 400 is not retried, the user sends its
        next request (a new conversation) ``think_s`` later, and no sooner than one round trip
        (:data:`REFUSAL_ROUND_TRIP_S`). Those tools end on a request count (``--num-prompts``,
        ``--max-num-completed-requests``, failures included); kvsim's closed loop runs for a
        duration, so, as GuideLLM's ``max_errors`` constraint does, it stops sending once
        ``max_errors`` requests have been refused, and says so (:attr:`stop_reason`).
        NOTE(load-test-max-errors): GuideLLM also cancels the requests in flight; kvsim
        serves them (as ``vllm bench serve`` does at the end of its prompts).
        """
        user = self.user_of.pop(rid)
        self.conversation.pop(user, None)         # a refused turn ends its conversation
        self.refused += 1
        if self.refused >= self.max_errors:
            self._stop(t, f"{self.refused:,} of its requests were refused (max_errors="
                          f"{self.max_errors:,})")
            return
        t_next = t + max(self.think_s, REFUSAL_ROUND_TRIP_S)
        if t_next < self.wl.duration_s and t_next < self.until:
            heapq.heappush(self.pending, (t_next, user))


def make_arrivals(wl: Workload, *, until_s: float, max_tokens: int | None,
                  max_model_len: int) -> OpenArrivals | ClosedArrivals:
    """The arrival source for ``wl``; refuses a workload longer than :data:`MAX_SIMULATED_S`."""
    if wl.is_closed_loop:
        if wl.duration_s > MAX_SIMULATED_S and until_s > MAX_SIMULATED_S:
            raise KvsimError(f"duration_s={wl.duration_s:g} is out of range: expected a closed "
                             f"loop of at most {MAX_SIMULATED_S:,} s (about 116 days), or an "
                             f"until_s that ends the run sooner")
    else:
        arrivals = wl.open_columns("the open-loop arrivals").arrival_s
        if len(arrivals) and float(arrivals[-1]) > MAX_SIMULATED_S:
            last = float(arrivals[-1])
            raise KvsimError(f"arrival_s={last:g} (the last arrival) is out of range: expected "
                             f"arrival times of at most {MAX_SIMULATED_S:,} s (about 116 days; "
                             f"a trace in ms or us read as seconds?)")
    if wl.is_closed_loop:
        return ClosedArrivals(wl, until_s=until_s, max_tokens=max_tokens,
                              max_model_len=max_model_len)
    return OpenArrivals(wl, until_s=until_s, max_tokens=max_tokens)
