"""Exporting the lab's progress and importing it again (chapter 5, on Binder).

On mybinder.org the home directory, and ``~/.kvsim/missions.json`` in it, is
gone when the session ends; a learner exports their progress and imports it
in the next session. Every test works on files under ``tmp_path`` (the
autouse fixture also points ``$KVSIM_MISSIONS_FILE`` and ``$HOME`` there, so a
forgotten ``path=`` cannot reach the real ``~/.kvsim``).

Only mission 2 is ever scored: its search (16 grid points x 5 seeds, cached
for the session) is the cheapest of the four. Missions 1 and 3 appear only as
committed predictions, which cost no simulation.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import kvsim
from kvsim.cli import main
from kvsim.errors import KvsimError
from kvsim.lab import missions as M
from kvsim.lab import progress as mp

TWO = {"preemption_mode": "recompute", "gpu_memory_utilization": 0.80}   # kvsim's least: 2 stars
ONE = {"preemption_mode": "recompute", "gpu_memory_utilization": 0.95}   # passes, more memory
ZERO = {"preemption_mode": "swap", "gpu_memory_utilization": 0.6}        # the ticket's own
ZERO_B = {"preemption_mode": "swap", "gpu_memory_utilization": 0.7}
RIGHT = {"cause": "swap-link"}


pytestmark = pytest.mark.usefixtures("isolated_progress")
ROOT = Path(__file__).resolve().parents[1]


def test_the_scores_these_tests_rely_on():
    assert [M.score(2, s).stars for s in (TWO, ONE, ZERO, ZERO_B)] == [2, 1, 0, 0]
    assert M.score(2, TWO, prediction=RIGHT).stars == 3


def _three_star_file(path):
    """Mission 2 with three stars (prediction before the run) and mission 3 predicted only."""
    mp.commit_prediction(2, RIGHT, path=path)
    assert mp.attempt(2, TWO, path=path).stars == 3
    mp.commit_prediction(3, {"cause": "answers-longer"}, path=path)
    return path


# --------------------------------------------------------------------------- round trip

def test_export_then_import_into_an_empty_file_round_trips(tmp_path, monkeypatch):
    a = _three_star_file(tmp_path / "a.json")
    monkeypatch.chdir(tmp_path)
    written = mp.export_progress(path=a)
    assert written == str(tmp_path / mp.EXPORT_NAME)          # the notebook's folder
    doc = json.loads((tmp_path / mp.EXPORT_NAME).read_text())
    code = mp.load(a)["missions"]["2"]["code"]
    assert doc["format"] == "kvsim-missions-export" and doc["version"] == 1
    assert doc["kvsim_version"] == kvsim.__version__
    assert doc["codes"] == {"2": code} and code.startswith("M2/3/")
    assert doc["progress"] == mp.load(a)                        # the progress file, as it is
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    b = tmp_path / "b.json"
    assert mp.import_progress(written, path=b) == {1: "unchanged", 2: "imported",
                                                   3: "imported", 4: "unchanged"}
    assert mp.load(b) == mp.load(a)
    assert mp.verify(mp.load(b)["missions"]["2"]["code"])["ok"]
    # importing the same export again changes nothing, and does not even rewrite the file
    before = (b.read_bytes(), os.stat(b).st_ino)
    assert set(mp.import_progress(written, path=b).values()) == {"unchanged"}
    assert (b.read_bytes(), os.stat(b).st_ino) == before
    # the prediction that came before the run still counts in the new file
    assert mp.load(b)["missions"]["3"]["prediction_counts"] is True


def test_export_to_a_named_file_or_folder_and_of_empty_progress(tmp_path):
    a = _three_star_file(tmp_path / "a.json")
    (tmp_path / "out").mkdir()
    assert mp.export_progress(tmp_path / "out", path=a) == str(tmp_path / "out" / mp.EXPORT_NAME)
    named = tmp_path / "mine.json"
    named.write_text("")                                        # an empty file is written
    assert mp.export_progress(named, path=a) == str(named)
    assert json.loads(named.read_text())["codes"]["2"].startswith("M2/3/")
    assert mp.export_progress(named, path=a) == str(named)      # and an export replaced
    other = tmp_path / "notes.json"
    other.write_text("my notes")                                # somebody else's: refused
    with pytest.raises(KvsimError, match=r"notes.json' is a file kvsim did not write .*"
                                         r"nothing was written"):
        mp.export_progress(other, path=a)
    assert other.read_text() == "my notes"
    empty = mp.export_progress(tmp_path / "empty.json", path=tmp_path / "none.json")
    assert json.loads(Path(empty).read_text())["progress"] == {"version": 2, "name": None,
                                                        "missions": {}}
    assert not (tmp_path / "none.json").exists()                # exporting only reads
    assert mp.import_progress(empty, path=a) == {n: "unchanged" for n in M.MISSIONS}


def test_export_refuses_a_missing_folder_and_the_progress_file_itself(tmp_path):
    a = _three_star_file(tmp_path / "a.json")
    before = a.read_bytes()
    for dest, needle in ((tmp_path / "no" / "x.json", "does not exist"),
                         (a, "the progress file itself")):
        with pytest.raises(KvsimError) as info:
            mp.export_progress(dest, path=a)
        msg = str(info.value)
        assert "\n" not in msg and needle in msg and str(dest) in msg, msg
    assert a.read_bytes() == before


# -------------------------------------------------------------------------------- merge

def _export(tmp_path, name, build):
    """Build a progress file with ``build(path)`` and export it; returns the export's path."""
    src = tmp_path / f"{name}.progress.json"
    build(src)
    return mp.export_progress(tmp_path / f"{name}.export.json", path=src)


