"""The lab's missions on the static site: every grid point scored by :func:`score`, as data.

Explained on the book's lab hub page (``book/lab-hub.md``). Chapter 5's page
lets a reader play each mission in the browser, with no kernel: pick the
levers (the grid's values only), commit a prediction, run, and read the stars,
the figures and the completion code. Nothing is simulated there. The browser
looks its answer up in :func:`site_data`, which scores every point of every
mission's grid with :func:`kvsim.lab.missions.score` itself, so the page and
``kvsim missions`` cannot disagree:

* per grid point: the stars without a prediction (0-2), the days passed, each
  SLO metric's worst and median day, and :func:`score`'s own message (for a
  two-star point also its message with a right and with a wrong prediction);
* per mission: which predictions are right (every cause; for mission 4 every
  band on the grid), found by scoring the expert's settings with each one,
  so the third star in the browser is :func:`score`'s third star;
* each lever value as a completion code writes it, and the checksum's public
  salt (:data:`kvsim.lab.codes.CHECKSUM_SALT`), so the browser's codes are the
  codes :func:`kvsim.lab.codes.completion_code` makes (SHA-256 over public data:
  a code proves no more than kvsim's does; see :mod:`kvsim.lab.codes`).

``scripts/site_data.py`` writes it to ``book/_ext/static/kvbook/lab-missions.js``
(committed: the build does not score); ``--check`` says whether the committed
file is what the scoring gives now.
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import NotRequired, TypedDict

import numpy as np

from kvsim.lab import codes
from kvsim.lab.missions import (
    MISSIONS,
    SEEDS,
    Lever,
    LeverValue,
    Mission,
    MissionLike,
    Prediction,
    debrief,
    expert_settings,
    get_mission,
    mission_day,
    mission_grid,
    pass_band,
    row_number,
    score,
)

from .site_files import data_script, read_data_script

__all__ = ["FORMAT", "VERSION", "DATA_PATH", "site_data", "site_data_js", "mission_data",
           "row_for", "predictions", "read_site_data"]

FORMAT = "kvbook-lab-missions"
VERSION = 1
#: Where the site's copy lives, relative to the repository (the book's static folder).
DATA_PATH = "book/_ext/static/kvbook/lab-missions.js"
_NAMES = {"what": "The lab's missions, every grid point scored by kvsim.lab.missions.score()",
          "global_name": "kvbookLabData", "source": "kvsim.book.lab_site"}
#: Decimals a figure is shown with, by SLO key (after the SLO's own unit scale).
_DECIMALS = {"ttft_p95_s": 2, "preemptions_per_1k": 1, "share_paused_over_1s": 2,
             "itl_p99_s": 0}


class SiteRow(TypedDict):
    """One grid point as the site shows it (:func:`row_for`)."""
    settings: list[LeverValue]
    stars: int
    days: int
    message: str
    worst: list[float]
    median: list[float]
    message_right: NotRequired[str]
    message_wrong: NotRequired[str]


class SitePredictions(TypedDict):
    """A mission's right and wrong predictions (:func:`predictions`)."""
    right: Prediction
    wrong: Prediction
    causes: list[str]
    bands: list[list[float]]


def _encoded(m: Mission, lever: Lever) -> list[str]:
    """Each grid value of ``lever`` as a completion code writes it."""
    i = [lv.name for lv in m.levers].index(lever.name)
    out = []
    for v in lever.grid:
        code = codes.completion_code(m, 0, {lever.name: v}, None, name=None, room_key=None)
        out.append(code.split("/")[2].split(",")[i])
    return out


def _shown(lever: Lever, v: LeverValue) -> str:
    if v is None:
        return "no cap"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def _numbers(grid: tuple[LeverValue, ...]) -> list[float]:
    """The numbers of a resource lever's grid (its ``None``, no cap, left out)."""
    return [v for v in grid if isinstance(v, (int, float))]


def _right_predictions(m: Mission) -> tuple[list[str], list[list[float]]]:
    """The causes and (mission 4) bands that earn the third star at the expert's settings."""
    expert = expert_settings(m)
    causes = [k for k in m.causes if score(m, expert, prediction={"cause": k}).stars == 3]
    bands: list[list[float]] = []
    if m.band:
        values = _numbers(m.lever(m.resource).grid)
        for lo, hi in itertools.combinations_with_replacement(values, 2):
            if score(m, expert, prediction={"band": (lo, hi)}).stars == 3:
                bands.append([lo, hi])
    return causes, bands


