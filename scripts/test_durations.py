#!/usr/bin/env python3
"""Measure the tests ``make unit`` could run and write ``tests/durations.json``.

    python scripts/test_durations.py          # make durations
    python scripts/test_durations.py --keep   # start from tests/durations.json, add what is new

``tests/conftest.py`` marks every test measured above ``SLOW_BUDGET_S`` as
``slow``: ``make test`` runs it, ``make unit`` leaves it out. The measurement
is taken the way ``make unit`` would pay for it right after a change to the
engine: one process, the run cache off (``KVSIM_RUN_CACHE`` unset).

A test's time includes the module fixtures and in-process caches it is the
first to fill. Leaving a slow test out can move that cost onto the next test,
so the script measures in passes: first every candidate test, then only the
ones left in ``make unit``, adding any that now run over the budget, until no
more do (at most :data:`MAX_PASSES`). ``--keep`` takes the committed file as the
first pass (quicker, but a test that got cheaper stays slow). The file keeps each test's largest
measured time, for the tests above a tenth of the budget (the rest are not
worth a line). It then prints how many tests are slow and what ``make unit``'s
tests add up to.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import DURATIONS_FILE, SLOW_BUDGET_S  # the one budget

#: What ``make unit`` never runs, whatever the durations say (the Makefile's UNIT_MARKERS,
#: without ``slow``).
NOT_UNIT = "not site and not notebooks and not jupyterlab and not promtool and not packaging"
MAX_PASSES = 12


def measure(markers: str, durations_file: Path | None) -> tuple[dict[str, float], float]:
    """One pytest run over ``tests`` with ``-m markers``: ``({node id: seconds}, CPU seconds)``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "took.json"
        env = dict(os.environ, KVBOOK_DURATIONS_OUT=str(out))
        env.pop("KVSIM_RUN_CACHE", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if durations_file is not None:
            env["KVBOOK_DURATIONS_FILE"] = str(durations_file)
        cmd = [sys.executable, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider",
               "-p", "no:xdist", "-m", markers]
        before = os.times()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        after = os.times()
        if proc.returncode not in (0, 5):
            tail = "\n".join(proc.stdout.splitlines()[-20:])
            raise SystemExit(f"the tests failed; fix them before measuring:\n{tail}")
        cpu = (after.children_user - before.children_user) + (after.children_system
                                                              - before.children_system)
        return json.loads(out.read_text()), cpu


def main(argv: list[str]) -> None:
    started = time.monotonic()
    if argv == ["--keep"]:
        print(f"pass 1: {DURATIONS_FILE.relative_to(ROOT)} as it is", flush=True)
        durations = json.loads(DURATIONS_FILE.read_text())["durations"]
    elif argv:
        raise SystemExit("usage: test_durations.py [--keep]")
    else:
        print(f"pass 1: every test make unit could run ({NOT_UNIT})", flush=True)
        took, _ = measure(NOT_UNIT, None)
        durations = dict(took)
    with tempfile.TemporaryDirectory() as tmp:
        current = Path(tmp) / "durations.json"
        for n in range(2, MAX_PASSES + 1):
            current.write_text(json.dumps({"durations": durations}))
            slow = {k for k, v in durations.items() if v > SLOW_BUDGET_S}
            print(f"pass {n}: make unit's tests ({len(slow)} slow left out)", flush=True)
            took, cpu = measure(f"{NOT_UNIT} and not slow", current)
            newly = {k: v for k, v in took.items() if v > SLOW_BUDGET_S}
            for k, v in took.items():
                durations[k] = max(durations.get(k, 0.0), v)
            if not newly:
                break
            print(f"  {len(newly)} more over {SLOW_BUDGET_S} s once the slow ones were left out: "
                  f"{', '.join(sorted(newly))}", flush=True)
    kept = {k: round(v, 3) for k, v in sorted(durations.items()) if v > SLOW_BUDGET_S / 10}
    DURATIONS_FILE.write_text(json.dumps({
        "about": "Seconds per test (setup + call + teardown; one process; run cache off), the "
                 "largest of each pass of scripts/test_durations.py (make durations); tests "
                 f"under {SLOW_BUDGET_S / 10} s are left out. conftest.py marks those over "
                 f"SLOW_BUDGET_S = {SLOW_BUDGET_S} s as slow.",
        "durations": kept}, indent=1) + "\n")
    slow = [k for k, v in durations.items() if v > SLOW_BUDGET_S]
    unit = sum(v for k, v in took.items())
    print(f"wrote {DURATIONS_FILE.relative_to(ROOT)}: {len(slow)} slow tests "
          f"({sum(durations[k] for k in slow):.0f} s); make unit's {len(took)} tests take "
          f"{unit:.0f} s ({cpu:.0f} s of CPU for the whole pytest run); "
          f"{time.monotonic() - started:.0f} s in all")


if __name__ == "__main__":
    main(sys.argv[1:])
