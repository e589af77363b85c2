"""The waiting queue, in vLLM V1's two orders (``scheduling_policy``).

Explained in chapter 2, *Optimistic admission and preemption*.

* ``"fcfs"`` (:class:`FCFSQueue`): arrival order; a preempted request goes
  back to the *front* (V1's ``prepend_request``), so it is the first admitted
  again. O(1) at both ends.
* ``"priority"`` (:class:`PriorityQueue`): a heap keyed by (priority, arrival
  time, request id), lower first, O(log n) per push and pop; a preempted
  request is pushed by its key like any other (V1's priority queue has no
  front).

Both hold request ids and answer :meth:`head`, :meth:`pop_head`, ``len`` and
iteration in admission order.
"""
from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterator

__all__ = ["FCFSQueue", "PriorityQueue", "make_waiting_queue"]


class FCFSQueue(deque[int]):
    """Request ids in arrival order (a deque: the C methods keep the engine's loop fast)."""

    push = deque.append
    push_front = deque.appendleft
    pop_head = deque.popleft

    def head(self) -> int:
        return self[0]


class PriorityQueue:
    """Request ids by (priority, arrival time, id); ``priority`` and ``arrival`` are per-id lists."""

    def __init__(self, priority: list[int], arrival: list[float]) -> None:
        self._heap: list[tuple[int, float, int]] = []
        self._priority, self._arrival = priority, arrival

    def push(self, rid: int) -> None:
        heapq.heappush(self._heap, (self._priority[rid], self._arrival[rid], rid))

    push_front = push        # V1: a preempted request re-enters by its key

    def head(self) -> int:
        return self._heap[0][2]

    def pop_head(self) -> int:
        return heapq.heappop(self._heap)[2]

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)

    def __iter__(self) -> Iterator[int]:
        return (key[2] for key in sorted(self._heap))


def make_waiting_queue(scheduling_policy: str, priority: list[int],
                       arrival: list[float]) -> FCFSQueue | PriorityQueue:
    if scheduling_policy == "priority":
        return PriorityQueue(priority, arrival)
    return FCFSQueue()
