"""The lab's missions (chapter 5): scoring across seeds, the two-star search, codes, progress.

The pass/fail rule and the two-star threshold are recomputed here from
``kvsim.sweep`` directly (not through ``kvsim.lab.missions.search``), so a bug in
the scoring module's search or grouping would show as a disagreement.
"""
from __future__ import annotations

import json
import string

import numpy as np
import pytest

import kvsim
from kvsim.cli import main
from kvsim.errors import KvsimError
from kvsim.lab import missions as M
from kvsim.lab import progress as mp


def _passes(m, row) -> bool:
    """The SLO, re-stated: every target that is set is met by this run."""
    return all(row[key] <= limit + 1e-12 for key, limit, *_ in m.slo.items())


def _independent_best(m):
    """The least (or most) resource passing on every seed, from a fresh kvsim.sweep."""
    levers = [lv for lv in m.levers]
    grid = {lv.name: [v for v in lv.grid if v is not None] for lv in levers}
    table = kvsim.sweep(dict(m.fixed, scenario=m.scenario), grid, seeds=M.SEEDS, progress=False)
    n = len(M.SEEDS)
    best = None
    for i in range(0, table.num_rows, n):
        rows = [{k: table[k][j] for k in table.columns} for j in range(i, i + n)]
        if all(_passes(m, r) for r in rows):
            v = float(rows[0][m.resource])
            if best is None or (v < best if m.direction == "min" else v > best):
                best = v
    return best


@pytest.mark.parametrize("number", M.list_missions())
def test_expert_answer_passes_on_every_seed_and_is_kvsims_own_least(number):
    m = M.get_mission(number)
    expert = M.expert_settings(number)
    sc = M.score(number, expert)
    assert sc.seeds_passed == len(M.SEEDS) == sc.seeds
    assert sc.stars == 2                        # the third needs a prediction
    # every seed, run here one by one, meets the SLO
    for seed in M.SEEDS:
        s = kvsim.run_scenario(m.scenario, seed=seed, **dict(m.fixed, **expert)).summary()
        assert _passes(m, s), (seed, m.slo.failures(s))
    # the two-star threshold is what a fresh sweep finds
    assert sc.best == pytest.approx(_independent_best(m))
    assert expert[m.resource] == pytest.approx(sc.best)


@pytest.mark.parametrize("number", M.list_missions())
def test_the_tickets_own_settings_earn_nothing(number):
    sc = M.score(number, None)
    assert sc.stars == 0 and sc.seeds_passed < sc.seeds
    assert "0 stars" in sc.message


def test_a_lucky_seed_earns_nothing():
    """Mission 1 below the answer: some day passes on its own, the others storm."""
    m = M.get_mission(1)
    lucky = next(r for r in M.mission_grid(1) if 0 < r["seeds_passed"] < len(M.SEEDS))
    util = lucky["gpu_memory_utilization"]
    sc = M.score(1, {"gpu_memory_utilization": util})
    assert sc.stars == 0
    day = next(s for s in M.SEEDS if not sc.failures[s])
    assert any(sc.failures[s] for s in M.SEEDS)
    run = kvsim.run_scenario(m.scenario, **dict(m.fixed, seed=day, gpu_memory_utilization=util)).summary()
    assert _passes(m, run)
    assert "luck" in sc.message


@pytest.mark.parametrize("number", M.list_missions())
def test_every_expert_setting_holds_with_the_scored_window_doubled(number):
    """Steady state: an answer found on a ten-minute window is not an artefact of it."""
    m = M.get_mission(number)
    day = M.doubled_day(number)
    assert day["duration_s"] == 2 * M.mission_day(number)["duration_s"] >= 1200
    assert day["warmup_s"] == M.mission_day(number)["warmup_s"] > 0
    runs = M.evaluate(number, M.expert_settings(number), day=day)
    assert [r["seed"] for r in runs] == list(M.SEEDS)
    assert all(_passes(m, r) for r in runs), [m.slo.failures(r) for r in runs]


