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
    "stepper_data", "stepper_chart",
    "seed_summary", "bars_chart", "lines_chart", "band_chart", "work_split_data", "work_split_chart",
    "spans_chart", "histogram_chart", "WORK_KINDS", "work_rate_data", "work_rate_chart",
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


# --- the scheduler stepper ------------------------------------------------------------

#: The stepper's states, drawn in this order with these colours (and a text label each).
STEPPER_STATES = ("decoding", "prefilling", "waiting", "preempted", "finished", "not arrived")
_STATE_COLOURS = [PALETTE[0], PALETTE[5], PALETTE[1], PALETTE[3], NEUTRAL, PALETTE[6]]


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def stepper_data(frames: Sequence[Mapping]) -> dict:
    """Rows for :func:`stepper_chart` from :func:`kvsim.stepper.scheduler_frames`.

    Returns ``{"bars": rows, "notes": rows, "steps": n, "total_blocks": n}``:
    one bar row per request per step (the pool's free blocks as a last row
    named "free"), one note row per step (the story, wrapped for the page).
    """
    frames = list(frames)
    if not frames:
        raise KvsimError("stepper_data: frames=[] is empty: expected frames from "
                         "kvsim.stepper.scheduler_frames")
    bars, notes = [], []
    for f in frames:
        for r in f["requests"]:
            if r["state"] == "preempted":
                label = f"preempted ({r['preemptions']}x), waiting with 0 blocks"
            elif r["blocks"]:
                label = f"{r['state']}, {r['blocks']} blocks ({r['tokens']} tokens)"
                if r["needs_block"]:
                    label += ", needs a block"
            else:
                label = r["state"]
            bars.append({"step": f["step"], "row": r["name"], "state": r["state"],
                         "blocks": r["blocks"], "label": label})
        bars.append({"step": f["step"], "row": "free", "state": "free",
                     "blocks": f["free_blocks"], "label": f"{f['free_blocks']} free blocks"})
        queue = ", ".join(f["waiting"]) if f["waiting"] else "empty"
        notes.append({"step": f["step"], "story": _wrap(f["story"], 62),
                      "queue": f"waiting queue (front first): {queue}"})
    return {"bars": bars, "notes": notes, "steps": len(frames),
            "total_blocks": frames[0]["total_blocks"]}


def stepper_chart(data: Mapping, *, title: str, subtitle: str | None = None, start: int = 1,
                  width: int = 360):
    """The scheduler stepper's static twin: one engine step per slider tick.

    ``data`` comes from :func:`stepper_data`. For the step the slider picks, a
    bar per request shows the blocks it holds (colour and a text label both
    give its state), a last bar the pool's free blocks, and above them the
    step's story: who was admitted, who needed a block, the victim and where it
    went.
    """
    alt = _alt()
    for key in ("bars", "notes", "steps", "total_blocks"):
        if key not in data:
            raise KvsimError(f"stepper_chart: data lacks {key!r}: build it with stepper_data")
    steps = check_int("steps", data["steps"], min=1, max=100_000)
    start = check_int("start", start, min=1, max=steps)
    width = check_int("width", width, min=200, max=700)
    rows = sorted({b["row"] for b in data["bars"] if b["row"] != "free"},
                  key=lambda name: int(name[1:])) + ["free"]
    p_step = alt.param(name="step", value=start,
                       bind=alt.binding_range(min=1, max=steps, step=1, name="Engine step "))
    states = list(STEPPER_STATES) + ["free"]
    colours = _STATE_COLOURS + [PALETTE[2]]
    x_max = max(data["total_blocks"], max(b["blocks"] for b in data["bars"]))
    base = (alt.Chart(alt.InlineData(values=list(data["bars"])))
            .transform_filter("datum.step == step"))
    y = alt.Y("row:N", sort=rows, title=None)
    bars = base.mark_bar(height=16).encode(
        x=alt.X("blocks:Q", title=f"KV blocks held (of the pool's {data['total_blocks']})",
                scale=alt.Scale(domain=[0, x_max])),
        y=y, color=alt.Color("state:N", scale=alt.Scale(domain=states, range=colours),
                             legend=None),
        tooltip=[alt.Tooltip("row:N", title="request"), alt.Tooltip("label:N", title="state")])
    labels = base.mark_text(align="left", dx=4).encode(
        x=alt.X("blocks:Q", title=f"KV blocks held (of the pool's {data['total_blocks']})"),
        y=y, text="label:N")
    panel = alt.layer(bars, labels).properties(width=width, height=24 * len(rows))
    notes = (alt.Chart(alt.InlineData(values=list(data["notes"])))
             .transform_filter("datum.step == step"))
    story = notes.mark_text(align="left", baseline="top", lineBreak="\n", fontSize=13).encode(
        x=alt.value(0), y=alt.value(0), text="story:N")
    queue = notes.mark_text(align="left", baseline="top", fontSize=13, fontWeight="bold").encode(
        x=alt.value(0), y=alt.value(72), text="queue:N")
    header = alt.layer(story, queue).properties(width=width, height=90, view={"stroke": None})
    chart = alt.vconcat(header, panel, spacing=4).add_params(p_step)
    return _finish(chart, title, subtitle)


# --- chapter 2: runs compared ----------------------------------------------------------

def _median_spread(values) -> tuple[float, float, float]:
    import numpy as np

    a = np.asarray(list(values), dtype=float)
    return float(np.median(a)), float(a.min()), float(a.max())


def seed_summary(table, by: Sequence[str], metrics: Sequence[str]) -> list[dict]:
    """Median, min and max over seeds of ``metrics``, one row per ``by`` group.

    ``table`` is a :func:`kvsim.sweep` result (a :class:`kvsim.result.Table`);
    rows come back in the sweep's grid order, each with the group's keys and
    ``<metric>``, ``<metric>_lo``, ``<metric>_hi`` and ``seeds``.
    """
    for name in list(by) + list(metrics):
        if name not in table:
            raise KvsimError(f"seed_summary: the table has no column {name!r}: expected one of "
                             f"{', '.join(table.columns)}")
    groups: dict[tuple, list[int]] = {}
    keys = [tuple(_plain_value(table[b][i]) for b in by) for i in range(table.num_rows)]
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    rows = []
    for k, idx in groups.items():
        row = dict(zip(by, k))
        for m in metrics:
            med, lo, hi = _median_spread(table[m][i] for i in idx)
            row.update({m: round(med, 4), f"{m}_lo": round(lo, 4), f"{m}_hi": round(hi, 4)})
        row["seeds"] = len(idx)
        rows.append(row)
    return rows


