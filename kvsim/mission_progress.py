"""The lab's progress file, completion codes and the room's leaderboard.

Explained in chapter 5 (the lab) and the workshop guide. Scoring itself is
:func:`kvsim.missions.score`; this module only remembers it.

**Progress** is a small JSON file, by default ``~/.kvsim/missions.json``
(outside any checkout); the environment variable ``KVSIM_MISSIONS_FILE`` or
the ``path`` argument moves it. :func:`commit_prediction` stores a guess;
it counts for the third star only if it was stored before the first run of
that mission. :func:`attempt` scores settings and keeps the best result;
:func:`reset` forgets everything. ``kvsim missions`` shows it at a terminal.

**Completion codes** such as ``M1/2/0.89/-/4KQ7M`` name the mission, the
stars, the settings, the prediction and a checksum of the rest. ``kvsim
missions --verify CODE`` recomputes the checksum *and re-scores the settings*
(the scoring is deterministic), so a teacher can check a room's results
offline. The checksum is a SHA-256 prefix with no secret: it catches typos and
casual edits, not a learner who reads this file. It is not a security
measure; the re-scoring is what makes a code believable.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import KvsimError
from .missions import MISSIONS, get_mission, normalise_settings, score

__all__ = ["ENV_VAR", "progress_path", "load", "reset", "commit_prediction", "attempt",
           "completion_code", "verify", "leaderboard", "progress_text", "leaderboard_text"]

#: The environment variable that moves the progress file.
ENV_VAR = "KVSIM_MISSIONS_FILE"
_SALT = "kvsim-missions-v1"
_VERSION = 1


def progress_path(path=None) -> Path:
    """Where progress is kept: ``path``, else ``$KVSIM_MISSIONS_FILE``, else ``~/.kvsim/missions.json``."""
    if path is not None:
        return Path(path)
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    return Path.home() / ".kvsim" / "missions.json"


def _empty() -> dict:
    return {"version": _VERSION, "missions": {}}


def load(path=None) -> dict:
    """The progress record (an empty one if the file does not exist)."""
    p = progress_path(path)
    if not p.exists():
        return _empty()
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise KvsimError(f"progress file {str(p)!r} is not readable JSON ({type(e).__name__}): "
                         f"expected the file kvsim wrote; `kvsim missions --reset` starts over")
    if not isinstance(data, dict) or data.get("version") != _VERSION or \
            not isinstance(data.get("missions"), dict):
        raise KvsimError(f"progress file {str(p)!r} is not a kvsim progress file (version "
                         f"{_VERSION}): `kvsim missions --reset` starts over")
    return data


def _save(data: dict, path=None) -> Path:
    p = progress_path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(p)
    return p


def reset(path=None) -> Path:
    """Forget all progress (the file is removed); returns its path."""
    p = progress_path(path)
    if p.exists():
        p.unlink()
    return p


def _entry(data: dict, n: int) -> dict:
    return data["missions"].setdefault(str(n), {"attempts": 0, "stars": 0, "settings": None,
                                                "prediction": None, "prediction_counts": False,
                                                "code": None})


def commit_prediction(mission, prediction, path=None) -> str:
    """Store a prediction (``{"cause": key}`` or ``{"band": (lo, hi)}``); returns one line saying
    whether it can still earn the third star (only if no run of the mission came first)."""
    from .missions import check_prediction

    m = get_mission(mission)
    prediction = check_prediction(m, prediction)
    data = load(path)
    e = _entry(data, m.number)
    counts = e["attempts"] == 0
    e["prediction"] = _jsonable(prediction)
    e["prediction_counts"] = counts
    _save(data, path)
    if counts:
        return (f"Mission {m.number}: prediction committed before any run; it counts toward "
                f"the third star.")
    return (f"Mission {m.number}: prediction stored, but the mission has already been run: "
            f"it cannot earn the third star (reset to start over).")


def _jsonable(prediction):
    if prediction is None:
        return None
    (k, v), = prediction.items()
    return {k: list(v) if isinstance(v, (tuple, list)) else v}


def attempt(mission, settings=None, path=None, *, executor=None):
    """Score ``settings`` (with the stored prediction, if it came first), record the best result,
    and return the :class:`~kvsim.missions.Score`."""
    m = get_mission(mission)
    settings = normalise_settings(m, settings)
    data = load(path)
    e = _entry(data, m.number)
    pred = e["prediction"] if e["prediction_counts"] else None
    if pred is not None and "band" in pred:
        pred = {"band": tuple(pred["band"])}
    sc = score(m, settings, prediction=pred)
    e["attempts"] += 1
    if sc.stars > e["stars"] or e["settings"] is None:
        e["stars"] = sc.stars
        e["settings"] = settings
        e["code"] = completion_code(m.number, sc.stars, settings, pred) if sc.stars else None
    _save(data, path)
    return sc


# ----------------------------------------------------------------------------- codes

def _enc_value(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _enc_prediction(pred) -> str:
    if not pred:
        return "-"
    (k, v), = pred.items()
    if k == "band":
        return f"{_enc_value(float(v[0]))}:{_enc_value(float(v[1]))}"
    return str(v)


def _checksum(body: str) -> str:
    digest = hashlib.sha256(f"{_SALT}|{body}".encode()).digest()
    return base64.b32encode(digest).decode()[:5]


def completion_code(mission, stars: int, settings: Mapping[str, Any], prediction=None) -> str:
    """``M<n>/<stars>/<settings in lever order>/<prediction or ->/<checksum>``."""
    m = get_mission(mission)
    s = normalise_settings(m, settings)
    if stars not in (0, 1, 2, 3):
        raise KvsimError(f"stars={stars!r} is out of range: expected 0, 1, 2 or 3")
    body = (f"M{m.number}/{stars}/{','.join(_enc_value(s[lv.name]) for lv in m.levers)}/"
            f"{_enc_prediction(prediction)}")
    return f"{body}/{_checksum(body)}"


def _parse_value(lever, text: str):
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


def verify(code: str, *, rescore: bool = True) -> dict:
    """Check a completion code; with ``rescore``, score its settings again.

    Returns ``mission``, ``stars`` (claimed), ``settings``, ``prediction``,
    ``checksum_ok`` and, with ``rescore``, ``rescored`` (the stars kvsim gives
    now) and ``ok`` (checksum right and the claim confirmed). A code that
    cannot be parsed raises a one-line KvsimError.
    """
    text = str(code).strip()
    parts = text.split("/")
    if len(parts) != 5 or not parts[0].startswith("M"):
        raise KvsimError(f"completion code {text!r} is malformed: expected "
                         f"M<mission>/<stars>/<settings>/<prediction>/<checksum>, e.g. "
                         f"M1/2/0.89/-/ABCDE")
    head, stars_t, settings_t, pred_t, check = parts
    m = get_mission(head[1:])
    if stars_t not in ("0", "1", "2", "3"):
        raise KvsimError(f"completion code {text!r}: stars {stars_t!r} out of range: expected 0-3")
    values = settings_t.split(",")
    if len(values) != len(m.levers):
        raise KvsimError(f"completion code {text!r}: mission {m.number} has {len(m.levers)} "
                         f"setting(s) ({', '.join(lv.name for lv in m.levers)}), the code {len(values)}")
    settings = {lv.name: _parse_value(lv, v) for lv, v in zip(m.levers, values)}
    if pred_t == "-":
        prediction = None
    elif m.band and ":" in pred_t:
        lo, _, hi = pred_t.partition(":")
        lv = m.lever(m.resource)
        prediction = {"band": (_parse_value(lv, lo), _parse_value(lv, hi))}
    else:
        prediction = {"cause": pred_t}
    stars = int(stars_t)
    ok_sum = _checksum("/".join(parts[:4])) == check
    out = dict(code=text, mission=m.number, stars=stars, settings=settings,
               prediction=prediction, checksum_ok=ok_sum)
    if rescore:
        again = score(m, settings, prediction=prediction).stars if ok_sum else None
        out.update(rescored=again, ok=ok_sum and again == stars)
    else:
        out.update(ok=ok_sum)
    return out


# ------------------------------------------------------------------------ read-outs

def progress_text(path=None) -> str:
    """Progress at a terminal: one line per mission, then the total and the file."""
    data = load(path)
    lines = []
    total = 0
    for n, m in MISSIONS.items():
        e = data["missions"].get(str(n))
        stars = e["stars"] if e else 0
        total += stars
        bar = "*" * stars + "." * (3 - stars)
        if not e or not e["attempts"]:
            state = "not started"
        else:
            shown = ", ".join(f"{k}={v}" for k, v in e["settings"].items())
            state = f"{e['attempts']} run(s), best: {shown}"
            if e["code"]:
                state += f"  code {e['code']}"
        lines.append(f"mission {n} [{bar}] {m.title}: {state}")
    lines.append(f"total {total} of {3 * len(MISSIONS)} stars  (progress in {progress_path(path)})")
    return "\n".join(lines)


def leaderboard(lines: Iterable[str]) -> list[dict]:
    """The room's table from lines ``name CODE`` (or ``name: CODE``, or a bare code).

    Every code is verified and re-scored; a bad one counts nothing and is
    reported. Rows: ``name``, per-mission stars (``m1``..``m4``), ``total``,
    ``rejected`` (codes that failed); sorted by total, then name.
    """
    board: dict[str, dict] = {}
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        *name_parts, code = line.split()
        name = " ".join(name_parts).rstrip(":").strip() or "(anonymous)"
        row = board.setdefault(name, {"name": name, **{f"m{n}": 0 for n in MISSIONS},
                                      "rejected": []})
        try:
            v = verify(code.strip())
        except KvsimError:
            row["rejected"].append(code.strip())
            continue
        if v["ok"]:
            key = f"m{v['mission']}"
            row[key] = max(row[key], v["stars"])
        else:
            row["rejected"].append(code.strip())
    rows = list(board.values())
    for r in rows:
        r["total"] = sum(r[f"m{n}"] for n in MISSIONS)
    rows.sort(key=lambda r: (-r["total"], r["name"]))
    return rows


def leaderboard_text(rows: list[dict]) -> str:
    head = f"{'#':>2}  {'name':<20} " + " ".join(f"m{n}" for n in MISSIONS) + "  total"
    out = [head]
    for i, r in enumerate(rows, 1):
        cells = " ".join(f"{r[f'm{n}']:>2}" for n in MISSIONS)
        line = f"{i:>2}  {r['name'][:20]:<20} {cells}  {r['total']:>5}"
        if r["rejected"]:
            line += f"  ({len(r['rejected'])} code(s) rejected)"
        out.append(line)
    return "\n".join(out)
