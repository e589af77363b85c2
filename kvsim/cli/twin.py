"""``kvsim twin``: a kvsim twin of a real vLLM server from its metrics, and what-ifs on it.

Honest about what it read: stderr names the inputs it inferred from the
metrics, those the user gave and those it defaulted; a what-if table that
stands on a default is labelled illustrative (and says which); and when the
model, the pool and the arrival rate are all defaults, it prints no what-ifs
(one line, exit 2) unless ``--allow-defaults`` asks for them.
"""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from kvsim.errors import KvsimError, check_int

from .arguments import Subcommands, UsageError, add_quiet_flag, add_subcommand, checked, positive_float
from .names import canonical_args
from .output import dump, format_value
from .progress import ProgressLine

if TYPE_CHECKING:         # imported when run: `kvsim --help` stays fast
    from kvsim.observe.readings import Window
    from kvsim.observe.twin import Twin

__all__ = ["add_parser", "run", "EXAMPLES"]

#: Real command lines, shown at the end of ``kvsim twin --help`` (the scrape is one of the
#: real ones the book ships, book/data/scrapes/).
EXAMPLES = (
    "kvsim twin book/data/scrapes/vllm-0.11.0-issue-28924.prom --model llama-3.1-8b "
    "--uptime 3600 --no-what-ifs",
    "kvsim twin before.prom after.prom --seconds 300 --trace-out twin.csv",
    "kvsim twin range.json --json",
)

_DESCRIPTION = (
    "Read a real vLLM server's metrics -- one saved /metrics scrape, two scrapes\n"
    "and the seconds between them, or the JSON of a Prometheus /api/v1/query_range or\n"
    "/api/v1/query answer -- and build the kvsim configuration that reproduces it: the\n"
    "pool from vllm:cache_config_info, the model from model_name, the arrival rate\n"
    "from the request counters, the lengths from their histograms, the step-time\n"
    "scale fitted to the inter-token histogram. Then run the what-ifs of chapters 2-5\n"
    "on it (more memory, FP8 KV, a max_num_seqs cap, a watermark). It says what it\n"
    "inferred, from which series, and what it could not infer (and the default used).\n"
    "One scrape counts from the server's start: give --uptime S for the rate.\n\n"
    "What it read and what it defaulted goes to stderr; what-ifs that stand on a\n"
    "default are labelled illustrative. With the model, the pool and the rate all\n"
    "defaulted it prints no what-ifs (exit 2) unless --allow-defaults is given.")