def _plain_value(x):
    if hasattr(x, "item"):
        x = x.item()
    return x


def bars_chart(rows: Iterable[Mapping], *, category: str, panels: Sequence[tuple[str, str]],
               title: str, subtitle: str | None = None, label_format: str = ",.1f",
               width: int = 300):
    """One horizontal bar per ``category`` value, one panel per metric (stacked), each bar labelled.

    ``panels`` is a list of ``(column, axis title with unit)`` or ``(column,
    axis title, d3 format of the labels)``. Where a row has
    ``<column>_lo`` and ``<column>_hi`` (from :func:`seed_summary`), a black
    rule shows the spread over seeds. Categories keep the rows' order.
    """
    alt = _alt()
    panels = [tuple(p) + (label_format,) * (3 - len(p)) for p in panels]
    rows = _need_rows(rows, [category] + [p[0] for p in panels], "bars_chart")
    order = list(dict.fromkeys(str(r[category]) for r in rows))
    charts = []
    for col, axis_title, fmt in panels:
        data = [{"cat": str(r[category]), "v": r[col], "lo": r.get(f"{col}_lo", r[col]),
                 "hi": r.get(f"{col}_hi", r[col])} for r in rows]
        base = alt.Chart(alt.InlineData(values=data))
        y = alt.Y("cat:N", sort=order, title=None, axis=alt.Axis(labelLimit=200))
        top = max(max(d["hi"] for d in data), 1e-9) * 1.45
        bar = base.mark_bar(color=PALETTE[0], height=18).encode(
            x=alt.X("v:Q", title=axis_title, scale=alt.Scale(domain=[0, top])), y=y,
            tooltip=[alt.Tooltip("cat:N", title=category), alt.Tooltip("v:Q", format=fmt),
                     alt.Tooltip("lo:Q", format=fmt, title="lowest seed"),
                     alt.Tooltip("hi:Q", format=fmt, title="highest seed")])
        spread = base.mark_rule(color="black").encode(x=alt.X("lo:Q", title=axis_title), x2="hi:Q",
                                                      y=y)
        text = base.mark_text(align="left", dx=4).encode(
            x=alt.X("hi:Q", title=axis_title), y=y, text=alt.Text("v:Q", format=fmt))
        charts.append(alt.layer(bar, spread, text).properties(width=width, height=30 * len(order)))
    # panels stacked, not side by side: each stays readable on a phone
    chart = alt.vconcat(*charts, spacing=10).resolve_scale(x="independent")
    return _finish(chart, title, subtitle)


def lines_chart(rows: Iterable[Mapping], *, x: tuple[str, str], series: str,
                panels: Sequence[tuple[str, str, str]], title: str, subtitle: str | None = None,
                marks: Sequence = (), width: int = 300, stacked: bool = False,
                points: bool = True, height: int = 200):
    """Small multiples of lines over ``x``, one line per ``series`` value.

    ``x`` is ``(column, axis title)``; ``panels`` is a list of ``(column,
    axis title, "linear" or "log")``, side by side, or one above the other
    with ``stacked`` (a dashboard over time). Each line has its own dash and an end
    label in the first panel (never colour alone); a band shows the spread over seeds when the
    rows carry ``<column>_lo``/``_hi``. ``marks`` are x values to mark with a
    rule ("you are here").
    """
    alt = _alt()
    x_col, x_title = x
    rows = _need_rows(rows, [x_col, series] + [c for c, _, _ in panels], "lines_chart")
    names = list(dict.fromkeys(str(r[series]) for r in rows))
    if len(names) > len(DASHES):
        raise KvsimError(f"lines_chart: {len(names)} series is too many: expected at most "
                         f"{len(DASHES)}")
    colour = alt.Color("s:N", sort=names, legend=None,
                       scale=alt.Scale(domain=names, range=PALETTE[:len(names)]))
    dash = alt.StrokeDash("s:N", sort=names, legend=None,
                          scale=alt.Scale(domain=names, range=DASHES[:len(names)]))
    x_max = max(r[x_col] for r in rows)
    charts = []
    for index, (col, axis_title, scale_type) in enumerate(panels):
        data = [{"x": r[x_col], "s": str(r[series]), "v": r[col], "lo": r.get(f"{col}_lo", r[col]),
                 "hi": r.get(f"{col}_hi", r[col])} for r in rows]
        if scale_type == "log":      # a log axis has no place for 0 (or a missing value)
            data = [d for d in data if d["v"] is not None and d["v"] > 0 and d["lo"] > 0]
        else:
            data = [d for d in data if d["v"] is not None]
        if not data:
            raise KvsimError(f"lines_chart: no value of {col!r} to draw"
                             + (" above 0 on its log axis" if scale_type == "log" else ""))
        base = alt.Chart(alt.InlineData(values=data))
        y_scale = alt.Scale(type=scale_type) if scale_type == "log" else alt.Scale(zero=True)
        y_axis = alt.Axis(title=axis_title)
        if scale_type == "log":    # one tick per power of ten, not Vega's nine per decade
            import math

            low = min(d["lo"] for d in data if d["lo"] > 0)
            high = max(d["hi"] for d in data)
            y_axis = alt.Axis(title=axis_title, format="~g", values=[
                10.0 ** k for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)])
        xe = alt.X("x:Q", title=x_title, scale=alt.Scale(domain=[0, x_max * 1.25]))
        band = base.mark_area(opacity=0.15).encode(
            x=xe, y=alt.Y("lo:Q", scale=y_scale, title=axis_title), y2="hi:Q", color=colour)
        line = base.mark_line(point=points).encode(
            x=xe, y=alt.Y("v:Q", title=axis_title, axis=y_axis, scale=y_scale), color=colour,
            strokeDash=dash,
            tooltip=[alt.Tooltip("s:N", title=series), alt.Tooltip("x:Q", title=x_title),
                     alt.Tooltip("v:Q", format=",.2f", title=axis_title)])
        ends = base.transform_joinaggregate(last="max(x)", groupby=["s"]).transform_filter(
            "datum.x == datum.last").mark_text(align="left", dx=6).encode(
            x=xe, y=alt.Y("v:Q", scale=y_scale, title=axis_title), text="s:N", color=colour)
        layers = [band, line] + ([ends] if index == 0 else [])   # one set of names is enough
        if marks:
            layers.append(alt.Chart(alt.InlineData(values=[{"x": m} for m in marks]))
                          .mark_rule(strokeDash=[2, 2], color="black").encode(
                              x=alt.X("x:Q", title=x_title)))
        charts.append(alt.layer(*layers).properties(width=width, height=height))
    chart = alt.vconcat(*charts, spacing=8) if stacked else alt.hconcat(*charts, spacing=16)
    return _finish(chart, title, subtitle)


