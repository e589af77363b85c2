"""Interactive widgets for the book (need a running Jupyter kernel).

Explained in chapter 1, *Bytes per token and capacity*.

:func:`capacity_calculator` answers "how many requests fit?" for a model, a
KV dtype, a GPU, a utilisation and a request length. Every number comes from
:func:`kvsim.model.memory.kv_budget`; the widget only arranges controls and prints.
A combination that cannot work (the weights alone exceed the budget) shows
kvsim's one-line error inside the widget instead of a traceback. Its static
twin, for readers without a kernel, is :func:`kvsim.book.charts.capacity_chart`;
the book's cell that draws it is tagged ``kvbook-live-widget``, so no saved
copy of it (controls with no kernel behind them) reaches the static site.

:func:`scheduler_stepper` (chapter 2) walks the real engine one step per
slider tick (:func:`kvsim.runs.stepper.scheduler_frames`) for a pool, a batch
size and an answer length the reader picks; its static twin is
:func:`kvsim.book.charts.stepper_chart` over precomputed frames.

:func:`alert_explorer` (chapter 4) sets one alert rule's threshold, window
and ``for`` and shows when it goes pending, fires and resolves on the
incident (:func:`kvsim.observe.rule_timing.alert_timing`, as ``promtool``
evaluates it); its static twin is :func:`kvsim.book.charts.alert_rule_chart`
over a precomputed grid.
"""
from __future__ import annotations

import functools
import html
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypedDict, TypeVar

from kvsim.book.charts.alert_rule import alert_readout, alert_rule_chart, alert_rule_data
from kvsim.book.charts.stepper import STATE_COLOURS
from kvsim.book.charts.theme import PALETTE
from kvsim.errors import (
    KvsimError,
    check_choice,
    check_float,
    check_gpu_memory_utilization,
    check_int,
    check_num_gpu_blocks,
)
from kvsim.model.hardware import get_gpu, list_gpus
from kvsim.model.memory import KV_DTYPES, kv_budget
from kvsim.model.presets import get_model, list_models
from kvsim.observe.rule_timing import RULES, alert_timing
from kvsim.observe.series import scrape
from kvsim.runs.stepper import (
    TOY_OUTPUT_TOKENS,
    Frame,
    FrameRequest,
    scheduler_frames,
    toy_requests,
)
from kvsim.traffic.lengths import MAX_LENGTH
from kvsim.units import format_bytes

if TYPE_CHECKING:
    import ipywidgets as w
    import traitlets

    from kvsim.engine.result import SimResult, Table
    from kvsim.model.hardware import GPUSpec
    from kvsim.model.presets import ModelSource

__all__ = ["capacity_report", "report_html", "capacity_calculator", "frame_html", "scheduler_stepper",
           "UTIL_SLIDER", "STEPPER_SLIDERS", "strict_slider", "strict_int_text", "strict_choice",
           "check_in_control",
           "ALERT_THRESHOLD_SLIDERS", "ALERT_SLIDERS", "alert_explorer"]

_AUTO = "model dtype"

#: The calculator's utilisation slider: (min, max, step). Every value on it is one the API
#: accepts; a value off it is refused, never moved onto it.
UTIL_SLIDER = (0.01, 1.0, 0.01)
#: The stepper's sliders: parameter -> (min, max). Kept small so every block is visible.
STEPPER_SLIDERS = {"num_gpu_blocks": (4, 60), "requests": (1, 12), "prompt_tokens": (1, 400),
                   "output_tokens": (1, 400)}

#: The alert explorer's threshold slider for each rule shape: (min, max, step), in the
#: expression's unit (a count of preemptions, a 0-1 fraction of the KV pool, requests).
ALERT_THRESHOLD_SLIDERS = {"preemptions": (0.0, 20.0, 0.5), "kv_usage": (0.5, 1.0, 0.01),
                           "waiting": (0.0, 100.0, 1.0)}
