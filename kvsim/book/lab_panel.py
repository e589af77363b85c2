"""Chapter 5's lab as an ipywidgets panel: the lab's day, redrawn on every change.

:func:`lab_panel` runs :func:`kvsim.lab.run_lab` for the settings a reader
picks and draws the run as the static twin does (:func:`kvsim.book.lab_charts.lab_twin_chart`:
KV blocks in use against the pool with preemption ticks, the waiting and swapped strip, a
playhead) beside :func:`kvsim.lab.oncall_text`'s lines; a mission's panel draws
:func:`kvsim.book.charts.timeline_chart`. Settings that cannot run together (swap
with vLLM V1, say) show kvsim's one-line error in the panel.
"""
from __future__ import annotations

import base64
import html
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING

from kvsim.book.widgets import check_in_control, strict_choice, strict_slider
from kvsim.errors import KvsimError, check_float, check_int
from kvsim.lab.missions import (
    SEEDS,
    Mission,
    MissionLike,
    Prediction,
    get_mission,
    mission_day,
    normalise_settings,
)
from kvsim.lab.progress import PathLike
from kvsim.lab.replay import (
    LAB_DEFAULTS,
    TwinPoint,
    lab_settings,
    mission_run,
    mission_text,
    oncall_numbers,
    oncall_text,
    run_lab,
)

from .charts import timeline_chart, timeline_data
from .lab_charts import lab_twin_chart, lab_twin_data

if TYPE_CHECKING:
    import ipywidgets

    from kvsim.engine.result import SimResult

#: The style a panel's controls share (ipywidgets' ``style`` argument).
_Style = Mapping[str, str]

__all__ = ["lab_panel", "PANEL_SLIDERS"]

#: The free panel's sliders: setting -> (min, max, step). A starting value off one is
#: refused in one line (``lab_settings`` accepts wider ranges; a slider would clamp).
PANEL_SLIDERS = {
    "gpu_memory_utilization": (0.40, 0.95, 0.01), "output_mean": (50, 1000, 25),
    "rate_per_s": (0.25, 4.0, 0.05), "max_tokens": (0, 1000, 50), "watermark": (0.0, 0.30, 0.01),
    "max_num_seqs": (0, 64, 1), "pcie_gb_s": (1.0, 64.0, 1.0), "seed": (0, 9, 1),
}


def _table_html(n: Mapping[str, object]) -> str:
    rows = "".join(f"<li>{html.escape(line)}</li>" for line in oncall_text(n))
    return (f"<p style='margin:4px 0'><b>The pager's view</b> (pool: {n['pool_tokens']:,} "
            f"tokens)</p><ul style='margin:0'>{rows}</ul>")


def _error_html(message: str) -> str:
    return ("<div style='color:#a00;border-left:4px solid #a00;padding:4px 8px'>"
            f"{html.escape(message)}</div>")


