"""Recording a run: the per-step timeline, pauses, preemption events, decoding stints.

Explained in chapter 2 (the timeline chart) and chapter 4 (what the metrics
are made of).

The engine reports one step at a time (:meth:`Recorder.step`) or a run of
pure decode steps at once (:meth:`Recorder.decode_run`). Times and durations
are kept step by step; within a run, gaps and block counts follow from the
run's start and the decode group's block crossings, so they are rebuilt at
the end, for all runs at once. The other columns are constant inside a run
(but for its last step, after the run's finishes), so a run keeps only the
few that are not zero: its batch, queue and swapped counts.
:meth:`Recorder.timeline` assembles the columns of
:attr:`kvsim.SimResult.timeline`, one row per engine step, state after it.
"""
from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any

import numpy as np

from .blocks.counting import block_position

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["Recorder", "TIMELINE_COLUMNS"]

#: Columns that are constant within a run of decode steps.
_CONST = ("running", "waiting", "swapped", "preemptions", "decoding", "prefill_tokens",
          "decode_tokens", "emitted_tokens", "swap_out_bytes", "swap_in_bytes",
          "recomputed_tokens")

#: What :meth:`Recorder.step` keeps per single step, and :meth:`Recorder.decode_run` per run.
#: (Their float fields, a single step's gap and a run's start, are kept apart.)
_SINGLE_FIELDS = ("row", "kv_blocks_used", "kv_blocks_cached") + _CONST
_RUN_FIELDS = ("row", "steps", "T", "used0", "blank0", "cached0", "used_end", "cached_end",
               "batch", "waiting", "swapped", "running_end", "waiting_end", "idle")

#: The timeline's columns and dtypes, in order.
TIMELINE_COLUMNS = {
    "t_s": np.float64, "dt_s": np.float64, "kv_blocks_used": np.int64,
    "kv_blocks_cached": np.int64, "running": np.int64, "waiting": np.int64,
    "swapped": np.int64, "preemptions": np.int64, "decoding": np.int64,
    "prefill_tokens": np.int64, "decode_tokens": np.int64, "emitted_tokens": np.int64,
    "swap_out_bytes": np.int64, "swap_in_bytes": np.int64, "gap_s": np.float64,
    # prefill tokens of the step that were computed before a preemption (part of prefill_tokens)
    "recomputed_tokens": np.int64,
}