def add_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Register ``twin`` and its flags."""
    parser = add_subcommand(subparsers, "twin", examples=EXAMPLES, description=_DESCRIPTION,
                            help="a kvsim twin of a real vLLM server from its /metrics, and "
                                 "what-ifs on it")
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="a scrape, two scrapes (earlier first), or a Prometheus JSON export")
    parser.add_argument("--uptime", type=positive_float("uptime_s"), default=None, metavar="S",
                        help="with one scrape: seconds since the server started")
    parser.add_argument("--seconds", type=positive_float("seconds"), default=None, metavar="S",
                        help="with two scrapes: the seconds between them")
    parser.add_argument("--model", default=None, metavar="NAME",
                        help="the model preset (default: from the model_name label)")
    parser.add_argument("--gpu", default=None, metavar="NAME",
                        help="the GPU preset (default: the one whose budget gives the pool)")
    parser.add_argument("--seed", type=checked(lambda v: check_int("seed", v, min=0,
                                                                   max=2**63 - 1)),
                        default=0, metavar="N", help="the twin's traffic seed (default 0)")
    parser.add_argument("--duration", type=positive_float("duration_s"), default=None,
                        metavar="S",
                        help="measured seconds of each twin run (default: the window's, 60-3600)")
    parser.add_argument("--no-fit", action="store_true",
                        help="skip the step-time fit (scale 1)")
    parser.add_argument("--no-what-ifs", action="store_true", help="only build the twin")
    parser.add_argument("--allow-defaults", action="store_true",
                        help="print the what-ifs even when the model, the pool and the arrival "
                             "rate are all kvsim's defaults (illustrative only)")
    parser.add_argument("--trace-out", metavar="PATH", default=None,
                        help="write the twin's traffic as a trace CSV for `kvsim simulate --trace`")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_quiet_flag(parser)
    parser.set_defaults(run=run)
    return parser


def _window(args: argparse.Namespace) -> Window:
    """The measured window: one scrape since start, two scrapes apart, or a range export."""
    from kvsim.observe.readings import Reading, between, read_source, since_start
    if len(args.files) > 2:
        raise UsageError("kvsim twin: error: at most two files: expected one scrape, two "
                         "scrapes (earlier first) or one Prometheus export")
    got = [read_source(f) for f in args.files]
    if len(got) == 2:
        earlier, later = got
        if not (isinstance(earlier, Reading) and isinstance(later, Reading)):
            raise KvsimError("two files must be two scrapes: expected a range export alone")
        if args.uptime is not None:
            raise KvsimError("--uptime is for one scrape: expected --seconds with two")
        return between(earlier, later, args.seconds)
    if isinstance(got[0], Reading):
        if args.seconds is not None:
            raise KvsimError("--seconds is for two scrapes: expected --uptime with one")
        return since_start(got[0], args.uptime)
    if args.seconds is not None or args.uptime is not None:
        raise KvsimError("a range export carries its own times: expected neither "
                         "--seconds nor --uptime")
    return got[0]


def _write_trace(twin: Twin, path: str) -> None:
    try:
        twin.workload().to_csv(path)
    except OSError as e:
        raise KvsimError(f"--trace-out {path!r}: cannot write it "
                         f"({e.strerror}): expected a writable path") from None


def _what_if_table(twin: Twin, rows: list[dict[str, object]]) -> list[str]:
    from kvsim.observe.twin import WHAT_IF_COLUMNS
    lines = [f"\nwhat-ifs (the twin, seed {twin.seed}, {twin.duration_s:,.6g} s measured"
             + (f" after {twin.warmup_s:g} s of warm-up" if twin.warmup_s else
                " from a cold start") + "):"]
    if twin.illustrative:
        lines.append(f"  ILLUSTRATIVE: built on kvsim's defaults for {', '.join(twin.weak_inputs())}, "
                     f"not on this server's figures")
    columns = ["case"] + list(WHAT_IF_COLUMNS)
    cells = [columns] + [[str(row["case"])] + [format_value(row[c]) for c in WHAT_IF_COLUMNS]
                         for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines += ["  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths, strict=True)))
              for row in cells]
    return lines


def _text(args: argparse.Namespace, window: Window, twin: Twin, rows: list[dict[str, object]],
          trace: str) -> str:
    lines = [f"kvsim twin of {twin.window}" + (f", {window.seconds:,.6g} s"
                                               if window.seconds else ", length unknown")]
    lines += [f"note: {n}" for n in window.notes]
    width = max(len(f.what) for f in twin.findings)
    lines.append("\ninferred (what, value, from):")
    lines += [f"  {f.what:<{width}}  {f.value}" + (f"  [{f.source}]" if f.source else "")
              + (f" ({f.why})" if f.why else "") for f in twin.findings if f.inferred]
    lines.append("\nnot inferred (the default used, and why):")
    lines += [f"  {f.what:<{width}}  {f.value}  ({f.why})" for f in twin.findings
              if not f.inferred]
    shown = {k: v for k, v in twin.observed.items() if v is not None}
    if shown:
        lines.append("\nthe server showed: " + ", ".join(f"{k} {format_value(v)}"
                                                         for k, v in shown.items()))
    lines.append(f"\nthe twin as a command"
                 f"{'' if args.trace_out else ' (--trace-out TWIN.csv writes its traffic)'}:")
    lines.append("  " + twin.command(trace))
    if rows:
        lines += _what_if_table(twin, rows)
    return "\n".join(lines)


def _report_inputs(twin: Twin) -> None:
    """Two or three lines on stderr: what was read from the metrics, given, and defaulted."""
    given = twin.given()
    read = [f.what for f in twin.findings if f.inferred and f.what not in given]
    lines = [f"kvsim twin: inferred from the metrics: {', '.join(read) or 'nothing'}"]
    if given:
        lines.append(f"kvsim twin: given: {', '.join(given)}")
    lines.append(f"kvsim twin: defaulted: {', '.join(twin.defaulted()) or 'nothing'}")
    print("\n".join(lines), file=sys.stderr)


def _refuse_a_table_of_defaults(args: argparse.Namespace, twin: Twin) -> None:
    if args.no_what_ifs or args.allow_defaults or not twin.mostly_defaults:
        return
    raise KvsimError(f"{', '.join(args.files)}: the model, the KV pool and the arrival rate are "
                     "all kvsim's defaults (not in these metrics), so what-ifs would describe "
                     "kvsim's defaults, not your server: expected --model and a scrape with "
                     "vllm:cache_config_info and request counters (with --uptime), or "
                     "--allow-defaults to print them as an illustration (--no-what-ifs: the "
                     "twin alone)")


def run(args: argparse.Namespace) -> str:
    """The twin's findings, its command and its what-ifs (or JSON of them)."""
    from kvsim.observe.twin import build_twin, what_ifs
    canonical_args(args)
    window = _window(args)
    with ProgressLine("kvsim twin", quiet=args.quiet) as progress:
        twin = build_twin(window, model=args.model, gpu=args.gpu, seed=args.seed,
                          duration_s=args.duration, fit_scale=not args.no_fit,
                          progress=progress)
        _refuse_a_table_of_defaults(args, twin)
        trace = args.trace_out or "TWIN.csv"
        if args.trace_out is not None:
            _write_trace(twin, args.trace_out)
        rows = [] if args.no_what_ifs else what_ifs(twin, progress=progress)
    # after the progress line is erased, and only on success: an error stays one line
    _report_inputs(twin)
    if args.json:
        out = twin.to_dict()
        out["command"] = twin.command(trace)
        out["what_ifs"] = rows
        out["notes"] = list(window.notes)
        return dump(out)
    return _text(args, window, twin, rows, trace)
