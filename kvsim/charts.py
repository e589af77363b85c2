"""Altair charts for the book, in one theme.

Explained in chapter 1, *Bytes per token and capacity*.

Two kinds of function live here, kept apart on purpose:

* ``*_data`` functions ask kvsim for the numbers (they call
  :func:`kvsim.memory.kv_bytes_per_token` and :func:`kvsim.memory.kv_budget`,
  never re-deriving them) and return small lists of plain-Python rows, rounded
  so that the chart specs are compact and identical from run to run;
* ``*_chart`` functions turn those rows into an Altair chart. They only
  filter and encode; no capacity logic runs in the browser.

Every chart follows one theme (:data:`THEME`, also registered as the Altair
theme ``"kvbook"`` by :func:`kvsim.notebook.setup`, so a chapter's own charts
follow it too):

* text of at least :data:`MIN_FONT_PX` pixels;
* width that follows the page (``"container"``; small multiples use fixed
  panels that the site's stylesheet shrinks to the page);
* the Okabe-Ito palette (:data:`PALETTE`), which stays distinct for the
  common forms of colour blindness, and nothing encoded by colour alone:
  every coloured series is also told apart by a dash pattern, a position,
  an axis or a text label;
* a title that states the finding (callers pass the chapter's), units in
  every axis title, the KV dtype named as the model's own (fp16 or bf16,
  never "bf16" for both), and a "you are here" mark where the text refers to
  one case.

:func:`timeline_chart` draws one or more runs as the book's timeline: the KV
cache in use over time with a tick at every preemption, the waiting (and
swapped) queue beneath, and a playhead slider that walks the run, aligned on
one time axis so two policies on the same trace compare at a glance.

The static twin of chapter 1's calculator, :func:`capacity_chart`, binds an
answer-length slider to an Altair parameter over a precomputed grid and draws
one small multiple per model, so it stays interactive on the static site with
no kernel and shows the comparison the text makes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from .errors import KvsimError, check_int
from .units import GB, GiB, KiB

if TYPE_CHECKING:  # Altair is imported only when a chart is drawn
    import altair as alt

__all__ = [
    "PALETTE", "MIN_FONT_PX", "THEME", "theme", "kv_dtype_label",
    "bytes_per_token_data", "bytes_per_token_chart",
    "budget_data", "budget_chart",
    "capacity_grid", "capacity_chart",
    "capacity_by_length_data", "capacity_by_length_chart",
    "timeline_data", "timeline_chart",
]

#: Okabe & Ito's colour-blind-safe palette (blue, orange, bluish green,
#: vermillion, reddish purple, sky blue, yellow, black), in the order series use it.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
#: A neutral grey for "not part of the story" (memory the engine is not given).
NEUTRAL = "#BBBBBB"
#: The smallest text any chart draws, in pixels.
MIN_FONT_PX = 12
#: Dash patterns that tell series apart without colour.
DASHES = [[1, 0], [6, 3], [2, 2], [8, 2, 2, 2]]

#: The book's Vega-Lite configuration (the ``config`` block of every chart).
THEME: dict = {
    "font": "sans-serif",
    "axis": {"labelFontSize": MIN_FONT_PX, "titleFontSize": 13, "titleFontWeight": "normal"},
    "legend": {"labelFontSize": MIN_FONT_PX, "titleFontSize": MIN_FONT_PX, "orient": "bottom"},
    "header": {"labelFontSize": 13, "titleFontSize": 13},
    "title": {"fontSize": 15, "subtitleFontSize": MIN_FONT_PX, "anchor": "start", "offset": 10},
    "text": {"fontSize": MIN_FONT_PX},
    "range": {"category": PALETTE},
    "view": {"continuousHeight": 260, "continuousWidth": 300},
}


def theme() -> dict:
    """The theme as Altair's theme registry wants it (``{"config": THEME}``)."""
    import copy

    return {"config": copy.deepcopy(THEME)}


def _alt():
    import altair as alt

    return alt