class Recorder:
    """Collects the timeline in order; decode runs are stored compactly (see :meth:`decode_run`)."""

    def __init__(self) -> None:
        # Typed buffers (array.array), not lists: 8 bytes a value instead of a pointer and a
        # Python object, and numpy reads them without a copy at the end (building arrays from
        # lists of ~2 M Python numbers was a fifth of a one-hour run, and most of its memory).
        # Values go in with fromlist, a list at a time: extend converts them one by one
        # through an iterator, growing the buffer each time (2-3x fromlist's time).
        self._t = array("d")                            # every step's end time, in order
        self._dt = array("d")
        self._single_gaps = array("d")                  # per single step: its gap
        self._singles = array("q")                      # _SINGLE_FIELDS per single step
        self._run_starts = array("d")                   # per decode run: t0
        self._runs = array("q")                         # _RUN_FIELDS per decode run
        self._run_crossings = array("q")                # their crossings snapshots
        # [rid, start, end (nan while open), mode]: rid and mode are ints in a float row
        self.pauses: list[list[float]] = []
        self._open_pause: dict[int, int] = {}
        self._event_times = array("d")
        self._events = array("q")                       # (rid, mode) per event
        self.stints = array("q")                        # (rid, first step, end step), flat

    def end_s(self) -> float:
        """The end of the last step recorded (0.0 before the first): the run's simulated time."""
        return self._t[-1] if self._t else 0.0

    # ----------------------------------------------------------------- steps
    def step(self, t1: float, dt: float, gap: float, used: int, cached: int,
             const: tuple[int, ...]) -> None:
        """One step; ``const`` holds the constant columns' values in the order of ``_CONST``."""
        self._single_gaps.append(gap)
        self._singles.fromlist([len(self._t), used, cached, *const])
        self._t.append(t1)
        self._dt.append(dt)

    def decode_run(self, t0: float, ends: list[float], dts: list[float], T: int,
                   crossings: list[int], used0: int, blank0: int, cached0: int, used_end: int,
                   cached_end: int, batch: int, waiting: int, swapped: int, running_end: int,
                   waiting_end: int, idle: int = 0) -> None:
        """``k = len(dts)`` pure decode steps (steps ``T .. T+k-1``) starting at ``t0``.

        Gaps and block counts are rebuilt at the end from the run's start and
        the decode group's block crossings (``crossings``, a copy: step
        ``T + j`` takes ``crossings[-(T + j) % bs]`` blocks, the first step's
        were taken before ``used0``; cached blocks are evicted once the
        ``blank0`` unhashed free blocks are gone); the last step shows
        ``used_end``/``cached_end``, after the run's finished requests freed
        their blocks. Every step decodes (and emits) ``batch`` tokens with
        ``waiting`` and ``swapped`` requests queued; the last one shows
        ``running_end`` and ``waiting_end`` (after its finishes and arrivals). ``idle``
        running requests take no part (TensorRT-LLM's STATIC_BATCH: prefills that wait).
        """
        self._run_starts.append(t0)
        self._runs.fromlist([len(self._t), len(dts), T, used0, blank0, cached0, used_end,
                             cached_end, batch, waiting, swapped, running_end, waiting_end, idle])
        self._t.fromlist(ends)
        self._dt.fromlist(dts)
        self._run_crossings.fromlist(crossings)

    # ---------------------------------------------------------- per request
    def pause_start(self, rid: int, t: float, mode: int) -> None:
        """``rid`` stops streaming at ``t`` (its last token); mode 0 recompute, 1 swap, 2 a
        decoder that got no token in a step (V1's token budget ran out before it)."""
        if rid not in self._open_pause:
            self._open_pause[rid] = len(self.pauses)
            self.pauses.append([rid, t, float("nan"), mode])

    def pause_end(self, rid: int, t: float) -> float | None:
        """Close ``rid``'s open pause at ``t``; return its mode (an int), or None if it had none."""
        i = self._open_pause.pop(rid, None)
        if i is None:
            return None
        self.pauses[i][2] = t
        return self.pauses[i][3]

    def set_pause_mode(self, rid: int, mode: int) -> None:
        """A paused request was preempted (a stall became a recompute or a swap)."""
        i = self._open_pause.get(rid)
        if i is not None:
            self.pauses[i][3] = mode

    def event(self, t: float, rid: int, mode: int) -> None:
        self._event_times.append(t)
        self._events.fromlist([rid, mode])

    def stint(self, rid: int, first_step: int, end_step: int) -> None:
        """``rid`` decoded from ``first_step`` up to (not including) ``end_step``."""
        if end_step > first_step:
            self.stints.fromlist([rid, first_step, end_step])

    # -------------------------------------------------------------- results
    def timeline(self) -> dict[str, NDArray[Any]]:
        n = len(self._t)
        cols = {"t_s": _floats(self._t), "dt_s": _floats(self._dt), "gap_s": np.zeros(n)}
        for name in ("kv_blocks_used", "kv_blocks_cached") + _CONST:
            cols[name] = np.zeros(n, dtype=np.int64)
        if self._singles:
            singles = _ints(self._singles).reshape(-1, len(_SINGLE_FIELDS))
            rows = singles[:, 0]
            cols["gap_s"][rows] = _floats(self._single_gaps)
            for i, name in enumerate(("kv_blocks_used", "kv_blocks_cached") + _CONST):
                cols[name][rows] = singles[:, 1 + i]
        if self._runs:
            self._fill_runs(cols)
        return {name: cols[name] for name in TIMELINE_COLUMNS}

    def _fill_runs(self, cols: dict[str, NDArray[Any]]) -> None:
        """Rebuild the decode runs' rows, all runs at once."""
        runs = _ints(self._runs).reshape(-1, len(_RUN_FIELDS))
        pos, k, T, used0, blank0, cached0, used_end, cached_end, batch, waiting, swapped, \
            running_end, waiting_end, idle = runs.T
        t0 = _floats(self._run_starts)
        cross = _ints(self._run_crossings).reshape(len(k), -1)
        bs = cross.shape[1]
        run = np.repeat(np.arange(len(k)), k)                  # the run of every run row
        start = np.cumsum(k) - k
        j = np.arange(int(k.sum())) - start[run]               # step index inside its run
        rows = pos[run] + j
        need = cross[run, block_position(-(T[run] + j), bs)]
        need[j == 0] = 0                                       # the first step's were taken before
        total = np.cumsum(need)
        taken = total - (total - need)[start][run]             # cumulative within each run
        t_s = cols["t_s"]
        prev = np.where(j == 0, t0[run], t_s[rows - 1])
        cols["gap_s"][rows] = t_s[rows] - prev
        cols["kv_blocks_used"][rows] = used0[run] + taken
        cols["kv_blocks_cached"][rows] = cached0[run] - np.maximum(0, taken - blank0[run])
        batch_rows = batch[run]
        for name in ("decoding", "decode_tokens", "emitted_tokens"):
            cols[name][rows] = batch_rows
        cols["running"][rows] = batch_rows + idle[run]
        cols["waiting"][rows] = waiting[run]
        cols["swapped"][rows] = swapped[run]
        last = pos + k - 1
        cols["kv_blocks_used"][last] = used_end
        cols["kv_blocks_cached"][last] = cached_end
        cols["running"][last] = running_end
        cols["waiting"][last] = waiting_end

    def longest_stint_gaps(self, gap_s: NDArray[np.float64], n_requests: int) -> NDArray[np.float64]:
        """Per request, the longest gap between tokens while it decoded (0 if it never did)."""
        out = np.zeros(n_requests)
        if self.stints:
            st = _ints(self.stints).reshape(-1, 3)
            # reduceat over [lo0, hi0, lo1, hi1, ...]: even slots reduce gap_s[lo:hi]
            padded = np.append(gap_s, 0.0)
            longest = np.maximum.reduceat(padded, st[:, 1:3].ravel())[::2]
            np.maximum.at(out, st[:, 0], longest)
        return out

    def pause_table(self) -> dict[str, NDArray[Any]]:
        pz = np.array(self.pauses, dtype=float).reshape(-1, 4)
        return {"request": pz[:, 0].astype(np.int64), "start_s": pz[:, 1], "end_s": pz[:, 2],
                "mode": pz[:, 3].astype(np.int64)}

    def event_table(self) -> dict[str, NDArray[Any]]:
        ev = _ints(self._events).reshape(-1, 2)
        return {"t_s": _floats(self._event_times).copy(), "request": ev[:, 0].copy(),
                "mode": ev[:, 1].copy()}


def _floats(buffer: array[float]) -> NDArray[np.float64]:
    """A float buffer's values as a new array (the buffer may still grow: no shared memory)."""
    return np.frombuffer(buffer, dtype=np.float64).copy() if buffer else np.zeros(0)


def _ints(buffer: array[int]) -> NDArray[np.int64]:
    """An int buffer's values (C long long, 8 bytes: int64) as a new array."""
    return np.frombuffer(buffer, dtype=np.int64).copy() if buffer else np.zeros(0, dtype=np.int64)