def test_every_mission_is_scored_on_a_warm_server_over_ten_minutes_or_more():
    for n in M.list_missions():
        day = M.mission_day(n)
        assert day["warmup_s"] >= 120 and day["duration_s"] >= 600
        assert len(M.SEEDS) >= 5


def test_the_answer_key_is_what_score_gives():
    """The instructor notes' key (built from answer_key at build time) against score()."""
    rows = M.answer_key()
    assert [r["mission"] for r in rows] == M.list_missions()
    for r in rows:
        m = M.get_mission(r["mission"])
        assert r["expert"] == M.expert_settings(m)
        assert r["expert_stars"] == M.score(m, r["expert"], prediction=r["prediction"]).stars == 3
        start = M.score(m, m.start)
        assert (r["ticket"], r["ticket_stars"], r["ticket_days"]) == (m.start, start.stars,
                                                                     start.seeds_passed)
        assert r["ticket_stars"] == 0
        trap = M.cold_trap(m)
        assert (r["trap"], r["trap_warm_days"]) == (trap["settings"], trap["warm_passed"])
        if m.band:
            assert r["prediction"] == {"band": M.pass_band(m)[0]}
        else:
            assert r["prediction"] == {"cause": m.cause}


def test_the_cold_trap_is_computed_and_named_in_the_debrief():
    trap = M.cold_trap(1)
    expert = M.expert_settings(1)
    # the cold two-minute replay passes with less memory than the warm answer needs ...
    assert trap["settings"]["gpu_memory_utilization"] < expert["gpu_memory_utilization"]
    cold = M.evaluate(1, trap["settings"], day=M.COLD_DAY)
    assert all(_passes(M.get_mission(1), r) for r in cold)
    # ... and fails on a warm server, on the day the line names
    assert trap["warm_passed"] < len(M.SEEDS)
    seed, why = trap["warm_failure"]
    assert f"seed {seed}: {why}" in trap["line"] and trap["line"] in M.debrief(1)
    assert M.cold_trap(2)["warm_passed"] < len(M.SEEDS)


def test_one_step_either_side_of_the_least_memory():
    best = M.expert_settings(1)["gpu_memory_utilization"]
    below = M.score(1, {"gpu_memory_utilization": round(best - 0.01, 2)})
    above = M.score(1, {"gpu_memory_utilization": round(best + 0.01, 2)})
    assert below.stars == 0
    # one star points down and names no value: the search is the learner's
    assert above.stars == 1 and "less gpu_memory_utilization" in above.message
    assert f"{best:g}" not in above.message


def test_mission2_swap_costs_memory_that_recompute_does_not():
    m = M.get_mission(2)
    least = {}
    for s, runs in M._points(m, M.search(2)):
        if all(_passes(m, r) for r in runs):
            mode = s["preemption_mode"]
            least[mode] = min(least.get(mode, 1.0), s["gpu_memory_utilization"])
    assert least["recompute"] < least.get("swap", 1.0)
    assert M.expert_settings(2) == {"preemption_mode": "recompute",
                                    "gpu_memory_utilization": least["recompute"]}
    # with swap at the recompute answer's memory, the freeze shows in the p99 gap
    swap = M.score(2, {"preemption_mode": "swap",
                       "gpu_memory_utilization": least["recompute"]})
    assert any("inter-token" in f for fs in swap.failures.values() for f in fs)


def test_mission3_expert_path_is_the_cap_then_fp8_with_no_extra_memory():
    """Seed 000's order: cap max_tokens at what the product needs (the lever's least value,
    400), then FP8; then no extra memory is needed (the lever stays at the shared card's 0.60)."""
    m = M.get_mission(3)
    e = M.expert_settings(3)
    need = min(v for v in m.lever("max_tokens").grid if v is not None)
    assert e == {"max_tokens": need, "kv_dtype": "fp8",
                 "gpu_memory_utilization": m.lever("gpu_memory_utilization").start,
                 "max_num_seqs": m.lever("max_num_seqs").start}
    # without FP8 the same cap needs more memory
    fp16 = M.score(3, {"max_tokens": 400, "kv_dtype": "fp16", "gpu_memory_utilization": 0.6})
    assert fp16.stars == 0