def _finish(chart, title: str, subtitle: str | None = None):
    """Title (the finding, with an optional subtitle) and the book's theme."""
    alt = _alt()
    params = {"text": title}
    if subtitle:
        params["subtitle"] = subtitle
    return chart.properties(title=alt.TitleParams(**params)).configure(**THEME)


def _need_rows(rows, keys: Sequence[str], what: str) -> list[dict]:
    rows = list(rows)
    if not rows:
        raise KvsimError(f"{what}: rows=[] is empty: expected at least one row")
    for row in rows:
        missing = [k for k in keys if k not in row]
        if missing:
            raise KvsimError(f"{what}: row {row!r} lacks {', '.join(missing)}: expected keys "
                             f"{', '.join(keys)}")
    return rows


def kv_dtype_label(model, kv_dtype: str | None = None) -> str:
    """The KV dtype a cache really uses: ``kv_dtype``, or the model's own dtype.

    ``kv_dtype_label("llama-2-7b")`` is ``"fp16"`` and
    ``kv_dtype_label("llama-3.1-8b")`` is ``"bf16"``: both are 16-bit, but a
    chart that calls both "bf16" is wrong about one of them.
    """
    from .memory import KV_DTYPES
    from .models import get_model

    if kv_dtype is None:
        return get_model(model).dtype
    if kv_dtype not in KV_DTYPES:
        raise KvsimError(f"kv_dtype={kv_dtype!r} is not known: expected one of "
                         f"{', '.join(KV_DTYPES)} (or None for the model's dtype)")
    return kv_dtype


def _bits(dtype: str) -> str:
    from .memory import KV_DTYPES

    return f"{8 * KV_DTYPES[dtype]}-bit"


def _cache_label(dtype: str) -> str:
    return f"{dtype} cache ({_bits(dtype)})"


# --- bytes per token -------------------------------------------------------------

def bytes_per_token_data(models: Iterable[str], kv_dtypes: Iterable[str | None] = (None, "fp8")) -> list[dict]:
    """Rows ``{model, attention, kv_dtype, kv_bits, bytes, kib}``: KV bytes per token from kvsim.

    ``None`` in ``kv_dtypes`` stands for the model's own dtype (so a row says
    ``"fp16"`` for Llama-2-7B and ``"bf16"`` for Llama-3.1-8B).
    """
    from .memory import kv_bytes_per_token
    from .models import get_model

    rows = []
    for name in models:
        spec = get_model(name)
        for requested in kv_dtypes:
            dtype = kv_dtype_label(spec, requested)
            n = kv_bytes_per_token(spec, dtype)
            rows.append({"model": spec.name, "attention": spec.attention_kind.upper(),
                         "kv_dtype": dtype, "kv_bits": _bits(dtype), "bytes": n,
                         "kib": round(n / KiB, 2)})
    return rows


def bytes_per_token_chart(rows: Iterable[Mapping], *, title: str = "KV cache bytes per token",
                          subtitle: str | None = None):
    """Horizontal bars, one group per model: KiB of KV cache per token.

    The cache width is told apart by colour and by position within the
    group; each bar is labelled with its value and its dtype.
    """
    alt = _alt()
    rows = _need_rows(rows, ["model", "attention", "kv_dtype", "kv_bits", "bytes", "kib"],
                      "bytes_per_token_chart")
    # Largest first; ties keep the order of the rows (no set: its order varies by run).
    order = sorted(dict.fromkeys(r["model"] for r in rows),
                   key=lambda m: -max(r["kib"] for r in rows if r["model"] == m))
    widths = sorted(dict.fromkeys(r["kv_bits"] for r in rows), key=lambda b: -int(b.split("-")[0]))
    rows = [dict(r, model_label=f"{r['model']} ({r['attention']})",
                 bar_label=f"{r['kib']:,.1f} KiB {r['kv_dtype']}".replace(".0 KiB", " KiB"))
            for r in rows]
    labels = list(dict.fromkeys(f"{m} ({next(r['attention'] for r in rows if r['model'] == m)})"
                                for m in order))
    base = alt.Chart(alt.Data(values=rows)).encode(
        y=alt.Y("model_label:N", sort=labels, title=None),
        yOffset=alt.YOffset("kv_bits:N", sort=widths),
        x=alt.X("kib:Q", title="KV cache per token (KiB, 1 KiB = 1,024 B)",
                scale=alt.Scale(nice=True)),
    )
    bars = base.mark_bar().encode(
        color=alt.Color("kv_bits:N", sort=widths, title="Cache width",
                        scale=alt.Scale(range=PALETTE[:len(widths)])),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("attention:N"),
                 alt.Tooltip("kv_dtype:N", title="KV dtype"),
                 alt.Tooltip("bytes:Q", format=",", title="bytes per token"),
                 alt.Tooltip("kib:Q", format=",.1f", title="KiB per token")],
    )
    text = base.mark_text(align="left", dx=3, baseline="middle").encode(text="bar_label:N")
    chart = alt.layer(bars, text).properties(width="container", height=alt.Step(16))
    return _finish(chart, title, subtitle)


