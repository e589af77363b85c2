"""Alert rules on vLLM's metrics: the book's rule file, its linter, and promtool.

* :data:`RULES_FILE` -- ``book/alerts/kvsim-preemption.rules.yml``, the rules
  chapter 4 ships (seed 003's two, the better ones it argues for, a page that
  fires within minutes of a storm, and guards against series that vanish).
* :func:`lint_promql` / :func:`lint_rules` / :func:`lint_dashboard` -- "lint my
  dashboard": :mod:`kvsim.observe.lint` parses each expression and checks it
  against the names, labels, ranges and bucket edges of a vLLM version.
* :func:`promtool` / :func:`run_promtool_test` / :func:`firing_times` -- run the
  real ``promtool`` (Debian's ``prometheus`` package) when it is installed;
  :func:`testable_rules` is a rule file without its annotations, whose templates
  need each alert's value, for ``alert_rule_test`` expectations on labels alone.

The ``vllm_`` trap (:data:`kvsim.observe.lint.CLIENT_TRAP`): prometheus_client 0.23
and later (measured on 0.23.1, 0.24.1 and 0.26.0; 0.22.1 does not) write the
OpenMetrics samples of a ``vllm:`` family as ``vllm_...`` under a ``# TYPE vllm:...``
line, while the text format keeps ``vllm:``. kvsim pins 0.21.1 for its own exporter.

Explained in chapter 4, *Detecting preemption*.
"""
from __future__ import annotations

import copy
import re
import shutil
import subprocess
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import numpy as np
import yaml

from kvsim.errors import KvsimError, check_float

from .lint import (
    Finding,
    PathOrText,
    RuleFile,
    RuleScalar,
    lint_dashboard,
    lint_promql,
    lint_rules,
    load_rule_file,
)
from .promtool_tests import promtool_test
from .series import scrape_times

if TYPE_CHECKING:
    from kvsim.engine.result import SimResult

__all__ = ["RULES_FILE", "SEED_RULES_FILE", "ALERTMANAGER_FILE", "Finding", "lint_promql",
           "lint_rules", "lint_dashboard", "promtool", "run_promtool_test", "testable_rules",
           "firing_times", "INSTALL_HINT", "AlertRule"]

#: The book's rule files, in the repository beside the package (``book/alerts/``);
#: an installed wheel has no such folder (they are the book's, not kvsim's).
_BOOK = Path(__file__).resolve().parents[2] / "book" / "alerts"
RULES_FILE = _BOOK / "kvsim-preemption.rules.yml"
SEED_RULES_FILE = _BOOK / "seed-003-original.rules.yml"
ALERTMANAGER_FILE = _BOOK / "alertmanager.yml"
INSTALL_HINT = ("promtool is not installed: on Debian or Ubuntu `sudo apt-get install "
                "prometheus` provides it (or download Prometheus from prometheus.io)")

#: One alerting rule, as :func:`rule_alerts` gives it (``for`` is a keyword, hence this form).
AlertRule = TypedDict("AlertRule", {"labels": "dict[str, RuleScalar]",
                                    "annotations": "dict[str, RuleScalar]", "expr": RuleScalar,
                                    "for": RuleScalar})


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


def rule_alerts(path_or_text: PathOrText) -> dict[str, AlertRule]:
    """Every alerting rule of a rule file (a path, or its text, checked as Prometheus loads
    it: :func:`kvsim.observe.lint.load_rule_file`): ``{alertname: {"labels": ...,
    "annotations": ..., "expr": ..., "for": ...}}``."""
    return _alerts_of(load_rule_file(path_or_text))


def _alerts_of(doc: RuleFile) -> dict[str, AlertRule]:
    out: dict[str, AlertRule] = {}
    for g in doc["groups"]:
        for r in g.get("rules") or []:
            if r.get("alert") is not None:
                out[str(r["alert"])] = {"labels": dict(r.get("labels") or {}),
                                        "annotations": dict(r.get("annotations") or {}),
                                        "expr": r["expr"], "for": r.get("for", "0s")}
    return out


def testable_rules(path_or_text: PathOrText) -> str:
    """The rule file's text without annotations: the input of :func:`alert_rule_tests`.

    promtool compares an alert's annotations after expanding their templates
    (``{{ $value | humanize }}``), which needs the value the expression has at that
    instant; tests that ask *whether* an alert fires, with which labels, run on this
    copy. The annotations themselves are tested on the real file.
    """
    return _without_annotations(load_rule_file(path_or_text))


def _without_annotations(doc: RuleFile) -> str:
    doc = copy.deepcopy(doc)
    for g in doc["groups"]:
        for r in g.get("rules") or []:
            r.pop("annotations", None)
    return yaml.safe_dump(doc, sort_keys=False, width=10**9)


