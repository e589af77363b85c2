"""Write the static site's mission data: every grid point scored by kvsim's score().

    python scripts/lab_site_data.py           # (re)write book/_ext/static/kvbook/lab-missions.js
    python scripts/lab_site_data.py --check   # exit 1 if the committed file is not what it gives now

Run it (and commit the file) whenever the engine's cost model or a mission changes:
the book build only copies the file (scoring every grid takes about a minute on one
core). See kvsim.book.lab_site.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kvsim.book.lab_site import DATA_PATH, site_data_js  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed file instead of writing it")
    args = parser.parse_args(argv)
    target = ROOT / DATA_PATH
    text = site_data_js()
    if args.check:
        old = target.read_text(encoding="utf-8") if target.exists() else ""
        if old != text:
            print(f"{DATA_PATH} is out of date: run python scripts/lab_site_data.py",
                  file=sys.stderr)
            return 1
        print(f"{DATA_PATH} is up to date")
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"wrote {DATA_PATH} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
