#!/usr/bin/env python3
"""Build and check an offline wheelhouse for a workshop room with no internet.

    python scripts/wheelhouse.py build linux-x86_64 macos-arm64 windows-amd64
    python scripts/wheelhouse.py check                # every platform folder built
    python scripts/wheelhouse.py check --install      # also install this machine's into a venv

``build`` downloads, for each platform and for each of the learners' Pythons
(``--python``, default 3.11, 3.12 and 3.13: a room brings what its laptops
have), binary wheels of everything a reader needs -- ``binder/requirements.txt``,
the set Binder installs: the notebooks' libraries, JupyterLab and its MyST
extension, nothing of the book build or the tests -- into
``wheelhouse/<platform>/``, plus a wheel of ``kvsim`` itself. One folder serves
every Python: pip picks each wheel's ``cp3XX`` tag for the interpreter that
installs. Run it before the day, on any machine with network: pip fetches the
other platforms' wheels without installing them.

``check`` proves, for each folder and each Python, that pip can resolve the
whole set from the folder alone (``pip install --dry-run --no-index`` for that
platform and version). With ``--install`` it also installs this machine's
platform into a fresh venv with no network, writes the learner copies of the
chapters (``python -m kvsim.book.learner``) and runs ``jupyter lab --version``
and the book's first cell, as a learner would in the room.

In the room, learners run (from a copy of the repository and the wheelhouse):

    python3 -m venv .venv && . .venv/bin/activate      # Windows: .venv\\Scripts\\activate
    pip install --no-index --find-links wheelhouse/<platform> -r wheelhouse/requirements.txt
    python -m kvsim.book.learner learn
    jupyter lab learn/

The platform names and their wheel tags are in :data:`PLATFORMS`.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "wheelhouse"

_MAC = [f"{v}_0" for v in range(11, 16)]
#: Platform name -> the wheel platform tags pip may pick for it.
PLATFORMS: dict[str, list[str]] = {
    "linux-x86_64": ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
                     "manylinux_2_5_x86_64", "manylinux1_x86_64", "linux_x86_64"],
    "linux-aarch64": ["manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64",
                      "linux_aarch64"],
    "macos-arm64": [f"macosx_{v}_arm64" for v in _MAC] + [f"macosx_{v}_universal2" for v in _MAC]
                   + ["macosx_10_9_universal2", "macosx_10_13_universal2"],
    "macos-x86_64": [f"macosx_10_{m}_x86_64" for m in (9, 12, 13, 14, 15)]
                    + [f"macosx_{v}_x86_64" for v in _MAC]
                    + ["macosx_10_9_universal2", "macosx_10_13_universal2"]
                    + [f"macosx_{v}_universal2" for v in _MAC],
    "windows-amd64": ["win_amd64"],
}


def fail(message: str) -> None:
    print(f"wheelhouse: {message}", file=sys.stderr)
    raise SystemExit(2)


def this_platform() -> str:
    system, machine = platform.system(), platform.machine().lower()
    key = {("Linux", "x86_64"): "linux-x86_64", ("Linux", "aarch64"): "linux-aarch64",
           ("Darwin", "arm64"): "macos-arm64", ("Darwin", "x86_64"): "macos-x86_64",
           ("Windows", "amd64"): "windows-amd64"}.get((system, machine))
    if key is None:
        fail(f"this machine ({system} {machine}) is not one of {', '.join(PLATFORMS)}")
    return key


#: What a reader installs (Binder's set); the repository's requirements.txt adds the book
#: build and the tests, which a room does not need.
READER_REQUIREMENTS = ROOT / "binder" / "requirements.txt"

#: The learners' Pythons a wheelhouse covers unless told otherwise.
PYTHONS = ("3.11", "3.12", "3.13")


def pinned_requirements() -> list[str]:
    """binder/requirements.txt without comments (kvsim's own wheel is added beside it)."""
    lines = []
    for raw in READER_REQUIREMENTS.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line and not line.startswith("-e"):
            lines.append(line)
    return lines


def python_versions(text: str) -> list[str]:
    """``"3.11,3.12"`` as a list of versions, each ``3.N`` from 3.11 (kvsim's requires-python) to 3.14 (else a one-line exit)."""
    versions = [v.strip() for v in text.split(",") if v.strip()]
    bad = [v for v in versions if not (len(v.split(".")) == 2 and v.split(".")[0] == "3"
                                       and v.split(".")[1].isdigit() and 11 <= int(v.split(".")[1]) <= 14)]
    if not versions or bad:
        fail(f"--python {text!r}: expected Python versions such as 3.11 or 3.11,3.12,3.13 "
             f"(3.11 to 3.14)")
    return versions


def _platform_args(name: str, python: str) -> list[str]:
    args = ["--only-binary=:all:", "--implementation", "cp", "--python-version", python,
            "--abi", f"cp{python.replace('.', '')}"]
    for tag in PLATFORMS[name]:
        args += ["--platform", tag]
    return args


def _run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    print("+", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, env=env)
    if done.returncode:
        raise SystemExit(done.returncode)


def build(names: list[str], pythons: list[str]) -> None:
    OUT.mkdir(exist_ok=True)
    reqs = OUT / "requirements.txt"
    reqs.write_text("# binder/requirements.txt (a reader's set) and kvsim (its wheel is in each folder)\n"
                    + "\n".join(pinned_requirements() + ["kvsim"]) + "\n")
    pins = OUT / "pins.txt"
    pins.write_text("\n".join(pinned_requirements()) + "\n")
    for name in names:
        folder = OUT / name
        folder.mkdir(exist_ok=True)
        # The pure-Python engine (KVSIM_PURE=1, setup.py): one py3-none-any wheel for every
        # platform and Python of the room (a compiled one would fit only this machine's).
        _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(folder), str(ROOT)],
             env=dict(os.environ, KVSIM_PURE="1"))
        for python in pythons:
            _run([sys.executable, "-m", "pip", "download", "--dest", str(folder), "-r", str(pins)]
                 + _platform_args(name, python))
        print(f"built {folder.relative_to(ROOT)}: {len(list(folder.glob('*.whl')))} wheels for "
              f"Python {', '.join(pythons)}")


