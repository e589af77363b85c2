"""Reading a real server's metrics: a saved ``/metrics`` scrape, two of them, or a Prometheus export.

One job: turn what an operator can save from a running vLLM server into a
:class:`Window` -- how much every cumulative series (counters, histogram
buckets, ``_sum`` and ``_count``) grew over a stretch of the server's life,
the gauges at its end (and start), the ``*_info`` labels, and how many seconds
the stretch lasted when that is known. :mod:`kvsim.observe.twin` builds a
kvsim configuration from it.

Three sources:

* **one scrape** (:func:`read_scrape`, then :func:`since_start`): the text of
  ``GET /metrics``, Prometheus text format 0.0.4 or OpenMetrics, parsed by
  ``prometheus_client``'s own parsers (the library vLLM uses; never a regex).
  Its counters count from the process start, so the window is the server's
  whole life; its length is known only when the caller gives the uptime, or
  the samples carry timestamps beside ``process_start_time_seconds`` or the
  families' ``_created`` stamps.
* **two scrapes** (:func:`between`): the same server at two instants and the
  seconds between them; every cumulative series must not go down (a counter
  that does means the pair is in the wrong order or the server restarted).
* **a Prometheus export** (:func:`read_prometheus_json`): the JSON that
  ``/api/v1/query_range`` (a matrix: each series' increase over its points,
  counter resets counted as Prometheus' ``increase()`` does) or
  ``/api/v1/query`` (a vector: one instant, with its timestamp) returns.

The ``vllm_`` trap: prometheus_client 0.23 and later write the samples of
vLLM's ``vllm:`` families as ``vllm_...`` in OpenMetrics output
(:data:`kvsim.observe.lint.CLIENT_TRAP`); a reading renames them back and says
so in its notes, so a scrape taken either way gives the same window.

Bad input (not text, not exposition text, not JSON of a Prometheus answer, an
empty scrape, no vLLM family, counters that go down) is a
:class:`~kvsim.errors.KvsimError` with one line naming the file and what was
expected.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as _parse_openmetrics,
)
from prometheus_client.parser import text_string_to_metric_families as _parse_text

from kvsim.errors import KvsimError, check_float
from kvsim.files import parse_json, read_text_file

from .lint import CLIENT_TRAP

__all__ = ["Reading", "Window", "read_scrape", "read_scrape_text", "read_prometheus_json",
           "read_source", "since_start", "between", "Key", "Series", "Histogram",
           "CUMULATIVE_SUFFIXES"]

#: A series: its sample name and its labels, sorted.
Key = tuple[str, tuple[tuple[str, str], ...]]
#: Each series' value (or its increase over a window).
Series = dict[Key, float]


class Histogram(NamedTuple):
    """A histogram's growth over a window, summed over engines and models."""

    edges: list[float]          # ascending, ``inf`` last
    cumulative: list[float]     # the cumulative count at each edge
    observations: float         # the ``_count`` growth
    observed_sum: float         # the ``_sum`` growth

#: Sample-name endings of cumulative series (they only grow while the process lives).
CUMULATIVE_SUFFIXES = ("_total", "_bucket", "_count", "_sum")
#: The most a source file may hold (a scrape of a big server is a few MB).
MAX_BYTES = 64 * 2**20


def _key(name: str, labels: Mapping[str, object]) -> Key:
    return name, tuple(sorted((str(k), str(v)) for k, v in labels.items()))


@dataclass(frozen=True)
class Reading:
    """One instant of a server's series.

    ``values`` maps each series (:data:`Key`) to its value; ``types`` each
    family named in ``# TYPE`` lines to its type; ``at_unix_s`` is the instant
    when the source says (Prometheus' answers, sample timestamps), else None.
    """

    values: Series
    types: dict[str, str]
    where: str
    at_unix_s: float | None = None
    notes: tuple[str, ...] = ()

    def vllm_names(self) -> set[str]:
        """The distinct sample names of vLLM's series (``vllm:...``)."""
        return {name for name, _ in self.values if name.startswith("vllm:")}

    def start_unix_s(self) -> float | None:
        """When the process started: ``process_start_time_seconds``, else the earliest
        ``_created`` stamp of a vLLM family, else None."""
        starts = [v for (n, _), v in self.values.items() if n == "process_start_time_seconds"]
        if starts:
            return min(starts)
        created = [v for (n, _), v in self.values.items()
                   if n.startswith("vllm:") and n.endswith("_created")]
        return min(created) if created else None


