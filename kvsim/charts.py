"""Altair charts for the book.

Explained in chapter 1, *Bytes per token and capacity*.

Two kinds of function live here, kept apart on purpose:

* ``*_data`` functions ask kvsim for the numbers (they call
  :func:`kvsim.memory.kv_bytes_per_token` and :func:`kvsim.memory.kv_budget`,
  never re-deriving them) and return small lists of plain-Python rows, rounded
  so that the chart specs are compact and identical from run to run;
* ``*_chart`` functions turn those rows into an :class:`altair.Chart`. They
  only filter and encode; no capacity logic runs in the browser.

The static twin of the chapter 1 calculator, :func:`capacity_chart`, binds an
answer-length slider and a model menu to Altair parameters over a precomputed
grid, so it stays interactive on the static site with no kernel.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from .errors import KvsimError, check_int
from .units import GB, GiB, KiB

if TYPE_CHECKING:  # Altair is imported only when a chart is drawn
    import altair as alt

__all__ = [
    "bytes_per_token_data", "bytes_per_token_chart",
    "budget_data", "budget_chart",
    "capacity_grid", "capacity_chart",
]

_DTYPE_ORDER = ["fp32", "fp16", "bf16", "fp8"]


def _alt():
    import altair as alt

    return alt


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


# --- bytes per token -------------------------------------------------------------

def bytes_per_token_data(models: Iterable[str], kv_dtypes: Iterable[str] = ("bf16", "fp8")) -> list[dict]:
    """Rows ``{model, attention, kv_dtype, bytes, kib}``: KV bytes per token from kvsim."""
    from .memory import kv_bytes_per_token
    from .models import get_model

    rows = []
    for name in models:
        spec = get_model(name)
        for dtype in kv_dtypes:
            n = kv_bytes_per_token(spec, dtype)
            rows.append({"model": spec.name, "attention": spec.attention_kind.upper(),
                         "kv_dtype": dtype, "bytes": n, "kib": round(n / KiB, 2)})
    return rows


def bytes_per_token_chart(rows: Iterable[Mapping]) -> "alt.Chart":
    """Grouped horizontal bars: KiB of KV cache per token, per model and KV dtype."""
    alt = _alt()
    rows = _need_rows(rows, ["model", "attention", "kv_dtype", "bytes", "kib"], "bytes_per_token_chart")
    # Largest first; ties keep the order of the rows (no set: its order varies by run).
    order = sorted(dict.fromkeys(r["model"] for r in rows),
                   key=lambda m: -max(r["kib"] for r in rows if r["model"] == m))
    dtypes = [d for d in _DTYPE_ORDER if any(r["kv_dtype"] == d for r in rows)]
    return (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            y=alt.Y("model:N", sort=order, title=None),
            yOffset=alt.YOffset("kv_dtype:N", sort=dtypes),
            x=alt.X("kib:Q", title="KV cache per token (KiB = 1,024 B)"),
            color=alt.Color("kv_dtype:N", sort=dtypes, title="KV dtype",
                            legend=alt.Legend(orient="bottom")),
            tooltip=[alt.Tooltip("model:N"), alt.Tooltip("attention:N"),
                     alt.Tooltip("kv_dtype:N", title="KV dtype"),
                     alt.Tooltip("bytes:Q", format=",", title="bytes per token"),
                     alt.Tooltip("kib:Q", format=",.1f", title="KiB per token")],
        )
        .properties(width=440, title="KV cache bytes per token, by model and KV dtype")
    )


# --- the memory budget -----------------------------------------------------------

_PARTS = ["weights", "activations and runtime", "KV cache", "not given to the engine"]


def budget_data(budgets: Mapping[str, object]) -> list[dict]:
    """Rows ``{setup, part, order, gb, gib}`` splitting each GPU's memory.

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
            rows.append({"setup": str(label), "part": part, "order": i,
                         "gb": round(n / GB, 2), "gib": round(n / GiB, 2)})
    return rows


