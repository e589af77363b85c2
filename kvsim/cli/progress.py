"""A progress line on stderr for the runs that take seconds (``sweep``, ``twin``).

Shown only when stderr is a terminal and ``--quiet`` is not given: a pipe, a
log file or a test sees nothing, so stdout and stderr stay the same whether or
not the line was drawn. The line is rewritten in place (``\\r``) and erased
when the work ends, so the answer that follows starts on a clean line.
"""
from __future__ import annotations

import sys
from typing import TextIO

__all__ = ["progress_wanted", "ProgressLine"]


def progress_wanted(quiet: bool, stream: TextIO | None = None) -> bool:
    """Whether to draw a progress line: not ``quiet``, and ``stream`` (stderr) is a terminal."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return not quiet and callable(isatty) and bool(isatty())


class ProgressLine:
    """``kvsim twin: <what it is doing>``, redrawn on one line of ``stream`` (default stderr).

    ``enabled=None`` asks :func:`progress_wanted` (a terminal, not quiet). Call it with
    each step's text; :meth:`close` erases the line. A context manager closes it.
    """

    def __init__(self, label: str, *, quiet: bool = False, stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.enabled = progress_wanted(quiet, self.stream) if enabled is None else enabled
        self.width = 0                     # the longest line drawn, to blank it out

    def __call__(self, text: str) -> None:
        if not self.enabled:
            return
        line = f"{self.label}: {text}"
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = max(self.width, len(line))

    def close(self) -> None:
        """Erase the line (nothing was drawn: nothing to erase)."""
        if self.enabled and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
        self.width = 0

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