# --- the memory budget -----------------------------------------------------------

_PARTS = ["weights", "activations and runtime", "KV cache", "not given to the engine"]
_PART_COLOURS = [PALETTE[0], PALETTE[1], PALETTE[2], NEUTRAL]


def budget_data(budgets: Mapping[str, object]) -> list[dict]:
    """Rows ``{setup, part, order, bytes, gb, gib}`` splitting each GPU's memory.

    ``budgets`` maps a label to a :class:`kvsim.memory.KVBudget`. The parts are
    the weights, the activation and runtime reserve, the KV pool, and the share
    the utilisation setting leaves to other processes; whatever of the usable
    memory is not whole KV blocks is counted with the KV pool, since it is the
    pool's rounding.
    """
    if not budgets:
        raise KvsimError("budgets={} is empty: expected at least one label -> KVBudget")
    rows = []
    for label, b in budgets.items():
        total = b.gpu.memory_bytes * b.tensor_parallel_size
        parts = [b.weight_bytes, b.activation_bytes,
                 b.usable_bytes - b.weight_bytes - b.activation_bytes,
                 total - b.usable_bytes]
        for i, (part, n) in enumerate(zip(_PARTS, parts)):
            rows.append({"setup": str(label), "part": part, "order": i, "bytes": int(n),
                         "gb": round(n / GB, 2), "gib": round(n / GiB, 2)})
    return rows


def budget_chart(rows: Iterable[Mapping], *, title: str = "Where the GPU's memory goes",
                 subtitle: str | None = None):
    """One panel per set-up, one labelled bar per part of the memory, in GB and GiB.

    The part is named on the axis (colour repeats it) and every bar carries
    its value in both units.
    """
    alt = _alt()
    rows = _need_rows(rows, ["setup", "part", "order", "gb", "gib"], "budget_chart")
    rows = [dict(r, value=f"{r['gb']:,.2f} GB = {r['gib']:,.2f} GiB") for r in rows]
    setups = list(dict.fromkeys(r["setup"] for r in rows))
    top = max(r["gb"] for r in rows)
    base = alt.Chart().encode(
        y=alt.Y("part:N", sort=_PARTS, title=None),
        x=alt.X("gb:Q", title="GPU memory (GB, 1 GB = 10^9 B)",
                scale=alt.Scale(domain=[0, top * 1.45])),
    )
    bars = base.mark_bar().encode(
        color=alt.Color("part:N", sort=_PARTS, legend=None,
                        scale=alt.Scale(domain=_PARTS, range=_PART_COLOURS)),
        tooltip=[alt.Tooltip("setup:N"), alt.Tooltip("part:N"),
                 alt.Tooltip("bytes:Q", format=",", title="bytes"),
                 alt.Tooltip("gb:Q", format=",.2f", title="GB"),
                 alt.Tooltip("gib:Q", format=",.2f", title="GiB")],
    )
    text = base.mark_text(align="left", dx=4, baseline="middle").encode(text="value:N")
    chart = (alt.layer(bars, text, data=alt.Data(values=rows))
             .properties(width=440, height=alt.Step(26))
             .facet(row=alt.Row("setup:N", sort=setups, title=None,
                                header=alt.Header(labelAngle=0, labelAlign="left",
                                                  labelAnchor="start", labelOrient="top"))))
    return _finish(chart, title, subtitle)


