"""Shared fixtures.

The real data (the Azure trace CSV and the Hugging Face config.json files)
lives outside the repository in ``../shared/data``; tests that need it take
the ``shared_data`` fixture, which skips cleanly when the folder is absent.
"""
from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path to ``../shared/data`` (skips the test when it is absent)."""
    if not SHARED_DATA.is_dir():
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
