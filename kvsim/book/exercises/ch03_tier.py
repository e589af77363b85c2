"""Chapter 3's host-tier section (*Recompute plus a host tier*): its runs, prediction and exercise.

vLLM V1 recomputes a preempted request; its native CPU tier (``--kv-offloading-size``, GiB:
kvsim's ``kv_offloading_size``) keeps a copy of each prompt's full blocks, so a request that
misses the GPU's prefix cache loads them over PCIe instead. Two workloads, five seeds each:

* **Belgavi's storm** (scenario ``belgavi-long``: answers of about 600 tokens overload the
  server and preempt hundreds of requests), the tier at each size of :data:`STORM_SIZES`;
* **shared documents** (:func:`documents_run`): the same server answering questions about
  :data:`DOCUMENTS` documents of :data:`DOCUMENT_TOKENS` tokens, asked in turn, a working
  set larger than the GPU's cache, with no tier, a tier smaller than the set, one that holds
  it, and that tier behind a shared 4 GB/s link.

Every figure comes from kvsim runs or from its cost model; nothing is typed in.
"""
from __future__ import annotations

import statistics
from functools import cache
from typing import Any

from kvsim.engine.costs import recompute_time_s, swap_time_s
from kvsim.engine.loop import simulate
from kvsim.engine.result import SimResult
from kvsim.model.hardware import get_gpu
from kvsim.model.memory import kv_bytes_per_token
from kvsim.traffic.lengths import Geometric
from kvsim.traffic.workload import Workload
from kvsim.units import GB

from ..charts.host_tier import host_tier_data, size_label
from .base import Exercise, Prediction
from .setups import BELGAVI

__all__ = ["SEEDS", "STORM", "STORM_SIZES", "PREDICT_SIZE", "DOCUMENTS", "DOCUMENT_TOKENS",
           "DOCUMENT_SIZES", "SHARED_LINK", "storm_rows", "documents_run", "documents_rows",
           "recompute_cut", "paired_change", "EX_DOCUMENT_TOKENS", "TIER_EXERCISES", "TIER_PREDICTIONS"]

