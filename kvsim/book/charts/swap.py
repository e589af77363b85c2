"""Chapter 3's charts, *Swap versus recompute*: the two costs side by side, the crossover,
the block-size study, and the median-and-spread chart of a seeded comparison.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from kvsim.engine.costs import CostModel, crossover_tokens, recompute_time_s, swap_round_trip_s
from kvsim.engine.uncertainty import ratio_band
from kvsim.errors import KvsimError, check_float, check_int
from kvsim.model.hardware import get_gpu

from .theme import DASHES, PALETTE, data_values, finish_chart, need_rows, number

if TYPE_CHECKING:
    import altair as alt

    from kvsim.engine.costs import GPULike, ModelLike

#: How chapter 3's charts name the preemption modes (and the order of their colours and dashes).
MODES = ["recompute", "swap out + in"]


class CostCurveRow(TypedDict):
    """A point of one cost curve: ``mode``'s time in ms at ``n`` tokens (``link`` ``"any"`` and
    ``bs`` 0 for recompute, which moves nothing over PCIe)."""
    kind: Literal["curve"]
    gpu: str
    link: str
    bs: int
    n: int
    mode: str
    ms: float


class RatioRow(TypedDict):
    """Recompute over the swap round trip at ``n`` tokens, both in ms, and kvsim's error band."""
    kind: Literal["ratio"]
    gpu: str
    link: str
    bs: int
    n: int
    ratio: float
    rc_ms: float
    sw_ms: float
    low: NotRequired[float]
    high: NotRequired[float]


class CrossingRow(TypedDict):
    """Where the two costs cross (``n`` None when they do not within the lengths)."""
    kind: Literal["cross"]
    gpu: str
    link: str
    bs: int
    n: int | None
    label: str


#: A row of :func:`swap_recompute_data`, told apart by its ``kind``.
SwapRecomputeRow = CostCurveRow | RatioRow | CrossingRow


class BlockSizeRow(TypedDict):
    """A mode's time per preemption (ms) at one block size (:func:`block_size_data`)."""
    bs: int
    mode: str
    ms: float


class SpreadRow(TypedDict):
    """A case's median, lowest and highest value over its seeds, for one series."""
    case: float | str
    series: str
    median: float
    lo: float
    hi: float
    seeds: int


def _ms(seconds: float) -> float:
    return round(1e3 * float(seconds), 3)


def swap_recompute_data(model: ModelLike, gpus: Iterable[str], *, links: Mapping[str, float | None],
                        block_sizes: Iterable[int], lengths: Iterable[int]) -> list[SwapRecomputeRow]:
    """Rows for :func:`swap_recompute_chart`: both costs by sequence length, and where they cross.

    Curve rows ``{kind: "curve", gpu, link, bs, n, mode, ms}``: recompute
    (:func:`kvsim.engine.costs.recompute_time_s`, one row per GPU and length, with
    ``link`` and ``bs`` ``"any"`` and 0, since a prefill moves nothing over
    PCIe) and a swap round trip (:func:`kvsim.engine.costs.swap_round_trip_s`) for
    every link and block size. Crossing rows ``{kind: "cross", gpu, link, bs,
    n, label}`` from :func:`kvsim.engine.costs.crossover_tokens` (one per crossing;
    ``n`` is ``None`` and the label says which is cheaper when none falls in
    the range). Ratio rows ``{kind: "ratio", gpu, link, bs, n, ratio, rc_ms,
    sw_ms, low, high}``: recompute over the swap round trip, which
    :func:`swap_recompute_chart` draws, with the band of kvsim's measured error
    and the link's range (:func:`kvsim.engine.uncertainty.ratio_band`).
    ``links`` maps a label to bytes per second, ``None`` for the GPU preset's
    own link.
    """

    names = [get_gpu(g).name for g in gpus]
    ns = sorted({check_int("lengths", n, min=1) for n in lengths})
    sizes = [check_int("block_sizes", b, min=1, max=4096) for b in block_sizes]
    if not names or not ns or not sizes or not links:
        raise KvsimError("swap_recompute_data: gpus, links, block_sizes and lengths must not be empty")
    rows: list[SwapRecomputeRow] = []
    for g in names:
        rows += [{"kind": "curve", "gpu": g, "link": "any", "bs": 0, "n": n, "mode": MODES[0],
                  "ms": _ms(recompute_time_s(n, model, g))} for n in ns]
        for label, bw in links.items():
            if bw is not None:
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
                    low, _, high = ratio_band(n, model, g, cost, block_size=bs)
                    rows.append({"kind": "ratio", "gpu": g, "link": str(label), "bs": bs, "n": n,
                                 "ratio": round(rc[n] / sw, 4), "rc_ms": _ms(rc[n]),
                                 "sw_ms": _ms(sw), "low": round(low, 4), "high": round(high, 4)})
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