#: Where each rule's threshold slider starts when the dropdown switches to it.
ALERT_THRESHOLD_START = {"preemptions": 0.0, "kv_usage": 0.9, "waiting": 10.0}
#: Its window and ``for`` sliders, in minutes: (min, max, step).
ALERT_SLIDERS = {"window_min": (1.0, 15.0, 1.0), "for_min": (0.0, 15.0, 0.25)}
_RULE_LABELS = {"preemptions": "preemptions: increase(vllm:num_preemptions_total[w])",
                "kv_usage": "KV cache: avg_over_time(vllm:kv_cache_usage_perc[w])",
                "waiting": "queue: avg_over_time(vllm:num_requests_waiting[w])"}


class CapacityReport(TypedDict):
    """The capacity calculator's numbers (bytes are ints)."""
    kv_bytes_per_token: int
    usable_bytes: int
    weight_bytes: int
    activation_bytes: int
    kv_bytes: int
    tokens: int
    blocks: int
    block_size: int
    seq_len: int
    blocks_per_request: int
    max_concurrent: int


#: What a widget control's check returns: the value it accepted.
_Checked = TypeVar("_Checked", int, float)


def capacity_report(model: ModelSource, gpu: GPUSpec | str, *, gpu_memory_utilization: float,
                    kv_dtype: str | None = None, prompt_tokens: int, output_tokens: int,
                    block_size: int = 16) -> CapacityReport:
    """The calculator's numbers as a dict (raises :class:`KvsimError` on bad input).

    Keys: ``kv_bytes_per_token``, ``kv_bytes``, ``tokens``, ``blocks``,
    ``seq_len``, ``blocks_per_request``, ``max_concurrent``, ``weight_bytes``,
    ``activation_bytes``, ``usable_bytes`` (bytes are ints).
    """

    prompt_tokens = check_int("prompt_tokens", prompt_tokens, min=1, max=MAX_LENGTH)
    output_tokens = check_int("output_tokens", output_tokens, min=0, max=MAX_LENGTH)
    b = kv_budget(gpu, model, gpu_memory_utilization=gpu_memory_utilization,
                  kv_dtype=kv_dtype, block_size=block_size)
    seq = prompt_tokens + output_tokens
    return {
        "kv_bytes_per_token": b.kv_bytes_per_token,
        "usable_bytes": b.usable_bytes,
        "weight_bytes": b.weight_bytes,
        "activation_bytes": b.activation_bytes,
        "kv_bytes": b.kv_bytes,
        "tokens": b.tokens,
        "blocks": b.blocks,
        "block_size": b.block_size,
        "seq_len": seq,
        "blocks_per_request": b.blocks_for(seq),
        "max_concurrent": b.max_concurrent(seq),
    }


