"""The bytes of a scrape: metric families written in Prometheus text format 0.0.4 or OpenMetrics 1.0.0.

One job: turn :class:`Family` values (a family's name, help, type and samples)
into the text ``GET /metrics`` returns. kvsim writes it itself, so the bytes do
not depend on which ``prometheus_client`` is installed; they are the bytes a
vLLM server writes through prometheus_client 0.20-0.22 (the releases vLLM's own
exposition was measured with; ``tests/test_exposition_format.py`` compares them
with the installed client's, and ``tests/test_prometheus_client_newest.py`` with
the newest release's). What that means, family by family:

* ``# HELP`` then ``# TYPE`` lines, then the samples in the order given; labels
  sorted by name, written ``{k="v",...}`` with no spaces, a value's backslash,
  newline and double quote escaped (a help text: backslash and newline in
  0.0.4, and the double quote too in OpenMetrics);
* a sample value as :func:`format_value` writes it (``1.0``, ``0.05``,
  ``1.5e+06``, ``+Inf``); from 1e10 up its exponent has Go's two digits
  (``1.2e+10``), as prometheus_client 0.26 and later write it, where 0.25 and
  older wrote ``1.2e+010``;
* text 0.0.4: a counter's header names ``NAME_total``; an ``info`` family is a
  gauge named ``NAME_info``; the ``NAME_created`` samples of a counter or a
  histogram go last, in a gauge family of their own (``NAME_created``);
* OpenMetrics: the headers name the family (``NAME``, types ``counter`` and
  ``info`` kept), ``_created`` samples stay in place, and the text ends with
  ``# EOF``. Sample names keep their ``:`` -- the OpenMetrics grammar allows it,
  and a ``vllm:`` family whose samples read ``vllm_...`` is the trap
  prometheus_client 0.23 and later fall into
  (:data:`kvsim.observe.lint.CLIENT_TRAP`).

A name or label name that is not a legal Prometheus name, or a type kvsim does
not write, is a :class:`~kvsim.errors.KvsimError` with one line.

Explained in chapter 4, *Detecting preemption* (*What a vLLM server exposes*).
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from kvsim.errors import KvsimError

__all__ = ["Sample", "Family", "FAMILY_TYPES", "format_value", "prometheus_text", "openmetrics_text"]

#: The family types kvsim writes (what :mod:`kvsim.observe.series` produces).
FAMILY_TYPES = ("counter", "gauge", "histogram", "info")

_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")


class Sample(NamedTuple):
    """One sample line: its name (the family's, or with a suffix), labels and value."""

    name: str
    labels: dict[str, str]
    value: float


@dataclass
class Family:
    """A metric family: ``name`` without suffix (``vllm:num_preemptions``), its help text,
    its type (one of :data:`FAMILY_TYPES`) and its samples, in the order they are written."""

    name: str
    doc: str
    type: str
    samples: list[Sample] = field(default_factory=list)

    def add(self, name: str, labels: dict[str, str], value: float) -> None:
        """Append a sample."""
        self.samples.append(Sample(name, labels, float(value)))


def format_value(value: float) -> str:
    """A sample value as vLLM's exposition writes it: Python's shortest repr (``1.0``,
    ``0.05``, ``1e-05``) with Go's exponent from a million up (``1.5e+06``, two exponent
    digits at least), and ``+Inf``, ``-Inf``, ``NaN``."""
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    text = repr(value)
    if "e" in text or abs(value) < 1e6:
        return text
    sign, digits = ("-", text[1:]) if value < 0 else ("", text)
    whole, _, fraction = digits.partition(".")
    mantissa = f"{whole[0]}.{whole[1:]}{fraction}".rstrip("0").rstrip(".")
    return f"{sign}{mantissa}e+{len(whole) - 1:02d}"


def _check(family: Family) -> None:
    if family.type not in FAMILY_TYPES:
        raise KvsimError(f"type={family.type!r} of family {family.name!r} is not supported: "
                         f"expected one of {', '.join(FAMILY_TYPES)}")
    for name in (family.name, *(s.name for s in family.samples)):
        if not _METRIC_NAME.match(name):
            raise KvsimError(f"metric name {name!r} is not valid: expected a Prometheus name "
                             "([a-zA-Z_:][a-zA-Z0-9_:]*)")
    for sample in family.samples:
        for label in sample.labels:
            if not _LABEL_NAME.match(label):
                raise KvsimError(f"label name {label!r} of {sample.name!r} is not valid: expected "
                                 "a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)")


def _escape_value(text: str) -> str:
    return text.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def _escape_help(text: str, *, quotes: bool) -> str:
    text = text.replace("\\", r"\\").replace("\n", r"\n")
    return text.replace('"', r"\"") if quotes else text


def _sample_line(sample: Sample) -> str:
    labels = ""
    if sample.labels:
        inner = ",".join(f'{k}="{_escape_value(str(v))}"' for k, v in sorted(sample.labels.items()))
        labels = "{" + inner + "}"
    return f"{sample.name}{labels} {format_value(sample.value)}\n"


def prometheus_text(families: Iterable[Family]) -> str:
    """The families in Prometheus text format 0.0.4 (``text/plain; version=0.0.4``)."""
    out: list[str] = []
    for family in families:
        _check(family)
        name, kind = family.name, family.type
        if kind == "counter":
            name += "_total"
        elif kind == "info":
            name, kind = name + "_info", "gauge"
        help_text = _escape_help(family.doc, quotes=False)
        out += [f"# HELP {name} {help_text}\n", f"# TYPE {name} {kind}\n"]
        created = family.name + "_created"
        out += [_sample_line(s) for s in family.samples if s.name != created]
        created_lines = [_sample_line(s) for s in family.samples if s.name == created]
        if created_lines:
            out += [f"# HELP {created} {help_text}\n", f"# TYPE {created} gauge\n", *created_lines]
    return "".join(out)


def openmetrics_text(families: Iterable[Family]) -> str:
    """The families in OpenMetrics 1.0.0 (``application/openmetrics-text; version=1.0.0``)."""
    out: list[str] = []
    for family in families:
        _check(family)
        out += [f"# HELP {family.name} {_escape_help(family.doc, quotes=True)}\n",
                f"# TYPE {family.name} {family.type}\n"]
        out += [_sample_line(s) for s in family.samples]
    out.append("# EOF\n")
    return "".join(out)
