"""Input validation with one-line errors.

Every public function of kvsim validates what it is given and raises
:class:`KvsimError` (a ``ValueError``) whose message names the offending
value *and* the valid range, e.g.::

    gpu_memory_utilization=1.5 is out of range: expected a number in (0, 1]

The CLI turns a ``KvsimError`` into exit status 2 and that single line; the
book's widgets show the same line in their output area. These helpers are the
one place a value is judged, so a value means the same whether it reaches kvsim
through the API, the CLI or a widget.

**Whole numbers given as floats.** :func:`check_int` accepts a float only when
it is a whole number that a float holds exactly (``4e9`` is 4,000,000,000; at
most :data:`EXACT_FLOAT_INT` = 2**53 in size); ``1.5`` and ``1e99`` are refused
("is not a whole number"): above 2**53 a float no longer names one integer, so
taking it would be a guess.
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable
from numbers import Integral, Real

__all__ = ["KvsimError", "check_int", "check_float", "check_choice", "EXACT_FLOAT_INT",
           "check_gpu_memory_utilization", "check_num_gpu_blocks", "NUM_GPU_BLOCKS_MAX"]

#: The largest whole number a float is taken for by :func:`check_int` (2**53: every
#: integer up to it is a float exactly).
EXACT_FLOAT_INT = 2**53


class KvsimError(ValueError):
    """A bad input. The message is one line naming the value and what is valid."""


def _fmt_range(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool) -> str:
    if lo is None and hi is None:
        return "any finite number"
    if hi is None:
        return f"{'>' if lo_open else '>='} {lo}"
    if lo is None:
        return f"{'<' if hi_open else '<='} {hi}"
    return f"{'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"


def _why(why: str | None) -> str:
    return f" ({why})" if why else ""


def _shown(value: object) -> str:
    """A value as a one-line error shows it: its repr, an integer of more than 30 digits by
    its size (Python cannot even print one of more than 4,300), anything long cut short."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        digits = len(str(abs(value))) if abs(value) < 10**4000 else "over 4,000"
        return f"<{'a negative' if value < 0 else 'an'} integer of {digits} digits>"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_int(name: str, value: object, *, min: int | None = None, max: int | None = None,
              why: str | None = None) -> int:
    """Return ``value`` as ``int`` or raise a :class:`KvsimError` naming ``name``.

    Booleans, floats with a fraction or above 2**53 in size (see the module
    docstring), NaN and strings that are not integers are refused. ``why``, if
    given, is appended to the message in brackets (what the range comes from).
    """
    shown = value                                   # as typed: 0, '0' and 4e9 read so
    if isinstance(value, str) and len(value) > 80:
        shown = value[:77] + "..."
    elif isinstance(value, int) and not isinstance(value, bool):
        shown = _shown(value)
    number: int | None = None                       # the whole number, once it is one
    if isinstance(value, bool) or value is None:
        pass
    elif isinstance(value, Integral):
        number = int(value)
    elif isinstance(value, Real) and math.isfinite(float(value)) and float(value).is_integer() \
            and abs(float(value)) <= EXACT_FLOAT_INT:
        number = int(math.trunc(value))             # whole already: as int(value) gives it
    elif isinstance(value, str):
        with contextlib.suppress(ValueError):     # not a number, or more than 4,300 digits
            number = int(value.strip().replace("_", ""))
    rng = _fmt_range(min, max, False, False) + _why(why)
    if number is None and isinstance(shown, float) and math.isfinite(shown) and shown.is_integer():
        raise KvsimError(f"{name}={shown!r} is not an exact whole number (a float above 2**53): "
                         f"expected an integer {rng}")
    if number is None:
        raise KvsimError(f"{name}={_shown(value)} is not a whole number: expected an integer "
                         f"{rng}")
    if (min is not None and number < min) or (max is not None and number > max):
        raise KvsimError(f"{name}={shown} is out of range: expected an integer {rng}")
    return number


def check_float(name: str, value: object, *, min: float | None = None, max: float | None = None,
                min_open: bool = False, max_open: bool = False, why: str | None = None) -> float:
    """Return ``value`` as a finite ``float`` within the given bounds.

    ``min_open``/``max_open`` make a bound exclusive, so utilisation is
    ``check_float("gpu_memory_utilization", u, min=0, max=1, min_open=True)``.
    ``why``, if given, is appended to the message in brackets.
    """
    rng = _fmt_range(min, max, min_open, max_open) + _why(why)
    if isinstance(value, bool) or value is None:
        raise KvsimError(f"{name}={value!r} is not a number: expected a number {rng}")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise KvsimError(f"{name}={_shown(value)} is not a number: expected a number "
                             f"{rng}") from None
    try:
        x = float(value)     # type: ignore[arg-type]  # float() is the judge: TypeError below
    except OverflowError:                          # an integer beyond any float
        raise KvsimError(f"{name}={_shown(value)} is out of range: expected a number "
                         f"{rng}") from None
    except (TypeError, ValueError):
        raise KvsimError(f"{name}={_shown(value)} is not a number: expected a number "
                         f"{rng}") from None
    if not math.isfinite(x):
        raise KvsimError(f"{name}={value!r} is not finite: expected a number {rng}")
    if min is not None and (x < min or (min_open and x == min)):
        raise KvsimError(f"{name}={value} is out of range: expected a number {rng}")
    if max is not None and (x > max or (max_open and x == max)):
        raise KvsimError(f"{name}={value} is out of range: expected a number {rng}")
    return x


def check_choice(name: str, value: object, choices: Iterable[str], *, why: str | None = None) -> str:
    """Return ``value`` if it is one of ``choices`` (case-sensitive)."""
    known = list(choices)
    if not isinstance(value, str) or value not in known:
        raise KvsimError(f"{name}={value!r} is not known: expected one of "
                         f"{', '.join(map(str, known))}{_why(why)}")
    return value


# ---------------------------------------------------------------------------------------------
# Checks of parameters that enter through several doors (the API, the CLI, the widgets):
# one function each, so every door judges a value the same way.

#: The most usable KV blocks a pinned pool may have.
NUM_GPU_BLOCKS_MAX = 10**9


def check_gpu_memory_utilization(value: object) -> float:
    """``gpu_memory_utilization`` in (0, 1], as vLLM's engine argument."""
    return check_float("gpu_memory_utilization", value, min=0, max=1, min_open=True)


def check_num_gpu_blocks(value: object) -> int:
    """A pinned pool's usable blocks, in [1, :data:`NUM_GPU_BLOCKS_MAX`]."""
    return check_int("num_gpu_blocks", value, min=1, max=NUM_GPU_BLOCKS_MAX)