@pytest.mark.parametrize("here, there, outcome, winner", [
    (ONE, TWO, "imported", "there"),        # the export's two stars beat this machine's one
    (TWO, ONE, "kept", "here"),             # and the other way round
    (ZERO, ZERO_B, "kept", "here"),         # a tie keeps the record already here
    (None, ZERO_B, "imported", "there"),    # a run beats a prediction alone, even with 0 stars
], ids=["more-stars-there", "more-stars-here", "tie", "no-run-here"])
def test_merge_keeps_the_better_best_attempt(tmp_path, here, there, outcome, winner):
    local = tmp_path / "local.json"
    if here is None:
        mp.commit_prediction(2, RIGHT, path=local)
    else:
        mp.attempt(2, here, path=local)
        mp.attempt(2, ZERO, path=local)                        # 2 runs here
    other = tmp_path / "other.json"
    for _ in range(3):                                          # 3 runs there
        mp.attempt(2, there, path=other)
    export = mp.export_progress(tmp_path / "x.json", path=other)
    want = dict(mp.load(other if winner == "there" else local)["missions"]["2"])

    assert mp.import_progress(export, path=local)[2] == outcome
    got = mp.load(local)["missions"]["2"]
    for field in ("stars", "settings", "code"):
        assert got[field] == want[field], field
    assert got["attempts"] == 3                                 # the larger of 3 and 2 (or 0)
    assert mp.progress_text(local).count("3 run(s)") == 1


def test_import_and_attempt_share_one_best_attempt_order(tmp_path, monkeypatch):
    """Reversing mp._improves reverses both: the merge has no copy of its own."""
    local, other = tmp_path / "local.json", tmp_path / "other.json"
    mp.attempt(2, TWO, path=local)
    mp.attempt(2, ONE, path=other)
    export = mp.export_progress(tmp_path / "x.json", path=other)
    monkeypatch.setattr(mp, "_improves",
                        lambda e, stars: e["settings"] is None or stars < e["stars"])
    mp.attempt(2, ONE, path=tmp_path / "solo.json")
    mp.attempt(2, TWO, path=tmp_path / "solo.json")
    assert mp.load(tmp_path / "solo.json")["missions"]["2"]["stars"] == 1
    assert mp.import_progress(export, path=local)[2] == "imported"
    assert mp.load(local)["missions"]["2"]["stars"] == 1


