"""Chapter 1's charts: bytes per token, the memory budget, capacity, the calculator's twin.

The static twin of chapter 1's calculator, :func:`capacity_chart`, binds an
answer-length slider to an Altair parameter over a precomputed grid and draws
one small multiple per model, so it stays interactive on the static site with
no kernel and shows the comparison the text makes.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, TypedDict

from kvsim.errors import KvsimError, check_int
from kvsim.model.memory import KV_DTYPES, KVBudget, kv_budget, kv_bytes_per_token
from kvsim.model.presets import get_model
from kvsim.units import GB, GiB, KiB

from .theme import (
    DASHES,
    NEUTRAL,
    PALETTE,
    Width,
    check_width,
    data_values,
    finish_chart,
    fit_page,
    kv_dtype_label,
    need_rows,
)

if TYPE_CHECKING:
    import altair as alt


class BytesPerTokenRow(TypedDict):
    """A model's KV bytes per token in one cache dtype (:func:`bytes_per_token_data`)."""
    model: str
    attention: str
    kv_dtype: str
    kv_bits: str
    bytes: int
    kib: float


class BudgetRow(TypedDict):
    """One part of one set-up's GPU memory (:func:`budget_data`); ``order`` is the part's place."""
    setup: str
    part: str
    order: int
    bytes: int
    gb: float
    gib: float


class CapacityByLengthRow(TypedDict):
    """Concurrent requests that fit one set-up at one answer length."""
    setup: str
    answer: int
    seq_len: int
    requests: int


class CapacityGridRow(TypedDict):
    """Concurrent requests for a model, a cache and a utilisation at one answer length."""
    model: str
    kv: str
    util: float
    answer: int
    requests: int

# --- bytes per token -------------------------------------------------------------

def _bits(dtype: str) -> str:
    """A KV dtype's width as the charts label it (``"16-bit"``, ``"8-bit"``)."""
    return f"{8 * KV_DTYPES[dtype]}-bit"


def _cache_label(dtype: str) -> str:
    """A cache's legend label, dtype and width (``"fp8 cache (8-bit)"``)."""
    return f"{dtype} cache ({_bits(dtype)})"


def bytes_per_token_data(models: Iterable[str],
                         kv_dtypes: Iterable[str | None] = (None, "fp8")) -> list[BytesPerTokenRow]:
    """Rows ``{model, attention, kv_dtype, kv_bits, bytes, kib}``: KV bytes per token from kvsim.

    ``None`` in ``kv_dtypes`` stands for the model's own dtype (so a row says
    ``"fp16"`` for Llama-2-7B and ``"bf16"`` for Llama-3.1-8B).
    """

    rows: list[BytesPerTokenRow] = []
    for name in models:
        spec = get_model(name)
        for requested in kv_dtypes:
            dtype = kv_dtype_label(spec, requested)
            n = kv_bytes_per_token(spec, dtype)
            rows.append({"model": spec.name, "attention": spec.attention_kind.upper(),
                         "kv_dtype": dtype, "kv_bits": _bits(dtype), "bytes": n,
                         "kib": round(n / KiB, 2)})
    return rows


