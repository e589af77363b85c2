"""Alert rules on vLLM's metrics: the book's rule file, a linter, and promtool.

* :data:`RULES_FILE` -- ``book/alerts/kvsim-preemption.rules.yml``, the rules
  chapter 4 ships (seed 003's two, and the better ones it argues for).
* :func:`lint_promql` / :func:`lint_rules` -- "lint my dashboard": catch the
  classic mistakes in a PromQL expression or a rule file, checked against the
  names, types and bucket edges of a vLLM version (:mod:`kvsim.observe.catalogue`):
  a counter queried without ``_total``; a name the version does not expose
  (the deprecated ``vllm:gpu_cache_usage_perc`` on V1); a histogram bucket
  edge that does not exist (``le="2"`` on TTFT, whose edges are 1.0 and 2.5);
  ``rate()`` of a gauge; a mean (``_sum / _count``) where the tail matters;
  ``histogram_quantile`` over buckets summed without ``le``.
* :func:`promtool` / :func:`run_promtool_test` -- run the real ``promtool``
  (Debian's ``prometheus`` package) when it is installed.

Explained in chapter 4, *Detecting preemption*.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kvsim.errors import KvsimError, check_choice, check_float

from .catalogue import VERSIONS, metric_defs
from .promtool_tests import promtool_test
from .series import scrape_times

__all__ = ["RULES_FILE", "SEED_RULES_FILE", "Finding", "lint_promql", "lint_rules", "promtool",
           "run_promtool_test", "INSTALL_HINT"]

#: The book's rule files, in the repository beside the package (``book/alerts/``);
#: an installed wheel has no such folder (they are the book's, not kvsim's).
_BOOK = Path(__file__).resolve().parents[2] / "book" / "alerts"
RULES_FILE = _BOOK / "kvsim-preemption.rules.yml"
SEED_RULES_FILE = _BOOK / "seed-003-original.rules.yml"
INSTALL_HINT = ("promtool is not installed: on Debian or Ubuntu `sudo apt-get install "
                "prometheus` provides it (or download Prometheus from prometheus.io)")

#: Names from other versions: what a V1 user should use instead.
_RENAMED = {
    "vllm:gpu_cache_usage_perc": "vllm:kv_cache_usage_perc",
    "vllm:time_per_output_token_seconds": "vllm:inter_token_latency_seconds",
    "vllm:gpu_prefix_cache_queries": "vllm:prefix_cache_queries",
    "vllm:gpu_prefix_cache_hits": "vllm:prefix_cache_hits",
    "vllm:gpu_prefix_cache_hit_rate": "rate(vllm:prefix_cache_hits_total) / "
                                      "rate(vllm:prefix_cache_queries_total)",
    "vllm:num_requests_swapped": "nothing (V1 has no swap)",
    "vllm:cpu_cache_usage_perc": "nothing (V1 has no swap)",
}
_NAME = re.compile(r"vllm:[A-Za-z0-9_:]+")
_RATE = re.compile(r"\b(rate|irate|increase|delta)\s*\(\s*(vllm:[A-Za-z0-9_:]+)")
_LE = re.compile(r"(vllm:[A-Za-z0-9_:]+)_bucket\s*\{([^}]*)\}")
_LE_VALUE = re.compile(r"""\ble\s*(=~|!=|!~|=)\s*"([^"]*)\"""")


@dataclass(frozen=True)
class Finding:
    """One mistake: ``kind`` (a short id), the offending text and what to write instead."""

    kind: str
    text: str
    message: str
    rule: str = ""

    def __str__(self) -> str:
        where = f"{self.rule}: " if self.rule else ""
        return f"{where}[{self.kind}] {self.message}"


def _catalogue(version: str):
    defs = {d.name: d for d in metric_defs(version, 8192)}
    scraped = {}
    for d in defs.values():
        for s in d.scraped_names:
            scraped[s] = d
    return defs, scraped


def _base(sample: str, defs) -> str | None:
    """The family a sample name belongs to (``..._bucket`` -> the histogram)."""
    if sample in defs:
        return sample
    for suffix in ("_total", "_created", "_bucket", "_count", "_sum", "_info"):
        if sample.endswith(suffix) and sample[: -len(suffix)] in defs:
            return sample[: -len(suffix)]
    return None


def lint_promql(expr: str, *, version: str = "v1", rule: str = "") -> list[Finding]:
    """The classic mistakes in one PromQL expression, for vLLM ``version``'s metrics."""
    if not isinstance(expr, str) or not expr.strip():
        raise KvsimError(f"expr={expr!r} is empty: expected a PromQL expression")
    version = check_choice("version", version, list(VERSIONS))
    defs, scraped = _catalogue(version)
    out: list[Finding] = []
    seen = set()

    def add(kind, text, message):
        if (kind, text) not in seen:
            seen.add((kind, text))
            out.append(Finding(kind, text, message, rule))

    for name in _NAME.findall(expr):
        if name in scraped:
            continue
        if name in defs and defs[name].kind == "counter":
            add("counter-without-total", name,
                f"{name} is a counter: Prometheus scrapes it as {name}_total; {name} alone "
                f"matches nothing")
        elif name in defs and defs[name].kind == "histogram":
            add("histogram-without-suffix", name,
                f"{name} is a histogram: query {name}_bucket (with histogram_quantile), "
                f"{name}_sum or {name}_count")
        elif _base(name, _RENAMED) or name in _RENAMED:
            old = name if name in _RENAMED else _base(name, _RENAMED)
            add("absent-name", name,
                f"{name} does not exist in vLLM {version}: it is the old name of "
                f"{_RENAMED[old]}")
        else:
            add("unknown-name", name, f"{name} is not a metric of vLLM {version}")
    for name in _NAME.findall(expr):
        base = _base(name, defs)
        d = defs.get(base) if base else None
        if d is not None and d.deprecated:
            add("deprecated-name", name,
                f"{name} is deprecated in vLLM {version}: use {d.deprecated} (newer servers "
                f"no longer expose it)")

    for fn, name in _RATE.findall(expr):
        base = _base(name, defs)
        if base and defs[base].kind == "gauge":
            add("rate-of-gauge", f"{fn}({name}",
                f"{fn}() of the gauge {name}: {fn} is for counters (it treats every drop as a "
                f"reset); use avg_over_time, max_over_time or deriv for a gauge")

    for name, selector in _LE.findall(expr):
        d = defs.get(name)
        if d is None or d.kind != "histogram":
            continue
        for op, value in _LE_VALUE.findall(selector):
            if op != "=":
                continue
            if value == "+Inf":
                continue
            try:
                x = float(value)
            except ValueError:
                add("bucket-edge", f'le="{value}"', f'le="{value}" is not a number')
                continue
            edges = [float(e) for e in d.buckets]
            if x not in edges:
                near = ", ".join(f"{e:g}" for e in edges if e / 4 <= x <= e * 4) or \
                       ", ".join(f"{e:g}" for e in edges[:6])
                add("bucket-edge", f'{name}_bucket{{le="{value}"}}',
                    f'{name} has no bucket edge {value} (its edges near it: {near}); a '
                    f'selector on a missing edge matches nothing, so the query is empty')
            else:
                from prometheus_client.utils import floatToGoString
                scraped_le = floatToGoString(x)
                if value != scraped_le:
                    add("bucket-edge-format", f'le="{value}"',
                        f'le="{value}": vLLM (prometheus_client) writes this edge as '
                        f'le="{scraped_le}", which Prometheus 2 stores as is (Prometheus 3 '
                        f'normalises it to "{x:g}"); le=~"{x:g}|{scraped_le}" matches both')

    # a mean of a latency histogram: X_sum / X_count with no histogram_quantile
    for d in defs.values():
        if d.kind == "histogram" and d.name.endswith("_seconds"):
            if f"{d.name}_sum" in expr and f"{d.name}_count" in expr:
                add("mean-latency", d.name,
                    f"{d.name}_sum / {d.name}_count is a mean: one stalled stream in a "
                    f"hundred leaves it flat; use histogram_quantile(0.99, sum by (le) "
                    f"(rate({d.name}_bucket[5m])))")
    # a fraction compared with a percentage: *_usage_perc runs from 0 to 1, despite its name
    for name in sorted({n for n in _NAME.findall(expr) if n.endswith("_perc")}):
        if re.search(r"\b100(\.0*)?\s*\*|\*\s*100\b", expr):
            continue                                   # scaled to percent on purpose
        for m in re.finditer(r"([<>]=?|==|!=)\s*(\d+(?:\.\d+)?)(?![\w.])", expr):
            if float(m.group(2)) > 1:
                add("gauge-range", f"{name} {m.group(0)}",
                    f"{name} is a fraction from 0 to 1 (despite _perc): `{m.group(0).strip()}` "
                    f"can never fire; write {float(m.group(2)) / 100:g}")
    if "histogram_quantile" in expr:
        for q in re.finditer(r"\bhistogram_quantile\s*\(", expr):
            inside = expr[q.end():_closing(expr, q.end() - 1)]   # its arguments only
            for m in re.finditer(r"\b(sum|avg|max|min|count)\s*\(", inside):
                after = inside[_closing(inside, m.end() - 1) + 1:]
                clause = re.match(r"\s*(by|without)\s*\(([^)]*)\)", after)
                if clause:
                    labels = [x.strip() for x in clause.group(2).split(",")]
                    if (clause.group(1) == "by") == ("le" in labels):
                        continue                   # by (le, ...), or without (...) keeping le
                add("quantile-without-le", f"{m.group(1)}(...)",
                    f"histogram_quantile needs the le label: `{m.group(1)}(...)` with no by "
                    f"clause drops every label; write {m.group(1)} by (le) (...)")
        for m in re.finditer(r"\bsum\s+by\s*\(([^)]*)\)", expr):
            labels = [s.strip() for s in m.group(1).split(",")]
            if "le" not in labels:
                add("quantile-without-le", m.group(0),
                    f"histogram_quantile needs the le label: `{m.group(0)}` drops it; "
                    f"write sum by (le, ...)")
        for m in re.finditer(r"\bsum\s+without\s*\(([^)]*)\)", expr):
            if "le" in [s.strip() for s in m.group(1).split(",")]:
                add("quantile-without-le", m.group(0),
                    f"histogram_quantile needs the le label: `{m.group(0)}` removes it")
    return out


