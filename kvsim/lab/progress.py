"""The lab's progress file: predictions, attempts, best results, export and import.

Explained in chapter 5 (the lab) and the workshop guide. Scoring itself is
:func:`kvsim.lab.missions.score`; this module only remembers it.

**Progress** is a small JSON file, by default ``~/.kvsim/missions.json``
(outside any checkout); the environment variable ``KVSIM_MISSIONS_FILE`` or
the ``path`` argument moves it. :func:`commit_prediction` stores a guess;
it counts for the third star only if it was stored before the first run of
that mission. :func:`attempt` scores settings and keeps the best result;
:func:`reset` forgets everything. ``kvsim missions`` shows it at a terminal.
Every read-modify-write holds a lock (``missions.json.lock`` beside the file;
POSIX only) and writes through a unique temporary file and :func:`os.replace`
(:func:`kvsim.files.write_user_file`: the stale temporary files of a killed save
are removed by their exact name, nothing else), so two kernels saving at once
both keep their attempts. The path is only ever written when it is new, empty
or a kvsim progress file: a folder, a FIFO, a device or another program's file
there (a mistyped ``--progress-file``) is refused in one line and left as it
is. A damaged progress file (kvsim's, cut short or with a bad record) is never
wiped: a copy is kept beside it as ``missions.json.bad-<UTC time>`` (a new
file, never written over anything), the progress is rebuilt from the records
still readable in it, and one line on stderr says where the copy is.

The file belongs to one machine and one session's home directory: nothing
syncs it. **On Binder (mybinder.org) the home directory is thrown away when
the session ends, and the progress with it.** :func:`export_progress`
(``kvsim missions --export [FILE]``) writes it, with its completion codes in
a header a teacher can read, to ``kvsim-missions-export.json`` in the current
folder (in Jupyter, the notebook's: download it from JupyterLab's file
browser). :func:`import_progress` (``kvsim missions --import FILE``) reads
such a file in a later session or on a laptop: it checks every record,
re-scores every starred one, and *merges* it into the progress there, keeping
each mission's better record; a failed import changes nothing.

**Completion codes** such as ``M1/1/<settings>/-/Ana_Lopez/<checksum>`` are made by
:mod:`kvsim.lab.codes` (re-exported here): the mission, the stars, the
settings, the prediction, the learner's name and a checksum. The name is the
progress file's: :func:`set_name` (``kvsim missions --name NAME``) sets it and
re-makes every stored code with it (and with the room tag, if
``$KVSIM_ROOM_KEY`` is set). ``kvsim missions --verify CODE`` re-scores the
settings; what that proves, and what no code can (when the prediction was
made, who typed the settings), is in :mod:`kvsim.lab.codes`. A progress file
of the first format (version 1, codes without names) is upgraded when read.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Executor
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict, cast

try:                     # POSIX: an advisory lock serialises read-modify-write between kernels
    import fcntl
except ImportError:      # Windows (no fcntl): no lock; see _locked
    fcntl = None  # type: ignore[assignment]  # a module or None: _locked checks which

from kvsim.errors import KvsimError
from kvsim.files import (
    check_writable,
    create_new_file,
    file_kind,
    open_lock_file,
    parse_json,
    read_user_bytes,
    write_user_file,
)

from .codes import (
    FROM_ENV,
    ROOM_KEY_VAR,
    check_name,
    completion_code,
    leaderboard,
    leaderboard_lines,
    leaderboard_text,
    rejection,
    resolve_room_key,
    upgrade_old_code,
    verify,
)
from .missions import (
    MISSIONS,
    Mission,
    MissionLike,
    Score,
    Settings,
    check_prediction,
    get_mission,
    normalise_settings,
    score,
)

__all__ = ["ENV_VAR", "progress_path", "load", "reset", "set_name", "commit_prediction",
           "attempt", "completion_code", "verify", "leaderboard", "leaderboard_lines", "rejection",
           "progress_text", "leaderboard_text", "EXPORT_NAME", "export_progress", "export_text",
           "import_progress", "ROOM_KEY_VAR", "FROM_ENV", "resolve_room_key", "check_name",
           "Record", "Progress"]

#: The environment variable that moves the progress file.
ENV_VAR = "KVSIM_MISSIONS_FILE"
_VERSION = 2

#: A path as the functions take it (None: :func:`progress_path`'s default).
PathLike = str | os.PathLike[str]


class Record(TypedDict):
    """One mission's progress: the runs made, the best run's stars, settings and code, and
    the committed prediction (as JSON holds it) with whether it came before the first run."""

    attempts: int
    stars: int
    settings: Settings | None
    prediction: dict[str, object] | None
    prediction_counts: bool
    code: str | None


class Progress(TypedDict):
    """The progress file: its version, the learner's name and a record per mission."""

    version: int
    name: str | None
    missions: dict[str, Record]


