"""Shared fixtures, and the markers that let a contributor choose what to run.

The real data (the Azure trace CSV and the Hugging Face config.json files)
lives outside the repository in ``../shared/data``; tests that need it take
the ``shared_data`` fixture, which skips cleanly when the folder is absent (and
fails under ``KVSIM_REQUIRE_DATA=1``, which ``make test`` sets when it exists).

Markers (registered in pyproject.toml; ``make unit`` deselects them all):

* ``site`` -- needs the built book in ``_build/html``: test_site.py (its
  ``pytestmark``) and the tests in :data:`SITE_TESTS`;
* ``notebooks`` -- every cell nbval collects from ``book/*.ipynb``
  (``pytest tests book --nbval``, as ``make test`` runs it);
* ``jupyterlab`` -- test_jupyterlab.py (its ``pytestmark``);
* ``promtool`` -- needs Prometheus' ``promtool`` or ``prometheus``: every test
  that calls ``need(...)`` from test_alerts.py (the helper that skips, or fails
  under ``KVBOOK_REQUIRE_PROMETHEUS=1``, when the tool is missing);
* ``packaging`` -- test_packaging.py (its ``pytestmark``);
* ``slow`` -- a test measured above :data:`SLOW_BUDGET_S` in :data:`DURATIONS_FILE`
  (``make durations`` measures them; ``make test`` runs them, ``make unit`` does not).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import settings

#: ``../shared/data`` beside the repository, or ``$KVSIM_SHARED_DATA`` (a checkout elsewhere,
#: such as a git worktree, can point at the shared folder without linking anything).
SHARED_DATA = Path(os.environ.get("KVSIM_SHARED_DATA")
                   or Path(__file__).resolve().parents[1].parent / "shared" / "data")


# Hypothesis profiles, chosen with HYPOTHESIS_PROFILE (e.g. ``HYPOTHESIS_PROFILE=explore
# pytest tests/test_engine_units.py``). "default" is today's behaviour: the profile Hypothesis
# itself loaded (its built-in "default", or "ci" when a CI variable is set), unchanged;
# "explore" runs many more, freshly random examples with no deadline. A test that sets a
# value in its own @settings keeps its own (test_engine_properties.py reads the variable
# itself and multiplies its example counts).
settings.register_profile("default", settings())
settings.register_profile("explore", max_examples=2_000, derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path to ``../shared/data``: skips the test when it is absent, or, under
    ``KVSIM_REQUIRE_DATA=1`` (``make test`` sets it when the folder exists), fails it."""
    if not SHARED_DATA.is_dir():
        if os.environ.get("KVSIM_REQUIRE_DATA") == "1":
            pytest.fail(f"shared data folder {SHARED_DATA} is absent and KVSIM_REQUIRE_DATA=1",
                        pytrace=False)
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture(scope="session")
def hf_configs(shared_data: Path) -> dict[str, Path]:
    """The shared Hugging Face config files by stem (skips when absent or empty)."""
    folder = shared_data / "hf-configs"
    files = {p.stem: p for p in sorted(folder.glob("*.json"))} if folder.is_dir() else {}
    if not files:
        pytest.skip(f"no config.json files in {folder}")
    return files


#: Tests outside test_site.py that read the built site, by node id.
SITE_TESTS = {
    "tests/test_workshop.py::test_the_built_pages_show_the_front_matter_minutes",
}

#: Measured durations of the tests ``make unit`` could run, in seconds (setup, call and
#: teardown, one process, the run cache off, so a test costs what it costs right after a
#: change to the engine), by node id: written by ``make durations``
#: (``scripts/test_durations.py``), which lists every test over a tenth of the budget.
#: ``KVBOOK_DURATIONS_FILE`` reads another file (the script's own passes).
DURATIONS_FILE = Path(os.environ.get("KVBOOK_DURATIONS_FILE")
                      or Path(__file__).with_name("durations.json"))

#: A test measured above this many seconds is ``slow``: ``make test`` runs it, ``make unit``
#: leaves it out. Chosen so that ``make unit`` stays well under a minute of CPU on the
#: project's 2-core machine (``make durations`` prints what its tests add up to; ``make bench``
#: times the whole of ``make unit``).
SLOW_BUDGET_S = 0.3


def measured_durations(path: Path = DURATIONS_FILE) -> dict[str, float]:
    """``{node id: seconds}`` from :data:`DURATIONS_FILE` (empty when it is absent)."""
    try:
        return {k: float(v) for k, v in json.loads(path.read_text())["durations"].items()}
    except FileNotFoundError:
        return {}


def _needs_prometheus(item) -> bool:
    """True when the test's own body calls test_alerts.need (promtool or prometheus)."""
    function = getattr(item, "function", None)
    helper = getattr(getattr(item, "module", None), "need", None)
    return (function is not None and getattr(helper, "__module__", None) == "test_alerts"
            and "need" in function.__code__.co_names)


