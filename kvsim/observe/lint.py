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
import json
import re
from dataclasses import dataclass

import promql_parser as pq
import yaml
from prometheus_client.utils import floatToGoString

from kvsim.errors import KvsimError, check_choice, read_text_file

from .catalogue import VERSIONS, MetricDef, metric_defs

__all__ = ["Finding", "NOTE_KINDS", "lint_promql", "lint_rules", "lint_dashboard", "dashboard_expressions",
           "RENAMED", "CLIENT_TRAP"]

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
    defs: dict              # family name -> MetricDef
    scraped: dict           # sample name -> MetricDef
    labels: frozenset       # every label a vLLM family (of any version) can carry


_CACHE: dict[str, _Version] = {}


def _version(version: str) -> _Version:
    if version not in _CACHE:
        defs = {d.name: d for d in metric_defs(version, 8192)}
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

def _children(node) -> list:
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


def _walk(node):
    yield node
    for child in _children(node):
        yield from _walk(child)


def _op(node) -> str:
    return str(node.op)


def _selector_name(vs) -> str | None:
    if vs.name:
        return vs.name
    for m in vs.matchers.matchers:
        if m.name == "__name__" and m.op == pq.MatchOp.Equal:
            return m.value
    return None


def _matchers(vs) -> list:
    return [m for m in vs.matchers.matchers if m.name != "__name__"]


def _selectors(node) -> list:
    return [n for n in _walk(node) if isinstance(n, pq.VectorSelector)]


def _number(node) -> float | None:
    while isinstance(node, pq.ParenExpr):
        node = node.expr
    if isinstance(node, pq.NumberLiteral):
        return float(node.val)
    if isinstance(node, pq.UnaryExpr):
        inner = _number(node.expr)
        return None if inner is None else -inner
    return None


def _fraction_family(node, v: _Version) -> str | None:
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


def _keeps_le(agg) -> bool:
    if _op(agg) in _LABEL_KEEPING_AGGS:
        return True
    mod = agg.modifier
    if mod is None:
        return False
    if mod.type == pq.AggModifierType.By:
        return "le" in mod.labels
    return "le" not in mod.labels


def _agg_text(agg) -> str:
    mod = agg.modifier
    if mod is None:
        return f"{_op(agg)}(...)"
    how = "by" if mod.type == pq.AggModifierType.By else "without"
    return f"{_op(agg)} {how} ({', '.join(mod.labels)})"


# --- the checks --------------------------------------------------------------------------

def _check_name(name: str, v: _Version, add, under_absent: bool) -> MetricDef | None:
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


def _check_labels(name: str, d: MetricDef, vs, v: _Version, add) -> None:
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


def _check_buckets(name: str, d: MetricDef, vs, add) -> None:
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
        scraped_le = floatToGoString(x)
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
        raise KvsimError(f"expr={expr!r} is empty: expected a PromQL expression")
    version = check_choice("version", version, list(VERSIONS))
    v = _version(version)
    out: list[Finding] = []
    seen: set = set()

    def add(kind, text, message):
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
    return out


def _check_comparison(node, v: _Version, add) -> None:
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

def _read_text(path_or_text, what: str, expected: str) -> str:
    """The text of a file (or the text itself, when it has a newline)."""
    if isinstance(path_or_text, str) and "\n" in path_or_text:
        return path_or_text
    return read_text_file(path_or_text, what=what, expected=expected)


def rule_expressions(path_or_text) -> list[tuple[str, str]]:
    """``(rule name, expr)`` of every rule of a Prometheus rule file (a path, or its text)."""
    expected = "a Prometheus rule file (YAML)"
    text = _read_text(path_or_text, "rule file", expected)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KvsimError(f"rule file is not valid YAML ({' '.join(str(exc).split())[:120]}): "
                         f"expected {expected}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("groups"), list):
        raise KvsimError("rule file has no 'groups' list: expected a Prometheus rule file "
                         "(groups: - name: ... rules: - alert: ... expr: ...)")
    out = []
    for g in doc["groups"]:
        rules = g.get("rules") if isinstance(g, dict) else None
        for r in rules if isinstance(rules, list) else []:
            if not isinstance(r, dict):
                continue
            name = str(r.get("alert") or r.get("record") or "?")
            expr = r.get("expr")
            if isinstance(expr, (int, float)) and not isinstance(expr, bool):
                expr = str(expr)
            if not isinstance(expr, str) or not expr.strip():
                raise KvsimError(f"rule {name!r} has no expr: expected a PromQL expression")
            out.append((name, expr))
    return out


def lint_rules(path_or_text, *, version: str = "v1") -> list[Finding]:
    """Lint every ``expr`` of a Prometheus rule file (a path, or the YAML text)."""
    out: list[Finding] = []
    for name, expr in rule_expressions(path_or_text):
        out += lint_promql(expr, version=version, rule=name)
    return out


#: Grafana's built-in interval variables, as a duration (``$__rate_interval`` is four
#: scrape intervals at a 15 s scrape; pass ``variables=`` to set another).
_GRAFANA_INTERVALS = {"__rate_interval": "1m", "__interval": "15s", "__range": "1h"}
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)")


def dashboard_expressions(path_or_text, variables: dict | None = None) -> list[tuple[str, str]]:
    """``(panel title, expr)`` of every Prometheus target of a Grafana dashboard (JSON),
    with its template variables filled in: ``variables`` first, then each variable's
    current value in the dashboard, then Grafana's interval variables."""
    expected = "a Grafana dashboard (JSON)"
    text = _read_text(path_or_text, "dashboard", expected)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise KvsimError(f"dashboard is not valid JSON ({exc.msg} at line {exc.lineno}): "
                         f"expected {expected}") from None
    if isinstance(doc, dict) and isinstance(doc.get("dashboard"), dict):
        doc = doc["dashboard"]                         # the HTTP API's envelope
    if not isinstance(doc, dict) or not isinstance(doc.get("panels"), list):
        raise KvsimError(f"dashboard has no 'panels' list: expected {expected}")
    values = dict(_GRAFANA_INTERVALS)
    for var in (doc.get("templating") or {}).get("list") or []:
        current = (var.get("current") or {}).get("value") if isinstance(var, dict) else None
        if isinstance(current, list):
            current = current[0] if current else None
        if isinstance(current, str) and var.get("name"):
            values[var["name"]] = current
    values.update(variables or {})

    def fill(m):
        key = m.group(1) or m.group(2) or m.group(3)
        if key not in values:
            raise KvsimError(f"dashboard variable ${key} has no value: pass it as "
                             f"--var {key}=VALUE")
        return values[key]

    out = []
    panels = list(doc["panels"])
    while panels:
        p = panels.pop(0)
        if not isinstance(p, dict):
            continue
        panels += [q for q in p.get("panels") or [] if isinstance(q, dict)]   # rows
        for t in p.get("targets") or []:
            expr = t.get("expr") if isinstance(t, dict) else None
            if isinstance(expr, str) and expr.strip():
                out.append((str(p.get("title") or "?"), _VARIABLE.sub(fill, expr)))
    return out


def lint_dashboard(path_or_text, *, version: str = "v1",
                   variables: dict | None = None) -> list[Finding]:
    """Lint every Prometheus query of a Grafana dashboard (JSON); ``rule`` is the panel
    (a finding repeated by a panel's several queries is reported once)."""
    out: list[Finding] = []
    for title, expr in dashboard_expressions(path_or_text, variables):
        out += [f for f in lint_promql(expr, version=version, rule=title)
                if (f.rule, f.kind, f.text) not in {(g.rule, g.kind, g.text) for g in out}]
    return out
