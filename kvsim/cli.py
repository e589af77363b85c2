"""The ``kvsim`` command line: capacity, simulate, sweep, and the preset listings.

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
    kvsim exporter --scenario mission-1-storm --speed 10 --port 9400   (serves /metrics)
    kvsim lint-rules my-alerts.rules.yml     (exit 1 on a classic mistake; notes alone exit 0)
    kvsim lint-rules my-alerts.rules.yml --against incident-day   (when each alert fires)
    kvsim lint-rules my-alerts.rules.yml --at-speed 20 > fast.rules.yml   (for a fast replay)
    kvsim lint-rules --dashboard grafana.json --version v1-0.10   (a dashboard's queries)
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
(:data:`CLI_RULES`, also in ``kvsim --help``): ``--util`` is required
wherever kvsim would otherwise size the pool from memory (``capacity`` and
``simulate --trace``) unless the pool is pinned (``--num-gpu-blocks`` or
``--kv-cache-tokens``): the utilisation is the operator's choice and the
answer's largest lever, so kvsim does not guess vLLM's 0.9 for you. A
``--scenario`` carries its own utilisation (``--util`` overrides it).
``--engine`` defaults to v1, block size to 16 tokens, tensor parallelism to
1, as in :func:`kvsim.simulate`. Model and GPU names are the presets'
canonical (lower-case) names; another case is read as the preset with a note
on stderr naming the canonical name.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from typing import Any, Sequence

from .errors import (
    KvsimError,
    check_choice,
    check_float,
    check_gpu_memory_utilization,
    check_int,
    check_num_gpu_blocks,
)

# Each sub-command imports what it runs, inside its function: `kvsim --help` and
# `kvsim capacity` then start in tens of milliseconds instead of loading the
# engine, Prometheus' client and the lab. (The rest of kvsim imports at the top.)

__all__ = ["main", "build_parser", "parse_set_value", "parse_sets", "parse_seeds", "parse_grid",
           "CLI_RULES"]

#: The rules every subcommand keeps (shown by ``kvsim --help``; see the module docstring).
CLI_RULES = (
    "Every subcommand: --util F is required wherever the pool is sized from memory "
    "(capacity, simulate --trace) unless --num-gpu-blocks or --kv-cache-tokens pins it "
    "(kvsim does not guess your server's utilisation); a --scenario carries its own. "
    "Defaults: --engine v1, block size 16, tensor parallelism 1, as kvsim.simulate. "
    "Model and GPU names are the presets' lower-case names (another case works, with a "
    "note on stderr). A bad value exits 2 with one line naming it and the valid range."
)

#: The most values one ``--grid`` key takes (kvsim.runs.sweeps.MAX_GRID_VALUES, not imported
#: here so that `kvsim --help` stays fast; a test checks they agree).
GRID_VALUES_MAX = 1_000
#: ``--time-scale``'s range (kvsim.traffic.workload.TIME_SCALE_RANGE, likewise).
TIME_SCALE_MIN, TIME_SCALE_MAX = 0.001, 1000
#: The largest leaderboard file `kvsim missions --leaderboard` reads: 1 MiB (a room of a
#: hundred learners' codes is under 30 KB).
LEADERBOARD_MAX_BYTES = 2**20

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT = re.compile(r"^[+-]?\d[\d_]*$")


class _UsageError(Exception):
    """An argparse usage error, turned into one line and exit status 2 by :func:`main`."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse prints usage and exits; we want one line
        if "required" in message or "invalid choice" in message:
            message += f" (see `{self.prog} --help`)"
        raise _UsageError(f"{self.prog}: error: {message}")


class _Version(argparse.Action):
    """``kvsim --version``: ``kvsim X.Y.Z`` from the installed distribution's metadata."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from . import __version__  # looked up only when asked for
        print(f"kvsim {__version__}")
        parser.exit()


def _arg(check):
    """Wrap a kvsim validator as an argparse ``type`` whose message is kvsim's."""
    def convert(text: str):
        try:
            return check(text)
        except KvsimError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = getattr(check, "__name__", "value")
    return convert


_util = _arg(check_gpu_memory_utilization)
_block = _arg(lambda s: check_int("block_size", s, min=1))
_seq = _arg(lambda s: check_int("seq_len", s, min=1))
_tp = _arg(lambda s: check_int("tensor_parallel_size", s, min=1, max=1024))
_blocks = _arg(check_num_gpu_blocks)
_log_tokens = _arg(lambda s: check_int("kv_cache_tokens", s, min=1, max=10**12))
_engine = _arg(lambda s: check_choice("engine", s, ["v1", "v0"]))


def _pool_flags(parser) -> None:
    """--num-gpu-blocks / --kv-cache-tokens: pin the pool to a real server's start-up log."""
    pool = parser.add_mutually_exclusive_group()
    pool.add_argument("--num-gpu-blocks", type=_blocks, default=None, metavar="N",
                      help="usable KV blocks of your server (instead of computing the pool)")
    pool.add_argument("--kv-cache-tokens", type=_log_tokens, default=None, metavar="N",
                      help="N from vLLM's start-up line 'GPU KV cache size: N tokens'")
    parser.add_argument("--engine", type=_engine, default=None, metavar="E",
                        help="v1 (default, vLLM V1) or v0")


def _pos_float(name: str):
    return _arg(lambda v: check_float(name, v, min=0, min_open=True))