#: The kinds of test, in the order ``make test`` starts them: the longest first, so that on
#: two xdist workers (``--dist loadscope``: a module, or a notebook, stays on one worker) no
#: worker is left with a long module while the other has finished. The last kind is the rest.
KINDS = ("jupyterlab", "site", "packaging", "notebooks", "promtool", "slow", "unit")


def kind_of(item) -> str:
    """The first of :data:`KINDS` among a test's markers (``unit`` when none)."""
    names = {mark.name for mark in item.iter_markers()}
    return next((k for k in KINDS[:-1] if k in names), KINDS[-1])


def pytest_report_header(config):
    """Which engine the tests run: compiled, or pure and why (kvsim/engine/native.py)."""
    import kvsim.engine

    return f"kvsim engine: {kvsim.engine.build_note()}"


def pytest_collection_modifyitems(config, items):
    durations = measured_durations()
    import kvsim.engine

    compiled = kvsim.engine.compiled()
    for item in items:
        if compiled and item.get_closest_marker("pure_engine"):
            item.add_marker(pytest.mark.skip(
                reason="patches the engine's internals, which the compiled engine's classes refuse: "
                       "run it with KVSIM_PURE=1 (make test and make unit do)"))
        if Path(str(item.path)).suffix == ".ipynb":
            item.add_marker(pytest.mark.notebooks)
        if item.nodeid in SITE_TESTS:
            item.add_marker(pytest.mark.site)
        if _needs_prometheus(item):
            item.add_marker(pytest.mark.promtool)
        if durations.get(item.nodeid, 0.0) > SLOW_BUDGET_S:
            item.add_marker(pytest.mark.slow)
    # Whole files move, each keeping its own order: by the earliest kind of any of its tests.
    # (The kind rides along to the report, so an xdist controller can sum time by kind.)
    rank: dict[str, int] = {}
    for item in items:
        kind = kind_of(item)
        item.user_properties.append(("kind", kind))
        file = item.nodeid.split("::")[0]
        rank[file] = min(rank.get(file, len(KINDS)), KINDS.index(kind))
    items.sort(key=lambda item: rank[item.nodeid.split("::")[0]])


# --------------------------------------------------------------------------
# Durations: recorded for make durations, and checked against the budget.

_took: dict[str, float] = {}
_kind: dict[str, str] = {}


def pytest_runtest_logreport(report):
    _took[report.nodeid] = _took.get(report.nodeid, 0.0) + report.duration
    _kind[report.nodeid] = dict(report.user_properties).get("kind", KINDS[-1])


def pytest_sessionfinish(session):
    """Under ``KVBOOK_DURATIONS_OUT=path``, write every test's duration there (one process only:
    an xdist worker leaves it to the controller, which gets the same reports)."""
    out = os.environ.get("KVBOOK_DURATIONS_OUT")
    if out and not hasattr(session.config, "workerinput"):
        Path(out).write_text(json.dumps(_took, indent=0, sort_keys=True))


def pytest_terminal_summary(terminalreporter, config):
    """The time each kind of test took; and where ``slow`` tests were left out, the ones that
    ran over the budget unmarked."""
    if _took:
        by_kind: dict[str, list[float]] = {}
        for node, seconds in _took.items():
            by_kind.setdefault(_kind[node], []).append(seconds)
        terminalreporter.write_sep("-", "time by kind of test (summed over tests and workers)")
        for kind in KINDS:
            if kind in by_kind:
                terminalreporter.write_line(f"{kind:>10}: {sum(by_kind[kind]):7.1f} s in "
                                            f"{len(by_kind[kind])} tests")
    if "not slow" not in (config.getoption("markexpr", "") or ""):
        return
    over = sorted((t, n) for n, t in _took.items() if t > 2 * SLOW_BUDGET_S)
    if over:
        terminalreporter.write_sep("-", f"{len(over)} tests over twice the {SLOW_BUDGET_S} s budget "
                                        f"ran unmarked")
        for t, n in over[::-1][:10]:
            terminalreporter.write_line(f"{t:6.2f}s {n}")
        terminalreporter.write_line("tests/durations.json is stale for them: run `make durations` "
                                    "and commit it (or make the tests cheaper)")


@pytest.fixture(scope="module")
def no_run_cache():
    """The run cache off for a whole module (``KVSIM_RUN_CACHE`` unset here and in the processes
    it starts): for tests of how sweeps run, which must run, not read back."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("KVSIM_RUN_CACHE", raising=False)
        yield


@pytest.fixture
def isolated_progress(tmp_path, monkeypatch):
    """The lab's progress file in a temporary home, no room key: a test that writes the
    reader's real progress (or the default file) fails."""
    from kvsim.lab import codes, progress

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(progress.ENV_VAR, str(tmp_path / "home" / "default-progress.json"))
    monkeypatch.delenv(codes.ROOM_KEY_VAR, raising=False)
    yield
    assert not (tmp_path / "home").exists(), "a test wrote the default progress file"
