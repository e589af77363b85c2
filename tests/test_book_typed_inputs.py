"""Values of the wrong kind given to the book's charts and site files: one clear line each.

The typed readers behind them (kvsim.book.charts.theme.number, spread_chart's cases,
kvsim.book.site_files.read_data_script) name the value and what was expected, where the
charts used to fail deep inside with a TypeError or draw a mixed axis.
"""
from __future__ import annotations

import pytest

from kvsim.book import charts
from kvsim.book.site_files import data_script, read_data_script
from kvsim.errors import KvsimError

NAMES = {"what": "a test's data", "global_name": "kvbookTestData", "source": "tests"}


def _one_line(exc: pytest.ExceptionInfo[BaseException], *needles: str) -> None:
    message = str(exc.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, message


def test_a_text_where_a_chart_reads_a_number_is_named():
    rows = [{"policy": "a", "m": 2.5}, {"policy": "b", "m": "fast"}]
    with pytest.raises(KvsimError) as exc:
        charts.bars_chart(rows, category="policy", panels=[("m", "M (s)")], title="T")
    _one_line(exc, "'fast'", "is not a number")


def test_a_text_end_of_a_span_is_named():
    rows = [{"rule": "A", "start": 1.0, "end": "later", "label": "x"}]
    with pytest.raises(KvsimError) as exc:
        charts.spans_chart(rows, title="T")
    _one_line(exc, "end='later'", "expected an int or a float")


def test_spread_cases_are_all_numbers_or_all_names():
    rows = charts.spread_data({(16, "swap"): [1.0, 2.0], ("long prompt", "swap"): [3.0]})
    with pytest.raises(KvsimError) as exc:
        charts.spread_chart(rows, title="T", y_title="Y", x_title="X")
    _one_line(exc, "mix numbers and names", "16", "'long prompt'")


def test_a_site_script_holding_no_object_is_refused():
    assert read_data_script(data_script({"a": 1}, **NAMES), **NAMES) == {"a": 1}
    with pytest.raises(ValueError) as exc:
        read_data_script(data_script([1, 2], **NAMES), **NAMES)
    _one_line(exc, "kvbookTestData holds a list", "expected a JSON object")
