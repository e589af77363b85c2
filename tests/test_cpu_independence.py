"""The same bytes on any CPU: kvsim's runs and the saved notebooks do not depend on numpy's SIMD code.

numpy picks machine code for its loops when it is imported (AVX-512, AVX2 or
the baseline); on an AVX-512 CPU its float64 ``log1p``, ``exp`` and ``power``
differ from the C library's in the last bit for a few percent of inputs. A
notebook executed on one machine then failed strict nbval on another (a
goodput one unit in the last place apart). ``NPY_DISABLE_CPU_FEATURES`` turns
the dispatched code paths off, so one machine can play the other:

* every scenario, and the sampled workloads behind them, give identical
  results with every dispatched feature turned off;
* strict nbval passes over the book's notebooks in that mode too (the
  committed outputs are the same bytes), in a second pytest process.

On a CPU with no feature beyond numpy's baseline the two modes are the same
and these tests prove nothing more than the default run; they say so.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: A script printing what numpy enabled and a digest of every scenario's results.
PROBE = r"""
import hashlib, json
import numpy as np
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
import kvsim
from kvsim.traffic.lengths import BoundedPareto, Geometric, LogNormal

h = hashlib.sha256()
for name in kvsim.list_scenarios():
    result = kvsim.run_scenario(name)
    h.update(json.dumps(result.summary(), sort_keys=True).encode())
    for column in ("arrival_s", "prompt_tokens", "output_tokens", "first_token_s", "finish_s"):
        h.update(np.ascontiguousarray(result.requests[column]).tobytes())
rng = np.random.default_rng(7)
for dist in (Geometric(250), LogNormal.from_mean_p95(850, 2000), BoundedPareto(1.3, 100, 8000)):
    h.update(dist.sample(rng, 100_000).tobytes())
print(json.dumps({"enabled": [f for f in __cpu_dispatch__ if __cpu_features__.get(f)],
                  "digest": h.hexdigest()}))
"""


def dispatched_features() -> list[str]:
    """Every feature numpy can dispatch to on this build (what the restricted mode turns off)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__

    return list(__cpu_dispatch__)


def restricted_env() -> dict:
    return dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(dispatched_features()))


def _probe(env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_runs_do_not_depend_on_numpys_simd_dispatch():
    default, restricted = _probe(dict(os.environ)), _probe(restricted_env())
    assert restricted["enabled"] == [], f"NPY_DISABLE_CPU_FEATURES left {restricted['enabled']} on"
    if not default["enabled"]:
        pytest.skip("this CPU has no numpy feature beyond the baseline: both modes are the same")
    assert default["digest"] == restricted["digest"], (
        f"a run changed when numpy's {default['enabled']} code paths were turned off: "
        "a float in the sampling or the engine depends on the CPU (use kvsim.traffic.libm)")


def test_libm_matches_the_c_library_value_by_value():
    import math

    import numpy as np

    from kvsim.traffic import libm

    x = np.linspace(-0.999, 3.0, 2_001)
    assert libm.log1p(x).tolist() == [math.log1p(v) for v in x.tolist()]
    assert libm.exp(x).tolist() == [math.exp(v) for v in x.tolist()]
    assert libm.power(x + 1.0, -0.75).tolist() == [math.pow(v + 1.0, -0.75) for v in x.tolist()]
    # the edge cases numpy's own loops give, and the shape kept
    assert libm.log1p(np.array([-1.0, -2.0, np.nan])).tolist()[0] == -math.inf
    assert np.isnan(libm.log1p(np.array([-2.0, np.nan]))).all()
    assert libm.exp(np.array([1e6, -np.inf])).tolist() == [math.inf, 0.0]
    assert libm.power(np.array([0.0]), -1.0).tolist() == [math.inf]
    assert libm.exp(np.zeros((2, 3))).shape == (2, 3)


@pytest.mark.notebooks
def test_notebooks_pass_strict_nbval_with_numpys_simd_dispatch_off():
    """The committed outputs, re-run with every dispatched feature off, are the same bytes."""
    if not _probe(dict(os.environ))["enabled"]:
        pytest.skip("this CPU has no numpy feature beyond the baseline: the default nbval run covers it")
    cmd = [sys.executable, "-m", "pytest", "book", "--nbval", "--nbval-current-env",
           "--nbval-cell-timeout=600", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg",
           "-p", "no:cacheprovider", "-q", "--tb=short", "-o", "addopts="]
    proc = subprocess.run(cmd, env=restricted_env(), cwd=ROOT, capture_output=True, text=True, timeout=1800)
    tail = "\n".join(proc.stdout.strip().splitlines()[-25:])
    assert proc.returncode == 0, f"strict nbval with NPY_DISABLE_CPU_FEATURES failed:\n{tail}"
    assert " passed" in tail and "failed" not in tail, tail
