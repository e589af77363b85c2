"""``kvsim lint-rules``: the classic mistakes in alert rules, PromQL and dashboards for vLLM.

Exit 1 on a classic mistake (notes alone exit 0, or 1 with ``--strict``);
``--against SCENARIO`` also says when each alert fires on a scenario's scraped
series, and ``--at-speed`` rewrites a rule file for a fast replay.
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kvsim.errors import KvsimError

from .arguments import Subcommands, add_subcommand, metric_set
from .output import dump

if TYPE_CHECKING:         # imported when run: `kvsim --help` stays fast
    from kvsim.observe.lint import Finding

__all__ = ["add_parser", "run", "EXAMPLES"]

#: Real command lines, shown at the end of ``kvsim lint-rules --help`` (the rule file is the
#: book's, book/alerts/).
EXAMPLES = (
    "kvsim lint-rules book/alerts/kvsim-preemption.rules.yml --vllm-version v1-0.10",
    "kvsim lint-rules book/alerts/kvsim-preemption.rules.yml --against incident-day",
    "kvsim lint-rules --expr 'rate(vllm:num_preemptions_total[5m]) > 0'",
)


def add_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Register ``lint-rules`` and its flags."""
    parser = add_subcommand(subparsers, "lint-rules", examples=EXAMPLES,
                            help="find the classic mistakes in a Prometheus rule file or a "
                                 "PromQL expression for vLLM's metrics")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("file", nargs="?", default=None, help="a Prometheus rule file (YAML)")
    source.add_argument("--expr", default=None, help="one PromQL expression instead of a file")
    source.add_argument("--dashboard", metavar="JSON", default=None,
                        help="a Grafana dashboard (JSON): lint every Prometheus query of its "
                             "panels")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                        help="a dashboard template variable (default: the dashboard's current "
                             "value; $__rate_interval is 1m)")
    parser.add_argument("--vllm-version", dest="metrics_version", default="v1", metavar="V",
                        type=metric_set,
                        help="the vLLM metric names to check against: v1 (default), v1-0.10 or v0")
    parser.add_argument("--against", metavar="SCENARIO", default=None,
                        help="also run the file's alerts with promtool on this scenario's scraped "
                             "series and say when each fires (e.g. incident-day)")
    parser.add_argument("--at-speed", metavar="SPEED", default=None,
                        help="print the rule file with every window and `for` divided by SPEED, "
                             "for a replay at `kvsim exporter --speed SPEED` (chapter 4's Try it)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 on notes too (a deprecated name works today, not after an "
                             "upgrade)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run)
    return parser


def _dashboard_variables(items: list[str]) -> dict[str, str]:
    variables = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise KvsimError(f"--var {item!r} is malformed: expected NAME=VALUE such as "
                             "model_name=llama-2-7b")
        variables[key.lstrip("$")] = value
    return variables


def _findings(args: argparse.Namespace, variables: dict[str, str]) -> list[Finding]:
    from kvsim.observe.alerts import lint_dashboard, lint_promql, lint_rules
    if args.expr is not None:
        return lint_promql(args.expr, version=args.metrics_version)
    if args.dashboard is not None:
        return lint_dashboard(args.dashboard, version=args.metrics_version, variables=variables)
    return lint_rules(args.file, version=args.metrics_version)


def _firing_times(args: argparse.Namespace) -> dict[str, list[float]] | None:
    if args.against is None:
        return None
    if args.file is None:
        raise KvsimError("--against needs a rule file: expected FILE, not --expr or --dashboard")
    from kvsim.observe.alerts import firing_times
    from kvsim.runs.scenarios import run_scenario

    return firing_times(args.file, run_scenario(args.against), version=args.metrics_version)


def run(args: argparse.Namespace) -> str:
    """The findings (and the firing times), or the rule file rewritten for ``--at-speed``."""
    if args.var and args.dashboard is None:
        raise KvsimError("--var needs --dashboard: expected a Grafana dashboard to fill in")
    variables = _dashboard_variables(args.var)
    if args.at_speed is not None:
        if args.file is None or args.against is not None or args.json:
            raise KvsimError("--at-speed rewrites a rule file: expected FILE alone, without "
                             "--expr, --dashboard, --against or --json")
        from kvsim.observe.rule_clock import rules_at_speed
        return rules_at_speed(args.file, args.at_speed, source=args.file).rstrip("\n")
    findings = _findings(args, variables)
    errors = [f for f in findings if f.severity == "error" or args.strict]
    args.exit_status = 1 if errors else 0
    fired = _firing_times(args)
    if args.json:
        out = [dict(rule=f.rule, kind=f.kind, severity=f.severity, text=f.text, message=f.message)
               for f in findings]
        return dump(out if fired is None else {"findings": out, "firing_s": fired})
    lines = [("note: " if f.severity == "note" else "") + str(f) for f in findings] or [
        f"no findings (checked against vLLM {args.metrics_version}'s metrics)"]
    if fired is not None:
        lines.append(f"on scenario {args.against} (promtool, every minute):")
        for name, times in fired.items():
            span = (f"fires from {times[0] / 60:.0f} to {times[-1] / 60:.0f} min "
                    f"({len(times)} of the minutes)" if times else "never fires")
            lines.append(f"  {name}: {span}")
    return "\n".join(lines)
