"""``kvsim plan``: the highest request rate each configuration holds under an SLO, and its cost.

The command line of :func:`kvsim.plan`: ``--grid`` and ``--set`` as in ``kvsim
sweep`` (engine options, ``model`` and ``gpu``), the SLO as ``--slo key=limit``,
prices as ``--price gpu=dollars``; it prints :func:`kvsim.runs.planner_report.format_plan`
(or JSON), with the cheapest configuration for ``--target`` requests per second.
"""
from __future__ import annotations

import argparse
from concurrent.futures import Executor
from dataclasses import asdict
from typing import TYPE_CHECKING

from kvsim.errors import KvsimError, check_float, check_int

from .arguments import Subcommands, add_quiet_flag, add_subcommand, checked, positive_float
from .names import canonical_options
from .output import dump, plain
from .progress import progress_wanted
from .values import SetValue, parse_grid, parse_seeds, parse_sets

if TYPE_CHECKING:
    from kvsim.runs.planner import Plan

__all__ = ["add_parser", "run", "EXAMPLES", "parse_limits"]

#: Real command lines, shown at the end of ``kvsim plan --help``.
EXAMPLES = (
    "kvsim plan --model llama-2-7b --grid gpu=a40-48gb,h100-80gb --slo ttft_p99_s=2 "
    "--slo preemptions_per_1k=10 --price a40-48gb=0.8 --price h100-80gb=2.5 --target 20",
    "kvsim plan --model llama-3.1-8b --gpu h100-80gb --grid gpu_memory_utilization=0.8,0.9 "
    "--slo itl_p99_s=0.1 --seeds 0-4 --workers 2",
    "kvsim plan --model llama-3.1-8b --gpu h100-80gb --trace trace.csv --slo ttft_p95_s=1 --json",
)


def parse_limits(items: list[str] | None, flag: str) -> dict[str, str]:
    """``["key=value", ...]`` as a dict of the raw values (kvsim.plan checks them by name)."""
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key or not value.strip():
            raise KvsimError(f"{flag} {item!r} is malformed: expected name=value such as "
                             f"{'ttft_p99_s=2' if flag == '--slo' else 'a40-48gb=0.8'}")
        if key in out:
            raise KvsimError(f"{flag} {key} is given twice: expected each once")
        out[key] = value.strip()
    return out


