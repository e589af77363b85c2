"""Completion codes: what a learner hands in and what a teacher can check offline.

Explained in chapter 5 (the lab) and its instructor notes. A code such as
``M1/2/0.87/-/Ana_Lopez/4KQ7M`` names the mission, the stars claimed, the
settings (in lever order), the prediction its run was scored with (``-``:
none), the learner's name (spaces written ``_``; ``-`` when no name was set)
and a checksum of all five. A code made where ``KVSIM_ROOM_KEY`` is set has
a sixth part, the **room tag** (``.../4KQ7M/K2P7QXRA``): an HMAC-SHA256,
keyed with the room key, over the rest of the code.

What :func:`verify` proves, offline:

* **the settings earn the stars claimed.** It scores them again
  (:func:`kvsim.lab.missions.score` is deterministic), so a claim the settings
  do not earn is rejected whoever typed it;
* **the code was not edited by accident.** The checksum covers the name,
  the settings, the stars and the prediction, so a changed character, a
  changed name included, fails. The checksum has no secret (SHA-256 over a
  public salt): anyone who reads this module can make a right checksum for
  any name, and the answers are public (``expert_settings``, ``pass_band``),
  so a code for two stars needs no play at all;
* with a room key, **the code was made with that key** (:func:`resolve_room_key`).

What it cannot prove: **when the prediction was made** (the third star is
re-scored from the prediction written in the code; the progress file counts
one only if it came before the first run, but a file can be edited and a code
made by hand), and **who typed the settings**. A room key narrows the second
to "someone who knew the key": anyone who knows it, learners in the room
included, can make codes with it. It tells codes made in the room (with this
session's key) from codes brought from elsewhere, nothing more.

Codes of the first format (``M1/2/0.87/-/ABCDE``, five parts, no name) are
refused with one line: they bind no name. A progress file written with them is
upgraded when it is read (:func:`upgrade_old_code`), so no progress is lost.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from kvsim.errors import KvsimError

from .missions import (
    MISSIONS,
    Lever,
    LeverValue,
    MissionLike,
    Settings,
    get_mission,
    mission_grid,
    normalise_settings,
    row_number,
    score,
)

__all__ = ["ROOM_KEY_VAR", "FROM_ENV", "resolve_room_key", "check_name", "completion_code", "verify",
           "rejection", "upgrade_old_code", "leaderboard_lines", "leaderboard",
           "leaderboard_text", "CHECKSUM_SALT", "NAME_MAX", "SCRIPTS", "name_scripts",
           "LEADERBOARD_MAX_ENTRIES", "example_code", "Verdict"]

#: The environment variable holding the instructor's room key.
ROOM_KEY_VAR = "KVSIM_ROOM_KEY"
#: ``room_key=FROM_ENV`` (the default) reads the key from :data:`ROOM_KEY_VAR`.
FROM_ENV: object = object()

_SALT = "kvsim-missions-v2"
_OLD_SALT = "kvsim-missions-v1"
_NAME_MAX = 32
#: The checksum's public salt and the longest name, for a code made elsewhere (the static
#: site makes the same codes in the browser: kvsim.book.lab_site).
CHECKSUM_SALT = _SALT
NAME_MAX = _NAME_MAX
_FORM = "M<mission>/<stars>/<settings>/<prediction>/<name>/<checksum>[/<room tag>]"
#: The longest completion code :func:`verify` reads (a real one is under 80 characters).
_CODE_MAX = 200
_TAG = re.compile(r"[A-Z2-7]{8}")
#: The most entries a leaderboard file may hold (a room of 2,500 learners, four missions each).
LEADERBOARD_MAX_ENTRIES = 10_000


def resolve_room_key(key: object = FROM_ENV) -> str | None:
    """The room key in force: ``key``, or ``$KVSIM_ROOM_KEY`` when ``key`` is :data:`FROM_ENV`;
    ``None`` (no key) when that is unset (or ``key`` is None or ""). A ``$KVSIM_ROOM_KEY``
    that is set but empty (or only spaces) is a one-line error, not "no key": a room whose
    key did not reach the shell would otherwise count every code from anywhere."""
    if key is FROM_ENV:
        key = os.environ.get(ROOM_KEY_VAR)
        if key is not None and not key.strip():
            raise KvsimError(f"${ROOM_KEY_VAR}={key!r} is set but empty: expected the room's "
                             f"key, or unset it (`unset {ROOM_KEY_VAR}`) to work without one")
    if key is None or key == "":
        return None
    if not isinstance(key, str):
        raise KvsimError(f"room key {type(key).__name__} is not text: expected a string "
                         f"(${ROOM_KEY_VAR})")
    return key


#: The writing systems a name's letters are told apart by (the first word of a letter's
#: Unicode name; CJK is Han). A letter of none of them (a modifier letter, say) belongs to none.
SCRIPTS = ("LATIN", "GREEK", "CYRILLIC", "ARMENIAN", "HEBREW", "ARABIC", "SYRIAC", "THAANA",
           "DEVANAGARI", "BENGALI", "GURMUKHI", "GUJARATI", "ORIYA", "TAMIL", "TELUGU",
           "KANNADA", "MALAYALAM", "SINHALA", "THAI", "LAO", "TIBETAN", "MYANMAR", "GEORGIAN",
           "HANGUL", "ETHIOPIC", "CHEROKEE", "KHMER", "MONGOLIAN", "HIRAGANA", "KATAKANA",
           "BOPOMOFO", "HAN")
#: The mixtures of scripts a name may have (Unicode TS #39's "highly restrictive" level):
#: one script, or Latin with Han and the Japanese kanas, with Han and Bopomofo, or with Han
#: and Hangul. Anything else (a Cyrillic "а" in a Latin name) is a look-alike.
_MIXTURES = (frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
             frozenset({"LATIN", "HAN", "BOPOMOFO"}), frozenset({"LATIN", "HAN", "HANGUL"}))


def _script(ch: str) -> str | None:
    """The script of a letter or digit in :data:`SCRIPTS`, or None (an ASCII digit, ...)."""
    if "0" <= ch <= "9":
        return None
    word = unicodedata.name(ch, "").split(" ", 1)[0]
    if word == "KATAKANA-HIRAGANA":               # the prolonged sound mark: either kana
        return None
    word = word.split("-", 1)[0]                  # ARABIC-INDIC DIGIT: Arabic
    word = "HAN" if word == "CJK" else word
    return word if word in SCRIPTS else None


def name_scripts(text: str) -> set[str]:
    """The scripts of the letters and digits of ``text`` (:data:`SCRIPTS`)."""
    return {sc for ch in text if ch.isalnum() and (sc := _script(ch)) is not None}


def check_name(name: object) -> str:
    """A learner's name for a code: whitespace collapsed (Unicode NFKC: full-width and other
    compatibility letters become the plain ones), 1 to 32 letters, digits, spaces, ``.``,
    ``-`` or ``'``, with at least one letter or digit, and letters of one script (or one of
    the mixtures of :data:`_MIXTURES`): a name with a look-alike letter of another script
    (a Cyrillic "а" in "Аna") is refused. One-line KvsimError otherwise. The static site's
    ``checkName`` (book/_ext/static/kvbook/lab.js) applies the same rules."""
    if not isinstance(name, str):
        raise KvsimError(f"name={name!r:.60} is not text: expected a name such as 'Ana Lopez'")
    text = unicodedata.normalize("NFKC", " ".join(name.split()))
    shown = repr(name) if len(repr(name)) <= 60 else repr(name)[:57] + "..."
    bad = next((ch for ch in text if not (ch.isalnum() or ch in " .-'")), None)
    if bad is not None or not text or len(text) > _NAME_MAX or \
            not any(ch.isalnum() for ch in text):
        why = (f"has {bad!r}" if bad is not None else "is empty" if not text
               else f"has {len(text)} characters" if len(text) > _NAME_MAX
               else "has no letter or digit")
        raise KvsimError(f"name={shown} {why}: expected 1 to {_NAME_MAX} letters, digits, "
                         f"spaces, '.', '-' or \"'\" (with a letter or digit)")
    scripts = name_scripts(text)
    if len(scripts) > 1 and not any(scripts <= mix for mix in _MIXTURES):
        raise KvsimError(f"name={shown} mixes the letters of {', '.join(sorted(scripts))}: "
                         f"expected the letters of one script (a letter of another script "
                         f"that looks the same would make another name look like this one)")
    return text


def _b32(digest: bytes, n: int) -> str:
    return base64.b32encode(digest).decode()[:n]


def _checksum(body: str, salt: str = _SALT) -> str:
    return _b32(hashlib.sha256(f"{salt}|{body}".encode()).digest(), 5)


def _room_tag(key: str, code: str) -> str:
    return _b32(hmac.new(key.encode(), code.encode(), hashlib.sha256).digest(), 8)


def _enc_value(v: LeverValue) -> str:
    if v is None:
        return "none"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _enc_prediction(pred: Mapping[str, object] | None) -> str:
    if not pred:
        return "-"
    (k, v), = pred.items()
    if k == "band":
        lo, hi = _band(v)
        return f"{_enc_value(lo)}:{_enc_value(hi)}"
    return str(v)


def _band(value: object) -> tuple[float, float]:
    """A checked band prediction's ``(low, high)`` as floats."""
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise KvsimError(f"prediction band={value!r}: expected (low, high)")
    low, high = value
    return float(low), float(high)