def parse_set_value(text: str) -> Any:
    """Read a ``--set`` value: int, float, true/false, none, or the string itself."""
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if _INT.match(t):
        return int(t.replace("_", ""))
    try:
        x = float(t)
    except ValueError:
        return text
    if not math.isfinite(x):
        raise KvsimError(f"--set value {text!r} is not finite: expected an int, a finite float, "
                         f"true, false, none or a string")
    return x


#: ``--set`` options whose value is always a string.
_TEXT_OPTIONS = frozenset({"vllm_version"})


def parse_sets(items: Sequence[str] | None) -> dict[str, Any]:
    """Turn ``["key=value", ...]`` into a dict; a malformed or repeated item is a KvsimError."""
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not _KEY.match(key):
            raise KvsimError(f"--set {item!r} is malformed: expected key=value with an engine "
                             f"option name such as max_num_seqs=64")
        if key in out:
            raise KvsimError(f"--set {key} is given twice: expected each option once")
        # a release string ("0.20") stays text: as a number it would read 0.2
        out[key] = value.strip() if key in _TEXT_OPTIONS else parse_set_value(value)
    return out


def parse_seeds(text: str) -> list[int]:
    """``"0-4"`` -> 0..4, ``"0,3,7"`` -> those, ``"5"`` -> [5]."""
    t = str(text).strip()
    m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", t)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        if hi < lo or hi - lo >= 10_000:
            raise KvsimError(f"--seeds {text!r}: expected a range lo-hi with lo <= hi and at most "
                             f"10,000 seeds")
        return list(range(lo, hi + 1))
    parts = [p.strip() for p in t.split(",")]
    if not parts or not all(p.isdigit() for p in parts):
        raise KvsimError(f"--seeds {text!r} is malformed: expected 0-4, 0,3,7 or 5")
    return [int(p) for p in parts]


