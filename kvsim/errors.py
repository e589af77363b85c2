"""Input validation with one-line errors.

Every public function of kvsim validates what it is given and raises
:class:`KvsimError` (a ``ValueError``) whose message names the offending
value *and* the valid range, e.g.::

    gpu_memory_utilization=1.5 is out of range: expected a number in (0, 1]

The CLI turns a ``KvsimError`` into exit status 2 and that single line.
"""
from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Iterable

__all__ = ["KvsimError", "check_int", "check_float", "check_choice"]


class KvsimError(ValueError):
    """A bad input. The message is one line naming the value and what is valid."""


def _fmt_range(lo, hi, lo_open: bool, hi_open: bool) -> str:
    if lo is None and hi is None:
        return "any finite number"
    if hi is None:
        return f"{'>' if lo_open else '>='} {lo}"
    if lo is None:
        return f"{'<' if hi_open else '<='} {hi}"
    return f"{'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"


def check_int(name: str, value, *, min: int | None = None, max: int | None = None) -> int:
    """Return ``value`` as ``int`` or raise a :class:`KvsimError` naming ``name``.

    Booleans, floats with a fraction, NaN and strings that are not integers
    are refused.
    """
    if isinstance(value, bool) or value is None:
        ok = False
    elif isinstance(value, Integral):
        ok = True
        value = int(value)
    elif isinstance(value, Real) and math.isfinite(float(value)) and float(value).is_integer():
        ok = True
        value = int(value)
    elif isinstance(value, str):
        try:
            value = int(value.strip().replace("_", ""))
            ok = True
        except ValueError:
            ok = False
    else:
        ok = False
    rng = _fmt_range(min, max, False, False)
    if not ok:
        raise KvsimError(f"{name}={value!r} is not a whole number: expected an integer {rng}")
    if (min is not None and value < min) or (max is not None and value > max):
        raise KvsimError(f"{name}={value} is out of range: expected an integer {rng}")
    return value


def check_float(name: str, value, *, min: float | None = None, max: float | None = None,
                min_open: bool = False, max_open: bool = False) -> float:
    """Return ``value`` as a finite ``float`` within the given bounds.

    ``min_open``/``max_open`` make a bound exclusive, so utilisation is
    ``check_float("gpu_memory_utilization", u, min=0, max=1, min_open=True)``.
    """
    rng = _fmt_range(min, max, min_open, max_open)
    if isinstance(value, bool) or value is None:
        raise KvsimError(f"{name}={value!r} is not a number: expected a number {rng}")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise KvsimError(f"{name}={value!r} is not a number: expected a number {rng}") from None
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise KvsimError(f"{name}={value!r} is not a number: expected a number {rng}") from None
    if not math.isfinite(x):
        raise KvsimError(f"{name}={value!r} is not finite: expected a number {rng}")
    if min is not None and (x < min or (min_open and x == min)):
        raise KvsimError(f"{name}={value} is out of range: expected a number {rng}")
    if max is not None and (x > max or (max_open and x == max)):
        raise KvsimError(f"{name}={value} is out of range: expected a number {rng}")
    return x


def check_choice(name: str, value, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices`` (case-sensitive)."""
    choices = list(choices)
    if value not in choices:
        raise KvsimError(f"{name}={value!r} is not known: expected one of {', '.join(map(str, choices))}")
    return value