def completion_code(mission: MissionLike, stars: int, settings: Mapping[str, object],
                    prediction: Mapping[str, object] | None = None, *,
                    name: object = None, room_key: object = FROM_ENV) -> str:
    """``M<n>/<stars>/<settings>/<prediction or ->/<name or ->/<checksum>``, then
    ``/<room tag>`` when a room key is in force (``room_key``, by default ``$KVSIM_ROOM_KEY``)."""
    m = get_mission(mission)
    s = normalise_settings(m, settings)
    if stars not in (0, 1, 2, 3):
        raise KvsimError(f"stars={stars!r} is out of range: expected 0, 1, 2 or 3")
    who = "-" if name is None else check_name(name).replace(" ", "_")
    body = (f"M{m.number}/{stars}/{','.join(_enc_value(s[lv.name]) for lv in m.levers)}/"
            f"{_enc_prediction(prediction)}/{who}")
    code = f"{body}/{_checksum(body)}"
    key = resolve_room_key(room_key)
    return f"{code}/{_room_tag(key, code)}" if key is not None else code



def example_code(mission: MissionLike = 1, *, name: str = "Ana Lopez") -> str:
    """A real one-star completion code for the book's worked example (the lab hub, the
    instructor notes): ``mission``'s grid point that passes every day with the most of its
    resource to spare, so the example verifies and re-scores and never shows the answer
    (the least resource, two stars). Made without a room key."""
    m = get_mission(mission)
    ones = [r for r in mission_grid(m) if r["stars"] == 1]
    if not ones:
        raise KvsimError(f"mission {m.number}: no setting on its grid earns exactly one star: "
                         f"expected a passing setting above the least")
    pick = (max if m.direction == "min" else min)(ones, key=lambda r: row_number(r, m.resource))
    return completion_code(m, 1, {lv.name: pick[lv.name] for lv in m.levers}, name=name,
                           room_key=None)


