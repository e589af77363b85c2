"""The workshop room's offline wheelhouse (scripts/wheelhouse.py): what it carries and for whom.

Building one downloads about a hundred wheels per platform and Python, so the
build itself is not run here (it was run by hand: linux-x86_64 for 3.11 and
3.13 in one folder, then ``check --install`` offline). These tests pin what it
builds: a reader's set (Binder's, not the book build's or the tests'), kvsim's
own wheel, every Python a room brings (3.11-3.13 by default), and the room
commands the learner set-up page gives.
"""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load():
    spec = importlib.util.spec_from_file_location("wheelhouse", ROOT / "scripts" / "wheelhouse.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


WH = _load()


def test_the_wheelhouse_carries_a_readers_set_not_the_build_or_the_tests():
    pins = WH.pinned_requirements()
    names = {re.split(r"[=<>]", p)[0].lower() for p in pins}
    assert {"jupyterlab", "jupyterlab-myst", "numpy", "altair", "vl-convert-python"} <= names
    assert not names & {"pytest", "playwright", "jupyter-book", "sphinx", "mypy", "ruff"}
    assert all("==" in p for p in pins), "every package pinned"


def test_every_python_a_room_brings_by_default():
    assert WH.PYTHONS == ("3.11", "3.12", "3.13")
    assert WH.python_versions("3.11, 3.13") == ["3.11", "3.13"]
    for bad in ("2.7", "3.9", "3.10", "3.15", "3", "3.x", "", "3.11;3.12"):
        with pytest.raises(SystemExit) as info:
            WH.python_versions(bad)
        assert info.value.code == 2


def test_each_python_gets_its_own_abi_and_the_platforms_tags():
    args = WH._platform_args("linux-x86_64", "3.13")
    assert args[args.index("--python-version") + 1] == "3.13"
    assert args[args.index("--abi") + 1] == "cp313"
    assert "manylinux_2_28_x86_64" in args and "--only-binary=:all:" in args


def test_the_room_commands_are_the_learner_set_ups():
    page = (ROOT / "book" / "learner-setup.md").read_text()
    for line in ("pip install --no-index --find-links wheelhouse/<platform> -r wheelhouse/requirements.txt",
                 "python -m kvsim.book.learner learn", "jupyter lab learn/"):
        assert line in page and line in WH.__doc__, line