def band_chart(rows: Iterable[Mapping], *, x: tuple[str, str], y: tuple[str, str], facet: str,
               passes: str, label: str, title: str, subtitle: str | None = None):
    """A grid of settings per ``facet`` value: each cell says its figures and whether it passes.

    Rows carry the two settings (``x``, ``y``: ``(column, axis title)``), the
    ``facet`` column, a boolean ``passes`` column and a ``label`` text ("|"
    breaks a line); a passing cell is filled (and its text starts with a tick), so the band of settings
    that meet the target shows without colour alone.
    """
    alt = _alt()
    rows = _need_rows(rows, [x[0], y[0], facet, passes, label], "band_chart")
    data = [{"x": str(r[x[0]]), "y": str(r[y[0]]), "f": str(r[facet]), "ok": bool(r[passes]),
             "text": ("✓ " if r[passes] else "") + str(r[label])} for r in rows]
    xs = list(dict.fromkeys(d["x"] for d in data))
    ys = list(dict.fromkeys(d["y"] for d in data))
    base = alt.Chart()
    cells = base.mark_rect(stroke=NEUTRAL).encode(
        x=alt.X("x:N", sort=xs, title=x[1], axis=alt.Axis(labelAngle=0)),
        y=alt.Y("y:N", sort=ys, title=y[1]),
        color=alt.Color("ok:N", legend=None,
                        scale=alt.Scale(domain=[False, True], range=["white", PALETTE[2]])))
    text = base.mark_text(fontSize=MIN_FONT_PX, lineBreak="|").encode(
        x=alt.X("x:N", sort=xs), y=alt.Y("y:N", sort=ys), text="text:N",
        color=alt.condition("datum.ok", alt.value("white"), alt.value("black")))
    chart = (alt.layer(cells, text, data=alt.InlineData(values=data))
             .properties(width=62 * len(xs), height=56 * len(ys))
             .facet(column=alt.Column("f:N", sort=list(dict.fromkeys(d["f"] for d in data)),
                                      title=None)))
    return _finish(chart, title, subtitle)


def work_split_data(runs: Mapping[str, object]) -> list[dict]:
    """Tokens each run processed, split into useful work, recomputation and cache rescues.

    ``runs`` maps a label to a :class:`kvsim.result.SimResult`. Per run:
    ``useful`` (prompt tokens prefilled once, plus decoded tokens),
    ``recomputed`` (prompt and answer tokens prefilled again after a
    preemption) and ``rescued`` (tokens a resumed request found in the prefix
    cache instead: work *avoided*, not done), each also as a share of the
    work done.
    """
    import numpy as np

    from .result import SimResult

    if not isinstance(runs, Mapping) or not runs:
        raise KvsimError("work_split_data: runs must be a non-empty mapping of label to SimResult")
    rows = []
    for label, r in runs.items():
        if not isinstance(r, SimResult):
            raise KvsimError(f"work_split_data: runs[{label!r}] is a {type(r).__name__}: "
                             "expected a SimResult")
        done = int(np.sum(r.timeline["prefill_tokens"]) + np.sum(r.timeline["decode_tokens"]))
        recomputed = int(np.sum(r.requests["recomputed_tokens"]))
        rescued = int(np.sum(r.requests["rescued_tokens"]))
        for kind, tokens in (("useful", done - recomputed), ("recomputed", recomputed),
                             ("rescued by the prefix cache", rescued)):
            rows.append({"run": str(label), "kind": kind, "tokens": tokens,
                         "share_pct": round(100.0 * tokens / done, 2) if done else 0.0})
    return rows


def work_split_chart(rows: Iterable[Mapping], *, title: str, subtitle: str | None = None,
                     width: int = 300):
    """The recompute tax: per run, the share of the engine's work that was recomputation.

    Bars of useful work and recomputation stacked to 100% of the tokens
    processed, with the tokens rescued by the prefix cache as an outlined bar
    beyond them (work the engine did *not* do); every segment is labelled.
    """
    alt = _alt()
    rows = _need_rows(rows, ["run", "kind", "tokens", "share_pct"], "work_split_chart")
    runs = list(dict.fromkeys(r["run"] for r in rows))
    data = []
    for name in runs:
        useful = next(r for r in rows if r["run"] == name and r["kind"] == "useful")
        redo = next(r for r in rows if r["run"] == name and r["kind"] == "recomputed")
        saved = next(r for r in rows if r["run"] == name and r["kind"].startswith("rescued"))
        label = f"{redo['share_pct']:.1f}% recomputed" if redo["tokens"] else "no recompute"
        if saved["tokens"]:
            label += f", {saved['share_pct']:.1f}% rescued"
        data += [{"run": name, "kind": "useful", "a": 0, "b": useful["share_pct"],
                  "tokens": useful["tokens"], "label": f"{useful['share_pct']:.0f}% useful"},
                 {"run": name, "kind": "recomputed", "a": useful["share_pct"], "b": 100.0,
                  "tokens": redo["tokens"], "label": label},
                 {"run": name, "kind": "rescued", "a": 100.0, "b": 100.0 + saved["share_pct"],
                  "tokens": saved["tokens"], "label": ""}]
    ends = {d["run"]: max(e["b"] for e in data if e["run"] == d["run"] and
                          (e["kind"] != "rescued" or e["tokens"])) for d in data}
    for d in data:
        d["end"] = ends[d["run"]]
    kinds = ["useful", "recomputed", "rescued"]
    base = alt.Chart(alt.InlineData(values=data))
    y = alt.Y("run:N", sort=runs, title=None)
    x_top = max(100.0, max(d["b"] for d in data))   # labels run on past the plot
    fill = base.transform_filter("datum.kind != 'rescued'").mark_bar(height=20).encode(
        x=alt.X("a:Q", title="tokens processed (% of the run's work)",
                scale=alt.Scale(domain=[0, x_top])), x2="b:Q", y=y,
        color=alt.Color("kind:N", legend=None,
                        scale=alt.Scale(domain=kinds, range=[PALETTE[0], PALETTE[3], PALETTE[2]])),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("kind:N"),
                 alt.Tooltip("tokens:Q", format=",d")])
    outline = base.transform_filter("datum.kind == 'rescued' && datum.tokens > 0").mark_bar(
        height=20, fill="white", stroke=PALETTE[2], strokeDash=[4, 2], strokeWidth=2).encode(
        x=alt.X("a:Q", title="tokens processed (% of the run's work)"), x2="b:Q", y=y,
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("tokens:Q", format=",d")])
    labels = base.transform_filter("datum.kind == 'recomputed'").mark_text(
        align="left", dx=6).encode(x=alt.X("end:Q", title="tokens processed (% of the run's work)"),
                                   y=y, text="label:N")
    inside = base.transform_filter("datum.kind == 'useful'").mark_text(
        align="left", dx=6, color="white").encode(
        x=alt.X("a:Q", title="tokens processed (% of the run's work)"), y=y, text="label:N")
    chart = alt.layer(fill, outline, inside, labels).properties(width=width, height=34 * len(runs))
    return _finish(chart, title, subtitle)