def _parse_value(lever: Lever, text: str) -> LeverValue:
    if text == "none":
        return lever.check(None)
    if lever.kind == "choice":
        return lever.check(text)
    try:
        x = float(text)
    except ValueError:
        raise KvsimError(f"setting {lever.name}={text!r} is not a number: expected "
                         f"{lever.describe()}") from None
    return lever.check(int(x) if lever.kind == "int" and x.is_integer() else x)


class _Parsed(TypedDict):
    mission: MissionLike
    stars: int
    settings: Settings
    prediction: dict[str, object] | None


def _parse(text: str, parts: list[str]) -> _Parsed:
    """Mission, stars, settings and prediction of a code's first four parts."""
    head, stars_t, settings_t, pred_t = parts[:4]
    try:
        m = get_mission(head[1:])
    except KvsimError:
        raise KvsimError(f"completion code {text!r}: mission {head[1:]!r} is not known: "
                         f"expected M1 to M{max(MISSIONS)}") from None
    if stars_t not in ("0", "1", "2", "3"):
        raise KvsimError(f"completion code {text!r}: stars {stars_t!r} out of range: expected 0-3")
    values = settings_t.split(",")
    # Codes made before a lever was added to a mission (max_num_seqs, missions
    # 1 and 3) is missing from the codes made before it; those settings ran at its start value,
    # so a code one or more values short reads them so. The checksum still covers the code as
    # written, and verify() re-scores the settings, so nothing can be gained by cutting a code.
    if len(values) < len(m.levers):
        values += [_enc_value(lv.start) for lv in m.levers[len(values):]]
    if len(values) != len(m.levers):
        raise KvsimError(f"completion code {text!r}: mission {m.number} has {len(m.levers)} "
                         f"setting(s) ({', '.join(lv.name for lv in m.levers)}), the code "
                         f"{len(values)}")
    try:
        settings = {lv.name: _parse_value(lv, v) for lv, v in zip(m.levers, values, strict=True)}
        prediction: dict[str, object] | None
        if pred_t == "-":
            prediction = None
        elif m.band and ":" in pred_t:
            lo, _, hi = pred_t.partition(":")
            lv = m.lever(m.resource)
            prediction = {"band": (_parse_value(lv, lo), _parse_value(lv, hi))}
        else:
            prediction = {"cause": pred_t}
    except KvsimError as e:
        raise KvsimError(f"completion code {text!r}: {e}") from None
    return _Parsed(mission=m, stars=int(stars_t), settings=settings, prediction=prediction)


