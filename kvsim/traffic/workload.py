"""Requests and workloads: what reaches the engine, when, and how long it is.

Explained in chapter 2, *Optimistic admission and preemption* (the closed-loop
load test at 40, 80 and 120 concurrent users) and chapter 5, *Belgavi's Book
Store* (open-loop Poisson traffic, a burst, and replaying a real trace).

A :class:`Workload` is either

* **open loop** — arrivals fixed in advance, whatever the server does:
  :meth:`Workload.poisson`, :meth:`Workload.piecewise` (bursts),
  :meth:`Workload.from_trace` (the Azure LLM inference trace, or your own
  ``arrival_s`` file), :meth:`Workload.from_requests`, :meth:`Workload.from_arrays`.
  It holds read-only numpy arrays ``arrival_s`` (float64, sorted),
  ``prompt_tokens``, ``output_tokens`` and ``priority`` (int64);
* **closed loop** — :meth:`Workload.closed_loop`: ``users`` clients, each
  sending its next request ``think_s`` after its previous one finished. The
  engine drives it and asks :meth:`Workload.next_lengths` for the lengths of
  the k-th request it issues.

**Determinism and common random numbers.** Everything is a pure function of
its arguments and ``seed``: the same call gives byte-identical arrays. Random
numbers come from independent streams (arrival gaps, prompt lengths, output
lengths), each cut into fixed chunks of :data:`CHUNK` draws seeded by
``(seed, stream, chunk index)``. Hence request ``k`` gets the same uniforms
however many requests are generated, in whatever order they are asked for;
a longer window only appends arrivals; doubling the rate compresses the same
arrivals in time; and changing the output distribution changes no arrival
and no prompt, while every answer moves monotonically (sampling is by
inversion, see :mod:`kvsim.traffic.lengths`). So "the same traffic with longer
answers" is literally the same traffic.
"""
from __future__ import annotations

import io
import math
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any, NamedTuple, TypeAlias, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvsim.errors import KvsimError, check_float, check_int
from kvsim.files import read_user_bytes, write_user_file
from kvsim.units import MAX_SIMULATED_S

from . import libm
from .lengths import MAX_LENGTH, FloatArray, LengthDist, TokenArray, as_lengths

__all__ = ["Request", "Workload", "OpenColumns", "ClosedLoopPlan", "CHUNK", "MAX_REQUESTS",
           "MAX_ERRORS_DEFAULT", "TRACE_HEADERS",
           "MAX_TRACE_BYTES",
           "TIME_SCALE_RANGE", "check_time_scale"]

#: Random draws per seeded chunk of a stream (request ``k`` uses chunk ``k // CHUNK``).
CHUNK = 1024
#: Largest number of requests one generated workload may hold (and a closed loop may send).
MAX_REQUESTS = 10_000_000
#: How many refused requests end a closed-loop load test by default (``max_errors``): the
#: request count ``vllm bench serve`` runs by default (``--num-prompts 1000``), so a load test
#: refused that often has, by that tool's count, run its whole course on errors.
MAX_ERRORS_DEFAULT = 1000

_ARRIVALS, _PROMPT, _OUTPUT, _FOLLOWUP, _TURNS, _PREFIX_GROUP = 0, 1, 2, 3, 4, 5
#: The largest Zipf exponent ``with_shared_prefix(popularity=...)`` takes (at 10 the first
#: prefix already takes 99.9% of the requests).
MAX_POPULARITY: float = 10

_Number = TypeVar("_Number", bound=np.generic)

#: A length as the constructors take it: a whole number of tokens or a distribution.
LengthsLike: TypeAlias = int | LengthDist
#: Where :meth:`Workload.from_trace` reads a trace: a path, or a file open for reading.
TraceSource: TypeAlias = str | os.PathLike[str] | IO[str] | IO[bytes]

#: The largest trace file :meth:`Workload.from_trace` reads: 256 MiB, about six million rows
#: of the Azure format (the Azure conversation trace's hour is 0.7 MB).
MAX_TRACE_BYTES = 256 * 2**20
#: The range of ``time_scale`` (a replay from a thousandth to a thousand times the trace's
#: rate): beyond it every arrival of an hour-long trace falls within milliseconds, or a
#: minute's trace stretches past :data:`kvsim.units.MAX_SIMULATED_S`.
TIME_SCALE_RANGE = (0.001, 1000)

#: Trace headers :meth:`Workload.from_trace` understands (the header decides the format).
TRACE_HEADERS = (
    "TIMESTAMP,ContextTokens,GeneratedTokens",
    "arrival_s,prompt_tokens,output_tokens",
    "arrival_s,prompt_tokens,output_tokens,priority",
)


# ---------------------------------------------------------------------------------------------
# Requests


@dataclass(frozen=True)
class Request:
    """One request: when it arrives, how long its prompt is, how many tokens it will generate.

    ``priority``: a lower value is served first (as in vLLM's priority
    scheduling); it only matters with ``scheduling_policy="priority"``.
    """

    arrival_s: float
    prompt_tokens: int
    output_tokens: int
    priority: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "arrival_s", check_float("arrival_s", self.arrival_s, min=0,
                                                          max=MAX_SIMULATED_S,
                                                          why="seconds, about 116 days"))
        object.__setattr__(self, "prompt_tokens",
                           check_int("prompt_tokens", self.prompt_tokens, min=1, max=MAX_LENGTH))
        object.__setattr__(self, "output_tokens",
                           check_int("output_tokens", self.output_tokens, min=1, max=MAX_LENGTH))
        object.__setattr__(self, "priority",
                           check_int("priority", self.priority, min=-2**62, max=2**62))


# ---------------------------------------------------------------------------------------------
# Seeded streams


def check_time_scale(value: object) -> float:
    """``time_scale`` in :data:`TIME_SCALE_RANGE` (the CLI's ``--time-scale`` too)."""
    lo, hi = TIME_SCALE_RANGE
    return check_float("time_scale", value, min=lo, max=hi,
                       why="a thousandth to a thousand times the trace's rate")


def _check_seed(seed: object) -> int:
    return check_int("seed", seed, min=0, max=2**63 - 1)


def _chunk_uniforms(seed: int, stream: int, j: int) -> FloatArray:
    return np.random.default_rng([seed, stream, j]).random(CHUNK)