def spans_chart(rows: Iterable[Mapping], *, title: str, subtitle: str | None = None,
                x_title: str = "time (min)", marks: Sequence = (), width: int = 420):
    """One row per item with a bar from ``start`` to ``end`` (an alert's firing span) and a
    text label (``label``, e.g. "never fires"); ``start`` None draws only the label."""
    alt = _alt()
    rows = _need_rows(rows, ["rule", "start", "end", "label"], "spans_chart")
    order = [str(r["rule"]) for r in rows]
    x_max = max([r["end"] for r in rows if r["end"] is not None] + list(marks) + [1.0])
    data = [{"rule": str(r["rule"]), "start": r["start"], "end": r["end"],
             "label": str(r["label"]), "at": r["end"] if r["end"] is not None else 0.0}
            for r in rows]
    base = alt.Chart(alt.InlineData(values=data))
    y = alt.Y("rule:N", sort=order, title=None, axis=alt.Axis(labelLimit=260))
    x = alt.X("start:Q", title=x_title, scale=alt.Scale(domain=[0, x_max * 1.15]))
    bars = base.transform_filter("datum.start != null").mark_bar(
        height=14, color=PALETTE[3]).encode(x=x, x2="end:Q", y=y,
                                            tooltip=[alt.Tooltip("rule:N"),
                                                     alt.Tooltip("label:N")])
    labels = base.mark_text(align="left", dx=4).encode(
        x=alt.X("at:Q", title=x_title), y=y, text="label:N")
    layers = [bars, labels]
    if marks:
        layers.append(alt.Chart(alt.InlineData(values=[{"m": m} for m in marks]))
                      .mark_rule(strokeDash=[2, 2], color="black")
                      .encode(x=alt.X("m:Q", title=x_title)))
    chart = alt.layer(*layers).properties(width=width, height=26 * len(order))
    return _finish(chart, title, subtitle)


def histogram_chart(edges: Sequence[float], counts: Sequence[float], *, marks: Mapping[str, float],
                    title: str, subtitle: str | None = None, x_title: str = "latency (ms)",
                    scale: float = 1e3, width: int = 480):
    """A latency histogram as Prometheus keeps it: one bar per bucket (cumulative ``counts``
    turned into per-bucket counts, ``+Inf`` last), on a log axis, with a labelled rule at
    each of ``marks`` (``{"mean": s, "p99": s, ...}``, in the same unit as ``edges``)."""
    alt = _alt()
    edges = [float(e) for e in edges]
    counts = [float(c) for c in counts]
    if len(counts) != len(edges) + 1 or not edges:
        raise KvsimError(f"histogram_chart: counts has {len(counts)} values: expected "
                         f"{len(edges) + 1} (one per edge and +Inf)")
    rows, lo, prev = [], edges[0] / 2, 0.0
    for edge, c in zip(edges, counts):
        rows.append({"lo": round(lo * scale, 4), "hi": round(edge * scale, 4),
                     "n": c - prev, "label": f"le={edge:g}"})
        lo, prev = edge, c
    rows = [r for r in rows if r["n"] > 0]
    base = alt.Chart(alt.InlineData(values=rows))
    x = alt.X("lo:Q", title=x_title, scale=alt.Scale(type="log"))
    bars = base.mark_rect(color=PALETTE[0], opacity=0.8, stroke="white").encode(
        x=x, x2="hi:Q", y=alt.Y("n:Q", title="inter-token gaps (count, log scale)",
                               scale=alt.Scale(type="log")),
        tooltip=[alt.Tooltip("label:N", title="bucket"), alt.Tooltip("n:Q", format=",.0f")])
    mark_rows = [{"x": round(v * scale, 4), "name": f"{k} {v * scale:,.0f}"}
                 for k, v in marks.items()]
    rules = alt.Chart(alt.InlineData(values=mark_rows)).mark_rule(
        color="black", strokeDash=[4, 3]).encode(x=alt.X("x:Q", title=x_title))
    # one label per mark, each a line lower than the last, so that close marks stay legible
    names = [alt.Chart(alt.InlineData(values=[row])).mark_text(
        align="left", dx=4, dy=14 * i, baseline="top").encode(
        x=alt.X("x:Q", title=x_title), y=alt.value(0), text="name:N")
        for i, row in enumerate(mark_rows)]
    chart = alt.layer(bars, rules, *names).properties(width=width, height=220)
    return _finish(chart, title, subtitle)


#: The kinds of work in :func:`work_rate_data`, bottom to top of the stack.
WORK_KINDS = ("prompts, first pass", "recomputed", "decoded")