def _split(code: object) -> tuple[str, list[str]]:
    text = str(code).strip()
    return text, text.split("/")


class Verdict(TypedDict):
    """What :func:`verify` finds in a completion code (see there)."""

    code: str
    mission: int
    stars: int
    settings: Settings
    prediction: dict[str, object] | None
    name: str | None
    checksum_ok: bool
    room_tag: bool
    room: bool | None
    rescored: NotRequired[int | None]
    ok: bool


def verify(code: str, *, rescore: bool = True, room_key: object = FROM_ENV) -> Verdict:
    """Check a completion code; with ``rescore``, score its settings again.

    Returns ``code``, ``mission``, ``stars`` (claimed), ``settings``,
    ``prediction``, ``name`` (``None``: made without one), ``checksum_ok``,
    ``room_tag`` (whether the code has one) and ``room``: ``None`` when no room
    key is in force (``room_key``, by default ``$KVSIM_ROOM_KEY``), else whether
    the code was made with it. With ``rescore``, ``rescored`` (the stars kvsim
    gives now; ``None`` when the checksum or the room already failed); and
    ``ok``: checksum right, not made outside the room, and (with ``rescore``)
    the claim confirmed. A code that cannot be parsed, or one of the first
    format, raises a one-line KvsimError.
    """
    text, parts = _split(code)
    if len(text) > _CODE_MAX:
        raise KvsimError(f"completion code {text[:40]!r}... has {len(text):,} characters: "
                         f"expected a code of at most {_CODE_MAX} ({_FORM})")
    if len(parts) == 5 and parts[0].startswith("M"):
        raise KvsimError(f"completion code {text!r} is in the first format, which binds no "
                         f"name: refused; expected a code of this kvsim (`kvsim missions "
                         f"--name NAME` prints yours), {_FORM}")
    if len(parts) not in (6, 7) or not parts[0].startswith("M"):
        raise KvsimError(f"completion code {text!r} is malformed: expected {_FORM}, e.g. "
                         f"M1/2/0.87/-/Ana_Lopez/ABCDE")
    fields = _parse(text, parts)
    who = parts[4]
    if who == "-":
        name = None
    else:
        try:
            name = check_name(who.replace("_", " "))
        except KvsimError as e:
            raise KvsimError(f"completion code {text!r}: {e}") from None
    m = get_mission(fields["mission"])
    ok_sum = _checksum("/".join(parts[:5])) == parts[5]
    key = resolve_room_key(room_key)
    tag = parts[6] if len(parts) == 7 else None
    if tag is not None and not _TAG.fullmatch(tag):
        raise KvsimError(f"completion code {text!r}: room tag {tag!r} is malformed: expected 8 "
                         f"characters of A-Z and 2-7 (as kvsim makes them)")
    room = None if key is None else (
        tag is not None and hmac.compare_digest(tag, _room_tag(key, "/".join(parts[:6]))))
    fine = ok_sum and room is not False
    stars, settings, prediction = fields["stars"], fields["settings"], fields["prediction"]
    if not rescore:
        return Verdict(code=text, mission=m.number, stars=stars, settings=settings,
                       prediction=prediction, name=name, checksum_ok=ok_sum,
                       room_tag=tag is not None, room=room, ok=fine)
    again = score(m, settings, prediction=prediction).stars if fine else None
    return Verdict(code=text, mission=m.number, stars=stars, settings=settings,
                   prediction=prediction, name=name, checksum_ok=ok_sum, room_tag=tag is not None,
                   room=room, rescored=again, ok=fine and again == stars)


