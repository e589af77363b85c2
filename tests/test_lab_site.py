"""The static site's mission data (kvsim.book.lab_site) is kvsim's score(), committed.

``book/_ext/static/kvbook/lab-missions.js`` is written by ``scripts/site_data.py``
(the book build only copies it). These tests read the committed file and:

* check its grids are the missions' own (every point, in grid order, none invented),
  and each lever value is written as a completion code writes it;
* re-score a sample of grid points with :func:`kvsim.lab.missions.score` and compare
  the rows exactly (stars, days, figures, messages);
* check the right predictions are the ones that earn score()'s third star.

After a change to the engine or a mission: ``python scripts/site_data.py``.
"""
from __future__ import annotations

import itertools
import json

import pytest

from kvsim.book import lab_site
from kvsim.lab import codes, missions

ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent
REGENERATE = "run python scripts/site_data.py and commit the file"


@pytest.fixture(scope="module")
def data():
    return lab_site.read_site_data((ROOT / lab_site.DATA_PATH).read_text(encoding="utf-8"))


def _mission(data, n):
    return next(m for m in data["missions"] if m["number"] == n)


def test_the_file_is_the_missions_grids_in_order(data):
    assert data["format"] == lab_site.FORMAT and data["version"] == lab_site.VERSION
    assert data["salt"] == codes.CHECKSUM_SALT and data["name_max"] == codes.NAME_MAX
    assert data["seeds"] == list(missions.SEEDS)
    assert [m["number"] for m in data["missions"]] == missions.list_missions()
    for md in data["missions"]:
        m = missions.get_mission(md["number"])
        assert [lv["name"] for lv in md["levers"]] == [lv.name for lv in m.levers]
        for lv, mine in zip(m.levers, md["levers"], strict=True):
            assert mine["values"] == list(lv.grid), f"mission {m.number} {lv.name}: {REGENERATE}"
        want = [list(p) for p in itertools.product(*(lv.grid for lv in m.levers))]
        assert [r["settings"] for r in md["rows"]] == want, f"mission {m.number}: {REGENERATE}"
        assert {r["stars"] for r in md["rows"]} <= {0, 1, 2}


def test_lever_values_are_written_as_completion_codes_write_them(data):
    for md in data["missions"]:
        m = missions.get_mission(md["number"])
        for row in md["rows"][::7]:
            settings = dict(zip((lv.name for lv in m.levers), row["settings"], strict=True))
            code = codes.completion_code(m, 1, settings, None, name=None, room_key=None)
            mine = [lv["codes"][lv["values"].index(v)] for lv, v in zip(md["levers"],
                                                                        row["settings"], strict=True)]
            assert code.split("/")[2] == ",".join(mine)


def _sample(md) -> list[int]:
    """Rows to re-score: the first, the expert's, the last, and one between (fixed)."""
    rows = md["rows"]
    expert = next(i for i, r in enumerate(rows) if r["settings"] == md["expert"])
    return sorted({0, expert, len(rows) // 3, len(rows) - 1})


@pytest.mark.parametrize("number", missions.list_missions())
def test_a_sample_of_grid_points_rescores_to_the_committed_rows(data, number):
    md = _mission(data, number)
    m = missions.get_mission(number)
    p = lab_site.predictions(m)
    assert md["expert"] == [missions.expert_settings(m)[lv.name] for lv in m.levers], REGENERATE
    assert p["causes"] == md["right_causes"], REGENERATE
    assert [list(b) for b in p["bands"]] == md["right_bands"], REGENERATE
    for i in _sample(md):
        settings = dict(zip((lv.name for lv in m.levers), md["rows"][i]["settings"], strict=True))
        again = json.loads(json.dumps(lab_site.row_for(m, settings, p["right"], p["wrong"])))
        assert again == md["rows"][i], f"mission {number} {settings}: {REGENERATE}"


def test_the_third_star_is_scores_own(data):
    """A two-star point with each right prediction earns 3 from score(), a wrong one 2."""
    for md in data["missions"]:
        m = missions.get_mission(md["number"])
        expert = missions.expert_settings(m)
        right = [{"band": tuple(b)} for b in md["right_bands"][:2]] if m.band else \
            [{"cause": k} for k in md["right_causes"]]
        wrong = [{"band": (0.0, 0.3)}] if m.band else \
            [{"cause": c["key"]} for c in md["causes"] if c["key"] not in md["right_causes"]]
        assert right and wrong
        for pred in right:
            assert missions.score(m, expert, prediction=pred).stars == 3
        for pred in wrong:
            assert missions.score(m, expert, prediction=pred).stars == 2


def test_the_file_is_read_back_or_refused_in_one_line():
    text = lab_site.site_data_js({"format": lab_site.FORMAT, "x": [0.87]})
    assert lab_site.read_site_data(text) == {"format": lab_site.FORMAT, "x": [0.87]}
    with pytest.raises(ValueError, match="scripts/site_data.py"):
        lab_site.read_site_data('{"format": 1}')