def _uniforms(seed: int, stream: int, start: int, count: int) -> FloatArray:
    """Uniforms number ``start .. start+count-1`` of a stream (independent of chunking)."""
    if count <= 0:
        return np.empty(0)
    j0, j1 = start // CHUNK, (start + count - 1) // CHUNK
    u = np.concatenate([_chunk_uniforms(seed, stream, j) for j in range(j0, j1 + 1)])
    off = start - j0 * CHUNK
    return u[off:off + count]


def _draw_lengths(seed: int, stream: int, dist: LengthDist, start: int, count: int) -> TokenArray:
    """Lengths number ``start .. start+count-1`` of ``stream`` from ``dist``: the one length draw.

    By inversion of the stream's uniforms, so a request keeps its rank in any distribution.
    """
    return dist.ppf(_uniforms(seed, stream, start, count)).astype(np.int64)


def _lengths(seed: int, prompt: LengthDist, output: LengthDist, start: int,
             count: int) -> tuple[TokenArray, TokenArray]:
    """Prompt and output lengths of requests ``start .. start+count-1``."""
    return (_draw_lengths(seed, _PROMPT, prompt, start, count),
            _draw_lengths(seed, _OUTPUT, output, start, count))


def _unit_epochs(seed: int, total: float) -> FloatArray:
    """Arrival epochs of a rate-1 Poisson process that fall in ``[0, total)``."""
    if total <= 0:
        return np.empty(0)
    gaps, acc, j = [], 0.0, 0
    while acc <= total * (1 + 1e-9) + 1.0:     # margin: the exact cumsum is taken below
        g = -libm.log1p(-_chunk_uniforms(seed, _ARRIVALS, j))
        gaps.append(g)
        acc += float(g.sum())
        j += 1
    epochs = np.cumsum(np.concatenate(gaps))
    return epochs[:np.searchsorted(epochs, total, side="left")]


def _readonly(array: NDArray[_Number]) -> NDArray[_Number]:
    a = np.ascontiguousarray(array)
    if a.flags.writeable:
        a = a.copy() if a.base is not None else a
        a.setflags(write=False)
    return a


def _numeric_array(name: str, values: object, expected: str) -> NDArray[np.number[Any]]:
    """``values`` as a numeric numpy array (at least 1-d); the first non-number is a KvsimError."""
    try:
        raw = np.array(values, ndmin=1)
    except (TypeError, ValueError):             # ragged rows, say
        raise KvsimError(f"{name}={values!r:.60} is not a flat array of numbers: "
                         f"{expected}") from None
    if raw.dtype.kind in "biuf" and raw.dtype.kind != "b":
        return raw.astype(np.float64) if name == "arrival_s" else raw
    flat = raw.reshape(-1)
    for i, v in enumerate(flat.tolist()):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise KvsimError(f"{name}[{i}]={v!r:.60} is not a number: {expected}")
    return raw.astype(np.float64) if name == "arrival_s" else raw


def _fmt_n(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.3g}"


# ---------------------------------------------------------------------------------------------
# Workload


