"""Binder's environment (``binder/``): what a reader needs, and it runs the chapters.

repo2docker reads ``binder/`` when it exists and then ignores the root's
``requirements.txt`` and ``runtime.txt`` (those stay the developers' and CI's).
The checks:

* ``binder/requirements.txt`` pins a subset of the root's pins, at the same
  versions: the notebooks' libraries, JupyterLab and ``jupyterlab-myst``, and
  none of the book build or the test stack;
* the same Python as the root ``runtime.txt``;
* the environment as repo2docker builds it — a fresh venv, ``pip install -r
  binder/requirements.txt`` from the repository's folder, then ``binder/postBuild``
  there — has jupyterlab-myst enabled, the chapters trusted, JupyterLab's news
  off, and executes every chapter top to bottom (``jupyter nbconvert --execute``).

The last one installs from the package index (CI has it), like
test_packaging.py, and carries the same ``packaging`` marker; ``KVBOOK_OFFLINE=1``
skips it. It runs when what it depends on changed (:data:`BINDER_INPUTS`, and
the third-party modules kvsim and the chapters import): every chapter's code
is executed by strict nbval on every run, and what Binder changes is only the
environment. When it passes it stamps its inputs in ``tests/stamps.json``
(``tests/stamps.py``); commit the stamp. ``KVBOOK_FULL=1`` runs it regardless.
A quick test here checks on every run that each module those files import is
installed by ``binder/requirements.txt``, directly or as a dependency.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sysconfig
import venv
from pathlib import Path

import pytest

from stamps import fingerprint, record, third_party_imports, verified

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"

#: Packages of the book build and the tests: a reader's Binder needs none of them.
NOT_FOR_READERS = {"pytest", "hypothesis", "nbval", "playwright", "jupyter-book", "sphinx",
                   "sphinx-book-theme", "sphinx-exercise", "sphinxcontrib-bibtex", "myst-nb",
                   "myst-parser", "jupytext", "nbclient", "dask", "distributed"}
#: What the chapters and their widgets import, and the JupyterLab that shows them.
FOR_READERS = {"numpy", "altair", "ipywidgets", "ipykernel", "jupyterlab", "jupyterlab-myst",
               "pyyaml", "prometheus-client", "promql-parser", "vl-convert-python"}


#: The files the Binder check depends on (with the modules kvsim and the chapters import).
#: The root's requirements.txt and runtime.txt are not among them: Binder never reads them, and
#: the quick tests above check that binder/ pins the same versions and Python.
BINDER_INPUTS = ["binder/requirements.txt", "binder/runtime.txt", "binder/postBuild", "binder/start",
                 "pyproject.toml", "setup.py", "tests/test_binder.py"]


def reader_imports() -> list[str]:
    """The third-party modules kvsim and the chapters import."""
    return third_party_imports(sorted((ROOT / "kvsim").rglob("*.py")),
                               sorted((ROOT / "book").glob("ch*.ipynb")))


def binder_fingerprint() -> str:
    return fingerprint(BINDER_INPUTS, {"imports": reader_imports()})


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^\s;]+)", line)
        if m:
            pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(2)
        elif line:
            assert line == "-e .", f"{path}: unexpected line {line!r}"
    return pins


def test_binder_pins_what_readers_need_at_the_roots_versions():
    root, binder = _pins(ROOT / "requirements.txt"), _pins(BINDER / "requirements.txt")
    differ = {k: (v, root.get(k)) for k, v in binder.items() if root.get(k) != v}
    assert not differ, f"binder/requirements.txt pins differ from requirements.txt: {differ}"
    assert set(binder) >= FOR_READERS, f"binder/requirements.txt lacks {FOR_READERS - set(binder)}"
    assert not NOT_FOR_READERS & set(binder), f"test or build packages in Binder: {NOT_FOR_READERS & set(binder)}"
    assert (BINDER / "runtime.txt").read_text().strip() == (ROOT / "runtime.txt").read_text().strip()


def test_every_module_readers_import_is_installed_by_binders_pins():
    """What kvsim and the chapters import comes with binder/requirements.txt: a pinned
    distribution, or one they depend on (read from this environment's metadata)."""
    from importlib import metadata

    pinned = set(_pins(BINDER / "requirements.txt"))
    reachable, todo = set(), list(pinned)
    while todo:
        name = todo.pop()
        if name in reachable:
            continue
        reachable.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for req in requires:
            if "extra ==" in req:
                continue
            todo.append(_canonical(re.split(r"[\s;<>=!~\[(]", req, maxsplit=1)[0]))
    providers = metadata.packages_distributions()
    missing = {}
    for module in reader_imports():
        dists = {_canonical(d) for d in providers.get(module, [])}
        if not dists & reachable:
            missing[module] = sorted(dists) or ["not installed here"]
    assert not missing, f"imported by kvsim or a chapter but not installed by binder/requirements.txt: {missing}"


@pytest.mark.parametrize("name", ["postBuild", "start"])
def test_binders_scripts_are_executable_bash_scripts(name):
    script = BINDER / name
    assert os.access(script, os.X_OK), f"binder/{name} must be executable (repo2docker runs it)"
    assert script.read_text().startswith("#!/usr/bin/env bash\n")
    subprocess.run(["bash", "-n", str(script)], check=True)


def test_binders_start_hands_the_run_cache_to_the_session(tmp_path):
    """repo2docker runs binder/start before the session's command: it must export the run
    cache postBuild fills and then run that command (exec "$@"), keeping a cache already set."""
    env = {k: v for k, v in os.environ.items() if k != "KVSIM_RUN_CACHE"}
    env["HOME"] = str(tmp_path)
    show = ["python3", "-c", "import os; print(os.environ['KVSIM_RUN_CACHE'])"]
    out = subprocess.run(["bash", str(BINDER / "start"), *show], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == str(tmp_path / ".cache" / "kvsim-runs")
    assert out in (BINDER / "postBuild").read_text().replace("$HOME", str(tmp_path))
    env["KVSIM_RUN_CACHE"] = str(tmp_path / "elsewhere")
    out = subprocess.run(["bash", str(BINDER / "start"), *show], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == str(tmp_path / "elsewhere")


@pytest.mark.packaging
def _can_compile() -> bool:
    """A C compiler on the PATH and this Python's headers: setup.py compiles the engine."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(compiler) is not None and (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file()


def test_binders_environment_runs_every_chapter(tmp_path):
    if os.environ.get("KVBOOK_OFFLINE", "") == "1":
        pytest.skip("KVBOOK_OFFLINE=1: this test installs from the package index")
    digest = binder_fingerprint()
    why = verified("binder", digest)
    if why:
        pytest.skip(why)
    repo = tmp_path / "repo"
    for name in ("binder", "book", "kvsim"):
        shutil.copytree(ROOT / name, repo / name,
                        ignore=shutil.ignore_patterns("__pycache__", "_build", "_compiled"))
    for name in ("pyproject.toml", "setup.py", "README.md", "_toc.yml"):
        shutil.copy2(ROOT / name, repo / name)
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               JUPYTER_DATA_DIR=str(tmp_path / "data"), JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               IPYTHONDIR=str(tmp_path / "ipython"), PIP_DISABLE_PIP_VERSION_CHECK="1",
               KVSIM_MISSIONS_FILE=str(tmp_path / "missions.json"),
               # an empty run cache, as Binder's image starts: postBuild fills it
               KVSIM_RUN_CACHE=str(tmp_path / "runs"))
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)

    def run(*cmd, timeout=900):
        proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{(proc.stdout + proc.stderr)[-3000:]}"
        return proc.stdout + proc.stderr

    run(str(bin_dir / "python"), "-m", "pip", "install", "-q", "-r", "binder/requirements.txt")
    built = run("bash", "binder/postBuild", timeout=1800)
    engine = [line for line in built.splitlines() if line.startswith("kvsim engine: ")]
    assert len(engine) == 1, f"postBuild did not say which engine it built: {built[-3000:]}"
    if _can_compile():   # Binder's image can (gcc, conda's headers): so must this copy of it
        assert engine[0].startswith("kvsim engine: compiled"), built[-3000:]
    warmed = list((tmp_path / "runs").rglob("*.json"))
    assert len(warmed) > 100, f"postBuild left {len(warmed)} runs in the run cache: chapter 5's sweeps"
    assert not (tmp_path / "missions.json").exists(), "postBuild's run of chapter 5 kept mission progress"

    where = run(str(bin_dir / "python"), "-c", "import kvsim, sys; print(kvsim.__file__); print(sys.prefix)")
    assert str(repo / "kvsim") in where, f"kvsim does not come from the checkout: {where}"
    extensions = run(str(bin_dir / "jupyter"), "labextension", "list")
    assert re.search(r"jupyterlab-myst v[\d.]+ .*enabled", extensions), extensions
    overrides = env_dir / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert json.loads(overrides.read_text())["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"

    chapters = sorted((repo / "book").glob("ch0*.ipynb"))
    assert len(chapters) >= 5
    assert all(json.loads(p.read_text())["metadata"]["kvbook"].get("learner_copy") for p in chapters), (
        "postBuild left a chapter as the book's own (answers showing): expected learner copies")
    trusted = run(str(bin_dir / "python"), "-c",
                  "import sys, nbformat\nfrom nbformat.sign import NotebookNotary\n"
                  "n = NotebookNotary()\n"
                  "print(all(n.check_signature(nbformat.read(p, 4)) for p in sys.argv[1:]))",
                  *map(str, chapters))
    assert trusted.strip().splitlines()[-1] == "True", "postBuild left a chapter untrusted"

    # Unattended: the learner copies' wait at each prediction is turned off for this run.
    env["KVBOOK_PREDICT_HOLD"] = "0"
    out = tmp_path / "executed"
    run(str(bin_dir / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
        "--ExecutePreprocessor.timeout=600", "--output-dir", str(out), *map(str, chapters), timeout=1800)
    assert sorted(p.name for p in out.glob("*.ipynb")) == [p.name for p in chapters]
    record("binder", digest, BINDER_INPUTS + ["the third-party modules kvsim and the chapters import"])