def test_mission4_band_has_preemption_below_and_queueing_above():
    (lo, hi), = M.pass_band(4)
    # a band inside the lever's range: no headroom fails (the storm), the most fails (the queue)
    lever = M.get_mission(4).lever("watermark")
    assert lever.lo < lo < hi < lever.hi
    step = M.get_mission(4).step
    below = M.score(4, {"watermark": round(lo - step, 2)})
    above = M.score(4, {"watermark": round(hi + step, 2)})
    assert any("preemptions" in f for fs in below.failures.values() for f in fs)
    assert any("time to first token" in f for fs in above.failures.values() for f in fs)


def test_predictions_earn_the_third_star_only_when_right():
    e1 = M.expert_settings(1)
    assert M.score(1, e1, prediction={"cause": "kv-too-small"}).stars == 3
    wrong = M.score(1, e1, prediction={"cause": "compute-bound"})
    assert wrong.stars == 2 and wrong.prediction_right is False
    (lo, hi), = M.pass_band(4)
    e4 = M.expert_settings(4)
    assert M.score(4, e4, prediction={"band": (lo, hi)}).stars == 3
    assert M.score(4, e4, prediction={"band": (lo, round(hi + 2 * M.get_mission(4).step, 2))}).stars == 2
    # a right prediction never rescues settings that fail
    assert M.score(1, {"gpu_memory_utilization": 0.6},
                   prediction={"cause": "kv-too-small"}).stars == 0


def test_score_is_deterministic_and_the_grid_is_scored_by_score():
    a = M.score(2, {"preemption_mode": "recompute", "gpu_memory_utilization": 0.85})
    b = M.score(2, {"preemption_mode": "recompute", "gpu_memory_utilization": 0.85})
    assert a.stars == b.stars and a.failures == b.failures and a.runs == b.runs
    rows = M.mission_grid(2)
    m = M.get_mission(2)
    assert len(rows) == np.prod([len(lv.grid) for lv in m.levers])
    for row in rows[::5]:
        settings = {lv.name: row[lv.name] for lv in m.levers}
        assert row["stars"] == M.score(2, settings).stars


@pytest.mark.parametrize("mission, settings, needles", [
    (1, {"gpu_memory_utilization": 0.5}, ["gpu_memory_utilization=0.5", "0.6", "0.95"]),
    (1, {"gpu_memory_utilization": "lots"}, ["gpu_memory_utilization='lots'", "number"]),
    (1, {"kv_dtype": "fp8"}, ["'kv_dtype' is not a lever", "gpu_memory_utilization", "max_num_seqs"]),
    (1, {"max_num_seqs": 8}, ["max_num_seqs=8", "256, 32, 16"]),
    (2, {"preemption_mode": "page"}, ["preemption_mode='page'", "swap, recompute"]),
    (3, {"max_tokens": 100}, ["max_tokens=100", "400", "None"]),
    (4, {"watermark": 0.5}, ["watermark=0.5", "0.3"]),
    (4, {"watermark": 0.07}, ["watermark=0.07", "0 to 0.3 in steps of 0.05"]),
    # between grid points a verdict would be one day's noise
    (2, {"preemption_mode": "recompute", "gpu_memory_utilization": 0.84},
     ["gpu_memory_utilization=0.84", "0.6 to 0.95 in steps of 0.05"]),
    (3, {"max_tokens": 450}, ["max_tokens=450", "400, 500, 600, 800", "None"]),
    (1, {"gpu_memory_utilization": 0.885}, ["0.885", "steps of 0.01"]),
    (9, {}, ["mission=9", "1, 2, 3 or 4"]),
    (1, [0.9], ["expected a dict"]),
])
def test_bad_settings_are_one_line_errors(mission, settings, needles):
    with pytest.raises(KvsimError) as info:
        M.score(mission, settings)
    msg = str(info.value)
    assert "\n" not in msg
    for n in needles:
        assert n in msg, (n, msg)