def test_a_late_prediction_does_not_become_eligible_through_a_merge(tmp_path):
    def late(p):          # ran first, predicted after: it cannot earn the third star
        mp.attempt(2, ZERO, path=p)
        assert "cannot earn" in mp.commit_prediction(2, RIGHT, path=p)

    def early(p):         # predicted, then ran: it counts
        mp.commit_prediction(2, RIGHT, path=p)
        mp.attempt(2, ZERO, path=p)

    def third_star(progress) -> int:
        return mp.attempt(2, TWO, path=progress).stars

    # a late prediction stays late in a new file
    fresh = tmp_path / "fresh.json"
    mp.import_progress(_export(tmp_path, "late", late), path=fresh)
    assert mp.load(fresh)["missions"]["2"]["prediction_counts"] is False
    assert third_star(fresh) == 2
    # early here, late there (and the other way round): which came first is unknown
    for here, there in ((early, late), (late, early)):
        local = tmp_path / f"{here.__name__}-{there.__name__}.json"
        here(local)
        mp.import_progress(_export(tmp_path, f"x-{there.__name__}", there), path=local)
        assert mp.load(local)["missions"]["2"]["prediction_counts"] is False
        assert third_star(local) == 2
    # two different guesses, each before its own session's runs: the wrong one's runs (and
    # the debrief) may have come first, so neither counts after the merge
    wrong = tmp_path / "wrong-then-right.json"
    early(wrong)
    mp.import_progress(_export(tmp_path, "wrong", lambda p: (
        mp.commit_prediction(2, {"cause": "kv-too-small"}, path=p),
        mp.attempt(2, ZERO, path=p))), path=wrong)
    assert mp.load(wrong)["missions"]["2"]["prediction"] == RIGHT
    assert third_star(wrong) == 2
    # a prediction made in a session with no runs, merged with runs from elsewhere
    predicted = tmp_path / "predicted.json"
    mp.commit_prediction(2, RIGHT, path=predicted)
    mp.import_progress(_export(tmp_path, "ran", lambda p: mp.attempt(2, ZERO, path=p)),
                       path=predicted)
    assert third_star(predicted) == 2
    # but an early prediction keeps counting where nothing else ran (the control)
    for name, local in (("early-into-empty", tmp_path / "empty.json"),
                        ("early-into-predicted", tmp_path / "same.json")):
        if "predicted" in name:
            mp.commit_prediction(2, RIGHT, path=local)
        mp.import_progress(_export(tmp_path, name, early), path=local)
        assert mp.load(local)["missions"]["2"]["prediction_counts"] is True, name
        assert third_star(local) == 3, name


def test_a_merged_three_star_record_keeps_a_consistent_prediction(tmp_path):
    """Three stars from there over runs here: the stars stay (they were earned), the
    prediction stops counting, and the merged record passes the import checks itself."""
    local = tmp_path / "local.json"
    mp.attempt(2, ONE, path=local)
    there = _export(tmp_path, "three", _three_star_file)
    assert mp.import_progress(there, path=local)[2] == "imported"
    entry = mp.load(local)["missions"]["2"]
    assert entry["stars"] == 3 and entry["prediction"] == RIGHT
    assert entry["prediction_counts"] is False
    # the merged file exports and imports again cleanly
    again = mp.export_progress(tmp_path / "again.json", path=local)
    assert mp.import_progress(again, path=tmp_path / "copy.json")[2] == "imported"
    assert mp.load(tmp_path / "copy.json") == mp.load(local)


# ------------------------------------------------------------------------- bad inputs

@pytest.fixture(scope="module")
def valid_export(tmp_path_factory):
    """A valid export (mission 2: three stars; mission 3: a prediction) as a dict."""
    d = tmp_path_factory.mktemp("valid")
    mp.commit_prediction(2, RIGHT, path=d / "p.json")
    mp.attempt(2, TWO, path=d / "p.json")
    mp.commit_prediction(3, {"cause": "answers-longer"}, path=d / "p.json")
    return json.loads(open(mp.export_progress(d / "x.json", path=d / "p.json")).read())


def _rec(doc, n="2"):
    return doc["progress"]["missions"][n]


def _set(field, value, n="2"):
    def edit(doc):
        _rec(doc, n)[field] = value
    return edit


def _forged_three_stars(doc):
    """Stars edited up with a code whose checksum is right: only re-scoring catches it."""
    _rec(doc)["prediction"], _rec(doc)["prediction_counts"] = None, False
    code = mp.completion_code(2, 3, TWO, None)
    _rec(doc)["code"] = doc["codes"]["2"] = code


def _forged_one_more(doc):
    """A one-star record (0.95) edited to two stars with an honest checksum."""
    code = mp.completion_code(2, 2, ONE, None)
    _rec(doc).update(stars=2, settings=ONE, prediction=None, prediction_counts=False, code=code)
    doc["codes"]["2"] = code


