"""Write the data the static site reads: the missions' scores and the exercises' checks.

    python scripts/site_data.py                 # (re)write both files
    python scripts/site_data.py lab             # book/_ext/static/kvbook/lab-missions.js only
    python scripts/site_data.py checks          # book/_ext/static/kvbook/checks-data.js only
    python scripts/site_data.py --check [...]   # exit 1 if a committed file is not what kvsim gives now

Run it (and commit the files) whenever the engine's cost model, a mission or an
exercise changes (``make site-data``; ``make execute`` runs it after the
notebooks): the book build only copies the files. Scoring every mission's grid
takes about a minute on one core (less with the run cache, ``KVSIM_RUN_CACHE``),
the checks some seconds. See kvsim.book.lab_site and kvsim.book.checks_site.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kvsim.book import checks_site, lab_site

FILES = {"lab": lab_site, "checks": checks_site}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", nargs="*", metavar="{lab,checks}",
                        help="which file (default: both)")
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files instead of writing them")
    args = parser.parse_args(argv)
    for name in args.which:
        if name not in FILES:
            parser.error(f"{name!r} is not one of the site's files: expected lab or checks")
    status = 0
    for name in args.which or list(FILES):
        module = FILES[name]
        target = ROOT / module.DATA_PATH
        text = module.site_data_js()
        if args.check:
            old = target.read_text(encoding="utf-8") if target.exists() else ""
            if old != text:
                print(f"{module.DATA_PATH} is out of date: run python scripts/site_data.py {name}",
                      file=sys.stderr)
                status = 1
            else:
                print(f"{module.DATA_PATH} is up to date")
            continue
        target.write_text(text, encoding="utf-8")
        print(f"wrote {module.DATA_PATH} ({len(text):,} bytes)")
    return status


if __name__ == "__main__":
    sys.exit(main())