def test_bad_predictions_are_one_line_errors():
    for mission, pred, needle in [(1, {"cause": "gremlins"}, "gremlins"),
                                  (1, {"band": (0.6, 0.7)}, "'band' is not known"),
                                  (4, {"band": (0.2, 0.1)}, "low <= high"),
                                  (4, "0.05", "expected {'cause'")]:
        with pytest.raises(KvsimError) as info:
            M.score(mission, M.expert_settings(mission), prediction=pred)
        assert needle in str(info.value) and "\n" not in str(info.value)


def test_tickets_carry_the_incident_days_numbers():
    for n in M.list_missions():
        m = M.get_mission(n)
        facts = M.ticket_facts(n)
        text = M.ticket(n)
        s = facts["summary"]
        assert m.slo.failures(s), "the incident day misses the SLO"
        assert f"{s['preemptions_per_1k']:.0f}" in text
        assert "SLO" in text and "LOG" in text and facts["log"]
        assert f"seed {facts['seed']}" in text
    assert "PreemptionMode.SWAP" in M.ticket(2)
    assert "GPU KV cache usage" in M.ticket(1)


# ----------------------------------------------------------------------------- codes

def test_completion_codes_round_trip_and_are_rescored():
    e = M.expert_settings(3)
    code = mp.completion_code(3, 3, e, {"cause": "answers-longer"})
    v = mp.verify(code)
    assert v["checksum_ok"] and v["ok"] and v["rescored"] == 3
    assert v["settings"] == e and v["prediction"] == {"cause": "answers-longer"}
    # an honest checksum on a false claim is still caught by re-scoring
    bad = mp.completion_code(1, 2, {"gpu_memory_utilization": 0.6})
    v = mp.verify(bad)
    assert v["checksum_ok"] and not v["ok"] and v["rescored"] == 0
    band = mp.completion_code(4, 3, M.expert_settings(4), {"band": M.pass_band(4)[0]})
    assert mp.verify(band)["ok"]
    none = mp.completion_code(3, 0, {"max_tokens": None})
    assert mp.verify(none)["settings"]["max_tokens"] is None


def test_a_changed_character_is_rejected():
    code = mp.completion_code(1, 2, M.expert_settings(1), name="Ana Lopez", room_key=None)
    alphabet = string.ascii_uppercase + string.digits + "."
    for i, ch in enumerate(code):
        if ch == "/":
            continue
        other = next(c for c in alphabet if c != ch)
        changed = code[:i] + other + code[i + 1:]
        try:
            v = mp.verify(changed, rescore=False)
        except KvsimError:
            continue                       # no longer parses: rejected too
        assert not v["ok"], changed


# -------------------------------------------------------------------------- progress

def test_progress_file_is_written_and_reset(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    monkeypatch.setenv(mp.ENV_VAR, str(path))
    assert mp.progress_path() == path
    assert "before any run" in mp.commit_prediction(1, {"cause": "kv-too-small"})
    sc = mp.attempt(1, M.expert_settings(1))
    assert sc.stars == 3
    data = json.loads(path.read_text())
    entry = data["missions"]["1"]
    assert entry["stars"] == 3 and entry["attempts"] == 1
    assert mp.verify(entry["code"])["ok"]
    # a worse attempt keeps the best result
    mp.attempt(1, {"gpu_memory_utilization": 0.6})
    assert mp.load()["missions"]["1"]["stars"] == 3
    # a prediction after a run cannot earn the third star
    mp.attempt(4, {"watermark": 0.0})
    assert "cannot earn" in mp.commit_prediction(4, {"band": M.pass_band(4)[0]})
    assert mp.attempt(4, M.expert_settings(4)).stars == 2
    assert "mission 1 [***]" in mp.progress_text()
    mp.reset()
    assert not path.exists()
    assert mp.load()["missions"] == {}


def test_a_damaged_progress_file_is_moved_aside_in_one_line(tmp_path, capsys):
    path = tmp_path / "p.json"
    cut = '{"version": 2, "missions": {"1": {"atte'      # a progress file cut short
    path.write_text(cut)
    assert mp.load(path) == {"version": 2, "name": None, "missions": {}}
    err = capsys.readouterr().err
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("p.json.bad-")]
    assert len(err.splitlines()) == 1 and str(aside[0]) in err and "not JSON" in err
    assert aside[0].read_text() == cut and not path.exists()