@dataclass(frozen=True)
class Window:
    """A stretch of a server's life, as :mod:`kvsim.observe.twin` reads it.

    ``increases``: each cumulative series' growth over the window; ``end`` and
    ``start``: every series' value at the window's ends (``start`` is None for
    "since the process started", when every gauge began at zero); ``seconds``:
    the window's length, None when unknown; ``kind``: what it was read from.
    """

    increases: Series
    end: Series
    start: Series | None
    seconds: float | None
    kind: str
    where: str
    notes: tuple[str, ...] = field(default=())
    seconds_from: str = ""

    # -- reading it ---------------------------------------------------------------------------
    def has(self, name: str) -> bool:
        """True when the window holds a series of that sample name."""
        return any(n == name for n, _ in self.end)

    def total(self, name: str, **match: str) -> float | None:
        """The summed increase of the cumulative series ``name`` whose labels include
        ``match`` (over every engine and model), None when there is none."""
        vals = [v for (n, labels), v in self.increases.items()
                if n == name and all((k, m) in labels for k, m in match.items())]
        return float(sum(vals)) if vals else None

    def gauge(self, name: str, at: str = "end") -> float | None:
        """The summed value of the gauge ``name`` at the window's end (or start)."""
        side = self.end if at == "end" else (self.start or {})
        vals = [v for (n, _), v in side.items() if n == name]
        return float(sum(vals)) if vals else None

    def label_values(self, label: str) -> list[str]:
        """The distinct values of ``label`` on vLLM's series, sorted."""
        return sorted({v for (n, labels) in self.end if n.startswith("vllm:")
                       for k, v in labels if k == label})

    def info(self, name: str) -> list[dict[str, str]]:
        """The label sets of an info series (``vllm:cache_config_info``), one per engine."""
        return [dict(labels) for (n, labels), v in sorted(self.end.items()) if n == name]

    def histogram(self, family: str) -> Histogram | None:
        """``(edges, cumulative counts, count, sum)`` of a histogram's growth in the window,
        summed over engines and models (edges ascending, ``inf`` last); None without it."""
        per_le: dict[float, float] = {}
        for (n, labels), v in self.increases.items():
            if n == family + "_bucket":
                le = dict(labels).get("le")
                try:
                    edge = float(le) if le is not None else None
                except ValueError:
                    edge = None
                if edge is None:
                    continue
                per_le[edge] = per_le.get(edge, 0.0) + v
        count, total = self.total(family + "_count"), self.total(family + "_sum")
        if not per_le or count is None or total is None:
            return None
        edges = sorted(per_le)
        return Histogram(edges, [per_le[e] for e in edges], count, total)


# --- parsing -------------------------------------------------------------------------------

def _text_of(path: str | Path) -> tuple[str, str]:
    """A file's text and its name, or a one-line error: missing, too large, binary, not UTF-8."""
    text = read_text_file(path, what="scrape", max_bytes=MAX_BYTES,
                          expected="the text of a /metrics scrape or a Prometheus JSON export")
    return text, str(path)


def _normalised(name: str) -> str:
    return "vllm:" + name[len("vllm_"):] if name.startswith("vllm_") else name


def read_scrape_text(text: str, where: str = "the scrape") -> Reading:
    """One scrape's exposition text (0.0.4 or OpenMetrics) as a :class:`Reading`."""
    if not isinstance(text, str):
        raise KvsimError(f"{where}: {type(text).__name__} is not text: expected the text of "
                         "a /metrics scrape")
    if not text.strip():
        raise KvsimError(f"{where} is empty: expected the text of a vLLM server's /metrics")
    families: list[Metric] | None = None
    if any(line.strip() == "# EOF" for line in text.splitlines()[-3:]):
        try:
            # prometheus_client's OpenMetrics parser carries no annotations
            families = list(_parse_openmetrics(text))  # type: ignore[no-untyped-call]
        except ValueError:
            families = None      # the vllm_ trap breaks the strict parser; read it leniently
    if families is None:
        try:
            families = list(_parse_text(text))
        except ValueError as e:
            first = next((ln for ln in text.splitlines() if ln.strip()
                          and not ln.startswith("#")), text.strip().splitlines()[0])
            raise KvsimError(f"{where} is not Prometheus exposition text ({e}; first sample "
                             f"line {first[:60]!r}): expected the text of a vLLM server's "
                             "/metrics") from None
    values: Series = {}
    types: dict[str, str] = {}
    stamps: list[float] = []
    renamed = False
    for fam in families:
        if fam.type != "unknown":
            types[_normalised(fam.name)] = fam.type
        for s in fam.samples:
            name = _normalised(s.name)
            renamed = renamed or name != s.name
            if not math.isfinite(s.value) and not name.endswith("_bucket"):
                continue
            values[_key(name, s.labels)] = float(s.value)
            if s.timestamp is not None:
                stamps.append(float(s.timestamp))
    if not values:
        raise KvsimError(f"{where} holds no samples: expected the text of a vLLM server's "
                         "/metrics")
    notes = (f"read vllm_... samples as vllm:... ({CLIENT_TRAP})",) if renamed else ()
    return Reading(values, types, where, max(stamps) if stamps else None, notes)