# --- capacity against request length ----------------------------------------------

def capacity_by_length_data(budgets: Mapping[str, object], *, prompt_tokens: int,
                            output_tokens: Iterable[int]) -> list[dict]:
    """Rows ``{setup, answer, seq_len, requests}``: concurrent requests by answer length.

    ``budgets`` maps a label to a :class:`kvsim.memory.KVBudget`; ``requests``
    is :meth:`~kvsim.memory.KVBudget.max_concurrent` of prompt plus answer.
    """
    prompt_tokens = check_int("prompt_tokens", prompt_tokens, min=1)
    answers = [check_int("output_tokens", a, min=0) for a in output_tokens]
    if not budgets or not answers:
        raise KvsimError("capacity_by_length_data: budgets and output_tokens must not be empty")
    return [{"setup": str(label), "answer": a, "seq_len": prompt_tokens + a,
             "requests": int(b.max_concurrent(prompt_tokens + a))}
            for label, b in budgets.items() for a in answers]


def capacity_by_length_chart(rows: Iterable[Mapping], *, marks: Sequence[tuple] = (),
                             title: str = "Concurrent requests that fit, by answer length",
                             subtitle: str | None = None):
    """Requests that fit against answer length, one line per set-up.

    Set-ups differ by colour and dash, and each line is labelled at its end. ``marks`` are
    ``(setup, answer, label)`` triples drawn as "you are here" points with
    their label, at the row with that set-up and answer.
    """
    alt = _alt()
    rows = _need_rows(rows, ["setup", "answer", "seq_len", "requests"], "capacity_by_length_chart")
    setups = list(dict.fromkeys(r["setup"] for r in rows))
    index = {(r["setup"], r["answer"]): r for r in rows}
    here = []
    for setup, answer, label in marks:
        if (setup, answer) not in index:
            raise KvsimError(f"mark ({setup!r}, {answer!r}) is not in the rows: expected a set-up "
                             f"of {setups} and an answer length the rows have")
        here.append(dict(index[(setup, answer)], label=str(label)))
    x = alt.X("answer:Q", title="answer length (tokens; the prompt is fixed)")
    y = alt.Y("requests:Q", title="concurrent requests that fit (requests)",
              scale=alt.Scale(zero=True))
    n = len(setups)
    colour = alt.Color("setup:N", sort=setups, legend=None, scale=alt.Scale(range=PALETTE[:n]))
    lines = alt.Chart(alt.Data(values=rows)).mark_line(point=True).encode(
        x=x, y=y, color=colour,
        strokeDash=alt.StrokeDash("setup:N", sort=setups, legend=None,
                                  scale=alt.Scale(range=DASHES[:n])),
        tooltip=[alt.Tooltip("setup:N"), alt.Tooltip("answer:Q", format=",", title="answer tokens"),
                 alt.Tooltip("seq_len:Q", format=",", title="tokens per request"),
                 alt.Tooltip("requests:Q", format=",", title="requests")],
    )
    # Each line is named at its right end, in its colour: no legend to decode.
    last = max(r["answer"] for r in rows)
    ends = [dict(r) for r in rows if r["answer"] == last]
    names = alt.Chart(alt.Data(values=ends)).mark_text(align="right", dy=-10).encode(
        x=x, y=y, text="setup:N", color=colour)
    layers = [lines, names]
    if here:
        marked = alt.Chart(alt.Data(values=here)).encode(x=x, y=y)
        layers += [marked.mark_point(shape="circle", size=220, filled=False, color="black",
                                     strokeWidth=2),
                   marked.mark_text(align="left", dx=12, dy=-12).encode(text="label:N")]
    chart = alt.layer(*layers).properties(width="container", height=280)
    return _finish(chart, title, subtitle)


# --- the static twin of the capacity calculator -------------------------------------

