"""``kvsim sweep``: a scenario over a grid of settings and seeds, one row per run."""
from __future__ import annotations

import argparse

from kvsim.errors import KvsimError, check_int

from .arguments import Subcommands, add_quiet_flag, add_subcommand, checked
from .names import canonical_options
from .output import dump, format_value, plain
from .progress import progress_wanted
from .values import parse_grid, parse_seeds, parse_sets

__all__ = ["add_parser", "run", "TEXT_COLUMNS", "EXAMPLES"]

#: Real command lines, shown at the end of ``kvsim sweep --help``.
EXAMPLES = (
    "kvsim sweep --scenario belgavi --grid output_mean=250,600 --seeds 0-4 --workers 2",
    "kvsim sweep --scenario mission-1-storm --grid gpu_memory_utilization=0.6,0.7,0.8 --csv",
    "kvsim sweep --scenario load-test-120 --grid max_num_seqs=96,104 --seeds 0-2 --quiet",
)

#: The columns `kvsim sweep` prints as text (all of them with --csv or --json).
TEXT_COLUMNS = ("preemptions_per_1k", "mean_running", "ttft_p95_s", "itl_p99_s",
                 "share_paused_over_1s", "goodput_tok_s")


def add_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Register ``sweep`` and its flags."""
    parser = add_subcommand(subparsers, "sweep", examples=EXAMPLES, rules=True,
                            help="run a scenario over a grid of settings and seeds")
    parser.add_argument("--scenario", required=True, metavar="NAME", help="a scenario")
    parser.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                        help="a scenario parameter or engine option and its values (repeatable)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a fixed scenario parameter or engine option (repeatable)")
    parser.add_argument("--seeds", type=checked(parse_seeds), default=None, metavar="S",
                        help="seeds: 0-4, 0,3,7 or 5 (default: the scenario's own)")
    parser.add_argument("--workers", type=checked(lambda v: check_int("workers", v, min=1,
                                                                      max=512)),
                        default=1, metavar="N", help="processes to run the points in (default 1)")
    # The range of kvsim.sweep's own check (kvsim.runs.sweeps.CHUNK_SIZE_MAX), not imported
    # here so that `kvsim --help` stays fast.
    parser.add_argument("--chunk-size", type=checked(lambda v: check_int("chunk_size", v, min=1,
                                                                         max=1_000_000)),
                        default=None, metavar="N", help="with --workers: runs per task (default: "
                        "chosen from the time of the first run)")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON rows")
    out.add_argument("--csv", action="store_true", help="print every column as CSV")
    add_quiet_flag(parser)
    parser.set_defaults(run=run)
    return parser


def _as_csv(rows: list[dict[str, object]], names: list[str]) -> str:
    import csv
    import io
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue().rstrip("\n")


def run(args: argparse.Namespace) -> str:
    """The sweep's table: the grid's columns, the seed and :data:`TEXT_COLUMNS` (or all)."""
    from kvsim.runs.sweeps import sweep
    grid = canonical_options(parse_grid(args.grid), "--grid")
    fixed = canonical_options(parse_sets(args.set), "--set")
    both = sorted(set(grid) & set(fixed))
    if both:
        raise KvsimError(f"--grid {both[0]} and --set {both[0]}=... are both given: expected one")
    base = dict(fixed, scenario=args.scenario)
    show = progress_wanted(args.quiet)              # kvsim.sweep's bar, on a terminal only
    if args.workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(args.workers) as pool:
            results = sweep(base, grid, seeds=args.seeds, executor=pool,
                                  chunk_size=args.chunk_size, progress=show)
    else:
        results = sweep(base, grid, seeds=args.seeds, progress=show)
    names = results.columns
    rows = [{k: plain(results[k][i]) for k in names} for i in range(results.num_rows)]
    if args.json:
        return dump(rows)
    if args.csv:
        return _as_csv(rows, names)
    shown = list(grid) + (["seed"] if "seed" in names else []) + list(TEXT_COLUMNS)
    cells = [list(shown)] + [[format_value(row[k]) for k in shown] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(shown))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in cells)
