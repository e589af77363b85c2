"""The values the command line reads from text: ``--set``, ``--grid`` and ``--seeds``.

``--set key=value`` passes an engine option; the value is read as an integer,
a float, ``true``/``false``, ``none`` or else a string. A malformed item is a
:class:`~kvsim.errors.KvsimError` naming it and what is expected.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TypeAlias

from kvsim.errors import KvsimError

__all__ = ["parse_set_value", "parse_sets", "parse_seeds", "parse_grid", "GRID_VALUES_MAX",
           "SetValue"]

#: A value read from the command line: an int, a float, true/false, none, or the text itself.
SetValue: TypeAlias = bool | int | float | str | None

#: The most values one ``--grid`` key takes (kvsim.runs.sweeps.MAX_GRID_VALUES, not imported
#: here so that `kvsim --help` stays fast; a test checks they agree).
GRID_VALUES_MAX = 1_000

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT = re.compile(r"^[+-]?\d[\d_]*$")

#: ``--set`` options whose value is always a string.
_TEXT_OPTIONS = frozenset({"vllm_version"})


def parse_set_value(text: str) -> SetValue:
    """Read a ``--set`` value: int, float, true/false, none, or the string itself."""
    stripped = text.strip()
    low = stripped.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if _INT.match(stripped):
        return int(stripped.replace("_", ""))
    try:
        number = float(stripped)
    except ValueError:
        return text
    if not math.isfinite(number):
        raise KvsimError(f"--set value {text!r} is not finite: expected an int, a finite float, "
                         f"true, false, none or a string")
    return number


def parse_sets(items: Sequence[str] | None) -> dict[str, SetValue]:
    """Turn ``["key=value", ...]`` into a dict; a malformed or repeated item is a KvsimError."""
    out: dict[str, SetValue] = {}
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
    stripped = str(text).strip()
    span = re.fullmatch(r"(\d+)\s*-\s*(\d+)", stripped)
    if span:
        low, high = int(span.group(1)), int(span.group(2))
        if high < low or high - low >= 10_000:
            raise KvsimError(f"--seeds {text!r}: expected a range lo-hi with lo <= hi and at most "
                             f"10,000 seeds")
        return list(range(low, high + 1))
    parts = [part.strip() for part in stripped.split(",")]
    if not parts or not all(part.isdigit() for part in parts):
        raise KvsimError(f"--seeds {text!r} is malformed: expected 0-4, 0,3,7 or 5")
    return [int(part) for part in parts]


def parse_grid(items: Sequence[str] | None) -> dict[str, list[SetValue]]:
    """Turn ``["key=v1,v2", ...]`` into a grid; values are read as by ``--set``."""
    grid: dict[str, list[SetValue]] = {}
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
        grid[key] = [parse_set_value(part) for part in parts]
    return grid