def _series_key(result: Mapping[str, object], where: str) -> Key:
    metric = result.get("metric")
    if not isinstance(metric, dict) or "__name__" not in metric:
        raise KvsimError(f"{where}: a result has no metric.__name__: expected the JSON of "
                         "Prometheus' /api/v1/query or /api/v1/query_range")
    labels = {k: v for k, v in metric.items() if k != "__name__"}
    return _key(_normalised(str(metric["__name__"])), labels)


def _number(value: object) -> float:
    """A JSON scalar as a float; ValueError for anything else (a list, an object, null)."""
    if not isinstance(value, int | float | str):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def _points(pairs: object, where: str) -> list[tuple[float, float]]:
    """``[[time, "value"], ...]`` as floats, or a one-line error naming ``where``."""
    out: list[tuple[float, float]] = []
    try:
        if not isinstance(pairs, list | tuple):
            raise ValueError(f"{pairs!r} is not a list of pairs")
        for pair in pairs:
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise ValueError(f"{pair!r} is not a pair")
            out.append((_number(pair[0]), _number(pair[1])))
    except ValueError:
        raise KvsimError(f"{where}: a value is not a [time, \"number\"] pair: expected the "
                         "JSON of Prometheus' /api/v1/query or /api/v1/query_range") from None
    return out


def read_prometheus_json(obj: object, where: str = "the export") -> Window | Reading:
    """A Prometheus API answer (one, or a list of them, as JSON values): a matrix gives a
    :class:`Window` (each series' increase over its points), a vector a :class:`Reading`."""
    answers = obj if isinstance(obj, list) else [obj]
    series: list[tuple[Key, list[tuple[float, float]]]] = []
    kinds: set[str] = set()
    for a in answers:
        data = a.get("data") if isinstance(a, dict) else None
        if not isinstance(data, dict) or data.get("resultType") not in ("matrix", "vector"):
            raise KvsimError(f"{where} is JSON but not a Prometheus answer with a matrix or "
                             "vector result: expected the JSON of /api/v1/query_range or "
                             "/api/v1/query (status, data.resultType, data.result)")
        kinds.add(data["resultType"])
        for r in data.get("result") or []:
            if not isinstance(r, dict):
                raise KvsimError(f"{where}: a result is not an object: expected "
                                 "{\"metric\": ..., \"values\": ...}")
            pts = _points(r.get("values") if data["resultType"] == "matrix"
                          else [r.get("value") or ()], where)
            if pts:
                series.append((_series_key(r, where), pts))
    if not series:
        raise KvsimError(f"{where} is a Prometheus answer with no series: expected the "
                         "series of a vLLM server (query e.g. {__name__=~\"vllm:.*\"})")
    if kinds == {"vector"}:
        values = {key: pts[-1][1] for key, pts in series}
        at = max(pts[-1][0] for _, pts in series)
        return Reading(values, {}, where, at)
    if kinds != {"matrix"}:
        raise KvsimError(f"{where} mixes vector and matrix answers: expected one kind")
    increases: Series = {}
    end: Series = {}
    start: Series = {}
    resets = 0
    t0 = min(pts[0][0] for _, pts in series)
    t1 = max(pts[-1][0] for _, pts in series)
    for key, pts in series:
        pts.sort()
        start[key], end[key] = pts[0][1], pts[-1][1]
        if key[0].endswith(CUMULATIVE_SUFFIXES):
            grew = 0.0
            for (_, a), (_, b) in pairwise(pts):
                if b < a:             # a counter reset: Prometheus' increase() counts b itself
                    resets += 1
                    grew += b
                else:
                    grew += b - a
            increases[key] = grew
    if t1 <= t0:
        raise KvsimError(f"{where}: the range export spans no time (one point per series): "
                         "expected a /api/v1/query_range answer over a window, step below it")
    notes = [f"counted {resets} counter reset(s) as Prometheus' increase() does "
             "(the server restarted inside the window)"] if resets else []
    window = Window(increases, end, start, t1 - t0, "a Prometheus range export", where,
                    tuple(notes), seconds_from="the export's first and last timestamps")
    _need_vllm(window.end, where)
    return window