def capacity_grid(models: Iterable[str], gpu: str, *, kv_dtypes: Iterable[str | None] = (None, "fp8"),
                  utilizations: Iterable[float], output_tokens: Iterable[int],
                  prompt_tokens: int, activation_bytes: int | None = None) -> list[dict]:
    """Concurrent requests from kvsim over a grid, as rows ``{model, kv, util, answer, requests}``.

    ``requests`` is :meth:`kvsim.memory.KVBudget.max_concurrent` of
    ``prompt_tokens + answer``; a utilisation at which the weights and overhead
    do not fit (kvsim raises :class:`KvsimError`) gives 0 requests. ``kv``
    names the cache dtype as used (``None`` in ``kv_dtypes`` is the model's own).
    """
    from .memory import kv_budget

    prompt_tokens = check_int("prompt_tokens", prompt_tokens, min=1)
    answers = [check_int("output_tokens", a, min=0) for a in output_tokens]
    utils = [round(float(u), 4) for u in utilizations]
    rows = []
    for model in models:
        for requested in kv_dtypes:
            dtype = kv_dtype_label(model, requested)
            for u in utils:
                try:
                    b = kv_budget(gpu, model, gpu_memory_utilization=u, kv_dtype=dtype,
                                  activation_bytes=activation_bytes)
                except KvsimError:
                    b = None
                for a in answers:
                    n = b.max_concurrent(prompt_tokens + a) if b is not None else 0
                    rows.append({"model": model, "kv": _cache_label(dtype), "util": u,
                                 "answer": a, "requests": int(n)})
    return rows


def capacity_chart(rows: Iterable[Mapping], *, answer: int | None = None,
                   here: tuple | None = None, columns: int = 2,
                   title: str = "Concurrent requests that fit", subtitle: str | None = None):
    """Small multiples, one per model: requests that fit against ``gpu_memory_utilization``.

    One line per cache dtype (colour and dash, named at its end). Each panel has its own
    request axis, so a model with a small capacity is not flattened by one
    with a large one. A slider bound
    to an Altair parameter picks the answer length; every panel filters the
    precomputed ``rows`` to it, so the chart works on a static page.
    ``answer`` sets the slider's start (default: the smallest length).
    ``here`` = ``(model, util, label)`` draws a "you are here" line at that
    utilisation in every panel and circles the point of that model.
    """
    alt = _alt()
    rows = _need_rows(rows, ["model", "kv", "util", "answer", "requests"], "capacity_chart")
    models = list(dict.fromkeys(r["model"] for r in rows))
    answers = sorted({int(r["answer"]) for r in rows})
    steps = {b - a for a, b in zip(answers, answers[1:])}
    if len(steps) > 1:
        raise KvsimError(f"capacity_chart: answer lengths {answers} are not evenly spaced: "
                         f"expected a grid with one step so the slider hits every value")
    step = steps.pop() if steps else 1
    answer = answers[0] if answer is None else answer
    if answer not in answers:
        raise KvsimError(f"answer={answer!r} is not in the grid: expected one of {answers}")
    columns = check_int("columns", columns, min=1)
    caches = sorted(dict.fromkeys(r["kv"] for r in rows), key=lambda k: ("8-bit" in k, k))
    n = len(caches)

    p_answer = alt.param(name="answer", value=answer,
                         bind=alt.binding_range(min=answers[0], max=answers[-1], step=step,
                                                name="Answer tokens "))
    utils = [r["util"] for r in rows]
    x = alt.X("util:Q", title="gpu_memory_utilization (share)",
              scale=alt.Scale(domain=[min(utils), max(utils)]))
    y = alt.Y("requests:Q", title="requests that fit (requests)", scale=alt.Scale(zero=True))
    colour = alt.Color("kv:N", sort=caches, legend=None, scale=alt.Scale(range=PALETTE[:n]))
    lines = alt.Chart().mark_line(point=True).encode(
        x=x, y=y, color=colour,
        strokeDash=alt.StrokeDash("kv:N", sort=caches, legend=None,
                                  scale=alt.Scale(range=DASHES[:n])),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("kv:N", title="KV cache"),
                 alt.Tooltip("util:Q", format=".2f", title="utilisation"),
                 alt.Tooltip("answer:Q", format=",", title="answer tokens"),
                 alt.Tooltip("requests:Q", format=",", title="requests")],
    ).transform_filter(alt.datum.answer == p_answer)
    # Each line is named at its right end ("fp8 cache"), in its colour: no legend to decode.
    names = (alt.Chart().mark_text(align="right", dx=-2, dy=-10)
             .encode(x=x, y=y, color=colour, text="name:N")
             .transform_filter((alt.datum.answer == p_answer) & (alt.datum.util == max(utils)))
             .transform_calculate(name="split(datum.kv, ' (')[0]"))
    layers = [lines, names]
    if here is not None:
        model, util, label = here
        if model not in models:
            raise KvsimError(f"here: model {model!r} is not in the grid: expected one of "
                             f"{', '.join(models)}")
        util = round(float(util), 4)
        if util not in set(utils):
            raise KvsimError(f"here: util {util} is not in the grid: expected one of "
                             f"{sorted(set(utils))}")
        own = sorted({r["kv"] for r in rows if r["model"] == model},
                     key=lambda k: ("8-bit" in k, k))[0]
        rule = alt.Chart().mark_rule(color="black", strokeDash=[2, 3]).encode(x=alt.datum(util))
        point = (alt.Chart().mark_point(size=200, filled=False, color="black", strokeWidth=2)
                 .encode(x=x, y=y)
                 .transform_filter((alt.datum.answer == p_answer) & (alt.datum.model == model)
                                   & (alt.datum.util == util) & (alt.datum.kv == own)))
        note = (alt.Chart().mark_text(align="left", dx=10, dy=-12)
                .encode(x=x, y=y, text=alt.value(str(label)))
                .transform_filter((alt.datum.answer == p_answer) & (alt.datum.model == model)
                                  & (alt.datum.util == util) & (alt.datum.kv == own)))
        layers += [rule, point, note]
    chart = (alt.layer(*layers, data=alt.Data(values=rows))
             .properties(width=220, height=170)
             .facet(facet=alt.Facet("model:N", sort=models, title=None), columns=columns)
             .resolve_scale(y="independent")
             .add_params(p_answer))
    return _finish(chart, title, subtitle)