def bytes_per_token_chart(rows: Iterable[BytesPerTokenRow], *, title: str = "KV cache bytes per token",
                          subtitle: str | None = None) -> alt.TopLevelMixin:
    """Horizontal bars, one group per model: KiB of KV cache per token.

    The cache width is told apart by colour and by position within the
    group; each bar is labelled with its value and its dtype.
    """
    import altair as alt

    checked = need_rows(rows, ["model", "attention", "kv_dtype", "kv_bits", "bytes", "kib"],
                        "bytes_per_token_chart")
    # Largest first; ties keep the order of the rows (no set: its order varies by run).
    order = sorted(dict.fromkeys(r["model"] for r in checked),
                   key=lambda m: -max(r["kib"] for r in checked if r["model"] == m))
    widths = sorted(dict.fromkeys(r["kv_bits"] for r in checked), key=lambda b: -int(b.split("-")[0]))
    labelled = [dict(r, model_label=f"{r['model']} ({r['attention']})",
                     bar_label=f"{r['kib']:,.1f} KiB {r['kv_dtype']}".replace(".0 KiB", " KiB"))
                for r in checked]
    labels = list(dict.fromkeys(f"{m} ({next(r['attention'] for r in checked if r['model'] == m)})"
                                for m in order))
    base = alt.Chart(data_values(labelled)).encode(
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
    return finish_chart(chart, title, subtitle)


# --- the memory budget -----------------------------------------------------------

_PARTS = ["weights", "activations and runtime", "KV cache", "not given to the engine"]
_PART_COLOURS = [PALETTE[0], PALETTE[1], PALETTE[2], NEUTRAL]


def budget_data(budgets: Mapping[str, KVBudget]) -> list[BudgetRow]:
    """Rows ``{setup, part, order, bytes, gb, gib}`` splitting each GPU's memory.

    ``budgets`` maps a label to a :class:`kvsim.model.memory.KVBudget`. The parts are
    the weights, the activation and runtime reserve, the KV pool, and the share
    the utilisation setting leaves to other processes; whatever of the usable
    memory is not whole KV blocks is counted with the KV pool, since it is the
    pool's rounding.
    """
    if not budgets:
        raise KvsimError("budgets={} is empty: expected at least one label -> KVBudget")
    rows: list[BudgetRow] = []
    for label, b in budgets.items():
        total = b.gpu.memory_bytes * b.tensor_parallel_size
        parts = [b.weight_bytes, b.activation_bytes,
                 b.usable_bytes - b.weight_bytes - b.activation_bytes,
                 total - b.usable_bytes]
        for i, (part, n) in enumerate(zip(_PARTS, parts, strict=True)):
            rows.append({"setup": str(label), "part": part, "order": i, "bytes": int(n),
                         "gb": round(n / GB, 2), "gib": round(n / GiB, 2)})
    return rows


def budget_chart(rows: Iterable[BudgetRow], *, title: str = "Where the GPU's memory goes",
                 subtitle: str | None = None, width: Width = "container") -> alt.TopLevelMixin:
    """One panel per set-up, one labelled bar per part of the memory, in GB and GiB.

    Each bar's label, under it from the left edge, names the part (colour
    repeats it) and gives its value in both units, so no label runs past a
    phone's page. The panels share one GB axis, one above the other.
    ``width`` is each panel's: ``"container"`` (the default) follows the page,
    a number of pixels fixes it.
    """
    import altair as alt

    width = check_width(width, "budget_chart")
    checked = need_rows(rows, ["setup", "part", "order", "gb", "gib"], "budget_chart")
    labelled = [dict(r, label=f"{r['part']}: {r['gb']:,.2f} GB = {r['gib']:,.2f} GiB") for r in checked]
    setups = list(dict.fromkeys(r["setup"] for r in checked))
    top = max(r["gb"] for r in checked)
    x_title = "GPU memory (GB, 1 GB = 10^9 B)"
    panels = []
    for setup in setups:
        base = alt.Chart(alt.InlineData(values=[r for r in labelled if r["setup"] == setup]))
        # the part is named in the label under its bar (no axis labels to narrow a phone's plot)
        y = alt.Y("part:N", sort=_PARTS, title=None, axis=None)
        bars = base.mark_bar(height=14, yOffset=-9).encode(
            x=alt.X("gb:Q", title=x_title, scale=alt.Scale(domain=[0, top])), y=y,
            color=alt.Color("part:N", sort=_PARTS, legend=None,
                            scale=alt.Scale(domain=_PARTS, range=_PART_COLOURS)),
            tooltip=[alt.Tooltip("setup:N"), alt.Tooltip("part:N"),
                     alt.Tooltip("bytes:Q", format=",", title="bytes"),
                     alt.Tooltip("gb:Q", format=",.2f", title="GB"),
                     alt.Tooltip("gib:Q", format=",.2f", title="GiB")])
        labels = base.mark_text(align="left", baseline="middle", yOffset=8).encode(
            x=alt.value(0), y=y, text="label:N")
        panels.append(alt.layer(bars, labels).properties(
            width=width, height=40 * len(_PARTS),
            title=alt.TitleParams(setup, fontSize=13, fontWeight="normal", anchor="start")))
    chart = alt.vconcat(*panels, spacing=16).resolve_scale(x="shared")
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)


# --- capacity against request length ----------------------------------------------