def rejection(v: Verdict) -> str:
    """Why a parsed code (:func:`verify`'s answer, not ``ok``) is rejected, in one line."""
    if not v["checksum_ok"]:
        return (f"completion code {v['code']!r} fails its checksum: a character was changed "
                f"or mistyped (the checksum covers the name, the settings, the stars and the "
                f"prediction)")
    if v["room"] is False:
        made = "with another room's key" if v["room_tag"] else "without a room key"
        return (f"completion code {v['code']!r} was not made with this room's key "
                f"(${ROOM_KEY_VAR}): it was made {made}")
    return (f"completion code {v['code']!r} is NOT confirmed: it claims {v['stars']} star(s), "
            f"its settings earn {v['rescored']} now")


def upgrade_old_code(code: str, *, name: object = None, room_key: object = FROM_ENV) -> str:
    """A first-format code (five parts, no name) as a code of this format, for a progress
    file written before names: its checksum must be right (one-line KvsimError otherwise).
    Only the progress file uses it; :func:`verify` refuses first-format codes."""
    text, parts = _split(code)
    if len(parts) != 5 or not parts[0].startswith("M"):
        raise KvsimError(f"completion code {text!r} is not of the first format: expected "
                         f"M<mission>/<stars>/<settings>/<prediction>/<checksum>")
    f = _parse(text, parts)
    if _checksum("/".join(parts[:4]), _OLD_SALT) != parts[4]:
        raise KvsimError(f"completion code {text!r} fails its checksum: a character was "
                         f"changed or mistyped")
    return completion_code(f["mission"], f["stars"], f["settings"], f["prediction"], name=name,
                           room_key=room_key)


# ---------------------------------------------------------------------- leaderboard

#: What a completion code looks like (its parts are checked by :func:`verify`).
_CODE = re.compile(r"^M\S*/\S*/\S*/\S*/\S+$")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def leaderboard_lines(lines: Iterable[str]) -> list[tuple[int, str, str]]:
    """``(line number, name, code)`` for every entry of a leaderboard file (blank lines and
    ``#`` comments skipped; ``name`` is ``""`` for a bare code). A line that is not
    ``name CODE`` (or a bare code) raises a one-line KvsimError naming its number and how
    many such lines there are."""
    entries: list[tuple[int, str, str]] = []
    bad: list[tuple[int, str]] = []
    for no, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if len(entries) + len(bad) >= LEADERBOARD_MAX_ENTRIES:
            raise KvsimError(f"line {no}: more than {LEADERBOARD_MAX_ENTRIES:,} entries: expected "
                             f"at most {LEADERBOARD_MAX_ENTRIES:,} 'name CODE' lines")
        *name_parts, code = line.split()
        if not _CODE.match(code):
            bad.append((no, line))
            continue
        entries.append((no, " ".join(name_parts).rstrip(":").strip(), code))
    if bad:
        no, line = bad[0]
        more = f" ({len(bad)} such lines in all)" if len(bad) > 1 else ""
        raise KvsimError(f"line {no} is not 'name CODE': {_show(line)}{more}: expected one "
                         f"'name {_FORM}' per line")
    return entries


