#!/usr/bin/env python3
"""Run a command and say how long it took: ``python scripts/timed.py NAME -- CMD ...``.

The Makefile runs each phase of ``make test`` and ``make unit`` through it, so a
log (CI's included) shows where the time goes: one line
``== NAME: 12.3 s wall, 20.1 s CPU (exit 0)`` after the command's own output,
the CPU time being the command's and its children's. The command's exit status
is this script's.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: timed.py NAME -- COMMAND [ARG ...]", file=sys.stderr)
        return 2
    name, cmd = argv[0], argv[2:]
    start, before = time.monotonic(), os.times()
    try:
        proc = subprocess.Popen(cmd)
    except OSError as exc:
        print(f"timed.py: cannot run {cmd[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127
    try:
        status = proc.wait()
    except KeyboardInterrupt:        # Ctrl-C reached the command too: let it finish stopping
        status = proc.wait()
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system
                                                          - before.children_system)
    print(f"== {name}: {time.monotonic() - start:.1f} s wall, {cpu:.1f} s CPU (exit {status})",
          flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
