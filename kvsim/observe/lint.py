"""A PromQL linter for vLLM's metrics: rule files, single expressions and Grafana dashboards.

One job: parse each expression with a real PromQL parser (``promql-parser``, the
Python binding of a Rust port of Prometheus's grammar) and check the syntax tree
against the families, sample names, labels, label values and bucket edges of a
vLLM version (:func:`kvsim.observe.catalogue.metric_defs`). Nothing here matches
PromQL with regular expressions: a name is a selector's name, a threshold a
number literal on one side of a comparison, a ``by`` clause the aggregation's
own modifier.

What it reports (:class:`Finding`, its ``kind``):

* ``unparsable`` -- the expression does not parse (the parser's reason);
* ``underscore-name`` -- ``vllm_...`` for ``vllm:...``: what prometheus_client
  0.23 and later write in OpenMetrics output (``kvsim.observe.alerts`` explains);
* ``counter-without-total``, ``histogram-without-suffix`` -- a family's
  registered name where Prometheus stores ``_total`` or ``_bucket``/``_sum``/``_count``;
* ``absent-name`` -- a name this version lacks that another version has (a
  rename, or a family too new or too old), with what to use instead;
* ``unknown-name`` -- a ``vllm:`` name no version has, with the nearest real one;
* ``deprecated-name`` -- exposed by this version, but marked for removal;
* ``label-value``, ``label-not-on-family`` -- a label matcher that can match nothing;
* ``rate-of-gauge``, ``bucket-edge``, ``bucket-edge-format``;
* ``gauge-range`` -- a 0-1 gauge compared with a percentage (``kv_cache_usage_perc > 90``);
* ``mean-latency`` -- an alert condition on a mean (``_sum / _count``) latency;
* ``quantile-without-le`` -- ``histogram_quantile`` over an aggregation that drops ``le``.

Bad input (not YAML, not JSON, not text, no ``groups``) raises
:class:`~kvsim.errors.KvsimError` with one line.

Explained in chapter 4, *Detecting preemption* (*Lint my dashboard*).
"""
from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict, cast

import promql_parser as pq
import yaml

from kvsim.errors import KvsimError, check_choice
from kvsim.files import parse_json, read_text_file

from .catalogue import VERSIONS, MetricDef, metric_defs
from .text_format import format_value

__all__ = ["Finding", "NOTE_KINDS", "lint_promql", "lint_rules", "lint_dashboard", "dashboard_expressions",
           "RENAMED", "CLIENT_TRAP", "read_rule_text", "RuleFile", "RuleGroup", "Rule", "RuleScalar"]

#: Names from other versions: what to use instead on a current V1 server.
RENAMED = {
    "vllm:gpu_cache_usage_perc": "vllm:kv_cache_usage_perc",
    "vllm:time_per_output_token_seconds": "vllm:inter_token_latency_seconds",
    "vllm:gpu_prefix_cache_queries": "vllm:prefix_cache_queries",
    "vllm:gpu_prefix_cache_hits": "vllm:prefix_cache_hits",
    "vllm:gpu_prefix_cache_hit_rate": "rate(vllm:prefix_cache_hits_total) / "
                                      "rate(vllm:prefix_cache_queries_total)",
    "vllm:num_requests_swapped": "nothing (V1 has no swap)",
    "vllm:cpu_cache_usage_perc": "nothing (V1 has no swap)",
}

#: Why a server's samples can be named ``vllm_...`` (measured: chapter 4's admonition).
CLIENT_TRAP = ("prometheus_client 0.23 and later write vLLM's samples as vllm_... in "
               "OpenMetrics output (under '# TYPE vllm:...' lines, an open upstream bug), so a "
               "Prometheus that negotiates OpenMetrics stores vllm_... while one scraping the "
               "text format (or a server on prometheus_client 0.22 or older) stores vllm:...; "
               "check a server with curl -H 'Accept: application/openmetrics-text; "
               "version=1.0.0' http://HOST:8000/metrics | grep '^vllm_'")

_SUFFIXES = ("_total", "_created", "_bucket", "_count", "_sum", "_info")
_COMPARISONS = {"==", "!=", ">", "<", ">=", "<="}
_COUNTER_FUNCTIONS = {"rate", "irate", "increase"}
#: Functions and aggregations whose result stays in the range of their input.
_RANGE_KEEPING_CALLS = {"avg_over_time", "max_over_time", "min_over_time", "last_over_time",
                        "quantile_over_time", "clamp", "clamp_min", "clamp_max", "abs", "round",
                        "sort", "sort_desc", "label_replace", "label_join", "timestamp"}
_RANGE_KEEPING_AGGS = {"avg", "max", "min", "quantile", "topk", "bottomk", "limitk",
                       "limit_ratio"}
#: Aggregations that keep every label of the series they return.
_LABEL_KEEPING_AGGS = {"topk", "bottomk", "limitk", "limit_ratio"}


@dataclass(frozen=True)
class Finding:
    """One mistake: ``kind`` (a short id), the offending text and what to write instead."""

    kind: str
    text: str
    message: str
    rule: str = ""

    @property
    def severity(self) -> str:
        """``"note"`` for what works today and breaks on a newer release (a deprecated
        name), ``"error"`` for a query that is wrong or matches nothing now."""
        return "note" if self.kind in NOTE_KINDS else "error"

    def __str__(self) -> str:
        where = f"{self.rule}: " if self.rule else ""
        return f"{where}[{self.kind}] {self.message}"