def parse_grid(items: Sequence[str] | None) -> dict[str, list]:
    """Turn ``["key=v1,v2", ...]`` into a grid; values are read as by ``--set``."""
    grid: dict[str, list] = {}
    for item in items or ():
        key, sep, values = item.partition("=")
        key = key.strip()
        if not sep or not _KEY.match(key) or not values.strip():
            raise KvsimError(f"--grid {item!r} is malformed: expected key=v1,v2,... such as "
                             f"gpu_memory_utilization=0.55,0.6")
        if key in grid:
            raise KvsimError(f"--grid {key} is given twice: expected each option once")
        parts = values.split(",")
        if len(parts) > GRID_VALUES_MAX:
            raise KvsimError(f"--grid {key} has {len(parts):,} values: expected at most "
                             f"{GRID_VALUES_MAX:,}")
        grid[key] = [parse_set_value(v) for v in parts]
    return grid


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands capacity, simulate, sweep, scenarios, models, gpus)."""
    p = _Parser(prog="kvsim", description="A paged KV-cache serving simulator "
                "(the companion of the KV-pressure book).", epilog=CLI_RULES)
    p.add_argument("--version", action=_Version, help="print kvsim's version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    c = sub.add_parser("capacity", help="KV bytes per token, pool, blocks, tokens, concurrency",
                       epilog=CLI_RULES)
    src = c.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="model preset name (see `kvsim models`)")
    src.add_argument("--config", metavar="PATH", help="a Hugging Face config.json")
    c.add_argument("--gpu", required=True, help="GPU preset name (see `kvsim gpus`)")
    c.add_argument("--util", type=_util, metavar="F", default=None,
                   help="gpu_memory_utilization in (0, 1] (required unless the pool is pinned)")
    c.add_argument("--kv-dtype", default=None, metavar="D", help="fp32, fp16, bf16 or fp8 "
                   "(default: the model's dtype)")
    c.add_argument("--block-size", type=_block, default=16, metavar="N",
                   help="tokens per KV block (default 16)")
    c.add_argument("--seq-len", type=_seq, default=None, metavar="N",
                   help="also report how many sequences of N tokens fit")
    c.add_argument("--tp", type=_tp, default=1, metavar="N", help="tensor_parallel_size")
    _pool_flags(c)
    c.add_argument("--json", action="store_true", help="print JSON")

    s = sub.add_parser("simulate", help="run a scenario or replay a trace; print the summary",
                       epilog=CLI_RULES)
    what = s.add_mutually_exclusive_group(required=True)
    what.add_argument("--scenario", metavar="NAME", help="a scenario (see `kvsim scenarios`)")
    what.add_argument("--trace", metavar="PATH", help="an Azure LLM inference trace CSV")
    msrc = s.add_mutually_exclusive_group()
    msrc.add_argument("--model", help="model preset name")
    msrc.add_argument("--config", metavar="PATH", help="a Hugging Face config.json")
    s.add_argument("--gpu", help="GPU preset name")
    s.add_argument("--util", type=_util, default=None, metavar="F",
                   help="gpu_memory_utilization in (0, 1] (with --trace: required unless the "
                        "pool is pinned, as for capacity; a --scenario has its own)")
    s.add_argument("--time-scale", default=None, metavar="F",
                   type=_arg(lambda v: check_float(
                       "time_scale", v, min=TIME_SCALE_MIN, max=TIME_SCALE_MAX,
                       why="a thousandth to a thousand times the trace's rate")),
                   help="with --trace: divide arrival times by F (2 = twice the rate; "
                        "0.001 to 1000)")
    s.add_argument("--start-s", default=None, metavar="S",
                   type=_arg(lambda v: check_float("start_s", v, min=0, max=10**7)),
                   help="with --trace: start of the replayed window, in trace seconds")
    s.add_argument("--duration-s", default=None, metavar="S",
                   type=_arg(lambda v: check_float("duration_s", v, min=0, min_open=True,
                                                   max=10**7)),
                   help="with --trace: length of the replayed window, in trace seconds")
    s.add_argument("--limit", type=_arg(lambda v: check_int("limit", v, min=1)), default=None,
                   metavar="N", help="with --trace: replay at most N requests")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="an engine option of kvsim.simulate (repeatable)")
    _pool_flags(s)
    s.add_argument("--json", action="store_true", help="print JSON")

    w = sub.add_parser("sweep", help="run a scenario over a grid of settings and seeds",
                       epilog=CLI_RULES)
    w.add_argument("--scenario", required=True, metavar="NAME", help="a scenario")
    w.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="a scenario parameter or engine option and its values (repeatable)")
    w.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a fixed scenario parameter or engine option (repeatable)")
    w.add_argument("--seeds", type=_arg(parse_seeds), default=None, metavar="S",
                   help="seeds: 0-4, 0,3,7 or 5 (default: the scenario's own)")
    w.add_argument("--workers", type=_arg(lambda v: check_int("workers", v, min=1, max=512)),
                   default=1, metavar="N", help="processes to run the points in (default 1)")
    # The range of kvsim.sweep's own check (kvsim.runs.sweeps.CHUNK_SIZE_MAX), not imported
    # here so that `kvsim --help` stays fast.
    w.add_argument("--chunk-size", type=_arg(lambda v: check_int("chunk_size", v, min=1,
                                                                 max=1_000_000)),
                   default=None, metavar="N", help="with --workers: runs per task (default: "
                   "chosen from the time of the first run)")
    out = w.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON rows")
    out.add_argument("--csv", action="store_true", help="print every column as CSV")

    e = sub.add_parser(
        "exporter", help="replay a scenario as a live vLLM /metrics endpoint",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run the scenario, then serve what the simulated vLLM server's /metrics\n"
        "would show, replayed live, for a real Prometheus to scrape. Once it listens it\n"
        "prints one line on stdout (\"kvsim exporter: serving /metrics on http://...\"),\n"
        "so a script can wait for it; Ctrl-C or SIGTERM stops it.\n\n"
        "Every series is in simulated time. --speed N replays N simulated seconds per\n"
        "wall-clock second, so every rate Prometheus computes (rate(), irate(), deriv())\n"
        "is N times the simulated server's rate per second, and every window and `for`\n"
        "(wall-clock time to Prometheus) covers N times as much simulated time: at\n"
        "--speed 20, rate(x[5m]) is 20 times x's rate over 100 simulated minutes, and\n"
        "increase(x[5m]) counts those 100 minutes. Divide a rate by N to read it per\n"
        "simulated second. Gauges keep their values, only move N times as fast. At\n"
        "--speed 1 the rates and the book's alert rules mean what they say.")
    e.add_argument("--scenario", required=True, metavar="NAME", help="a scenario")
    e.add_argument("--speed", type=_arg(lambda v: check_float("speed", v, min=0.01, max=100_000)),
                   default=1.0, metavar="N", help="simulated seconds per wall-clock second; "
                   "multiplies every rate by N (default 1)")
    e.add_argument("--port", type=_arg(lambda v: check_int("port", v, min=0, max=65535)),
                   default=8000, metavar="P", help="TCP port (default 8000; 0 picks a free "
                   "one, named on the ready line)")
    e.add_argument("--host", default="127.0.0.1", metavar="H",
                   help="address to listen on (default 127.0.0.1, this machine only)")
    e.add_argument("--version", dest="metrics_version", default="v1", metavar="V",
                   type=_arg(lambda v: check_choice("version", v, ["v1", "v1-0.10", "v0"])),
                   help="the vLLM metric names to speak: v1 (default), v1-0.10 or v0")
    e.add_argument("--model-name", default=None, metavar="NAME",
                   help="the model_name label (default: the model preset's name)")
    e.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a scenario parameter or engine option (repeatable)")

    lr = sub.add_parser("lint-rules", help="find the classic mistakes in a Prometheus rule "
                        "file or a PromQL expression for vLLM's metrics")
    src = lr.add_mutually_exclusive_group(required=True)
    src.add_argument("file", nargs="?", default=None, help="a Prometheus rule file (YAML)")
    src.add_argument("--expr", default=None, help="one PromQL expression instead of a file")
    src.add_argument("--dashboard", metavar="JSON", default=None,
                     help="a Grafana dashboard (JSON): lint every Prometheus query of its panels")
    lr.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                    help="a dashboard template variable (default: the dashboard's current value; "
                         "$__rate_interval is 1m)")
    lr.add_argument("--version", dest="metrics_version", default="v1", metavar="V",
                    type=_arg(lambda v: check_choice("version", v, ["v1", "v1-0.10", "v0"])),
                    help="the vLLM metric names to check against: v1 (default), v1-0.10 or v0")
    lr.add_argument("--against", metavar="SCENARIO", default=None,
                    help="also run the file's alerts with promtool on this scenario's scraped "
                         "series and say when each fires (e.g. incident-day)")
    lr.add_argument("--at-speed", metavar="SPEED", default=None,
                    help="print the rule file with every window and `for` divided by SPEED, for "
                         "a replay at `kvsim exporter --speed SPEED` (chapter 4's Try it)")
    lr.add_argument("--strict", action="store_true",
                    help="exit 1 on notes too (a deprecated name works today, not after an upgrade)")
    lr.add_argument("--json", action="store_true", help="print JSON")

    tw = sub.add_parser(
        "twin", help="a kvsim twin of a real vLLM server from its /metrics, and what-ifs on it",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read a real vLLM server's metrics -- one saved /metrics scrape, two scrapes\n"
        "and the seconds between them, or the JSON of a Prometheus /api/v1/query_range or\n"
        "/api/v1/query answer -- and build the kvsim configuration that reproduces it: the\n"
        "pool from vllm:cache_config_info, the model from model_name, the arrival rate\n"
        "from the request counters, the lengths from their histograms, the step-time\n"
        "scale fitted to the inter-token histogram. Then run the what-ifs of chapters 2-5\n"
        "on it (more memory, FP8 KV, a max_num_seqs cap, a watermark). It says what it\n"
        "inferred, from which series, and what it could not infer (and the default used).\n"
        "One scrape counts from the server's start: give --uptime S for the rate.")
    tw.add_argument("files", nargs="+", metavar="FILE",
                    help="a scrape, two scrapes (earlier first), or a Prometheus JSON export")
    tw.add_argument("--uptime", type=_pos_float("uptime_s"), default=None, metavar="S",
                    help="with one scrape: seconds since the server started")
    tw.add_argument("--seconds", type=_pos_float("seconds"), default=None, metavar="S",
                    help="with two scrapes: the seconds between them")
    tw.add_argument("--model", default=None, metavar="NAME",
                    help="the model preset (default: from the model_name label)")
    tw.add_argument("--gpu", default=None, metavar="NAME",
                    help="the GPU preset (default: the one whose budget gives the pool)")
    tw.add_argument("--seed", type=_arg(lambda v: check_int("seed", v, min=0, max=2**63 - 1)),
                    default=0, metavar="N", help="the twin's traffic seed (default 0)")
    tw.add_argument("--duration", type=_pos_float("duration_s"), default=None, metavar="S",
                    help="measured seconds of each twin run (default: the window's, 60-3600)")
    tw.add_argument("--no-fit", action="store_true",
                    help="skip the step-time fit (scale 1)")
    tw.add_argument("--no-what-ifs", action="store_true", help="only build the twin")
    tw.add_argument("--trace-out", metavar="PATH", default=None,
                    help="write the twin's traffic as a trace CSV for `kvsim simulate --trace`")
    tw.add_argument("--json", action="store_true", help="print JSON")

    mi = sub.add_parser("missions", help="the lab's missions: progress, tickets, completion "
                        "codes, a room's leaderboard (chapter 5)")
    act = mi.add_mutually_exclusive_group()
    act.add_argument("--reset", action="store_true", help="forget all progress")
    act.add_argument("--name", metavar="NAME",
                     help="put your name in every completion code (made again, with the room "
                          "tag when $KVSIM_ROOM_KEY is set); prints the progress")
    act.add_argument("--verify", metavar="CODE", help="check a completion code and re-score it "
                     "(and its room tag when $KVSIM_ROOM_KEY is set)")
    act.add_argument("--leaderboard", metavar="PATH",
                     help="a file of lines 'name CODE': verify every code, print the room's "
                          "table (with $KVSIM_ROOM_KEY set, only codes made with it count)")
    act.add_argument("--ticket", metavar="N", help="print mission N's incident ticket")
    act.add_argument("--export", nargs="?", const="", default=None, metavar="FILE",
                     help="write the progress to FILE (default ./kvsim-missions-export.json) to "
                          "keep it after the session (Binder forgets it); prints the path")
    act.add_argument("--import", dest="import_file", metavar="FILE", default=None,
                     help="merge an --export file into this machine's progress, re-scoring it")
    mi.add_argument("--progress-file", metavar="PATH", default=None,
                    help="the progress file (default $KVSIM_MISSIONS_FILE or ~/.kvsim/missions.json)")
    mi.add_argument("--json", action="store_true", help="print JSON")

    for name, text in (("scenarios", "list the scenarios"), ("models", "list the model presets"),
                       ("gpus", "list the GPU presets")):
        sub.add_parser(name, help=text).add_argument("--json", action="store_true",
                                                     help="print JSON")
    return p


# ---------------------------------------------------------------------------
# output helpers


def _plain(value):
    """JSON-safe plain Python values (numpy scalars and arrays, NaN -> null)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return _plain(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _dump(obj) -> str:
    return json.dumps(_plain(obj), indent=2, allow_nan=False)


def _fmt_value(value) -> str:
    value = _plain(value)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return str(value)


def _table(d: dict) -> str:
    width = max((len(k) for k in d), default=0)
    return "\n".join(f"{k:<{width}}  {_fmt_value(v)}" for k, v in d.items())


# ---------------------------------------------------------------------------
# commands


def _model_arg(args):
    return args.config if args.config is not None else args.model


def _canonical(flag: str, value, names: Sequence[str]):
    """A preset name in its canonical spelling; another case is read with a note on stderr."""
    if not isinstance(value, str) or value in names:
        return value
    match = [n for n in names if n.lower() == value.strip().lower()]
    if not match:
        return value                      # the API's own check names it and what is valid
    print(f"kvsim: note: {flag} {value!r} is read as {match[0]!r}, the canonical name "
          f"(write it so to silence this note)", file=sys.stderr)
    return match[0]


def _canonical_args(args) -> None:
    """``--model`` and ``--gpu`` in the presets' canonical spelling (see :func:`_canonical`)."""
    from kvsim.model.hardware import list_gpus
    from kvsim.model.presets import list_models
    if getattr(args, "model", None) is not None:
        args.model = _canonical("--model", args.model, list_models())
    if getattr(args, "gpu", None) is not None:
        args.gpu = _canonical("--gpu", args.gpu, list_gpus())


def _canonical_options(options: dict, flag: str) -> dict:
    """``model=`` and ``gpu=`` in ``--set``/``--grid`` values, canonically spelt."""
    from kvsim.model.hardware import list_gpus
    from kvsim.model.presets import list_models
    out = dict(options)
    for key, names in (("model", list_models()), ("gpu", list_gpus())):
        if key in out:
            v = out[key]
            out[key] = [_canonical(f"{flag} {key}=", x, names) for x in v] \
                if isinstance(v, list) else _canonical(f"{flag} {key}=", v, names)
    return out


def _cmd_capacity(args) -> str:
    from kvsim.model.memory import kv_budget, pinned_budget
    from kvsim.model.presets import get_model

    _canonical_args(args)
    model = get_model(_model_arg(args))
    if args.seq_len is not None:
        model.check_seq_len(args.seq_len, "--seq-len")
    engine = args.engine or "v1"
    pinned = args.num_gpu_blocks is not None or args.kv_cache_tokens is not None
    if pinned:
        if args.util is not None:
            raise _UsageError("kvsim capacity: error: --util with a pinned pool: expected either "
                              "--util F or --num-gpu-blocks/--kv-cache-tokens, not both")
        b = pinned_budget(args.gpu, model, num_gpu_blocks=args.num_gpu_blocks,
                          kv_cache_tokens=args.kv_cache_tokens, kv_dtype=args.kv_dtype,
                          block_size=args.block_size, tensor_parallel_size=args.tp, engine=engine)
    else:
        if args.util is None:
            raise _UsageError("kvsim capacity: error: the following arguments are required: "
                              "--util (or pin the pool with --num-gpu-blocks or --kv-cache-tokens)")
        b = kv_budget(args.gpu, model, gpu_memory_utilization=args.util,
                      kv_dtype=args.kv_dtype, block_size=args.block_size,
                      tensor_parallel_size=args.tp, engine=engine)
    if args.json:
        out = dict(model=b.model.name, gpu=b.gpu.name, engine=b.engine,
                   gpu_memory_utilization=None if pinned else b.gpu_memory_utilization,
                   tensor_parallel_size=b.tensor_parallel_size, kv_dtype=b.kv_dtype,
                   block_size=b.block_size, max_model_len=b.model.max_model_len,
                   usable_bytes=b.usable_bytes, weight_bytes=b.weight_bytes,
                   activation_bytes=b.activation_bytes,
                   peak_activation_bytes=b.peak_activation_bytes,
                   non_torch_bytes=b.non_torch_bytes, kv_bytes_per_token=b.kv_bytes_per_token,
                   kv_bytes=b.kv_bytes, block_bytes=b.block_bytes, vllm_blocks=b.vllm_blocks,
                   blocks=b.blocks, tokens=b.tokens, log_tokens=b.log_tokens, pinned=pinned)
        if args.seq_len is not None:
            out.update(seq_len=args.seq_len, max_concurrent=b.max_concurrent(args.seq_len))
        return _dump(out)
    text = b.describe()
    if args.seq_len is not None:
        text += (f"\nmax_concurrent  {b.max_concurrent(args.seq_len):,} sequences of "
                 f"{args.seq_len:,} tokens "
                 f"({b.blocks_for(args.seq_len) + b.state_blocks_per_request:,} blocks each)")
    return text


def _summary_text(result) -> str:
    """The summary as a table, under two lines that say what was simulated."""
    from .units import format_bytes
    c = result.config
    pool = c["num_gpu_blocks"] * c["block_bytes"]
    head = (f"# {c['model']} on {c['gpu']}, engine {c['engine']}: {c['num_gpu_blocks']:,} KV "
            f"blocks of {c['block_size']} tokens ({format_bytes(pool, 'GB')} = "
            f"{format_bytes(pool, 'GiB')}), max_num_seqs {c['max_num_seqs']}, "
            f"max_num_batched_tokens {c['max_num_batched_tokens']:,}, {c['admission']} admission, "
            f"{c['preemption_mode']} preemption, prefix caching "
            f"{'on' if c['enable_prefix_caching'] else 'off'}\n"
            f"# measured from t = {c['warmup_s']:g} s to the end of the run "
            f"(times in seconds, fractions in 0..1)\n")
    note = _load_note(result)
    return head + (f"# note: {note}\n" if note else "") + _table(dict(result.summary()))


def _load_note(result) -> str | None:
    """One line when a closed-loop load test stopped sending early (``max_errors``)."""
    stopped = result.counters.get("load_stopped_s")
    if stopped is None:
        return None
    return (f"the load test stopped sending at t = {stopped:g} s: "
            f"{result.counters.get('load_stop_reason')}")


def _cmd_simulate(args) -> str:
    import kvsim
    _canonical_args(args)
    sets = _canonical_options(parse_sets(args.set), "--set")
    if args.util is not None and (args.num_gpu_blocks is not None
                                  or args.kv_cache_tokens is not None):
        raise _UsageError("kvsim simulate: error: --util with a pinned pool: expected either "
                          "--util F or --num-gpu-blocks/--kv-cache-tokens, not both")
    for flag, key in (("num_gpu_blocks", "num_gpu_blocks"), ("kv_cache_tokens", "kv_cache_tokens"),
                      ("engine", "engine"), ("util", "gpu_memory_utilization")):
        if getattr(args, flag) is not None:
            if key in sets:
                raise KvsimError(f"--{flag.replace('_', '-')} and --set {key}=... are both given: "
                                 f"expected one of them")
            sets[key] = getattr(args, flag)
    if args.scenario is not None:
        for flag in ("time_scale", "start_s", "duration_s", "limit"):
            if getattr(args, flag) is not None:
                raise _UsageError(f"kvsim simulate: error: --{flag.replace('_', '-')} needs "
                                  f"--trace: expected it only when replaying a trace")
        overrides = dict(sets)
        if args.model is not None or args.config is not None:
            overrides["model"] = _model_arg(args)
        if args.gpu is not None:
            overrides["gpu"] = args.gpu
        result = kvsim.run_scenario(args.scenario, **overrides)
    else:
        missing = [flag for flag, v in (("--model or --config", _model_arg(args)),
                                        ("--gpu", args.gpu)) if v is None]
        if missing:
            raise _UsageError(f"kvsim simulate: error: --trace needs {' and '.join(missing)}: "
                              f"expected e.g. --model llama-3.1-8b --gpu h100-80gb")
        for key in ("model", "gpu", "workload"):
            if key in sets:
                raise KvsimError(f"--set {key}=... is not an engine option: expected "
                                 f"--model/--config, --gpu and --trace to name them")
        if not {"gpu_memory_utilization", "num_gpu_blocks", "kv_cache_tokens"} & set(sets):
            raise _UsageError("kvsim simulate: error: --trace needs --util (or a pool pinned "
                              "with --num-gpu-blocks or --kv-cache-tokens), as capacity does: "
                              "expected e.g. --util 0.9; kvsim does not guess your server's "
                              "gpu_memory_utilization")
        trace_options = {k: getattr(args, k) for k in ("time_scale", "start_s", "duration_s",
                                                        "limit") if getattr(args, k) is not None}
        workload = kvsim.Workload.from_trace(args.trace, **trace_options)
        options = dict(sets)
        result = kvsim.simulate(workload, model=kvsim.get_model(_model_arg(args)),
                                gpu=args.gpu, **options)
    if args.json:
        note = _load_note(result)
        if note:
            print(f"kvsim: note: {note}", file=sys.stderr)
        return _dump(result.summary())
    return _summary_text(result)


def _cmd_scenarios(args) -> str:
    from .runs import scenarios
    names = scenarios.list_scenarios()
    rows = [dict(name=n, description=scenarios.describe_scenario(n)) for n in names]
    if args.json:
        return _dump(rows)
    width = max((len(n) for n in names), default=0)
    lines = []
    for r in rows:
        first = r["description"].splitlines()[0] if r["description"] else ""
        if first.startswith(r["name"] + ":"):           # the name is already in the first column
            first = first[len(r["name"]) + 1:].strip()
        lines.append(f"{r['name']:<{width}}  {first}")
    return "\n".join(lines)


def _cmd_models(args) -> str:
    from kvsim.model.presets import get_model, list_models

    from .units import format_bytes
    specs = [get_model(n) for n in list_models()]
    if args.json:
        return _dump([s.to_dict() for s in specs])
    lines = [f"{'name':<14} {'attention':<9} {'layers':>6} {'KV/token':>10} {'params':>8}  source"]
    for s in specs:
        lines.append(f"{s.name:<14} {s.attention_kind:<9} {s.kv_layers:>6} "
                     f"{format_bytes(s.kv_bytes_per_token(), 'KiB', 0):>10} "
                     f"{s.num_params / 1e9:>7.2f}B  {s.source}")
    return "\n".join(lines)


def _cmd_gpus(args) -> str:
    from kvsim.model.hardware import get_gpu, list_gpus

    from .units import format_bytes
    gpus = [get_gpu(n) for n in list_gpus()]
    if args.json:
        return _dump([g.to_dict() for g in gpus])
    lines = [f"{'name':<11} {'CUDA reports':>13} {'datasheet':>10} {'HBM peak':>12} "
             f"{'dense TFLOPS':>12} {'PCIe effective':>15}  calibration"]
    for g in gpus:
        sheet = format_bytes(g.datasheet_memory_bytes, 'GB', 0) if g.datasheet_memory_bytes else "-"
        lines.append(f"{g.name:<11} {format_bytes(g.memory_bytes, 'GiB', 2):>13} {sheet:>10} "
                     f"{g.hbm_bytes_per_s / 1e9:>9,.0f} GB/s {g.peak_flops / 1e12:>12,.1f} "
                     f"{g.pcie_bytes_per_s / 1e9:>10,.0f} GB/s  {g.calibration}")
    return "\n".join(lines)


#: The columns `kvsim sweep` prints as text (all of them with --csv or --json).
_SWEEP_COLUMNS = ("preemptions_per_1k", "mean_running", "ttft_p95_s", "itl_p99_s",
                  "share_paused_over_1s", "goodput_tok_s")


def _cmd_sweep(args) -> str:
    import kvsim
    grid = _canonical_options(parse_grid(args.grid), "--grid")
    fixed = _canonical_options(parse_sets(args.set), "--set")
    both = sorted(set(grid) & set(fixed))
    if both:
        raise KvsimError(f"--grid {both[0]} and --set {both[0]}=... are both given: expected one")
    base = dict(fixed, scenario=args.scenario)
    if args.workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(args.workers) as pool:
            table = kvsim.sweep(base, grid, seeds=args.seeds, executor=pool,
                                chunk_size=args.chunk_size)
    else:
        table = kvsim.sweep(base, grid, seeds=args.seeds)
    names = table.columns
    rows = [{k: _plain(table[k][i]) for k in names} for i in range(table.num_rows)]
    if args.json:
        return _dump(rows)
    if args.csv:
        import csv
        import io
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue().rstrip("\n")
    shown = list(grid) + (["seed"] if "seed" in names else []) + list(_SWEEP_COLUMNS)
    cells = [[k for k in shown]] + [[_fmt_value(r[k]) for k in shown] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(shown))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells)