def capacity_by_length_data(budgets: Mapping[str, KVBudget], *, prompt_tokens: int,
                            output_tokens: Iterable[int]) -> list[CapacityByLengthRow]:
    """Rows ``{setup, answer, seq_len, requests}``: concurrent requests by answer length.

    ``budgets`` maps a label to a :class:`kvsim.model.memory.KVBudget`; ``requests``
    is :meth:`~kvsim.model.memory.KVBudget.max_concurrent` of prompt plus answer.
    """
    prompt_tokens = check_int("prompt_tokens", prompt_tokens, min=1)
    answers = [check_int("output_tokens", a, min=0) for a in output_tokens]
    if not budgets or not answers:
        raise KvsimError("capacity_by_length_data: budgets and output_tokens must not be empty")
    return [{"setup": str(label), "answer": a, "seq_len": prompt_tokens + a,
             "requests": int(b.max_concurrent(prompt_tokens + a))}
            for label, b in budgets.items() for a in answers]


def capacity_by_length_chart(rows: Iterable[CapacityByLengthRow], *,
                             marks: Sequence[tuple[str, int, str]] = (),
                             title: str = "Concurrent requests that fit, by answer length",
                             subtitle: str | None = None) -> alt.TopLevelMixin:
    """Requests that fit against answer length, one line per set-up.

    Set-ups differ by colour and dash, and each line is labelled at its end. ``marks`` are
    ``(setup, answer, label)`` triples drawn as "you are here" points with
    their label, at the row with that set-up and answer.
    """
    import altair as alt

    rows = need_rows(rows, ["setup", "answer", "seq_len", "requests"], "capacity_by_length_chart")
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
    lines = alt.Chart(data_values(rows)).mark_line(point=True).encode(
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
    names = alt.Chart(data_values(ends)).mark_text(align="right", dy=-10).encode(
        x=x, y=y, text="setup:N", color=colour)
    layers = [lines, names]
    if here:
        marked = alt.Chart(data_values(here)).encode(x=x, y=y)
        layers += [marked.mark_point(shape="circle", size=220, filled=False, color="black",
                                     strokeWidth=2),
                   marked.mark_text(align="left", dx=12, dy=-12).encode(text="label:N")]
    chart = alt.layer(*layers).properties(width="container", height=280)
    return finish_chart(chart, title, subtitle)


# --- the static twin of the capacity calculator -------------------------------------

def capacity_grid(models: Iterable[str], gpu: str, *, kv_dtypes: Iterable[str | None] = (None, "fp8"),
                  utilizations: Iterable[float], output_tokens: Iterable[int],
                  prompt_tokens: int, activation_bytes: int | None = None) -> list[CapacityGridRow]:
    """Concurrent requests from kvsim over a grid, as rows ``{model, kv, util, answer, requests}``.

    ``requests`` is :meth:`kvsim.model.memory.KVBudget.max_concurrent` of
    ``prompt_tokens + answer``; a utilisation at which the weights and overhead
    do not fit (kvsim raises :class:`KvsimError`) gives 0 requests. ``kv``
    names the cache dtype as used (``None`` in ``kv_dtypes`` is the model's own).
    """

    prompt_tokens = check_int("prompt_tokens", prompt_tokens, min=1)
    answers = [check_int("output_tokens", a, min=0) for a in output_tokens]
    utils = [round(float(u), 4) for u in utilizations]
    rows: list[CapacityGridRow] = []
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


def capacity_chart(rows: Iterable[CapacityGridRow], *, answer: int | None = None,
                   here: tuple[str, float, str] | None = None, columns: int = 2,
                   width: Width = "container", title: str = "Concurrent requests that fit",
                   subtitle: str | None = None) -> alt.TopLevelMixin:
    """Small multiples, one per model: requests that fit against ``gpu_memory_utilization``.

    One line per cache dtype (colour and dash, named at its end). Each panel has its own
    request axis, so a model with a small capacity is not flattened by one
    with a large one. A slider bound
    to an Altair parameter picks the answer length; every panel filters the
    precomputed ``rows`` to it, so the chart works on a static page.
    ``answer`` sets the slider's start (default: the smallest length); the
    slider keeps to the precomputed grid, and an ``answer`` off it is refused
    with a one-line error that says so (never moved to the nearest length).
    ``here`` = ``(model, util, label)`` draws a "you are here" line at that
    utilisation in every panel and circles the point of that model.
    ``width`` is each panel's: ``"container"`` (the default) follows the page,
    and then the panels stack, one above the other (side by side they would not
    fit a phone); a number of pixels fixes it, ``columns`` panels to a row.
    """
    import altair as alt

    width = check_width(width, "capacity_chart")
    rows = need_rows(rows, ["model", "kv", "util", "answer", "requests"], "capacity_chart")
    models = list(dict.fromkeys(r["model"] for r in rows))
    answers = sorted({int(r["answer"]) for r in rows})
    steps = {b - a for a, b in pairwise(answers)}
    if len(steps) > 1:
        raise KvsimError(f"capacity_chart: answer lengths {answers} are not evenly spaced: "
                         f"expected a grid with one step so the slider hits every value")
    step = steps.pop() if steps else 1
    answer = answers[0] if answer is None else answer
    if answer not in answers:
        raise KvsimError(f"answer={answer!r} is not in the grid: expected one of {answers} "
                         "(the static chart's slider keeps to its precomputed answer lengths; "
                         "the live capacity_calculator takes any)")
    columns = 1 if width == "container" else check_int("columns", columns, min=1)
    caches = sorted(dict.fromkeys(r["kv"] for r in rows), key=lambda k: ("8-bit" in k, k))
    n = len(caches)

    p_answer = alt.param(name="answer", value=answer,
                         bind=alt.binding_range(min=answers[0], max=answers[-1], step=step,
                                                name="Answer tokens "))
    utils = [r["util"] for r in rows]
    x_title = "gpu_memory_utilization (share)"
    x_scale = alt.Scale(domain=[min(utils), max(utils)])
    y = alt.Y("requests:Q", title="requests that fit (requests)", scale=alt.Scale(zero=True))
    # one colour and dash per cache in every panel (a panel's own caches would restart them)
    colour = alt.Color("kv:N", sort=caches, legend=None,
                       scale=alt.Scale(domain=caches, range=PALETTE[:n]))
    if here is not None:
        here_model, util, label = here
        if here_model not in models:
            raise KvsimError(f"here: model {here_model!r} is not in the grid: expected one of "
                             f"{', '.join(models)}")
        util = round(float(util), 4)
        if util not in set(utils):
            raise KvsimError(f"here: util {util} is not in the grid: expected one of "
                             f"{sorted(set(utils))}")
        own = sorted({r["kv"] for r in rows if r["model"] == here_model},
                     key=lambda k: ("8-bit" in k, k))[0]

    def panel(index: int, model: str) -> alt.LayerChart | alt.FacetChart:
        # stacked, the utilisation axis is named once, under the last panel
        named = columns > 1 or index == len(models) - 1
        x = alt.X("util:Q", title=x_title, scale=x_scale,
                  axis=alt.Axis() if named else alt.Axis(title=None))
        lines = alt.Chart().mark_line(point=True).encode(
            x=x, y=y, color=colour,
            strokeDash=alt.StrokeDash("kv:N", sort=caches, legend=None,
                                      scale=alt.Scale(domain=caches, range=DASHES[:n])),
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
            layers.append(alt.Chart(alt.InlineData(values=[{"util": util}]))
                          .mark_rule(color="black", strokeDash=[2, 3]).encode(x=x))
            if model == here_model:
                point = alt.Chart().transform_filter(
                    (alt.datum.answer == p_answer) & (alt.datum.util == util)
                    & (alt.datum.kv == own)).encode(x=x, y=y)
                layers += [point.mark_point(size=200, filled=False, color="black",
                                            strokeWidth=2),
                           point.mark_text(align="left", dx=10, dy=-12).encode(
                               text=alt.value(str(label)))]
        return alt.layer(*layers, data=alt.InlineData(
            values=[r for r in rows if r["model"] == model])).properties(
            width=width, height=150,
            title=alt.TitleParams(model, fontSize=13, fontWeight="normal", anchor="start"))

    panels = [panel(i, m) for i, m in enumerate(models)]
    chart = (alt.vconcat(*panels, spacing=16) if columns == 1
             else alt.concat(*panels, columns=columns, spacing=16))
    # one y scale for every panel: the panels compare models ("several times" must be seen)
    chart = (chart.resolve_scale(x="shared", y="shared")
             .add_params(p_answer))
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)