def swap_recompute_chart(rows: Iterable[SwapRecomputeRow], *, title: str, subtitle: str | None = None,
                         link: str | None = None, block_size: int = 16,
                         interactive: bool = False) -> alt.TopLevelMixin:
    """Recompute / swap round trip against sequence length, one line per GPU, a rule at 1.

    Above the rule a swap is cheaper, below it recompute; a crossing is where a
    line crosses 1, marked with its length. The ratio does not depend on how
    often a request is preempted (each preemption pays both again), so no
    control changes it. Log-log axes, one colour, dash and end label per GPU;
    a shaded band per GPU where the rows carry one (``low``, ``high``): where it
    straddles 1, the sign is within kvsim's error.
    With ``interactive=True`` radio buttons pick the link and the block size
    (the static twin of the chapter's widget); otherwise ``link`` (default: the
    first in the rows) and ``block_size`` are fixed.
    """
    import altair as alt

    rows = need_rows(rows, ["kind", "gpu", "link", "bs", "n"], "swap_recompute_chart")
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
    y_title = "recompute time / swap round trip (ratio, log scale)"
    y = alt.Y("ratio:Q", title=y_title,
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
    # the band: kvsim's measured error and the link's plausible range (kvsim.engine.uncertainty)
    band_y = alt.Y("low:Q", title=y_title, scale=alt.Scale(type="log"))
    band = ratio.mark_area(opacity=0.15).encode(x=x, y=band_y, y2="high:Q", color=colour) \
        if all("low" in r for r in ratio_rows) else None
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
    layers = [lines, ends, one, above, below, marks, cross_text]
    if band is not None:
        layers.insert(0, band)
    chart = alt.layer(*layers,
                      data=data_values(rows)).properties(width="container", height=300,
                                                             padding={"right": 50})
    for p in params:
        chart = chart.add_params(p)
    return finish_chart(chart, title, subtitle)


def get_gpu_label(gpu: object) -> str:
    """A GPU preset's short name for chart labels: ``"a100-80gb"`` is ``"A100"``."""
    return str(gpu).split("-")[0].upper()


def block_size_data(model: ModelLike, gpu: GPULike, *, tokens: int,
                    block_sizes: Iterable[int]) -> list[BlockSizeRow]:
    """The PagedAttention block-size microbenchmark as rows ``{bs, mode, ms}``.

    A swap round trip of ``tokens`` tokens at each block size
    (:func:`kvsim.engine.costs.swap_round_trip_s`, with its blocks x layers x 2
    copies) against a recompute of the same tokens, which no block size
    changes (:func:`kvsim.engine.costs.recompute_time_s`).
    """

    tokens = check_int("tokens", tokens, min=1)
    sizes = [check_int("block_sizes", b, min=1, max=4096) for b in block_sizes]
    if not sizes:
        raise KvsimError("block_size_data: block_sizes=[] is empty: expected at least one size")
    recompute = _ms(recompute_time_s(tokens, model, gpu))
    rows: list[BlockSizeRow] = []
    for bs in sizes:
        rows += [{"bs": bs, "mode": MODES[0], "ms": recompute},
                 {"bs": bs, "mode": MODES[1], "ms": _ms(swap_round_trip_s(tokens, model, gpu,
                                                                          block_size=bs))}]
    return rows


def block_size_chart(rows: Iterable[BlockSizeRow], *, title: str, subtitle: str | None = None,
                     here: int | None = None) -> alt.TopLevelMixin:
    """Swap round trip and recompute against block size (log2 axis), named at the line ends.

    ``here`` circles the swap at that block size ("you are here": vLLM's default).
    """
    import altair as alt

    rows = need_rows(rows, ["bs", "mode", "ms"], "block_size_chart")
    sizes = sorted({int(r["bs"]) for r in rows})
    x = alt.X("bs:Q", title="block size (tokens per block, log scale)",
              scale=alt.Scale(type="log", base=2, domain=[sizes[0], sizes[-1]], nice=False),
              axis=alt.Axis(values=sizes, format="d", labelOverlap=False))
    y = alt.Y("ms:Q", title="time per preemption (ms, log scale)", scale=alt.Scale(type="log"),
              axis=alt.Axis(format="~s"))
    colour = alt.Color("mode:N", sort=MODES, legend=None, scale=alt.Scale(domain=MODES,
                                                                          range=PALETTE[:2]))
    base = alt.Chart(data_values(rows))
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
    return finish_chart(alt.layer(*layers).properties(width="container", height=260), title, subtitle)


def _four_digits(value: float) -> float:
    """``value`` rounded to 4 significant digits."""
    return float(f"{float(value):.4g}")


def _named_cases(rows: Sequence[SpreadRow]) -> list[str]:
    """The cases of a chart whose cases are names, in the rows' order (a number among them is
    refused: the cases are all numbers or all names)."""
    cases = list(dict.fromkeys(r["case"] for r in rows))
    names = [case for case in cases if isinstance(case, str)]
    if len(names) != len(cases):
        raise KvsimError(f"spread_chart: cases {cases!r} mix numbers and names: expected all "
                         "numbers or all names")
    return names


def spread_data(samples: Mapping[tuple[float | str, object], Sequence[float]]) -> list[SpreadRow]:
    """Median and spread over seeds: rows ``{case, series, median, lo, hi, seeds}``.

    ``samples`` maps ``(case, series)`` to one value per seed; ``lo`` and
    ``hi`` are the smallest and largest. Values are rounded to 4 significant
    digits so the chart's spec stays the same from run to run.
    """
    import numpy as np

    if not samples:
        raise KvsimError("spread_data: samples={} is empty: expected {(case, series): values}")
    rows: list[SpreadRow] = []
    for key, values in samples.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise KvsimError(f"spread_data: key {key!r} is not a (case, series) pair")
        v = np.asarray(list(values), dtype=float)
        if v.size == 0 or not np.all(np.isfinite(v)):
            raise KvsimError(f"spread_data: values for {key!r} = {list(values)!r}: expected "
                             f"one finite number per seed")
        rows.append({"case": key[0], "series": str(key[1]), "median": _four_digits(np.median(v)),
                     "lo": _four_digits(v.min()), "hi": _four_digits(v.max()), "seeds": int(v.size)})
    return rows


def spread_chart(rows: Iterable[SpreadRow], *, title: str, y_title: str, x_title: str,
                 subtitle: str | None = None, log_x: bool = False) -> alt.TopLevelMixin:
    """Median (a point) and the range over seeds (a bar) per case, one colour, shape and label per series.

    Numeric cases go on a quantitative x axis (log base 2 with ``log_x``),
    the series set side by side around each case so no bar hides another.
    Named cases go on the y axis, one row each (their labels never collide),
    with the value on x. ``y_title`` names the value and ``x_title`` the
    cases, whichever axis they end up on; the value's title carries its unit.
    """
    import altair as alt

    rows = need_rows(rows, ["case", "series", "median", "lo", "hi", "seeds"], "spread_chart")
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
    base = alt.Chart(data_values(rows))
    tips = [alt.Tooltip("case:N" if not numeric else "case:Q", title="case"),
            alt.Tooltip("series:N"), alt.Tooltip("median:Q", format=",.4g"),
            alt.Tooltip("lo:Q", format=",.4g", title="lowest seed"),
            alt.Tooltip("hi:Q", format=",.4g", title="highest seed"),
            alt.Tooltip("seeds:Q", title="seeds")]
    if numeric:
        cases = sorted({number(r["case"], "spread_chart: case") for r in rows})
        scale = (alt.Scale(type="log", base=2, domain=[cases[0] / 1.25, cases[-1] * 1.25],
                           nice=False) if log_x else alt.Scale(zero=False))
        k = len(series)
        order = "[" + ", ".join(repr(x) for x in series) + "]"
        # side by side: a log axis shifts by a factor, a linear one by a share of the step
        step = (min(b / a for a, b in pairwise(cases)) if len(cases) > 1 else 2.0)
        if log_x:
            shift = f"datum.case * pow({step}, 0.12 * (indexof({order}, datum.series) - {(k - 1) / 2}))"
        else:
            gap = min(b - a for a, b in pairwise(cases)) if len(cases) > 1 else 1.0
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
        names = _named_cases(rows)
        offset = {"yOffset": alt.YOffset("series:N", sort=series)} if len(series) > 1 else {}
        ycase = alt.Y("case:N", title=x_title, sort=names,
                      axis=alt.Axis(labelLimit=200, labelPadding=6))
        x = alt.X("median:Q", title=y_title, scale=alt.Scale(zero=False))
        bars = base.mark_rule(strokeWidth=3).encode(y=ycase, x=alt.X("lo:Q", title=y_title),
                                                    x2="hi:Q", color=colour, tooltip=tips,
                                                    **offset)
        points = base.mark_point(filled=True, size=90, opacity=1).encode(
            y=ycase, x=x, color=colour, shape=shape, tooltip=tips, **offset)
        layers = [bars, points]
        height = 60 * len(names)
    return finish_chart(alt.layer(*layers).properties(width="container", height=height), title, subtitle)