class Workload:
    """Open- or closed-loop traffic for :func:`kvsim.simulate` (see the module docstring).

    Build one with :meth:`poisson`, :meth:`piecewise`, :meth:`closed_loop`,
    :meth:`from_trace`, :meth:`from_requests` or :meth:`from_arrays`.

    Attributes (``None`` where they do not apply):

    * ``is_closed_loop`` — ``False`` for open loop.
    * open loop: ``arrival_s`` (float64, sorted), ``prompt_tokens``,
      ``output_tokens``, ``priority`` (int64) — read-only arrays.
    * closed loop: ``users``, ``think_s``, ``ramp_s``, ``user_start_s``
      (user ``i`` sends its first request at ``i * ramp_s / users``),
      ``request_priority`` (the priority of every request).
    * both: ``duration_s`` (open loop: the arrival window; closed loop: no
      request is sent at or after it), ``prompt`` and ``output`` (the length
      distributions, when the workload was generated from them), ``seed``,
      ``source`` (a short description of where it came from);
      ``prefix_tokens`` and ``prefix_groups`` (a shared system prompt: the
      first ``prefix_tokens`` of every prompt are identical within each of
      ``prefix_groups`` groups; 0 = none, see :meth:`with_shared_prefix`) and
      ``prefix_popularity`` (how requests pick a group: 0 in turn, else the
      exponent of a Zipf law).
    * closed loop with conversations: ``turns`` (the distribution of turns
      per conversation) and ``followup`` (the length of each later turn's new
      message).
    """

    # The state, set once by _make (annotations only: an unset field is no class attribute).
    is_closed_loop: bool
    arrival_s: FloatArray | None
    prompt_tokens: TokenArray | None
    output_tokens: TokenArray | None
    priority: TokenArray | None
    users: int | None
    think_s: float | None
    ramp_s: float | None
    user_start_s: FloatArray | None
    request_priority: int | None
    duration_s: float
    prompt: LengthDist | None
    output: LengthDist | None
    seed: int | None
    source: str
    prefix_tokens: int
    prefix_groups: int
    prefix_popularity: float
    turns: LengthDist | None
    followup: LengthDist | None
    max_errors: int | None
    _cache: dict[tuple[int, int], list[int]]

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise KvsimError("Workload(...) is not called directly: expected one of Workload.poisson, "
                         "Workload.piecewise, Workload.closed_loop, Workload.from_trace, "
                         "Workload.from_requests, Workload.from_arrays")

    @classmethod
    def _make(cls, **fields: object) -> Workload:
        w = object.__new__(cls)
        state: dict[str, object] = dict(
            is_closed_loop=False, arrival_s=None, prompt_tokens=None, output_tokens=None,
            priority=None, users=None, think_s=None, ramp_s=None, user_start_s=None,
            request_priority=None, duration_s=None, prompt=None, output=None, seed=None,
            source="", prefix_tokens=0, prefix_groups=1, prefix_popularity=0.0, turns=None,
            followup=None,
            max_errors=None)
        state.update(fields)
        w.__dict__.update(state)
        w.__dict__["_cache"] = {}
        return w

    def __setstate__(self, state: dict[str, object]) -> None:   # pickling keeps the arrays read-only
        for k, v in state.items():
            self.__dict__[k] = _readonly(v) if isinstance(v, np.ndarray) else v

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Workload is immutable; {name!r} cannot be set "
                             "(use capped(), scaled() or a constructor to make a new one)")

    # ---- open loop -------------------------------------------------------------------------

    @classmethod
    def from_arrays(cls, arrival_s: ArrayLike, prompt_tokens: ArrayLike, output_tokens: ArrayLike,
                    priority: ArrayLike | None = None, *, duration_s: float | None = None,
                    source: str = "arrays") -> Workload:
        """An open-loop workload from equal-length arrays (sorted stably by arrival).

        ``duration_s`` (the arrival window) defaults to the last arrival.
        """
        a = _numeric_array("arrival_s", arrival_s, "expected a finite number >= 0")
        n = a.size
        cols: dict[str, TokenArray] = {}
        for name, col in (("prompt_tokens", prompt_tokens), ("output_tokens", output_tokens),
                          ("priority", np.zeros(n, np.int64) if priority is None else priority)):
            raw = _numeric_array(name, col, "expected integers")
            if raw.shape != (n,):
                raise KvsimError(f"{name} has shape {raw.shape}: expected ({n},) like arrival_s")
            if raw.dtype.kind == "f":
                bad = np.flatnonzero(~np.isfinite(raw) | (raw != np.floor(raw)))
                if bad.size:
                    i = int(bad[0])
                    raise KvsimError(f"{name}[{i}]={raw[i].item()!r} is not a whole number: "
                                     "expected integers")
            elif raw.dtype.kind not in "iu" and n:
                raise KvsimError(f"{name} has dtype {raw.dtype}: expected integers")
            cols[name] = raw.astype(np.int64) if n else np.zeros(0, np.int64)
        if a.ndim != 1:
            raise KvsimError(f"arrival_s has shape {a.shape}: expected a 1-d array")
        bad = np.flatnonzero(~np.isfinite(a) | (a < 0) | (a > MAX_SIMULATED_S))
        if bad.size:
            i = int(bad[0])
            raise KvsimError(f"arrival_s[{i}]={a[i].item()!r} is out of range: "
                             f"expected a finite number in [0, {MAX_SIMULATED_S:,}] (seconds, "
                             "about 116 days)")
        for name in ("prompt_tokens", "output_tokens"):
            col = cols[name]
            bad = np.flatnonzero((col < 1) | (col > MAX_LENGTH))
            if bad.size:
                i = int(bad[0])
                raise KvsimError(f"{name}[{i}]={int(col[i])} is out of range: "
                                 f"expected an integer [1, {MAX_LENGTH}]")
        order = np.argsort(a, kind="stable")
        if n and not (order == np.arange(n)).all():
            a = a[order]
            cols = {k: v[order] for k, v in cols.items()}
        if duration_s is None:
            duration_s = float(a[-1]) if n else 0.0
        return cls._make(arrival_s=_readonly(a), prompt_tokens=_readonly(cols["prompt_tokens"]),
                         output_tokens=_readonly(cols["output_tokens"]),
                         priority=_readonly(cols["priority"]),
                         duration_s=float(duration_s), source=source)

    @classmethod
    def from_requests(cls, requests: object) -> Workload:
        """An open-loop workload from a list of :class:`Request`, tuples or dicts.

        Tuples are ``(arrival_s, prompt_tokens, output_tokens[, priority])``;
        dicts use those names. The result is sorted stably by arrival, so
        requests arriving at the same instant keep the given order.
        """
        if isinstance(requests, (str, bytes)) or not isinstance(requests, Iterable):
            raise KvsimError(f"requests={requests!r:.60} is not a list: expected a list of "
                             "Request or (arrival_s, prompt_tokens, output_tokens[, priority])")
        rows: list[tuple[float, int, int, int]] = []
        for i, r in enumerate(requests):
            try:
                if isinstance(r, Request):
                    req = r
                elif isinstance(r, dict):
                    req = Request(**r)
                elif isinstance(r, (tuple, list)) and len(r) in (3, 4):
                    req = Request(*r)
                else:
                    raise KvsimError(f"{r!r:.60} is not a request: expected a Request, a dict "
                                     "or a tuple (arrival_s, prompt_tokens, output_tokens"
                                     "[, priority])")
            except KvsimError as e:
                raise KvsimError(f"requests[{i}]: {e}") from None
            except TypeError as e:
                raise KvsimError(f"requests[{i}]={r!r:.60} is not a request: {e}") from None
            rows.append((req.arrival_s, req.prompt_tokens, req.output_tokens, req.priority))
        if not rows:
            return cls.from_arrays([], [], [], [], source="requests")
        a, p, o, pr = zip(*rows, strict=True)
        return cls.from_arrays(a, p, o, pr, source="requests")

    @classmethod
    def poisson(cls, rate_per_s: float, duration_s: float, prompt: LengthsLike = 850,
                output: LengthsLike = 250, seed: int = 0, priority: int = 0) -> Workload:
        """Poisson arrivals at ``rate_per_s`` in ``[0, duration_s)`` (exponential gaps).

        ``prompt`` and ``output`` are token counts or distributions from
        :mod:`kvsim.traffic.lengths` (defaults: Belgavi's 850-token prompts and
        250-token answers). Arrival ``k`` at rate ``r`` is arrival ``k`` at
        rate 1 divided by ``r``.
        """
        rate = check_float("rate_per_s", rate_per_s, min=0.0)
        duration = check_float("duration_s", duration_s, min=0.0, min_open=True)
        w = cls._piecewise([(duration, rate)], prompt, output, seed, priority)
        w.__dict__["source"] = f"Poisson arrivals at {rate:g} req/s"
        return w

    @classmethod
    def piecewise(cls, segments: object, prompt: LengthsLike = 850, output: LengthsLike = 250,
                  seed: int = 0, priority: int = 0) -> Workload:
        """Poisson arrivals with a piecewise-constant rate: ``[(duration_s, rate_per_s), ...]``.

        Segments follow each other from t = 0; a rate of 0 is a quiet spell.
        ``[(60, 1.5), (20, 6.0), (60, 1.5)]`` is a 20-second burst at four
        times the base rate. A single segment gives exactly :meth:`poisson`.
        """
        if isinstance(segments, (str, bytes)) or not isinstance(segments, Iterable):
            raise KvsimError(f"segments={segments!r:.60} is not a list: expected "
                             "[(duration_s, rate_per_s), ...]")
        segs: list[tuple[float, float]] = []
        for i, seg in enumerate(segments):
            if not isinstance(seg, (tuple, list)) or len(seg) != 2:
                raise KvsimError(f"segments[{i}]={seg!r:.60} is not a pair: expected "
                                 "(duration_s, rate_per_s)")
            segs.append((check_float(f"segments[{i}] duration_s", seg[0], min=0.0, min_open=True),
                         check_float(f"segments[{i}] rate_per_s", seg[1], min=0.0)))
        if not segs:
            raise KvsimError("segments=[] is empty: expected at least one (duration_s, rate_per_s)")
        w = cls._piecewise(segs, prompt, output, seed, priority)
        w.__dict__["source"] = "piecewise Poisson arrivals (" + ", ".join(
            f"{r:g} req/s for {d:g} s" for d, r in segs) + ")"
        return w

    @classmethod
    def _piecewise(cls, segs: list[tuple[float, float]], prompt_lengths: LengthsLike,
                   output_lengths: LengthsLike, seed_given: object,
                   priority_given: object) -> Workload:
        prompt = as_lengths(prompt_lengths, "prompt")
        output = as_lengths(output_lengths, "output")
        seed = _check_seed(seed_given)
        priority = check_int("priority", priority_given, min=-2**62, max=2**62)
        durations = np.array([d for d, _ in segs], dtype=np.float64)
        rates = np.array([r for _, r in segs], dtype=np.float64)
        t_start = np.concatenate([[0.0], np.cumsum(durations)])        # segment boundaries
        lam = np.concatenate([[0.0], np.cumsum(durations * rates)])    # cumulative intensity
        total, end = float(lam[-1]), float(t_start[-1])
        if total > MAX_REQUESTS:
            raise KvsimError(f"rate x duration = {total:,.0f} expected requests is out of range: "
                             f"expected at most {MAX_REQUESTS:,}")
        e = _unit_epochs(seed, total)
        # Invert the cumulative intensity; side="right" skips zero-rate segments.
        seg = np.clip(np.searchsorted(lam, e, side="right") - 1, 0, len(segs) - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = t_start[seg] + (e - lam[seg]) / rates[seg]
        t = np.maximum.accumulate(t) if t.size else t
        t = t[t < end]
        p, o = _lengths(seed, prompt, output, 0, t.size)
        return cls._make(arrival_s=_readonly(t), prompt_tokens=_readonly(p),
                         output_tokens=_readonly(o),
                         priority=_readonly(np.full(t.size, priority, dtype=np.int64)),
                         duration_s=end, prompt=prompt, output=output, seed=seed)

    # ---- traces ----------------------------------------------------------------------------

    @classmethod
    def from_trace(cls, path_or_file: TraceSource, *, time_scale: float = 1.0,
                   start_s: float | None = None, duration_s: float | None = None,
                   limit: int | None = None) -> Workload:
        """Replay a trace CSV; its header decides the format (see :data:`TRACE_HEADERS`).

        * ``TIMESTAMP,ContextTokens,GeneratedTokens`` — the Azure LLM inference
          trace (timestamps such as ``2023-11-16 18:15:46.6805900``); arrivals
          are measured from the first row, which arrives at 0.0 s.
        * ``arrival_s,prompt_tokens,output_tokens[,priority]`` — your own
          trace, arrival times in seconds (>= 0), used as given.

        Rows must be in time order (equal times allowed): an out-of-order row
        is an error naming its line, never silently re-sorted, because a
        shuffled log usually means a merge went wrong. Blank lines are
        skipped; token counts must be whole numbers >= 1. Every bad row is a
        :class:`KvsimError` naming the line number and the value.

        ``start_s`` and ``duration_s`` pick the window ``[start_s, start_s +
        duration_s)`` in the trace's own seconds, and the window's start
        becomes t = 0; ``limit`` then keeps at most that many requests;
        finally ``time_scale`` divides every arrival time (2.0 replays the
        traffic twice as fast: the same requests at double the rate).
        """
        time_scale = check_time_scale(time_scale)
        if start_s is not None:
            start_s = check_float("start_s", start_s, min=0.0, max=MAX_SIMULATED_S)
        if duration_s is not None:
            duration_s = check_float("duration_s", duration_s, min=0.0, min_open=True,
                                     max=MAX_SIMULATED_S)
        if limit is not None:
            limit = check_int("limit", limit, min=1)
        name, t, p, o, pr = _read_trace(path_or_file)
        t_all, span = t, float(t[-1])
        if start_s is not None or duration_s is not None:
            lo = start_s or 0.0
            hi = lo + duration_s if duration_s is not None else math.inf
            i0 = int(np.searchsorted(t, lo, side="left"))
            i1 = int(np.searchsorted(t, hi, side="left"))
            t, p, o, pr = t[i0:i1] - lo, p[i0:i1], o[i0:i1], pr[i0:i1]
            if t.size == 0:
                raise KvsimError(f"start_s={lo:g} with duration_s={duration_s} selects no request "
                                 f"of trace {name}: expected a window overlapping its arrivals, "
                                 f"[{float(t_all[0]):g}, {span:g}] s")
        if limit is not None:
            t, p, o, pr = t[:limit], p[:limit], o[:limit], pr[:limit]
        window = duration_s if duration_s is not None else float(t[-1])
        if time_scale != 1.0:
            t = t / time_scale
            window = window / time_scale
        src = f"trace {name}"
        if time_scale != 1.0:
            src += f" at {time_scale:g}x speed"
        return cls._make(arrival_s=_readonly(t), prompt_tokens=_readonly(p),
                         output_tokens=_readonly(o), priority=_readonly(pr),
                         duration_s=float(window), source=src)

    def to_csv(self, path_or_file: str | os.PathLike[str] | IO[str]) -> None:
        """Write an open-loop workload as an ``arrival_s,prompt_tokens,output_tokens`` trace.

        A ``priority`` column is added when any priority is not 0. Arrival
        times are written exactly, so :meth:`from_trace` reads back the same
        arrays. A path is written only if it is new, empty or a trace of this
        format already (never a folder, a device, a FIFO or another file:
        :func:`kvsim.files.write_user_file`); an open file is written as given.
        """
        open_loop = self.open_columns("to_csv()")
        with_pr = bool(open_loop.priority.size and open_loop.priority.any())
        head = TRACE_HEADERS[2] if with_pr else TRACE_HEADERS[1]
        cols: list[Iterable[object]] = [map(repr, open_loop.arrival_s.tolist()),
                                        open_loop.prompt_tokens.tolist(),
                                        open_loop.output_tokens.tolist()]
        if with_pr:
            cols.append(open_loop.priority.tolist())
        body = "".join(",".join(map(str, row)) + "\n" for row in zip(*cols, strict=True))
        text = head + "\n" + body
        if isinstance(path_or_file, (str, os.PathLike)):
            write_user_file(path_or_file, text, what="trace", ours=_is_written_trace,
                            expected="a trace CSV kvsim wrote (header "
                                     f"{TRACE_HEADERS[1]!r})")
        elif hasattr(path_or_file, "write"):
            path_or_file.write(text)
        else:
            raise KvsimError(f"path_or_file={path_or_file!r:.60} is not a path or an open file: "
                             "expected a file path or a text file open for writing")

    # ---- closed loop -----------------------------------------------------------------------

    @classmethod
    def closed_loop(cls, users: int, duration_s: float, prompt: LengthsLike = 850,
                    output: LengthsLike = 250, think_s: float = 0.0, ramp_s: float = 0.0,
                    seed: int = 0, priority: int = 0, turns: LengthsLike | None = None,
                    followup: LengthsLike | None = None,
                    max_errors: int = MAX_ERRORS_DEFAULT) -> Workload:
        """``users`` concurrent clients, the way load tests "at 40, 80, 120 concurrent" run.

        User ``i`` sends its first request at ``i * ramp_s / users``; each
        following one ``think_s`` after its previous request finished; no
        request is sent at or after ``duration_s``. The engine issues the
        requests and asks :meth:`next_lengths` for their lengths.

        A request the server refuses (one that can never run: HTTP 400) counts
        as a failed request and its user sends the next one ``think_s`` later
        (at least a round trip later), with no back-off, as ``vllm bench
        serve`` and LLMPerf do; after ``max_errors`` refusals (default
        :data:`MAX_ERRORS_DEFAULT`, at most :data:`MAX_REQUESTS`) the load test
        stops sending, as GuideLLM's ``max_errors`` constraint stops a
        benchmark, and the result says so (``result.counters["load_stopped_s"]``
        and ``["load_stop_reason"]``). So a run ends even when every request is
        refused. It also stops after :data:`MAX_REQUESTS` requests.

        ``turns`` (a count or a length distribution; default: every request
        stands alone) makes each user's requests conversations: a later
        turn's prompt is the previous prompt and answer plus a new message of
        ``followup`` tokens (default: drawn like ``prompt``), so the history is
        resent and can hit the prefix cache (chapter 3).
        """
        n_users = check_int("users", users, min=1, max=1_000_000)
        duration = check_float("duration_s", duration_s, min=0.0, min_open=True)
        think = check_float("think_s", think_s, min=0.0)
        ramp = check_float("ramp_s", ramp_s, min=0.0)
        prompt_dist = as_lengths(prompt, "prompt")
        output_dist = as_lengths(output, "output")
        seed_checked = _check_seed(seed)
        priority_checked = check_int("priority", priority, min=-2**62, max=2**62)
        errors_allowed = check_int("max_errors", max_errors, min=1, max=MAX_REQUESTS)
        starts = np.arange(n_users, dtype=np.float64) * ramp / n_users
        source = f"closed loop of {n_users} users"
        turns_dist = followup_dist = None
        if turns is not None:
            turns_dist = as_lengths(turns, "turns")
            followup_dist = as_lengths(followup if followup is not None else prompt_dist,
                                       "followup")
            source += f", conversations of {turns_dist.describe()} turns"
        elif followup is not None:
            raise KvsimError("followup is set without turns: expected turns (a count or a "
                             "distribution) when later turns carry new messages")
        return cls._make(is_closed_loop=True, users=n_users, think_s=think, ramp_s=ramp,
                         user_start_s=_readonly(starts), request_priority=priority_checked,
                         duration_s=duration, prompt=prompt_dist, output=output_dist,
                         seed=seed_checked, source=source, turns=turns_dist,
                         followup=followup_dist, max_errors=errors_allowed)

    def next_lengths(self, k: int) -> tuple[int, int]:
        """``(prompt_tokens, output_tokens)`` of the k-th request issued (k = 0, 1, 2, ...).

        Closed loop only. The answer depends on ``seed`` and ``k`` alone, not
        on how many requests were asked for before or in which order.
        """
        if not self.is_closed_loop or self.prompt is None or self.output is None \
                or self.seed is None:
            raise KvsimError("next_lengths() is for closed-loop workloads: an open-loop workload "
                             "holds its lengths in prompt_tokens and output_tokens")
        if type(k) is not int or k < 0:
            k = check_int("k", k, min=0)
        return (self._draw(_PROMPT, self.prompt, self.seed, k),
                self._draw(_OUTPUT, self.output, self.seed, k))

    def next_followup(self, k: int) -> int:
        """The new message of the k-th issued request when it continues a conversation."""
        if self.followup is None or self.seed is None:
            raise KvsimError("next_followup() is for closed loops of conversations: expected a "
                             "workload made with Workload.closed_loop(..., turns=...)")
        return self._draw(_FOLLOWUP, self.followup, self.seed, k)

    def turns_of(self, conversation: int) -> int:
        """How many turns conversation number ``conversation`` (0, 1, ...) lasts."""
        if self.turns is None or self.seed is None:
            raise KvsimError("turns_of() is for closed loops of conversations: expected a "
                             "workload made with Workload.closed_loop(..., turns=...)")
        return self._draw(_TURNS, self.turns, self.seed, conversation)

    def _draw(self, stream: int, dist: LengthDist, seed: int, k: int) -> int:
        """Draw number ``k`` of ``stream`` from ``dist``, cached a chunk at a time."""
        j, i = divmod(k, CHUNK)
        chunk = self._cache.get((stream, j))
        if chunk is None:
            chunk = self._cache[(stream, j)] = _draw_lengths(
                seed, stream, dist, j * CHUNK, CHUNK).tolist()
        return chunk[i]

    def with_shared_prefix(self, tokens: int, groups: int = 1, *,
                           popularity: float = 0.0) -> Workload:
        """The same traffic where the first ``tokens`` of every prompt are a shared system prompt.

        Requests fall into ``groups`` groups, each with its own prefix (a system
        prompt, a document); a prompt shorter than the prefix shares all of
        itself. With ``popularity=0`` they take the groups in turn (open loop:
        request ``i`` in group ``i % groups``; closed loop: user ``u`` in group
        ``u % groups``): every prefix equally often and, for a cache that keeps
        the most recently used, always the one used longest ago. With
        ``popularity=s > 0`` each request (closed loop: each user) draws its
        group from a Zipf law, group ``k`` (from 0) with a probability in
        proportion to ``1 / (k + 1) ** s``, from the workload's seed (0 for a
        workload without one): a few popular prefixes and a long tail, as
        real system prompts and documents are used. A prefix longer than
        every prompt (the longest prompt of an open loop, or the largest
        length a closed loop's prompt distribution can draw) has one meaning,
        not an error: within a group, each prompt is the start of one shared
        text (``with_shared_prefix(10**9)``: a shorter prompt is wholly shared
        with every longer one of its group). It is kept as given, and
        :attr:`source` (so :meth:`describe`) says so. Lengths and arrivals are
        unchanged: only what the prefix cache can find changes (chapter 3).
        """
        tokens = check_int("tokens", tokens, min=1, max=MAX_LENGTH)
        groups = check_int("groups", groups, min=1, max=MAX_REQUESTS)
        popularity = check_float("popularity", popularity, min=0, max=MAX_POPULARITY,
                                 why="0 for groups in turn, else a Zipf exponent")
        longest = self._longest_prompt()
        whole = (f" (longer than every prompt, the longest {longest:,} tokens: each prompt is "
                 "wholly the group's shared text)") if tokens > longest else ""
        how = f", picked by a Zipf law of exponent {popularity:g}" if popularity and groups > 1 else ""
        state = {k: v for k, v in self.__dict__.items() if k != "_cache"}
        state.update(prefix_tokens=tokens, prefix_groups=groups, prefix_popularity=popularity,
                     source=f"{self.source}, a shared prefix of {tokens:,} tokens"
                            + (f" in {groups:,} groups" if groups > 1 else "") + how + whole)
        return Workload._make(**state)

    def prefix_groups_of(self, count: int) -> TokenArray:
        """The shared-prefix group of the first ``count`` requests (closed loop: users).

        In turn (``i % prefix_groups``) or, with :attr:`prefix_popularity`, drawn
        from its Zipf law by inverting one seeded uniform each (so a request keeps
        its group whatever ``count`` is asked).
        """
        count = check_int("count", count, min=0, max=MAX_REQUESTS)
        groups = self.prefix_groups
        if not self.prefix_popularity or groups == 1:
            return np.arange(count, dtype=np.int64) % groups
        weights = libm.power(np.arange(1, groups + 1, dtype=np.float64), -self.prefix_popularity)
        cdf = np.cumsum(weights)
        cdf /= cdf[-1]
        u = _uniforms(self.seed or 0, _PREFIX_GROUP, 0, count)
        picked: TokenArray = np.minimum(np.searchsorted(cdf, u, side="right"), groups - 1)
        return picked.astype(np.int64)

    def _longest_prompt(self) -> int:
        """The longest prompt this workload can hold (MAX_LENGTH when unbounded or empty)."""
        if not self.is_closed_loop:
            prompts = self.open_columns("_longest_prompt()").prompt_tokens
            return int(prompts.max()) if prompts.size else MAX_LENGTH
        top = None if self.prompt is None else self.prompt.support_max
        return MAX_LENGTH if top is None else int(top)

    def lengths_for(self, n: int) -> tuple[TokenArray, TokenArray]:
        """Arrays of ``(prompt_tokens, output_tokens)`` for the first ``n`` issued requests.

        Closed loop only; element ``k`` equals ``next_lengths(k)``.
        """
        if not self.is_closed_loop or self.prompt is None or self.output is None \
                or self.seed is None:
            raise KvsimError("lengths_for() is for closed-loop workloads: an open-loop workload "
                             "holds its lengths in prompt_tokens and output_tokens")
        n = check_int("n", n, min=0, max=MAX_REQUESTS)
        p, o = _lengths(self.seed, self.prompt, self.output, 0, n)
        return _readonly(p), _readonly(o)

    # ---- transformations -------------------------------------------------------------------

    def capped(self, max_tokens: int) -> Workload:
        """A new workload whose outputs are ``min(output, max_tokens)`` (the ``max_tokens`` fix).

        Arrivals and prompts are unchanged; a closed loop caps what
        :meth:`next_lengths` returns.
        """
        c = check_int("max_tokens", max_tokens, min=1, max=MAX_LENGTH)
        state = {k: v for k, v in self.__dict__.items() if k != "_cache"}
        if self.output is not None:
            state["output"] = self.output.capped(c)
        state["source"] = f"{self.source}, outputs capped at {c:,} tokens"
        if not self.is_closed_loop:
            outputs = self.open_columns("capped()").output_tokens
            state["output_tokens"] = _readonly(np.minimum(outputs, c))
        return Workload._make(**state)

    def scaled(self, time_scale: float) -> Workload:
        """The same open-loop requests with arrival times divided by ``time_scale``.

        ``time_scale`` 2.0 is twice the rate. A closed loop is paced by the
        engine, so it cannot be scaled (change ``users`` or ``think_s``).
        """
        s = check_time_scale(time_scale)
        arrivals = self.open_columns("scaled()").arrival_s
        state = {k: v for k, v in self.__dict__.items() if k != "_cache"}
        state["arrival_s"] = _readonly(arrivals / s)
        state["duration_s"] = self.duration_s / s
        state["source"] = f"{self.source}, time scaled {s:g}x"
        return Workload._make(**state)

    # ---- inspection ------------------------------------------------------------------------

    def open_columns(self, what: str) -> OpenColumns:
        """An open loop's four arrays; for a closed loop, a one-line error saying that ``what``
        (the caller, e.g. ``"len()"``) needs an open loop."""
        if self.is_closed_loop or self.arrival_s is None or self.prompt_tokens is None \
                or self.output_tokens is None or self.priority is None:
            raise KvsimError(f"{what} needs an open-loop workload: a closed loop's requests only "
                             "exist once the engine issues them (use next_lengths(k))")
        return OpenColumns(self.arrival_s, self.prompt_tokens, self.output_tokens, self.priority)

    def closed_loop_plan(self, what: str) -> ClosedLoopPlan:
        """A closed loop's users and pacing; for an open loop, a one-line error saying that
        ``what`` (the caller) needs a closed loop."""
        if not self.is_closed_loop or self.user_start_s is None or self.think_s is None \
                or self.request_priority is None:
            raise KvsimError(f"{what} needs a closed-loop workload: an open loop's requests "
                             "arrive at fixed times (use open_columns())")
        # a workload pickled before max_errors existed has none: the default then
        errors = self.__dict__.get("max_errors") or MAX_ERRORS_DEFAULT
        return ClosedLoopPlan(self.user_start_s, self.think_s, self.request_priority, errors)

    def __len__(self) -> int:
        """Number of requests (open loop only)."""
        return int(self.open_columns("len()").arrival_s.size)

    def requests(self) -> list[Request]:
        """The requests as a list of :class:`Request` (open loop; handy for small workloads)."""
        cols = self.open_columns("requests()")
        return [Request(a, p, o, q) for a, p, o, q in zip(
            cols.arrival_s.tolist(), cols.prompt_tokens.tolist(), cols.output_tokens.tolist(),
            cols.priority.tolist(), strict=True)]

    def describe(self) -> str:
        """One paragraph: what arrives, how often, and how long prompts and answers are."""
        if self.is_closed_loop:
            return (f"Closed loop: {self.users:,} users for {_fmt_n(self.duration_s)} s, each "
                    f"sending its next request {_fmt_n(self.think_s or 0.0)} s after the previous "
                    f"one finished (first requests spread over {_fmt_n(self.ramp_s or 0.0)} s); "
                    f"prompts: {_described(self.prompt)}; answers: {_described(self.output)}; "
                    f"seed {self.seed}.")
        cols = self.open_columns("describe()")
        n = len(self)
        if n == 0:
            return f"No requests in {_fmt_n(self.duration_s)} s ({self.source})."
        rate = f" ({n / self.duration_s:.2f} req/s)" if self.duration_s > 0 else ""

        def stats(col: TokenArray) -> str:
            p50, p95 = np.quantile(col, [0.5, 0.95], method="inverted_cdf").tolist()
            return f"mean {_fmt_n(col.mean())}, p50 {p50:,}, p95 {p95:,} tokens"

        text = (f"{n:,} requests over {_fmt_n(self.duration_s)} s{rate}, {self.source}; "
                f"prompts: {stats(cols.prompt_tokens)}; answers: {stats(cols.output_tokens)}")
        if self.prompt is not None and self.output is not None:
            text += f"; drawn from prompts {self.prompt._params()}, answers {self.output._params()}"
        if self.seed is not None:
            text += f", seed {self.seed}"
        return text + "."

    def __repr__(self) -> str:
        if self.is_closed_loop:
            return (f"<Workload closed loop: {self.users:,} users, {_fmt_n(self.duration_s)} s, "
                    f"seed {self.seed}>")
        return f"<Workload open loop: {len(self):,} requests, {self.source}>"


class OpenColumns(NamedTuple):
    """An open-loop workload's arrays (read-only): see :meth:`Workload.open_columns`."""

    arrival_s: FloatArray
    prompt_tokens: TokenArray
    output_tokens: TokenArray
    priority: TokenArray


class ClosedLoopPlan(NamedTuple):
    """A closed loop's users and pacing: see :meth:`Workload.closed_loop_plan`."""

    user_start_s: FloatArray
    think_s: float
    request_priority: int
    max_errors: int


def _described(dist: LengthDist | None) -> str:
    return "none" if dist is None else dist.describe()


# ---------------------------------------------------------------------------------------------
# Trace reading


def _is_written_trace(data: bytes) -> bool:
    """Whether a file starts as :meth:`Workload.to_csv` writes (so it may be replaced)."""
    first = data.split(b"\n", 1)[0].strip().decode("utf-8", "replace")
    return first in (TRACE_HEADERS[1], TRACE_HEADERS[2])


def _row_error(name: str, lineno: int, msg: str) -> KvsimError:
    return KvsimError(f"trace {name} line {lineno}: {msg}")


def _read_trace(path_or_file: TraceSource) -> tuple[str, FloatArray, TokenArray, TokenArray,
                                                     TokenArray]:
    """Parse a trace; returns ``(name, arrival_s, prompt, output, priority)`` arrays."""
    name, data = _trace_bytes(path_or_file)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.splitlines()
    h, columns = _trace_header(name, lines)
    table = _TraceTable(name, columns, lines[h + 1:], first=h + 2, quoted=b'"' in data)
    prompt = table.int_column(1, 1, MAX_LENGTH)
    output = table.int_column(2, 1, MAX_LENGTH)
    priority = (table.int_column(3, -2**62, 2**62) if len(columns) == 4
                else np.zeros(table.n_rows, np.int64))
    if columns[0] == "TIMESTAMP":                       # the Azure format: in order of its ticks
        t, ticks = table.azure_times()
        table.check_time_order(ticks)
    else:
        t = table.arrival_seconds()
        table.check_time_order(t)
    return name, t, prompt, output, priority


def _trace_bytes(path_or_file: TraceSource) -> tuple[str, bytes]:
    """A trace's name (for errors) and its bytes, from an open file or a path."""
    if hasattr(path_or_file, "read"):
        name = os.path.basename(str(getattr(path_or_file, "name", "<file>")))
        data = path_or_file.read()
        return name, data.encode("utf-8") if isinstance(data, str) else data
    if not isinstance(path_or_file, (str, os.PathLike)):
        raise KvsimError(f"trace={path_or_file!r:.60} is not a path: expected a file path or "
                         "an open file")
    name = os.path.basename(os.fspath(path_or_file))
    return name, read_user_bytes(path_or_file, what="trace", max_bytes=MAX_TRACE_BYTES,
                                 expected="a readable trace CSV file")


def _trace_header(name: str, lines: list[bytes]) -> tuple[int, list[str]]:
    """The index of a trace's header line (the first that is not blank) and its column names
    as :data:`TRACE_HEADERS` spells them; an unknown header is a one-line error."""
    h = next((i for i, line in enumerate(lines) if line.strip()), None)
    if h is None:
        raise KvsimError(f"trace {name} is empty: expected a header, one of "
                         + " | ".join(TRACE_HEADERS))
    header = tuple(c.strip().strip(b'"').decode("utf-8", "replace").lower()
                   for c in lines[h].split(b","))
    known = {tuple(x.lower().split(",")): x for x in TRACE_HEADERS}
    if header not in known:
        shown = lines[h].decode("utf-8", "replace")[:80]
        raise KvsimError(f"trace {name} line {h + 1}: header {shown!r} is not known: expected one "
                         "of " + " | ".join(TRACE_HEADERS))
    return h, known[header].split(",")


class _TraceTable:
    """A trace's rows below its header, split into columns, each bad value a one-line error
    naming its line."""

    def __init__(self, name: str, columns: list[str], body: list[bytes], *, first: int,
                 quoted: bool) -> None:
        self.name, self.columns = name, columns
        self.first = first                              # line number of body[0]
        self.rows, self.linenos = _split_rows(body, first, quoted=quoted)
        if not self.rows:
            raise KvsimError(f"trace {name} has a header but no rows: expected at least one "
                             f"request")
        if len(self.rows) > MAX_REQUESTS:
            raise KvsimError(f"trace {name} has {len(self.rows):,} rows: expected at most "
                             f"{MAX_REQUESTS:,} requests (kvsim's largest workload)")
        ncol = len(columns)
        if set(map(len, self.rows)) != {ncol}:
            i = next(i for i, r in enumerate(self.rows) if len(r) != ncol)
            raise self.error(i, f"{len(self.rows[i])} columns: expected {ncol} "
                                f"({','.join(columns)})")
        self.cols = list(zip(*self.rows, strict=True))
        self.n_rows = len(self.rows)

    def line_of(self, i: int) -> int:
        return self.first + i if self.linenos is None else self.linenos[i]

    def error(self, i: int, msg: str) -> KvsimError:
        return _row_error(self.name, self.line_of(i), msg)

    def int_column(self, j: int, lo: int, hi: int) -> TokenArray:
        """Column ``j`` as integers in ``[lo, hi]``."""
        try:
            vals = np.array(list(map(int, self.cols[j])), dtype=np.int64)
            bad = np.flatnonzero((vals < lo) | (vals > hi))
            i = int(bad[0]) if bad.size else None
        except (ValueError, OverflowError):
            i = next(i for i, v in enumerate(self.cols[j]) if not _int_within(v, lo, hi))
        if i is None:
            return vals
        raise self.error(i, f"{self.columns[j]}={_shown_cell(self.cols[j][i])} is not valid: "
                            f"expected an integer in [{lo}, {hi}]")

    def azure_times(self) -> tuple[FloatArray, NDArray[np.int64]]:
        """The Azure format's TIMESTAMP column: seconds since the first row, and the ticks."""
        stamps = [v.strip() for v in self.cols[0]]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                ns = np.array(stamps).astype("datetime64[ns]")
            ok = not np.isnat(ns).any()
        except (ValueError, TypeError, Warning):
            ok = False
        if not ok:
            i = next(i for i, v in enumerate(stamps) if not _parses(_parse_stamp, v))
            raise self.error(i, f"TIMESTAMP={_shown_cell(self.cols[0][i])} is not a time: "
                                "expected a time such as '2023-11-16 18:15:46.6805900'")
        ticks = ns.astype(np.int64)
        return (ticks - ticks[0]) / 1e9, ticks

    def arrival_seconds(self) -> FloatArray:
        """The arrival_s column: finite seconds in [0, MAX_SIMULATED_S]."""
        try:
            t = np.array(list(map(float, self.cols[0])), dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(t) | (t < 0) | (t > MAX_SIMULATED_S))
            bad_row = int(bad[0]) if bad.size else None
        except ValueError:
            bad_row = next(i for i, v in enumerate(self.cols[0]) if not _parses(float, v))
        if bad_row is not None:
            raise self.error(bad_row, f"arrival_s={_shown_cell(self.cols[0][bad_row])} is not "
                                      f"valid: expected a finite number of seconds in "
                                      f"[0, {MAX_SIMULATED_S:,}]")
        return t

    def check_time_order(self, order_values: NDArray[np.int64] | FloatArray) -> None:
        """Rows must be in time order (equal times allowed): never silently re-sorted."""
        back = np.flatnonzero(np.diff(order_values) < 0)
        if back.size:
            i = int(back[0]) + 1
            raise self.error(i, f"{self.columns[0]}={_shown_cell(self.cols[0][i])} is earlier "
                                f"than the row before it ({_shown_cell(self.cols[0][i - 1])}): "
                                "expected rows in time order (sort the file by time)")


def _split_rows(body: list[bytes], first: int, *,
                quoted: bool) -> tuple[list[Sequence[str | bytes]], list[int] | None]:
    """A trace's rows split at commas, and their line numbers (``None``: row ``i`` is on line
    ``first + i``). Quoted fields go through the csv module; blank lines are skipped."""
    if quoted:
        import csv  # deferred: only a trace with quoted fields needs it, not every start-up

        text = b"\n".join(body).decode("utf-8", "replace")
        reader = csv.reader(io.StringIO(text))
        rows: list[Sequence[str | bytes]] = []
        linenos: list[int] = []
        for row in reader:
            if row:
                rows.append(row)
                linenos.append(first + reader.line_num - 1)
        return rows, linenos
    if all(body):
        return [line.split(b",") for line in body], None
    keep = [i for i, line in enumerate(body) if line]
    return [body[i].split(b",") for i in keep], [first + i for i in keep]


def _shown_cell(v: str | bytes) -> str:
    return repr(v.decode("utf-8", "replace") if isinstance(v, bytes) else v)


def _int_within(v: str | bytes, lo: int, hi: int) -> bool:
    try:
        return lo <= int(v) <= hi
    except ValueError:
        return False


def _parse_stamp(v: str | bytes) -> np.datetime64:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = np.datetime64(v.decode() if isinstance(v, bytes) else v, "ns")
    if np.isnat(x):
        raise ValueError("not a time")
    return x


def _parses(fn: Callable[[str | bytes], object], v: str | bytes) -> bool:
    try:
        fn(v)
        return True
    except (ValueError, TypeError, OverflowError, Warning):
        return False