def read_source(path: str | Path) -> Window | Reading:
    """A file: a Prometheus JSON answer (a :class:`Window` for a matrix, a :class:`Reading` for a
    vector) or the text of one scrape (a :class:`Reading`); one-line errors otherwise."""
    text, where = _text_of(path)
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        obj = parse_json(text, where=f"{where} (it starts like JSON)",
                         expected="a Prometheus /api/v1 answer, or the text of a /metrics scrape")
        return read_prometheus_json(obj, where)
    return read_scrape_text(text, where)


def read_scrape(path: str | Path) -> Reading:
    """One saved scrape (exposition text, or a Prometheus instant-query answer)."""
    got = read_source(path)
    if isinstance(got, Window):
        raise KvsimError(f"{got.where} is a range export: expected one scrape here (pass it "
                         "alone to read the whole range)")
    return got


# --- windows -------------------------------------------------------------------------------

def _need_vllm(values: Series, where: str) -> None:
    names = sorted({n for n, _ in values})
    if not any(n.startswith("vllm:") for n in names):
        shown = ", ".join(names[:2]) or "none"
        raise KvsimError(f"{where} has no vLLM series (no vllm:... name among its {len(names)}"
                         f" names, e.g. {shown}): expected a vLLM server's /metrics")


def _cumulative(reading: Reading) -> Series:
    out: Series = {}
    for key, v in reading.values.items():
        name = key[0]
        if name.endswith("_created"):
            continue
        family = next((name[: -len(s)] for s in CUMULATIVE_SUFFIXES if name.endswith(s)), None)
        kind = reading.types.get(family) if family else None
        if family and kind in ("counter", "histogram", "summary", None, "unknown", "gaugehistogram"):
            out[key] = v
    return out


def since_start(reading: Reading, uptime_s: float | None = None) -> Window:
    """One scrape as the window from the process start: counters count from zero there.

    The length is ``uptime_s`` when given, else the reading's own instant less its process
    start (:meth:`Reading.start_unix_s`) when both are known, else None.
    """
    _need_vllm(reading.values, reading.where)
    seconds, whence = None, ""
    if uptime_s is not None:
        seconds = check_float("uptime_s", uptime_s, min=0, min_open=True, max=10**9)
        whence = "--uptime"
    else:
        start = reading.start_unix_s()
        if reading.at_unix_s is not None and start is not None and reading.at_unix_s > start:
            seconds = reading.at_unix_s - start
            whence = "the scrape's timestamp less the process start"
    return Window(_cumulative(reading), dict(reading.values), None, seconds, "one scrape",
                  reading.where, reading.notes, seconds_from=whence)


def between(first: Reading, second: Reading, seconds: float | None = None) -> Window:
    """Two scrapes of one server: every cumulative series' growth from ``first`` to ``second``.

    ``seconds`` (the time between them) defaults to the readings' own instants when both
    carry one. A series that goes down is a one-line error: the pair is in the wrong order,
    or the server restarted between them.
    """
    where = f"{first.where} -> {second.where}"
    _need_vllm(second.values, second.where)
    _need_vllm(first.values, first.where)
    whence = "--seconds"
    if seconds is None:
        if first.at_unix_s is None or second.at_unix_s is None:
            raise KvsimError(f"{where}: the scrapes carry no timestamps: expected the seconds "
                             "between them (--seconds S)")
        seconds, whence = second.at_unix_s - first.at_unix_s, "the scrapes' timestamps"
    seconds = check_float("seconds", seconds, min=0, min_open=True, max=10**9)
    a, b = _cumulative(first), _cumulative(second)
    increases: Series = {}
    for key, vb in b.items():
        va = a.get(key, 0.0)
        if vb < va - 1e-9 * max(1.0, abs(va)):
            raise KvsimError(f"{where}: {key[0]} goes down from {va:g} to {vb:g}: expected the "
                             "earlier scrape first and no server restart between them")
        increases[key] = vb - va
    notes = tuple(dict.fromkeys(first.notes + second.notes))
    return Window(increases, dict(second.values), dict(first.values), seconds, "two scrapes",
                  where, notes, seconds_from=whence)