def lab_panel(mission: MissionLike | None = None, *, progress_file: PathLike | None = None,
              **start: object) -> ipywidgets.VBox:
    """The lab as an ipywidgets panel; ``start`` overrides :data:`LAB_DEFAULTS`.

    With ``mission`` (1-4), the panel plays that mission instead: its scenario
    and day (warm-up and scored window), its levers on their grids, and a
    choice of the days :func:`~kvsim.lab.missions.score` judges (``seed``);
    ``start`` sets levers or ``seed``. Each run is the one ``score`` makes
    (:func:`kvsim.lab.replay.mission_run`), so the panel's numbers are its.
    Below the run, as on the site's panel: commit a prediction (the root cause,
    or mission 4's band), then score the levers on all the mission's days; the
    stars, the message and the completion code are recorded in the progress
    file (``progress_file``, by default the one ``kvsim missions`` uses:
    :func:`kvsim.lab.progress.progress_path`).

    Controls (all reachable from the keyboard): memory for the server, mean
    answer length, arrival rate, the answer cap (``max_tokens``, 0 = none), the
    KV cache dtype, admission headroom (watermark), ``max_num_seqs`` (0 = the
    engine's default), engine, preemption mode, PCIe bandwidth and the day of
    traffic (seed): the chapter's four fixes and what its missions change. Each change runs kvsim and redraws
    the timeline and the on-call numbers, or shows kvsim's one-line error.
    """
    import ipywidgets as w

    if mission is not None:
        return _mission_panel(w, mission, start, progress_file)
    if progress_file is not None:
        raise KvsimError("progress_file is for a mission's panel: expected lab_panel(mission=N, "
                         "progress_file=...)")
    s = dict(LAB_DEFAULTS, **start)
    lab_settings(**s)                                     # bad starting values: one line, now
    for name, (lo, hi, _step) in PANEL_SLIDERS.items():   # and none the sliders cannot show
        value = s[name] if s[name] is not None else 0      # (max_tokens, max_num_seqs: 0 = none)
        check_in_control(check_int if isinstance(lo, int) else check_float, name, value, lo, hi,
                         "lab panel's slider")
    style = {"description_width": "190px"}
    layout = w.Layout(width="460px")
    opts = dict(continuous_update=False, style=style, layout=layout)

    def slider(name: str, description: str, fmt: str | None = None) -> ipywidgets.ValueWidget:
        lo, hi, step = PANEL_SLIDERS[name]
        kind = "int" if isinstance(lo, int) else "float"
        extra = {"readout_format": fmt} if fmt else {}
        return strict_slider(kind)(param=name, min=lo, max=hi, step=step,
                                   value=s[name] if s[name] is not None else 0,
                                   description=description, **extra, **opts)

    c_util = slider("gpu_memory_utilization", "gpu_memory_utilization", ".2f")
    c_out = slider("output_mean", "Mean answer (tokens)")
    c_rate = slider("rate_per_s", "Arrivals (requests/s)", ".2f")
    c_cap = slider("max_tokens", "max_tokens (0: no cap)")
    toggle = strict_choice("toggle")
    c_dtype = toggle(options=["fp16", "fp8"], value=s["kv_dtype"], param="kv_dtype",
                     description="KV cache dtype", style=style)
    c_wm = slider("watermark", "Admission headroom", ".2f")
    c_seqs = slider("max_num_seqs", "max_num_seqs (0: default)")
    c_engine = toggle(options=["v1", "v0"], value=s["engine"], param="engine",
                      description="Engine", style=style)
    c_mode = toggle(options=["recompute", "swap"], value=s["preemption_mode"],
                    param="preemption_mode", description="Preemption mode", style=style)
    c_pcie = slider("pcie_gb_s", "PCIe, effective (GB/s)", ".0f")
    c_seed = slider("seed", "Day of traffic (seed)")
    out_chart, out_text = w.Output(), w.Output()

    def show(target: ipywidgets.Output, html_text: str, plain: str,
             extra: Mapping[str, object] | None = None) -> None:
        data: dict[str, object] = {"text/html": html_text, "text/plain": plain}
        data.update(extra or {})
        target.outputs = ({"output_type": "display_data", "metadata": {}, "data": data},)

    def update(_change: object = None) -> None:
        settings: dict[str, object] = dict(gpu_memory_utilization=c_util.value, output_mean=c_out.value,
                        rate_per_s=c_rate.value, max_tokens=c_cap.value or None,
                        kv_dtype=c_dtype.value, watermark=c_wm.value,
                        max_num_seqs=c_seqs.value or None, engine=c_engine.value,
                        preemption_mode=c_mode.value, pcie_gb_s=c_pcie.value, seed=c_seed.value)
        try:
            result = run_lab(**settings)
        except KvsimError as exc:
            show(out_text, _error_html(str(exc)), str(exc))
            out_chart.outputs = ()
            return
        n = oncall_numbers(result)
        # the static twin's chart of this one run: KV blocks against the pool, preemption
        # ticks, the waiting and swapped strip, the playhead's bar
        point: TwinPoint = (c_util.value, c_out.value, c_wm.value,
                            f"{c_engine.value}-{c_mode.value}", c_seed.value)
        chart = lab_twin_chart(lab_twin_data({point: result}),
                               title=f"{n['preemptions_per_1k']:,.0f} preemptions per 1,000 "
                                     f"requests, p95 TTFT {n['ttft_p95_s']:,.1f} s",
                               subtitle="One minute of warm-up, three measured; drag the "
                                        "playhead", width=560, pager=False)
        # set the Output's outputs directly (as capacity_calculator does): a `with out:`
        # capture breaks under nbclient, which executes the book
        bundle = chart._repr_mimebundle_(None, None)
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        out_chart.outputs = ({"output_type": "display_data", "metadata": meta or {},
                              "data": data},)
        show(out_text, _table_html(n), "\n".join(oncall_text(n)))

    controls = [c_util, c_out, c_rate, c_cap, c_dtype, c_wm, c_seqs, c_engine, c_mode, c_pcie,
                c_seed]
    for c in controls:
        c.observe(update, names="value")
    update()
    return w.VBox(controls + [out_text, out_chart])


