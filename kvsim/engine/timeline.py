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
:meth:`Recorder.timeline` hands them over as a :class:`CompactTimeline`,
which expands a column of :attr:`kvsim.SimResult.timeline` (one row per
engine step, state after it) with numpy only when it is first read, and keeps
it: a run that nobody reads the timeline of never holds its columns.
"""
from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .blocks.counting import block_position

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["Recorder", "CompactTimeline", "TIMELINE_COLUMNS", "longest_stint_gaps"]

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
    def timeline(self, *, final: bool = False) -> CompactTimeline:
        """The timeline's columns, each expanded when first read (:class:`CompactTimeline`).

        A copy of what was recorded so far, unless ``final``: the run is over, the
        columns share the recorder's buffers (which then can no longer grow)."""
        take_f, take_i = (_floats, _ints) if not final else (_view_floats, _view_ints)
        return CompactTimeline(
            take_f(self._t), take_f(self._dt), take_f(self._single_gaps),
            take_i(self._singles).reshape(-1, len(_SINGLE_FIELDS)), take_f(self._run_starts),
            take_i(self._runs).reshape(-1, len(_RUN_FIELDS)), take_i(self._run_crossings))

    def longest_stint_gaps(self, gap_s: NDArray[np.float64], n_requests: int) -> NDArray[np.float64]:
        """Per request, the longest gap between tokens while it decoded (0 if it never did)."""
        return longest_stint_gaps(_ints(self.stints), gap_s, n_requests)

    def pause_table(self) -> dict[str, NDArray[Any]]:
        pz = np.array(self.pauses, dtype=float).reshape(-1, 4)
        return {"request": pz[:, 0].astype(np.int64), "start_s": pz[:, 1], "end_s": pz[:, 2],
                "mode": pz[:, 3].astype(np.int64)}

    def event_table(self) -> dict[str, NDArray[Any]]:
        ev = _ints(self._events).reshape(-1, 2)
        return {"t_s": _floats(self._event_times).copy(), "request": ev[:, 0].copy(),
                "mode": ev[:, 1].copy()}


