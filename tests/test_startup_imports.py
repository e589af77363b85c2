"""What a first simulation imports: it guards the start-up goal of benchmarks/goals.py
(``STARTUP_GOAL``: import kvsim to the first result, issue 33).

A fresh process runs the goal's script (``import kvsim``, ``Workload.poisson``,
``kvsim.simulate``) and kvsim must bring none of :data:`DEFERRED` into ``sys.modules``:
standard library modules that a simulation does not need, which kvsim once imported on that
path and now imports only where they are used. A change that brings one back fails here, not
as a slower start-up that nobody notices. Not timed.

What the process had before kvsim (the interpreter's site, numpy and ``numpy.random``, which
every simulation imports) does not count: ``secrets`` and ``hashlib`` are not on the list,
since ``numpy.random`` imports them itself.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Each module a first simulation must not import, and where kvsim uses it (or what pulled it in).
DEFERRED = {
    "importlib.abc": "the compiled engine's finder (kvsim.engine.native) is a plain class",
    "importlib.resources": "imported by importlib.abc",
    "tempfile": "imported by importlib.resources",
    "shutil": "imported by tempfile",
    "bz2": "imported by shutil",
    "lzma": "imported by shutil",
    "csv": "a trace with quoted fields (kvsim.traffic.workload._split_rows)",
}

_FIRST_RESULT = r"""
import json, sys
import numpy, numpy.random
before = set(sys.modules)
import kvsim
import kvsim.engine
from kvsim import Geometric, Workload
day = Workload.poisson(1.5, 120, prompt=850, output=Geometric(250), seed=0)
kvsim.simulate(day, model="llama-2-7b", gpu="a40-48gb", gpu_memory_utilization=0.60)
print(json.dumps({"engine": kvsim.engine.build_note(), "modules": sorted(set(sys.modules) - before)}))
"""


def test_a_first_simulation_imports_none_of_the_deferred_modules():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("KVSIM_RUN_CACHE", None)
    proc = subprocess.run([sys.executable, "-c", _FIRST_RESULT], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "kvsim.engine.loop" in run["modules"]          # the control: it did simulate
    imported = {name: why for name, why in DEFERRED.items() if name in run["modules"]}  # by kvsim
    assert imported == {}, f"on the {run['engine']} engine"
