"""A rule file on a compressed clock: the same alerts for a replay faster than real time.

Explained in chapter 4, *Detecting preemption* (*Try it: a real Prometheus*).
``kvsim exporter --speed 20`` serves twenty simulated seconds per wall second,
and Prometheus's windows run on the wall clock: a ``[10m]`` range sees 200
simulated minutes, and the incident is over before a ``for: 5m`` has elapsed.
:func:`rules_at_speed` divides every duration the evaluation reads -- each
range ``[5m]``, subquery ``[30m:1m]``, ``offset``, ``for`` and
``keep_firing_for`` -- by the speed, so each rule sees the same simulated span
as on a real server. Scraped every second (``book/alerts/prometheus.yml``) the
replay is sampled as a 20 s scrape interval samples the server.

What the rules compare stays correct without a change when they count or
divide: ``increase`` over a compressed range is the same count, a share or a
quantile of two rates the same share. A ``rate`` or ``deriv`` compared with a
threshold other than zero is ``speed`` times too large, so such a rule is
refused (it would need its threshold scaled too). The annotations keep their
words ("for 10 minutes"): simulated minutes.

The text is rewritten in place (comments, order and quoting kept); the result
is loaded as Prometheus would load it (:func:`kvsim.observe.lint.load_rule_file`).
"""
from __future__ import annotations

import re

import promql_parser as pq

from kvsim.errors import KvsimError, check_float

from .lint import PathOrText, load_rule_file, read_rule_text

__all__ = ["rules_at_speed", "MAX_SPEED", "MIN_RANGE_MS", "parse_duration_ms",
           "format_duration_ms"]

#: The fastest replay a rule file is compressed for (the exporter's own ``--speed`` cap).
MAX_SPEED = 1_000
#: The shortest range a compressed rule may read: four of Prometheus's one-second scrapes
#: (a rate needs two samples; four leave room for a scrape that comes late).
MIN_RANGE_MS = 4_000

_UNITS_MS = {"y": 365 * 86_400_000, "w": 7 * 86_400_000, "d": 86_400_000, "h": 3_600_000,
             "m": 60_000, "s": 1_000, "ms": 1}
_PART = re.compile(r"([0-9]+)(ms|y|w|d|h|m|s)")
_DUR = r"(?:[0-9]+(?:ms|y|w|d|h|m|s))+"
#: ``[5m]``, ``[30m:1m]``, ``[30m:]``: a range or a subquery in an expression.
_RANGE = re.compile(rf"\[\s*({_DUR})\s*(?::\s*({_DUR})?\s*)?\]")
_OFFSET = re.compile(rf"\boffset\s+(-?)({_DUR})\b")
#: ``for: 10m`` and ``keep_firing_for: 5m`` as YAML keys, quoted or not.
_FOR = re.compile(rf"^(\s*(?:-\s+)?(?:for|keep_firing_for):\s*)(['\"]?)({_DUR}|0)\2(\s*(?:#.*)?)$",
                  re.M)
#: Functions whose value is per second: compared with a number, the number would need the speed.
_PER_SECOND = ("rate", "irate", "deriv")
_COMPARISONS = (">", "<", ">=", "<=", "==", "!=")


def _head(node: pq.Expr) -> str | None:
    """The function at the top of ``node`` once parentheses and aggregations are looked
    through (``sum by (x) (rate(...))`` is ``rate``), or None."""
    while isinstance(node, (pq.ParenExpr, pq.AggregateExpr)):
        node = node.expr
    return node.func.name if isinstance(node, pq.Call) else None


def _rate_against_threshold(node: pq.Expr) -> tuple[str, float] | None:
    """``(function, number)`` for the first comparison of a per-second function with a number
    other than 0 anywhere in ``node`` (None: there is none)."""
    if isinstance(node, pq.BinaryExpr):
        if str(node.op) in _COMPARISONS:
            for fn_side, number in ((node.lhs, node.rhs), (node.rhs, node.lhs)):
                head = _head(fn_side)
                if isinstance(number, pq.NumberLiteral) and number.val != 0 and \
                        head is not None and head in _PER_SECOND:
                    return head, number.val
        return _rate_against_threshold(node.lhs) or _rate_against_threshold(node.rhs)
    if isinstance(node, (pq.ParenExpr, pq.AggregateExpr)):
        return _rate_against_threshold(node.expr)
    if isinstance(node, pq.Call):
        return next(filter(None, map(_rate_against_threshold, node.args)), None)
    return None