def check(names: list[str], pythons: list[str], install: bool) -> None:
    reqs = OUT / "requirements.txt"
    if not reqs.exists():
        fail(f"no {reqs.relative_to(ROOT)}: run `python scripts/wheelhouse.py build ...` first")
    names = names or sorted(p.name for p in OUT.iterdir() if p.is_dir() and p.name in PLATFORMS)
    if not names:
        fail("no platform folders under wheelhouse/: build one first")
    for name in names:
        folder = OUT / name
        if not folder.is_dir():
            fail(f"no {folder.relative_to(ROOT)}: build it first")
        for python in pythons:
            with tempfile.TemporaryDirectory() as target:
                _run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--no-index",
                      "--find-links", str(folder), "--target", target, "-r", str(reqs)]
                     + _platform_args(name, python))
            print(f"ok: {name} resolves for Python {python} from {folder.relative_to(ROOT)} alone")
    if install:
        here = this_platform()
        with tempfile.TemporaryDirectory() as venv:
            _run([sys.executable, "-m", "venv", venv])
            bindir = Path(venv) / ("Scripts" if sys.platform == "win32" else "bin")
            _run([str(bindir / "python"), "-m", "pip", "install", "--quiet", "--no-index",
                  "--find-links", str(OUT / here), "-r", str(reqs)])
            _run([str(bindir / "jupyter"), "lab", "--version"])
            _run([str(bindir / "python"), "-m", "kvsim.book.learner", "--book", str(ROOT / "book"),
                  str(Path(venv) / "learn")])
            _run([str(bindir / "python"), "-c",
                  "import kvsim.book.notebook; kvsim.book.notebook.setup(offline=False); "
                  "import kvsim; print(kvsim.kv_budget('a40-48gb', 'llama-2-7b', "
                  "gpu_memory_utilization=0.6).describe())"])
        print(f"ok: {here} installs with no network; the learner copies, jupyter lab and kvsim run")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="download the wheels for one or more platforms")
    b.add_argument("platforms", nargs="*", help=f"default: this machine's; any of {', '.join(PLATFORMS)}")
    c = sub.add_parser("check", help="prove each platform resolves offline")
    c.add_argument("platforms", nargs="*", help="default: every folder built")
    c.add_argument("--install", action="store_true",
                   help="also install this machine's platform into a fresh venv, offline")
    for p in (b, c):
        p.add_argument("--python", default=",".join(PYTHONS),
                       help=f"the learners' Pythons, comma-separated (default {','.join(PYTHONS)})")
    args = parser.parse_args(argv)
    unknown = [n for n in args.platforms if n not in PLATFORMS]
    if unknown:
        fail(f"platform {unknown[0]!r} is not known: expected one of {', '.join(PLATFORMS)}")
    pythons = python_versions(args.python)
    if args.command == "build":
        build(args.platforms or [this_platform()], pythons)
    else:
        check(args.platforms, pythons, args.install)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
