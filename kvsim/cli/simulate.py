"""``kvsim simulate``: run a scenario or replay a trace against a configuration (chapter 4).

With ``--trace``, ``--util`` is required unless the pool is pinned
(``--num-gpu-blocks`` or ``--kv-cache-tokens``), as for ``capacity``: kvsim
does not guess a server's ``gpu_memory_utilization``. A ``--scenario``
carries its own.
"""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from kvsim.errors import KvsimError, check_float, check_int

from .arguments import Subcommands, UsageError, add_pool_flags, add_subcommand, checked, utilization
from .names import canonical_args, canonical_options, model_arg, named_model
from .output import dump, table
from .values import SetValue, parse_sets

if TYPE_CHECKING:
    from kvsim.engine.result import SimResult

__all__ = ["add_parser", "run", "summary_text", "load_note", "TIME_SCALE_MIN", "TIME_SCALE_MAX",
           "EXAMPLES"]

#: Real command lines, shown at the end of ``kvsim simulate --help`` (the trace is the public
#: Azure LLM inference trace, AzureLLMInferenceTrace_conv.csv).
EXAMPLES = (
    "kvsim simulate --scenario belgavi --set max_num_seqs=16",
    "kvsim simulate --scenario belgavi --util 0.7 --json",
    "kvsim simulate --trace AzureLLMInferenceTrace_conv.csv --model llama-3.1-8b "
    "--gpu h100-80gb --util 0.9 --limit 2000",
)

#: ``--time-scale``'s range (kvsim.traffic.workload.TIME_SCALE_RANGE, not imported here so
#: that `kvsim --help` stays fast; a test checks they agree).
TIME_SCALE_MIN, TIME_SCALE_MAX = 0.001, 1000

#: The flags that only a trace replay reads (a scenario has its own traffic).
_TRACE_FLAGS = ("time_scale", "start_s", "duration_s", "limit")