def _closing(expr: str, open_at: int) -> int:
    """The index of the parenthesis that closes the one at ``open_at`` (the end if none)."""
    depth = 0
    for i in range(open_at, len(expr)):
        if expr[i] == "(":
            depth += 1
        elif expr[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return len(expr) - 1


def lint_rules(path_or_text, *, version: str = "v1") -> list[Finding]:
    """Lint every ``expr`` of a Prometheus rule file (a path, or the YAML text)."""
    import yaml

    text = path_or_text
    if isinstance(path_or_text, Path) or (isinstance(path_or_text, str)
                                          and "\n" not in path_or_text):
        p = Path(path_or_text)
        if not p.is_file():
            raise KvsimError(f"rule file {str(p)!r} does not exist: expected a path to a "
                             "Prometheus rule file (YAML)")
        text = p.read_text(encoding="utf-8")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KvsimError(f"rule file is not valid YAML ({' '.join(str(exc).split())[:120]}): "
                         "expected a Prometheus rule file") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("groups"), list):
        raise KvsimError("rule file has no 'groups' list: expected a Prometheus rule file "
                         "(groups: - name: ... rules: - alert: ... expr: ...)")
    out: list[Finding] = []
    for g in doc["groups"]:
        for r in (g or {}).get("rules") or []:
            expr = r.get("expr") if isinstance(r, dict) else None
            if not isinstance(expr, str):
                continue
            name = r.get("alert") or r.get("record") or "?"
            out += lint_promql(expr, version=version, rule=str(name))
    return out