class CompactTimeline(Mapping[str, "NDArray[Any]"]):
    """The timeline as recorded, its columns expanded by numpy when first read, once.

    Every step's end time and duration are kept as they were summed (8 bytes
    each: the times of a run are sequential sums, which no closed form
    reproduces to the bit); a single step keeps its other columns, a decode run
    only its parameters (``_RUN_FIELDS``) and its block crossings. So until a
    column is read, memory grows with the run's events (single steps and
    decode runs) and by 16 bytes a step; a column read is kept (the same array
    on every read), and the two block columns are expanded together.
    """

    def __init__(self, t: NDArray[np.float64], dt: NDArray[np.float64],
                 single_gaps: NDArray[np.float64], singles: NDArray[np.int64],
                 run_starts: NDArray[np.float64], runs: NDArray[np.int64],
                 crossings: NDArray[np.int64]) -> None:
        self._t, self._dt = t, dt
        self._single_gaps, self._singles = single_gaps, singles
        self._run_starts, self._runs = run_starts, runs
        self._crossings = crossings.reshape(len(runs), -1) if len(runs) else crossings
        self._columns: dict[str, NDArray[Any]] = {}
        # the order of the events (single steps and runs) by row, and their lengths
        self._order: NDArray[np.intp] | None = None
        self._lengths: NDArray[np.int64] | None = None

    @property
    def num_rows(self) -> int:
        return len(self._t)

    def __getitem__(self, name: str) -> NDArray[Any]:
        column = self._columns.get(name)
        if column is None:
            if name not in TIMELINE_COLUMNS:
                raise KeyError(name)
            self._expand(name)
            column = self._columns[name]
        return column

    def __iter__(self) -> Iterator[str]:
        return iter(TIMELINE_COLUMNS)

    def __len__(self) -> int:
        return len(TIMELINE_COLUMNS)

    def _expand(self, name: str) -> None:
        if name in ("kv_blocks_used", "kv_blocks_cached"):
            self._columns["kv_blocks_used"], self._columns["kv_blocks_cached"] = self._blocks()
        elif name == "t_s":
            self._columns[name] = self._t
        elif name == "dt_s":
            self._columns[name] = self._dt
        elif name == "gap_s":
            self._columns[name] = self._gaps()
        else:
            self._columns[name] = self._constant(name)

    def _run_field(self, name: str) -> NDArray[np.int64]:
        return self._runs[:, _RUN_FIELDS.index(name)]

    def _spread(self, single_values: NDArray[np.int64],
                run_values: NDArray[np.int64]) -> NDArray[np.int64]:
        """A column of one value per event, a single step's on its row, a run's on all of its."""
        if self._order is None or self._lengths is None:
            starts = np.concatenate([self._singles[:, 0], self._run_field("row")])
            lengths = np.concatenate([np.ones(len(self._singles), dtype=np.int64),
                                      self._run_field("steps")])
            self._order = np.argsort(starts, kind="stable")
            self._lengths = lengths[self._order]
        values = np.concatenate([single_values, run_values])[self._order]
        return np.repeat(values, self._lengths)

    def _gaps(self) -> NDArray[np.float64]:
        """A step's gap: from the previous step's end (a run's first step: from its start);
        a single step's as recorded."""
        t = self._t
        gap = np.zeros(len(t))
        if len(t) > 1:
            np.subtract(t[1:], t[:-1], out=gap[1:])
        if len(self._runs):
            first = self._run_field("row")
            gap[first] = t[first] - self._run_starts
        if len(self._singles):
            gap[self._singles[:, 0]] = self._single_gaps
        return gap

    def _constant(self, name: str) -> NDArray[np.int64]:
        """A column that is constant within a decode run but for its last row."""
        singles = self._singles[:, _SINGLE_FIELDS.index(name)]
        batch = self._run_field("batch")
        if name in ("decoding", "decode_tokens", "emitted_tokens"):
            in_runs = batch
        elif name == "running":
            in_runs = batch + self._run_field("idle")
        elif name in ("waiting", "swapped"):
            in_runs = self._run_field(name)
        else:                                   # nothing prefilled, preempted or swapped
            in_runs = np.zeros(len(batch), dtype=np.int64)
        column = self._spread(singles, in_runs)
        if name in ("running", "waiting") and len(batch):
            last = self._run_field("row") + self._run_field("steps") - 1
            column[last] = self._run_field(f"{name}_end")
        return column

    def _blocks(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The used and cached block columns: a run's steps take its crossings' blocks."""
        used = self._spread(self._singles[:, 1], self._run_field("used0"))
        cached = self._spread(self._singles[:, 2], self._run_field("cached0"))
        if not len(self._runs):
            return used, cached
        pos, k, T = self._run_field("row"), self._run_field("steps"), self._run_field("T")
        cross = self._crossings
        bs = cross.shape[1]
        run = np.repeat(np.arange(len(k)), k)                  # the run of every run row
        start = np.cumsum(k) - k
        j = np.arange(int(k.sum())) - start[run]               # step index inside its run
        need = cross[run, block_position(-(T[run] + j), bs)]
        need[j == 0] = 0                                       # the first step's were taken before
        total = np.cumsum(need)
        taken = total - (total - need)[start][run]             # cumulative within each run
        rows = pos[run] + j
        used[rows] += taken
        cached[rows] -= np.maximum(0, taken - self._run_field("blank0")[run])
        last = pos + k - 1
        used[last] = self._run_field("used_end")
        cached[last] = self._run_field("cached_end")
        return used, cached


def longest_stint_gaps(stints: NDArray[np.int64], gap_s: NDArray[np.float64],
                       n_requests: int) -> NDArray[np.float64]:
    """Per request, the longest gap between tokens while it decoded (0 if it never did);
    ``stints``: (request, first step, end step), flat (:attr:`Recorder.stints`)."""
    out = np.zeros(n_requests)
    if len(stints):
        st = stints.reshape(-1, 3)
        # reduceat over [lo0, hi0, lo1, hi1, ...]: even slots reduce gap_s[lo:hi]
        padded = np.append(gap_s, 0.0)
        longest = np.maximum.reduceat(padded, st[:, 1:3].ravel())[::2]
        np.maximum.at(out, st[:, 0], longest)
    return out


def _floats(buffer: array[float]) -> NDArray[np.float64]:
    """A float buffer's values as a new array (the buffer may still grow: no shared memory)."""
    return np.frombuffer(buffer, dtype=np.float64).copy() if buffer else np.zeros(0)


def _ints(buffer: array[int]) -> NDArray[np.int64]:
    """An int buffer's values (C long long, 8 bytes: int64) as a new array."""
    return np.frombuffer(buffer, dtype=np.int64).copy() if buffer else np.zeros(0, dtype=np.int64)


def _view_floats(buffer: array[float]) -> NDArray[np.float64]:
    """A finished float buffer's values, shared (the buffer can no longer grow)."""
    return np.frombuffer(buffer, dtype=np.float64) if buffer else np.zeros(0)


def _view_ints(buffer: array[int]) -> NDArray[np.int64]:
    """A finished int buffer's values, shared (the buffer can no longer grow)."""
    return np.frombuffer(buffer, dtype=np.int64) if buffer else np.zeros(0, dtype=np.int64)
