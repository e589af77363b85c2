"""``lab_panel(mission=N)`` plays a mission: its day, its seeds, its levers, and the numbers
:func:`kvsim.lab.missions.score` judges (issue 19, item 2)."""
from __future__ import annotations

import pytest

from kvsim.errors import KvsimError
from kvsim.lab import missions as M
from kvsim.lab.replay import mission_run, mission_text

SLO_KEYS = {n: [k for k, *_ in M.get_mission(n).slo.items()] for n in M.list_missions()}


@pytest.mark.parametrize("number, settings", [
    (1, {"gpu_memory_utilization": 0.8}),
    (2, {"preemption_mode": "swap", "gpu_memory_utilization": 0.85}),
    (4, {"watermark": 0.05}),
])
def test_a_mission_run_is_the_run_score_judges(number, settings):
    sc = M.score(number, settings)
    for i, seed in enumerate(M.SEEDS[:2]):
        s = mission_run(number, settings, seed).summary()
        judged = sc.runs[i]
        assert judged["seed"] == seed
        for key in SLO_KEYS[number] + ["requests_arrived", "max_waiting"]:
            assert s[key] == judged[key], key
        assert M.get_mission(number).slo.failures(s) == sc.failures[seed]


def test_the_panel_shows_scores_numbers_for_the_chosen_day():
    pytest.importorskip("ipywidgets")
    from kvsim.book.lab_panel import lab_panel

    settings = {"gpu_memory_utilization": 0.8}
    sc = M.score(1, settings)
    panel = lab_panel(mission=1, seed=M.SEEDS[1], **settings)
    out_text, out_chart = panel.mission_outputs
    shown = out_text.outputs[0]["data"]["text/plain"]
    assert shown == "\n".join(mission_text(1, sc.runs[1], M.SEEDS[1]))
    assert out_chart.outputs                                   # the day's timeline drew
    # the controls are the mission's levers on their grids, and its days
    levers = M.get_mission(1).levers
    controls, seed = panel.children[:len(levers)], panel.children[len(levers)]
    for lever, lv in zip(controls, levers, strict=True):
        assert lever.description == lv.name
        assert [v for _, v in lever.options] == list(lv.grid)
    assert list(seed.options) == list(M.SEEDS)
    # another day: the panel follows score's run for that seed
    seed.value = M.SEEDS[3]
    assert out_text.outputs[0]["data"]["text/plain"] == "\n".join(
        mission_text(1, sc.runs[3], M.SEEDS[3]))


def test_the_panel_refuses_bad_starting_values_in_one_line():
    pytest.importorskip("ipywidgets")
    from kvsim.book.lab_panel import lab_panel

    for kwargs, needle in [({"gpu_memory_utilization": 0.5}, "gpu_memory_utilization=0.5"),
                           ({"seed": 9}, "seed=9"), ({"output_mean": 300}, "not a lever")]:
        with pytest.raises(KvsimError) as info:
            lab_panel(mission=1, **kwargs)
        assert needle in str(info.value) and "\n" not in str(info.value)


def test_the_mission_panel_commits_scores_every_day_and_gives_a_code_that_verifies(tmp_path):
    """The notebook's panel does what the site's does (issue 29): a prediction committed before
    the first score, the levers scored on all the mission's days, the stars and the message of
    score(), and a completion code, all recorded in the progress file."""
    pytest.importorskip("ipywidgets")
    from kvsim.book.lab_panel import lab_panel
    from kvsim.lab import codes
    from kvsim.lab import progress as P

    path = tmp_path / "progress.json"
    m = M.get_mission(1)
    expert = M.expert_settings(1)
    panel = lab_panel(mission=1, progress_file=path,
                      **{k: v for k, v in expert.items() if k in {lv.name for lv in m.levers}})
    parts = panel.score_parts
    text = lambda: parts["output"].outputs[0]["data"]["text/plain"]
    parts["commit"]()                                 # nothing picked: said, nothing written
    assert text() == "Pick a prediction first." and not path.exists()
    (cause,) = parts["picks"]
    cause.value = m.cause
    parts["commit"]()
    assert "counts toward the third star" in text() and cause.disabled
    parts["score"]()
    sc = M.score(1, expert, prediction={"cause": m.cause})
    shown = text().splitlines()
    assert shown[0].startswith("\u2605\u2605\u2605 3 of 3 stars") and shown[1] == sc.message
    entry = P.load(path)["missions"]["1"]
    assert entry["stars"] == 3 and entry["code"] in shown[2]
    assert codes.verify(entry["code"])["ok"]
    # one click keeps it all: the link's file is the export, and another machine imports it
    import base64
    import re
    page = parts["output"].outputs[0]["data"]["text/html"]
    link = re.search(r"<a download='kvsim-missions-export.json' "
                     r"href='data:application/json;base64,([A-Za-z0-9+/=]+)'>", page)
    assert link, page
    saved = tmp_path / "kvsim-missions-export.json"
    saved.write_bytes(base64.b64decode(link.group(1)))
    elsewhere = tmp_path / "other.json"
    P.import_progress(saved, path=elsewhere)
    assert P.load(elsewhere)["missions"]["1"]["code"] == entry["code"]


def test_a_band_missions_panel_commits_a_band_on_its_grid(tmp_path):
    pytest.importorskip("ipywidgets")
    from kvsim.book.lab_panel import lab_panel
    from kvsim.lab import progress as P

    path = tmp_path / "progress.json"
    band = next(n for n in M.list_missions() if M.get_mission(n).band)
    parts = lab_panel(mission=band, progress_file=path).score_parts
    low, high = parts["picks"]
    grid = [v for _, v in low.options if v is not None]
    low.value, high.value = grid[1], grid[3]
    parts["commit"]()
    assert P.load(path)["missions"][str(band)]["prediction"] == {"band": [grid[1], grid[3]]}
    with pytest.raises(KvsimError, match="band low"):
        low.value = 0.123456
