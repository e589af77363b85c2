"""The speed goals' verdicts and measuring processes (benchmarks/goals.py, issue 33).

A goal is judged on the median of its rounds and says when its rounds fall on both sides
of the limit; the scripts its fresh processes run are templates whose placeholders
(``TIMING``, ``SIZED``, ``REFERENCE``) must all be filled, and the ones that valgrind counts
must run and print what the parent parses. Nothing here is timed or counted.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

GOALS_SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "goals.py"
PLACEHOLDERS = ("TIMING", "SIZED", "REFERENCE")


@pytest.fixture(scope="module")
def goals():
    spec = importlib.util.spec_from_file_location("bench_goals", GOALS_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module           # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def test_a_goal_is_judged_on_the_median_of_its_rounds(goals):
    assert goals.Rounds((1.5, 1.6, 1.9)).verdict(2.0) == "met"
    assert goals.Rounds((2.1, 2.2, 2.5)).verdict(2.0) == "NOT met"
    # one lucky round does not meet a goal, one unlucky round does not miss it; both say so
    straddling = "(rounds on both sides of the limit: within the noise)"
    assert goals.Rounds((1.8, 2.2, 2.5)).verdict(2.0) == f"NOT met {straddling}"
    assert goals.Rounds((1.5, 1.6, 2.5)).verdict(2.0) == f"met {straddling}"
    assert goals.Rounds((1.5, 2.0, 2.5)).median == 2.0
    assert goals.Rounds((1.5, 2.0, 2.5)).span(".2f") == "3 rounds 1.50-2.50"


def test_every_measuring_script_is_filled_in_and_compiles(goals):
    scripts = {name: getattr(goals, name) for name in
               ("_STARTUP", "_SIZED_RUN", "_COUNTED_RUN", "_PATH_TIMES", "_COUNTED_PATH")}
    for name, template in scripts.items():
        command, env = goals._child_command(template)
        code = command[2]
        left = [line for line in code.splitlines() if line.strip() in PLACEHOLDERS]
        assert left == [], f"{name} keeps a placeholder"
        compile(code, name, "exec")
        assert env["PYTHONPATH"] == str(goals.ROOT)
        assert "KVSIM_RUN_CACHE" not in env and "PYTHONDONTWRITEBYTECODE" not in env
    # the placeholders the templates use are the ones _child_command fills
    used = {line.strip() for template in scripts.values() for line in template.splitlines()
            if line.strip() in PLACEHOLDERS}
    assert used == set(PLACEHOLDERS)


def test_the_counted_processes_run_and_print_what_the_parent_reads(goals):
    # without valgrind (counted=False): the same process, its last line only
    def run(code, *args, env=None):
        return goals._counted(goals._counted_process(code, *args, env=env, counted=False))

    counted, requests = run(goals._COUNTED_RUN, "100", "1")
    assert counted == 0                                 # valgrind did not run it
    assert 80 <= int(requests) <= 120                   # Poisson 5/s for 20 s
    _, ran = run(goals._COUNTED_PATH, "belgavi", "", "1", env={"KVSIM_PURE": "1"})
    assert ran == "False"                               # KVSIM_PURE=1: the pure path ran


def test_the_sized_process_prints_every_reading_the_flatness_goal_reads(goals):
    reading = goals._child(goals._SIZED_RUN, "100", "1")
    assert 80 <= reading["requests"] <= 120                 # Poisson 5/s for 20 s
    for key in ("cpu_s", "units", "user_s", "kernel_s"):
        assert reading[key] >= 0.0, key
    assert reading["user_s"] + reading["kernel_s"] > 0.0     # the run took some CPU time
    assert reading["faults"] >= 0 and reading["steps"] > reading["requests"]
    assert reading["peak_bytes"] >= reading["before_bytes"] > 0


def test_the_flatness_goal_is_judged_on_total_cpu_and_split_into_user_and_kernel(goals, monkeypatch,
                                                                                capsys):
    # canned readings: user time flat, the kernel's page faults only at the largest size
    def reading(n, user_us, kernel_us, faults):
        cpu = (user_us + kernel_us) * n * 1e-6
        return {"requests": n, "steps": 27 * n, "cpu_s": cpu, "units": cpu / 0.02,
                "user_s": user_us * n * 1e-6, "kernel_s": kernel_us * n * 1e-6,
                "faults": faults * n, "before_bytes": 1, "peak_bytes": 2, "read_peak_bytes": 3}

    canned = {"100": reading(100, 12.0, 0.0, 0.0), "100000": reading(100_000, 12.6, 4.5, 0.4)}
    monkeypatch.setattr(goals, "_child", lambda code, n, repeats: canned[n])
    large = goals.flatness_goal((100, 100_000), rounds=3)
    assert large is canned["100000"]                         # the memory goal's reading
    out = capsys.readouterr().out
    assert "median 1.43 (3 rounds 1.43-1.43), goal <= 1.15   NOT met" in out
    assert "user-mode 12.0 / 12.6 us per request, max/min 1.05" in out
    assert "the kernel's 0.0 / 4.5 us, with 0.00 / 0.40 minor page faults per request" in out
