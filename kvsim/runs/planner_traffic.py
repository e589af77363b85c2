"""The planner's traffic at any request rate: generated Poisson arrivals, or a trace rescaled.

:func:`kvsim.plan` asks the same question at many rates: "does this configuration
hold its SLO at ``r`` requests per second?". Each traffic here answers
``at(rate_per_s, seed, span_s)`` with an open-loop :class:`kvsim.Workload`
of ``span_s`` seconds at that mean rate, and ``digest()`` with a hex string
that names its content exactly (the run cache's key holds it instead of the
workload, which is not plain data).

* :class:`GeneratedTraffic`: Poisson arrivals with the given prompt and
  answer length distributions; ``seed`` is the workload's seed. By
  :class:`kvsim.Workload`'s common random numbers, a higher rate compresses
  the same requests in time.
* :class:`ReplayedTraffic`: a trace's requests in their order (for example
  the Azure LLM inference trace read by :meth:`kvsim.Workload.from_trace`)
  with every arrival time divided by ``rate / trace rate``, so that its mean
  rate is ``rate``; the trace repeats end to end as often as the span
  needs, and seed ``k`` starts ``k`` spans into that repetition (seed 0: at
  the trace's start), so seeds are different stretches of the same traffic.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
from dataclasses import dataclass

import numpy as np

from kvsim.errors import KvsimError
from kvsim.traffic.lengths import LengthDist, as_lengths
from kvsim.traffic.workload import MAX_REQUESTS, Workload

__all__ = ["GeneratedTraffic", "ReplayedTraffic", "as_traffic"]


def _plain_dist(dist: LengthDist) -> object:
    """A length distribution as JSON-ready data: its class and every field (nested ones too)."""
    out: dict[str, object] = {"class": type(dist).__name__}
    if not dataclasses.is_dataclass(dist):
        raise KvsimError(f"the length distribution {dist!r:.60} is a {type(dist).__name__}, not a "
                         f"dataclass: expected one of kvsim's (Fixed, Geometric, LogNormal, ...), "
                         f"whose fields key the planner's run cache")
    for f in dataclasses.fields(dist):
        if not f.init:
            continue
        value = getattr(dist, f.name)
        out[f.name] = _plain_dist(value) if isinstance(value, LengthDist) else (
            list(value) if isinstance(value, tuple) else value)
    return out


@dataclass(frozen=True)
class GeneratedTraffic:
    """Poisson arrivals with ``prompt`` and ``output`` lengths (see the module docstring)."""

    prompt: LengthDist
    output: LengthDist

    def at(self, rate_per_s: float, seed: int, span_s: float) -> Workload:
        return Workload.poisson(rate_per_s, span_s, prompt=self.prompt, output=self.output,
                                seed=seed)

    def digest(self) -> str:
        text = json.dumps({"poisson": [_plain_dist(self.prompt), _plain_dist(self.output)]},
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def mean_output_tokens(self) -> float:
        return float(self.output.mean)


@dataclass(frozen=True, eq=False)
class ReplayedTraffic:
    """A trace's requests at any mean rate, repeated as needed (see the module docstring)."""

    arrival_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    priority: np.ndarray
    period_s: float          # the trace's span: it repeats every period_s seconds
    source: str

    @classmethod
    def from_workload(cls, workload: object) -> ReplayedTraffic:
        if not isinstance(workload, Workload) or workload.is_closed_loop:
            raise KvsimError(f"trace={workload!r:.80} is not an open-loop workload: expected a "
                             f"Workload read by kvsim.Workload.from_trace (or a trace file path)")
        n = len(workload)
        period = float(workload.duration_s)
        if n == 0 or not period > 0:
            raise KvsimError(f"trace {workload.source!r} has {n} requests over {period:g} s: "
                             f"expected at least one request and a span > 0 s to rescale")
        columns = workload.open_columns("the planner's trace")
        return cls(columns.arrival_s, columns.prompt_tokens, columns.output_tokens,
                   columns.priority, period, workload.source)

    @property
    def trace_rate_per_s(self) -> float:
        return self.arrival_s.size / self.period_s

    def at(self, rate_per_s: float, seed: int, span_s: float) -> Workload:
        factor = rate_per_s / self.trace_rate_per_s       # > 1: faster than the trace
        period = self.period_s / factor
        times = self.arrival_s / factor
        start = seed * span_s
        first, last = math.floor(start / period), math.ceil((start + span_s) / period)
        if (last - first) * times.size > MAX_REQUESTS:
            raise KvsimError(f"rate_per_s={rate_per_s:g} replays trace {self.source!r} "
                             f"{last - first:,} times over {span_s:g} s: expected at most "
                             f"{MAX_REQUESTS:,} requests (a lower max_rate_per_s)")
        copies = np.arange(first, last)
        arrivals = (times[None, :] + copies[:, None] * period).ravel() - start
        keep = (arrivals >= 0) & (arrivals < span_s)
        reps = copies.size

        def tiled(col: np.ndarray) -> np.ndarray:
            return np.tile(col, reps)[keep]

        return Workload.from_arrays(arrivals[keep], tiled(self.prompt_tokens),
                                    tiled(self.output_tokens), tiled(self.priority),
                                    duration_s=span_s,
                                    source=f"{self.source} at {rate_per_s:g} req/s")

    def digest(self) -> str:
        h = hashlib.sha256(b"replayed trace\0")
        for col in (self.arrival_s, self.prompt_tokens, self.output_tokens, self.priority):
            h.update(np.ascontiguousarray(col).tobytes())
            h.update(b"\0")
        h.update(repr(self.period_s).encode())
        return h.hexdigest()

    def mean_output_tokens(self) -> float:
        return float(self.output_tokens.mean())


def as_traffic(trace: object, prompt: object, output: object) -> GeneratedTraffic | ReplayedTraffic:
    """The traffic :func:`kvsim.plan` was given: a trace (a Workload or a trace file's path),
    else Poisson arrivals with ``prompt`` and ``output`` lengths."""
    if trace is None:
        return GeneratedTraffic(as_lengths(prompt, "prompt"), as_lengths(output, "output"))
    if isinstance(trace, (str, os.PathLike)):
        return ReplayedTraffic.from_workload(Workload.from_trace(trace))
    return ReplayedTraffic.from_workload(trace)