def report_html(report: CapacityReport) -> str:
    """An HTML table of a :func:`capacity_report`, every byte count with its unit."""
    r = report
    rows = [
        ("KV bytes per token", f"{r['kv_bytes_per_token']:,} B "
                               f"({format_bytes(r['kv_bytes_per_token'], 'KiB', 0)})"),
        ("Memory given to the engine", f"{format_bytes(r['usable_bytes'], 'GB')} "
                                       f"= {format_bytes(r['usable_bytes'], 'GiB')}"),
        ("minus weights", f"{format_bytes(r['weight_bytes'], 'GB')}"),
        ("minus activations and runtime", f"{format_bytes(r['activation_bytes'], 'GB')}"),
        ("KV pool", f"<b>{format_bytes(r['kv_bytes'], 'GB')} = {format_bytes(r['kv_bytes'], 'GiB')}</b>"),
        ("Blocks", f"{r['blocks']:,} of {r['block_size']} tokens"),
        ("Tokens", f"{r['tokens']:,}"),
        ("One request", f"{r['seq_len']:,} tokens = {r['blocks_per_request']:,} blocks"),
        ("Concurrent requests that fit", f"<b>{r['max_concurrent']:,}</b>"),
    ]
    body = "".join(f"<tr><td style='padding:2px 12px 2px 0'>{html.escape(k)}</td>"
                   f"<td style='text-align:right'>{v}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def _error_html(message: str) -> str:
    return ("<div style='color:#a00;border-left:4px solid #a00;padding:4px 8px'>"
            f"{html.escape(message)}</div>")


def _preset(model: ModelSource) -> str:
    """A model preset's canonical name (the API's one-line error for an unknown one)."""
    spec = get_model(model)
    if spec.name not in list_models():
        raise KvsimError(f"model={model!r} is not a preset: expected one of "
                         f"{', '.join(list_models())} (the widget's dropdown holds the presets; "
                         "use kvsim.kv_budget for a config.json)")
    return spec.name


@functools.cache
def strict_slider(kind: str) -> type[w.ValueWidget]:
    """An ipywidgets slider class whose ``value`` refuses, never clamps, a value off its range.

    ipywidgets clamps a value set from Python into ``[min, max]`` and raises a raw
    ``TraitError`` for a value of the wrong type (NaN into an integer slider, a string);
    these raise kvsim's one-line :class:`KvsimError` instead, as the widget's constructor
    does (``description`` names nothing the user typed, so the check names ``param``, set
    at construction; ``range_note`` says where the range comes from when it is not a cut of
    the API's own).
    """
    import ipywidgets as w
    from traitlets import Any, Unicode, validate

    kinds: dict[str, tuple[type[w.ValueWidget], Callable[..., float], float]] = {
        "float": (w.FloatSlider, check_float, 0.0), "int": (w.IntSlider, check_int, 0)}
    base, check, zero = kinds[kind]

    class Strict(base):  # type: ignore[valid-type,misc]  # base: the untyped ipywidgets slider of kind
        value = _no_none(Any(zero, help="the slider's value (checked by kvsim)")).tag(sync=True)
        param = Unicode("value")
        range_note = Unicode("")

        @validate("value")
        def _validate_value(self, proposal: Mapping[str, object]) -> float:
            accepted: float = check_in_control(check, self.param, proposal["value"], self.min,
                                               self.max, "slider", note=self.range_note or None)
            return accepted

    Strict.__name__ = Strict.__qualname__ = f"Strict{base.__name__}"
    return Strict


@functools.cache
def strict_int_text() -> type[w.ValueWidget]:
    """An ipywidgets ``IntText`` whose ``value`` must be a whole number: NaN, a string or 2.5
    set from Python is kvsim's one-line :class:`KvsimError` naming ``param`` (ipywidgets
    would raise a raw ``TraitError``, or truncate 2.5 to 2). The range is the API's to judge
    (a refused length shows its line in the widget's output)."""
    import ipywidgets as w
    from traitlets import Any, Unicode, validate

    class StrictIntText(w.IntText):  # type: ignore[misc]  # ipywidgets' classes are untyped (Any)
        value = _no_none(Any(0, help="the box's value (checked by kvsim)")).tag(sync=True)
        param = Unicode("value")

        @validate("value")
        def _validate_value(self, proposal: Mapping[str, object]) -> int:
            value = proposal["value"]
            try:
                return check_int(self.param, value)
            except KvsimError:
                raise KvsimError(f"{self.param}={_shown(value)} is not a whole number: expected "
                                 f"an integer (a count of tokens)") from None

    return StrictIntText


@functools.cache
def strict_choice(kind: str) -> type[w.ValueWidget]:
    """An ipywidgets ``Dropdown`` (``kind="dropdown"``) or ``ToggleButtons`` (``"toggle"``)
    whose ``value`` set from Python must be one of its options: anything else (NaN, ``None``,
    a name it does not hold) is kvsim's one-line :class:`KvsimError` naming ``param`` and the
    options, as the widget's constructor says it, never a raw ``TraitError``."""
    import ipywidgets as w
    from traitlets import Any, Unicode, validate

    base = {"dropdown": w.Dropdown, "toggle": w.ToggleButtons}[kind]

    class Strict(base):  # type: ignore[valid-type,misc]  # base: the untyped ipywidgets choice of kind
        value = _no_none(Any(None, help="Selected value (checked by kvsim)"))
        param = Unicode("value")

        @validate("value")
        def _validate_value(self, proposal: Mapping[str, object]) -> object:
            value = proposal["value"]
            options = list(self._options_values)
            for option in options:
                if type(option) is bool or type(value) is bool:
                    if type(option) is type(value) and option == value:
                        return option
                elif option == value:
                    return option
            raise KvsimError(f"{self.param}={_shown(value)} is not one of the control's "
                             f"options: expected one of {', '.join(map(str, options))}")

    Strict.__name__ = Strict.__qualname__ = f"Strict{base.__name__}"
    return Strict


_Trait = TypeVar("_Trait", bound="traitlets.TraitType[object, object]")


def _no_none(trait: _Trait) -> _Trait:
    """``trait`` with ``None`` refused (traitlets' ``Any`` lets None past every validator
    unless told otherwise, and its constructor ignores ``allow_none=False``)."""
    trait.allow_none = False
    return trait


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


#: The API's own check of each parameter a widget control sets (the same functions the
#: engine, kv_budget and the CLI call), so a widget judges a value as they do.
_API_CHECKS: dict[str, Callable[[object], float]] = {
    "gpu_memory_utilization": check_gpu_memory_utilization,
    "num_gpu_blocks": check_num_gpu_blocks,
    "requests": lambda v: check_int("requests", v, min=1, max=26),     # toy_requests' n
    "prompt_tokens": lambda v: check_int("prompt_tokens", v, min=1, max=MAX_LENGTH),
    "output_tokens": lambda v: check_int("output_tokens", v, min=1, max=MAX_LENGTH),
}


def check_in_control(check: Callable[..., _Checked], name: str, value: object, lo: _Checked,
                     hi: _Checked, what: str, note: str | None = None) -> _Checked:
    """``value`` checked by the API (its message first), then against the control's range.

    Never clamped: a value the API takes but the control cannot show is refused too.
    ``note`` replaces the bracket saying where the range comes from.
    """
    if name in _API_CHECKS:
        value = _API_CHECKS[name](value)
    return check(name, value, min=lo, max=hi,
                 why=note or f"the {what}'s range; the API allows more")


def capacity_calculator(model: str = "llama-2-7b", gpu: str = "a40-48gb", *,
                        gpu_memory_utilization: float = 0.60, kv_dtype: str | None = None,
                        prompt_tokens: int = 850, output_tokens: int = 250) -> w.VBox:
    """An ipywidgets calculator: model, KV dtype, GPU, utilisation, prompt and answer length.

    Returns an ``ipywidgets.VBox`` whose last child is an ``Output`` widget
    holding the result (or kvsim's one-line error); display it as a cell's
    last expression. The defaults are the Belgavi set-up of chapter 1, with
    kvsim's default activation reserve.

    Every argument is checked as the API checks it, and a bad one raises
    kvsim's one-line :class:`KvsimError` (an unknown model too, not a
    ``TraitError``); a utilisation the API accepts but the slider cannot show
    (below 0.01) is refused as well, never clamped. Prompt and answer lengths
    are free text boxes: a typed value the API refuses (0 prompt tokens, say)
    shows the API's one-line error in the output area instead of a result.
    """
    import ipywidgets as w

    model = _preset(model)
    gpu = get_gpu(gpu).name
    if kv_dtype is not None:
        check_choice("kv_dtype", kv_dtype, KV_DTYPES)
    lo, hi, step = UTIL_SLIDER
    check_in_control(check_float, "gpu_memory_utilization", gpu_memory_utilization, lo, hi,
                     "slider")
    check_int("prompt_tokens", prompt_tokens, min=1, max=MAX_LENGTH)
    check_int("output_tokens", output_tokens, min=0, max=MAX_LENGTH)

    style = {"description_width": "170px"}
    layout = w.Layout(width="480px")
    dropdown = strict_choice("dropdown")
    c_model = dropdown(options=list_models(), value=model, description="Model", param="model",
                       style=style, layout=layout)
    c_dtype = dropdown(options=[_AUTO] + list(KV_DTYPES), value=kv_dtype or _AUTO,
                       description="KV cache dtype", param="kv_dtype", style=style,
                       layout=layout)
    c_gpu = dropdown(options=list_gpus(), value=gpu, description="GPU", param="gpu",
                     style=style, layout=layout)
    c_util = strict_slider("float")(value=float(gpu_memory_utilization), min=lo, max=hi, step=step,
                              param="gpu_memory_utilization",
                              description="gpu_memory_utilization", readout_format=".2f",
                              continuous_update=False, style=style, layout=layout)
    # Unbounded boxes: the API, not the box, judges a typed length (no silent clamp).
    c_prompt = strict_int_text()(value=int(prompt_tokens), step=50, param="prompt_tokens",
                                 description="Prompt tokens", style=style, layout=layout)
    c_answer = strict_int_text()(value=int(output_tokens), step=50, param="output_tokens",
                                 description="Answer tokens", style=style, layout=layout)
    # An Output widget whose outputs are set directly, so each change replaces the
    # result. The book never saves this widget (scripts/execute_notebooks.py clears
    # cells tagged kvbook-live-widget): with no kernel it would show stale numbers.
    out = w.Output()

    def show(html_text: str, plain: str) -> None:
        out.outputs = ({"output_type": "display_data", "metadata": {},
                        "data": {"text/html": html_text, "text/plain": plain}},)

    def update(_change: object = None) -> None:
        try:
            rep = capacity_report(c_model.value, c_gpu.value,
                                  gpu_memory_utilization=c_util.value,
                                  kv_dtype=None if c_dtype.value == _AUTO else c_dtype.value,
                                  prompt_tokens=c_prompt.value, output_tokens=c_answer.value)
            show(report_html(rep), f"{rep['max_concurrent']} concurrent requests fit")
        except KvsimError as exc:
            show(_error_html(str(exc)), str(exc))

    controls = [c_model, c_dtype, c_gpu, c_util, c_prompt, c_answer]
    for c in controls:
        c.observe(update, names="value")
    update()
    return w.VBox(controls + [out])


def frame_html(frame: Frame) -> str:
    """One stepper frame as HTML: the step's story, then a bar of blocks per request."""
    total = max(1, frame["total_blocks"])
    rows = []
    free = FrameRequest(name="free", state="free", blocks=frame["free_blocks"], tokens=0,
                        generated=0, output=0, preemptions=0, recomputed=0, rescued=0,
                        needs_block=False)
    for r in frame["requests"] + [free]:
        colour = PALETTE[2] if r["state"] == "free" else STATE_COLOURS[r["state"]]
        width = 260 * r["blocks"] / total
        note = r["state"] if r["state"] != "free" else f"{r['blocks']} free blocks"
        if r["state"] not in ("free",) and r["blocks"]:
            note += f", {r['blocks']} blocks ({r['tokens']} tokens)"
        if r.get("needs_block"):
            note += ", needs a block"
        if r["preemptions"]:
            note += f", preempted {r['preemptions']}x"
        rows.append(f"<tr><td style='padding-right:8px'>{html.escape(r['name'])}</td>"
                    f"<td><span style='display:inline-block;height:14px;width:{width:.0f}px;"
                    f"background:{colour}'></span> {html.escape(note)}</td></tr>")
    queue = ", ".join(frame["waiting"]) or "empty"
    return (f"<p>{html.escape(frame['story'])}</p>"
            f"<p><b>Waiting queue (front first):</b> {html.escape(queue)}</p>"
            f"<table>{''.join(rows)}</table>")


def scheduler_stepper(*, num_gpu_blocks: int = 20, requests: int = 5, prompt_tokens: int = 40,
                      output_tokens: int | list[int] | tuple[int, ...] = TOY_OUTPUT_TOKENS,
                      model: str = "llama-3.1-8b", gpu: str = "a40-48gb") -> w.VBox:
    """An ipywidgets stepper: pick the pool, the batch and the lengths, then walk the steps.

    It opens on chapter 2's toy, the one its prose and static chart follow: five
    40-token prompts with answers of 90, 70, 100, 60 and 80 tokens
    (:data:`kvsim.runs.stepper.TOY_OUTPUT_TOKENS`, cycled over the requests) in
    20 blocks. ``output_tokens`` is such a sequence, or one length for every
    request; the "Answers" control switches between the sequence and the
    "Answer tokens" slider's one length.

    Every frame comes from :func:`kvsim.runs.stepper.scheduler_frames` (the real
    engine, one step at a time); a set-up that cannot run (a prompt larger
    than the pool, say) shows kvsim's one-line error instead.

    Each argument is checked as the API checks it, then against its slider's
    range (:data:`STEPPER_SLIDERS`): a value outside either raises kvsim's
    one-line :class:`KvsimError` (``num_gpu_blocks=0``, or 2, which the API
    takes but the slider cannot show), never a silent clamp.
    """
    import ipywidgets as w

    model = _preset(model)
    gpu = get_gpu(gpu).name
    if isinstance(output_tokens, (list, tuple)):
        if not output_tokens:
            raise KvsimError("output_tokens=() is empty: expected a length or a sequence of "
                             "lengths")
        lo, hi = STEPPER_SLIDERS["output_tokens"]
        lengths = tuple(check_in_control(check_int, "output_tokens", n, lo, hi, "stepper's slider")
                        for n in output_tokens)
        one = min(max(round(sum(lengths) / len(lengths)), lo), hi)
    else:
        lengths, one = TOY_OUTPUT_TOKENS, output_tokens
    given = dict(num_gpu_blocks=num_gpu_blocks, requests=requests, prompt_tokens=prompt_tokens,
                 output_tokens=one)
    num_gpu_blocks, requests, prompt_tokens, one = (
        check_in_control(check_int, name, given[name], lo, hi, "stepper's slider")
        for name, (lo, hi) in STEPPER_SLIDERS.items())
    varied = isinstance(output_tokens, (list, tuple))

    style = {"description_width": "150px"}
    layout = w.Layout(width="480px")
    def slider(name: str, value: int, description: str) -> w.IntSlider:
        lo, hi = STEPPER_SLIDERS[name]
        return strict_slider("int")(param=name, min=lo, max=hi, value=value, step=1,
                              description=description, continuous_update=False, style=style,
                              layout=layout)

    c_blocks = slider("num_gpu_blocks", num_gpu_blocks, "Pool (blocks of 16)")
    c_n = slider("requests", requests, "Requests at t = 0")
    c_prompt = slider("prompt_tokens", prompt_tokens, "Prompt tokens")
    c_answer = slider("output_tokens", one, "Answer tokens")
    c_mode = strict_choice("dropdown")(
        options=[(f"{', '.join(map(str, lengths))} tokens, cycled", "varied"),
                 ("one length: the slider above", "one")],
        value="varied" if varied else "one", description="Answers", param="answers",
        style=style, layout=layout)
    c_answer.disabled = varied
    c_step = strict_slider("int")(value=1, min=1, max=1, description="Engine step",
                                  param="step", range_note="the run's steps", style=style,
                                  layout=layout)
    out = w.Output()
    state: dict[str, list[Frame]] = {"frames": []}

    def show(html_text: str, plain: str) -> None:
        out.outputs = ({"output_type": "display_data", "metadata": {},
                        "data": {"text/html": html_text, "text/plain": plain}},)

    def draw(_change: object = None) -> None:
        frames = state["frames"]
        if frames:
            f = frames[min(c_step.value, len(frames)) - 1]
            show(frame_html(f), f["story"])

    def rerun(_change: object = None) -> None:
        c_answer.disabled = c_mode.value == "varied"
        answers = lengths if c_mode.value == "varied" else c_answer.value
        try:
            state["frames"] = scheduler_frames(
                toy_requests(c_n.value, prompt_tokens=c_prompt.value, output_tokens=answers),
                num_gpu_blocks=c_blocks.value, model=model, gpu=gpu)
        except KvsimError as exc:
            state["frames"] = []
            show(_error_html(str(exc)), str(exc))
            return
        c_step.max = len(state["frames"])
        first = next((f["step"] for f in state["frames"] if f["preempted"]), 1)
        c_step.value = first
        draw()

    for c in (c_blocks, c_n, c_prompt, c_answer, c_mode):
        c.observe(rerun, names="value")
    c_step.observe(draw, names="value")
    rerun()
    return w.VBox([c_blocks, c_n, c_prompt, c_answer, c_mode, c_step, out])


@functools.lru_cache(maxsize=4)
def _scenario_scrape(scenario: str, interval_s: float) -> tuple[SimResult, Table]:
    from kvsim.runs.scenarios import run_scenario

    run: SimResult = run_scenario(scenario)
    return run, scrape(run, interval_s=interval_s)


def alert_explorer(rule: str = "preemptions", *, threshold: float = 0.0,
                   window_min: float = 5.0, for_min: float = 10.0,
                   scenario: str = "incident-day") -> w.VBox:
    """An ipywidgets explorer: one alert rule's threshold, window and ``for`` on an incident.

    ``rule`` is a shape of :data:`kvsim.observe.rule_timing.RULES` (a dropdown
    switches it). The output shows the readout ("fires at 18.75 min, 2.6 min
    after the first preemption; resolves at ...") above the chart of the
    expression, its threshold, its pending and firing spans, the rush and the
    first preemption (:func:`kvsim.book.charts.alert_rule_chart`). The defaults
    are seed 003's preemption rule (``rate(...[5m]) > 0`` for 10 minutes).

    Each argument is checked against its slider (:data:`ALERT_THRESHOLD_SLIDERS`,
    :data:`ALERT_SLIDERS`): a value off it raises kvsim's one-line
    :class:`KvsimError`, never a silent clamp.
    """
    import ipywidgets as w

    rule = check_choice("rule", rule, list(RULES))
    lo, hi, _ = ALERT_THRESHOLD_SLIDERS[rule]
    threshold = check_in_control(check_float, "threshold", threshold, lo, hi,
                                 f"{rule} rule's slider")
    window_min, for_min = (check_in_control(check_float, name, value, *ALERT_SLIDERS[name][:2],
                                            "explorer's slider")
                           for name, value in (("window_min", window_min),
                                               ("for_min", for_min)))
    run, tab = _scenario_scrape(scenario, 15.0)

    style = {"description_width": "150px"}
    c_rule = strict_choice("dropdown")(options=[(_RULE_LABELS[r], r) for r in RULES], value=rule,
                                       description="Rule", param="rule", style=style,
                                       layout=w.Layout(width="560px"))

    def slider(param: str, value: float, bounds: tuple[float, float, float], description: str,
               shown: bool = True) -> w.FloatSlider:
        lo, hi, step = bounds
        return strict_slider("float")(param=param, min=lo, max=hi, step=step, value=value,
                                      description=description, continuous_update=False,
                                      readout_format=".2f" if step < 1 else ".1f",
                                      style=style, layout=w.Layout(
                                          width="480px", display=None if shown else "none"))

    c_threshold = {r: slider("threshold", threshold if r == rule else ALERT_THRESHOLD_START[r],
                             bounds,
                             "Threshold (>)", r == rule)
                   for r, bounds in ALERT_THRESHOLD_SLIDERS.items()}
    c_window = slider("window_min", window_min, ALERT_SLIDERS["window_min"], "Window (min)")
    c_for = slider("for_min", for_min, ALERT_SLIDERS["for_min"], "for (min)")
    out = w.Output()

    def show(data: Mapping[str, object]) -> None:
        out.outputs = ({"output_type": "display_data", "metadata": {}, "data": data},)

    def update(_change: object = None) -> None:
        current = c_rule.value
        for r, c in c_threshold.items():
            c.layout.display = None if r == current else "none"
        try:
            th = c_threshold[current].value
            timing = alert_timing(run, current, threshold=th, window_s=c_window.value * 60,
                                  for_s=c_for.value * 60, tab=tab)
            data = alert_rule_data(run, current, thresholds=[th], windows_min=[c_window.value],
                                   fors_min=[c_for.value], tab=tab)
            chart = alert_rule_chart(data, interactive=False, title=timing.expr,
                                     subtitle=f"for: {c_for.value:g} min, on {scenario}")
            bundle = chart._repr_mimebundle_()
            if bundle is None:
                raise KvsimError("alert_explorer: Altair draws nothing (no renderer is enabled): "
                                 "expected alt.renderers.enable('default')")
            chart_data = dict(bundle[0] if isinstance(bundle, tuple) else bundle)
            readout = alert_readout(timing)
            chart_data["text/html"] = (f"<p><b>{html.escape(readout)}</b></p>"
                                       + chart_data.get("text/html", ""))
            chart_data["text/plain"] = readout
            show(chart_data)
        except KvsimError as exc:
            show({"text/html": _error_html(str(exc)), "text/plain": str(exc)})

    for c in [c_rule, c_window, c_for, *c_threshold.values()]:
        c.observe(update, names="value")
    update()
    return w.VBox([c_rule, *c_threshold.values(), c_window, c_for, out])
