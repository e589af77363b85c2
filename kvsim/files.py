"""The user's files: reads bounded in size and time, writes that never replace what is not ours.

Every file kvsim reads on a user's behalf (a trace, a ``config.json``, a rule
file, a dashboard, a scrape, a leaderboard, a progress or export file) goes
through :func:`read_user_bytes`: only a **regular file** is read (a folder, a
FIFO, a device such as ``/dev/zero``, a socket is refused before a byte is
read, and opening never blocks: ``O_NONBLOCK``), and never more than the
caller's stated maximum (each reader names its own, e.g.
:data:`MAX_JSON_BYTES`). So a read ends, and a bad path is one line naming it.

JSON goes through :func:`parse_json`: nesting deeper than :data:`MAX_JSON_DEPTH`
levels and integers of more than :data:`MAX_JSON_DIGITS` digits are refused in
one line (Python's parser would raise ``RecursionError`` or ``ValueError``).
An integer that long is kept as a :class:`HugeInt`, so the field that holds it
can name itself in its own range error.

Every file kvsim writes for a user (a progress file, an export, a trace) goes
through :func:`write_user_file`:

* only to a **new path or a regular file that is already ours** (``ours``, the
  caller's test of the file's bytes; an empty file counts as ours) and not
  read-only (no write bit at all: its owner protected it, and neither root's
  rights nor a rename over it would stop kvsim): a folder, a FIFO, a device, a
  socket, a read-only file or somebody else's file is refused in one line and
  nothing is written;
* through a temporary file beside it, named ``.<name>.kvsim-<pid>-<8 hex>.tmp``
  (:func:`temp_name`), and :func:`os.replace`: a reader sees the old file or the
  whole new one. The temporary file is removed if the write fails; a process
  killed mid-write leaves one behind, so every write first removes the stale
  ones of the same target (:func:`remove_stale_temps`): files of exactly that
  pattern (or the pattern of kvsim 2.0, ``.<name>.<pid>.<8 hex>.tmp``) whose
  process no longer runs on this machine. Nothing else is ever removed.

A symbolic link is followed: the file it points to is what is read or written.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from .errors import KvsimError

__all__ = ["read_user_bytes", "read_text_file", "parse_json", "json_depth", "HugeInt",
           "write_user_file", "check_writable", "temp_name", "remove_stale_temps",
           "create_new_file", "open_lock_file", "MAX_JSON_BYTES", "MAX_JSON_DEPTH",
           "MAX_JSON_DIGITS", "file_kind"]

#: The largest JSON document kvsim reads from a user (a config.json, a dashboard, a progress
#: or export file): 16 MiB. Real ones are kilobytes (a Grafana dashboard of a hundred panels
#: is about 200 KB); a checkpoint's index has its own, larger bound.
MAX_JSON_BYTES = 16 * 2**20
#: The deepest nesting of arrays and objects a JSON document may have: real configs and
#: dashboards nest under 15 levels; Python's parser fails near 1,000 with a RecursionError.
MAX_JSON_DEPTH = 100
#: The most digits an integer in a JSON document may have before it is kept as a
#: :class:`HugeInt` (Python refuses to convert more than 4,300 digits; no real field needs
#: more than 20).
MAX_JSON_DIGITS = 4000


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words (for a one-line error)."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def _shown_path(path: object) -> str:
    """A path as an error shows it: the repr of its file-system form (of anything else, its
    own repr)."""
    return repr(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else repr(path)


def read_user_bytes(path: object, *, what: str, expected: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them, or a one-line
    :class:`KvsimError` naming the file: missing, unreadable, not a regular file (a folder,
    a FIFO, a device: refused without reading or blocking) or larger than ``max_bytes``.

    ``what`` names the file's role ("trace", "rule file"), ``expected`` what it should hold.
    """
    shown = _shown_path(path)
    if not isinstance(path, (str, os.PathLike)):
        raise KvsimError(f"{what} {shown:.60} is not a path: expected {expected}")
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        raise KvsimError(f"{what} {shown} does not exist: expected {expected}") from None
    except OSError as exc:
        raise KvsimError(f"{what} {shown}: cannot read it ({exc.strerror or type(exc).__name__}"
                         f"): expected {expected}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise KvsimError(f"{what} {shown} is {file_kind(st.st_mode)}, not a regular file: "
                             f"expected {expected}")
        if st.st_size > max_bytes:
            raise KvsimError(f"{what} {shown} is {st.st_size:,} bytes: expected {expected} of "
                             f"at most {max_bytes:,} bytes")
        chunks, got = [], 0
        while got <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise KvsimError(f"{what} {shown}: cannot read it ({exc.strerror or type(exc).__name__}"
                         f"): expected {expected}") from None
    finally:
        os.close(fd)
    if got > max_bytes:                  # a file that grew while it was read
        raise KvsimError(f"{what} {shown} is over {max_bytes:,} bytes: expected {expected} of "
                         f"at most {max_bytes:,} bytes")
    return b"".join(chunks)