def test_another_programs_file_at_the_progress_path_is_refused_and_left_alone(tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text("{not json")                          # not kvsim's: never moved aside
    with pytest.raises(KvsimError, match="is not a kvsim progress file: nothing was changed"):
        mp.load(path)
    assert path.read_text() == "{not json"
    assert [p.name for p in tmp_path.iterdir()] == ["p.json"]     # no lock file, no copy


# ------------------------------------------------------------------------------- CLI

def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def assert_one_line_error(status, out, err, *needles):
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)


def test_cli_missions_progress_verify_leaderboard(capsys, tmp_path):
    pf = tmp_path / "p.json"
    status, out, _ = run(capsys, "missions", "--progress-file", str(pf))
    assert status == 0 and "total 0 of 12 stars" in out
    mp.set_name("Ana", path=pf)
    mp.attempt(1, M.expert_settings(1), path=pf)
    status, out, _ = run(capsys, "missions", "--progress-file", str(pf))
    assert "mission 1 [**.]" in out
    code = mp.load(pf)["missions"]["1"]["code"]
    status, out, _ = run(capsys, "missions", "--verify", code)
    assert status == 0 and "confirmed" in out
    tampered = code.replace("/2/", "/3/")
    assert_one_line_error(*run(capsys, "missions", "--verify", tampered), "checksum")
    assert_one_line_error(*run(capsys, "missions", "--verify", "M1/2"), "malformed")
    assert_one_line_error(*run(capsys, "missions", "--ticket", "5"), "mission='5'")
    assert_one_line_error(*run(capsys, "missions", "--leaderboard", str(tmp_path / "no.txt")),
                          "does not exist")
    codes = tmp_path / "codes.txt"
    codes.write_text(f"# room 3\nAna {code}\nBo: {tampered}\n")
    status, out, err = run(capsys, "missions", "--leaderboard", str(codes))
    lines = out.splitlines()
    assert status == 1 and lines[1].split()[:3] == ["1", "Ana", "2"]
    assert "Bo" in lines[2] and "rejected" in lines[2]
    assert err.splitlines() == [f"kvsim: rejected: line 3: completion code {tampered!r} fails "
                                f"its checksum: a character was changed or mistyped (the "
                                f"checksum covers the name, the settings, the stars and the "
                                f"prediction)"]
    status, out, _ = run(capsys, "missions", "--ticket", "2", "--json")
    assert status == 0 and "PreemptionMode.SWAP" in json.loads(out)["ticket"]
    status, out, _ = run(capsys, "missions", "--reset", "--progress-file", str(pf))
    assert status == 0 and not pf.exists()


# ----------------------------------------------------------------------------- chart

def test_band_chart_shows_the_grid_that_score_judged():
    from kvsim.book import lab_charts

    rows = lab_charts.mission_band_data(4)
    m = M.get_mission(4)
    assert {r["x"] for r in rows} == set(m.lever("watermark").grid)
    (lo, hi), = M.pass_band(4)
    assert {r["x"] for r in rows if r["passes"]} == {v for v in m.lever("watermark").grid
                                                     if lo - 1e-9 <= v <= hi + 1e-9}
    spec = lab_charts.mission_band_chart(rows, 4, title="The band", guess=0.1).to_dict()
    assert f"{lo:g} to {hi:g}" in spec["description"]
    text = json.dumps(spec)
    assert f"passes: {lo:g} to {hi:g}" in text and "your guess" in text
