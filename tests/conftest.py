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
* ``slow`` -- the single tests in :data:`SLOW_TESTS`.
"""
from __future__ import annotations

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

#: Tests that take more than about 5 s on their own on a 2-core machine, by node id
#: (measured with ``pytest --durations``; the promtool end-to-end test is one too).
SLOW_TESTS = {
    "tests/test_missions.py::test_expert_answer_passes_on_every_seed_and_is_kvsims_own_least[3]",
    "tests/test_ch05_numbers.py::test_the_glued_numbers_are_kvsims",
    *(f"tests/test_lab_site.py::test_a_sample_of_grid_points_rescores_to_the_committed_rows[{n}]"
      for n in (1, 2, 3, 4)),
    "tests/test_lab_site.py::test_the_third_star_is_scores_own",
    "tests/test_alerts.py::test_prometheus_scrapes_the_exporter_end_to_end",
    "tests/test_alerts.py::test_the_chapters_prometheus_recipe_works_as_written",
    "tests/test_vllm_dashboard.py::test_every_panel_has_data_on_the_010_series",
    "tests/test_vllm_dashboard.py::test_on_current_v1_only_the_renamed_panels_go_dark",
}


def _needs_prometheus(item) -> bool:
    """True when the test's own body calls test_alerts.need (promtool or prometheus)."""
    function = getattr(item, "function", None)
    helper = getattr(getattr(item, "module", None), "need", None)
    return (function is not None and getattr(helper, "__module__", None) == "test_alerts"
            and "need" in function.__code__.co_names)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.path)).suffix == ".ipynb":
            item.add_marker(pytest.mark.notebooks)
        if item.nodeid in SITE_TESTS:
            item.add_marker(pytest.mark.site)
        if _needs_prometheus(item):
            item.add_marker(pytest.mark.promtool)
        if item.nodeid in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


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