def _render_chart(out: ipywidgets.Output, result: SimResult, n_pre: float, ttft: float,
                  subtitle: str) -> None:
    chart = timeline_chart(timeline_data({"this run": result}, points=300),
                           title=f"{n_pre:,.0f} preemptions per 1,000 requests, p95 TTFT "
                                 f"{ttft:,.1f} s", subtitle=subtitle, width=560)
    bundle = chart._repr_mimebundle_(None, None)
    data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
    out.outputs = ({"output_type": "display_data", "metadata": meta or {}, "data": data},)


def _stars_text(stars: int) -> str:
    return "\u2605" * stars + "\u2606" * (3 - stars)


def _prediction_controls(w: ModuleType, m: Mission, style: _Style
                         ) -> tuple[list[ipywidgets.ValueWidget], Callable[[], Prediction | None]]:
    """The prediction picker of a mission's panel: the root cause (a drop-down of the
    ticket's causes) or, for a band mission, the band's two edges on the resource's grid.
    Returns ``(controls, read)``: ``read()`` gives the prediction as
    :func:`kvsim.lab.progress.commit_prediction` takes it, or None when nothing is picked."""
    if m.band:
        grid = [v for v in m.lever(m.resource).grid if v is not None]
        options = [("pick", None)] + [(f"{v:g}", v) for v in grid]
        low = strict_choice("dropdown")(options=options, value=None, param="band low",
                                        description="Passes from", style=style)
        high = strict_choice("dropdown")(options=options, value=None, param="band high",
                                         description="up to", style=style)

        def read_band() -> Prediction | None:
            if low.value is None or high.value is None:
                return None
            return {"band": (low.value, high.value)}
        return [low, high], read_band
    options = [("pick the root cause", None)] + [(text, key) for key, text in m.causes.items()]
    cause = strict_choice("dropdown")(options=options, value=None, param="cause",
                                      description="Root cause", style=style,
                                      layout=w.Layout(width="640px"))
    return [cause], lambda: None if cause.value is None else {"cause": cause.value}


def _download_link(export: str) -> str:
    """A link that saves the learner's whole progress (the export ``kvsim missions --import``
    reads) from the browser in one click: a Binder session that ends at the next break takes
    nothing with it that the learner kept."""
    from kvsim.lab.progress import EXPORT_NAME

    data = base64.b64encode(export.encode()).decode()
    return (f"<p style='margin:4px 0'><a download='{EXPORT_NAME}' "
            f"href='data:application/json;base64,{data}'>Download your progress "
            f"({EXPORT_NAME})</a>: on Binder, before a break; next time, upload it and run "
            f"<code>kvsim missions --import {EXPORT_NAME}</code>.</p>")


