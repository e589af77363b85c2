"""Chapter 5's lab as an ipywidgets panel: the lab's day, redrawn on every change.

:func:`lab_panel` runs :func:`kvsim.lab.run_lab` for the settings a reader
picks and draws the run with :func:`kvsim.book.charts.timeline_chart` (KV in
use with preemption ticks, the waiting and swapped strip, a playhead) beside
:func:`kvsim.lab.oncall_text`'s lines. Settings that cannot run together (swap
with vLLM V1, say) show kvsim's one-line error in the panel.
"""
from __future__ import annotations

import html
from typing import Any, Mapping

from kvsim.errors import KvsimError
from kvsim.lab.replay import LAB_DEFAULTS, lab_settings, oncall_numbers, oncall_text, run_lab

from .charts import timeline_chart, timeline_data

__all__ = ["lab_panel"]


def _table_html(n: Mapping[str, Any]) -> str:
    rows = "".join(f"<li>{html.escape(line)}</li>" for line in oncall_text(n))
    return (f"<p style='margin:4px 0'><b>The pager's view</b> (pool: {n['pool_tokens']:,} "
            f"tokens)</p><ul style='margin:0'>{rows}</ul>")


def _error_html(message: str) -> str:
    return ("<div style='color:#a00;border-left:4px solid #a00;padding:4px 8px'>"
            f"{html.escape(message)}</div>")


def lab_panel(**start):
    """The lab as an ipywidgets panel; ``start`` overrides :data:`LAB_DEFAULTS`.

    Controls (all reachable from the keyboard): memory for the server, mean
    answer length, arrival rate, the answer cap (``max_tokens``, 0 = none), the
    KV cache dtype, admission headroom (watermark), ``max_num_seqs`` (0 = the
    engine's default), engine, preemption mode, PCIe bandwidth and the day of
    traffic (seed): the chapter's four fixes and what its missions change. Each change runs kvsim and redraws
    the timeline and the on-call numbers, or shows kvsim's one-line error.
    """
    import ipywidgets as w

    s = dict(LAB_DEFAULTS, **start)
    lab_settings(**s)                                     # bad starting values: one line, now
    style = {"description_width": "190px"}
    layout = w.Layout(width="460px")
    opts = dict(continuous_update=False, style=style, layout=layout)
    c_util = w.FloatSlider(value=s["gpu_memory_utilization"], min=0.40, max=0.95, step=0.01,
                           description="gpu_memory_utilization", readout_format=".2f", **opts)
    c_out = w.IntSlider(value=s["output_mean"], min=50, max=1000, step=25,
                        description="Mean answer (tokens)", **opts)
    c_rate = w.FloatSlider(value=s["rate_per_s"], min=0.25, max=4.0, step=0.05,
                           description="Arrivals (requests/s)", readout_format=".2f", **opts)
    c_cap = w.IntSlider(value=s["max_tokens"] or 0, min=0, max=1000, step=50,
                        description="max_tokens (0: no cap)", **opts)
    c_dtype = w.ToggleButtons(options=["fp16", "fp8"], value=s["kv_dtype"],
                              description="KV cache dtype", style=style)
    c_wm = w.FloatSlider(value=s["watermark"], min=0.0, max=0.30, step=0.01,
                         description="Admission headroom", readout_format=".2f", **opts)
    c_seqs = w.IntSlider(value=s["max_num_seqs"] or 0, min=0, max=64, step=1,
                         description="max_num_seqs (0: default)", **opts)
    c_engine = w.ToggleButtons(options=["v1", "v0"], value=s["engine"], description="Engine",
                               style=style)
    c_mode = w.ToggleButtons(options=["recompute", "swap"], value=s["preemption_mode"],
                             description="Preemption mode", style=style)
    c_pcie = w.FloatSlider(value=s["pcie_gb_s"], min=1.0, max=64.0, step=1.0,
                           description="PCIe, effective (GB/s)", readout_format=".0f", **opts)
    c_seed = w.IntSlider(value=s["seed"], min=0, max=9, description="Day of traffic (seed)",
                         **opts)
    out_chart, out_text = w.Output(), w.Output()

    def show(target, html_text: str, plain: str, extra: dict | None = None) -> None:
        data = {"text/html": html_text, "text/plain": plain}
        data.update(extra or {})
        target.outputs = ({"output_type": "display_data", "metadata": {}, "data": data},)

    def update(_change=None):
        settings = dict(gpu_memory_utilization=c_util.value, output_mean=c_out.value,
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
        chart = timeline_chart(timeline_data({"this run": result}, points=300),
                               title=f"{n['preemptions_per_1k']:,.0f} preemptions per 1,000 "
                                     f"requests, p95 TTFT {n['ttft_p95_s']:,.1f} s",
                               subtitle="One minute of warm-up, three measured; drag the "
                                        "playhead", width=560)
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
