#!/usr/bin/env python3
"""Vendor the JavaScript the static book needs, so its pages work with no network.

Writes book/_vendor/kvbook/ (committed; copied into the built site's
``_static/kvbook/`` by book/_ext/kvbook_offline.py):

* ``vega-runtime.js`` -- Vega, Vega-Lite and Vega-Embed for Altair's charts,
  bundled offline by vl-convert-python and wrapped by
  :func:`kvsim.book.notebook.vega_runtime_js` (no network needed);
* ``widgets/`` -- the ipywidgets HTML manager (``embed.js``, no require.js
  needed) and the icon fonts its stylesheet asks for, from the npm registry;
* ``mathjax/tex-svg-full.js`` -- MathJax 3 with every TeX extension and SVG
  output (fonts built in), from the npm registry;
* ``VENDORED.json`` -- what each file is, its version, source and sha256.

Usage::

    python scripts/vendor_assets.py            # regenerate everything
    python scripts/vendor_assets.py --vega     # only the Vega runtime (offline)
    python scripts/vendor_assets.py --check    # exit 1 if the Vega runtime is stale

Run it after upgrading altair or vl-convert-python (``make vendor``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "_vendor" / "kvbook"
MANIFEST = OUT / "VENDORED.json"

# npm packages: (name, exact version, files to copy -> destination folder)
HTML_MANAGER = "@jupyter-widgets/html-manager"
HTML_MANAGER_VERSION = "1.0.15"
MATHJAX = "mathjax"
MATHJAX_VERSION = "3.2.2"

sys.path.insert(0, str(ROOT))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _load_manifest() -> dict:
    if MANIFEST.exists():
        return json.loads(MANIFEST.read_text())
    return {}


def _save_manifest(manifest: dict) -> None:
    MANIFEST.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def vega(manifest: dict) -> None:
    """Write vega-runtime.js from vl-convert-python (offline)."""
    import vl_convert

    from kvsim.book.notebook import runtime_versions, vega_runtime_js

    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / "vega-runtime.js"
    target.write_text(vega_runtime_js())
    manifest["vega-runtime.js"] = {
        "what": "vega + vega-lite + vega-embed, one wrapped script",
        "source": f"vl-convert-python {vl_convert.__version__} javascript_bundle()",
        "versions": {
            "vega": vl_convert.get_vega_version(),
            "vega-embed": vl_convert.get_vega_embed_version(),
            "altair_template_checks": runtime_versions(),
        },
        "license": "BSD-3-Clause (Vega, Vega-Lite, Vega-Embed)",
        "sha256": _sha256(target),
    }
    print(f"wrote {target.relative_to(ROOT)} ({target.stat().st_size:,} bytes)")


def _npm_pack(spec: str, workdir: Path) -> Path:
    """Fetch one package tarball with npm (which checks its registry integrity)."""
    out = subprocess.run(
        ["npm", "pack", spec, "--silent", "--pack-destination", str(workdir)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip().splitlines()[-1]
    tgz = workdir / out
    extract = workdir / (out + ".d")
    with tarfile.open(tgz) as tar:
        tar.extractall(extract, filter="data")
    return extract / "package"


def widgets(manifest: dict, workdir: Path) -> None:
    pkg = _npm_pack(f"{HTML_MANAGER}@{HTML_MANAGER_VERSION}", workdir)
    dest = OUT / "widgets"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    dist = pkg / "dist"
    names = ["embed.js", "embed.js.LICENSE.txt"]
    # Icon fonts the embedded stylesheet references (Font Awesome). Chromium and
    # every current browser take woff2 first, then woff.
    names += sorted(p.name for p in dist.iterdir() if p.suffix in {".woff2", ".woff"})
    files = {}
    for name in names:
        shutil.copy2(dist / name, dest / name)
        files[name] = _sha256(dest / name)
    manifest["widgets/"] = {
        "what": "ipywidgets HTML manager (renders saved widget state; no require.js)",
        "source": f"npm {HTML_MANAGER}@{HTML_MANAGER_VERSION} dist/",
        "license": "BSD-3-Clause (ipywidgets); third-party notices in embed.js.LICENSE.txt;"
        " Font Awesome Free fonts SIL OFL 1.1",
        "files": files,
    }
    print(f"wrote {dest.relative_to(ROOT)}/ ({len(files)} files)")


def mathjax(manifest: dict, workdir: Path) -> None:
    pkg = _npm_pack(f"{MATHJAX}@{MATHJAX_VERSION}", workdir)
    dest = OUT / "mathjax"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copy2(pkg / "es5" / "tex-svg-full.js", dest / "tex-svg-full.js")
    shutil.copy2(pkg / "LICENSE", dest / "LICENSE")
    manifest["mathjax/"] = {
        "what": "MathJax 3, all TeX extensions, SVG output with built-in fonts",
        "source": f"npm {MATHJAX}@{MATHJAX_VERSION} es5/tex-svg-full.js",
        "license": "Apache-2.0",
        "files": {n: _sha256(dest / n) for n in ("tex-svg-full.js", "LICENSE")},
    }
    print(f"wrote {dest.relative_to(ROOT)}/")


def check() -> int:
    """Exit status 1 when the committed Vega runtime differs from a fresh one."""
    from kvsim.book.notebook import vega_runtime_js

    target = OUT / "vega-runtime.js"
    if not target.exists():
        print(f"missing {target.relative_to(ROOT)}: run python scripts/vendor_assets.py")
        return 1
    fresh = hashlib.sha256(vega_runtime_js().encode()).hexdigest()
    if fresh != _sha256(target):
        print("book/_vendor/kvbook/vega-runtime.js is stale: run python scripts/vendor_assets.py --vega")
        return 1
    print("vendored Vega runtime matches altair + vl-convert-python")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vega", action="store_true", help="only regenerate the Vega runtime")
    parser.add_argument("--check", action="store_true", help="check the Vega runtime is current")
    args = parser.parse_args(argv)
    if args.check:
        return check()
    manifest = _load_manifest()
    vega(manifest)
    if not args.vega:
        with tempfile.TemporaryDirectory() as tmp:
            widgets(manifest, Path(tmp))
            mathjax(manifest, Path(tmp))
    _save_manifest(manifest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