def _cmd_exporter(args) -> str:
    import kvsim
    from kvsim.observe.exporter import serve
    result = kvsim.run_scenario(args.scenario, **_canonical_options(parse_sets(args.set), "--set"))
    serve(result, speed=args.speed, host=args.host, port=args.port,
          version=args.metrics_version, model_name=args.model_name)
    return ""


def _cmd_lint_rules(args) -> str:
    from kvsim.observe.alerts import lint_dashboard, lint_promql, lint_rules
    if args.var and args.dashboard is None:
        raise KvsimError("--var needs --dashboard: expected a Grafana dashboard to fill in")
    variables = {}
    for item in args.var:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise KvsimError(f"--var {item!r} is malformed: expected NAME=VALUE such as "
                             "model_name=llama-2-7b")
        variables[key.lstrip("$")] = value
    if args.at_speed is not None:
        if args.file is None or args.against is not None or args.json:
            raise KvsimError("--at-speed rewrites a rule file: expected FILE alone, without "
                             "--expr, --dashboard, --against or --json")
        from kvsim.observe.rule_clock import rules_at_speed
        return rules_at_speed(args.file, args.at_speed, source=args.file).rstrip("\n")
    if args.expr is not None:
        findings = lint_promql(args.expr, version=args.metrics_version)
    elif args.dashboard is not None:
        findings = lint_dashboard(args.dashboard, version=args.metrics_version,
                                  variables=variables)
    else:
        findings = lint_rules(args.file, version=args.metrics_version)
    errors = [f for f in findings if f.severity == "error" or args.strict]
    args.exit_status = 1 if errors else 0
    fired = None
    if args.against is not None:
        if args.file is None:
            raise KvsimError("--against needs a rule file: expected FILE, not --expr or "
                             "--dashboard")
        from kvsim.observe.alerts import firing_times
        from kvsim.runs.scenarios import run_scenario

        fired = firing_times(args.file, run_scenario(args.against), version=args.metrics_version)
    if args.json:
        out = [dict(rule=f.rule, kind=f.kind, severity=f.severity, text=f.text, message=f.message)
               for f in findings]
        return _dump(out if fired is None else {"findings": out, "firing_s": fired})
    lines = [("note: " if f.severity == "note" else "") + str(f) for f in findings] or [
        f"no findings (checked against vLLM {args.metrics_version}'s metrics)"]
    if fired is not None:
        lines.append(f"on scenario {args.against} (promtool, every minute):")
        for name, times in fired.items():
            span = (f"fires from {times[0] / 60:.0f} to {times[-1] / 60:.0f} min "
                    f"({len(times)} of the minutes)" if times else "never fires")
            lines.append(f"  {name}: {span}")
    return "\n".join(lines)


