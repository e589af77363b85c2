"""One install line per audience, and the Python versions claimed are the ones tested.

* the CLI alone: ``pip install .`` / ``pipx install .`` -- pyproject's ``dependencies``
  (``tests/test_packaging.py`` installs the wheel both ways in fresh venvs);
* learners: ``pip install -e ".[lab]"`` -- the ``lab`` extra, the ranges around
  ``binder/requirements.txt``'s exact pins (Binder's and the workshop wheelhouse's set;
  ``tests/test_packaging.py`` resolves the extra from the index);
* developers: ``pip install -r requirements.txt`` (``.ci/run`` installs it into a fresh venv).

These checks read the files only: no network.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def _pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a requirements file (comments and ``-e`` left out)."""
    pins = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", f"{path.name}: {line} is not an exact pin"
            pins[canonicalize_name(req.name)] = spec.version
    return pins


def _extra(name: str) -> list[Requirement]:
    """An extra's requirements, with the extras it names (kvsim[notebook]) expanded."""
    reqs = []
    for text in PROJECT["optional-dependencies"][name]:
        req = Requirement(text)
        if canonicalize_name(req.name) == "kvsim":
            for inner in sorted(req.extras):
                reqs += _extra(inner)
        else:
            reqs.append(req)
    return reqs


def test_the_lab_extra_is_binders_set_by_range():
    """Every package Binder pins is a dependency of kvsim or of its lab extra, and Binder's
    exact version is inside the range pyproject gives it; the extra adds nothing Binder lacks
    (ipython, which the notebook extra names, comes with Binder's ipykernel)."""
    binder = _pins(ROOT / "binder" / "requirements.txt")
    declared = [Requirement(r) for r in PROJECT["dependencies"]] + _extra("lab")
    ranges: dict[str, SpecifierSet] = {}
    for req in declared:
        name = canonicalize_name(req.name)
        ranges[name] = ranges.get(name, SpecifierSet()) & req.specifier
    assert set(binder) <= set(ranges), f"pinned by Binder, not declared: {sorted(set(binder) - set(ranges))}"
    # What the extra names beyond Binder's pins, Binder gets as a dependency of a pin.
    brought = {canonicalize_name(Requirement(r).name)
               for name in binder for r in (metadata.requires(name) or []) if "extra ==" not in r}
    assert set(ranges) - set(binder) <= brought, sorted(set(ranges) - set(binder) - brought)
    outside = {name: (version, str(ranges[name])) for name, version in binder.items()
               if version not in ranges[name]}
    assert not outside, f"Binder's pins outside pyproject's ranges: {outside}"


def test_binders_pins_are_the_developers_pins():
    """The learners' exact set is the developers' at the same versions (requirements.txt is the
    superset CI tests)."""
    dev = _pins(ROOT / "requirements.txt")
    binder = _pins(ROOT / "binder" / "requirements.txt")
    assert {name: dev.get(name) for name in binder} == binder


def test_the_python_claimed_is_the_python_tested():
    """runtime.txt (CI's and Binder's Python) is the one classifier version; requires-python
    admits it and refuses 3.10 (numpy 2.4, the pinned release, needs 3.11); ruff and mypy
    check for it."""
    tested = {(ROOT / name).read_text().strip() for name in ("runtime.txt", "binder/runtime.txt")}
    assert tested == {"python-3.11"}, tested
    versions = {c.rsplit(" :: ", 1)[1] for c in PROJECT["classifiers"]
                if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)}
    assert versions == {"3.11"}, versions
    requires = SpecifierSet(PROJECT["requires-python"])
    assert "3.11.0" in requires and "3.10.14" not in requires
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py311"
    assert PYPROJECT["tool"]["mypy"]["python_version"] == "3.11"


def test_each_requirements_file_says_whom_it_is_for():
    assert (ROOT / "requirements.txt").read_text().startswith("# FOR DEVELOPERS:")
    assert "Binder's environment" in (ROOT / "binder" / "requirements.txt").read_text().splitlines()[0]


# --- the README: it starts with the user ---------------------------------------------------

README = (ROOT / "README.md").read_text()


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_the_readme_gives_each_audience_its_tested_install_line():
    install = _section(README, "Install")
    for line in ("pipx install .", "pip install .", 'pip install -e ".[lab]"',
                 "pip install -r requirements.txt", "make book", "make test",
                 "python -m kvsim.book.learner learn", "jupyter lab learn/"):
        assert line in install, line
    assert "lab" in PROJECT["optional-dependencies"]


def test_the_readme_opens_with_the_user_not_the_tests():
    """What it is, a screenshot, install, the quick start, then the CLI in full; the test suite's
    tour lives in CONTRIBUTING.md."""
    headings = re.findall(r"(?m)^## (.+)$", README)
    assert headings[:4] == ["Read the book", "Install", "`kvsim` in one minute", "The command line in full"]
    assert "nbval" not in README.split("\n## The command line in full\n")[0]
    assert "## What runs when" in (ROOT / "CONTRIBUTING.md").read_text()
    for heading in ("How the cost model is calibrated", "How fast, and how it stays exact",
                    "Sweeps on a cluster: batching"):
        assert f"\n## {heading}\n" in (ROOT / "book" / "engine-reference.md").read_text(), heading


def test_the_readmes_screenshot_is_a_small_png_of_the_site():
    (image,) = re.findall(r"!\[[^\]]+\]\((docs/img/[\w.-]+\.png)\)", README)
    data = (ROOT / image).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) < 200_000, f"{image} is {len(data):,} B"


def test_the_changelog_opens_with_this_version():
    (first,) = re.findall(r"(?m)^## (\S+)$", (ROOT / "CHANGELOG.md").read_text())[:1]
    assert first == PROJECT["version"]


def test_the_readmes_quick_start_runs():
    """Each `kvsim` line of *`kvsim` in one minute* exits as its comment says (`exit N`, else 0)
    and prints something; the exporter, which serves until stopped, is run by the packaging test."""
    block = re.search(r"```bash\n(.*?)```", _section(README, "`kvsim` in one minute"), re.S).group(1)
    comment, ran = "", []
    for line in block.splitlines():
        if line.startswith("#"):
            comment += line
            continue
        if not line.startswith("kvsim "):
            comment = ""
            continue
        args = shlex.split(line)[1:]
        expected = int(re.search(r"exit (\d)", comment).group(1)) if "exit " in comment else 0
        comment = ""
        if args[0] == "exporter":
            assert "--port" in args
            continue
        proc = subprocess.run([sys.executable, "-m", "kvsim", *args], capture_output=True, text=True,
                              timeout=120, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert (proc.returncode, proc.stderr.count("Traceback")) == (expected, 0), (line, proc.stderr)
        assert proc.stdout.strip(), line
        ran.append(args[0])
    assert ran == ["capacity", "simulate", "sweep", "lint-rules"], ran