def progress_path(path: PathLike | None = None) -> Path:
    """Where progress is kept: ``path``, else ``$KVSIM_MISSIONS_FILE``, else ``~/.kvsim/missions.json``."""
    if path is not None:
        return Path(path)
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    return Path.home() / ".kvsim" / "missions.json"


def _empty() -> Progress:
    return {"version": _VERSION, "name": None, "missions": {}}


#: The largest progress or export file kvsim reads: 4 MiB (a real one is a few kilobytes).
MAX_PROGRESS_BYTES = 4 * 2**20
_PROGRESS_EXPECTED = "a kvsim progress file (JSON with 'missions')"


def _looks_like_progress(data: bytes) -> bool:
    """Whether a file is kvsim's progress file, whole or damaged (cut short, a bad record):
    a JSON object that names ``missions`` (an export is not one: it is imported)."""
    text = data.decode("utf-8", errors="replace")
    if not text.lstrip().startswith("{") or '"missions"' not in text:
        return False
    return f'"format": "{_FORMAT}"' not in text and f'"format":"{_FORMAT}"' not in text


def _is_export(data: bytes) -> bool:
    """Whether a file is an export :func:`export_progress` wrote (so it may be replaced)."""
    text = data.decode("utf-8", errors="replace")
    return text.lstrip().startswith("{") and (f'"format": "{_FORMAT}"' in text
                                               or f'"format":"{_FORMAT}"' in text)


def _progress_kind(p: Path) -> os.stat_result | None:
    """``p``'s status if it is a regular file, None if nothing is there; a one-line error when
    something else is (a folder, a FIFO, a device)."""
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise KvsimError(f"progress file {str(p)!r}: cannot check it ({e.strerror}): expected "
                         f"{_PROGRESS_EXPECTED} or a new path") from None
    if not stat.S_ISREG(st.st_mode):
        raise KvsimError(f"progress file {str(p)!r} is {file_kind(st.st_mode)}, not a regular "
                         f"file: nothing was changed; expected {_PROGRESS_EXPECTED} or a new "
                         f"path (--progress-file or ${ENV_VAR})")
    return st


def _refuse_foreign(p: Path) -> None:
    """A one-line error, before anything is created beside it, when something other than a
    kvsim progress file (or an empty file) is at ``p``."""
    if _progress_kind(p) is None:
        return
    raw = read_user_bytes(p, what="progress file", expected=_PROGRESS_EXPECTED,
                          max_bytes=MAX_PROGRESS_BYTES)
    if raw.strip() and not _looks_like_progress(raw):
        hint = (" (it is an export: `kvsim missions --import` reads it)" if _is_export(raw)
                else "")
        raise KvsimError(f"progress file {str(p)!r} is not a kvsim progress file{hint}: "
                         f"nothing was changed; expected {_PROGRESS_EXPECTED} or a new path "
                         f"(--progress-file or ${ENV_VAR})")