def _score_area(w: ModuleType, m: Mission, levers: Mapping[str, ipywidgets.ValueWidget],
                progress_file: PathLike | None, style: _Style) -> ipywidgets.VBox:
    """The part of a mission's panel that counts: commit a prediction, score the levers on
    all of the mission's days (:func:`kvsim.lab.progress.attempt`, recorded in the progress
    file as the CLI and the site record it), show the stars, the message and the code."""
    from kvsim.lab import progress

    picks, read = _prediction_controls(w, m, style)
    b_commit = w.Button(description="Commit prediction", button_style="info",
                        tooltip="store it before your first score: only then can it earn "
                                "the third star")
    b_score = w.Button(description=f"Score on all {len(SEEDS)} days", button_style="primary",
                       tooltip="what a completion code records: the stars of these settings")
    out = w.Output()

    def say(html_text: str, plain: str) -> None:
        out.outputs = ({"output_type": "display_data", "metadata": {},
                        "data": {"text/html": html_text, "text/plain": plain}},)

    def commit(_button: object = None) -> None:
        prediction = read()
        if prediction is None:
            say(_error_html("Pick a prediction first."), "Pick a prediction first.")
            return
        try:
            line = progress.commit_prediction(m.number, prediction, path=progress_file)
        except KvsimError as exc:
            say(_error_html(str(exc)), str(exc))
            return
        for c in picks:
            c.disabled = True
        b_commit.disabled = True
        say(f"<p>{html.escape(line)}</p>", line)

    def score(_button: object = None) -> None:
        chosen = {name: c.value for name, c in levers.items()}
        try:
            sc = progress.attempt(m.number, chosen, path=progress_file)
        except KvsimError as exc:
            say(_error_html(str(exc)), str(exc))
            return
        entry = progress.load(progress_file)["missions"][str(m.number)]
        lines = [f"{_stars_text(sc.stars)} {sc.stars} of 3 stars for these settings "
                 f"({sc.seeds_passed} of {sc.seeds} days meet the SLO).", sc.message]
        best = (f"Best so far: {_stars_text(entry['stars'])}"
                + (f"; completion code {entry['code']} (kvsim missions --verify CODE "
                   f"confirms it)" if entry["code"] else "") + ".")
        lines.append(best)
        body = "".join(f"<p style='margin:4px 0'>{html.escape(line)}</p>" for line in lines)
        say(body + _download_link(progress.export_text(progress_file)), "\n".join(lines))

    b_commit.on_click(commit)
    b_score.on_click(score)
    head = w.HTML(f"<p style='margin:8px 0 4px'><b>Mission {m.number}: your prediction, then "
                  f"the score</b> (recorded in {html.escape(str(progress.progress_path(progress_file)))})</p>")
    box = w.VBox([head, *picks, w.HBox([b_commit, b_score]), out])
    box.score_parts = dict(picks=picks, commit=commit, score=score, output=out,
                           commit_button=b_commit, score_button=b_score)
    return box


def _mission_panel(w: ModuleType, mission: MissionLike, start: Mapping[str, object],
                   progress_file: PathLike | None = None) -> ipywidgets.VBox:
    """:func:`lab_panel` for one mission (see there)."""
    m = get_mission(mission)
    start = dict(start)
    seed = start.pop("seed", SEEDS[0])
    settings = normalise_settings(m, start)           # bad starting values: one line, now
    if seed not in SEEDS:
        raise KvsimError(f"seed={seed!r} is not one of mission {m.number}'s days: expected one "
                         f"of {', '.join(map(str, SEEDS))}")
    style = {"description_width": "190px"}
    controls = {}
    for lv in m.levers:
        options = [("None (no cap)" if v is None else f"{v:g}" if isinstance(v, float) else
                    str(v), v) for v in lv.grid]
        controls[lv.name] = strict_choice("dropdown")(options=options, value=settings[lv.name],
                                                      description=lv.name, param=lv.name,
                                                      style=style)
    c_seed = strict_choice("dropdown")(options=list(SEEDS), value=seed, param="seed",
                                       description="Day of traffic (seed)", style=style)
    out_chart, out_text = w.Output(), w.Output()
    day = mission_day(m)
    subtitle = (f"Mission {m.number}: {day['warmup_s'] / 60:.0f} minutes of warm-up (not "
                f"scored), {day['duration_s'] / 60:.0f} scored; drag the playhead")

    def update(_change: object = None) -> None:
        chosen = {name: c.value for name, c in controls.items()}
        try:
            result = mission_run(m, chosen, c_seed.value)
        except KvsimError as exc:
            out_text.outputs = ({"output_type": "display_data", "metadata": {},
                                 "data": {"text/html": _error_html(str(exc)),
                                          "text/plain": str(exc)}},)
            out_chart.outputs = ()
            return
        summary = result.summary()
        lines = mission_text(m, summary, c_seed.value)
        rows = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
        out_text.outputs = ({"output_type": "display_data", "metadata": {},
                             "data": {"text/html": f"<p style='margin:4px 0'><b>Mission "
                                                   f"{m.number}, the ticket's SLO</b></p>"
                                                   f"<ul style='margin:0'>{rows}</ul>",
                                      "text/plain": "\n".join(lines)}},)
        _render_chart(out_chart, result, float(summary["preemptions_per_1k"]),
                      float(summary["ttft_p95_s"]), subtitle)

    widgets = list(controls.values()) + [c_seed]
    for c in widgets:
        c.observe(update, names="value")
    update()
    scoring = _score_area(w, m, controls, progress_file, style)
    box = w.VBox(widgets + [out_text, out_chart, scoring])
    box.mission_outputs = (out_text, out_chart)     # for tests: what the panel shows
    box.score_parts = scoring.score_parts
    return box
