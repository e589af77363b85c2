"""kvsim on the newest prometheus_client: the same bytes, the same readings.

pyproject.toml asks for ``prometheus_client>=0.20`` with no upper bound, so a
``pip install kvsim`` gets the newest release, while requirements.txt pins the
one CI and Binder run. This test installs the newest release from the package
index into a throwaway folder (``pip install --target``), runs kvsim on it in a
subprocess, and checks that it writes exactly the bytes it writes here (the
pinned client) for every metric set and both formats, that the client's parsers
read them back to the same series (:mod:`kvsim.observe.readings`, which the twin
builds on), and that ``lint-rules`` judges the book's rule files the same way.

Needs the package index: when pip cannot reach it the test fails and says so;
``KVBOOK_OFFLINE=1`` skips it (as tests/test_packaging.py does). Marked
``packaging`` (``make unit`` leaves it out).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version as installed_version
from pathlib import Path

import pytest

pytestmark = pytest.mark.packaging

if os.environ.get("KVBOOK_OFFLINE", "") == "1":
    pytest.skip("KVBOOK_OFFLINE=1: this test installs the newest prometheus_client from the "
                "package index", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
OFFLINE_SIGNS = ("NewConnectionError", "Failed to establish a new connection",
                 "Temporary failure in name resolution", "Name or service not known",
                 "Network is unreachable", "ConnectTimeout", "Max retries exceeded",
                 "No matching distribution found", "Could not find a version")

#: Run in-process (the pinned client) and in a subprocess (the newest): prints one JSON
#: object -- the client's version and file, every exposition's text, what readings made of
#: it, and lint-rules' findings on the book's rule files.
PROBE = r"""
import json, sys
import prometheus_client
from importlib.metadata import version
import kvsim
from kvsim.observe.exposition import exposition
from kvsim.observe.lint import lint_rules
from kvsim.observe.readings import read_scrape_text
from kvsim.observe.series import run_metrics

result = kvsim.run_scenario("mission-1-storm")
out = {"client": version("prometheus_client"), "file": prometheus_client.__file__,
       "texts": {}, "readings": {}}
for metric_set in ("v1", "v1-0.10", "v0"):
    rm = run_metrics(result, version=metric_set)
    for t in (0.0, 60.0, rm.end_s + 1.0):
        for openmetrics in (False, True):
            key = f"{metric_set}@{t:g}/{'openmetrics' if openmetrics else 'text'}"
            text = exposition(rm, t, openmetrics=openmetrics)
            reading = read_scrape_text(text, key)
            out["texts"][key] = text
            out["readings"][key] = sorted([repr(k), v] for k, v in reading.values.items())
out["lint"] = {path: sorted(repr(f) for f in lint_rules(path)) for path in sys.argv[1:]}
print(json.dumps(out))
"""

#: the book's rules, and the flawed file chapter 4's incident starts from (it has findings)
RULE_FILES = ("kvsim-preemption.rules.yml", "seed-003-original.rules.yml")


def _run_probe(env: dict) -> dict:
    rules = [str(ROOT / "book" / "alerts" / name) for name in RULE_FILES]
    proc = subprocess.run([sys.executable, "-c", PROBE, *rules], capture_output=True, text=True,
                          env=env, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _env(*paths: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths)
    env["PYTHONNOUSERSITE"] = "1"
    return env


@pytest.fixture(scope="module")
def newest_client(tmp_path_factory) -> Path:
    """The newest prometheus_client from the package index, in a folder of its own."""
    target = tmp_path_factory.mktemp("newest-prometheus-client")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check",
                           "--no-cache-dir", "--upgrade", "--target", str(target),
                           "prometheus_client"], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        out = (proc.stdout + proc.stderr).strip()
        offline = any(sign in out for sign in OFFLINE_SIGNS)
        why = ("the package index looks unreachable; set KVBOOK_OFFLINE=1 to skip this test "
               "on a machine without it" if offline else "see pip's output")
        pytest.fail(f"pip could not install the newest prometheus_client (exit {proc.returncode};"
                    f" {why}): {' | '.join(out.splitlines()[-6:])}", pytrace=False)
    return target


def test_newest_prometheus_client_gives_the_same_bytes_and_readings(newest_client):
    pinned = _run_probe(_env(ROOT))
    newest = _run_probe(_env(newest_client, ROOT))
    # the subprocesses really ran on the two clients
    assert pinned["client"] == installed_version("prometheus_client")
    assert Path(newest["file"]).is_relative_to(newest_client), newest["file"]
    newest_version = tuple(int(p) for p in newest["client"].split(".")[:2])
    # 0.23 is the first release that writes vllm_ sample names in OpenMetrics: the newest
    # must be at least that, or this test would not exercise what the range opened up
    assert newest_version >= (0, 23), newest["client"]
    assert len(pinned["texts"]) == 18
    for key, text in pinned["texts"].items():
        assert newest["texts"][key] == text, f"{key}: the bytes differ on prometheus_client " \
                                             f"{newest['client']}"
    assert newest["readings"] == pinned["readings"]
    assert any(pinned["lint"].values()), "no finding to compare: pick a rule file with some"
    assert newest["lint"] == pinned["lint"]