@contextlib.contextmanager
def _locked(p: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``p``'s sibling ``<name>.lock`` for a read-modify-write.

    Two kernels (or a kernel and ``kvsim missions``) saving at once then take
    turns: neither loses the other's attempt. ``fcntl.flock`` is POSIX-only
    (Linux, macOS, Binder). Where it does not exist (Windows, whose msvcrt
    locking kvsim does not use) there is no lock: each write is still atomic
    (a reader sees the old file or the new one, never half), but two writers
    at the same instant can lose one attempt. flock is not re-entrant across
    open files, so nothing here takes it twice.
    """
    _refuse_foreign(p)                    # a folder, a device or another file: one line, now
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise KvsimError(f"progress file {str(p)!r}: cannot make its folder "
                         f"({e.strerror or type(e).__name__}): expected a path in a folder "
                         f"kvsim can write") from None
    if fcntl is None:
        yield
        return
    fd = open_lock_file(p.with_name(p.name + ".lock"), what=f"progress file {str(p)!r}")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _upgraded_code(code: object) -> object:
    """A first-format code (no name) made again in this format, its checksum checked
    (:func:`~kvsim.lab.codes.upgrade_old_code`); anything else as it is (a bad one is then
    found damaged by :func:`_check_record`)."""
    if not isinstance(code, str) or len(code.split("/")) != 5:
        return code
    try:
        return upgrade_old_code(code, room_key=None)
    except KvsimError:
        return code


def _upgraded(rec: object) -> object:
    """``rec`` with its code upgraded (:func:`_upgraded_code`)."""
    if not isinstance(rec, dict) or "code" not in rec:
        return rec
    return dict(rec, code=_upgraded_code(rec["code"]))


def _valid_records(missions: Mapping[object, object]) -> tuple[dict[str, Record], list[str]]:
    """The records of ``missions`` that pass :func:`_check_record` (first-format codes
    upgraded), and the keys of those that do not."""
    good: dict[str, Record] = {}
    bad: list[str] = []
    for key, rec in missions.items():
        rec = _upgraded(rec)
        try:
            _check_record("progress", key, rec)
        except (KvsimError, TypeError, ValueError, KeyError, AttributeError):
            bad.append(str(key))
        else:
            good[str(key)] = cast(Record, rec)      # as it is: _check_record passed it
    return good, bad


def _name_ok(name: object) -> bool:
    """Whether ``name`` is a stored learner's name: none, or one :func:`check_name` keeps."""
    if name is None:
        return True
    try:
        return check_name(name) == name
    except KvsimError:
        return False


def _salvage(text: str) -> dict[str, Record]:
    """Mission records still readable in a file that is not JSON as a whole (cut short, say):
    each ``"<n>": {...}`` object that parses and passes :func:`_check_record`."""
    dec = json.JSONDecoder()
    found: dict[str, Record] = {}
    for n in MISSIONS:
        for hit in re.finditer(rf'"{n}"\s*:\s*\{{', text):
            try:
                rec, _ = dec.raw_decode(text, hit.end() - 1)
            except ValueError:
                continue
            good, _ = _valid_records({str(n): rec})
            if good:
                found.update(good)
                break
    return found


def _read(p: Path) -> Progress:
    """The progress at ``p`` (the lock held). Nothing there (or an empty file): empty
    progress. Anything but a kvsim progress file there is a one-line error and is left as it
    is. A damaged progress file is never wiped: a copy is kept beside it as
    ``<name>.bad-<UTC time>`` (a new file), the progress is rebuilt from the records still
    readable in it, and one line on stderr says where the copy is."""
    st = _progress_kind(p)
    if st is None:
        return _empty()
    raw = read_user_bytes(p, what="progress file", expected=_PROGRESS_EXPECTED,
                          max_bytes=MAX_PROGRESS_BYTES)
    if not raw.strip():
        return _empty()
    if not _looks_like_progress(raw):
        _refuse_foreign(p)
    data: object = None
    missions: dict[str, Record] = {}
    why = ""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        why = f"not JSON ({type(e).__name__})"
        missions = _salvage(raw.decode("utf-8", errors="replace"))
    name: str | None = None
    if data is not None:
        doc = data if isinstance(data, dict) else {}
        version = doc.get("version")
        shaped = isinstance(doc.get("missions"), dict)
        if version == _VERSION and shaped and _name_ok(doc.get("name")):
            name = doc.get("name")
        if not shaped or not (version == _VERSION and "name" in doc and _name_ok(doc["name"])
                              or version == 1 and "name" not in doc):
            why = f"not a kvsim progress file (version {_VERSION})"
            if shaped:
                missions, _ = _valid_records(doc["missions"])
        else:
            missions, bad = _valid_records(doc["missions"])
            if not bad:
                if version == _VERSION and missions == doc["missions"]:
                    return cast(Progress, doc)          # every field checked above
                # the first format (codes without a name), upgraded: the same progress
                upgraded = Progress(version=_VERSION, name=name, missions=missions)
                _save(upgraded, p)
                return upgraded
            why = f"damaged record(s) for mission {', '.join(bad)}"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    aside = p.with_name(f"{p.name}.bad-{stamp}")
    n = 1
    while not create_new_file(aside, raw):          # never over anything already there
        if n > 100:
            raise KvsimError(f"progress file {str(p)!r} was {why}, and no copy of it could be "
                             f"made beside it: nothing was changed; expected a writable folder")
        aside = p.with_name(f"{p.name}.bad-{stamp}-{n}")
        n += 1
    rebuilt = Progress(version=_VERSION, name=name, missions=missions)
    if missions:
        _save(rebuilt, p)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(p)                            # its copy is beside it
    kept = (f"kept mission(s) {', '.join(sorted(missions, key=int))}" if missions
            else "nothing in it was readable, so progress starts empty")
    print(f"kvsim: progress file {str(p)!r} was {why}: kept a copy as {str(aside)!r}; {kept}",
          file=sys.stderr)
    return rebuilt


def load(path: PathLike | None = None) -> Progress:
    """The progress record (an empty one if the file does not exist).

    A damaged progress file is copied aside (``missions.json.bad-<UTC time>``)
    and the progress rebuilt from what is still readable in it; one line on
    stderr says so and where the copy is. Anything else at the path (a
    folder, a device, another program's file) is a one-line error.
    """
    p = progress_path(path)
    with _locked(p):
        return _read(p)


def _save(data: Progress, p: Path) -> Path:
    """Write the progress (the caller holds :func:`_locked`): only over a kvsim progress
    file, an empty file or nothing (:func:`kvsim.files.write_user_file`)."""
    write_user_file(p, json.dumps(data, indent=1, sort_keys=True), what="progress file",
                    ours=_looks_like_progress, expected=_PROGRESS_EXPECTED)
    return p


def reset(path: PathLike | None = None) -> Path:
    """Forget all progress (the file is removed, if it is a kvsim progress file); returns its
    path."""
    p = progress_path(path)
    with _locked(p):
        if _progress_kind(p) is not None:
            raw = read_user_bytes(p, what="progress file", expected=_PROGRESS_EXPECTED,
                                  max_bytes=MAX_PROGRESS_BYTES)
            if raw.strip() and not _looks_like_progress(raw):
                raise KvsimError(f"progress file {str(p)!r} is not a kvsim progress file: "
                                 f"nothing was removed; expected {_PROGRESS_EXPECTED}")
            p.unlink()
    return p


def _new_entry() -> Record:
    return {"attempts": 0, "stars": 0, "settings": None, "prediction": None,
            "prediction_counts": False, "code": None}


def _entry(data: Progress, n: int) -> Record:
    return data["missions"].setdefault(str(n), _new_entry())


def _improves(entry: Record, stars: int) -> bool:
    """The best-attempt order: a result with ``stars`` replaces ``entry``'s best attempt
    when it has more stars, or when the entry has none yet (on a tie the first stays)."""
    return stars > entry["stars"] or entry["settings"] is None


def commit_prediction(mission: MissionLike, prediction: object,
                      path: PathLike | None = None) -> str:
    """Store a prediction (``{"cause": key}`` or ``{"band": (lo, hi)}``); returns one line saying
    whether it can still earn the third star (only if no run of the mission came first)."""

    m = get_mission(mission)
    checked = check_prediction(m, prediction)
    p = progress_path(path)
    with _locked(p):
        data = _read(p)
        e = _entry(data, m.number)
        counts = e["attempts"] == 0
        e["prediction"] = _jsonable(checked)
        e["prediction_counts"] = counts
        _save(data, p)
    if counts:
        return (f"Mission {m.number}: prediction committed before any run; it counts toward "
                f"the third star.")
    return (f"Mission {m.number}: prediction stored, but the mission has already been run: "
            f"it cannot earn the third star (reset to start over).")


def _jsonable(prediction: Mapping[str, object] | None) -> dict[str, object] | None:
    if prediction is None:
        return None
    (k, v), = prediction.items()
    return {k: list(v) if isinstance(v, tuple | list) else v}


def attempt(mission: MissionLike, settings: Mapping[str, object] | None = None,
            path: PathLike | None = None, *, executor: Executor | None = None) -> Score:
    """Score ``settings`` (with the stored prediction, if it came first), record the best result,
    and return the :class:`~kvsim.lab.missions.Score`."""
    m = get_mission(mission)
    checked = normalise_settings(m, settings)
    p = progress_path(path)
    e = _entry(load(p), m.number)
    stored = e["prediction"] if e["prediction_counts"] else None
    pred = {"band": _pair(stored["band"])} if stored and "band" in stored else stored
    sc = score(m, checked, prediction=pred, executor=executor)   # slow: outside the lock
    with _locked(p):                  # read again: another kernel may have saved meanwhile
        data = _read(p)
        e = _entry(data, m.number)
        now = e["prediction"] if e["prediction_counts"] else None
        if now != stored:
            # a prediction committed while this run was being scored came after it: it no
            # longer counts, and this run's code carries the prediction it was scored with
            e["prediction_counts"] = False
        e["attempts"] += 1
        if _improves(e, sc.stars):
            e["stars"] = sc.stars
            e["settings"] = checked
            e["code"] = (completion_code(m.number, sc.stars, checked, pred, name=data["name"])
                         if sc.stars else None)
        _save(data, p)
    return sc


def _pair(value: object) -> tuple[object, ...]:
    """A stored band (a JSON list) as the tuple :func:`~kvsim.lab.missions.score` takes."""
    if not isinstance(value, list | tuple):
        raise KvsimError(f"prediction band={value!r}: expected (low, high)")
    return tuple(value)


def set_name(name: object, path: PathLike | None = None) -> str:
    """Put the learner's ``name`` in the progress file and re-make every stored completion
    code with it (and with the room tag when ``$KVSIM_ROOM_KEY`` is set); returns one line.

    A code is made from its record (mission, stars, settings and the prediction its best run
    was scored with); nothing is re-scored here: :func:`verify` re-scores every code it checks.
    """
    checked = check_name(name)
    key = resolve_room_key()
    p = progress_path(path)
    with _locked(p):
        data = _read(p)
        data["name"] = checked
        made = 0
        for n, e in data["missions"].items():
            if e["code"] is not None:
                v = verify(e["code"], rescore=False, room_key=None)
                e["code"] = completion_code(int(n), e["stars"], e["settings"] or {},
                                            v["prediction"], name=checked, room_key=key)
                made += 1
        _save(data, p)
    room = (f" and the room tag of ${ROOM_KEY_VAR}" if key is not None
            else f" (no room tag: ${ROOM_KEY_VAR} is not set)")
    return f"name {checked!r}: {made} completion code(s) made again with it{room}"


# --------------------------------------------------------------------- export, import

#: The file :func:`export_progress` writes when it is given no destination.
EXPORT_NAME = "kvsim-missions-export.json"
_FORMAT = "kvsim-missions-export"
_EXPORT_VERSION = 1
_WRITTEN_BY = "a file written by `kvsim missions --export` (export_progress)"
_EXPECTED = f"expected {_WRITTEN_BY}"
_EXPORT_FILE = f"a kvsim export (format {_FORMAT!r})"
_FIELDS = ("attempts", "stars", "settings", "prediction", "prediction_counts", "code")
_HEADER = {"format", "version", "kvsim_version", "exported_at", "codes", "note", "progress"}
_NOTE = ("kvsim lab progress (chapter 5). Load it in another session with "
         "`kvsim missions --import FILE` or kvsim.lab.progress.import_progress(FILE); "
         "check a code with `kvsim missions --verify CODE`.")


def _show(value: object) -> str:
    """``repr`` of a bad value, short enough for a one-line error."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kvsim_version() -> str:
    from kvsim import __version__  # read from the distribution's metadata on first use

    version: str = __version__
    return version


def export_progress(dest: PathLike | None = None, *, path: PathLike | None = None) -> str:
    """Write this machine's progress to ``dest`` as one JSON document; return the path written.

    ``dest`` defaults to :data:`EXPORT_NAME` in the current folder (a folder
    given as ``dest`` gets that name inside it); an existing export is
    replaced, anything else there (a device, a FIFO, another file) is refused
    in one line and left as it is (:func:`kvsim.files.write_user_file`).
    The document is ``{"format": "kvsim-missions-export", "version": 1,
    "kvsim_version", "exported_at", "note", "codes": {mission: code} (every
    mission with a star), "progress": <the progress file as it is>}``. The
    progress file (``path``, see :func:`progress_path`) is only read.
    """
    src = progress_path(path)
    data = load(path)
    target = Path(dest) if dest is not None else Path.cwd() / EXPORT_NAME
    if target.is_dir():
        target = target / EXPORT_NAME
    target = Path(os.path.abspath(target))
    if os.path.realpath(target) == os.path.realpath(src):
        raise KvsimError(f"export to {str(target)!r}: that is the progress file itself: expected "
                         f"another file name, e.g. {EXPORT_NAME}")
    if not target.parent.is_dir():
        raise KvsimError(f"export to {str(target)!r}: folder {str(target.parent)!r} does not "
                         f"exist: expected an existing folder")
    check_writable(target, what="export to", ours=_is_export, expected=_EXPORT_FILE)
    write_user_file(target, _export_text(data), what="export to", ours=_is_export,
                    expected=_EXPORT_FILE)
    return str(target)


def export_text(path: PathLike | None = None) -> str:
    """The export :func:`export_progress` would write, as text (nothing is written): what a
    panel offers as a download, so a learner keeps their progress in one click."""
    return _export_text(load(path))


def _export_text(data: Progress) -> str:
    missions = data["missions"]
    codes: dict[str, str] = {}
    for key in sorted(missions, key=lambda k: (len(k), k)):
        e = missions[key]
        if isinstance(e, dict) and e.get("stars") and (code := e.get("code")):
            codes[key] = code
    doc = {"format": _FORMAT, "version": _EXPORT_VERSION, "kvsim_version": _kvsim_version(),
           "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
           "note": _NOTE, "codes": codes, "progress": data}
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def _check_record(where: str, key: object, rec: object) -> Record:
    """One mission's record checked field by field and against its own code (not re-scored);
    returns it with settings and prediction in kvsim's normal form. ``where`` starts every
    error (the file's name)."""

    if not isinstance(key, str) or key not in {str(n) for n in MISSIONS}:
        raise KvsimError(f"{where}: mission {_show(key)} is not known: expected one of "
                         f"{', '.join(repr(str(n)) for n in MISSIONS)}")
    m = MISSIONS[int(key)]
    at = f"{where}: mission {m.number}"
    if not isinstance(rec, dict):
        raise KvsimError(f"{at}: record {_show(rec)} is a {type(rec).__name__}: expected an "
                         f"object with {', '.join(_FIELDS)}")
    missing = [f for f in _FIELDS if f not in rec]
    extra = sorted(set(rec) - set(_FIELDS), key=str)
    if missing or extra:
        what = f"lacks {missing[0]!r}" if missing else f"has an unknown field {_show(extra[0])}"
        raise KvsimError(f"{at}: the record {what}: expected exactly {', '.join(_FIELDS)}")
    out = cast(Record, dict(rec))       # each field checked below, before it is returned
    _check_record_scalars(at, rec)
    s = rec["settings"]
    if s is not None:
        levers = [lv.name for lv in m.levers]
        if not isinstance(s, dict) or sorted(s) != sorted(levers):
            raise KvsimError(f"{at}: settings={_show(s)}: expected an object with exactly "
                             f"{', '.join(levers)}")
        try:
            out["settings"] = normalise_settings(m, s)
        except KvsimError as e:
            raise KvsimError(f"{at}: settings: {e}") from None
    pred = rec["prediction"]
    try:
        out["prediction"] = _jsonable(check_prediction(m, pred))
    except (KvsimError, TypeError, ValueError) as e:
        raise KvsimError(f"{at}: prediction: {e}") from None
    if (rec["attempts"] == 0) != (s is None):
        raise KvsimError(f"{at}: attempts={rec['attempts']} with settings={_show(s)}: expected "
                         f"settings null before the first run and the best run's settings after")
    if (rec["stars"] > 0) != (rec["code"] is not None):
        raise KvsimError(f"{at}: stars={rec['stars']} with code={_show(rec['code'])}: expected "
                         f"a completion code exactly when the record has a star")
    _check_record_code(at, m, out)
    return out


def _check_record_scalars(at: str, rec: dict[object, object]) -> None:
    """A record's counts, flag and code, each of its JSON type and range."""
    for name, lo, hi in (("attempts", 0, None), ("stars", 0, 3)):
        v = rec[name]
        if type(v) is not int or v < lo or (hi is not None and v > hi):
            rng = f"{lo} to {hi}" if hi is not None else f">= {lo}"
            raise KvsimError(f"{at}: {name}={_show(v)}: expected an integer {rng}")
    if type(rec["prediction_counts"]) is not bool:
        raise KvsimError(f"{at}: prediction_counts={_show(rec['prediction_counts'])}: "
                         f"expected true or false")
    if rec["code"] is not None and not isinstance(rec["code"], str):
        raise KvsimError(f"{at}: code={_show(rec['code'])}: expected a completion code or null")


def _check_record_code(at: str, m: Mission, rec: Record) -> None:
    """A record's code, if it has one, against the record (its settings and prediction in
    normal form): its checksum, and the mission, stars, settings and prediction it claims."""
    code = rec["code"]
    if code is None:
        return
    try:
        v = verify(code, rescore=False, room_key=None)
    except KvsimError as e:
        raise KvsimError(f"{at}: code {_show(code)}: {e}") from None
    if not v["checksum_ok"]:
        raise KvsimError(f"{at}: code {code!r} fails its checksum: expected the code "
                         f"kvsim wrote (a character was changed)")
    claims: tuple[tuple[str, object, object], ...] = (
        ("mission", v["mission"], m.number), ("stars", v["stars"], rec["stars"]),
        ("settings", v["settings"], rec["settings"]))
    for name, claimed, want in claims:
        if claimed != want:
            raise KvsimError(f"{at}: code {code!r} says {name} {_show(claimed)}, the "
                             f"record {_show(want)}: expected the code of the record's "
                             f"best run")
    # a prediction that counts was stored before the first run, so every code since used it
    if rec["prediction_counts"] and _jsonable(v["prediction"]) != rec["prediction"]:
        raise KvsimError(f"{at}: prediction_counts is true but code {code!r} was "
                         f"scored with prediction {_show(_jsonable(v['prediction']))}, not "
                         f"{_show(rec['prediction'])}: expected the prediction committed "
                         f"before the first run")


def _rescore(where: str, n: int, rec: Record) -> None:
    """Score a starred record's settings again: its stars must be what kvsim gives now."""
    code = rec["code"] or ""                     # a starred record has one (_check_record)
    v = verify(code, room_key=None)             # the settings' stars; no room is checked here
    if not v["ok"]:
        raise KvsimError(f"{where}: mission {n}: stars={rec['stars']} is not confirmed: code "
                         f"{rec['code']!r} re-scores to {v['rescored']} star(s): expected the "
                         f"stars kvsim gives the record's settings")


def _read_export(p: Path, progress: Callable[[str], None] | None = None
                 ) -> tuple[dict[int, Record], str | None]:
    """The export at ``p``, every record checked and every starred one re-scored, and the
    learner's name in it (an export of the first format, version 1 progress, is upgraded)."""
    where = f"import file {str(p)!r}"
    raw = read_user_bytes(p, what="import file", expected=_EXPECTED[9:],
                          max_bytes=MAX_PROGRESS_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise KvsimError(f"{where} is not JSON (not UTF-8 text): {_EXPECTED}") from None
    doc = parse_json(text, where=where, expected=_EXPECTED[9:])
    if not isinstance(doc, dict):
        raise KvsimError(f"{where} holds a JSON {type(doc).__name__}, not an object: {_EXPECTED}")
    _check_export_header(where, doc)
    prog = doc["progress"]
    first = isinstance(prog, dict) and sorted(prog) == ["missions", "version"] and \
        type(prog["version"]) is int and prog["version"] == 1      # names came later
    current = isinstance(prog, dict) and sorted(prog) == ["missions", "name", "version"] and \
        type(prog["version"]) is int and prog["version"] == _VERSION and _name_ok(prog["name"])
    if not (first or current) or not isinstance(prog["missions"], dict):
        raise KvsimError(f"{where}: progress={_show(prog)}: expected an object "
                         f"{{\"version\": {_VERSION}, \"name\": null or a name, "
                         f"\"missions\": {{...}}}}")
    records: dict[int, Record] = {}
    for key, rec in prog["missions"].items():
        checked = _check_record(where, key, _upgraded(rec) if first else rec)   # key first
        records[int(key)] = checked
    codes = doc["codes"]
    if not isinstance(codes, dict):
        raise KvsimError(f"{where}: codes={_show(codes)}: expected an object mission -> code")
    if first:
        codes = {k: _upgraded_code(c) for k, c in codes.items()}
    want = {str(n): r["code"] for n, r in records.items() if r["stars"]}
    for key in sorted(set(codes) | set(want), key=str):
        if codes.get(key) != want.get(key):
            raise KvsimError(f"{where}: codes[{key!r}]={_show(codes.get(key))} does not match "
                             f"the progress records (code {_show(want.get(key))}): expected the "
                             f"code of every mission with a star, as its record has it")
    for n in sorted(records):           # the slow part last, once everything else holds
        if records[n]["stars"]:
            if progress is not None:
                progress(f"re-scoring mission {n}")
            _rescore(where, n, records[n])
    return records, (None if first else prog["name"])


def _check_export_header(where: str, doc: dict[object, object]) -> None:
    """An export's own fields: its format, version, field names and strings."""
    if "format" not in doc and "missions" in doc:
        raise KvsimError(f"{where} is a progress file, not an export (it has no 'format'): "
                         f"{_EXPECTED}, or set {ENV_VAR} to use that file as it is")
    if doc.get("format") != _FORMAT:
        raise KvsimError(f"{where}: format={_show(doc.get('format'))}: expected {_FORMAT!r} "
                         f"({_WRITTEN_BY})")
    version = doc.get("version")
    if type(version) is not int or version != _EXPORT_VERSION:
        raise KvsimError(f"{where}: version={_show(version)}: expected {_EXPORT_VERSION} "
                         f"(the export version this kvsim reads)")
    missing = sorted({"kvsim_version", "codes", "progress"} - set(doc))
    extra = sorted(set(doc) - _HEADER, key=str)
    if missing or extra:
        what = f"lacks {missing[0]!r}" if missing else f"has an unknown field {_show(extra[0])}"
        raise KvsimError(f"{where}: the export {what}: expected the fields "
                         f"{', '.join(sorted(_HEADER))}")
    for name in ("kvsim_version", "exported_at", "note"):
        if name in doc and not isinstance(doc[name], str):
            raise KvsimError(f"{where}: {name}={_show(doc[name])}: expected a string")


def _still_counts(side: Record, other: Record) -> bool:
    """Whether ``side``'s prediction still came before the first run once ``other``'s runs are
    added: it did in its own file and ``other`` has no runs, or ``other`` committed the same
    prediction before its own runs too. A merge can take eligibility away, never grant it."""
    if not side["prediction_counts"]:
        return False
    return other["attempts"] == 0 or (other["prediction_counts"]
                                      and other["prediction"] == side["prediction"])


def _merge(cur: Record | None, imp: Record) -> tuple[Record, str]:
    """One mission's merged record and what happened (``imported``, ``kept``, ``unchanged``)."""
    base = cur if cur is not None else _new_entry()
    take = imp["settings"] is not None and _improves(base, imp["stars"])
    best = imp if take else base
    if _still_counts(base, imp):
        pred, counts = base["prediction"], True
    elif _still_counts(imp, base):
        pred, counts = imp["prediction"], True
    else:                               # the local guess if there is one; it no longer counts
        pred = base["prediction"] if base["prediction"] is not None else imp["prediction"]
        counts = False
    merged: Record = {"attempts": max(base["attempts"], imp["attempts"]), "stars": best["stars"],
                      "settings": best["settings"], "code": best["code"], "prediction": pred,
                      "prediction_counts": counts}
    if cur is not None and merged == cur:
        return cur, "unchanged"
    return merged, "imported" if (take or cur is None) else "kept"


def import_progress(source: PathLike, *, path: PathLike | None = None,
                    progress: Callable[[str], None] | None = None) -> dict[int, str]:
    """Merge an export (:func:`export_progress`) from ``source`` into the progress at ``path``.

    Everything is checked before anything is written: the header, every
    record's fields, each code against its record, and every starred record
    re-scored (:func:`verify`); any failure raises a one-line KvsimError naming
    the file, the value and what was expected, and leaves the progress file as
    it was. Per mission the better best attempt wins (more stars; on a tie the
    one already here, the order :func:`attempt` keeps); runs are counted as the
    larger of the two counts, and a committed prediction keeps its claim on the
    third star only if it still precedes every run of both files (a merge never
    makes a prediction count that did not). Returns ``{mission: "imported" |
    "kept" | "unchanged"}`` for every mission: ``imported``, the export's best
    attempt was taken (or the mission was new here); ``kept``, this machine's
    best attempt stays (its run count or prediction may have been merged);
    ``unchanged``, the export adds nothing (the mission is not in it, or its
    record is the same as here). The learner's name here stays; progress with
    no name takes the export's. Imported codes keep the name they were made
    with (:func:`set_name` makes every code again with one name). ``progress``, when given,
    is called with ``"re-scoring mission n"`` before each starred record is scored again.
    """
    records, name = _read_export(Path(source), progress)   # slow (re-scoring): outside the lock
    p = progress_path(path)
    with _locked(p):
        return _merge_into(p, _read(p), records, name)


def _merge_into(p: Path, data: Progress, records: dict[int, Record],
                name: str | None) -> dict[int, str]:
    where = f"progress file {str(p)!r}"
    missions = dict(data["missions"])
    summary: dict[int, str] = {}
    for n in MISSIONS:
        key = str(n)
        if n not in records:
            summary[n] = "unchanged"
            continue
        cur: Record | None = missions.get(key)
        if cur is not None:
            try:
                cur = _check_record(where, key, cur)
            except KvsimError as e:
                raise KvsimError(f"{e} (`kvsim missions --reset` starts over)") from None
        missions[key], summary[n] = _merge(cur, records[n])
    named = data["name"] if data["name"] is not None else name
    if any(v != "unchanged" for v in summary.values()) or named != data["name"]:
        merged: Progress = {**data, "name": named, "missions": missions}
        _save(merged, p)
    return summary


# ------------------------------------------------------------------------ read-outs

def progress_text(path: PathLike | None = None) -> str:
    """Progress at a terminal: the learner's name, one line per mission, then the total and
    the file."""
    data = load(path)
    if data["name"] is not None:
        lines = [f"name {data['name']!r} (in every completion code)"]
    else:
        lines = ["no name yet: `kvsim missions --name NAME` puts yours in every completion code "
                 "(a code without one is refused by the leaderboard)"]
    total = 0
    for n, m in MISSIONS.items():
        e = data["missions"].get(str(n))
        stars = e["stars"] if e else 0
        total += stars
        bar = "*" * stars + "." * (3 - stars)
        if not e or not e["attempts"]:
            state = "not started"
        else:
            shown = ", ".join(f"{k}={v}" for k, v in (e["settings"] or {}).items())
            state = f"{e['attempts']} run(s), best: {shown}"
            if e["code"]:
                state += f"  code {e['code']}"
        lines.append(f"mission {n} [{bar}] {m.title}: {state}")
    lines.append(f"total {total} of {3 * len(MISSIONS)} stars  (progress in {progress_path(path)})")
    return "\n".join(lines)
