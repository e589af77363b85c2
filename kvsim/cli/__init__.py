"""The ``kvsim`` command line: capacity, simulate, sweep, plan, and the preset listings.

Explained in chapter 1 (``kvsim capacity``: "is my cache simply too small?")
and chapter 4 (``kvsim simulate``: replay a trace against a configuration)::

    kvsim capacity --model llama-2-7b --gpu a40-48gb --util 0.60 --seq-len 1100
    kvsim capacity --config path/to/config.json --gpu h100-80gb --util 0.9 --json
    kvsim capacity --model llama-3.1-8b --gpu h100-80gb --kv-cache-tokens 447088 --seq-len 6000
    kvsim simulate --scenario belgavi --set max_num_seqs=16 --json
    kvsim simulate --trace trace.csv --model llama-3.1-8b --gpu h100-80gb --util 0.9
    kvsim simulate --trace trace.csv --model llama-3.1-8b --gpu h100-80gb --kv-cache-tokens 447088
    kvsim sweep --scenario belgavi --grid output_mean=250,600 --seeds 0-4 --workers 2
    kvsim sweep --scenario belgavi --grid output_mean=250,600 --seeds 0-9 --workers 2 --chunk-size 5
    kvsim plan --model llama-2-7b --grid gpu=a40-48gb,h100-80gb --slo ttft_p99_s=2 --target 20
    kvsim exporter --scenario mission-1-storm --speed 10   (serves /metrics and /health on :9188)
    kvsim lint-rules my-alerts.rules.yml     (exit 1 on a classic mistake; notes alone exit 0)
    kvsim lint-rules my-alerts.rules.yml --against incident-day   (when each alert fires)
    kvsim lint-rules my-alerts.rules.yml --at-speed 20 > fast.rules.yml   (for a fast replay)
    kvsim lint-rules --dashboard grafana.json --vllm-version v1-0.10   (a dashboard's queries)
    kvsim twin scrape.prom --uptime 3600      (a twin of a real server, and its what-ifs)
    kvsim twin before.prom after.prom --seconds 300 | kvsim twin range.json
    kvsim scenarios | kvsim models | kvsim gpus        (each takes --json)
    kvsim missions [--reset | --name NAME | --verify CODE | --leaderboard codes.txt | --ticket N
                    | --export [FILE] | --import FILE]    (--export before a Binder session ends)

``--set key=value`` passes an engine option; the value is read as an integer,
a float, ``true``/``false``, ``none`` or else a string. Any bad input exits
with status 2 and one line on stderr naming the value and the valid range;
the checks are the API's own (:mod:`kvsim.errors`, ``resolve_options``, the
scenarios' parameter checks), so a value is judged the same way here, in
Python and in the book's widgets.

The same defaults and the same required flags in every subcommand
(:data:`~kvsim.cli.arguments.CLI_RULES`, also in ``kvsim --help``): ``--util`` is required
wherever kvsim would otherwise size the pool from memory (``capacity`` and
``simulate --trace``) unless the pool is pinned (``--num-gpu-blocks`` or
``--kv-cache-tokens``): the utilisation is the operator's choice and the
answer's largest lever, so kvsim does not guess vLLM's 0.9 for you. A
``--scenario`` carries its own utilisation (``--util`` overrides it).
``--engine`` defaults to v1, block size to 16 tokens, tensor parallelism to
1, as in :func:`kvsim.simulate`. Model and GPU names are the presets'
canonical (lower-case) names; another case is read as the preset with a note
on stderr naming the canonical name.

Every subcommand takes ``--version`` (kvsim's version; ``--vllm-version``
picks vLLM's metric names in ``exporter`` and ``lint-rules``) and ends its
``--help`` with real examples; the runs that take seconds (``sweep``,
``plan``, ``twin``, ``missions`` re-scoring) draw a progress line on stderr
when it is a terminal, never with ``--quiet``.

One module per subcommand (or family of them) registers its parser and runs
it: :mod:`.capacity`, :mod:`.simulate`, :mod:`.sweep`, :mod:`.plan`, :mod:`.exporter`,
:mod:`.lint_rules`, :mod:`.twin`, :mod:`.missions` and :mod:`.listings`
(scenarios, models, gpus). They share :mod:`.arguments` (the parser, its
checked types), :mod:`.values` (``--set``, ``--grid``, ``--seeds``),
:mod:`.names` (preset names) and :mod:`.output` (tables and JSON); this module
assembles the parser and turns every bad input into one line and status 2.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kvsim.errors import KvsimError

from . import capacity, exporter, lint_rules, listings, missions, plan, simulate, sweep, twin
from .arguments import CLI_RULES, Parser, UsageError, VersionAction
from .missions import LEADERBOARD_MAX_BYTES
from .output import one_line
from .simulate import TIME_SCALE_MAX, TIME_SCALE_MIN
from .values import GRID_VALUES_MAX, parse_grid, parse_seeds, parse_set_value, parse_sets

# Each sub-command imports what it runs, inside its function: `kvsim --help` and
# `kvsim capacity` then start in tens of milliseconds instead of loading the
# engine, Prometheus' client and the lab. (The rest of kvsim imports at the top.)

__all__ = ["main", "build_parser", "parse_set_value", "parse_sets", "parse_seeds", "parse_grid",
           "CLI_RULES", "GRID_VALUES_MAX", "TIME_SCALE_MIN", "TIME_SCALE_MAX",
           "LEADERBOARD_MAX_BYTES"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser: every subcommand's, in the order ``kvsim --help`` lists them."""
    parser = Parser(prog="kvsim", description="A paged KV-cache serving simulator "
                    "(the companion of the KV-pressure book).", epilog=CLI_RULES)
    parser.add_argument("--version", action=VersionAction, help="print kvsim's version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    subparsers.required = True
    for command in (capacity, simulate, sweep, plan, exporter, lint_rules, twin, missions):
        command.add_parser(subparsers)
    listings.add_parsers(subparsers)
    return parser


#: What ``--version V`` picked before it printed kvsim's version (now ``--vllm-version V``).
_METRIC_SETS = ("v1", "v1-0.10", "v0")


def _check_old_version_flag(argv: Sequence[str]) -> None:
    """``exporter``/``lint-rules`` ``--version v1-0.10``, the flag's old meaning, is one line
    (not kvsim's version and a silent exit 0, which a script would take for success)."""
    words = list(argv)
    command = next((w for w in words if not w.startswith("-")), None)
    if command not in ("exporter", "lint-rules"):
        return
    for i, word in enumerate(words):
        value = word.partition("=")[2] if word.startswith("--version=") else (
            words[i + 1] if word == "--version" and i + 1 < len(words) else None)
        if value in _METRIC_SETS:
            raise UsageError(f"kvsim {command}: error: --version {value}: --version prints "
                             f"kvsim's version; expected --vllm-version {value} to pick vLLM's "
                             f"metric names")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 bad input)."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        _check_old_version_flag(argv)
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:          # --help and --version
            return exc.code if isinstance(exc.code, int) else 0
        out = args.run(args)
    except UsageError as exc:
        print(one_line(exc), file=sys.stderr)
        return 2
    except KvsimError as exc:
        print(f"kvsim: error: {one_line(exc)}", file=sys.stderr)
        return 2
    if args.command == "exporter":
        return 0
    try:
        print(out)
        sys.stdout.flush()
    except BrokenPipeError:                # e.g. `kvsim models | head -3`
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return getattr(args, "exit_status", 0)