def _cmd_twin(args) -> str:
    from kvsim.observe.readings import Reading, between, read_source, since_start
    from kvsim.observe.twin import WHAT_IF_COLUMNS, build_twin, what_ifs
    _canonical_args(args)
    if len(args.files) > 2:
        raise _UsageError("kvsim twin: error: at most two files: expected one scrape, two "
                          "scrapes (earlier first) or one Prometheus export")
    got = [read_source(f) for f in args.files]
    if len(got) == 2:
        if not all(isinstance(g, Reading) for g in got):
            raise KvsimError("two files must be two scrapes: expected a range export alone")
        if args.uptime is not None:
            raise KvsimError("--uptime is for one scrape: expected --seconds with two")
        window = between(got[0], got[1], args.seconds)
    elif isinstance(got[0], Reading):
        if args.seconds is not None:
            raise KvsimError("--seconds is for two scrapes: expected --uptime with one")
        window = since_start(got[0], args.uptime)
    else:
        if args.seconds is not None or args.uptime is not None:
            raise KvsimError("a range export carries its own times: expected neither "
                             "--seconds nor --uptime")
        window = got[0]
    twin = build_twin(window, model=args.model, gpu=args.gpu, seed=args.seed,
                      duration_s=args.duration, fit_scale=not args.no_fit)
    trace = args.trace_out or "TWIN.csv"
    if args.trace_out is not None:
        try:
            twin.workload().to_csv(args.trace_out)
        except OSError as e:
            raise KvsimError(f"--trace-out {args.trace_out!r}: cannot write it "
                             f"({e.strerror}): expected a writable path") from None
    rows = [] if args.no_what_ifs else what_ifs(twin)
    if args.json:
        out = twin.to_dict()
        out["command"] = twin.command(trace)
        out["what_ifs"] = rows
        out["notes"] = list(window.notes)
        return _dump(out)
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
        lines.append("\nthe server showed: " + ", ".join(f"{k} {_fmt_value(v)}"
                                                         for k, v in shown.items()))
    lines.append(f"\nthe twin as a command{'' if args.trace_out else ' (--trace-out TWIN.csv writes its traffic)'}:")
    lines.append("  " + twin.command(trace))
    if rows:
        lines.append(f"\nwhat-ifs (the twin, seed {twin.seed}, {twin.duration_s:,.6g} s measured"
                     + (f" after {twin.warmup_s:g} s of warm-up" if twin.warmup_s else
                        " from a cold start") + "):")
        cols = ["case"] + list(WHAT_IF_COLUMNS)
        cells = [cols] + [[r["case"]] + [_fmt_value(r[c]) for c in WHAT_IF_COLUMNS]
                          for r in rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
        lines += ["  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(row, widths)))
                  for row in cells]
    return "\n".join(lines)


def _cmd_missions(args) -> str:
    from kvsim.lab.missions import get_mission, ticket

    from .lab import progress as mp

    if args.reset:
        path = mp.reset(args.progress_file)
        return _dump({"reset": str(path)}) if args.json else f"progress reset ({path})"
    if args.name is not None:
        told = mp.set_name(args.name, args.progress_file)
        return _dump(mp.load(args.progress_file)) if args.json else \
            f"{told}\n{mp.progress_text(args.progress_file)}"
    if args.verify is not None:
        v = mp.verify(args.verify)
        if args.json:                 # the whole verdict, and a non-zero status if rejected
            args.exit_status = 0 if v["ok"] else 1
            return _dump(v)
        if not v["ok"]:               # bad checksum, another room, not confirmed: one line
            raise KvsimError(mp.rejection(v))
        shown = ", ".join(f"{k}={val}" for k, val in v["settings"].items())
        who = f"made for {v['name']!r}" if v["name"] else "made without a name"
        room = ("made with this room's key" if v["room"] else
                f"room tag not checked (${mp.ROOM_KEY_VAR} is not set)" if v["room_tag"] else
                "no room tag")
        return (f"{v['code']}: mission {v['mission']}, {v['stars']} star(s) claimed, confirmed "
                f"({shown}); {who}; {room}")
    if args.leaderboard is not None:
        where = f"--leaderboard {args.leaderboard!r}"
        from .files import read_text_file
        text = read_text_file(args.leaderboard, what="--leaderboard",
                              expected="a text file of 'name CODE' lines",
                              max_bytes=LEADERBOARD_MAX_BYTES)
        lines = text.splitlines()
        try:
            rows = mp.leaderboard(lines)
        except KvsimError as e:
            raise KvsimError(f"{where}: {e}") from None
        why = [w for r in rows for w in r["why"]]
        if why:                       # the table still prints; the rejections go to stderr
            args.exit_status = 1
            for w in why:
                print(f"kvsim: rejected: {_one_line(w)}", file=sys.stderr)
        return _dump(rows) if args.json else \
            mp.leaderboard_text(rows, room=mp.resolve_room_key() is not None)
    if args.ticket is not None:
        m = get_mission(args.ticket)
        return _dump({"mission": m.number, "ticket": ticket(m)}) if args.json else ticket(m)
    if args.export is not None:
        written = mp.export_progress(args.export or None, path=args.progress_file)
        return _dump({"exported": written}) if args.json else written
    if args.import_file is not None:
        summary = mp.import_progress(args.import_file, path=args.progress_file)
        where = str(mp.progress_path(args.progress_file))
        if args.json:
            return _dump({"imported_from": args.import_file, "progress_file": where,
                          "missions": {str(n): v for n, v in summary.items()}})
        now = mp.load(args.progress_file)["missions"]
        lines = [f"mission {n}: {v} ({(now.get(str(n)) or {}).get('stars', 0)} star(s) now)"
                 for n, v in summary.items()]
        return "\n".join(lines + [f"progress in {where} (merged from {args.import_file})"])
    if args.json:
        return _dump(mp.load(args.progress_file))
    return mp.progress_text(args.progress_file)


_COMMANDS = {"capacity": _cmd_capacity, "simulate": _cmd_simulate, "sweep": _cmd_sweep,
             "missions": _cmd_missions,
             "scenarios": _cmd_scenarios, "models": _cmd_models, "gpus": _cmd_gpus,
             "exporter": _cmd_exporter, "lint-rules": _cmd_lint_rules, "twin": _cmd_twin}


def _one_line(message: str) -> str:
    return " ".join(str(message).split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 bad input)."""
    parser = build_parser()
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:          # --help and --version
            return exc.code if isinstance(exc.code, int) else 0
        out = _COMMANDS[args.command](args)
    except _UsageError as exc:
        print(_one_line(exc), file=sys.stderr)
        return 2
    except KvsimError as exc:
        print(f"kvsim: error: {_one_line(exc)}", file=sys.stderr)
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