def _stars_up(doc):
    """A one-star record (0.95, its honest code) with only the record's stars edited to 2."""
    code = mp.completion_code(2, 1, ONE, None)
    _rec(doc).update(stars=2, settings=ONE, prediction=None, prediction_counts=False, code=code)
    doc["codes"]["2"] = code


def _code_stars_up(doc):
    """The true two-star code of TWO with its stars field edited to 3 by hand, and the
    record's stars with it (the checksum no longer fits)."""
    true = mp.completion_code(2, 2, TWO, None)
    edited = true.replace("/2/", "/3/", 1)
    _rec(doc).update(stars=3, prediction=None, prediction_counts=False, code=edited)
    doc["codes"]["2"] = edited


BAD = [
    ("not-json", "{not json", ["is not valid JSON", "line 1"]),
    ("a-list", "[1, 2]", ["JSON list, not an object"]),
    ("progress-file", {"version": 1, "missions": {}}, ["is a progress file, not an export"]),
    ("format", lambda d: d.update(format="kvsim-other"),
     ["format='kvsim-other'", "'kvsim-missions-export'"]),
    ("no-format", lambda d: d.pop("format"), ["format=None", "'kvsim-missions-export'"]),
    ("version", lambda d: d.update(version=2), ["version=2", "expected 1"]),
    ("version-bool", lambda d: d.update(version=True), ["version=True", "expected 1"]),
    ("unknown-field", lambda d: d.update(extra=1), ["unknown field 'extra'"]),
    ("no-progress", lambda d: d.pop("progress"), ["lacks 'progress'"]),
    ("progress-shape", lambda d: d.update(progress={"version": 1, "missions": []}),
     ["progress=", "expected an object"]),
    ("unknown-mission", lambda d: d["progress"]["missions"].update({"9": {}}),
     ["mission '9' is not known", "'1', '2', '3', '4'"]),
    ("record-type", lambda d: d["progress"]["missions"].update({"4": [1]}),
     ["mission 4", "[1]", "expected an object"]),
    ("missing-field", lambda d: _rec(d).pop("code"), ["mission 2", "lacks 'code'"]),
    ("extra-field", _set("bonus", 1), ["mission 2", "unknown field 'bonus'"]),
    ("attempts", _set("attempts", -1), ["mission 2", "attempts=-1", "integer >= 0"]),
    ("attempts-text", _set("attempts", "3"), ["attempts='3'", "integer >= 0"]),
    ("stars-range", _set("stars", 4), ["stars=4", "0 to 3"]),
    ("stars-float", _set("stars", 2.0), ["stars=2.0", "0 to 3"]),
    ("counts", _set("prediction_counts", "yes"), ["prediction_counts='yes'", "true or false"]),
    ("off-grid", _set("settings", dict(TWO, gpu_memory_utilization=0.93)),
     ["mission 2", "gpu_memory_utilization=0.93", "steps of 0.05"]),
    ("lever", _set("settings", {"max_num_seqs": 8}), ["settings=", "preemption_mode"]),
    ("cause", _set("prediction", {"cause": "gremlins"}, n="3"), ["mission 3", "gremlins"]),
    ("no-run-settings", _set("attempts", 0), ["attempts=0", "settings null"]),
    ("code-type", _set("code", 42), ["code=42", "completion code or null"]),
    ("stars-no-code", lambda d: (_rec(d).update(code=None), d["codes"].clear()),
     ["stars=3 with code=None", "exactly when"]),
    ("malformed-code", lambda d: _rec(d).update(code="M2/3"), ["mission 2", "malformed"]),
    ("other-missions-code",
     lambda d: _rec(d).update(code=mp.completion_code(1, 3, {"gpu_memory_utilization": 0.9},
                                                      {"cause": "kv-too-small"})),
     ["says mission 1", "the record 2"]),
    # ran with no prediction, predicted after, then set prediction_counts by hand
    ("flipped-counts", lambda d: _rec(d).update(stars=2, code=mp.completion_code(2, 2, TWO)) or
     d["codes"].update({"2": _rec(d)["code"]}),
     ["prediction_counts is true", "with prediction None", "swap-link"]),
    ("swapped-prediction", lambda d: _rec(d).update(prediction={"cause": "kv-too-small"}),
     ["prediction_counts is true", "swap-link", "kv-too-small"]),
    ("header-codes", lambda d: d["codes"].update({"2": "M2/2/recompute,0.9/-/AAAAA"}),
     ["codes['2']", "does not match"]),
    ("header-extra-code", lambda d: d["codes"].update({"1": "M1/2/0.89/-/AAAAA"}),
     ["codes['1']", "does not match"]),
    # tampered: stars edited up, three ways
    ("tampered-stars", _stars_up, ["mission 2", "says stars 1, the record 2"]),
    ("tampered-code", _code_stars_up, ["mission 2", "fails its checksum"]),
    ("tampered-rescored", _forged_three_stars,
     ["mission 2", "stars=3 is not confirmed", "re-scores to 2"]),
    ("tampered-one-more", _forged_one_more,
     ["mission 2", "stars=2 is not confirmed", "re-scores to 1"]),
]