#: Kinds that are notes, not errors (``kvsim lint-rules`` exits 0 on notes alone).
NOTE_KINDS = frozenset({"deprecated-name"})


# --- the catalogue, as the linter needs it -----------------------------------------------

@dataclass(frozen=True)
class _Version:
    name: str
    defs: dict[str, MetricDef]      # family name -> MetricDef
    scraped: dict[str, MetricDef]   # sample name -> MetricDef
    labels: frozenset[str]          # every label a vLLM family (of any version) can carry


_CACHE: dict[str, _Version] = {}


def _version(version: str) -> _Version:
    if version not in _CACHE:
        defs = {d.name: d for d in metric_defs(version, 8192, host_tier=True)}
        scraped = {s: d for d in defs.values() for s in d.scraped_names}
        # every label some vLLM version puts on some family: a matcher on one of them that
        # this family lacks matches nothing (target labels -- job, instance, pod -- are not)
        labels = {"le"} | {x for o in VERSIONS.values() for x in o["labels"]}
        labels |= {d.label for o in VERSIONS for d in metric_defs(o, 8192) if d.label}
        _CACHE[version] = _Version(version, defs, scraped, frozenset(labels))
    return _CACHE[version]


def _family(sample: str, v: _Version) -> MetricDef | None:
    """The family a sample name belongs to (``..._bucket`` -> the histogram)."""
    if sample in v.scraped:
        return v.scraped[sample]
    if sample in v.defs:
        return v.defs[sample]
    for suffix in _SUFFIXES:
        if sample.endswith(suffix) and sample[: -len(suffix)] in v.defs:
            return v.defs[sample[: -len(suffix)]]
    return None


def _family_labels(d: MetricDef, sample: str, v: _Version) -> set[str]:
    out = set(VERSIONS[v.name]["labels"])
    if d.label:
        out.add(d.label)
    if d.kind == "histogram" and sample.endswith("_bucket"):
        out.add("le")
    return out


def _nearest(name: str, v: _Version) -> str:
    near = difflib.get_close_matches(name, list(v.scraped), n=1, cutoff=0.0)
    return near[0] if near else ""


# --- the syntax tree ---------------------------------------------------------------------

def _children(node: pq.Expr) -> list[pq.Expr]:
    if isinstance(node, pq.BinaryExpr):
        return [node.lhs, node.rhs]
    if isinstance(node, pq.AggregateExpr):
        return [x for x in (node.param, node.expr) if x is not None]
    if isinstance(node, pq.Call):
        return list(node.args)
    if isinstance(node, (pq.ParenExpr, pq.UnaryExpr, pq.SubqueryExpr)):
        return [node.expr]
    if isinstance(node, pq.MatrixSelector):
        return [node.vector_selector]
    return []