def parse_duration_ms(text: str) -> int:
    """A Prometheus duration (``1h30m``, ``45s``, ``250ms``) in milliseconds."""
    if text == "0":
        return 0
    parts = _PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise KvsimError(f"duration={text!r} is not a Prometheus duration: expected one such "
                         f"as 5m or 1h30m (units ms, s, m, h, d, w, y)")
    return sum(int(n) * _UNITS_MS[u] for n, u in parts)


def format_duration_ms(ms: int) -> str:
    """Milliseconds as a Prometheus duration: ``6000`` is ``6s``, ``4500`` is ``4s500ms``."""
    if ms == 0:
        return "0s"
    out: list[str] = []
    for unit in ("h", "m", "s", "ms"):
        n, ms = divmod(ms, _UNITS_MS[unit])
        if n:
            out.append(f"{n}{unit}")
    return "".join(out)


def rules_at_speed(path_or_text: PathOrText, speed: float, *, source: str = "the rule file") -> str:
    """A Prometheus rule file (a path, or its text) with every evaluation duration divided by
    ``speed``; read as the linter reads one (a regular file of at most 4 MiB).

    A header comment says where the file comes from and for which replay. Refused
    in one line: a speed outside [1, :data:`MAX_SPEED`], a speed at which the
    file's shortest range would hold fewer than four one-second scrapes
    (:data:`MIN_RANGE_MS`; the message names that range and the fastest speed the
    file allows), a rule that compares a ``rate``/``deriv`` with a number other
    than zero.
    """
    speed = check_float("speed", speed, min=1, max=MAX_SPEED,
                        why="how many times faster than real time the exporter replays")
    text, _ = read_rule_text(path_or_text)
    doc = load_rule_file(text)                  # refuses what Prometheus would refuse
    for group in doc["groups"]:
        for rule in group.get("rules") or []:
            name = rule.get("alert") or rule.get("record")
            found = _rate_against_threshold(pq.parse(str(rule["expr"])))
            if found is not None:
                raise KvsimError(f"rule {name!r} compares {found[0]}() with {found[1]:g}: at "
                                 f"speed {speed:g} the rate reads {speed:g} times higher; "
                                 f"expected counts, shares or quantiles (increase, a ratio, "
                                 f"histogram_quantile) or a threshold of 0")

    code = "".join(line.partition("#")[0] for line in text.splitlines(keepends=True))
    ranges = [(parse_duration_ms(m.group(1)), m.group(1)) for m in _RANGE.finditer(code)]
    if ranges:
        shortest, shown = min(ranges)
        if shortest / speed < MIN_RANGE_MS:
            raise KvsimError(f"speed={speed:g} is too fast for this file: its shortest range "
                             f"[{shown}] would read {format_duration_ms(round(shortest / speed))},"
                             f" fewer than {MIN_RANGE_MS // 1000} one-second scrapes; expected a "
                             f"speed of at most {shortest / MIN_RANGE_MS:g}")

    def scaled(dur: str) -> str:
        return format_duration_ms(round(parse_duration_ms(dur) / speed))

    def in_expr(block: str) -> str:
        block = _RANGE.sub(lambda m: "[" + scaled(m.group(1))
                           + ("" if m.group(0).find(":") < 0 else
                              ":" + (scaled(m.group(2)) if m.group(2) else ""))
                           + "]", block)
        return _OFFSET.sub(lambda m: f"offset {m.group(1)}{scaled(m.group(2))}", block)

    # the ranges live in expressions: rewrite every line but comments (a '#' in PromQL is a
    # comment too, and the text keeps its own)
    lines = []
    for line in text.splitlines(keepends=True):
        code, hash_, comment = line.partition("#")
        lines.append(in_expr(code) + hash_ + comment)
    out = "".join(lines)
    out = _FOR.sub(lambda m: f"{m.group(1)}{m.group(2)}{scaled(m.group(3))}"
                             f"{m.group(2)}{m.group(4)}", out)
    header = (f"# GENERATED by `kvsim lint-rules {source} --at-speed {speed:g}`: do not edit.\n"
              f"# {source} with every range, subquery, offset and `for` divided by {speed:g},\n"
              f"# for a replay at `kvsim exporter --speed {speed:g}` scraped every second: each\n"
              f"# rule sees the simulated span it sees on a real server. The annotations' "
              f"minutes\n# are simulated minutes.\n")
    load_rule_file(out)                         # still a file Prometheus loads
    return header + out