@pytest.fixture
def local_progress(tmp_path):
    """A progress file with something in it (mission 1 predicted), and its bytes."""
    p = tmp_path / "local.json"
    mp.commit_prediction(1, {"cause": "kv-too-small"}, path=p)
    return p, p.read_bytes()


def test_the_valid_export_imports(tmp_path, valid_export, local_progress):
    """The control for BAD: unedited, the same document imports (so each edit is the cause)."""
    src = tmp_path / "ok.json"
    src.write_text(json.dumps(valid_export))
    local, _ = local_progress
    assert mp.import_progress(src, path=local) == {1: "unchanged", 2: "imported",
                                                   3: "imported", 4: "unchanged"}
    assert mp.load(local)["missions"]["1"]["prediction"] == {"cause": "kv-too-small"}


@pytest.mark.parametrize("content, needles", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_imports_are_one_line_errors_that_change_nothing(tmp_path, valid_export,
                                                             local_progress, content, needles):
    src = tmp_path / "bad.json"
    if callable(content):
        doc = json.loads(json.dumps(valid_export))
        content(doc)
        content = doc
    src.write_text(content if isinstance(content, str) else json.dumps(content))
    local, before = local_progress
    with pytest.raises(KvsimError) as info:
        mp.import_progress(src, path=local)
    msg = str(info.value)
    assert "\n" not in msg, msg
    assert f"import file {str(src)!r}" in msg, msg
    for n in needles:
        assert n in msg, (n, msg)
    assert local.read_bytes() == before                         # nothing written, not even 2
    # (local.json.lock is the progress file's lock, empty; see test_progress_concurrency.py)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "local.json",
                                                           "local.json.lock"]


def test_a_missing_or_unreadable_import_file(tmp_path, local_progress):
    local, before = local_progress
    for src, needle in ((tmp_path / "nope.json", "does not exist"),
                        (tmp_path, "is a folder, not a regular file")):
        with pytest.raises(KvsimError) as info:
            mp.import_progress(src, path=local)
        msg = str(info.value)
        assert "\n" not in msg and str(src) in msg and needle in msg, msg
        assert "kvsim missions --export" in msg
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(KvsimError, match="is not JSON"):
        mp.import_progress(binary, path=local)
    assert local.read_bytes() == before


def test_a_damaged_local_record_is_moved_aside_and_the_import_goes_on(tmp_path, valid_export,
                                                                     capsys):
    local = tmp_path / "local.json"
    local.write_text(json.dumps({"version": 1, "missions": {"2": {"stars": "many"}}}))
    before = local.read_bytes()
    src = tmp_path / "x.json"
    src.write_text(json.dumps(valid_export))
    summary = mp.import_progress(src, path=local)
    assert summary[2] == "imported"
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "damaged record(s) for mission 2" in err
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("local.json.bad-")]
    assert len(aside) == 1 and aside[0].read_bytes() == before and str(aside[0]) in err
    assert mp.load(local)["missions"]["2"] == valid_export["progress"]["missions"]["2"]


# ---------------------------------------------------------------------------------- CLI