def add_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Register ``plan`` and its flags."""
    parser = add_subcommand(subparsers, "plan", examples=EXAMPLES,
                            help="the highest request rate each configuration holds under an SLO")
    parser.add_argument("--model", default=None, metavar="NAME", help="a model preset")
    parser.add_argument("--gpu", default=None, metavar="NAME", help="a GPU preset")
    parser.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                        help="an engine option (or model, gpu) and its values (repeatable)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a fixed engine option (repeatable)")
    parser.add_argument("--slo", action="append", default=[], metavar="KEY=LIMIT",
                        help="a limit: ttft_p99_s=2, itl_p99_s=0.1, preemptions_per_1k=10, "
                        "goodput_fraction=0.95, ... (repeatable; at least one)")
    parser.add_argument("--price", action="append", default=[], metavar="GPU=DOLLARS",
                        help="dollars per GPU-hour (repeatable; every GPU planned, or none)")
    parser.add_argument("--target", type=positive_float("target_rate_per_s"), default=None,
                        metavar="R", help="requests per second to carry: the cheapest replicas")
    parser.add_argument("--trace", default=None, metavar="CSV",
                        help="replay this trace, rescaled to each rate (else Poisson traffic)")
    parser.add_argument("--prompt", type=checked(lambda v: check_int("prompt", v, min=1,
                                                                     max=10**9)),
                        default=None, metavar="N", help="Poisson traffic: prompt tokens (850)")
    parser.add_argument("--output-mean", type=checked(lambda v: check_float(
        "output_mean", v, min=1, max=10**9)), default=None, metavar="N",
        help="Poisson traffic: mean answer tokens, geometric (250)")
    parser.add_argument("--seeds", type=checked(parse_seeds), default=[0, 1, 2], metavar="S",
                        help="seeds, each a search of its own: 0-4, 0,3,7 or 5 (default 0-2)")
    parser.add_argument("--duration", type=positive_float("duration_s"), default=120.0,
                        metavar="S", help="measured seconds per run (default 120)")
    parser.add_argument("--warmup", type=checked(lambda v: check_float("warmup_s", v, min=0)),
                        default=30.0, metavar="S", help="unmeasured seconds first (default 30)")
    parser.add_argument("--rel-tol", type=positive_float("rel_tol"), default=0.05, metavar="F",
                        help="the bracket's width over the rate (default 0.05)")
    parser.add_argument("--start-rate", type=positive_float("start_rate_per_s"), default=1.0,
                        metavar="R", help="the first rate tried, req/s (default 1)")
    parser.add_argument("--min-rate", type=positive_float("min_rate_per_s"), default=0.05,
                        metavar="R", help="below it nothing is sustainable (default 0.05)")
    parser.add_argument("--max-rate", type=positive_float("max_rate_per_s"), default=200.0,
                        metavar="R", help="the search stops there (default 200)")
    parser.add_argument("--workers", type=checked(lambda v: check_int("workers", v, min=1,
                                                                      max=512)),
                        default=1, metavar="N", help="processes to run the searches in (default 1)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_quiet_flag(parser)
    parser.set_defaults(run=run)
    return parser


def _plan(args: argparse.Namespace, fixed: dict[str, SetValue], grid: dict[str, list[SetValue]],
          slo: dict[str, str], prices: dict[str, str] | None, executor: Executor | None) -> Plan:
    """:func:`kvsim.plan` with the flags' settings, on ``executor`` (None: here)."""
    from kvsim.runs.planner import plan
    from kvsim.traffic.lengths import Geometric

    return plan(fixed, grid, slo=slo, seeds=args.seeds, trace=args.trace,
                prompt=args.prompt or 850, output=Geometric(args.output_mean or 250.0),
                duration_s=args.duration, warmup_s=args.warmup, rel_tol=args.rel_tol,
                start_rate_per_s=args.start_rate, min_rate_per_s=args.min_rate,
                max_rate_per_s=args.max_rate, prices=prices, executor=executor,
                progress=progress_wanted(args.quiet))


def run(args: argparse.Namespace) -> str:
    """The plan as text (:func:`~kvsim.runs.planner_report.format_plan`) or JSON."""
    from kvsim.runs.planner_report import format_plan

    grid = canonical_options(parse_grid(args.grid), "--grid")
    fixed = canonical_options(parse_sets(args.set), "--set")
    for flag in ("model", "gpu"):
        value = getattr(args, flag)
        if value is not None:
            if flag in fixed or flag in grid:
                raise KvsimError(f"--{flag} and {flag}= in --set or --grid are both given: "
                                 f"expected one")
            fixed[flag] = canonical_options({flag: value}, f"--{flag}")[flag]
    both = sorted(set(grid) & set(fixed))
    if both:
        raise KvsimError(f"--grid {both[0]} and --set {both[0]}=... are both given: expected one")
    slo = parse_limits(args.slo, "--slo")
    if not slo:
        raise KvsimError("--slo is missing: expected at least one limit such as --slo "
                         "ttft_p99_s=2")
    prices = parse_limits(args.price, "--price") or None
    if args.trace is not None and (args.prompt is not None or args.output_mean is not None):
        raise KvsimError("--trace and --prompt/--output-mean are both given: expected a trace "
                         "or the lengths of Poisson traffic")
    if args.workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(args.workers) as pool:
            result = _plan(args, fixed, grid, slo, prices, pool)
    else:
        result = _plan(args, fixed, grid, slo, prices, None)
    if not args.json:
        return format_plan(result, args.target)
    table = result.table()
    rows = [{k: plain(table[k][i]) for k in table.columns} for i in range(table.num_rows)]
    for row, config in zip(rows, result.configs, strict=True):
        row["reason"] = config.reason
    cheapest = result.cheapest(args.target) if args.target is not None else None
    return dump({"configs": rows, "slo": result.slo, "seeds": list(result.seeds),
                 "rel_tol": result.rel_tol, "pareto": result.pareto(),
                 "target_rate_per_s": args.target,
                 "cheapest": asdict(cheapest) if cheapest is not None else None,
                 "runs": result.runs, "runs_made": result.runs_made, "rounds": result.rounds})
