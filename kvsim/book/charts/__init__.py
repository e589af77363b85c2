"""Altair charts for the book, in one theme (:mod:`kvsim.book.charts.theme`).

Explained in chapter 1, *Bytes per token and capacity*.

Two kinds of function live here, kept apart on purpose:

* ``*_data`` functions ask kvsim for the numbers (they call
  :func:`kvsim.model.memory.kv_bytes_per_token`, :func:`kvsim.model.memory.kv_budget`,
  :func:`kvsim.simulate` and friends, never re-deriving them) and return small
  lists of plain-Python rows, rounded so that the chart specs are compact and
  identical from run to run;
* ``*_chart`` functions turn those rows into an Altair chart. They only
  filter and encode; no capacity or scheduling logic runs in the browser.

One module per family, every name importable from ``kvsim.book.charts``:

* :mod:`kvsim.book.charts.theme` — the theme, the palette, the shared helpers;
* :mod:`kvsim.book.charts.capacity` — chapter 1: bytes per token, the memory
  budget, capacity against length, the calculator's static twin;
* :mod:`kvsim.book.charts.stepper` — chapter 2's scheduler stepper, frame by frame;
* :mod:`kvsim.book.charts.runs` — runs compared over seeds (bars, lines, bands,
  spans, histograms) and the engine's work (useful, recomputed, rescued);
* :mod:`kvsim.book.charts.timeline` — the timeline of a run, with a playhead;
* :mod:`kvsim.book.charts.swap` — chapter 3: swap against recompute, the
  crossover, the block-size study, the spread over seeds;
* :mod:`kvsim.book.charts.alert_rule` — chapter 4's alert explorer: when a rule
  with a threshold, a window and a ``for`` fires on the incident;
* :mod:`kvsim.book.charts.planner` — chapter 6: the planner's rates against their cost.

The lab's mission charts are in :mod:`kvsim.book.lab_charts`.
"""
from __future__ import annotations

from .alert_rule import alert_readout, alert_rule_chart, alert_rule_data
from .capacity import (
                       budget_chart,
                       budget_data,
                       bytes_per_token_chart,
                       bytes_per_token_data,
                       capacity_by_length_chart,
                       capacity_by_length_data,
                       capacity_chart,
                       capacity_grid,
)
from .planner import pareto_chart, pareto_data
from .runs import (
                       WORK_KINDS,
                       band_chart,
                       bars_chart,
                       histogram_chart,
                       lines_chart,
                       seed_summary,
                       spans_chart,
                       work_rate_chart,
                       work_rate_data,
                       work_split_chart,
                       work_split_data,
)
from .stepper import STEPPER_STATES, stepper_chart, stepper_data
from .swap import (
                       MODES,
                       block_size_chart,
                       block_size_data,
                       get_gpu_label,
                       spread_chart,
                       spread_data,
                       swap_recompute_chart,
                       swap_recompute_data,
)
from .theme import DASHES, MIN_FONT_PX, NEUTRAL, PALETTE, THEME, kv_dtype_label, theme
from .timeline import timeline_chart, timeline_data

__all__ = [
    "PALETTE", "NEUTRAL", "DASHES", "MIN_FONT_PX", "THEME", "theme", "kv_dtype_label",
    "bytes_per_token_data", "bytes_per_token_chart",
    "budget_data", "budget_chart",
    "capacity_grid", "capacity_chart",
    "capacity_by_length_data", "capacity_by_length_chart",
    "STEPPER_STATES", "stepper_data", "stepper_chart",
    "seed_summary", "bars_chart", "lines_chart", "band_chart", "work_split_data", "work_split_chart",
    "spans_chart", "histogram_chart", "WORK_KINDS", "work_rate_data", "work_rate_chart",
    "timeline_data", "timeline_chart",
    "MODES", "swap_recompute_data", "swap_recompute_chart", "get_gpu_label", "block_size_data",
    "block_size_chart", "spread_data", "spread_chart",
    "alert_rule_data", "alert_rule_chart", "alert_readout",
    "pareto_data", "pareto_chart",
]
