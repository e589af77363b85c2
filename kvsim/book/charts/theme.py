"""The book's chart theme and the helpers every chart shares.

Every chart follows one theme (:data:`THEME`, also registered as the Altair
theme ``"kvbook"`` by :func:`kvsim.book.notebook.setup`, so a chapter's own charts
follow it too):

* text of at least :data:`MIN_FONT_PX` pixels;
* width that follows the page (``"container"``, fitted by :func:`fit_page`;
  small multiples stack their panels, each as wide as the page, and a label
  that would crowd a phone's plot sits under its bar from the left edge);
  a fixed width in pixels stays possible (:func:`check_width`);
* the Okabe-Ito palette (:data:`PALETTE`), which stays distinct for the
  common forms of colour blindness, and nothing encoded by colour alone:
  every coloured series is also told apart by a dash pattern, a position,
  an axis or a text label;
* a title that states the finding (callers pass the chapter's), units in
  every axis title, the KV dtype named as the model's own (fp16 or bf16,
  never "bf16" for both), and a "you are here" mark where the text refers to
  one case.
"""
from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TypeVar

from kvsim.errors import KvsimError
from kvsim.model.memory import KV_DTYPES
from kvsim.model.presets import ModelSource, get_model

if TYPE_CHECKING:
    import altair as alt
    from altair.theme import ConfigKwds, ThemeConfig

#: A row a chart reads: a column name to its value (a ``*_data`` function's rows, or a caller's).
RowT = TypeVar("RowT", bound=Mapping[str, object])
#: A chart's width: ``"container"`` (the page's) or pixels.
Width = Literal["container"] | int

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
THEME: ConfigKwds = {
    "font": "sans-serif",
    "axis": {"labelFontSize": MIN_FONT_PX, "titleFontSize": 13, "titleFontWeight": "normal"},
    "legend": {"labelFontSize": MIN_FONT_PX, "titleFontSize": MIN_FONT_PX, "orient": "bottom"},
    "header": {"labelFontSize": 13, "titleFontSize": 13},
    "title": {"fontSize": 15, "subtitleFontSize": MIN_FONT_PX, "anchor": "start", "offset": 10},
    "text": {"fontSize": MIN_FONT_PX},
    "range": {"category": PALETTE},
    "view": {"continuousHeight": 260, "continuousWidth": 300},
}


def theme() -> ThemeConfig:
    """The theme as Altair's theme registry wants it (``{"config": THEME}``)."""
    import copy

    return {"config": copy.deepcopy(THEME)}


#: Characters per line of a chart's title (15 px) and subtitle (12 px): each line fits a
#: phone's page (about 330 px), so a title never widens a chart past it (40 title characters
#: reached 358 px in Debian's chromium fonts and lost their last letter at 390 px).
TITLE_CHARS, SUBTITLE_CHARS = 36, 52


def _lines(text: str | Sequence[str], width: int) -> list[str] | str:
    """``text`` (a string or a list of lines) with every line wrapped to ``width`` characters."""
    import textwrap

    lines = [text] if isinstance(text, str) else list(text)
    out = [part for line in lines for part in (textwrap.wrap(line, width) or [""])]
    return out[0] if len(out) == 1 else out


def fit_page(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """A chart whose views have ``width="container"``, fitted to the page's width (concatenated
    views too: Vega-Lite sizes each to the container and ``fit-x`` keeps axes and labels in)."""
    import altair as alt

    return chart.properties(autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


def check_width(width: object, what: str) -> Width:
    """``"container"`` (the page's width) or a fixed width in pixels (200-700)."""
    from kvsim.errors import check_int

    if width == "container":
        return "container"
    return check_int("width", width, min=200, max=700,
                     why=f"{what}'s width in pixels, or 'container' to follow the page")


def finish_chart(chart: alt.TopLevelMixin, title: str | Sequence[str],
                 subtitle: str | Sequence[str] | None = None) -> alt.TopLevelMixin:
    """Title (the finding, with an optional subtitle) and the book's theme.

    Each line of the title and subtitle is wrapped to fit a phone's page
    (:data:`TITLE_CHARS`, :data:`SUBTITLE_CHARS`)."""
    import altair as alt

    wrapped = _lines(subtitle, SUBTITLE_CHARS) if subtitle else alt.Undefined
    titled = chart.properties(title=alt.TitleParams(text=_lines(title, TITLE_CHARS), subtitle=wrapped))
    themed: alt.TopLevelMixin = titled.configure(**THEME)   # Altair declares no return type here
    return themed


def data_values(rows: Sequence[Mapping[str, object]]) -> alt.Data:
    """``alt.Data(values=rows)``: a chart's rows as Altair's generic data (not ``InlineData``,
    whose spec differs: the charts' committed specs keep this form)."""
    import altair as alt

    data: alt.Data = alt.Data(values=rows)  # type: ignore[no-untyped-call]  # Altair leaves Data.__init__ untyped
    return data


def need_rows(rows: Iterable[RowT], keys: Sequence[str], what: str) -> list[RowT]:
    """``rows`` as a list, checked to be non-empty with every key a chart ``what`` reads."""
    listed = list(rows)
    if not listed:
        raise KvsimError(f"{what}: rows=[] is empty: expected at least one row")
    for row in listed:
        missing = [k for k in keys if k not in row]
        if missing:
            raise KvsimError(f"{what}: row {row!r} lacks {', '.join(missing)}: expected keys "
                             f"{', '.join(keys)}")
    return listed


def number(value: object, what: str) -> float:
    """A row's number as it is (an int stays an int, so a chart's spec is unchanged), or a
    one-line error naming ``what`` for a value that is not one (a text, None)."""
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise KvsimError(f"{what}={value!r} is not a number: expected an int or a float")


def kv_dtype_label(model: ModelSource, kv_dtype: str | None = None) -> str:
    """The KV dtype a cache really uses: ``kv_dtype``, or the model's own dtype.

    ``kv_dtype_label("llama-2-7b")`` is ``"fp16"`` and
    ``kv_dtype_label("llama-3.1-8b")`` is ``"bf16"``: both are 16-bit, but a
    chart that calls both "bf16" is wrong about one of them.
    """

    if kv_dtype is None:
        return get_model(model).dtype
    if kv_dtype not in KV_DTYPES:
        raise KvsimError(f"kv_dtype={kv_dtype!r} is not known: expected one of "
                         f"{', '.join(KV_DTYPES)} (or None for the model's dtype)")
    return kv_dtype