def _walk(node: pq.Expr) -> Iterator[pq.Expr]:
    """Every node under ``node`` (itself first), depth first, in source order (iterative:
    a long chain ``a + b + ...`` is as deep as it is long)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(_children(n)))


def _op(node: pq.AggregateExpr | pq.BinaryExpr) -> str:
    return str(node.op)


def _selector_name(vs: pq.VectorSelector) -> str | None:
    if vs.name:
        return vs.name
    for m in vs.matchers.matchers:
        if m.name == "__name__" and m.op == pq.MatchOp.Equal:
            return m.value
    return None


def _matchers(vs: pq.VectorSelector) -> list[pq.Matcher]:
    return [m for m in vs.matchers.matchers if m.name != "__name__"]


def _selectors(node: pq.Expr) -> list[pq.VectorSelector]:
    return [n for n in _walk(node) if isinstance(n, pq.VectorSelector)]


def _number(node: pq.Expr) -> float | None:
    while isinstance(node, pq.ParenExpr):
        node = node.expr
    if isinstance(node, pq.NumberLiteral):
        return float(node.val)
    if isinstance(node, pq.UnaryExpr):
        inner = _number(node.expr)
        return None if inner is None else -inner
    return None


def _fraction_family(node: pq.Expr, v: _Version) -> str | None:
    """The 0-1 gauge an expression still reads in its own range (``avg_over_time(g[5m])``,
    ``max(g)``, ``g and ...``), or None (``100 * g``, a rate, anything else)."""
    if isinstance(node, pq.ParenExpr):
        return _fraction_family(node.expr, v)
    if isinstance(node, pq.MatrixSelector):
        return _fraction_family(node.vector_selector, v)
    if isinstance(node, pq.VectorSelector):
        name = _selector_name(node) or ""
        d = _family(name, v)
        return name if d is not None and d.kind == "gauge" and d.name.endswith("_perc") else None
    if isinstance(node, pq.Call) and node.func.name in _RANGE_KEEPING_CALLS:
        args = [a for a in node.args if not isinstance(a, (pq.NumberLiteral, pq.StringLiteral))]
        return _fraction_family(args[0], v) if args else None
    if isinstance(node, pq.AggregateExpr) and _op(node) in _RANGE_KEEPING_AGGS:
        return _fraction_family(node.expr, v)
    if isinstance(node, pq.BinaryExpr) and (_op(node) in {"and", "or", "unless"} or (
            _op(node) in _COMPARISONS and not (node.modifier and node.modifier.return_bool))):
        return _fraction_family(node.lhs, v)
    return None


def _keeps_le(agg: pq.AggregateExpr) -> bool:
    if _op(agg) in _LABEL_KEEPING_AGGS:
        return True
    mod = agg.modifier
    if mod is None:
        return False
    if mod.type == pq.AggModifierType.By:
        return "le" in mod.labels
    return "le" not in mod.labels


def _agg_text(agg: pq.AggregateExpr) -> str:
    mod = agg.modifier
    if mod is None:
        return f"{_op(agg)}(...)"
    how = "by" if mod.type == pq.AggModifierType.By else "without"
    return f"{_op(agg)} {how} ({', '.join(mod.labels)})"


# --- the checks --------------------------------------------------------------------------

#: How a check reports a finding: ``add(kind, text, message)``.
_Report = Callable[[str, str, str], None]


def _check_name(name: str, v: _Version, add: _Report, under_absent: bool) -> MetricDef | None:
    """The family a selector reads, after reporting what is wrong with its name."""
    if name.startswith("vllm_"):
        meant = "vllm:" + name[len("vllm_"):]
        if _family(meant, v) is not None:
            add("underscore-name", name,
                f"{name} is {meant} with ':' written as '_': {CLIENT_TRAP}; vLLM registers "
                f"{meant} -- query that, and fix the scrape if the server shows vllm_ names")
            name = meant
        else:
            add("unknown-name", name,
                f"{name} is not a metric of vLLM {v.name} (vLLM's names start vllm:); the "
                f"nearest real name: {_nearest(meant, v)}")
            return None
    if not name.startswith("vllm:"):
        return None
    d = _family(name, v)
    if d is not None and name not in v.scraped:
        if d.kind == "counter" and name == d.name:
            add("counter-without-total", name,
                f"{name} is a counter: Prometheus scrapes it as {name}_total; {name} alone "
                f"matches nothing")
        elif d.kind == "histogram" and name == d.name:
            add("histogram-without-suffix", name,
                f"{name} is a histogram: query {name}_bucket (with histogram_quantile), "
                f"{name}_sum or {name}_count")
        else:
            add("unknown-name", name,
                f"{name} is not a sample vLLM {v.name} writes; its family {d.name} has "
                f"{', '.join(d.scraped_names)}")
        return None
    if d is None:
        base, suffix = name, ""
        for sfx in _SUFFIXES:
            if name.endswith(sfx):
                base, suffix = name[: -len(sfx)], sfx
                break
        others = [o for o in VERSIONS if o != v.name and _family(name, _version(o)) is not None]
        older = [f.name for f in v.defs.values() if f.deprecated == base]
        older += [old for old, new in RENAMED.items() if new == base and old in v.defs]
        instead = RENAMED.get(name) or ""
        if older:
            instead = older[0] + suffix
        elif not instead and base in RENAMED:
            instead = RENAMED[base] + (suffix if RENAMED[base].startswith("vllm:")
                                       and " " not in RENAMED[base] else "")
        if others or instead:
            where = f" (it is in {', '.join(others)})" if others else ""
            use = (f"use {instead}" if instead
                   else f"vLLM {v.name} has no equivalent: drop the rule there")
            fate = ("absent() of it is always true there" if under_absent
                    else "a rule or panel on it matches nothing there")
            add("absent-name", name,
                f"{name} does not exist in vLLM {v.name}{where}: {fate}; {use}")
        else:
            add("unknown-name", name,
                f"{name} is not a metric of vLLM {v.name}; the nearest real name: "
                f"{_nearest(name, v)}")
        return None
    if d.deprecated:
        add("deprecated-name", name,
            f"{name} is deprecated in vLLM {v.name}: use {d.deprecated} (newer servers no "
            f"longer expose it)")
    return d


def _check_labels(name: str, d: MetricDef, vs: pq.VectorSelector, v: _Version,
                  add: _Report) -> None:
    own = _family_labels(d, name, v)
    for m in _matchers(vs):
        if m.op != pq.MatchOp.Equal or m.value == "":
            continue
        if m.name == d.label and d.values and m.value not in d.values:
            add("label-value", f'{name}{{{m.name}="{m.value}"}}',
                f'{name}{{{m.name}="{m.value}"}} matches nothing: vLLM {v.name} writes '
                f'{m.name} as one of {", ".join(d.values)}')
        elif m.name in v.labels and m.name not in own:
            add("label-not-on-family", f'{name}{{{m.name}="{m.value}"}}',
                f'{name} has no {m.name} label in vLLM {v.name} (its labels: '
                f'{", ".join(sorted(own))}): {m.name}="{m.value}" matches nothing')


def _check_buckets(name: str, d: MetricDef, vs: pq.VectorSelector, add: _Report) -> None:
    if d.kind != "histogram" or not name.endswith("_bucket"):
        return
    edges = [float(e) for e in d.buckets]
    for m in _matchers(vs):
        if m.name != "le" or m.op != pq.MatchOp.Equal or m.value == "+Inf":
            continue
        try:
            x = float(m.value)
        except ValueError:
            add("bucket-edge", f'le="{m.value}"', f'le="{m.value}" is not a number')
            continue
        if x not in edges:
            near = ", ".join(f"{e:g}" for e in edges if e / 4 <= x <= e * 4) or \
                ", ".join(f"{e:g}" for e in edges[:6])
            add("bucket-edge", f'{name}{{le="{m.value}"}}',
                f'{d.name} has no bucket edge {m.value} (its edges near it: {near}); a '
                f'selector on a missing edge matches nothing, so the query is empty')
            continue
        scraped_le = format_value(x)
        if m.value != scraped_le:
            add("bucket-edge-format", f'le="{m.value}"',
                f'le="{m.value}": vLLM (prometheus_client) writes this edge as '
                f'le="{scraped_le}", which Prometheus 2 stores as is (Prometheus 3 normalises '
                f'it to "{x:g}"); le=~"{x:g}|{scraped_le}" matches both')


def lint_promql(expr: str, *, version: str = "v1", rule: str = "") -> list[Finding]:
    """The classic mistakes in one PromQL expression, for vLLM ``version``'s metrics.

    An expression that does not parse is one ``unparsable`` finding.
    """
    if not isinstance(expr, str) or not expr.strip():
        raise KvsimError(f"expr={_short(expr)} is empty: expected a PromQL expression")
    version = check_choice("version", version, list(VERSIONS))
    check_expression_size(expr, f"rule {rule!r}" if rule else "expr")
    v = _version(version)
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()

    def add(kind: str, text: str, message: str) -> None:
        if (kind, text) not in seen:
            seen.add((kind, text))
            out.append(Finding(kind, text, message, rule))

    try:
        tree = pq.parse(expr)
    except ValueError as exc:
        one = " ".join(expr.split())
        add("unparsable", one, f"the expression does not parse ({exc}): `{one[:80]}`")
        return out

    absent = {id(vs) for n in _walk(tree) if isinstance(n, pq.Call)
              and n.func.name in ("absent", "absent_over_time") for vs in _selectors(n)}
    families: dict[int, tuple[str, MetricDef]] = {}
    for vs in _selectors(tree):
        name = _selector_name(vs)
        if name is None:
            continue
        d = _check_name(name, v, add, id(vs) in absent)
        if d is None:
            continue
        if name.startswith("vllm_"):
            name = "vllm:" + name[len("vllm_"):]
        families[id(vs)] = (name, d)
        _check_labels(name, d, vs, v, add)
        _check_buckets(name, d, vs, add)
    _check_functions(tree, families, v, add)
    return out


def _check_functions(tree: pq.Expr, families: dict[int, tuple[str, MetricDef]], v: _Version,
                     add: _Report) -> None:
    """What each function and comparison does with the families its selectors read
    (``families``: selector id -> (sample name, family))."""
    for node in _walk(tree):
        if isinstance(node, pq.Call) and node.func.name in _COUNTER_FUNCTIONS:
            for vs in _selectors(node):
                name, d = families.get(id(vs), ("", None))
                if d is not None and d.kind in ("gauge", "info"):
                    add("rate-of-gauge", f"{node.func.name}({name}",
                        f"{node.func.name}() of the gauge {name}: {node.func.name} is for "
                        f"counters (it treats every drop as a reset); use avg_over_time, "
                        f"max_over_time or deriv for a gauge")
        if isinstance(node, pq.Call) and node.func.name == "histogram_quantile":
            for agg in _walk(node.args[1]):
                if isinstance(agg, pq.AggregateExpr) and not _keeps_le(agg):
                    text = _agg_text(agg)
                    add("quantile-without-le", text,
                        f"histogram_quantile needs the le label: `{text}` drops it; write "
                        f"{_op(agg)} by (le, ...) (...)")
        if isinstance(node, pq.BinaryExpr) and _op(node) in _COMPARISONS:
            _check_comparison(node, v, add)


def _check_comparison(node: pq.BinaryExpr, v: _Version, add: _Report) -> None:
    for side, other in ((node.lhs, node.rhs), (node.rhs, node.lhs)):
        limit = _number(other)
        gauge = _fraction_family(side, v)
        if gauge and limit is not None and limit > 1:
            text = f"{_op(node)} {limit:g}"
            add("gauge-range", f"{gauge} {text}",
                f"{gauge} is a fraction from 0 to 1 (despite _perc): `{text}` can never "
                f"fire; write {limit / 100:g}")
        for div in _walk(side):
            if not (isinstance(div, pq.BinaryExpr) and _op(div) == "/"):
                continue
            top = {_selector_name(s) for s in _selectors(div.lhs)}
            bottom = {_selector_name(s) for s in _selectors(div.rhs)}
            for d in v.defs.values():
                if (d.kind == "histogram" and d.name.endswith("_seconds")
                        and f"{d.name}_sum" in top and f"{d.name}_count" in bottom):
                    add("mean-latency", d.name,
                        f"{d.name}_sum / {d.name}_count is a mean: one stalled stream in a "
                        f"hundred leaves it flat; alert on histogram_quantile(0.99, sum by "
                        f"(le) (rate({d.name}_bucket[5m])))")


# --- files -------------------------------------------------------------------------------

#: The largest rule file or dashboard the linter reads: 4 MiB (a real one is kilobytes).
MAX_FILE_BYTES = 4 * 2**20
#: The most YAML nodes a rule file may hold once its aliases are expanded (a billion-laughs
#: document expands to billions from a few lines; Go's yaml.v3, Prometheus's parser, refuses
#: "excessive aliasing" too).
MAX_YAML_NODES = 100_000
#: The deepest nesting of a rule file's YAML (a real one nests five levels).
MAX_YAML_DEPTH = 64
#: The most rules one file may hold.
MAX_RULES = 10_000
#: The longest PromQL expression the linter parses, in characters (a long real alert is a
#: few hundred): the parser kvsim uses slows down quadratically and, past a few thousand
#: chained operators, crashes the process, so longer input is refused before parsing.
MAX_EXPR_CHARS = 16_384
#: The deepest nesting of parentheses, brackets and braces in one expression.
MAX_EXPR_DEPTH = 64
#: The most binary operators in one expression (``a + b + ...``: each one is a level of the
#: syntax tree).
MAX_EXPR_OPERATORS = 500

#: Prometheus 2.42's rule-file format (``rulefmt``): the fields it accepts, plus the two
#: group fields later releases added (``query_offset``, ``labels``).
_TOP_FIELDS = ("groups",)
_GROUP_FIELDS = ("name", "interval", "limit", "rules", "query_offset", "labels")
_RULE_FIELDS = ("record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations")
_DURATION = re.compile(r"^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?"
                       r"(([0-9]+)s)?(([0-9]+)ms)?$")
_METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_RULE_EXPECTED = "a Prometheus rule file (YAML: groups: - name: ... rules: - alert: ... expr: ...)"


#: A rule file or a dashboard: a path, or the text itself (text has a newline).
PathOrText = str | os.PathLike[str]
#: A value of a rule file as YAML reads it, once :func:`load_rule_file` has checked it is no
#: list, map or null: a string, a number, a boolean (or a date, which Prometheus refuses later).
RuleScalar = object

#: One rule, as :func:`load_rule_file` checked it (``for`` is a keyword, hence this form).
Rule = TypedDict("Rule", {
    "record": RuleScalar, "alert": RuleScalar, "expr": RuleScalar, "for": RuleScalar,
    "keep_firing_for": RuleScalar, "labels": "dict[str, RuleScalar] | None",
    "annotations": "dict[str, RuleScalar] | None"}, total=False)


class RuleGroup(TypedDict, total=False):
    """One group of rules, as :func:`load_rule_file` checked it."""

    name: RuleScalar
    interval: RuleScalar
    limit: int | None
    rules: list[Rule] | None
    query_offset: RuleScalar
    labels: dict[str, RuleScalar] | None


class RuleFile(TypedDict):
    """A rule file, as :func:`load_rule_file` checked it (a plain dict: it dumps back to YAML)."""

    groups: list[RuleGroup]


class _Limit(Exception):
    """A YAML document over one of the linter's caps."""


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, as strict as Go's yaml.v3 where Prometheus relies on it: a
    mapping key given twice is an error, and nesting is capped at :data:`MAX_YAML_DEPTH`."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise _Limit(f"is nested more than {MAX_YAML_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode,
                          deep: bool = False) -> dict[Hashable, object]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[object, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"mapping key {key!r} already defined at line "
                            f"{seen[key] + 1}", key_node.start_mark)
                    seen[key] = key_node.start_mark.line
                except TypeError:                  # an unhashable key: PyYAML says so itself
                    pass
        return super().construct_mapping(node, deep)


