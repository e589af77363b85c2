"""The exercises' and predictions' checks on the static site, as data.

Explained on the book's learner set-up page. In a kernel, ``exercises.check``
and ``exercises.predict`` judge an answer with kvsim; on the static site there
is no kernel, so ``checks.js`` runs the same rules in the browser on the data
here: :func:`kvsim.book.exercises.site_data` (each exercise's expected answer
and why, its tolerances or range, its hints and the traps that can fire; each
prediction's value and why). ``scripts/site_data.py`` writes it to
:data:`DATA_PATH` (committed: the book build does not run kvsim), and
``tests/test_site_checks.py`` checks that the committed file is what kvsim
gives now and that the browser's verdicts are the kernel's, message for
message.
"""
from __future__ import annotations

from collections.abc import Mapping

from .exercises import site_data as _exercise_data
from .site_files import data_script, read_data_script

__all__ = ["DATA_PATH", "site_data", "site_data_js", "read_site_data"]

#: Where the site's copy lives, relative to the repository (the book's static folder).
DATA_PATH = "book/_ext/static/kvbook/checks-data.js"
_NAMES = {"what": "Every exercise's and prediction's check, computed by kvsim.book.exercises",
          "global_name": "kvbookChecksData", "source": "kvsim.book.checks_site"}


def site_data() -> dict[str, object]:
    """Every check as data (:func:`kvsim.book.exercises.site_data`)."""
    return _exercise_data()


def site_data_js(data: Mapping[str, object] | None = None) -> str:
    """:func:`site_data` as the script the site loads."""
    return data_script(site_data() if data is None else data, **_NAMES)


def read_site_data(text: str) -> dict[str, object]:
    """The data in a file :func:`site_data_js` wrote (one-line ValueError if it is not one)."""
    return read_data_script(text, **_NAMES)
