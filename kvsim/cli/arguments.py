"""The parser every subcommand shares: one-line usage errors, ``--version``, checked types.

A bad value is judged by kvsim's own validators (:mod:`kvsim.errors`), wrapped
as argparse types by :func:`checked`, so the command line, Python and the
book's widgets say the same thing about the same value.
"""
from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Sequence
from typing import NoReturn, TypeAlias, TypeVar

from kvsim.errors import (
    KvsimError,
    check_choice,
    check_float,
    check_gpu_memory_utilization,
    check_int,
    check_num_gpu_blocks,
)

__all__ = ["CLI_RULES", "UsageError", "Parser", "VersionAction", "Subcommands", "add_subcommand",
           "checked",
           "positive_float", "add_quiet_flag",
           "add_pool_flags", "metric_set", "utilization", "block_size", "seq_len", "tensor_parallel",
           "max_model_len"]

#: The rules every subcommand keeps (shown by ``kvsim --help``; see :mod:`kvsim.cli`).
CLI_RULES = (
    "Every subcommand: --util F is required wherever the pool is sized from memory "
    "(capacity, simulate --trace) unless --num-gpu-blocks or --kv-cache-tokens pins it "
    "(kvsim does not guess your server's utilisation); a --scenario carries its own. "
    "Defaults: --engine v1, block size 16, tensor parallelism 1, as kvsim.simulate. "
    "Model and GPU names are the presets' lower-case names (another case works, with a "
    "note on stderr). A bad value exits 2 with one line naming it and the valid range."
)


#: What ``add_subparsers()`` returns: each subcommand module registers its parser on it.
Subcommands: TypeAlias = "argparse._SubParsersAction[Parser]"
#: What a checked flag's value is (an int, a float, a name ...).
Value = TypeVar("Value")


class UsageError(Exception):
    """An argparse usage error, turned into one line and exit status 2 by :func:`kvsim.cli.main`."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one :class:`UsageError` line, not usage and exit."""

    def error(self, message: str) -> NoReturn:  # argparse prints usage and exits; one line here
        if "required" in message or "invalid choice" in message:
            message += f" (see `{self.prog} --help`)"
        raise UsageError(f"{self.prog}: error: {message}")


class VersionAction(argparse.Action):
    """``kvsim --version``: ``kvsim X.Y.Z`` from the installed distribution's metadata, then
    ``engine: ...``, which engine runs and why (:func:`kvsim.engine.build_note`)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> NoReturn:
        from kvsim import __version__  # looked up only when asked for
        from kvsim.engine import build_note

        print(f"kvsim {__version__}\nengine: {build_note()}")
        parser.exit()


def add_subcommand(subparsers: Subcommands, name: str, *, help: str, examples: Sequence[str],
                   description: str | None = None, rules: bool = False) -> argparse.ArgumentParser:
    """A subcommand's parser with the conventions every one keeps: ``--version`` prints
    kvsim's version, and the help ends with ``examples`` (real command lines, kept as
    written; a test parses each one), after :data:`CLI_RULES` with ``rules=True`` (the
    subcommands that size a pool)."""
    if not examples:
        raise ValueError(f"kvsim {name}: expected at least one example for its help")
    epilog = (textwrap.fill(CLI_RULES, width=78) + "\n\n" if rules else "") + "examples:\n" \
        + "\n".join(f"  {line}" for line in examples)
    parser = subparsers.add_parser(name, help=help, description=description, epilog=epilog,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=VersionAction, help="print kvsim's version and exit")
    return parser


def add_quiet_flag(parser: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress line on stderr (there is none anyway when it is not a terminal)."""
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress line on stderr (shown only on a terminal)")


def checked(check: Callable[[str], Value]) -> Callable[[str], Value]:
    """Wrap a kvsim validator as an argparse ``type`` whose message is kvsim's."""
    def convert(text: str) -> Value:
        try:
            return check(text)
        except KvsimError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = getattr(check, "__name__", "value")
    return convert


def positive_float(name: str) -> Callable[[str], float]:
    """An argparse type for a float above 0, named ``name`` in its error."""
    return checked(lambda v: check_float(name, v, min=0, min_open=True))


utilization = checked(check_gpu_memory_utilization)
block_size = checked(lambda s: check_int("block_size", s, min=1))
seq_len = checked(lambda s: check_int("seq_len", s, min=1))
max_model_len = checked(lambda s: check_int("max_model_len", s, min=1))
tensor_parallel = checked(lambda s: check_int("tensor_parallel_size", s, min=1, max=1024))
_num_blocks = checked(check_num_gpu_blocks)
_log_tokens = checked(lambda s: check_int("kv_cache_tokens", s, min=1, max=10**12))
_engine = checked(lambda s: check_choice("engine", s, ["v1", "v0"]))
#: The vLLM metric-name sets ``exporter`` speaks and ``lint-rules`` checks against.
metric_set = checked(lambda v: check_choice("vllm_version", v, ["v1", "v1-0.10", "v0"]))


def add_pool_flags(parser: argparse.ArgumentParser) -> None:
    """--num-gpu-blocks / --kv-cache-tokens: pin the pool to a real server's start-up log."""
    pool = parser.add_mutually_exclusive_group()
    pool.add_argument("--num-gpu-blocks", type=_num_blocks, default=None, metavar="N",
                      help="usable KV blocks of your server (instead of computing the pool)")
    pool.add_argument("--kv-cache-tokens", type=_log_tokens, default=None, metavar="N",
                      help="N from vLLM's start-up line 'GPU KV cache size: N tokens'")
    parser.add_argument("--engine", type=_engine, default=None, metavar="E",
                        help="v1 (default, vLLM V1) or v0")