def _expanded_nodes(root: yaml.Node) -> int:
    """The nodes of a composed YAML graph with every alias expanded (counted, never built);
    a recursive alias or more than :data:`MAX_YAML_NODES` is a :class:`_Limit`."""
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    active: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            active.discard(key)
            kids = (node.value if isinstance(node, yaml.SequenceNode) else
                    [n for pair in node.value for n in pair]
                    if isinstance(node, yaml.MappingNode) else [])
            total = 1 + sum(size[id(k)] for k in kids)
            if total > MAX_YAML_NODES:
                raise _Limit(f"expands to more than {MAX_YAML_NODES:,} YAML nodes (aliases of "
                             f"aliases: a 'billion laughs')")
            size[key] = total
            continue
        if key in size:
            continue
        if key in active:
            raise _Limit("holds a recursive alias")
        active.add(key)
        stack.append((node, True))
        kids = (node.value if isinstance(node, yaml.SequenceNode) else
                [n for pair in node.value for n in pair]
                if isinstance(node, yaml.MappingNode) else [])
        stack += [(k, False) for k in kids if id(k) not in size]
    return size[id(root)]


def _load_yaml(text: str, where: str, expected: str) -> object:
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_nodes(node)
        return loader.construct_document(node)
    except _Limit as exc:
        raise KvsimError(f"{where} {exc}: expected {expected}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None)
        why = (f"{problem} at line {mark.line + 1} column {mark.column + 1}"
               if problem and mark is not None else " ".join(str(exc).split())[:160])
        raise KvsimError(f"{where} is not valid YAML ({why}): expected {expected}") from None
    except RecursionError:
        raise KvsimError(f"{where} is nested too deep: expected {expected}") from None
    finally:
        loader.dispose()


def _read_text(path_or_text: PathOrText, what: str, expected: str) -> tuple[str, str]:
    """The text of a file (or the text itself, when it has a newline) and how to name it."""
    if isinstance(path_or_text, str) and "\n" in path_or_text:
        return path_or_text, what
    text = read_text_file(path_or_text, what=what, expected=expected, max_bytes=MAX_FILE_BYTES)
    return text, f"{what} {os.fspath(path_or_text)!r}"


def read_rule_text(path_or_text: PathOrText) -> tuple[str, str]:
    """A rule file's text (a path, or the text itself) and how to name it, read as
    :func:`load_rule_file` reads it."""
    return _read_text(path_or_text, "rule file", _RULE_EXPECTED)


def _duration(value: object, where: str, field: str) -> None:
    """A Prometheus duration (``model.ParseDuration``: 1h30m, 5m, 0; no sign, no fraction)."""
    if isinstance(value, (dict, list)) or value is None or isinstance(value, bool):
        raise KvsimError(f"{where}: {field}={_short(value)} is not a duration: expected a "
                         f"Prometheus duration such as 5m or 1h30m")
    text = str(value)
    if text == "" or (text != "0" and not _DURATION.match(text)):
        raise KvsimError(f"{where}: {field}={text!r} is not a valid duration: expected a "
                         f"Prometheus duration such as 5m or 1h30m (units ms, s, m, h, d, w, y)")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _scalar(value: object) -> bool:
    return not isinstance(value, (dict, list)) and value is not None


def _label_map(value: object, where: str, field: str, *, template: bool) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise KvsimError(f"{where}: {field}={_short(value)} is not a map: expected {field} as "
                         f"name: value pairs")
    for k, v in value.items():
        if not isinstance(k, str) or not _LABEL_NAME.match(k):
            raise KvsimError(f"{where}: {field} has an invalid name {_short(k)}: expected "
                             f"names of letters, digits and _ (not starting with a digit)")
        if not _scalar(v):
            raise KvsimError(f"{where}: {field} {k}={_short(v)} is not a string: expected a "
                             f"string value")
        if template:
            text = str(v)
            depth = 0
            for m in re.finditer(r"\{\{|\}\}", text):
                depth += 1 if m.group() == "{{" else -1
                if depth < 0 or depth > 1:
                    break
            if depth != 0:
                raise KvsimError(f"{where}: {field} {k}={_short(text)} has an unclosed or "
                                 f"unopened template action ({{{{ ... }}}}): expected a Go "
                                 f"template, as Prometheus expands it")


def load_rule_file(path_or_text: PathOrText) -> RuleFile:
    """A Prometheus rule file (a path, or its text), checked as Prometheus loads one: a one-line
    :class:`KvsimError` for anything ``promtool check rules`` refuses (unknown or repeated
    fields, a group without a unique name, ``rules`` that is no list, a rule with both or
    neither of ``record`` and ``alert``, no ``expr`` or one that does not parse, an invalid
    recording-rule or label name, a bad duration, a field a recording rule cannot have, an
    unclosed template), and for a file over the linter's caps (:data:`MAX_FILE_BYTES`,
    :data:`MAX_YAML_NODES`, :data:`MAX_YAML_DEPTH`, :data:`MAX_RULES`). Returns the document."""
    text, where = _read_text(path_or_text, "rule file", _RULE_EXPECTED)
    doc = _load_yaml(text, where, _RULE_EXPECTED)
    if not isinstance(doc, dict) or "groups" not in doc:
        shown = " (it is empty)" if doc is None else (
            f" (it holds a YAML {type(doc).__name__})" if not isinstance(doc, dict) else "")
        raise KvsimError(f"{where} has no 'groups' list{shown}: expected {_RULE_EXPECTED}")
    extra = [k for k in doc if k not in _TOP_FIELDS]
    if extra:
        raise KvsimError(f"{where} has a field {_short(extra[0])} Prometheus does not know: "
                         f"expected only 'groups' at the top")
    groups = doc["groups"]
    if groups is None:
        groups = doc["groups"] = []
    if not isinstance(groups, list):
        raise KvsimError(f"{where}: groups={_short(groups)} is not a list: expected "
                         f"{_RULE_EXPECTED}")
    names: set[str] = set()
    count = 0
    for gi, g in enumerate(groups):
        at = _check_group(g, f"{where}, group {gi + 1}", where, names)
        rules = g.get("rules")
        if rules is None:
            continue
        if not isinstance(rules, list):
            raise KvsimError(f"{at}: rules={_short(rules)} is not a list: expected a list of "
                             f"rules (- alert: ... expr: ...)")
        for ri, r in enumerate(rules):
            count += 1
            if count > MAX_RULES:
                raise KvsimError(f"{where} has more than {MAX_RULES:,} rules: expected at most "
                                 f"{MAX_RULES:,}")
            _check_rule(r, f"{at}, rule {ri + 1}")
    # every field checked above, as the types name them
    return cast(RuleFile, doc)


def _check_group(g: object, at: str, where: str, names: set[str]) -> str:
    """Check a group's own fields (not its rules) and add its name to ``names``; returns
    how to name the group in a message."""
    g = _known_fields(g, at, "a group (name: ..., rules: [...])", _GROUP_FIELDS)
    name = g.get("name")
    if not _scalar(name) or str(name) == "":
        raise KvsimError(f"{at} has no name: expected a non-empty, unique group name")
    name = str(name)
    if name in names:
        raise KvsimError(f"{where}: group name {name!r} is repeated: expected each group "
                         f"name once in a file")
    names.add(name)
    at = f"{where}, group {name!r}"
    for field in ("interval", "query_offset"):
        if g.get(field) is not None:
            _duration(g[field], at, field)
    if "limit" in g and g["limit"] is not None and (
            isinstance(g["limit"], bool) or not isinstance(g["limit"], int)):
        raise KvsimError(f"{at}: limit={_short(g['limit'])} is not an integer: expected "
                         f"an integer")
    _label_map(g.get("labels"), at, "labels", template=False)
    return at


def _known_fields(value: object, at: str, expected: str,
                  fields: Sequence[str]) -> dict[str, object]:
    """``value`` as a mapping whose every field Prometheus knows (``fields``); a one-line error
    names what ``at`` is instead, or its first unknown field."""
    if not isinstance(value, dict):
        raise KvsimError(f"{at} is a {type(value).__name__}: expected {expected}")
    extra = [k for k in value if k not in fields]
    if extra:
        raise KvsimError(f"{at} has a field {_short(extra[0])} Prometheus does not know: "
                         f"expected {', '.join(fields)}")
    return value


def _check_rule(r: object, at: str) -> None:
    r = _known_fields(r, at, "a rule (alert: or record:, expr: ...)", _RULE_FIELDS)
    record, alert = r.get("record"), r.get("alert")
    has_record = _scalar(record) and str(record) != ""
    has_alert = _scalar(alert) and str(alert) != ""
    if has_record == has_alert:
        raise KvsimError(f"{at}: {'both' if has_record else 'neither'} of 'record' and 'alert' "
                         f"{'are' if has_record else 'is'} set: expected exactly one")
    if (record is not None and not _scalar(record)) or (alert is not None and not _scalar(alert)):
        raise KvsimError(f"{at}: its name is not a string: expected record: or alert: NAME")
    name = str(record if has_record else alert)
    at = f"{at} ({name})"
    if has_record and not _METRIC_NAME.match(name):
        raise KvsimError(f"{at}: {name!r} is not a valid recording rule name: expected a metric "
                         f"name (letters, digits, _ and :)")
    expr = r.get("expr")
    if not _scalar(expr) or str(expr).strip() == "" or isinstance(expr, bool):
        raise KvsimError(f"{at} has no expr: expected a PromQL expression")
    check_expression_size(str(expr), at)
    try:
        pq.parse(str(expr))
    except ValueError as exc:
        one = " ".join(str(expr).split())
        raise KvsimError(f"{at}: the expression does not parse ({' '.join(str(exc).split())}): "
                         f"`{one[:80]}`") from None
    for field in ("for", "keep_firing_for"):
        if field in r:
            if has_record:
                raise KvsimError(f"{at}: a recording rule has no '{field}': expected it only on "
                                 f"alerting rules")
            _duration(r[field], at, field)
    if has_record and "annotations" in r:
        raise KvsimError(f"{at}: a recording rule has no annotations: expected them only on "
                         f"alerting rules")
    _label_map(r.get("labels"), at, "labels", template=True)
    _label_map(r.get("annotations"), at, "annotations", template=True)


def check_expression_size(expr: str, where: str = "expr") -> None:
    """Refuse, in one line, an expression over the caps the parser is safe within:
    :data:`MAX_EXPR_CHARS` characters, :data:`MAX_EXPR_DEPTH` levels of brackets,
    :data:`MAX_EXPR_OPERATORS` binary operators (strings and label matchers not counted)."""
    if len(expr) > MAX_EXPR_CHARS:
        raise KvsimError(f"{where}: the expression is {len(expr):,} characters: expected at "
                         f"most {MAX_EXPR_CHARS:,}")
    depth = deepest = ops = 0
    braces = 0
    for m in _EXPR_TOKENS.finditer(expr):
        tok = m.group()
        if tok[0] in "\"'`":
            continue
        if tok in "([{":
            depth += 1
            deepest = max(deepest, depth)
            braces += tok == "{"
        elif tok in ")]}":
            depth -= 1
            braces -= tok == "}"
        elif not braces:
            ops += 1
    if deepest > MAX_EXPR_DEPTH:
        raise KvsimError(f"{where}: the expression nests brackets more than {MAX_EXPR_DEPTH} "
                         f"levels deep: expected at most {MAX_EXPR_DEPTH}")
    if ops > MAX_EXPR_OPERATORS:
        raise KvsimError(f"{where}: the expression has {ops:,} binary operators: expected at "
                         f"most {MAX_EXPR_OPERATORS}")


_EXPR_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`|[()\[\]{}]'
                          r"|==|!=|>=|<=|[-+*/%^<>]|\b(?:and|or|unless|atan2)\b")


def rule_expressions(path_or_text: PathOrText) -> list[tuple[str, str]]:
    """``(rule name, expr)`` of every rule of a Prometheus rule file (a path, or its text),
    after :func:`load_rule_file` has checked it as Prometheus would."""
    doc = load_rule_file(path_or_text)
    out: list[tuple[str, str]] = []
    for g in doc["groups"]:
        for r in g.get("rules") or []:
            name = str(r.get("alert") or r.get("record"))
            out.append((name, str(r["expr"])))
    return out


def lint_rules(path_or_text: PathOrText, *, version: str = "v1") -> list[Finding]:
    """Lint every ``expr`` of a Prometheus rule file (a path, or the YAML text).

    The file is first checked as Prometheus loads one (:func:`load_rule_file`): what
    ``promtool check rules`` refuses is a one-line :class:`KvsimError`, before any
    vLLM-specific finding. An alerting rule whose ``expr`` is a bare number (``expr: 5``,
    which promtool accepts) is a ``constant-expr`` finding: it fires on every evaluation.
    """
    version = check_choice("version", version, list(VERSIONS))
    doc = load_rule_file(path_or_text)
    out: list[Finding] = []
    for g in doc["groups"]:
        for r in g.get("rules") or []:
            name, expr = str(r.get("alert") or r.get("record")), str(r["expr"])
            if r.get("alert") is not None and _number(pq.parse(expr)) is not None:
                out.append(Finding("constant-expr", expr,
                                   f"the alert's expression is the number {expr}, not a query: "
                                   f"it fires on every evaluation whatever the server does (a "
                                   f"deliberate always-firing alert is written vector(1))",
                                   name))
            out += lint_promql(expr, version=version, rule=name)
    return out


#: Grafana's built-in interval variables, as a duration (``$__rate_interval`` is four
#: scrape intervals at a 15 s scrape; pass ``variables=`` to set another).
_GRAFANA_INTERVALS = {"__rate_interval": "1m", "__interval": "15s", "__range": "1h"}
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)")


def dashboard_expressions(path_or_text: PathOrText,
                          variables: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """``(panel title, expr)`` of every Prometheus target of a Grafana dashboard (JSON),
    with its template variables filled in: ``variables`` first, then each variable's
    current value in the dashboard (``All``: its ``allValue``, else ``.*``), then Grafana's
    interval variables.

    A dashboard Grafana could not load is refused in one line: not JSON, nested more than
    :data:`~kvsim.files.MAX_JSON_DEPTH` levels, ``panels`` or a panel's ``targets`` that
    is no list, a panel or target that is no object, an ``expr`` that is no string."""
    expected = "a Grafana dashboard (JSON)"
    text, where = _read_text(path_or_text, "dashboard", expected)
    doc = parse_json(text, where=where, expected=expected)
    if isinstance(doc, dict) and isinstance(doc.get("dashboard"), dict):
        doc = doc["dashboard"]                         # the HTTP API's envelope
    if not isinstance(doc, dict) or not isinstance(doc.get("panels"), list):
        raise KvsimError(f"{where} has no 'panels' list: expected {expected}")
    values = _dashboard_variables(doc)
    values.update(variables or {})

    def fill(m: re.Match[str]) -> str:
        key = m.group(1) or m.group(2) or m.group(3)
        if key not in values:
            raise KvsimError(f"dashboard variable ${key} has no value: pass it as "
                             f"--var {key}=VALUE")
        return values[key]

    return _panel_queries(doc["panels"], where, fill)


def _dashboard_variables(doc: dict[str, object]) -> dict[str, str]:
    """Grafana's interval variables, then each template variable's current value in the
    dashboard (``All``: its ``allValue``, else ``.*``)."""
    values = dict(_GRAFANA_INTERVALS)
    templating = doc.get("templating")
    for var in (templating.get("list") if isinstance(templating, dict) else None) or []:
        current = var.get("current") if isinstance(var, dict) else None
        current = current.get("value") if isinstance(current, dict) else None
        if isinstance(current, list):
            current = current[0] if current else None
        if current == "$__all":
            # "All" selected: Grafana sends the variable's allValue (else every option, which
            # a file does not list: any value, as the regex .* reads)
            all_value = var.get("allValue")
            current = all_value if isinstance(all_value, str) and all_value else ".*"
        if isinstance(current, str) and isinstance(var.get("name"), str) and var["name"]:
            values[var["name"]] = current
    return values


def _panel_queries(top: list[object], where: str,
                   fill: Callable[[re.Match[str]], str]) -> list[tuple[str, str]]:
    """``(panel title, expr)`` of every non-blank Prometheus query of the panels (rows'
    panels after the row's own), each variable replaced by ``fill``, in panel order."""
    out: list[tuple[str, str]] = []
    panels = [(f"panels[{i}]", p) for i, p in enumerate(top)]
    while panels:
        at, p = panels.pop(0)
        if not isinstance(p, dict):
            raise KvsimError(f"{where}: {at} is a {type(p).__name__}: expected a panel object")
        inner = p.get("panels")
        if inner is not None:
            if not isinstance(inner, list):
                raise KvsimError(f"{where}: {at}.panels={_short(inner)} is not a list: "
                                 f"expected the row's panels")
            panels += [(f"{at}.panels[{i}]", q) for i, q in enumerate(inner)]   # rows
        targets = p.get("targets")
        if targets is None:
            continue
        if not isinstance(targets, list):
            raise KvsimError(f"{where}: {at}.targets={_short(targets)} is not a list: "
                             f"expected the panel's queries")
        title = p.get("title")
        title = str(title) if _scalar(title) and str(title) else "?"
        for i, t in enumerate(targets):
            if not isinstance(t, dict):
                raise KvsimError(f"{where}: {at}.targets[{i}] is a {type(t).__name__}: "
                                 f"expected a query object")
            expr = t.get("expr")
            if expr is None:
                continue
            if not isinstance(expr, str):
                raise KvsimError(f"{where}: panel {title!r} ({at}.targets[{i}]) has "
                                 f"expr={_short(expr)}, a {type(expr).__name__}: expected a "
                                 f"PromQL expression as a string")
            if expr.strip():
                out.append((title, _VARIABLE.sub(fill, expr)))
    return out


def lint_dashboard(path_or_text: PathOrText, *, version: str = "v1",
                   variables: Mapping[str, str] | None = None) -> list[Finding]:
    """Lint every Prometheus query of a Grafana dashboard (JSON); ``rule`` is the panel
    (a finding repeated by a panel's several queries is reported once)."""
    out: list[Finding] = []
    for title, expr in dashboard_expressions(path_or_text, variables):
        out += [f for f in lint_promql(expr, version=version, rule=title)
                if (f.rule, f.kind, f.text) not in {(g.rule, g.kind, g.text) for g in out}]
    return out