def add_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Register ``simulate`` and its flags."""
    parser = add_subcommand(subparsers, "simulate", examples=EXAMPLES, rules=True,
                            help="run a scenario or replay a trace; print the summary")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--scenario", metavar="NAME", help="a scenario (see `kvsim scenarios`)")
    what.add_argument("--trace", metavar="PATH", help="an Azure LLM inference trace CSV")
    model_source = parser.add_mutually_exclusive_group()
    model_source.add_argument("--model", help="model preset name")
    model_source.add_argument("--config", metavar="PATH", help="a Hugging Face config.json")
    parser.add_argument("--gpu", help="GPU preset name")
    parser.add_argument("--util", type=utilization, default=None, metavar="F",
                        help="gpu_memory_utilization in (0, 1] (with --trace: required unless the "
                             "pool is pinned, as for capacity; a --scenario has its own)")
    parser.add_argument("--time-scale", default=None, metavar="F",
                        type=checked(lambda v: check_float(
                            "time_scale", v, min=TIME_SCALE_MIN, max=TIME_SCALE_MAX,
                            why="a thousandth to a thousand times the trace's rate")),
                        help="with --trace: divide arrival times by F (2 = twice the rate; "
                             "0.001 to 1000)")
    parser.add_argument("--start-s", default=None, metavar="S",
                        type=checked(lambda v: check_float("start_s", v, min=0, max=10**7)),
                        help="with --trace: start of the replayed window, in trace seconds")
    parser.add_argument("--duration-s", default=None, metavar="S",
                        type=checked(lambda v: check_float("duration_s", v, min=0, min_open=True,
                                                           max=10**7)),
                        help="with --trace: length of the replayed window, in trace seconds")
    parser.add_argument("--limit", type=checked(lambda v: check_int("limit", v, min=1)),
                        default=None, metavar="N", help="with --trace: replay at most N requests")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an engine option of kvsim.simulate (repeatable)")
    add_pool_flags(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run)
    return parser


def summary_text(result: SimResult) -> str:
    """The summary as a table, under two lines that say what was simulated."""
    from kvsim.units import format_bytes
    config = result.config
    pool = config["num_gpu_blocks"] * config["block_bytes"]
    head = (f"# {config['model']} on {config['gpu']}, engine {config['engine']}: "
            f"{config['num_gpu_blocks']:,} KV "
            f"blocks of {config['block_size']} tokens ({format_bytes(pool, 'GB')} = "
            f"{format_bytes(pool, 'GiB')}), max_num_seqs {config['max_num_seqs']}, "
            f"max_num_batched_tokens {config['max_num_batched_tokens']:,}, "
            f"{config['admission']} admission, "
            f"{config['preemption_mode']} preemption, prefix caching "
            f"{'on' if config['enable_prefix_caching'] else 'off'}\n"
            f"# measured from t = {config['warmup_s']:g} s to the end of the run "
            f"(times in seconds, fractions in 0..1)\n")
    note, tier = load_note(result), tier_line(result)
    return (head + (f"# {tier}\n" if tier else "") + (f"# note: {note}\n" if note else "")
            + table(dict(result.summary())))


def tier_line(result: SimResult) -> str | None:
    """One line on the host tier, when one ran: its size and what it loaded, stored, dropped."""
    config, counters = result.config, result.counters
    if config.get("use_kv_cache_manager_v2"):
        size = config.get("host_cache_size")
        return (f"host tier: TensorRT-LLM V2's host_cache_size="
                f"{'auto' if size is None else f'{size:,} bytes'}, "
                f"{counters['trtllm_host_capacity_blocks']:,} blocks; "
                f"{counters['trtllm_suspensions']:,} requests suspended to it, "
                f"{int(result.requests['loaded_tokens'].sum()):,} tokens resumed from it "
                f"(over the whole run)")
    if result.host_tier is None:
        return None
    which = (f"vLLM's kv_offloading_size={config['kv_offloading_size']:g} GiB"
             if config.get("kv_offloading_size") is not None else
             f"SGLang's HiCache (hicache_size={config['hicache_size']} GB)"
             if config["hicache_size"] else
             f"SGLang's HiCache (hicache_ratio={config['hicache_ratio']:g})")
    loaded = int(result.requests["loaded_tokens"].sum())
    return (f"host tier: {which}, {counters['kv_offload_capacity_blocks']:,} blocks; "
            f"{loaded:,} tokens loaded back, {counters['kv_offload_stored_blocks']:,} blocks "
            f"stored, {counters['kv_offload_allocation_failures']:,} stores dropped for room "
            f"(over the whole run)")


def load_note(result: SimResult) -> str | None:
    """One line when a closed-loop load test stopped sending early (``max_errors``)."""
    stopped = result.counters.get("load_stopped_s")
    if stopped is None:
        return None
    return (f"the load test stopped sending at t = {stopped:g} s: "
            f"{result.counters.get('load_stop_reason')}")


def _engine_options(args: argparse.Namespace) -> dict[str, SetValue]:
    """``--set`` and the pool/engine flags as one dict of engine options (each named once)."""
    sets = canonical_options(parse_sets(args.set), "--set")
    if args.util is not None and (args.num_gpu_blocks is not None
                                  or args.kv_cache_tokens is not None):
        raise UsageError("kvsim simulate: error: --util with a pinned pool: expected either "
                         "--util F or --num-gpu-blocks/--kv-cache-tokens, not both")
    for flag, key in (("num_gpu_blocks", "num_gpu_blocks"), ("kv_cache_tokens", "kv_cache_tokens"),
                      ("engine", "engine"), ("util", "gpu_memory_utilization")):
        if getattr(args, flag) is not None:
            if key in sets:
                raise KvsimError(f"--{flag.replace('_', '-')} and --set {key}=... are both given: "
                                 f"expected one of them")
            sets[key] = getattr(args, flag)
    return sets


def _run_scenario(args: argparse.Namespace, sets: dict[str, SetValue]) -> SimResult:
    from kvsim.runs.scenarios import run_scenario
    for flag in _TRACE_FLAGS:
        if getattr(args, flag) is not None:
            raise UsageError(f"kvsim simulate: error: --{flag.replace('_', '-')} needs "
                             f"--trace: expected it only when replaying a trace")
    overrides = dict(sets)
    if args.model is not None or args.config is not None:
        overrides["model"] = model_arg(args)
    if args.gpu is not None:
        overrides["gpu"] = args.gpu
    return run_scenario(args.scenario, **overrides)


def _replay_trace(args: argparse.Namespace, sets: dict[str, SetValue]) -> SimResult:
    from kvsim.engine.loop import simulate
    from kvsim.model.presets import get_model
    from kvsim.traffic.workload import Workload
    missing = [flag for flag, v in (("--model or --config", model_arg(args)),
                                    ("--gpu", args.gpu)) if v is None]
    if missing:
        raise UsageError(f"kvsim simulate: error: --trace needs {' and '.join(missing)}: "
                         f"expected e.g. --model llama-3.1-8b --gpu h100-80gb")
    for key in ("model", "gpu", "workload"):
        if key in sets:
            raise KvsimError(f"--set {key}=... is not an engine option: expected "
                             f"--model/--config, --gpu and --trace to name them")
    if not {"gpu_memory_utilization", "num_gpu_blocks", "kv_cache_tokens"} & set(sets):
        raise UsageError("kvsim simulate: error: --trace needs --util (or a pool pinned "
                         "with --num-gpu-blocks or --kv-cache-tokens), as capacity does: "
                         "expected e.g. --util 0.9; kvsim does not guess your server's "
                         "gpu_memory_utilization")
    trace_options = {k: getattr(args, k) for k in _TRACE_FLAGS if getattr(args, k) is not None}
    workload = Workload.from_trace(args.trace, **trace_options)
    return simulate(workload, model=get_model(named_model(args)), gpu=args.gpu, **dict(sets))


def run(args: argparse.Namespace) -> str:
    """The run's summary as a table under a header (or JSON)."""
    canonical_args(args)
    sets = _engine_options(args)
    result = _run_scenario(args, sets) if args.scenario is not None else _replay_trace(args, sets)
    if args.json:
        note = load_note(result)
        if note:
            print(f"kvsim: note: {note}", file=sys.stderr)
        return dump(result.summary())
    return summary_text(result)
