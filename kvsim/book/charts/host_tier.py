"""Chapter 3, *Swap versus recompute*: what a host tier of each size does, over seeds.

Explained in chapter 3's section *Recompute plus a host tier*. :func:`host_tier_data` runs
kvsim with vLLM V1's native CPU tier (``kv_offloading_size``, GiB) at each size and seed, one
row per run; :func:`host_tier_spread` gives each size's median and range over the seeds; and
:func:`host_tier_chart` draws them: tokens recomputed and tokens loaded from the tier (top)
and the p99 time to first token (bottom), against the tier's size.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kvsim.engine.result import SimResult
from kvsim.errors import KvsimError
from kvsim.runs.scenarios import run_scenario

from .theme import DASHES, PALETTE, finish_chart

#: The theme's title-and-config step, typed for this module's callers.
_finish: Callable[..., Any] = finish_chart

__all__ = ["TIER_METRICS", "host_tier_data", "host_tier_spread", "host_tier_chart", "size_label"]

#: What each run reports: the tokens the engine prefilled again after a preemption, those it
#: loaded from the tier instead, every token prefilled (new and recomputed), the preemptions,
#: the p50 and p99 time to first token, the stores the tier
#: dropped for want of room, and the answer tokens per second.
TIER_METRICS = ("recomputed_tokens", "loaded_tokens", "prefilled_tokens", "preemptions",
                "ttft_p50_s", "ttft_p99_s", "dropped_stores", "goodput_tok_s")

#: The series of the tokens panel: (column, legend label), each with its own colour and dash.
_TOKEN_SERIES = (("recomputed_tokens", "recomputed"), ("loaded_tokens", "loaded from the tier"))


def size_label(size_gib: float | None) -> str:
    """The x axis's label of a tier size: ``"off"`` or the GiB as written (``"0.5"``, ``"8"``)."""
    return "off" if size_gib is None else f"{size_gib:g}"


def host_tier_data(workload: str | Callable[..., SimResult], sizes_gib: Sequence[float | None],
                   seeds: Sequence[int], **options: Any) -> list[dict[str, Any]]:
    """One row per (size, seed): ``workload`` run with that tier (``None``: no tier) and seed.

    ``workload`` is a scenario's name (:func:`kvsim.run_scenario`) or a function called as
    ``workload(seed=..., **options)`` that returns a run; ``options`` go to every run (an
    engine option, a link), the tier's ``kv_offloading_size`` with them.
    """
    if not sizes_gib or not seeds:
        raise KvsimError(f"host_tier_data: sizes_gib={list(sizes_gib)!r}, seeds={list(seeds)!r}: "
                         f"expected at least one size (None for no tier) and one seed")
    rows: list[dict[str, Any]] = []
    for size in sizes_gib:
        tier = {} if size is None else {"kv_offloading_size": size}
        for seed in seeds:
            if isinstance(workload, str):
                run = run_scenario(workload, seed=seed, **tier, **options)
            else:
                run = workload(seed=seed, **tier, **options)
            summary = run.summary()
            requests = run.requests
            loaded = int(requests["loaded_tokens"].sum()) if "loaded_tokens" in requests else 0
            rows.append({
                "size": size_label(size), "size_gib": 0.0 if size is None else float(size),
                "seed": int(seed),
                "recomputed_tokens": int(requests["recomputed_tokens"].sum()),
                "loaded_tokens": loaded,
                "prefilled_tokens": int(run.timeline["prefill_tokens"].sum()),
                "preemptions": int(summary["preemptions"]),
                "ttft_p50_s": round(float(summary["ttft_p50_s"]), 4),
                "ttft_p99_s": round(float(summary["ttft_p99_s"]), 4),
                "dropped_stores": int(run.counters.get("kv_offload_allocation_failures", 0)),
                "goodput_tok_s": round(float(summary["goodput_tok_s"]), 2)})
    return rows