def _judge(code: str, line_name: str, key: str | None) -> tuple[str, Verdict | None, str]:
    """``(row name, verdict or None, why rejected or "")`` for one leaderboard entry."""
    try:
        v = verify(code, rescore=False, room_key=key)
    except KvsimError as e:
        return line_name or "(unreadable)", None, str(e)
    row = v["name"] if v["checksum_ok"] and v["name"] else (line_name or v["name"] or "(no name)")
    if not v["ok"]:
        return row, None, rejection(v)
    if v["name"] is None:
        return row, None, (f"completion code {code!r} carries no name: the learner runs `kvsim "
                           f"missions --name NAME` and hands in the code it prints")
    # the name as the code prints it ("Ana_Lopez") is the same name as "Ana Lopez"
    if line_name and " ".join(line_name.replace("_", " ").split()).casefold() != \
            v["name"].casefold():
        return row, None, (f"completion code {code!r} was made for {v['name']!r}, not "
                           f"{line_name!r}: a code's name cannot be changed")
    v = verify(code, room_key=key)
    return row, (v if v["ok"] else None), ("" if v["ok"] else rejection(v))


@dataclass
class _Learner:
    """One leaderboard row while it is built: the best stars per mission and what failed."""

    name: str
    stars: dict[int, int] = field(default_factory=lambda: {n: 0 for n in MISSIONS})
    rejected: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)

    def row(self) -> dict[str, object]:
        total = sum(self.stars.values())
        return {"name": self.name, **{f"m{n}": self.stars[n] for n in MISSIONS},
                "rejected": self.rejected, "why": self.why, "total": total}


def leaderboard(lines: Iterable[str], *, room_key: object = FROM_ENV,
                progress: Callable[[str], None] | None = None) -> list[dict[str, object]]:
    """The room's table from lines ``name CODE`` (or ``name: CODE``, or a bare code).

    Every code is verified and re-scored; a row is the name *in the code* (a
    line's own name must agree with it). A code is rejected, counting nothing,
    when it does not parse, fails its checksum, carries no name or another
    name than its line's, is not confirmed, or, with a room key in force
    (``room_key``, by default ``$KVSIM_ROOM_KEY``), was not made with that key.
    Rows: ``name``, per-mission stars (``m1``..``m4``), ``total``, ``rejected``
    (codes that failed) and ``why`` (one ``line <n>: <reason>`` per rejected
    code); sorted by total, then name. Lines that are not codes at all raise
    (:func:`leaderboard_lines`). ``progress``, when given, is called with ``"code i of n"``
    before each code is verified (re-scoring takes a second or so per code).
    """
    key = resolve_room_key(room_key)
    board: dict[str, _Learner] = {}
    entries = leaderboard_lines(lines)
    for number, (no, line_name, code) in enumerate(entries, 1):
        if progress is not None:
            progress(f"code {number} of {len(entries)}")
        name, v, why = _judge(code, line_name, key)
        learner = board.setdefault(name, _Learner(name))
        if v is None:
            learner.rejected.append(code)
            learner.why.append(f"line {no}: {why}")
        else:
            learner.stars[v["mission"]] = max(learner.stars[v["mission"]], v["stars"])
    learners = sorted(board.values(), key=lambda r: (-sum(r.stars.values()), r.name))
    return [r.row() for r in learners]


def leaderboard_text(rows: list[dict[str, object]], *, room: bool = False) -> str:
    """The table at a terminal; ``room``: say that only codes made with the room key count."""
    head = f"{'#':>2}  {'name':<20} " + " ".join(f"m{n}" for n in MISSIONS) + "  total"
    out = [head]
    for i, r in enumerate(rows, 1):
        cells = " ".join(f"{r[f'm{n}']:>2}" for n in MISSIONS)
        line = f"{i:>2}  {str(r['name'])[:20]:<20} {cells}  {r['total']:>5}"
        rejected = r["rejected"]
        if isinstance(rejected, list) and rejected:
            line += f"  ({len(rejected)} code(s) rejected)"
        out.append(line)
    if room:
        out.append(f"(${ROOM_KEY_VAR} is set: only codes made with this room's key count)")
    return "\n".join(out)
