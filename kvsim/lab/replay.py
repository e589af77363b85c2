"""The lab's day of chapter 5, *Belgavi's Book Store*: one run, and what the pager shows.

Explained in chapter 5. :func:`run_lab` runs one day of the lab's traffic
(the ``belgavi`` scenario: one minute of warm-up, then three minutes
measured) with the settings a reader picks; :func:`oncall_numbers` reads the
figures an on-call engineer looks at from its summary, :func:`oncall_text`
says them in lines. The ipywidgets panel over both is
:func:`kvsim.book.lab_panel.lab_panel`.

The static twin (no kernel) is :func:`kvsim.book.lab_charts.lab_twin_chart` over
:func:`twin_runs`, a precomputed grid of the same runs (:data:`TWIN_GRID`: memory, answer
length, admission headroom, engine and preemption mode, and three days of traffic).

:func:`commit_guess` is the missions' commit-your-guess cell: it checks the
guess, records it in the progress file as ``kvsim missions`` and the panels
do (:func:`kvsim.lab.progress.commit_prediction`), and prints one line. With
no guess (the chapter as saved and executed) it writes nothing, so the
chapter's outputs do not depend on a reader's progress.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING

from kvsim.errors import (
    KvsimError,
    check_choice,
    check_float,
    check_gpu_memory_utilization,
    check_int,
)
from kvsim.runs.scenarios import run_scenario

from .missions import (
    SEEDS,
    LeverValue,
    MissionLike,
    check_prediction,
    get_mission,
    mission_day,
    normalise_settings,
    row_number,
)
from .progress import commit_prediction

if TYPE_CHECKING:
    from kvsim.engine.result import SimResult

__all__ = ["LAB_BASE", "LAB_DEFAULTS", "TWIN_GRID", "TWIN_MODES", "lab_settings", "run_lab",
           "oncall_numbers", "oncall_text", "twin_runs", "twin_settings", "commit_guess", "wrapped",
           "show", "mission_run", "mission_text"]

#: The lab's day of traffic: Belgavi's scenario, one minute of warm-up, three measured.
LAB_BASE: dict[str, str | float] = {"scenario": "belgavi", "warmup_s": 60.0, "duration_s": 180.0}

#: The panel's starting point: Belgavi as the source article describes it (vLLM V1, A40 at 0.60).
LAB_DEFAULTS: dict[str, LeverValue] = {"gpu_memory_utilization": 0.60, "output_mean": 250, "rate_per_s": 1.5,
                "max_tokens": None, "kv_dtype": "fp16", "watermark": 0.0,
                "max_num_seqs": None, "engine": "v1", "preemption_mode": "recompute",
                "pcie_gb_s": 25.0, "seed": 5}

#: The static twin's preemption choices: each names the engine and the mode it runs
#: (swap exists on vLLM V0 only, so swap is compared with V0's own recompute as well).
TWIN_MODES: dict[str, dict[str, str]] = {"v1-recompute": {"engine": "v1", "preemption_mode": "recompute"},
              "v0-recompute": {"engine": "v0", "preemption_mode": "recompute"},
              "v0-swap": {"engine": "v0", "preemption_mode": "swap"}}

#: The static twin's grid, every combination run (the panel's other settings at
#: :data:`LAB_DEFAULTS`): memory for the server, mean answer length, admission headroom
#: (``watermark``, on mission 4's grid), engine and preemption mode (:data:`TWIN_MODES`)
#: and the day of traffic (``seed``; the panel's own day first).
TWIN_GRID: dict[str, tuple[float | str, ...]] = {"gpu_memory_utilization": (0.60, 0.70, 0.80), "output_mean": (250, 400, 600),
             "watermark": (0.0, 0.05, 0.10, 0.15), "preemption": tuple(TWIN_MODES),
             "seed": (5, 6, 7)}


def lab_settings(**settings: object) -> dict[str, object]:
    """The panel's settings, checked (one-line KvsimError naming the value and its range),
    as :func:`kvsim.run_scenario` overrides."""
    unknown = [k for k in settings if k not in LAB_DEFAULTS]
    if unknown:
        raise KvsimError(f"lab setting {unknown[0]!r} is not known: expected one of "
                         f"{', '.join(LAB_DEFAULTS)}")
    s: dict[str, object] = {**LAB_DEFAULTS, **settings}
    out: dict[str, object] = dict(LAB_BASE)
    out["gpu_memory_utilization"] = check_gpu_memory_utilization(s["gpu_memory_utilization"])
    out["output_mean"] = check_int("output_mean", s["output_mean"], min=10, max=4000)
    out["rate_per_s"] = check_float("rate_per_s", s["rate_per_s"], min=0.1, max=10.0)
    if s["max_tokens"] is not None:                      # the chapter's first fix: a cap
        out["max_tokens"] = check_int("max_tokens", s["max_tokens"], min=16, max=4096)
    # the second: an FP8 cache (Llama-2-7B's own is FP16, the scenario's default)
    if check_choice("kv_dtype", s["kv_dtype"], ("fp16", "fp8")) == "fp8":
        out["kv_dtype"] = "fp8"
    out["watermark"] = check_float("watermark", s["watermark"], min=0.0, max=0.5)
    if s["max_num_seqs"] is not None:
        out["max_num_seqs"] = check_int("max_num_seqs", s["max_num_seqs"], min=1, max=1024)
    out["engine"] = check_choice("engine", s["engine"], ("v1", "v0"))
    out["preemption_mode"] = check_choice("preemption_mode", s["preemption_mode"],
                                          ("recompute", "swap"))
    out["pcie_bytes_per_s"] = check_float("pcie_gb_s", s["pcie_gb_s"], min=0.5, max=128.0) * 1e9
    out["seed"] = check_int("seed", s["seed"], min=0, max=10_000)
    return out


def run_lab(**settings: object) -> SimResult:
    """One lab run (see :func:`lab_settings`); returns the :class:`~kvsim.engine.result.SimResult`.

    Swap with ``engine="v1"`` raises kvsim's one-line error: V1 only recomputes.
    """

    kwargs = lab_settings(**settings)
    result: SimResult = run_scenario(str(kwargs.pop("scenario")), **kwargs)
    return result


def mission_run(mission: MissionLike, settings: Mapping[str, object] | None = None,
                seed: int | None = None) -> SimResult:
    """One day of a mission, exactly as :func:`kvsim.lab.missions.score` runs it: the mission's
    scenario and day (warm-up, scored window), ``settings`` on its levers (checked; the ticket's
    own where left out) and ``seed``, one of :data:`~kvsim.lab.missions.SEEDS` (default: the
    first). Returns the :class:`~kvsim.engine.result.SimResult`."""
    m = get_mission(mission)
    s = normalise_settings(m, settings)
    seed = SEEDS[0] if seed is None else check_choice("seed", seed, list(SEEDS))
    result: SimResult = run_scenario(m.scenario, **dict(m.fixed, **mission_day(m), **s, seed=seed))
    return result


def mission_text(mission: MissionLike, summary: Mapping[str, LeverValue], seed: int) -> list[str]:
    """One mission day's summary against the ticket's SLO, in lines (the panel prints these;
    ``summary`` is a run's or one of :func:`~kvsim.lab.missions.score`'s ``runs``)."""
    m = get_mission(mission)
    lines: list[str] = []
    for key, limit, label, scale, unit in m.slo.items():
        value = row_number(summary, key)
        mark = "meets" if value <= limit + 1e-12 else "MISSES"
        lines.append(f"{label}: {value * scale:,.3g}{unit} ({mark} <= {limit * scale:,.3g}{unit})")
    fails = m.slo.failures(summary)
    lines.append(f"seed {seed}: " + ("the SLO holds on this day" if not fails else
                                      f"the SLO fails on this day ({len(fails)} target(s))"))
    return lines


def oncall_numbers(result: SimResult) -> dict[str, float | int]:
    """What an on-call engineer reads, from one run's summary and config.

    Keys: ``preemptions_per_1k``, ``ttft_p50_s``, ``ttft_p95_s``, ``itl_p99_ms``,
    ``max_gap_s``, ``paused_pct`` (users paused > 1 s), ``kv_usage_mean_pct``,
    ``max_waiting``, ``mean_running``, ``goodput_tok_s``, ``throughput_tok_s``,
    ``finished_pct`` (of the arrivals), ``pool_tokens``, ``swapped_gb``.
    """
    s = result.summary()
    c = result.config
    return {
        "preemptions_per_1k": round(float(s["preemptions_per_1k"]), 1),
        "ttft_p50_s": round(float(s["ttft_p50_s"]), 2),
        "ttft_p95_s": round(float(s["ttft_p95_s"]), 2),
        "itl_p99_ms": round(1e3 * float(s["itl_p99_s"]), 0),
        "max_gap_s": round(float(s["max_gap_s"]), 2),
        "paused_pct": round(100 * float(s["share_paused_over_1s"]), 1),
        "kv_usage_mean_pct": round(100 * float(s["kv_usage_mean"]), 1),
        "max_waiting": int(s["max_waiting"]),
        "mean_running": round(float(s["mean_running"]), 1),
        "goodput_tok_s": round(float(s["goodput_tok_s"]), 0),
        "throughput_tok_s": round(float(s["throughput_tok_s"]), 0),
        "finished_pct": round(100 * int(s["requests_finished"]) / max(1, int(s["requests_arrived"])),
                              1),
        "pool_tokens": int(c["num_gpu_blocks"]) * int(c["block_size"]),
        "swapped_gb": round(float(s["swapped_out_bytes"]) / 1e9, 2),
    }


def oncall_text(n: Mapping[str, object]) -> list[str]:
    """The on-call numbers as short lines (the panel and the static twin print the same)."""
    lines = [f"preemptions: {n['preemptions_per_1k']:,.0f} per 1,000 requests",
             f"TTFT: p50 {n['ttft_p50_s']:,.2f} s, p95 {n['ttft_p95_s']:,.1f} s",
             f"p99 inter-token gap: {n['itl_p99_ms']:,.0f} ms; longest pause {n['max_gap_s']:,.1f} s",
             f"users paused > 1 s: {n['paused_pct']:.1f}%",
             f"KV in use: {n['kv_usage_mean_pct']:.0f}% on average; {n['mean_running']:.1f} running, "
             f"at most {n['max_waiting']:,} waiting",
             f"goodput {n['goodput_tok_s']:,.0f} of {n['throughput_tok_s']:,.0f} tokens/s processed; "
             f"{n['finished_pct']:.0f}% of arrivals finished"]
    if n.get("swapped_gb"):
        lines.append(f"swapped out: {n['swapped_gb']:,.1f} GB over PCIe")
    return lines


#: One point of the static twin: (gpu_memory_utilization, output_mean, watermark, preemption,
#: seed).
TwinPoint = tuple[float | str, ...]


def twin_runs(*, executor: Executor | None = None,
              grid: Mapping[str, Sequence[float | str]] | None = None,
              each: Callable[[SimResult], object] | None = None) -> dict[TwinPoint, object]:
    """The static twin's runs: every point of :data:`TWIN_GRID` (or ``grid``, a sub-grid of
    it with the same keys) with the panel's other defaults, each a :func:`run_lab`.

    Returns ``{(gpu_memory_utilization, output_mean, watermark, preemption, seed):
    SimResult}`` in grid order; ``preemption`` is a key of :data:`TWIN_MODES`.
    ``executor`` (a ``concurrent.futures`` pool) runs them in parallel; ``each``, a
    module-level function of one result, is applied where the run was made and its value
    kept instead (a pool then sends back only what the caller keeps, e.g.
    :func:`kvsim.book.lab_charts.twin_run`).
    """
    import itertools

    grid = dict(TWIN_GRID if grid is None else grid)
    if list(grid) != list(TWIN_GRID):
        raise KvsimError(f"twin_runs: grid has keys {', '.join(grid)}: expected "
                         f"{', '.join(TWIN_GRID)}")
    for mode in grid["preemption"]:
        check_choice("preemption", mode, tuple(TWIN_MODES))
    points = list(itertools.product(*grid.values()))
    jobs = [(twin_settings(p), each) for p in points]
    if executor is None:
        results = [_run_job(j) for j in jobs]
    else:
        results = list(executor.map(_run_job, jobs, chunksize=max(1, len(jobs) // 16)))
    return dict(zip(points, results, strict=True))


def twin_settings(point: Sequence[object]) -> dict[str, object]:
    """One twin point ``(gpu_memory_utilization, output_mean, watermark, preemption, seed)``
    as :func:`run_lab`'s settings."""
    util, answers, headroom, mode, seed = point
    return dict(gpu_memory_utilization=util, output_mean=answers, watermark=headroom,
                seed=seed, **TWIN_MODES[check_choice("preemption", mode, tuple(TWIN_MODES))])