def read_text_file(path: object, *, what: str, expected: str,
                   max_bytes: int = MAX_JSON_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (:func:`read_user_bytes`), or a one-line
    :class:`KvsimError` naming it: also when it is binary (a NUL byte) or not UTF-8."""
    data = read_user_bytes(path, what=what, expected=expected, max_bytes=max_bytes)
    shown = _shown_path(path)
    if b"\0" in data:
        raise KvsimError(f"{what} {shown} is a binary file: expected {expected}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KvsimError(f"{what} {shown} is not UTF-8 text (byte {exc.start}): expected "
                         f"{expected}") from None


# ---------------------------------------------------------------------------------------------
# JSON

class HugeInt:
    """An integer of more than :data:`MAX_JSON_DIGITS` digits in a JSON document, kept
    unconverted: it is no ``int``, so a field reader refuses it and names its key."""

    __slots__ = ("digits", "negative")

    def __init__(self, text: str):
        self.negative = text.startswith("-")
        self.digits = len(text.lstrip("+-"))

    def __repr__(self) -> str:
        return f"<{'a negative' if self.negative else 'an'} integer of {self.digits:,} digits>"


def _parse_int(text: str) -> int | HugeInt:
    return int(text) if len(text) <= MAX_JSON_DIGITS else HugeInt(text)


_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def json_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON text (strings skipped); the scan stops
    as soon as it passes ``limit`` (that depth plus one is returned)."""
    depth = deepest = 0
    for m in _NESTING.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif c in "]}":
            depth -= 1
    return deepest


def parse_json(text: str, *, where: str, expected: str, max_depth: int = MAX_JSON_DEPTH) -> object:
    """``json.loads(text)`` with one-line errors naming ``where``: not JSON, nested deeper
    than ``max_depth``; an integer of more than :data:`MAX_JSON_DIGITS` digits becomes a
    :class:`HugeInt` (for the field to refuse in its own words). The document is returned as
    ``object``: the caller checks its shape."""
    if json_depth(text, max_depth) > max_depth:
        raise KvsimError(f"{where} is nested more than {max_depth} levels deep: expected "
                         f"{expected} (at most {max_depth} levels of arrays and objects)")
    try:
        return json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise KvsimError(f"{where} is not valid JSON ({exc.msg} at line {exc.lineno} column "
                         f"{exc.colno}): expected {expected}") from None
    except (ValueError, RecursionError) as exc:        # belt and braces: one line whatever
        raise KvsimError(f"{where} is not valid JSON ({type(exc).__name__}): expected "
                         f"{expected}") from None


def nonfinite_path(doc: object, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """The key path (``rope_scaling.factor``, ``list[3]``) of the first NaN or infinite
    number in a parsed JSON document, or None."""
    stack: list[tuple[str, object, int]] = [("", doc, 0)]
    while stack:
        where, node, depth = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return where or "(the document)"
        if depth > max_depth:
            continue
        if isinstance(node, dict):
            stack += [(f"{where}.{k}" if where else str(k), v, depth + 1)
                      for k, v in reversed(list(node.items()))]
        elif isinstance(node, list):
            stack += [(f"{where}[{i}]", v, depth + 1) for i, v in reversed(list(enumerate(node)))]
    return None


# ---------------------------------------------------------------------------------------------
# writing

def temp_name(target: Path) -> Path:
    """A temporary file's path beside ``target``, unique to this process and call."""
    return target.with_name(f".{target.name}.kvsim-{os.getpid()}-{secrets.token_hex(4)}.tmp")


def _stale_pattern(name: str) -> re.Pattern[str]:
    n = re.escape(name)
    return re.compile(rf"^\.{n}\.(?:kvsim-(\d+)-|(\d+)\.)[0-9a-f]{{8}}\.tmp$")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError, ValueError):
        return True                       # someone else's process, or no way to tell
    return True


def remove_stale_temps(target: Path) -> list[Path]:
    """Remove the temporary files a killed write to ``target`` left beside it: regular files
    named exactly as :func:`temp_name` names them (or as kvsim 2.0 did) whose process no
    longer runs. Returns what was removed; nothing else is touched."""
    pattern = _stale_pattern(target.name)
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if m is None:
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            if _alive(int(m.group(1) or m.group(2))):
                continue
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def check_writable(target: str | os.PathLike[str], *, what: str, ours: Callable[[bytes], bool], expected: str,
                   max_check_bytes: int = MAX_JSON_BYTES) -> Path:
    """The real path kvsim may write ``target`` to (symbolic links followed), or a one-line
    :class:`KvsimError`: its folder does not exist, or it exists and is not a regular file,
    or it is a regular file that ``ours`` (given its bytes) does not recognise and that is
    not empty. ``expected`` says what the file should be."""
    path = Path(os.path.realpath(os.fspath(target)))
    shown = repr(os.fspath(target))
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise KvsimError(f"{what} {shown}: folder {str(path.parent)!r} does not exist: "
                             f"expected an existing folder") from None
        return path
    except OSError as exc:
        raise KvsimError(f"{what} {shown}: cannot check it ({exc.strerror}): expected "
                         f"{expected}") from None
    if not stat.S_ISREG(st.st_mode):
        raise KvsimError(f"{what} {shown} is {file_kind(st.st_mode)}, not a regular file: "
                         f"nothing was written; expected a new path or {expected}")
    if not st.st_mode & 0o222:
        # read-only for everyone: its owner protected it (root's writes would not be stopped
        # by the mode, and a rename over it needs only the folder's permission)
        raise KvsimError(f"{what} {shown} is read-only: nothing was written; expected a new "
                         f"path or a writable {expected}")
    if st.st_size == 0:
        return path
    data = None
    if st.st_size <= max_check_bytes:
        with contextlib.suppress(KvsimError):
            data = read_user_bytes(path, what=what, expected=expected, max_bytes=max_check_bytes)
    if data is None or not ours(data):
        raise KvsimError(f"{what} {shown} is a file kvsim did not write (it is not {expected}): "
                         f"nothing was written; expected a new path or {expected}")
    return path


def write_user_file(target: str | os.PathLike[str], text: str, *, what: str, ours: Callable[[bytes], bool],
                    expected: str) -> Path:
    """Write ``text`` (UTF-8) to ``target`` through a temporary file and :func:`os.replace`,
    only where :func:`check_writable` allows; returns the path written.

    The stale temporary files of earlier killed writes are removed first; this write's own
    is removed if anything fails. A replaced file keeps its permission bits.
    """
    path = check_writable(target, what=what, ours=ours, expected=expected)
    remove_stale_temps(path)
    tmp = temp_name(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                     0o666)
    except OSError as exc:
        raise KvsimError(f"{what} {str(path)!r}: cannot write in its folder "
                         f"({exc.strerror or type(exc).__name__}): expected a writable folder"
                         ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileNotFoundError):
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode):     # it changed while we wrote
                raise KvsimError(f"{what} {str(path)!r} became {file_kind(st.st_mode)} while "
                                 f"kvsim wrote it: nothing was written")
            with contextlib.suppress(OSError):
                os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise KvsimError(f"{what} {str(path)!r}: cannot write it "
                             f"({exc.strerror or type(exc).__name__}): nothing was written"
                             ) from None
        raise
    return path


def create_new_file(path: Path, data: bytes) -> bool:
    """Create ``path`` holding ``data``, only if nothing is there (``O_EXCL``); returns whether
    it was created. Never replaces anything."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                     0o666)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
        return False
    return True


def open_lock_file(path: Path, *, what: str) -> int:
    """A descriptor on the lock file ``path`` (created if missing), or a one-line
    :class:`KvsimError` if something other than a regular file is there. Never blocks."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise KvsimError(f"{what}: cannot open its lock file {str(path)!r} "
                         f"({exc.strerror or type(exc).__name__}): expected a writable folder"
                         ) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise KvsimError(f"{what}: its lock file {str(path)!r} is {file_kind(st.st_mode)}, not "
                         f"a regular file: expected a lock file kvsim makes (remove what is "
                         f"there)")
    return fd