def work_rate_data(result, *, bin_s: float = 60.0) -> list[dict]:
    """The engine's tokens per second by kind of work, in bins of ``bin_s`` seconds.

    From the run's timeline: prompt tokens prefilled for the first time
    (``prefill_tokens - recomputed_tokens``), tokens prefilled again after a
    preemption (``recomputed_tokens``) and decoded tokens. Rows ``{t_min, kind,
    tok_s, order}``; goodput is the decoded share, throughput the whole stack.
    """
    import numpy as np

    from .errors import check_float
    from .result import SimResult

    if not isinstance(result, SimResult):
        raise KvsimError(f"work_rate_data: result is a {type(result).__name__}: expected a "
                         "SimResult")
    bin_s = check_float("bin_s", bin_s, min=1.0, max=86_400.0)
    tl = result.timeline
    t = np.asarray(tl["t_s"], dtype=float)
    bins = np.floor(t / bin_s).astype(int)
    n = int(bins.max()) + 1 if len(bins) else 0
    redo = np.asarray(tl["recomputed_tokens"], dtype=float)
    parts = {"prompts, first pass": np.asarray(tl["prefill_tokens"], dtype=float) - redo,
             "recomputed": redo, "decoded": np.asarray(tl["decode_tokens"], dtype=float)}
    rows = []
    for order, kind in enumerate(WORK_KINDS):
        per_bin = np.bincount(bins, weights=parts[kind], minlength=n) / bin_s
        rows += [{"t_min": round((b + 0.5) * bin_s / 60.0, 3), "kind": kind,
                  "tok_s": round(float(v), 1), "order": order} for b, v in enumerate(per_bin)]
    return rows