#: Belgavi's server (Llama-2-7B on 60% of an A40), as :data:`.setups.BELGAVI` gives it.
MODEL, GPU = str(BELGAVI["model"]), str(BELGAVI["gpu"])
UTILIZATION: float = BELGAVI["gpu_memory_utilization"]
#: The chapter's five seeds (the same as ``ch03.SEEDS``).
SEEDS = tuple(range(5))
#: The storm: Belgavi's server when answers grew to about 600 tokens.
STORM = "belgavi-long"
#: The tier sizes the chart compares (GiB; None: no tier).
STORM_SIZES: tuple[float | None, ...] = (None, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: The size the Predict box asks about.
PREDICT_SIZE = 4.0
#: The shared-documents workload: documents, their tokens, the question and answer lengths,
#: the rate, and the measured window after a warm-up.
DOCUMENTS = 20
DOCUMENT_TOKENS = 1_800
QUESTION_TOKENS = 200
ANSWER_MEAN = 250
DOCUMENTS_RATE_PER_S = 0.8
DOCUMENTS_WARMUP_S, DOCUMENTS_MEASURED_S = 60.0, 240.0
#: Tier sizes for the documents: one smaller than their blocks, one that holds them (GiB).
DOCUMENT_SIZES: tuple[float | None, ...] = (None, 16.0, 24.0)
#: A PCIe link shared with other devices (effective bytes per second, as chapter 3's slow link).
SHARED_LINK = 4 * GB
#: The exercise's document (a length the chapter never prints).
EX_DOCUMENT_TOKENS = 1_000


@cache
def _storm_rows() -> tuple[dict[str, Any], ...]:
    return tuple(host_tier_data(STORM, STORM_SIZES, SEEDS))


def storm_rows() -> list[dict[str, Any]]:
    """One row per (size, seed) of the storm (:func:`kvsim.book.charts.host_tier_data`)."""
    return [dict(r) for r in _storm_rows()]


def documents_run(*, seed: int, **options: Any) -> SimResult:
    """Belgavi's server answering questions about shared documents, asked in turn.

    Each prompt is one of :data:`DOCUMENTS` documents (:data:`DOCUMENT_TOKENS` tokens, the
    same for every question about it) and a question; requests take the documents in turn,
    so the GPU's cache, too small for all of them, has always evicted the next one (the case
    least recently used eviction serves worst). ``options``: the tier, the link.
    """
    traffic = Workload.poisson(DOCUMENTS_RATE_PER_S, DOCUMENTS_WARMUP_S + DOCUMENTS_MEASURED_S,
                               prompt=DOCUMENT_TOKENS + QUESTION_TOKENS,
                               output=Geometric(ANSWER_MEAN), seed=seed)
    traffic = traffic.with_shared_prefix(DOCUMENT_TOKENS, DOCUMENTS)
    return simulate(traffic, model=MODEL, gpu=GPU, gpu_memory_utilization=UTILIZATION,
                    warmup_s=DOCUMENTS_WARMUP_S,
                    until_s=DOCUMENTS_WARMUP_S + DOCUMENTS_MEASURED_S, seed=seed, **options)


@cache
def _documents_rows() -> tuple[dict[str, Any], ...]:
    rows = host_tier_data(documents_run, DOCUMENT_SIZES, SEEDS)
    slow = host_tier_data(documents_run, DOCUMENT_SIZES[-1:], SEEDS, pcie_bytes_per_s=SHARED_LINK)
    for row in slow:
        row["size"] += " (4 GB/s)"
    return tuple(rows + slow)


def documents_rows() -> list[dict[str, Any]]:
    """One row per (case, seed) of the documents: each tier size, then the tier that holds
    them behind :data:`SHARED_LINK` (its ``size`` ends in ``(4 GB/s)``)."""
    return [dict(r) for r in _documents_rows()]


def paired_change(rows: list[dict[str, Any]], metric: str, base: str, other: str) -> list[float]:
    """Per seed, how much ``metric`` changes (%) from the case whose ``size`` is ``base`` to
    ``other`` (the same seed's traffic in both, so the day's own spread cancels)."""
    by_case: dict[str, dict[int, float]] = {}
    for row in rows:
        by_case.setdefault(str(row["size"]), {})[int(row["seed"])] = float(row[metric])
    for case in (base, other):
        if case not in by_case:
            raise ValueError(f"case {case!r} is not in the rows: expected one of "
                             f"{', '.join(by_case)}")
    return [100 * (by_case[other][seed] / by_case[base][seed] - 1)
            for seed in sorted(by_case[other])]


def recompute_cut(size_gib: float, rows: list[dict[str, Any]] | None = None) -> list[float]:
    """Per seed, the share (%) of the storm's recomputed tokens a tier of ``size_gib`` removes."""
    rows = storm_rows() if rows is None else rows
    off = {r["seed"]: r["recomputed_tokens"] for r in rows if r["size"] == size_label(None)}
    tier = {r["seed"]: r["recomputed_tokens"] for r in rows if r["size"] == size_label(size_gib)}
    if not tier:
        raise ValueError(f"size_gib={size_gib!r} is not one of the storm's sizes: expected one "
                         f"of {', '.join(size_label(s) for s in STORM_SIZES if s is not None)}")
    return [100 * (1 - tier[seed] / off[seed]) for seed in sorted(tier)]


# ----------------------------------------------------------------------- the prediction

def _predict_cut() -> tuple[float, str]:
    cuts = recompute_cut(PREDICT_SIZE)
    med = statistics.median(cuts)
    return med, (f"median over {len(cuts)} seeds: the tier holds the prompts of the requests "
                 f"the storm preempts, so they load those blocks instead of computing them; "
                 f"what remains recomputed is mostly their answers' tokens, which the tier "
                 f"never stores (vLLM's offload_prompt_only)")


def _cut_band() -> tuple[float, float]:
    cuts = recompute_cut(PREDICT_SIZE)
    return min(cuts), max(cuts)


# ----------------------------------------------------------------------- the exercise

def _load_ms(tokens: int, blocks_of: int = 16) -> float:
    gpu = get_gpu(GPU)
    return 1e3 * swap_time_s(tokens, kv_bytes_per_token(MODEL), gpu.pcie_bytes_per_s,
                             block_size=blocks_of)


def _document_load() -> tuple[float, str]:
    full = EX_DOCUMENT_TOKENS // 16 * 16
    t = _load_ms(full)
    prefill = 1e3 * recompute_time_s(EX_DOCUMENT_TOKENS, MODEL, GPU)
    return t, (f"{EX_DOCUMENT_TOKENS:,} // 16 = {full // 16} full blocks (the tier stores no "
               f"partial block) x 16 x 0.5 MiB = {full * kv_bytes_per_token(MODEL):,} B "
               f"over 25 GB/s = {t:.1f} ms, one way, with no per-copy cost counted; prefilling "
               f"the document takes {prefill:.0f} ms")


TIER_PREDICTIONS: list[Prediction] = [
    Prediction(id="ch03-predict-tier-cut", unit="%",
               question=f"the share of Belgavi's storm's recomputed tokens a "
                        f"{PREDICT_SIZE:g} GiB host tier removes",
               solve=_predict_cut, rel_tol=0.05, band=_cut_band),
]

TIER_EXERCISES: list[Exercise] = [
    Exercise(
        id="ch03-tier-load",
        question=f"loading a {EX_DOCUMENT_TOKENS:,}-token Llama-2-7B document from the host "
                 f"tier on the A40 (25 GB/s), in ms",
        kind="float", unit="ms", solve=_document_load, rel_tol=0.005, derive=True,
        hint="the tier holds full 16-token blocks only; their bytes (0.5 MiB a token) over "
             "25 GB/s, one way: eq-swap's first term",
        traps=((lambda: _load_ms(EX_DOCUMENT_TOKENS),
                "the last, partial block is not in the tier: count full blocks only "
                f"({EX_DOCUMENT_TOKENS:,} // 16)"),
               (lambda: 1e3 * EX_DOCUMENT_TOKENS * kv_bytes_per_token(MODEL)
                / get_gpu(GPU).pcie_bytes_per_s,
                "the tier moves whole blocks: count full 16-token blocks only"),
               (lambda: 2 * _document_load()[0],
                "a load is one way, from CPU memory to the GPU, not a round trip"),
               (lambda: _document_load()[0] * GB / 2**30,
                "25 GB/s is 25 x 10^9 bytes a second, not 25 GiB/s"),
               (lambda: _document_load()[0] / 1e3,
                "that is in seconds; the answer is in milliseconds")),
    ),
]