def host_tier_spread(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each size's median and range over seeds of every :data:`TIER_METRICS` column:
    ``<metric>``, ``<metric>_lo``, ``<metric>_hi``, plus ``size``, ``size_gib`` and ``seeds``;
    in the order the sizes first appear."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(str(row["size"]), []).append(row)
    if not groups:
        raise KvsimError("host_tier_spread: rows=[] is empty: expected host_tier_data's rows")
    out: list[dict[str, Any]] = []
    for size, runs in groups.items():
        summary: dict[str, Any] = {"size": size, "size_gib": float(runs[0]["size_gib"]),
                                   "seeds": len(runs)}
        for metric in TIER_METRICS:
            values = [float(r[metric]) for r in runs]
            summary.update({metric: float(f"{statistics.median(values):.4g}"),
                            f"{metric}_lo": float(f"{min(values):.4g}"),
                            f"{metric}_hi": float(f"{max(values):.4g}")})
        out.append(summary)
    return out


def host_tier_chart(spread: Iterable[Mapping[str, Any]], *, title: str | list[str],
                    subtitle: str | list[str] | None = None) -> Any:
    """Tokens recomputed and loaded (thousands; top) and the p99 TTFT (seconds; bottom) per tier
    size: the median over seeds (a point on a line) and their range (a bar)."""
    import altair as alt

    rows = list(spread)
    if not rows:
        raise KvsimError("host_tier_chart: spread=[] is empty: expected host_tier_spread's rows")
    sizes = [str(r["size"]) for r in rows]
    x = alt.X("size:N", sort=sizes, title="host tier (kv_offloading_size, GiB)",
              axis=alt.Axis(labelAngle=0))
    names = [label for _, label in _TOKEN_SERIES]
    colour = alt.Color("series:N", sort=names, scale=alt.Scale(domain=names, range=PALETTE[:2]),
                       legend=alt.Legend(title=None, orient="top", symbolType="stroke",
                                         symbolStrokeWidth=2))
    dash = alt.StrokeDash("series:N", sort=names, legend=None,
                          scale=alt.Scale(domain=names, range=DASHES[:2]))
    shape = alt.Shape("series:N", sort=names, legend=None,
                      scale=alt.Scale(domain=names, range=["circle", "square"]))
    tokens = [{"size": r["size"], "series": label, "median": r[col] / 1e3,
               "lo": r[f"{col}_lo"] / 1e3, "hi": r[f"{col}_hi"] / 1e3, "seeds": r["seeds"]}
              for r in rows for col, label in _TOKEN_SERIES]
    tips = [alt.Tooltip("size:N", title="tier (GiB)"), alt.Tooltip("series:N"),
            alt.Tooltip("median:Q", format=",.1f", title="median (thousands)"),
            alt.Tooltip("lo:Q", format=",.1f", title="lowest seed"),
            alt.Tooltip("hi:Q", format=",.1f", title="highest seed")]
    token_base = alt.Chart(alt.InlineData(values=tokens))
    y_tokens = alt.Y("median:Q", title="tokens (thousands)")
    token_panel = alt.layer(
        token_base.mark_line(strokeWidth=1.5).encode(x=x, y=y_tokens, color=colour,
                                                     strokeDash=dash),
        token_base.mark_rule(strokeWidth=2).encode(x=x, y=alt.Y("lo:Q", title="tokens (thousands)"),
                                                   y2="hi:Q", color=colour, tooltip=tips),
        token_base.mark_point(filled=True, size=70, opacity=1).encode(
            x=x, y=y_tokens, color=colour, shape=shape, tooltip=tips),
    ).properties(width="container", height=200)
    tail = [{"size": r["size"], "median": r["ttft_p99_s"], "lo": r["ttft_p99_s_lo"],
             "hi": r["ttft_p99_s_hi"], "seeds": r["seeds"]} for r in rows]
    tail_tips = [alt.Tooltip("size:N", title="tier (GiB)"),
                 alt.Tooltip("median:Q", format=",.1f", title="median p99 TTFT (s)"),
                 alt.Tooltip("lo:Q", format=",.1f", title="lowest seed"),
                 alt.Tooltip("hi:Q", format=",.1f", title="highest seed")]
    tail_base = alt.Chart(alt.InlineData(values=tail))
    y_tail = alt.Y("median:Q", title="p99 time to first token (s)", scale=alt.Scale(zero=True))
    tail_panel = alt.layer(
        tail_base.mark_line(strokeWidth=1.5, color=PALETTE[2]).encode(x=x, y=y_tail),
        tail_base.mark_rule(strokeWidth=2, color=PALETTE[2]).encode(
            x=x, y=alt.Y("lo:Q", title="p99 time to first token (s)"), y2="hi:Q", tooltip=tail_tips),
        tail_base.mark_point(filled=True, size=70, opacity=1, shape="diamond",
                             color=PALETTE[2]).encode(x=x, y=y_tail, tooltip=tail_tips),
    ).properties(width="container", height=160)
    chart = alt.vconcat(token_panel, tail_panel).resolve_scale(color="independent")
    chart = chart.properties(autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))
    return _finish(chart, title, subtitle)
