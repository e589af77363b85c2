"""Byte units, the one formatter that always names its unit, and integer ceilings.

kvsim counts bytes as Python ``int`` everywhere. Decimal (GB = 10**9, as on
GPU datasheets) and binary (GiB = 2**30, as in PyTorch and vLLM logs) units
are never mixed silently: :func:`format_bytes` always prints which one it
uses. Chapter 1 of the book explains why the difference matters (4.9 % at
MiB-vs-MB scale, 7.4 % at GiB-vs-GB scale).

:func:`cdiv` is the one ceiling division (tokens to blocks, above all), and
:data:`UNLIMITED` the one stand-in for "no limit" in integer counts, and
:data:`MAX_SIMULATED_S` the longest simulated time.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

from .errors import KvsimError, check_int

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

KB, MB, GB, TB = 10**3, 10**6, 10**9, 10**12
KiB, MiB, GiB, TiB = 2**10, 2**20, 2**30, 2**40

UNITS: dict[str, int] = {
    "B": 1, "KB": KB, "MB": MB, "GB": GB, "TB": TB,
    "KiB": KiB, "MiB": MiB, "GiB": GiB, "TiB": TiB,
}

__all__ = ["KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "UNITS", "format_bytes", "to_unit",
           "cdiv", "UNLIMITED", "MAX_SIMULATED_S"]

#: An integer larger than any count kvsim meets (tokens, steps, blocks): "no limit".
UNLIMITED = 1 << 62

#: The longest simulated time kvsim accepts: 10**7 s, about 116 days. A trace or a load test
#: longer than that is a unit mistake (ms or us read as s), and a closed loop would run on
#: without end.
MAX_SIMULATED_S = 10**7


@overload
def cdiv(a: int, b: int) -> int: ...
@overload
def cdiv(a: NDArray[np.integer[Any]], b: int) -> NDArray[np.integer[Any]]: ...
def cdiv(a: int | NDArray[np.integer[Any]], b: int) -> int | NDArray[np.integer[Any]]:
    """``ceil(a / b)`` of integers, exactly (vLLM's ``cdiv``): e.g. the blocks ``a`` tokens fill.

    >>> cdiv(1_100, 16), cdiv(1_104, 16), cdiv(0, 16)
    (69, 69, 0)
    """
    return -(-a // b)


def to_unit(n_bytes: int, unit: str) -> float:
    """``n_bytes`` expressed in ``unit`` (one of :data:`UNITS`) as a float."""
    if unit not in UNITS:
        raise KvsimError(f"unit={unit!r} is not known: expected one of {', '.join(UNITS)}")
    return n_bytes / UNITS[unit]


def format_bytes(n_bytes: int, unit: str = "GiB", digits: int = 2) -> str:
    """Format an integer byte count in an explicit unit, e.g. ``'13.32 GB'``.

    >>> format_bytes(524_288, "MiB")
    '0.50 MiB'
    >>> format_bytes(524_288, "MB", 3)
    '0.524 MB'
    >>> format_bytes(131_072, "KiB", 0)
    '128 KiB'
    """
    n_bytes = check_int("n_bytes", n_bytes)
    digits = check_int("digits", digits, min=0, max=12)
    value = to_unit(n_bytes, unit)
    if unit == "B":
        return f"{n_bytes:,} B"
    return f"{value:,.{digits}f} {unit}"