def row_for(mission: MissionLike, settings: Mapping[str, LeverValue], right: Prediction | None,
            wrong: Prediction | None) -> SiteRow:
    """One grid point as the site shows it, from :func:`score` (each SLO metric's worst and
    median day rounded as :func:`mission_grid` rounds them)."""
    m = get_mission(mission)
    sc = score(m, settings)
    row: SiteRow = {
        "settings": [sc.settings[lv.name] for lv in m.levers], "stars": sc.stars,
        "days": sc.seeds_passed, "message": sc.message, "worst": [], "median": []}
    for key, *_ in m.slo.items():
        vals = [row_number(r, key) for r in sc.runs]
        row["worst"].append(round(max(vals), 4))
        row["median"].append(round(float(np.median(vals)), 4))
    if sc.stars == 2:
        row["message_right"] = score(m, settings, prediction=right).message
        row["message_wrong"] = score(m, settings, prediction=wrong).message
    return row


def predictions(mission: MissionLike) -> SitePredictions:
    """``right``, ``wrong`` (one prediction of each, for the two-star messages), ``causes`` and
    ``bands`` (every right cause and, for mission 4, every right band on the grid)."""
    m = get_mission(mission)
    causes, bands = _right_predictions(m)
    right: Prediction
    wrong: Prediction
    if m.band:
        right = {"band": tuple(bands[0])}
        values = _numbers(m.lever(m.resource).grid)
        wrong = next({"band": (v, v)} for v in values if [v, v] not in bands)
    else:
        right = {"cause": causes[0]}
        wrong = {"cause": next(k for k in m.causes if k not in causes)}
    return {"right": right, "wrong": wrong, "causes": causes, "bands": bands}


def mission_data(mission: MissionLike) -> dict[str, object]:
    """One mission's part of :func:`site_data`."""
    m = get_mission(mission)
    p = predictions(m)
    levers = [{"name": lv.name, "label": lv.label or lv.name, "kind": lv.kind,
               "values": list(lv.grid), "codes": _encoded(m, lv),
               "shown": [_shown(lv, v) for v in lv.grid], "start": lv.start}
              for lv in m.levers]
    slo = [{"key": key, "label": label, "limit": limit, "scale": scale, "unit": unit,
            "decimals": _DECIMALS[key]} for key, limit, label, scale, unit in m.slo.items()]
    rows: list[SiteRow] = []
    for r in mission_grid(m):                # the whole search, in grid order
        row = row_for(m, {lv.name: r[lv.name] for lv in m.levers}, p["right"], p["wrong"])
        # mission_grid and score are one judge: the same stars, the same figures
        if row["stars"] != r["stars"] or row["worst"] != [r[f"{key}_worst"]
                                                          for key, *_ in m.slo.items()]:
            raise AssertionError(f"mission {m.number} {row['settings']}: mission_grid and "
                                 f"score disagree")
        rows.append(row)
    day = mission_day(m)
    return {"number": m.number, "key": m.key, "title": m.title, "resource": m.resource,
            "direction": m.direction, "band": m.band, "levers": levers, "slo": slo,
            "slo_text": m.slo.describe(),
            "causes": [{"key": k, "text": t} for k, t in m.causes.items()],
            "right_causes": p["causes"], "right_bands": p["bands"],
            "expert": [expert_settings(m)[lv.name] for lv in m.levers],
            "pass_band": [list(b) for b in pass_band(m)], "debrief": debrief(m),
            "flags": m.flags, "warmup_s": day["warmup_s"], "duration_s": day["duration_s"],
            "rows": rows}


def site_data() -> dict[str, object]:
    """Everything the site's lab needs (see the module docstring); deterministic."""
    from kvsim import __version__

    return {"format": FORMAT, "version": VERSION, "kvsim_version": __version__,
            "salt": codes.CHECKSUM_SALT,
            "name_max": codes.NAME_MAX, "seeds": list(SEEDS),
            "missions": [mission_data(n) for n in MISSIONS]}


def site_data_js(data: Mapping[str, object] | None = None) -> str:
    """:func:`site_data` as the script the site loads (one mission row per line)."""
    return data_script(site_data() if data is None else data, **_NAMES)


def read_site_data(text: str) -> dict[str, object]:
    """The data in a file :func:`site_data_js` wrote (one-line ValueError if it is not one)."""
    return read_data_script(text, **_NAMES)
