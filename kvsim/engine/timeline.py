"""Recording a run: the per-step timeline, pauses, preemption events, decoding stints.

Explained in chapter 2 (the timeline chart) and chapter 4 (what the metrics
are made of).

The engine reports one step at a time (:meth:`Recorder.step`) or a run of
pure decode steps at once (:meth:`Recorder.decode_run`). A single step keeps
its columns; a run only its parameters, whatever its length: its steps'
durations follow from its timing (:data:`RunTiming`) and their ends from its
start, its gaps and block counts from those and the decode group's block
crossings, and the other columns are constant inside a run (but for its last
step, after the run's finishes), so it keeps only the few that are not zero:
its batch, queue and swapped counts. :meth:`Recorder.timeline` hands them over
as a :class:`CompactTimeline`, which expands a column of
:attr:`kvsim.SimResult.timeline` (one row per engine step, state after it)
with numpy only when it is first read, and keeps it: memory grows with the
run's events, not its steps, until someone reads the columns.
"""
from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .blocks.counting import block_position

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["Recorder", "CompactTimeline", "RunTiming", "TIMELINE_COLUMNS", "longest_stint_gaps"]

#: Columns that are constant within a run of decode steps.
_CONST = ("running", "waiting", "swapped", "preemptions", "decoding", "prefill_tokens",
          "decode_tokens", "emitted_tokens", "swap_out_bytes", "swap_in_bytes",
          "recomputed_tokens")

#: What :meth:`Recorder.step` keeps per single step, and :meth:`Recorder.decode_run` per run:
#: ints, and apart from them floats (a single step's end, duration and gap; a run's start
#: and its :data:`RunTiming` floats).
_SINGLE_FIELDS = ("row", "kv_blocks_used", "kv_blocks_cached") + _CONST
_SINGLE_FLOATS = ("t_s", "dt_s", "gap_s")
_RUN_FIELDS = ("row", "steps", "T", "used0", "blank0", "cached0", "used_end", "cached_end",
               "batch", "waiting", "swapped", "running_end", "waiting_end", "idle",
               "context", "growth", "cpu_bound_until")
_RUN_FLOATS = ("t0", "gpu_fixed_s", "s_per_token", "cpu_s")

#: What a decode run's step durations follow from: ``(context, growth, gpu_fixed_s,
#: s_per_token, cpu_s, cpu_bound_until)``. Step ``j`` of a run attends to ``c = context + j *
#: growth`` (in the cost model's units, :class:`kvsim.engine.costs.AttentionSpan`: tokens,
#: and ``growth`` the run's batch, for a model without sliding windows) and lasts
#: ``gpu_fixed_s + s_per_token * c``, or ``cpu_s`` while ``c < cpu_bound_until`` (asynchronous
#: scheduling, when the CPU's time is the longer; 0 without it). The same expression the
#: engine sums (:mod:`kvsim.engine.loop`).
RunTiming = tuple[int, int, float, float, float, int]

