"""How the command line prints: plain JSON, numbers in tables, one-line messages."""
from __future__ import annotations

import json
import math
from collections.abc import Mapping

__all__ = ["plain", "dump", "format_value", "table", "one_line"]


def plain(value: object) -> object:
    """JSON-safe plain Python values (numpy scalars and arrays, NaN -> null)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return plain(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dump(obj: object) -> str:
    """``obj`` as indented JSON (see :func:`plain`)."""
    return json.dumps(plain(obj), indent=2, allow_nan=False)


def format_value(value: object) -> str:
    """A value as a table cell: thousands separators, four significant digits."""
    value = plain(value)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return str(value)


def table(rows: Mapping[str, object]) -> str:
    """A dict as two aligned columns, name and value."""
    width = max((len(k) for k in rows), default=0)
    return "\n".join(f"{k:<{width}}  {format_value(v)}" for k, v in rows.items())


def one_line(message: object) -> str:
    """A message with every run of whitespace (newlines too) made one space."""
    return " ".join(str(message).split())
