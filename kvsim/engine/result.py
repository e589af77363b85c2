"""Simulation results: per-request and per-step tables, pauses, and the summary.

``SimResult.summary()`` returns exactly the keys of the public contract
(design §4). Definitions, all over the measurement window ``[warmup_s, end]``:

* ``throughput_tok_s`` — every token the engine *processed* per second: prefill
  tokens (recomputed ones included) plus decode tokens.
* ``goodput_tok_s`` — output tokens delivered to clients per second. Most of
  the gap between the two is prompt tokens, which throughput counts; a
  recompute adds to throughput and delivers nothing new, and its tokens are
  ``recomputed_tokens`` below (the "preemption tax": report it on its own).
* ``requests_arrived`` counts every request that arrived in the window;
  ``requests_rejected`` those the scheduler refused because they could never
  run (``unfit_requests="reject"``: a prompt of ``max_model_len`` tokens or
  more, which a vLLM server answers with HTTP 400, or one the pool can never
  hold). Everything below is over the requests it served.
* ``preemptions_per_1k`` — preemptions per 1,000 requests served that arrived
  in the window.
* ``ttft_*`` — time to first token over the requests that arrived in the
  window; a request still waiting for its first token when the run stops
  counts with the time it has waited so far (a lower bound), so an overloaded
  server can never report a small TTFT just because its queue never moved.
* ``itl_*`` — inter-token latency over every streamed token after the first
  (a resumed request's first token after a pause counts as one long gap).
* ``max_gap_s`` and ``share_paused_over_1s`` (the share of requests that
  started streaming whose longest gap exceeded one second) come from the same
  gaps; a pause still open when the run stops counts up to the end.
* requests belong to the window by *arrival* time (their TTFT, gaps and
  recomputed tokens count in it), preemptions and tokens by the *time they
  happen*;
* ``kv_usage_mean`` and ``mean_running`` are time-weighted (idle time counts as
  an empty cache); ``kv_usage_max`` and ``max_waiting`` are per-step maxima.
  KV usage counts blocks held by requests, partly filled ones included;
  cached-free blocks count as free (vLLM's ``kv_cache_usage_perc``).
* ``engine`` — the mode that ran (``"v1"`` or ``"v0"``).
* ``recomputed_tokens`` — tokens computed again after a preemption;
  ``rescued_tokens`` — tokens a resumed request found in the prefix cache
  instead (its own blocks, freed but not yet reused);
  ``recompute_rescued_share`` = rescued / (rescued + recomputed);
  ``loaded_tokens`` — tokens copied back from a host tier instead of computed
  (vLLM's ``kv_offloading_size``, SGLang's HiCache, TensorRT-LLM V2's resumed
  requests; 0 without a tier).
* ``prefix_cache_hit_rate`` — prompt tokens found cached at first admission,
  over the prompt tokens looked up (vLLM's prefix-cache hits / queries, which
  also leave resumed requests out).

Explained in chapter 4, *Detection*.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from kvsim.errors import KvsimError, check_float

from .timeline import longest_stint_gaps

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from .requests import RequestTable
    from .timeline import Recorder

__all__ = ["Table", "Deferred", "SimResult", "SUMMARY_KEYS", "weighted_quantile",
           "weighted_quantiles", "time_to_first_token", "build_result"]

SUMMARY_KEYS = (
    "requests_arrived", "requests_finished", "preemptions", "preemptions_per_1k",
    "recomputed_tokens", "swapped_out_bytes", "ttft_p50_s", "ttft_p95_s", "ttft_p99_s",
    "itl_p50_s", "itl_p99_s", "max_gap_s", "share_paused_over_1s", "throughput_tok_s",
    "goodput_tok_s", "kv_usage_mean", "kv_usage_max", "max_waiting", "mean_running",
    "simulated_s", "engine", "rescued_tokens", "prefix_cache_hit_rate", "recompute_rescued_share",
    "requests_rejected", "vllm_version", "loaded_tokens",
)


class Deferred:
    """A column of ``length`` rows that :class:`Table` computes (``compute()``) when it is
    first read, and keeps."""

    __slots__ = ("length", "compute")

    def __init__(self, length: int, compute: Callable[[], ArrayLike]) -> None:
        self.length, self.compute = length, compute


class Table(Mapping[str, "NDArray[Any]"]):
    """Read-only columns of equal length: ``table["t_s"]`` is a numpy array.

    A column given as a :class:`Deferred` is computed when first read, once
    (the same array on every read after)."""

    def __init__(self, columns: Mapping[str, NDArray[Any] | Sequence[Any] | Deferred]) -> None:
        lengths = {v.length if isinstance(v, Deferred) else len(v) for v in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of unequal length: {sorted(lengths)}")
        self._cols: dict[str, NDArray[Any] | Deferred] = {}
        for k, v in columns.items():
            self._cols[k] = v if isinstance(v, Deferred) else _read_only(v)
        self._n = lengths.pop() if lengths else 0

    def __getitem__(self, name: str) -> NDArray[Any]:
        try:
            column = self._cols[name]
        except KeyError:
            raise KeyError(f"no column {name!r}: columns are {', '.join(self._cols)}") from None
        if isinstance(column, Deferred):
            column = self._cols[name] = _read_only(column.compute())
        return column

    def __iter__(self) -> Iterator[str]:
        return iter(self._cols)

    def __len__(self) -> int:
        return len(self._cols)

    @property
    def columns(self) -> list[str]:
        return list(self._cols)

    @property
    def num_rows(self) -> int:
        return self._n

    def to_dict(self) -> dict[str, list[Any]]:
        """Plain Python lists (JSON-ready)."""
        return {k: self[k].tolist() for k in self._cols}

    def __repr__(self) -> str:
        return f"Table({self._n} rows: {', '.join(self._cols)})"


def _read_only(values: ArrayLike) -> NDArray[Any]:
    a = np.asarray(values)
    a.setflags(write=False)
    return a


def weighted_quantile(values: ArrayLike, weights: ArrayLike, q: float) -> float:
    """The smallest value whose cumulative weight reaches ``q`` of the total.

    (The "inverted CDF" definition: an actual sample, never an interpolation.)
    """
    return weighted_quantiles(values, weights, (q,))[0]


def weighted_quantiles(values: ArrayLike, weights: ArrayLike,
                       qs: Sequence[float]) -> list[float]:
    """:func:`weighted_quantile` at each of ``qs``, the values sorted once."""
    values = np.asarray(values, dtype=float)
    weights = np.asarray(weights, dtype=float)
    keep = weights > 0
    values, weights = values[keep], weights[keep]
    if values.size == 0:
        return [0.0 for _ in qs]
    order = np.argsort(values, kind="stable")
    cw = np.cumsum(weights[order])
    ordered = values[order]
    return [float(ordered[min(int(np.searchsorted(cw, q * cw[-1], side="left")),
                              values.size - 1)]) for q in qs]


def time_to_first_token(arrival_s: NDArray[np.float64], first_token_s: NDArray[np.float64], *,
                        waited_until: float | None = None) -> NDArray[np.float64]:
    """Each request's time to first token (s), the one definition of TTFT.

    A request with no first token yet (``first_token_s`` NaN) gets NaN, or with
    ``waited_until`` the time it has waited by then (a lower bound: what the
    summary counts, so a queue that never moved never reports a small TTFT).
    """
    if waited_until is not None:
        first_token_s = np.where(np.isnan(first_token_s), waited_until, first_token_s)
    return first_token_s - arrival_s


@dataclass(frozen=True)
class SimResult:
    """What one simulation produced.

    Attributes:
        requests: per-request columns (``arrival_s``, ``first_token_s``,
            ``finish_s``, ``prompt_tokens``, ``output_tokens``,
            ``generated_tokens``, ``preemptions``, ``recomputed_tokens``,
            ``max_gap_s``, ``ttft_s``, ``priority``, ``swaps``, ``paused_s``,
            ``first_scheduled_s``: the start of the step that first admitted it;
            ``rejected``: why it was refused, 0 if served, see
            :data:`kvsim.engine.fit.REJECTION_REASONS`);
            NaN where a request has not reached that point.
        timeline: one row per engine step, state *after* the step (``t_s``,
            ``dt_s``, ``kv_blocks_used``, ``kv_blocks_cached``, ``running``,
            ``waiting``, ``swapped``, ``preemptions``, ``decoding``,
            ``prefill_tokens``, ``decode_tokens``, ``emitted_tokens``,
            ``swap_out_bytes``, ``swap_in_bytes``, ``gap_s``, ``recomputed_tokens``:
            the step's prefill tokens that had been computed before a preemption).
        pauses: every pause of every request (``request``, ``start_s``,
            ``end_s``, ``mode`` 0 = recompute, 1 = swap); ``end_s`` is NaN while
            a request is still paused when the run stops.
        events: every preemption (``t_s``, ``request``, ``mode``).
        config: the settings: the resolved engine options (block counts,
            limits, costs), ``model`` and ``gpu``.
        counters: the run's totals: ``simulated_s`` (the clock when it
            stopped) and the prefix cache's ``prefix_cache_queries``,
            ``prefix_cache_hits`` (fresh requests' tokens looked up and found),
            ``prefix_cache_resumed_queries``, ``prefix_cache_resumed_hits``
            (the same for requests resumed after a preemption) and
            ``prefix_cache_evicted_blocks``; with a host tier its totals,
            ``kv_offload_*``.
        host_tier: with a host tier (``kv_offloading_size``,
            ``enable_hierarchical_cache``), what it did, a row each (None
            without one): ``t_s``, ``request``, ``op``
            (:class:`kvsim.engine.blocks.host_tier.TierOp`: 0 a store's copy to
            the host done, one per request and step; 1 a load's copy back, logged
            when it is done (SGLang's, which overlaps the step that admits the
            request, at that step's start); 2 a store dropped for lack of room),
            ``blocks``, ``bytes`` (the GPU blocks' bytes) and ``seconds`` (the
            copy's time on the PCIe link; 0 for a dropped store).
    """

    requests: Table
    timeline: Table
    pauses: Table
    events: Table
    config: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, Any] = field(default_factory=dict)
    host_tier: Table | None = None

    @property
    def simulated_s(self) -> float:
        """Simulated time when the run stopped."""
        return float(self.counters["simulated_s"])

    @property
    def total_blocks(self) -> int:
        return int(self.config["num_gpu_blocks"])

    def summary(self, warmup_s: float | None = None) -> dict[str, float | int | str]:
        """The contract's summary (design §4) over ``[warmup_s, end]``.

        ``warmup_s`` defaults to the run's ``warmup_s`` option (0 unless set):
        requests that arrived before it and steps that ended before it are left
        out, so a warmed-up server's steady state can be measured.
        """
        if warmup_s is None:
            warmup_s = float(self.config.get("warmup_s", 0.0))
        end = self.simulated_s
        warmup_s = check_float("warmup_s", warmup_s, min=0)
        if warmup_s > 0 and warmup_s >= end:
            raise KvsimError(f"warmup_s={warmup_s} is out of range: expected a number in [0, {end}) "
                             "(the simulated time)")
        rq, tl, pz = self.requests, self.timeline, self.pauses
        arrived = rq["arrival_s"] >= warmup_s
        rejected = arrived & (rq["rejected"] > 0) if "rejected" in rq else np.zeros_like(arrived)
        in_win = arrived & ~rejected               # the requests the engine served
        n_arr = int(in_win.sum())
        fin = in_win & ~np.isnan(rq["finish_s"])
        n_fin = int(fin.sum())
        ev_in = self.events["t_s"] > warmup_s if self.events.num_rows else np.zeros(0, bool)
        n_pre = int(ev_in.sum())

        step_in = tl["t_s"] > warmup_s
        # Part of the first step in the window may lie before warmup_s; clip.
        dt = np.where(step_in, np.minimum(tl["dt_s"], tl["t_s"] - warmup_s), 0.0)
        window = end - warmup_s

        def per_s(x: float | np.number[Any]) -> float:
            return float(x) / window if window > 0 else 0.0
        total_blocks = self.total_blocks

        started = ~np.isnan(rq["first_token_s"])
        ttft = time_to_first_token(rq["arrival_s"][in_win], rq["first_token_s"][in_win],
                                   waited_until=end)

        # Inter-token gaps: regular decode tokens (one per decoding sequence per
        # step, each seeing that step's gap) plus one sample per resume.
        gaps = [tl["gap_s"][step_in]]
        wts = [tl["decoding"][step_in].astype(float)]
        resumed = ~np.isnan(pz["end_s"])
        if pz.num_rows:
            pz_in = resumed & (pz["end_s"] > warmup_s)
            gaps.append(pz["end_s"][pz_in] - pz["start_s"][pz_in])
            wts.append(np.ones(int(pz_in.sum())))
        gaps_v, wts_v = np.concatenate(gaps), np.concatenate(wts)
        itl_p50, itl_p99 = weighted_quantiles(gaps_v, wts_v, (0.50, 0.99))

        # longest gap per request, open pauses counted up to the end
        longest = rq["max_gap_s"].copy()
        if pz.num_rows and (~resumed).any():
            open_ = ~resumed
            np.maximum.at(longest, pz["request"][open_], end - pz["start_s"][open_])
        maxgap = longest[in_win]
        maxgap_started = longest[in_win & started]

        recomputed = int(rq["recomputed_tokens"][in_win].sum())
        rescued = int(rq["rescued_tokens"][in_win].sum())
        loaded = int(rq["loaded_tokens"][in_win].sum()) if "loaded_tokens" in rq else 0
        looked_up = int(rq["prefix_lookup_tokens"][in_win].sum())

        def q(a: NDArray[np.float64], p: float) -> float:
            return float(np.quantile(a, p, method="inverted_cdf")) if a.size else 0.0

        return {
            "requests_arrived": int(arrived.sum()),
            "requests_finished": n_fin,
            "preemptions": n_pre,
            "preemptions_per_1k": 1000.0 * n_pre / n_arr if n_arr else 0.0,
            "recomputed_tokens": recomputed,
            "swapped_out_bytes": int(tl["swap_out_bytes"][step_in].sum()),
            "ttft_p50_s": q(ttft, 0.50),
            "ttft_p95_s": q(ttft, 0.95),
            "ttft_p99_s": q(ttft, 0.99),
            "itl_p50_s": itl_p50,
            "itl_p99_s": itl_p99,
            "max_gap_s": float(maxgap.max()) if maxgap.size else 0.0,
            "share_paused_over_1s": float(np.mean(maxgap_started > 1.0)) if maxgap_started.size else 0.0,
            "throughput_tok_s": per_s(tl["prefill_tokens"][step_in].sum()
                                      + tl["decode_tokens"][step_in].sum()),
            "goodput_tok_s": per_s(tl["emitted_tokens"][step_in].sum()),
            "kv_usage_mean": per_s((tl["kv_blocks_used"] * dt).sum() / total_blocks),
            "kv_usage_max": float(tl["kv_blocks_used"][step_in].max() / total_blocks) if step_in.any() else 0.0,
            "max_waiting": int(tl["waiting"][step_in].max()) if step_in.any() else 0,
            "mean_running": per_s((tl["running"] * dt).sum()),
            "simulated_s": end,
            "engine": str(self.config.get("engine", "v1")),
            "rescued_tokens": rescued,
            "prefix_cache_hit_rate": (int(rq["prefix_hit_tokens"][in_win].sum()) / looked_up
                                      if looked_up else 0.0),
            "recompute_rescued_share": rescued / (rescued + recomputed)
            if rescued + recomputed else 0.0,
            "requests_rejected": int(rejected.sum()),
            "vllm_version": str(self.config.get("vllm_version", "")),
            "loaded_tokens": loaded,
        }

    def __repr__(self) -> str:
        s = self.summary(warmup_s=0.0)  # whatever the run's warm-up, a repr never raises
        return (f"SimResult({s['requests_finished']}/{s['requests_arrived']} requests finished in "
                f"{s['simulated_s']:.1f} s, {s['preemptions']} preemptions, "
                f"{self.timeline.num_rows} steps)")


def host_tier_table(log: Sequence[tuple[float, int, int, int]], block_bytes: int,
                    pcie_bytes_per_s: float) -> Table:
    """``result.host_tier`` from the scheduler's log of ``(t_s, request, op, blocks)``."""
    columns = list(zip(*log, strict=True)) if log else [(), (), (), ()]
    blocks = np.asarray(columns[3], dtype=np.int64)
    op = np.asarray(columns[2], dtype=np.int64)
    nbytes = blocks * block_bytes
    return Table({"t_s": np.asarray(columns[0], dtype=float),
                  "request": np.asarray(columns[1], dtype=np.int64), "op": op,
                  "blocks": blocks, "bytes": nbytes,
                  "seconds": np.where(op == 2, 0.0, nbytes / pcie_bytes_per_s)})


def build_result(reqs: RequestTable, rec: Recorder, config: dict[str, Any],
                 counters: dict[str, Any], host_tier: Table | None = None) -> SimResult:
    """Assemble a :class:`SimResult` from a finished run's request table
    (:class:`kvsim.engine.requests.RequestTable`), recorder
    (:class:`kvsim.engine.timeline.Recorder`), settings, counters and host-tier log."""
    # The timeline stays compact (decode runs as their parameters) until a column is read;
    # so does max_gap_s, which needs its gaps.
    compact = rec.timeline(final=True)
    timeline = Table({name: Deferred(compact.num_rows, partial(compact.__getitem__, name))
                      for name in compact})
    n = reqs.count
    max_gap = Deferred(n, partial(_max_gap_s, reqs.column("max_gap", float),
                                  np.frombuffer(rec.stints, dtype=np.int64).copy(), timeline))
    arrival = reqs.column("arrival", float)
    first = reqs.column("first_token", float)

    def ints(name: str) -> NDArray[Any]:
        return reqs.column(name, np.int64)

    requests: dict[str, NDArray[Any] | Deferred] = {
        "arrival_s": arrival, "first_token_s": first,
        "finish_s": reqs.column("finish", float),
        "ttft_s": time_to_first_token(arrival, first),
        "prompt_tokens": ints("prompt"), "output_tokens": ints("output"),
        "generated_tokens": ints("generated"), "preemptions": ints("preemptions"),
        "recomputed_tokens": ints("recomputed"), "rescued_tokens": ints("rescued"),
        "swaps": ints("swaps"), "max_gap_s": max_gap,
        "paused_s": reqs.column("paused", float), "priority": ints("priority"),
        "truncated": ints("truncated"), "prefix_lookup_tokens": ints("lookup_tokens"),
        "prefix_hit_tokens": ints("hit_tokens"),
        "first_scheduled_s": reqs.column("first_scheduled", float),
        "rejected": ints("rejected"),
    }
    if config.get("kv_offloading_size") is not None or config.get("enable_hierarchical_cache") \
            or config.get("use_kv_cache_manager_v2"):
        # the host tier's column, when one runs (TensorRT-LLM V2's: its resumed requests)
        requests["loaded_tokens"] = ints("loaded")
    return SimResult(Table(requests), timeline, Table(rec.pause_table()),
                     Table(rec.event_table()), config, counters, host_tier)


def _max_gap_s(own: NDArray[np.float64], stints: NDArray[np.int64],
               timeline: Table) -> NDArray[np.float64]:
    """The requests' ``max_gap_s``: the longest of their own gaps (pauses, first tokens)
    and of the steps' gaps while they decoded."""
    return np.maximum(own, longest_stint_gaps(stints, timeline["gap_s"], len(own)))