def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_export_and_import_end_to_end(capsys, tmp_path, monkeypatch):
    a = _three_star_file(tmp_path / "a.json")
    f = tmp_path / "progress-export.json"
    assert run(capsys, "missions", "--export", str(f), "--progress-file", str(a)) == \
        (0, f"{f}\n", "")
    # no FILE: the current folder, and the progress file from $KVSIM_MISSIONS_FILE
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(mp.ENV_VAR, str(a))
    assert run(capsys, "missions", "--export") == (0, f"{tmp_path / mp.EXPORT_NAME}\n", "")
    status, out, _ = run(capsys, "missions", "--export", "--json")
    assert status == 0 and json.loads(out) == {"exported": str(tmp_path / mp.EXPORT_NAME)}

    b = tmp_path / "b.json"
    status, out, err = run(capsys, "missions", "--import", str(f), "--progress-file", str(b))
    assert status == 0 and err == ""
    assert out.splitlines() == ["mission 1: unchanged (0 star(s) now)",
                                "mission 2: imported (3 star(s) now)",
                                "mission 3: imported (0 star(s) now)",
                                "mission 4: unchanged (0 star(s) now)",
                                f"progress in {b} (merged from {f})"]
    status, out, _ = run(capsys, "missions", "--progress-file", str(b))
    assert status == 0 and "mission 2 [***]" in out and mp.load(a)["missions"]["2"]["code"] in out
    status, out, _ = run(capsys, "missions", "--import", str(f), "--progress-file", str(b),
                         "--json")
    assert status == 0 and json.loads(out)["missions"] == {str(n): "unchanged" for n in M.MISSIONS}


def test_cli_export_and_import_errors_exit_2_with_one_line(capsys, tmp_path, valid_export):
    b = tmp_path / "b.json"
    mp.commit_prediction(1, {"cause": "kv-too-small"}, path=b)
    before = b.read_bytes()
    tampered = tmp_path / "tampered.json"
    doc = json.loads(json.dumps(valid_export))
    _forged_one_more(doc)
    tampered.write_text(json.dumps(doc))
    cases = [(("--import", str(tmp_path / "nope.json")), "does not exist"),
             (("--import", str(tampered)), "re-scores to 1"),
             (("--export", str(tmp_path / "no" / "x.json")), "does not exist"),
             (("--export", str(b)), "the progress file itself"),
             (("--import", str(tampered), "--export"), "not allowed with"),
             (("--import",), "expected one argument"),
             (("--reset", "--import", str(tampered)), "not allowed with")]
    for argv, needle in cases:
        status, out, err = run(capsys, "missions", *argv, "--progress-file", str(b))
        assert status == 2 and out == "", argv
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert needle in err, (needle, err)
    assert b.read_bytes() == before and not (tmp_path / "no").exists()


# ------------------------------------------------------ issue 30: no stray temporary files

def test_a_save_killed_mid_write_leaves_a_temp_file_the_next_save_removes(tmp_path):
    """A process killed between writing its temporary file and renaming it (here SIGKILL,
    at os.replace) leaves ``.missions.json.kvsim-<pid>-<hex>.tmp``; the next save removes
    exactly that (its process is gone) and nothing else: not a live process's, not a name
    that only looks like one, not the user's files."""
    import signal
    import subprocess
    import sys
    path = tmp_path / "missions.json"
    mp.commit_prediction(1, {"cause": "kv-too-small"}, path=path)
    script = ("import os, signal, sys\n"
              "from kvsim.lab import progress as mp\n"
              "os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)\n"
              "mp.commit_prediction(3, {'cause': 'answers-longer'}, path=sys.argv[1])\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)],
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.wait(timeout=60) == -signal.SIGKILL
    stray = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(stray) == 1 and stray[0].startswith(f".missions.json.kvsim-{proc.pid}-"), stray
    keep = [f".missions.json.kvsim-{os.getpid()}-0123abcd.tmp",   # a live process's
            ".missions.json.kvsim-1-notahex!.tmp",                # not our exact pattern
            ".other.json.kvsim-99999999-0123abcd.tmp",            # another target's
            "notes.tmp"]                                          # the user's
    old = ".missions.json.99999999.cafebabe.tmp"                  # kvsim 2.0's, process gone
    for name in keep + [old]:
        (tmp_path / name).write_text("x")
    assert json.loads(path.read_text())["missions"].keys() == {"1"}   # the killed save lost
    mp.commit_prediction(2, {"cause": "swap-link"}, path=path)       # the next save
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(keep + ["missions.json", "missions.json.lock"]), names
    assert sorted(mp.load(path)["missions"]) == ["1", "2"]


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "missions.json"
    mp.commit_prediction(1, {"cause": "kv-too-small"}, path=path)
    before = path.read_bytes()

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(KvsimError, match=r"missions.json': cannot write it \(No space left on "
                                         r"device\): nothing was written$"):
        mp.commit_prediction(2, {"cause": "swap-link"}, path=path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["missions.json", "missions.json.lock"]
