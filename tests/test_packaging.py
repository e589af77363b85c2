"""The wheel on its own: ``pip install .`` gives a complete, working kvsim.

The repository's wheel is built (``pip wheel --no-deps``) from a copy of what
the build reads (pyproject.toml, the readme, ``kvsim/``), so that the build's
``build/`` and ``*.egg-info`` never land in the repository, and installed into
a fresh venv (no system site packages) with the dependencies it declares, from
the package index. Every command then runs from a folder outside the repository, so the
repository's own ``kvsim/`` cannot be imported by accident. Only the runtime
dependencies are installed: the command line must work without the notebook
extras.

Needs the package index (CI has it); when pip cannot reach it the test fails
and says so. ``KVBOOK_OFFLINE=1`` skips the module instead. Marked
``packaging`` (``make unit`` leaves it out); it takes about half a minute.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest

from kvsim.engine import native

pytestmark = pytest.mark.packaging

if os.environ.get("KVBOOK_OFFLINE", "") == "1":
    pytest.skip("KVBOOK_OFFLINE=1: the packaging test installs from the package index",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
VERSION = PYPROJECT["version"]
#: What pip prints when the index cannot be reached.
OFFLINE_SIGNS = ("NewConnectionError", "Failed to establish a new connection",
                 "Temporary failure in name resolution", "Name or service not known",
                 "Network is unreachable", "ConnectTimeout", "Max retries exceeded",
                 "No matching distribution found", "Could not find a version")

BAD_RULES = """\
groups:
  - name: kv
    rules:
      - alert: KVNearFull
        expr: vllm:gpu_cache_usage_perc > 0.9
"""
GOOD_RULES = """\
groups:
  - name: kv
    rules:
      - alert: KVPreempting
        expr: rate(vllm:num_preemptions_total[5m]) > 0
        for: 10m
"""


def _pip(args: list[str], what: str, python: str = sys.executable) -> None:
    proc = subprocess.run([python, "-m", "pip", *args, "--disable-pip-version-check"],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        out = (proc.stdout + proc.stderr).strip()
        tail = " | ".join(out.splitlines()[-6:])
        offline = any(sign in out for sign in OFFLINE_SIGNS)
        why = ("the package index looks unreachable; set KVBOOK_OFFLINE=1 to skip this test "
               "on a machine without it" if offline else "see pip's output")
        pytest.fail(f"pip could not {what} (exit {proc.returncode}; {why}): {tail}",
                    pytrace=False)


#: What the build reads: pyproject.toml, the readme and licence files it names, the package.
BUILD_INPUTS = ("pyproject.toml", "setup.py", PYPROJECT["readme"], *PYPROJECT["license-files"], "kvsim")


def _copy_sources(dest: Path) -> Path:
    """The build's inputs copied to ``dest`` (bytecode and build leftovers left behind)."""
    dest.mkdir()
    for name in BUILD_INPUTS:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.py[cod]", "*.egg-info", "_compiled"))
        else:
            shutil.copy2(src, dest / name)
    return dest


class Env:
    """The fresh venv with the wheel installed, and a working folder outside the repository."""

    def __init__(self, root: Path, wheel: Path):
        self.root, self.wheel = root, wheel
        self.bin = root / "venv" / ("Scripts" if os.name == "nt" else "bin")
        self.python = str(self.bin / "python")
        self.kvsim = str(self.bin / "kvsim")
        self.cwd = root / "work"
        self.cwd.mkdir()
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        env.update(PATH=str(self.bin) + os.pathsep + env.get("PATH", ""),
                   VIRTUAL_ENV=str(root / "venv"), PYTHONNOUSERSITE="1")
        self.env = env

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), cwd=self.cwd, env=self.env, capture_output=True,
                              text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Env:
    root = tmp_path_factory.mktemp("packaging")
    assert not root.resolve().is_relative_to(ROOT)
    src = _copy_sources(root / "src")
    wheels = root / "wheels"
    _pip(["wheel", "--no-deps", "--quiet", str(src), "-w", str(wheels)], "build the wheel")
    built = sorted(wheels.glob("kvsim-*.whl"))
    assert len(built) == 1, f"expected one kvsim wheel, got {[p.name for p in built]}"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(root / "venv")
    env = Env(root, built[0])
    _pip(["install", "--quiet", str(built[0])], "install the wheel and its dependencies",
         python=env.python)
    return env


