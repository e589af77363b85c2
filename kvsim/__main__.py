"""``python -m kvsim``: the command line (see :mod:`kvsim.cli`)."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