# --- the timeline of a run -------------------------------------------------------------

def timeline_data(runs, *, points: int = 400) -> dict:
    """A run's (or several runs') timeline, binned for a chart that stays small.

    ``runs`` is a :class:`kvsim.result.SimResult` or a mapping of label to
    results (drawn top to bottom in that order). The time axis is cut into
    ``points`` equal bins over the longest run; each bin keeps the *highest*
    KV usage, waiting and swapped counts it saw (a short spike is not averaged
    away), and an empty bin carries the state before it. Returns
    ``{"series": rows, "ticks": rows, "runs": labels, "t_end": seconds}``:
    series rows ``{run, t, kv_pct, waiting, swapped}`` (``kv_pct``: blocks
    held over the pool, as vLLM's ``kv_cache_usage_perc`` counts, in percent),
    tick rows ``{run, t, preemptions}``, one per bin with preemptions.
    """
    import numpy as np

    from .result import SimResult

    if isinstance(runs, SimResult):
        runs = {"run": runs}
    if not isinstance(runs, Mapping) or not runs:
        raise KvsimError("timeline_data: runs must be a SimResult or a non-empty mapping of "
                         "label to SimResult")
    points = check_int("points", points, min=10, max=5_000)
    for label, r in runs.items():
        if not isinstance(r, SimResult):
            raise KvsimError(f"timeline_data: runs[{label!r}] is a {type(r).__name__}: "
                             f"expected a SimResult (from kvsim.simulate)")
    t_end = max(float(r.config["simulated_s"]) for r in runs.values())
    if not t_end > 0:
        raise KvsimError("timeline_data: the runs simulated no time (simulated_s = 0)")
    edges = np.linspace(0.0, t_end, points + 1)
    series, ticks = [], []
    for label, r in runs.items():
        tl = r.timeline
        t = np.asarray(tl["t_s"], dtype=float)
        cols = {"kv": np.asarray(tl["kv_blocks_used"], dtype=float) * 100.0 / r.total_blocks,
                "waiting": np.asarray(tl["waiting"], dtype=float),
                "swapped": np.asarray(tl["swapped"], dtype=float)}
        # bin b holds the steps ending in (edges[b], edges[b + 1]]
        bins = np.clip(np.searchsorted(edges, t, side="left") - 1, 0, points - 1)
        peak = {}
        for name, values in cols.items():
            binned = np.full(points, np.nan)
            if len(t):
                np.fmax.at(binned, bins, values)
            # an empty bin carries the state before it (0 before the first step)
            filled = np.where(np.isnan(binned), -1.0, binned)
            last = 0.0
            for i in range(points):
                if filled[i] < 0:
                    filled[i] = last
                else:
                    last = filled[i]
            peak[name] = filled
        for i in range(points):
            series.append({"run": str(label), "t": round(float(edges[i + 1]), 3),
                           "kv_pct": round(float(peak["kv"][i]), 2),
                           "waiting": int(peak["waiting"][i]), "swapped": int(peak["swapped"][i])})
        ev = np.asarray(r.events["t_s"], dtype=float)
        if len(ev):
            counts = np.bincount(np.clip(np.searchsorted(edges, ev, side="left") - 1, 0, points - 1),
                                 minlength=points)
            for i in np.nonzero(counts)[0]:
                ticks.append({"run": str(label), "t": round(float(edges[i + 1]), 3),
                              "preemptions": int(counts[i])})
    return {"series": series, "ticks": ticks, "runs": [str(k) for k in runs], "t_end": t_end}