# --- the wheel itself ---------------------------------------------------------------------

def test_the_wheel_holds_the_whole_package_and_declares_its_dependencies(installed):
    with zipfile.ZipFile(installed.wheel) as whl:
        names = whl.namelist()
        meta = whl.read(f"kvsim-{VERSION}.dist-info/METADATA").decode()
    info = f"kvsim-{VERSION}.dist-info/"
    assert [n for n in names if not n.startswith(("kvsim/", info))] == []
    shipped = {n for n in names if n.startswith("kvsim/")}
    # The compiled engine, when this machine could build it (setup.py): its extensions and stamp.
    built = {n for n in shipped if n.startswith(f"kvsim/{native.BUILD_DIR}/")}
    source = {p.relative_to(ROOT).as_posix() for p in (ROOT / "kvsim").rglob("*.py")}
    assert shipped - built == source, (sorted(source - shipped), sorted(shipped - built - source))
    if built:
        tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
        assert re.fullmatch(rf"kvsim-{re.escape(VERSION)}-{tag}-{tag}-\w+\.whl", installed.wheel.name)
        package = Path("kvsim")
        assert built == {f"kvsim/{native.BUILD_DIR}/{native.STAMP_FILE}"} | {
            native.extension_path(m, package).as_posix()
            for m in (*native.COMPILED_MODULES, f"{native.GROUP}__mypyc")}
    else:
        assert installed.wheel.name == f"kvsim-{VERSION}-py3-none-any.whl"
    requires = [line.split(":", 1)[1].strip() for line in meta.splitlines()
                if line.startswith("Requires-Dist:")]
    core = {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower().replace("_", "-")
            for r in requires if "extra ==" not in r}
    assert core == {"numpy", "prometheus-client", "promql-parser", "pyyaml"}
    prom = next(r for r in requires if r.lower().startswith("prometheus"))
    # a range with no cap: kvsim writes its exposition itself, so newer clients are welcome
    assert ">=0.20" in prom.replace(" ", "") and "<" not in prom, prom
    assert {"Provides-Extra: notebook", "Provides-Extra: lab", "Provides-Extra: cluster"} <= set(meta.splitlines())


def test_the_installed_wheel_runs_the_engine_it_carries(installed):
    with zipfile.ZipFile(installed.wheel) as whl:
        carries = any(n.startswith(f"kvsim/{native.BUILD_DIR}/") for n in whl.namelist())
    probe = installed.run(installed.python, "-c",
                          "import kvsim.engine as e; print(e.compiled(), e.build_note())")
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.startswith(f"{carries} "), probe.stdout


def test_kvsim_pure_builds_a_pure_wheel(tmp_path, monkeypatch):
    """KVSIM_PURE=1 at build time: a wheel for any platform (scripts/wheelhouse.py builds it so)."""
    monkeypatch.setenv(native.PURE_VAR, "1")
    src = _copy_sources(tmp_path / "src")
    _pip(["wheel", "--no-deps", "--quiet", str(src), "-w", str(tmp_path / "wheels")], "build the wheel")
    built = [p.name for p in (tmp_path / "wheels").glob("kvsim-*.whl")]
    assert built == [f"kvsim-{VERSION}-py3-none-any.whl"]
    with zipfile.ZipFile(tmp_path / "wheels" / built[0]) as whl:
        assert not [n for n in whl.namelist() if native.BUILD_DIR in n]


