"""``kvsim exporter``: replay a scenario as a live vLLM ``/metrics`` endpoint (chapter 4)."""
from __future__ import annotations

import argparse

from kvsim.errors import KvsimError, check_float, check_int

from .arguments import Subcommands, add_subcommand, checked, metric_set
from .names import canonical_options
from .values import parse_sets

__all__ = ["add_parser", "run", "EXAMPLES", "DEFAULT_PORT"]

#: The port ``kvsim exporter`` listens on unless told (kvsim.observe.exporter.DEFAULT_PORT, not
#: imported here so that `kvsim --help` stays fast; a test checks they agree). Not vLLM's
#: 8000, so that the exporter can run beside a real server.
DEFAULT_PORT = 9188

#: Real command lines, shown at the end of ``kvsim exporter --help``.
EXAMPLES = (
    "kvsim exporter --scenario incident-day --speed 20",
    "kvsim exporter --scenario mission-1-storm --speed 10 --port 9400 --vllm-version v1-0.10",
    "kvsim exporter --scenario belgavi --set output_mean=600 --port 0",
)

_DESCRIPTION = (
    "Run the scenario, then serve what the simulated vLLM server's /metrics\n"
    "would show, replayed live, for a real Prometheus to scrape. Once it listens it\n"
    "prints one line on stdout (\"kvsim exporter: serving /metrics on http://...\"),\n"
    "so a script can wait for it; /health answers \"ok\" while it serves; Ctrl-C or\n"
    "SIGTERM stops it.\n\n"
    "Every series is in simulated time. --speed N replays N simulated seconds per\n"
    "wall-clock second, so every rate Prometheus computes (rate(), irate(), deriv())\n"
    "is N times the simulated server's rate per second, and every window and `for`\n"
    "(wall-clock time to Prometheus) covers N times as much simulated time: at\n"
    "--speed 20, rate(x[5m]) is 20 times x's rate over 100 simulated minutes, and\n"
    "increase(x[5m]) counts those 100 minutes. Divide a rate by N to read it per\n"
    "simulated second. Gauges keep their values, only move N times as fast. At\n"
    "--speed 1 the rates and the book's alert rules mean what they say.")


def add_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Register ``exporter`` and its flags."""
    parser = add_subcommand(subparsers, "exporter", examples=EXAMPLES, description=_DESCRIPTION,
                            help="replay a scenario as a live vLLM /metrics endpoint")
    parser.add_argument("--scenario", required=True, metavar="NAME", help="a scenario")
    parser.add_argument("--speed", type=checked(lambda v: check_float("speed", v, min=0.01,
                                                                      max=100_000)),
                        default=1.0, metavar="N", help="simulated seconds per wall-clock second; "
                        "multiplies every rate by N (default 1)")
    parser.add_argument("--port", type=checked(lambda v: check_int("port", v, min=0, max=65535)),
                        default=DEFAULT_PORT, metavar="P", help=f"TCP port (default "
                        f"{DEFAULT_PORT}, beside vLLM's 8000; 0 picks a free one, named on the "
                        f"ready line)")
    parser.add_argument("--host", default="127.0.0.1", metavar="H",
                        help="address to listen on (default 127.0.0.1, this machine only)")
    parser.add_argument("--vllm-version", dest="metrics_version", default="v1", metavar="V",
                        type=metric_set,
                        help="the vLLM metric names to speak: v1 (default), v1-0.10 or v0")
    parser.add_argument("--model-name", default=None, metavar="NAME",
                        help="the model_name label (default: the model preset's name)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a scenario parameter or engine option (repeatable)")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> str:
    """Run the scenario and serve it until stopped; nothing more to print."""
    from kvsim.engine.options import ADMISSION_NAMES
    from kvsim.observe.exporter import serve
    from kvsim.runs.scenarios import run_scenario
    options = canonical_options(parse_sets(args.set), "--set")
    admission = options.get("admission", "optimistic")
    if admission in ADMISSION_NAMES and admission != "optimistic":   # others: the engine's error
        # The other policies are SGLang's and TensorRT-LLM's schedulers, whose servers expose
        # metrics of their own: vLLM's families for them would describe no real server.
        raise KvsimError(f"--set admission={admission!r} models another engine's scheduler "
                         "(SGLang's or TensorRT-LLM's), and the exporter speaks vLLM's metric "
                         "families: expected admission='optimistic' (vLLM's), or kvsim simulate "
                         "for that engine's run")
    result = run_scenario(args.scenario, **options)
    serve(result, speed=args.speed, host=args.host, port=args.port,
          version=args.metrics_version, model_name=args.model_name)
    return ""