def _run_job(job: tuple[dict[str, object], Callable[[SimResult], object] | None]) -> object:
    settings, each = job
    result = run_lab(**settings)
    return result if each is None else each(result)


def wrapped(text: object, width: int = 88) -> str:
    """``text`` (a ticket, a score) wrapped for a page or a phone: each line folded at ``width``,
    continuation lines indented under the line's text."""
    import re
    import textwrap

    out: list[str] = []
    for line in str(text).splitlines() or [""]:
        head = re.match(r"^(\s*(?:[A-Z]{3,6}\s+)?)", line)      # always matches (maybe empty)
        lead = head.group(1) if head else ""
        indent = " " * len(lead) if lead.strip() else lead + "    "
        out.append(textwrap.fill(line, width=width, subsequent_indent=indent,
                                 break_long_words=False, break_on_hyphens=False) or line)
    return "\n".join(out)


def show(text: object, width: int = 88) -> None:
    """Print :func:`wrapped` ``text`` (the chapter prints tickets and scores with it)."""
    print(wrapped(text, width))


def commit_guess(mission: MissionLike, prediction: Mapping[str, object] | None, *,
                 path: str | os.PathLike[str] | None = None) -> None:
    """Record the guess and print one line (or, with none, say what to set).

    ``prediction`` is ``None`` (not committed yet: nothing is written),
    ``{"cause": key}`` or, for mission 4, ``{"band": (low, high)}``: checked,
    then stored in the progress file (``path``, by default the one ``kvsim
    missions`` uses) by :func:`kvsim.lab.progress.commit_prediction`, which says
    whether it can still earn the third star (only before the mission's first
    score).
    """
    m = get_mission(mission)
    if prediction is None:
        if m.band:
            what = (f"{{'band': (low, high)}}, the {m.resource} values you expect to meet the "
                    f"SLO")
        else:
            what = f"{{'cause': one of {', '.join(m.causes)}}}"
        show(f"Mission {m.number}: no guess committed yet: set prediction to {what} before "
             f"you look at the chart below.")
        return
    checked = check_prediction(m, prediction)
    show(f"{commit_prediction(m.number, checked, path=path)} Your guess: {checked}. The chart "
         f"below shows where the runs pass; lab_panel(mission={m.number}) scores your settings "
         f"on every day and gives the code.")