def work_rate_chart(rows: Iterable[Mapping], *, title: str, subtitle: str | None = None,
                    marks: Sequence = (), label_at: float | None = None, width: int = 480):
    """A stacked area of the engine's work by kind over time, each band named in place."""
    alt = _alt()
    rows = _need_rows(rows, ["t_min", "kind", "tok_s", "order"], "work_rate_chart")
    kinds = [k for k in WORK_KINDS if any(r["kind"] == k for r in rows)]
    colour = alt.Color("kind:N", sort=kinds, legend=None,
                       scale=alt.Scale(domain=kinds, range=[PALETTE[0], PALETTE[3], PALETTE[2]]))
    x = alt.X("t_min:Q", title="time (min)")
    y_title = "engine work (tokens/s)"
    base = alt.Chart(alt.InlineData(values=list(rows)))
    area = base.mark_area(interpolate="step-after", opacity=0.85).encode(
        x=x, y=alt.Y("tok_s:Q", title=y_title, stack=True), color=colour,
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("t_min:Q", title="minute"), alt.Tooltip("kind:N"),
                 alt.Tooltip("tok_s:Q", format=",.0f", title="tokens/s")])
    at = label_at if label_at is not None else max(r["t_min"] for r in rows) / 2
    nearest = min({r["t_min"] for r in rows}, key=lambda v: abs(v - at))
    labels = (base.transform_stack(stack="tok_s", groupby=["t_min"], as_=["y0", "y1"],
                                   sort=[alt.SortField("order")])
              .transform_filter(f"datum.t_min == {nearest} && datum.tok_s > 0")
              .transform_calculate(mid="(datum.y0 + datum.y1) / 2")
              .mark_text(align="left", dx=4, color="black").encode(
                  x=x, y=alt.Y("mid:Q", title=y_title), text="kind:N"))
    layers = [area, labels]
    if marks:
        layers.append(alt.Chart(alt.InlineData(values=[{"m": m} for m in marks]))
                      .mark_rule(strokeDash=[2, 2], color="black")
                      .encode(x=alt.X("m:Q", title="time (min)")))
    chart = alt.layer(*layers).properties(width=width, height=220)
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

    def playhead_layers(y_text: float, text_expr: str, rows):
        if p_t is None:
            return []
        rule = (alt.Chart(alt.InlineData(values=[{}])).transform_calculate(t="playhead")
                .mark_rule(color="black", strokeWidth=1.5).encode(
                    x=alt.X("t:Q", title="time (s)", scale=x_scale)))
        now = (alt.Chart(alt.InlineData(values=rows))
               .transform_filter("datum.t <= playhead")
               .transform_window(rank="rank()", sort=[alt.SortField("t", order="descending")])
               .transform_filter("datum.rank == 1")
               .transform_calculate(label=text_expr)
               .mark_text(align="left", dx=6, baseline="top")
               .encode(x=alt.X("t:Q", title="time (s)", scale=x_scale), y=alt.value(y_text),
                       text="label:N"))
        return [rule, now]

    panels = []
    for index, label in enumerate(runs):
        last_panel = index == len(runs) - 1
        rows = [r for r in series if r["run"] == label]
        marks = [t for t in ticks if t["run"] == label]
        base = alt.Chart(alt.InlineData(values=rows))
        kv = base.mark_area(color=PALETTE[0], opacity=0.35, line={"color": PALETTE[0]},
                            interpolate="step-before").encode(
            x=alt.X("t:Q", title="time (s)", scale=x_scale,
                    axis=alt.Axis(title=None, labels=False)),
            y=alt.Y("kv_pct:Q", title="KV in use (% of pool)",
                         scale=alt.Scale(domain=[0, top_kv])),
            tooltip=[alt.Tooltip("t:Q", format=",.1f", title="time (s)"),
                     alt.Tooltip("kv_pct:Q", format=".1f", title="KV in use (%)")])
        full = (alt.Chart(alt.InlineData(values=[{"y": 100}])).mark_rule(strokeDash=[4, 3], color="black")
                .encode(y=alt.Y("y:Q", title="KV in use (% of pool)")))
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
        strip_x = x if last_panel else alt.X("t:Q", title="time (s)", scale=x_scale,
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
            x=x, y=alt.Y("n:Q", title="requests (count)"), text="series:N",
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


# =====================================================================================
# Chapter 3, *Swap versus recompute*: the two costs side by side, the crossover, the
# block-size study, and the median-and-spread chart of a seeded comparison.
# =====================================================================================

__all__ += ["swap_recompute_data", "swap_recompute_chart", "get_gpu_label", "block_size_data",
            "block_size_chart", "spread_data", "spread_chart"]

#: How chapter 3's charts name the preemption modes (and the order of their colours and dashes).
MODES = ["recompute", "swap out + in"]


def _ms(seconds: float) -> float:
    return round(1e3 * float(seconds), 3)


def swap_recompute_data(model, gpus: Iterable[str], *, links: Mapping[str, float | None],
                        block_sizes: Iterable[int], lengths: Iterable[int]) -> list[dict]:
    """Rows for :func:`swap_recompute_chart`: both costs by sequence length, and where they cross.

    Curve rows ``{kind: "curve", gpu, link, bs, n, mode, ms}``: recompute
    (:func:`kvsim.costs.recompute_time_s`, one row per GPU and length, with
    ``link`` and ``bs`` ``"any"`` and 0, since a prefill moves nothing over
    PCIe) and a swap round trip (:func:`kvsim.costs.swap_round_trip_s`) for
    every link and block size. Crossing rows ``{kind: "cross", gpu, link, bs,
    n, label}`` from :func:`kvsim.costs.crossover_tokens` (one per crossing;
    ``n`` is ``None`` and the label says which is cheaper when none falls in
    the range). Ratio rows ``{kind: "ratio", gpu, link, bs, n, ratio, rc_ms,
    sw_ms}``: recompute over the swap round trip, which
    :func:`swap_recompute_chart` draws. ``links`` maps a label to bytes per
    second, ``None`` for the GPU preset's own link.
    """
    from .costs import CostModel, crossover_tokens, recompute_time_s, swap_round_trip_s
    from .hardware import get_gpu

    gpus = [get_gpu(g).name for g in gpus]
    ns = sorted({check_int("lengths", n, min=1) for n in lengths})
    sizes = [check_int("block_sizes", b, min=1, max=4096) for b in block_sizes]
    if not gpus or not ns or not sizes or not links:
        raise KvsimError("swap_recompute_data: gpus, links, block_sizes and lengths must not be empty")
    rows: list[dict] = []
    for g in gpus:
        rows += [{"kind": "curve", "gpu": g, "link": "any", "bs": 0, "n": n, "mode": MODES[0],
                  "ms": _ms(recompute_time_s(n, model, g))} for n in ns]
        for label, bw in links.items():
            if bw is not None:
                from .errors import check_float

                check_float(f"links[{label!r}]", bw, min=0, min_open=True)
            cost = CostModel(pcie_bytes_per_s=bw)
            for bs in sizes:
                rows += [{"kind": "curve", "gpu": g, "link": str(label), "bs": bs, "n": n,
                          "mode": MODES[1], "ms": _ms(swap_round_trip_s(n, model, g, cost,
                                                                        block_size=bs))}
                         for n in ns]
                rc = {n: recompute_time_s(n, model, g) for n in ns}
                for n in ns:
                    sw = swap_round_trip_s(n, model, g, cost, block_size=bs)
                    rows.append({"kind": "ratio", "gpu": g, "link": str(label), "bs": bs, "n": n,
                                 "ratio": round(rc[n] / sw, 4), "rc_ms": _ms(rc[n]),
                                 "sw_ms": _ms(sw)})
                cross = crossover_tokens(model, g, cost, block_size=bs, min_tokens=ns[0],
                                         max_tokens=ns[-1])
                if not cross:
                    cheaper = MODES[1] if recompute_time_s(ns[0], model, g) > \
                        swap_round_trip_s(ns[0], model, g, cost, block_size=bs) else MODES[0]
                    name = "swap" if cheaper == MODES[1] else "recompute"
                    rows.append({"kind": "cross", "gpu": g, "link": str(label), "bs": bs,
                                 "n": None, "label": f"{name} is cheaper at every length"})
                for n in cross:
                    rows.append({"kind": "cross", "gpu": g, "link": str(label), "bs": bs,
                                 "n": n, "label": f"cross at {n:,}"})
    return rows


def _k_label_expr() -> str:
    """Tick labels of a token axis: 256, 1K, 4K, 16K, 64K (1K = 1,024 tokens)."""
    return ("datum.value >= 1024 ? format(datum.value / 1024, 'd') + 'K' "
            ": format(datum.value, 'd')")


def swap_recompute_chart(rows: Iterable[Mapping], *, title, subtitle: str | None = None,
                         link: str | None = None, block_size: int = 16,
                         interactive: bool = False):
    """Recompute / swap round trip against sequence length, one line per GPU, a rule at 1.

    Above the rule a swap is cheaper, below it recompute; a crossing is where a
    line crosses 1, marked with its length. The ratio does not depend on how
    often a request is preempted (each preemption pays both again), so no
    control changes it. Log-log axes, one colour, dash and end label per GPU.
    With ``interactive=True`` radio buttons pick the link and the block size
    (the static twin of the chapter's widget); otherwise ``link`` (default: the
    first in the rows) and ``block_size`` are fixed.
    """
    alt = _alt()
    rows = _need_rows(rows, ["kind", "gpu", "link", "bs", "n"], "swap_recompute_chart")
    gpus = list(dict.fromkeys(r["gpu"] for r in rows))
    links = list(dict.fromkeys(r["link"] for r in rows if r["link"] != "any"))
    sizes = sorted({r["bs"] for r in rows if r["bs"]})
    link = links[0] if link is None else link
    if link not in links:
        raise KvsimError(f"link={link!r} is not in the rows: expected one of {', '.join(links)}")
    if block_size not in sizes:
        raise KvsimError(f"block_size={block_size!r} is not in the rows: expected one of {sizes}")
    if len(gpus) > len(DASHES):
        raise KvsimError(f"swap_recompute_chart: {len(gpus)} GPUs: expected at most {len(DASHES)}")
    if interactive:
        p_link = alt.param(name="link", value=link,
                           bind=alt.binding_radio(options=links, name="PCIe link "))
        p_bs = alt.param(name="bs", value=block_size,
                         bind=alt.binding_radio(options=sizes, name="Block size (tokens) "))
        params = [p_link, p_bs]
        pick = (alt.datum.link == p_link) & (alt.datum.bs == p_bs)
    else:
        params = []
        pick = (alt.datum.link == link) & (alt.datum.bs == block_size)
    ratio_rows = [r for r in rows if r["kind"] == "ratio"]
    if not ratio_rows:
        raise KvsimError("swap_recompute_chart: the rows hold no ratio rows: expected rows from "
                         "swap_recompute_data")
    ns = [r["n"] for r in ratio_rows]
    ticks = [v for v in (256, 1024, 4096, 16384, 65536) if min(ns) <= v <= max(ns)]
    x = alt.X("n:Q", title="sequence length (tokens, log scale)",
              scale=alt.Scale(type="log", domain=[min(ns), max(ns)], nice=False),
              axis=alt.Axis(values=ticks, labelExpr=_k_label_expr()))
    y = alt.Y("ratio:Q", title="recompute time / swap round trip (ratio, log scale)",
              scale=alt.Scale(type="log"),
              axis=alt.Axis(values=[0.25, 0.5, 1, 2, 4, 8, 16], format="~g"))
    names = [get_gpu_label(g) for g in gpus]
    colour = alt.Color("gpu_label:N", sort=names, legend=None,
                       scale=alt.Scale(domain=names, range=PALETTE[:len(names)]))
    dash = alt.StrokeDash("gpu_label:N", sort=names, legend=None,
                          scale=alt.Scale(domain=names, range=DASHES[:len(names)]))
    label_of = "{" + ", ".join(f"{g!r}: {get_gpu_label(g)!r}" for g in gpus) + "}"
    index_of = "{" + ", ".join(f"{g!r}: {i}" for i, g in enumerate(gpus)) + "}"
    base = alt.Chart().transform_calculate(gpu_label=f"{label_of}[datum.gpu]",
                                           gpu_i=f"{index_of}[datum.gpu]")
    ratio = base.transform_filter((alt.datum.kind == "ratio") & pick)
    tips = [alt.Tooltip("gpu_label:N", title="GPU"),
            alt.Tooltip("n:Q", format=",", title="tokens"),
            alt.Tooltip("rc_ms:Q", format=",.1f", title="recompute (ms)"),
            alt.Tooltip("sw_ms:Q", format=",.1f", title="swap out + in (ms)"),
            alt.Tooltip("ratio:Q", format=".2f", title="recompute / swap")]
    lines = ratio.mark_line(strokeWidth=2).encode(x=x, y=y, color=colour, strokeDash=dash,
                                                  tooltip=tips)
    ends = ratio.transform_filter(alt.datum.n == max(ns)).mark_text(
        align="left", dx=4).encode(x=x, y=y, color=colour, text="gpu_label:N")
    one = alt.Chart().mark_rule(color="black").encode(y=alt.datum(1))
    above = alt.Chart().mark_text(align="left", dx=4, dy=-9).encode(
        x=alt.value(0), y=alt.datum(1), text=alt.value("swap cheaper ↑"))
    below = alt.Chart().mark_text(align="left", dx=4, dy=9).encode(
        x=alt.value(0), y=alt.datum(1), text=alt.value("recompute cheaper ↓"))
    cross = base.transform_filter((alt.datum.kind == "cross") & pick) \
        .transform_filter("isValid(datum.n)")
    marks = cross.mark_point(size=70, filled=True, opacity=1).encode(
        x=x, y=alt.datum(1), color=colour,
        shape=alt.value("circle"), tooltip=[alt.Tooltip("gpu_label:N", title="GPU"),
                                            alt.Tooltip("n:Q", format=",", title="crossing (tokens)")])
    cross_text = cross.transform_calculate(
        txt="datum.gpu_label + ': ' + format(datum.n, ',')").mark_text(
        align="center", dy=22, baseline="top").encode(
        x=x, y=alt.datum(1), color=colour, text="txt:N")
    chart = alt.layer(lines, ends, one, above, below, marks, cross_text,
                      data=alt.Data(values=rows)).properties(width="container", height=300,
                                                             padding={"right": 50})
    for p in params:
        chart = chart.add_params(p)
    return _finish(chart, title, subtitle)


def get_gpu_label(gpu) -> str:
    """A GPU preset's short name for chart labels: ``"a100-80gb"`` is ``"A100"``."""
    return str(gpu).split("-")[0].upper()


def block_size_data(model, gpu, *, tokens: int, block_sizes: Iterable[int]) -> list[dict]:
    """The PagedAttention block-size microbenchmark as rows ``{bs, mode, ms}``.

    A swap round trip of ``tokens`` tokens at each block size
    (:func:`kvsim.costs.swap_round_trip_s`, with its blocks x layers x 2
    copies) against a recompute of the same tokens, which no block size
    changes (:func:`kvsim.costs.recompute_time_s`).
    """
    from .costs import recompute_time_s, swap_round_trip_s

    tokens = check_int("tokens", tokens, min=1)
    sizes = [check_int("block_sizes", b, min=1, max=4096) for b in block_sizes]
    if not sizes:
        raise KvsimError("block_size_data: block_sizes=[] is empty: expected at least one size")
    recompute = _ms(recompute_time_s(tokens, model, gpu))
    return [row for bs in sizes for row in (
        {"bs": bs, "mode": MODES[0], "ms": recompute},
        {"bs": bs, "mode": MODES[1], "ms": _ms(swap_round_trip_s(tokens, model, gpu,
                                                                 block_size=bs))})]


def block_size_chart(rows: Iterable[Mapping], *, title: str, subtitle: str | None = None,
                     here: int | None = None):
    """Swap round trip and recompute against block size (log2 axis), named at the line ends.

    ``here`` circles the swap at that block size ("you are here": vLLM's default).
    """
    alt = _alt()
    rows = _need_rows(rows, ["bs", "mode", "ms"], "block_size_chart")
    sizes = sorted({int(r["bs"]) for r in rows})
    x = alt.X("bs:Q", title="block size (tokens per block, log scale)",
              scale=alt.Scale(type="log", base=2, domain=[sizes[0], sizes[-1]], nice=False),
              axis=alt.Axis(values=sizes, format="d", labelOverlap=False))
    y = alt.Y("ms:Q", title="time per preemption (ms, log scale)", scale=alt.Scale(type="log"),
              axis=alt.Axis(format="~s"))
    colour = alt.Color("mode:N", sort=MODES, legend=None, scale=alt.Scale(domain=MODES,
                                                                          range=PALETTE[:2]))
    base = alt.Chart(alt.Data(values=rows))
    lines = base.mark_line(point=True).encode(
        x=x, y=y, color=colour,
        strokeDash=alt.StrokeDash("mode:N", sort=MODES, legend=None,
                                  scale=alt.Scale(domain=MODES, range=DASHES[:2])),
        tooltip=[alt.Tooltip("mode:N"), alt.Tooltip("bs:Q", title="block size"),
                 alt.Tooltip("ms:Q", format=",.1f", title="ms")])
    names = base.transform_filter(alt.datum.bs == sizes[0]).mark_text(
        align="left", dx=6, dy=-11).encode(x=x, y=y, color=colour, text="mode:N")
    layers = [lines, names]
    if here is not None:
        if here not in sizes:
            raise KvsimError(f"here={here!r} is not a block size of the rows: expected one of {sizes}")
        mark = base.transform_filter((alt.datum.bs == here) & (alt.datum.mode == MODES[1]))
        layers += [mark.mark_point(size=220, filled=False, color="black", strokeWidth=2)
                   .encode(x=x, y=y),
                   mark.mark_text(align="left", dx=10, dy=18).encode(
                       x=x, y=y, text=alt.value(f"vLLM's default, {here}"))]
    return _finish(alt.layer(*layers).properties(width="container", height=260), title, subtitle)


def spread_data(samples: Mapping[tuple, Sequence[float]]) -> list[dict]:
    """Median and spread over seeds: rows ``{case, series, median, lo, hi, seeds}``.

    ``samples`` maps ``(case, series)`` to one value per seed; ``lo`` and
    ``hi`` are the smallest and largest. Values are rounded to 4 significant
    digits so the chart's spec stays the same from run to run.
    """
    import numpy as np

    if not samples:
        raise KvsimError("spread_data: samples={} is empty: expected {(case, series): values}")
    rows = []
    for key, values in samples.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise KvsimError(f"spread_data: key {key!r} is not a (case, series) pair")
        v = np.asarray(list(values), dtype=float)
        if v.size == 0 or not np.all(np.isfinite(v)):
            raise KvsimError(f"spread_data: values for {key!r} = {list(values)!r}: expected "
                             f"one finite number per seed")
        r4 = lambda x: float(f"{float(x):.4g}")  # noqa: E731
        rows.append({"case": key[0], "series": str(key[1]), "median": r4(np.median(v)),
                     "lo": r4(v.min()), "hi": r4(v.max()), "seeds": int(v.size)})
    return rows


def spread_chart(rows: Iterable[Mapping], *, title, y_title: str, x_title: str,
                 subtitle: str | None = None, log_x: bool = False):
    """Median (a point) and the range over seeds (a bar) per case, one colour, shape and label per series.

    Numeric cases go on a quantitative x axis (log base 2 with ``log_x``),
    the series set side by side around each case so no bar hides another.
    Named cases go on the y axis, one row each (their labels never collide),
    with the value on x. ``y_title`` names the value and ``x_title`` the
    cases, whichever axis they end up on; the value's title carries its unit.
    """
    alt = _alt()
    rows = _need_rows(rows, ["case", "series", "median", "lo", "hi", "seeds"], "spread_chart")
    series = list(dict.fromkeys(r["series"] for r in rows))
    if len(series) > len(PALETTE):
        raise KvsimError(f"spread_chart: {len(series)} series: expected at most {len(PALETTE)}")
    numeric = all(isinstance(r["case"], (int, float)) for r in rows)
    colour = alt.Color("series:N", sort=series, scale=alt.Scale(domain=series,
                                                                range=PALETTE[:len(series)]),
                       legend=alt.Legend(title=None) if len(series) > 1 else None)
    shapes = ["circle", "square", "triangle-up", "diamond", "cross", "triangle-down", "wedge",
              "stroke"]
    shape = alt.Shape("series:N", sort=series, legend=None,
                      scale=alt.Scale(domain=series, range=shapes[:len(series)]))
    base = alt.Chart(alt.Data(values=rows))
    tips = [alt.Tooltip("case:N" if not numeric else "case:Q", title="case"),
            alt.Tooltip("series:N"), alt.Tooltip("median:Q", format=",.4g"),
            alt.Tooltip("lo:Q", format=",.4g", title="lowest seed"),
            alt.Tooltip("hi:Q", format=",.4g", title="highest seed"),
            alt.Tooltip("seeds:Q", title="seeds")]
    if numeric:
        cases = sorted({r["case"] for r in rows})
        scale = (alt.Scale(type="log", base=2, domain=[cases[0] / 1.25, cases[-1] * 1.25],
                           nice=False) if log_x else alt.Scale(zero=False))
        k = len(series)
        order = "[" + ", ".join(repr(x) for x in series) + "]"
        # side by side: a log axis shifts by a factor, a linear one by a share of the step
        step = (min(b / a for a, b in zip(cases, cases[1:])) if len(cases) > 1 else 2.0)
        if log_x:
            shift = f"datum.case * pow({step}, 0.12 * (indexof({order}, datum.series) - {(k - 1) / 2}))"
        else:
            gap = min(b - a for a, b in zip(cases, cases[1:])) if len(cases) > 1 else 1.0
            shift = f"datum.case + {gap} * 0.12 * (indexof({order}, datum.series) - {(k - 1) / 2})"
        base = base.transform_calculate(xpos=shift)
        x = alt.X("xpos:Q", title=x_title, scale=scale,
                  axis=alt.Axis(values=cases, format="d", labelOverlap=False))
        y = alt.Y("median:Q", title=y_title, scale=alt.Scale(zero=False))
        bars = base.mark_rule(strokeWidth=2).encode(x=x, y=alt.Y("lo:Q", title=y_title),
                                                    y2="hi:Q", color=colour, tooltip=tips)
        points = base.mark_point(filled=True, size=80, opacity=1).encode(
            x=x, y=y, color=colour, shape=shape, tooltip=tips)
        layers = [bars, points]
        if k > 1:
            layers.insert(0, base.mark_line(strokeWidth=1).encode(
                x=x, y=y, color=colour,
                strokeDash=alt.StrokeDash("series:N", sort=series, legend=None,
                                          scale=alt.Scale(domain=series,
                                                          range=DASHES[:len(series)]))))
        height = 260
    else:
        cases = list(dict.fromkeys(r["case"] for r in rows))
        offset = {"yOffset": alt.YOffset("series:N", sort=series)} if len(series) > 1 else {}
        ycase = alt.Y("case:N", title=x_title, sort=cases,
                      axis=alt.Axis(labelLimit=200, labelPadding=6))
        x = alt.X("median:Q", title=y_title, scale=alt.Scale(zero=False))
        bars = base.mark_rule(strokeWidth=3).encode(y=ycase, x=alt.X("lo:Q", title=y_title),
                                                    x2="hi:Q", color=colour, tooltip=tips,
                                                    **offset)
        points = base.mark_point(filled=True, size=90, opacity=1).encode(
            y=ycase, x=x, color=colour, shape=shape, tooltip=tips, **offset)
        layers = [bars, points]
        height = 60 * len(cases)
    return _finish(alt.layer(*layers).properties(width="container", height=height), title, subtitle)