#: About how many steps of decode runs are expanded at a time (:meth:`CompactTimeline._chunks`).
_CHUNK_STEPS = 1 << 16

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
        self._rows = 0                                  # steps recorded
        self._end = 0.0                                 # the last one's end
        self._single_floats = array("d")                # _SINGLE_FLOATS per single step
        self._singles = array("q")                      # _SINGLE_FIELDS per single step
        self._run_floats = array("d")                   # _RUN_FLOATS per decode run
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
        return self._end

    # ----------------------------------------------------------------- steps
    def step(self, t1: float, dt: float, gap: float, used: int, cached: int,
             const: tuple[int, ...]) -> None:
        """One step; ``const`` holds the constant columns' values in the order of ``_CONST``."""
        self._single_floats.fromlist([t1, dt, gap])
        self._singles.fromlist([self._rows, used, cached, *const])
        self._rows += 1
        self._end = t1

    def decode_run(self, t0: float, ends: list[float], timing: RunTiming, T: int,
                   crossings: list[int], used0: int, blank0: int, cached0: int, used_end: int,
                   cached_end: int, batch: int, waiting: int, swapped: int, running_end: int,
                   waiting_end: int, idle: int = 0) -> None:
        """``k = len(ends)`` pure decode steps (steps ``T .. T+k-1``) starting at ``t0``.

        Only the run's parameters are kept. Its steps' durations follow from
        ``timing`` (:data:`RunTiming`), their ends from summing them one by one
        from ``t0`` (as the engine did: ``ends`` only gives ``k`` and the last).
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
        context, growth, gpu_fixed_s, s_per_token, cpu_s, cpu_bound_until = timing
        k = len(ends)
        self._run_floats.fromlist([t0, gpu_fixed_s, s_per_token, cpu_s])
        self._runs.fromlist([self._rows, k, T, used0, blank0, cached0, used_end, cached_end,
                             batch, waiting, swapped, running_end, waiting_end, idle,
                             context, growth, cpu_bound_until])
        self._run_crossings.fromlist(crossings)
        self._rows += k
        self._end = ends[-1]

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
            self._rows, take_f(self._single_floats).reshape(-1, len(_SINGLE_FLOATS)),
            take_i(self._singles).reshape(-1, len(_SINGLE_FIELDS)),
            take_f(self._run_floats).reshape(-1, len(_RUN_FLOATS)),
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

    A single step keeps its columns; a decode run only its parameters
    (``_RUN_FIELDS``, ``_RUN_FLOATS``) and its block crossings, whatever its
    length. So until a column is read, memory grows with the run's events
    (single steps and decode runs), not with its steps. A column read is kept
    (the same array on every read); the two time columns are expanded together,
    and so are the two block columns.
    """

    def __init__(self, num_rows: int, single_floats: NDArray[np.float64],
                 singles: NDArray[np.int64], run_floats: NDArray[np.float64],
                 runs: NDArray[np.int64], crossings: NDArray[np.int64]) -> None:
        self._n = num_rows
        self._single_floats, self._singles = single_floats, singles
        self._run_floats, self._runs = run_floats, runs
        # a run field's values side by side (a column of runs would be strided: slower to
        # read), made when first needed
        self._run_fields: dict[str, NDArray[np.int64]] = {}
        self._run_float_fields: dict[str, NDArray[np.float64]] = {}
        self._crossings = crossings.reshape(len(runs), -1) if len(runs) else crossings
        self._columns: dict[str, NDArray[Any]] = {}
        # the order of the events (single steps and runs) by row, and their lengths
        self._order: NDArray[np.intp] | None = None
        self._lengths: NDArray[np.int64] | None = None

    @property
    def num_rows(self) -> int:
        return self._n

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
        elif name in ("t_s", "dt_s"):
            self._columns["t_s"], self._columns["dt_s"] = self._times()
        elif name == "gap_s":
            self._columns[name] = self._gaps()
        else:
            self._columns[name] = self._constant(name)

    def _run_field(self, name: str) -> NDArray[np.int64]:
        values = self._run_fields.get(name)
        if values is None:
            values = self._run_fields[name] = np.ascontiguousarray(
                self._runs[:, _RUN_FIELDS.index(name)])
        return values

    def _run_float(self, name: str) -> NDArray[np.float64]:
        values = self._run_float_fields.get(name)
        if values is None:
            values = self._run_float_fields[name] = np.ascontiguousarray(
                self._run_floats[:, _RUN_FLOATS.index(name)])
        return values

    def _chunks(self) -> Iterator[tuple[slice, NDArray[np.int64], NDArray[np.int64],
                                         NDArray[np.int64], NDArray[np.int64]]]:
        """The runs in groups of consecutive ones of about ``_CHUNK_STEPS`` steps in all (so
        the expansion's temporaries stay that small): per group, its runs (a slice), their
        steps ``k`` and first positions ``start`` among the group's steps, and per step its
        index in its run ``j`` and its row."""
        steps = self._run_field("steps")
        upto = np.cumsum(steps)
        lo = 0
        while lo < len(steps):
            before = int(upto[lo - 1]) if lo else 0
            hi = max(lo + 1, int(np.searchsorted(upto, before + _CHUNK_STEPS, side="right")))
            runs = slice(lo, hi)
            k = steps[runs]
            start = np.cumsum(k) - k
            j = np.arange(int(upto[hi - 1]) - before) - np.repeat(start, k)
            yield runs, k, start, j, np.repeat(self._run_field("row")[runs], k) + j
            lo = hi

    def _times(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The end time and duration columns: a single step's as recorded, a run's steps'
        from its :data:`RunTiming`, summed one by one from its start."""
        t, dt = np.zeros(self._n), np.zeros(self._n)
        if len(self._singles):
            rows = self._singles[:, 0]
            t[rows] = self._single_floats[:, 0]
            dt[rows] = self._single_floats[:, 1]
        field, real = self._run_field, self._run_float
        for runs, k, start, j, rows in self._chunks():
            context = _per_step(field("context"), runs, k) + j * _per_step(field("growth"), runs, k)
            # the engine's expression, element by element: the same floats
            gpu = (_per_step(real("gpu_fixed_s"), runs, k)
                   + _per_step(real("s_per_token"), runs, k) * context)
            step_dt = np.where(context >= _per_step(field("cpu_bound_until"), runs, k), gpu,
                               _per_step(real("cpu_s"), runs, k))
            dt[rows] = step_dt
            t[rows] = _sums_from(real("t0")[runs], step_dt, k, start)
        return t, dt

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
        t = self["t_s"]
        gap = np.zeros(len(t))
        if len(t) > 1:
            np.subtract(t[1:], t[:-1], out=gap[1:])
        if len(self._runs):
            first = self._run_field("row")
            gap[first] = t[first] - self._run_float("t0")
        if len(self._singles):
            gap[self._singles[:, 0]] = self._single_floats[:, 2]
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
        cross = self._crossings
        bs = cross.shape[1]
        T, blank0 = self._run_field("T"), self._run_field("blank0")
        for runs, k, start, j, rows in self._chunks():
            # step T + j takes crossings[-(T + j) % bs] blocks: read from the flat crossings
            at = np.repeat(np.arange(runs.start, runs.stop) * bs, k)
            need = cross.ravel()[at + block_position(-(_per_step(T, runs, k) + j), bs)]
            need[j == 0] = 0                                   # the first step's were taken before
            total = np.cumsum(need)
            taken = total - np.repeat((total - need)[start], k)  # cumulative within each run
            used[rows] += taken
            cached[rows] -= np.maximum(0, taken - _per_step(blank0, runs, k))
        pos, k = self._run_field("row"), self._run_field("steps")
        last = pos + k - 1
        used[last] = self._run_field("used_end")
        cached[last] = self._run_field("cached_end")
        return used, cached


def _per_step(values: NDArray[Any], runs: slice, k: NDArray[np.int64]) -> NDArray[Any]:
    """The values of ``runs``, one a run, repeated for each of its ``k`` steps."""
    return np.repeat(values[runs], k)


def _sums_from(t0: NDArray[np.float64], steps: NDArray[np.float64], k: NDArray[np.int64],
               start: NDArray[np.int64]) -> NDArray[np.float64]:
    """Each run's running sums ``t0 + steps[0], (t0 + steps[0]) + steps[1], ...`` one addition
    at a time, as the engine summed them (``steps``: every run's steps, run after run, run
    ``i``'s ``k[i]`` of them from ``start[i]``). Runs of alike length are summed together, a
    row each of a padded block, by ``np.add.accumulate`` along the rows: sequential
    additions, so the same floats, in O(log longest run) numpy calls."""
    ends = np.empty_like(steps)
    width = np.left_shift(1, np.ceil(np.log2(k)).astype(np.int64))   # k's power of 2 or above
    for w in np.unique(width):
        runs = np.flatnonzero(width == w)
        offsets = np.arange(int(w))
        inside = offsets[None, :] < k[runs][:, None]
        where = (start[runs][:, None] + offsets[None, :])[inside]
        block = np.zeros((len(runs), int(w) + 1))
        block[:, 0] = t0[runs]
        block[:, 1:][inside] = steps[where]
        ends[where] = np.add.accumulate(block, axis=1)[:, 1:][inside]
    return ends


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