def promtool() -> str | None:
    """The path of ``promtool``, or None when it is not installed."""
    return shutil.which("promtool")


def run_promtool_test(test_yaml: str, rule_files: dict[str, str] | None = None,
                      timeout_s: float = 60) -> tuple[bool, str]:
    """Run ``promtool test rules`` on ``test_yaml`` in a temporary folder.

    ``rule_files`` maps file names (as the test's ``rule_files`` list names
    them) to their text; absolute paths in the test need no entry. Returns
    (passed, promtool's output). Raises :class:`KvsimError` when promtool is
    not installed.
    """
    exe = promtool()
    if exe is None:
        raise KvsimError(INSTALL_HINT)
    with tempfile.TemporaryDirectory(prefix="kvsim-promtool-") as tmp:
        for name, text in (rule_files or {}).items():
            (Path(tmp) / name).write_text(text, encoding="utf-8")
        test = Path(tmp) / "test.yml"
        test.write_text(test_yaml, encoding="utf-8")
        proc = subprocess.run([exe, "test", "rules", str(test)], cwd=tmp, capture_output=True,
                              text=True, timeout=timeout_s)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()


def rule_alerts(path_or_text) -> dict[str, dict]:
    """Every alerting rule of a rule file: ``{alertname: {"labels": ..., "annotations": ...}}``."""
    import yaml

    text = path_or_text
    if isinstance(path_or_text, Path) or "\n" not in str(path_or_text):
        text = Path(path_or_text).read_text(encoding="utf-8")
    out = {}
    for g in yaml.safe_load(text)["groups"]:
        for r in g.get("rules") or []:
            if "alert" in r:
                out[r["alert"]] = {"labels": dict(r.get("labels") or {}),
                                   "annotations": dict(r.get("annotations") or {})}
    return out


