"""``python -m kvsim``: the command line (see :mod:`kvsim.cli`)."""
from .cli import main

raise SystemExit(main())