def alert_rule_tests(rules_path: PathOrText, series_labels: Mapping[str, str],
                     firing: Mapping[float, Collection[str]],
                     alerts: list[str] | None = None) -> list[dict[str, object]]:
    """promtool ``alert_rule_test`` entries: at each eval time (seconds, the keys of
    ``firing``), every alert of the rule file (or of ``alerts``) is expected to
    fire (with the series' labels and its own labels) if it is named in
    ``firing[t]``, and expected silent otherwise. Run them on
    :func:`testable_rules` (no annotations are expected)."""
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
    tests: list[dict[str, object]] = []
    for t in sorted(firing):
        for name, r in rules.items():
            exp: list[dict[str, dict[str, object]]] = []
            if name in firing[t]:
                exp = [{"exp_labels": dict(series_labels, **r["labels"])}]
            tests.append({"eval_time": f"{int(round(t))}s", "alertname": name,
                          "exp_alerts": exp})
    return tests


_FAILED = re.compile(r"alertname:\s*([^,\s]+),\s*time:\s*([0-9hms.]+)")


_GO_DURATION = re.compile(r"([0-9.]+)(h|ms|m|s|us|\u00b5s|ns)")
_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "\u00b5s": 1e-6, "ns": 1e-9}


def _duration_s(text: str) -> float:
    """promtool's durations (Go's: ``26m40s``, ``1h2m``, ``2.85s``, ``850ms``) in seconds."""
    return sum(float(n) * _GO_UNITS[u] for n, u in _GO_DURATION.findall(text))


def firing_times(path_or_text: PathOrText, result: SimResult, *, every_s: float = 60.0, version: str = "v1",
                 interval_s: float = 15.0, speed: float = 1.0) -> dict[str, list[float]]:
    """When each alert of a rule file fires on a simulated run, as promtool evaluates it.

    Writes a ``promtool test rules`` file whose input is ``result``'s scraped
    series (:func:`kvsim.observe.promtool_tests.promtool_test`) and which
    expects *no* alert at every ``every_s`` seconds; each failure promtool
    reports is an alert firing at that time. Returns ``{alertname: [seconds, ...]}`` (an empty list:
    the alert never fired). Needs promtool (:data:`INSTALL_HINT` otherwise).

    ``speed``: the run as ``kvsim exporter --speed`` replays it, as Prometheus sees it:
    a scrape every ``interval_s`` simulated seconds arrives every ``interval_s / speed``
    wall seconds, and the rules are evaluated as often (for a file of
    :func:`kvsim.observe.rule_clock.rules_at_speed`). The times returned are still
    simulated seconds.
    """

    every_s = check_float("every_s", every_s, min=1.0, max=86_400.0)
    speed = check_float("speed", speed, min=1.0, max=1_000.0)
    if promtool() is None:
        raise KvsimError(INSTALL_HINT)
    doc = load_rule_file(path_or_text)
    names = list(_alerts_of(doc))
    if not names:
        raise KvsimError("the rule file has no alerting rule: expected at least one 'alert:'")
    end = float(scrape_times(result.simulated_s, interval_s, None)[-1])
    times = [float(t) for t in np.arange(every_s, end + 1e-9, every_s)]
    tests = [{"eval_time": f"{int(round(t))}s", "alertname": n, "exp_alerts": []}
             for t in times for n in names]
    test = promtool_test(result, rule_files=["rules.yml"], alert_tests=tests,
                         interval_s=interval_s, version=version,
                         extra_labels={"job": "vllm", "instance": "kvsim"})
    if speed != 1.0:
        # the same samples on the wall clock of a replay: every time divided by the speed
        spec = yaml.safe_load(test)
        wall = f"{round(1000 * interval_s / speed)}ms"
        spec["evaluation_interval"] = spec["tests"][0]["interval"] = wall
        for t in spec["tests"][0]["alert_rule_test"]:
            t["eval_time"] = f"{round(1000 * _duration_s(t['eval_time']) / speed)}ms"
        test = yaml.safe_dump(spec, sort_keys=False, width=10**9)
    ok, out = run_promtool_test(test, {"rules.yml": _without_annotations(doc)})
    fired: dict[str, list[float]] = {n: [] for n in names}
    if not ok:
        matches = _FAILED.findall(out)
        if not matches:
            raise KvsimError("promtool failed without naming an alert: " + out.splitlines()[-1])
        for name, when in matches:
            fired.setdefault(name, []).append(round(_duration_s(when) * speed, 3))
    return {n: sorted(v) for n, v in fired.items()}