def alert_rule_tests(rules_path, series_labels: dict, firing: dict,
                     alerts: list[str] | None = None) -> list[dict]:
    """promtool ``alert_rule_test`` entries: at each eval time (seconds, the keys of
    ``firing``), every alert of the rule file (or of ``alerts``) is expected to
    fire (with the series' labels, its own labels and annotations) if it is
    named in ``firing[t]``, and expected silent otherwise."""
    rules = rule_alerts(rules_path)
    if alerts is not None:
        missing = [a for a in alerts if a not in rules]
        if missing:
            raise KvsimError(f"alert {missing[0]!r} is not in the rule file: expected one of "
                             f"{', '.join(rules)}")
        rules = {a: rules[a] for a in alerts}
    unknown = sorted({a for names in firing.values() for a in names} - set(rules))
    if unknown:
        raise KvsimError(f"alert {unknown[0]!r} is not in the rule file: expected one of "
                         f"{', '.join(rules)}")
    tests = []
    for t in sorted(firing):
        for name, r in rules.items():
            exp = []
            if name in firing[t]:
                exp = [{"exp_labels": dict(series_labels, **r["labels"]),
                        "exp_annotations": r["annotations"]}]
            tests.append({"eval_time": f"{int(round(t))}s", "alertname": name,
                          "exp_alerts": exp})
    return tests


_FAILED = re.compile(r"alertname:\s*([^,\s]+),\s*time:\s*([0-9hms.]+)")


def _duration_s(text: str) -> float:
    """promtool's durations (``26m40s``, ``1h2m``, ``45s``) in seconds."""
    total, number = 0.0, ""
    for ch in text:
        if ch.isdigit() or ch == ".":
            number += ch
        else:
            total += float(number or 0) * {"h": 3600, "m": 60, "s": 1}[ch]
            number = ""
    return total


def firing_times(path_or_text, result, *, every_s: float = 60.0, version: str = "v1",
                 interval_s: float = 15.0) -> dict[str, list[float]]:
    """When each alert of a rule file fires on a simulated run, as promtool evaluates it.

    Writes a ``promtool test rules`` file whose input is ``result``'s scraped
    series (:func:`kvsim.observe.promtool_tests.promtool_test`) and which
    expects *no* alert at every ``every_s`` seconds; each failure promtool
    reports is an alert firing at that time. Returns ``{alertname: [seconds, ...]}`` (an empty list:
    the alert never fired). Needs promtool (:data:`INSTALL_HINT` otherwise).
    """

    every_s = check_float("every_s", every_s, min=1.0, max=86_400.0)
    if promtool() is None:
        raise KvsimError(INSTALL_HINT)
    text = path_or_text
    if isinstance(path_or_text, Path) or "\n" not in str(path_or_text):
        path = Path(path_or_text)
        if not path.is_file():
            raise KvsimError(f"rule file {str(path_or_text)!r} does not exist: expected a "
                             "Prometheus rule file (YAML)")
        text = path.read_text(encoding="utf-8")
    names = list(rule_alerts(text))
    if not names:
        raise KvsimError("the rule file has no alerting rule: expected at least one 'alert:'")
    end = float(scrape_times(result.simulated_s, interval_s, None)[-1])
    times = [float(t) for t in np.arange(every_s, end + 1e-9, every_s)]
    tests = [{"eval_time": f"{int(round(t))}s", "alertname": n, "exp_alerts": []}
             for t in times for n in names]
    test = promtool_test(result, rule_files=["rules.yml"], alert_tests=tests,
                         interval_s=interval_s, version=version,
                         extra_labels={"job": "vllm", "instance": "kvsim"})
    ok, out = run_promtool_test(test, {"rules.yml": text})
    fired: dict[str, list[float]] = {n: [] for n in names}
    if not ok:
        matches = _FAILED.findall(out)
        if not matches:
            raise KvsimError("promtool failed without naming an alert: " + out.splitlines()[-1])
        for name, when in matches:
            fired.setdefault(name, []).append(_duration_s(when))
    return {n: sorted(v) for n, v in fired.items()}