def budget_chart(rows: Iterable[Mapping]) -> "alt.Chart":
    """Stacked horizontal bars: where each GPU's memory goes, in GB (GiB in the tooltip)."""
    alt = _alt()
    rows = _need_rows(rows, ["setup", "part", "order", "gb", "gib"], "budget_chart")
    return (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            y=alt.Y("setup:N", title=None, sort=None),
            x=alt.X("gb:Q", stack="zero", title="GPU memory (GB = 10^9 B)"),
            color=alt.Color("part:N", sort=_PARTS, title=None,
                            scale=alt.Scale(domain=_PARTS,
                                            range=["#4c78a8", "#f58518", "#54a24b", "#d0d0d0"]),
                            legend=alt.Legend(orient="bottom", columns=2)),
            order=alt.Order("order:Q"),
            tooltip=[alt.Tooltip("setup:N"), alt.Tooltip("part:N"),
                     alt.Tooltip("gb:Q", format=",.2f", title="GB"),
                     alt.Tooltip("gib:Q", format=",.2f", title="GiB")],
        )
        .properties(width=440, height=alt.Step(36), title="Where the GPU's memory goes")
    )


# --- the static twin of the capacity calculator -------------------------------------

def capacity_grid(models: Iterable[str], gpu: str, *, kv_dtypes: Iterable[str] = ("bf16", "fp8"),
                  utilizations: Iterable[float], output_tokens: Iterable[int],
                  prompt_tokens: int, activation_bytes: int | None = None) -> list[dict]:
    """Concurrent requests from kvsim over a grid, as rows ``{model, kv, util, answer, requests}``.

    ``requests`` is :meth:`kvsim.memory.KVBudget.max_concurrent` of
    ``prompt_tokens + answer``; a utilisation at which the weights and overhead
    do not fit (kvsim raises :class:`KvsimError`) gives 0 requests.
    """
    from .memory import kv_budget

    prompt_tokens = check_int("prompt_tokens", prompt_tokens, min=1)
    answers = [check_int("output_tokens", a, min=0) for a in output_tokens]
    utils = [round(float(u), 4) for u in utilizations]
    rows = []
    for model in models:
        for dtype in kv_dtypes:
            for u in utils:
                try:
                    b = kv_budget(gpu, model, gpu_memory_utilization=u, kv_dtype=dtype,
                                  activation_bytes=activation_bytes)
                except KvsimError:
                    b = None
                for a in answers:
                    n = b.max_concurrent(prompt_tokens + a) if b is not None else 0
                    rows.append({"model": model, "kv": dtype, "util": u, "answer": a,
                                 "requests": int(n)})
    return rows


def capacity_chart(rows: Iterable[Mapping], *, model: str | None = None,
                   answer: int | None = None, title: str | None = None) -> "alt.Chart":
    """Concurrent requests vs ``gpu_memory_utilization``, one line per KV dtype.

    A slider (answer length) and a menu (model) are bound to Altair
    parameters; the chart filters the precomputed ``rows`` to the chosen pair,
    so it works on a static page. ``model`` and ``answer`` set the initial
    values (default: the first model, the smallest answer length).
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
    model = models[0] if model is None else model
    answer = answers[0] if answer is None else answer
    if model not in models:
        raise KvsimError(f"model={model!r} is not in the grid: expected one of {', '.join(models)}")
    if answer not in answers:
        raise KvsimError(f"answer={answer!r} is not in the grid: expected one of {answers}")
    dtypes = [d for d in _DTYPE_ORDER if any(r["kv"] == d for r in rows)]

    p_model = alt.param(name="model", value=model,
                        bind=alt.binding_select(options=models, name="Model "))
    p_answer = alt.param(name="answer", value=answer,
                         bind=alt.binding_range(min=answers[0], max=answers[-1], step=step,
                                                name="Answer tokens "))
    return (
        alt.Chart(alt.Data(values=rows))
        .mark_line(point=True)
        .encode(
            x=alt.X("util:Q", title="gpu_memory_utilization",
                    scale=alt.Scale(domain=[min(r["util"] for r in rows), max(r["util"] for r in rows)])),
            y=alt.Y("requests:Q", title="concurrent requests that fit",
                    scale=alt.Scale(zero=True)),
            color=alt.Color("kv:N", sort=dtypes, title="KV dtype",
                            legend=alt.Legend(orient="top-left")),
            tooltip=[alt.Tooltip("model:N"), alt.Tooltip("kv:N", title="KV dtype"),
                     alt.Tooltip("util:Q", format=".2f", title="utilisation"),
                     alt.Tooltip("answer:Q", format=",", title="answer tokens"),
                     alt.Tooltip("requests:Q", format=",", title="requests")],
        )
        .add_params(p_model, p_answer)
        .transform_filter((alt.datum.model == p_model) & (alt.datum.answer == p_answer))
        .properties(width=480, height=300,
                    title=title or "Concurrent requests that fit (move the slider, pick a model)")
    )