def test_the_wheel_carries_the_mit_licence_text(installed):
    info = f"kvsim-{VERSION}.dist-info/"
    with zipfile.ZipFile(installed.wheel) as whl:
        meta = whl.read(info + "METADATA").decode()
        licence = whl.read(info + "licenses/LICENSE").decode()
    assert licence == (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License\n") and "The KV Pressure book authors" in licence
    assert "License-Expression: MIT" in meta.splitlines()
    assert "License-File: LICENSE" in meta.splitlines()


def test_kvsim_comes_from_the_venv_alone_without_the_notebook_extras(installed):
    probe = installed.run(installed.python, "-c", (
        "import importlib.util, json, kvsim, sys; "
        "print(json.dumps({'file': kvsim.__file__, 'prefix': sys.prefix, "
        "'extras': {m: importlib.util.find_spec(m) is not None "
        "for m in ('altair', 'ipywidgets', 'IPython', 'vl_convert')}}))"))
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    venv_dir = (installed.root / "venv").resolve()
    assert Path(found["file"]).resolve().is_relative_to(venv_dir), found["file"]
    assert not Path(found["file"]).resolve().is_relative_to(ROOT)
    assert Path(found["prefix"]).resolve() == venv_dir
    assert found["extras"] == dict.fromkeys(("altair", "ipywidgets", "IPython", "vl_convert"),
                                            False)


# --- the command line, installed ----------------------------------------------------------

def test_version_is_pyprojects(installed):
    for cmd in ([installed.kvsim], [installed.python, "-m", "kvsim"]):
        proc = installed.run(*cmd, "--version")
        assert (proc.returncode, proc.stderr) == (0, ""), cmd
        assert re.fullmatch(rf"kvsim {re.escape(VERSION)}\nengine: (compiled|pure Python)[^\n]*\n", proc.stdout)


def test_capacity_agrees_with_the_repository_and_errors_in_one_line(installed):
    import kvsim

    args = ("capacity", "--model", "llama-3.1-8b", "--gpu", "h100-80gb", "--util", "0.9")
    expected = kvsim.kv_budget("h100-80gb", kvsim.get_model("llama-3.1-8b"),
                               gpu_memory_utilization=0.9).tokens
    for cmd in ([installed.kvsim], [installed.python, "-m", "kvsim"]):
        proc = installed.run(*cmd, *args, "--json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["tokens"] == expected > 0
    bad = installed.run(installed.kvsim, *args[:-1], "2")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "gpu_memory_utilization=2" in bad.stderr


def test_simulate_runs_a_scenario(installed):
    proc = installed.run(installed.kvsim, "simulate", "--scenario", "belgavi", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["requests_finished"] > 0 and summary["preemptions"] > 0


def test_lint_rules_finds_the_old_name_and_passes_a_clean_file(installed):
    (installed.cwd / "bad.rules.yml").write_text(BAD_RULES, encoding="utf-8")
    (installed.cwd / "good.rules.yml").write_text(GOOD_RULES, encoding="utf-8")
    bad = installed.run(installed.kvsim, "lint-rules", "bad.rules.yml")
    assert bad.returncode == 1, bad.stderr
    assert bad.stdout.splitlines() == [
        "KVNearFull: [absent-name] vllm:gpu_cache_usage_perc does not exist in vLLM v1 (it is "
        "in v1-0.10, v0): a rule or panel on it matches nothing there; use "
        "vllm:kv_cache_usage_perc"]
    good = installed.run(installed.kvsim, "lint-rules", "good.rules.yml")
    assert (good.returncode, good.stderr) == (0, "")
    assert good.stdout == "no findings (checked against vLLM v1's metrics)\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scrape(url: str, proc: subprocess.Popen, accept: str | None = None,
            deadline_s: float = 60) -> tuple[str, str]:
    """(content type, body) of the first answer, retrying while the exporter starts."""
    headers = {"Accept": accept} if accept else {}
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                        timeout=5) as resp:
                return resp.headers["Content-Type"], resp.read().decode()
        except (urllib.error.URLError, ConnectionError) as exc:
            if proc.poll() is not None:
                pytest.fail(f"kvsim exporter exited with {proc.returncode}: "
                            f"{proc.stderr.read()}", pytrace=False)
            if time.monotonic() > deadline:
                pytest.fail(f"kvsim exporter did not answer on {url} in {deadline_s:g} s "
                            f"({exc})", pytrace=False)
            time.sleep(0.25)


def test_exporter_serves_vllm_series_and_stops_cleanly(installed):
    port = _free_port()
    proc = subprocess.Popen([installed.kvsim, "exporter", "--scenario", "mission-1-storm",
                             "--speed", "100", "--port", str(port)],
                            cwd=installed.cwd, env=installed.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        ctype, text = _scrape(url, proc)
        ctype_om, om = _scrape(url, proc, accept="application/openmetrics-text; version=1.0.0")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    assert ctype.startswith("text/plain; version=0.0.4")
    assert re.search(r'^vllm:num_preemptions_total\{[^}]*model_name="llama-2-7b"[^}]*\} \d',
                     text, re.M), text[:2000]
    assert "# TYPE vllm:kv_cache_usage_perc gauge" in text
    # OpenMetrics keeps the `vllm:` sample names whatever prometheus_client the venv got
    # (kvsim writes the exposition itself; 0.23 and later would write vllm_)
    assert ctype_om.startswith("application/openmetrics-text") and om.rstrip().endswith("# EOF")
    assert re.search(r"^vllm:num_preemptions_total\{", om, re.M), om[:2000]
    assert not re.search(r"^vllm_", om, re.M), "sample names lost their colon"
    assert proc.returncode == 0, err
    assert "Traceback" not in err and err.rstrip().endswith("kvsim exporter: stopped"), err
    # stdout carries one line, the ready line scripts wait for
    assert out.splitlines() == [f"kvsim exporter: serving /metrics on http://127.0.0.1:{port} "
                                "(simulated time runs 100 x real time)"], out


# --- the other audiences' install lines (the README's *Install*) -----------------------------

#: What only a developer needs (requirements.txt): none of it belongs in a learner's set.
DEVELOPER_ONLY = {"pytest", "pytest-xdist", "hypothesis", "nbval", "playwright", "ruff", "mypy",
                  "jupyter-book", "sphinx", "myst-nb", "dask", "distributed"}
#: What a learner's JupyterLab needs beyond the CLI (binder/requirements.txt's set).
LEARNER_SET = {"jupyterlab", "jupyterlab-myst", "ipykernel", "ipywidgets", "altair",
               "vl-convert-python", "ipython"}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_learners_lab_extra_resolves_to_jupyterlab_and_nothing_of_the_developers(installed):
    """`pip install ".[lab]"`, resolved from the index by the fresh venv's pip (--dry-run:
    nothing is installed, so the CLI-alone venv stays as it was)."""
    report = installed.root / "lab-report.json"
    _pip(["install", "--dry-run", "--quiet", "--report", str(report), f"{installed.wheel}[lab]"],
         "resolve kvsim[lab]", python=installed.python)
    resolved = {_canonical(item["metadata"]["name"]): item["metadata"]["version"]
                for item in json.loads(report.read_text())["install"]}
    assert resolved.keys() >= LEARNER_SET, sorted(LEARNER_SET - resolved.keys())
    assert not DEVELOPER_ONLY & resolved.keys(), sorted(DEVELOPER_ONLY & resolved.keys())
    assert int(resolved["jupyterlab"].split(".")[0]) == 4, resolved["jupyterlab"]


def test_pipx_installs_the_cli_alone(installed):
    """`pipx install .`: pipx (from the index, in its own venv) installs the wheel into a venv
    of its own under a temporary PIPX_HOME and links `kvsim` into a temporary bin folder."""
    root = installed.root
    tool = root / "pipx-tool"
    venv.EnvBuilder(with_pip=True).create(tool)
    tool_bin = tool / ("Scripts" if os.name == "nt" else "bin")
    _pip(["install", "--quiet", "pipx>=1.5"], "install pipx", python=str(tool_bin / "python"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PIPX_HOME=str(root / "pipx-home"), PIPX_BIN_DIR=str(root / "pipx-bin"),
               PIPX_MAN_DIR=str(root / "pipx-man"), PYTHONNOUSERSITE="1")
    proc = subprocess.run([str(tool_bin / "pipx"), "install", str(installed.wheel)], cwd=installed.cwd,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    kvsim_bin = root / "pipx-bin" / "kvsim"
    version = subprocess.run([str(kvsim_bin), "--version"], cwd=installed.cwd, env=env,
                             capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith(f"kvsim {VERSION}\nengine: "), version.stderr
    capacity = subprocess.run([str(kvsim_bin), "capacity", "--model", "llama-3.1-8b", "--gpu",
                               "h100-80gb", "--util", "0.9", "--json"], cwd=installed.cwd, env=env,
                              capture_output=True, text=True, timeout=120)
    assert capacity.returncode == 0, capacity.stderr
    assert json.loads(capacity.stdout)["tokens"] > 0
    assert Path(os.path.realpath(kvsim_bin)).is_relative_to((root / "pipx-home").resolve())
