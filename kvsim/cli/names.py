"""Model and GPU names as the presets spell them; another case is read, with a note."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import TypeVar

from .arguments import UsageError
from .values import SetValue

__all__ = ["model_arg", "named_model", "canonical", "canonical_args", "canonical_options"]


#: ``--set`` values (one per option) or ``--grid`` values (a list per option).
Options = TypeVar("Options", SetValue, list[SetValue])


def model_arg(args: argparse.Namespace) -> str | None:
    """What ``--config`` or ``--model`` names (the config file wins: they exclude each other)."""
    named: str | None = args.config if args.config is not None else args.model
    return named


def named_model(args: argparse.Namespace) -> str:
    """:func:`model_arg` where the parser requires ``--model`` or ``--config``."""
    named = model_arg(args)
    if named is None:
        raise UsageError("kvsim: error: no model: expected --model NAME or --config PATH")
    return named


def canonical(flag: str, value: SetValue, names: Sequence[str]) -> SetValue:
    """A preset name in its canonical spelling; another case is read with a note on stderr."""
    if not isinstance(value, str) or value in names:
        return value
    match = [n for n in names if n.lower() == value.strip().lower()]
    if not match:
        return value                      # the API's own check names it and what is valid
    print(f"kvsim: note: {flag} {value!r} is read as {match[0]!r}, the canonical name "
          f"(write it so to silence this note)", file=sys.stderr)
    return match[0]


def canonical_args(args: argparse.Namespace) -> None:
    """``--model`` and ``--gpu`` in the presets' canonical spelling (see :func:`canonical`)."""
    from kvsim.model.hardware import list_gpus
    from kvsim.model.presets import list_models
    if getattr(args, "model", None) is not None:
        args.model = canonical("--model", args.model, list_models())
    if getattr(args, "gpu", None) is not None:
        args.gpu = canonical("--gpu", args.gpu, list_gpus())


def canonical_options(options: Mapping[str, Options], flag: str) -> dict[str, Options]:
    """``model=`` and ``gpu=`` in ``--set``/``--grid`` values, canonically spelt."""
    from kvsim.model.hardware import list_gpus
    from kvsim.model.presets import list_models
    out = dict(options)
    for key, names in (("model", list_models()), ("gpu", list_gpus())):
        if key in out:
            value = out[key]
            out[key] = [canonical(f"{flag} {key}=", x, names) for x in value] \
                if isinstance(value, list) else canonical(f"{flag} {key}=", value, names)
    return out