def timeline_chart(data: Mapping, *, title: str, subtitle: str | None = None,
                   playhead: bool = True, width: int = 620):
    """The book's timeline: per run, KV usage with preemption ticks over a queue strip.

    ``data`` comes from :func:`timeline_data`. Every run gets a panel of KV
    cache in use (percent of its pool, a dashed line at 100%) with a
    downward triangle above the area at each preemption (its tooltip gives the
    count), and beneath it a strip of the waiting queue (and the swapped
    requests, dashed, when there are any); all panels share one time axis. With
    ``playhead``, a slider bound to an Altair parameter moves a vertical line
    through every panel and prints the state there, so the static page can
    walk the run with no kernel.
    """
    alt = _alt()
    for key in ("series", "ticks", "runs", "t_end"):
        if key not in data:
            raise KvsimError(f"timeline_chart: data lacks {key!r}: build it with timeline_data")
    series = _need_rows(data["series"], ["run", "t", "kv_pct", "waiting", "swapped"], "timeline_chart")
    ticks = list(data["ticks"])
    runs, t_end = list(data["runs"]), float(data["t_end"])
    width = check_int("width", width, min=200, max=700)
    x_scale = alt.Scale(domain=[0, round(t_end, 3)], nice=False)
    x = alt.X("t:Q", title="time (s)", scale=x_scale)
    step = round(t_end / max(1, len({r["t"] for r in series}) // len(runs)), 3) or t_end
    p_t = alt.param(name="playhead", value=round(t_end / 2, 3),
                    bind=alt.binding_range(min=0, max=round(t_end, 3), step=step,
                                           name="Playhead (s) ")) if playhead else None
    any_swapped = any(r["swapped"] for r in series)
    top_kv = max(110.0, max(r["kv_pct"] for r in series) + 10)
    tick_y = top_kv - 4

    def playhead_layers(y_text: float, text_expr: str, rows):
        if p_t is None:
            return []
        rule = (alt.Chart(alt.InlineData(values=[{}])).transform_calculate(t="playhead")
                .mark_rule(color="black", strokeWidth=1.5).encode(x=alt.X("t:Q", scale=x_scale)))
        now = (alt.Chart(alt.InlineData(values=rows))
               .transform_filter("datum.t <= playhead")
               .transform_window(rank="rank()", sort=[alt.SortField("t", order="descending")])
               .transform_filter("datum.rank == 1")
               .transform_calculate(label=text_expr)
               .mark_text(align="left", dx=6, baseline="top")
               .encode(x=alt.X("t:Q", scale=x_scale), y=alt.value(y_text), text="label:N"))
        return [rule, now]

    panels = []
    for index, label in enumerate(runs):
        last_panel = index == len(runs) - 1
        rows = [r for r in series if r["run"] == label]
        marks = [t for t in ticks if t["run"] == label]
        base = alt.Chart(alt.InlineData(values=rows))
        kv = base.mark_area(color=PALETTE[0], opacity=0.35, line={"color": PALETTE[0]},
                            interpolate="step-before").encode(
            x=alt.X("t:Q", scale=x_scale, axis=alt.Axis(title=None, labels=False)),
            y=alt.Y("kv_pct:Q", title="KV in use (% of pool)",
                         scale=alt.Scale(domain=[0, top_kv])),
            tooltip=[alt.Tooltip("t:Q", format=",.1f", title="time (s)"),
                     alt.Tooltip("kv_pct:Q", format=".1f", title="KV in use (%)")])
        full = (alt.Chart(alt.InlineData(values=[{"y": 100}])).mark_rule(strokeDash=[4, 3], color="black")
                .encode(y="y:Q"))
        layers = [kv, full]
        if marks:
            layers.append(alt.Chart(alt.InlineData(values=marks)).mark_point(
                shape="triangle-down", filled=True, color=PALETTE[3], size=60).encode(
                x=x, y=alt.value(6),
                tooltip=[alt.Tooltip("t:Q", format=",.1f", title="time (s)"),
                         alt.Tooltip("preemptions:Q", title="preemptions")]))
        layers += playhead_layers(18, "format(datum.kv_pct, '.0f') + '% of the pool in use'", rows)
        n_pre = sum(t["preemptions"] for t in marks)
        panel_title = f"{label}: {n_pre:,} preemption{'s' if n_pre != 1 else ''} (▼)"
        top = alt.layer(*layers).properties(width=width, height=140,
                                            title=alt.TitleParams(panel_title, fontSize=13,
                                                                  anchor="start"))
        names = ["waiting", "swapped"] if any_swapped else ["waiting"]
        queue = alt.Chart(alt.InlineData(values=rows)).transform_fold(names, as_=["series", "n"])
        strip_x = x if last_panel else alt.X("t:Q", scale=x_scale,
                                             axis=alt.Axis(title=None, labels=False))
        strip = queue.mark_line(interpolate="step-before").encode(
            x=strip_x, y=alt.Y("n:Q", title="requests (count)"),
            color=alt.Color("series:N", sort=names, title=None, legend=None,
                            scale=alt.Scale(domain=names, range=[PALETTE[1], PALETTE[4]][:len(names)])),
            strokeDash=alt.StrokeDash("series:N", sort=names, legend=None,
                                      scale=alt.Scale(domain=names, range=DASHES[:len(names)])),
            tooltip=[alt.Tooltip("t:Q", format=",.1f", title="time (s)"),
                     alt.Tooltip("series:N", title="queue"), alt.Tooltip("n:Q", title="requests")])
        last_t = max(r["t"] for r in rows)
        strip_names = queue.transform_filter(f"datum.t == {last_t}").mark_text(
            align="left", dx=4).encode(
            x=x, y="n:Q", text="series:N",
            color=alt.Color("series:N", sort=names, legend=None,
                            scale=alt.Scale(domain=names, range=[PALETTE[1], PALETTE[4]][:len(names)])))
        strip_layers = [strip, strip_names] + playhead_layers(
            2, "datum.waiting + ' waiting' + (datum.swapped > 0 ? ', ' + datum.swapped + ' swapped' : '')",
            rows)
        bottom = alt.layer(*strip_layers).properties(width=width, height=60)
        panels += [top, bottom]
    chart = alt.vconcat(*panels, spacing=6).resolve_scale(color="independent",
                                                           strokeDash="independent")
    if p_t is not None:
        chart = chart.add_params(p_t)
    return _finish(chart, title, subtitle)
