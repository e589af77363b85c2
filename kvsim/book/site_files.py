"""Data the static site reads, as the small scripts that carry it (``window.<name> = {...};``).

The site has no kernel: what kvsim computed for it (the missions' scores, the
exercises' checks) is committed as a script beside the site's own JavaScript,
written by ``scripts/site_data.py`` and read back by the tests that compare it
with a fresh computation. One format for both: a comment naming what wrote
the file, then one assignment of sorted, indented JSON.
"""
from __future__ import annotations

import json

__all__ = ["data_script", "read_data_script"]

#: The script that writes every such file.
WRITER = "scripts/site_data.py"


def _head(what: str, global_name: str, source: str) -> str:
    return (f"/* {what}:\n * written by {WRITER} ({source}); do not edit. */\n"
            f"window.{global_name} = ")


def data_script(data: object, *, what: str, global_name: str, source: str) -> str:
    """``data`` as the script the site loads: the head comment, then the assignment."""
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)
    return _head(what, global_name, source) + text + ";\n"


def read_data_script(text: str, *, what: str, global_name: str, source: str) -> dict[str, object]:
    """The data in a script :func:`data_script` wrote with these names (a one-line
    ``ValueError`` when it is not one)."""
    head = _head(what, global_name, source)
    if not text.startswith(head) or not text.endswith(";\n"):
        raise ValueError(f"not a file written by {WRITER}: expected it to start with "
                         f"{head.splitlines()[0]!r}")
    data = json.loads(text[len(head):-2])
    if not isinstance(data, dict):
        raise ValueError(f"{global_name} holds a {type(data).__name__}: expected a JSON object")
    return data
