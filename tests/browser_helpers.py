"""What the two browser tests share: chromium, the skip-or-fail rule, a local static server.

``tests/test_site.py`` (the built site) and ``tests/test_jupyterlab.py`` (the
chapters in JupyterLab) both drive Debian's chromium through Playwright with
every non-local request aborted.
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import os
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
CHROMIUM = Path(os.environ.get("KVBOOK_CHROMIUM", "/usr/bin/chromium"))
#: ``make test`` and ``.ci/run`` set it: a missing site or browser fails instead of skipping.
REQUIRED = os.environ.get("KVBOOK_REQUIRE_SITE", "") == "1"
#: As this machine's chromium needs them headless, as root, with no network of its own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def skip_or_fail(message: str) -> None:
    """Skip the calling module, or fail it under ``KVBOOK_REQUIRE_SITE=1``."""
    if REQUIRED:
        pytest.fail(message + " (KVBOOK_REQUIRE_SITE=1)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require_site_and_chromium() -> None:
    """The built site and chromium, or a skip (a failure under ``KVBOOK_REQUIRE_SITE=1``)."""
    if not (SITE / "index.html").exists():
        skip_or_fail(f"no built site at {SITE}: run `make book` (or `make test`, which builds first)")
    if not CHROMIUM.exists():
        skip_or_fail(f"no chromium at {CHROMIUM}: apt-get install chromium (or set KVBOOK_CHROMIUM)")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@contextlib.contextmanager
def serve(directory: Path):
    """``directory`` served on 127.0.0.1 (a free port); yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
