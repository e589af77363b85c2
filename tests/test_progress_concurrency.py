"""The lab's progress cannot be lost (issue 19, item 4).

Two kernels (or a kernel and ``kvsim missions``) saving at once; a damaged
file moved aside and rebuilt from what is readable, never wiped; the CLI's
``--verify`` and ``--leaderboard`` refusing bad input in one line with a
non-zero status.
"""
from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from kvsim.cli import main
from kvsim.errors import KvsimError
from kvsim.lab import missions as M
from kvsim.lab import progress as mp

WRITERS, ATTEMPTS = 4, 25


def _quick_score(m, settings, prediction=None, **_):
    """A stand-in for score(): instant, so the writers collide as often as they can."""
    m = M.get_mission(m)
    return M.Score(m.number, dict(settings), 1, 5, 5, {}, None, None, "quick")


def _writer(path: str, who: int, out) -> None:
    mp.score = _quick_score                      # this process only (a fork of the test's)
    try:
        for i in range(ATTEMPTS):
            n = 1 + (who + i) % 2
            mp.attempt(n, None, path=path)
            if i % 5 == 0:
                mp.commit_prediction(3, {"cause": "answers-longer"}, path=path)
            json.loads(Path(path).read_text(encoding="utf-8"))  # readable after every save
        out.put(None)
    # everything (an exit too) is reported to the test, not lost in a child
    except BaseException as e:  # noqa: BLE001
        out.put(f"{type(e).__name__}: {e}")


@pytest.mark.skipif(mp.fcntl is None, reason="the lock is POSIX-only (fcntl)")
def test_concurrent_writer_processes_never_lose_an_attempt(tmp_path):
    path = tmp_path / "missions.json"
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(path), w, out)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    errors = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert errors == [None] * WRITERS
    data = json.loads(path.read_text(encoding="utf-8"))
    runs = {k: e["attempts"] for k, e in data["missions"].items()}
    assert runs == {"1": WRITERS * ATTEMPTS // 2, "2": WRITERS * ATTEMPTS // 2, "3": 0}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["missions.json", "missions.json.lock"]


def test_a_cut_short_file_keeps_the_records_still_readable(tmp_path, capsys):
    path = tmp_path / "missions.json"
    mp.commit_prediction(1, {"cause": "kv-too-small"}, path=path)
    mp.commit_prediction(4, {"band": (0.05, 0.1)}, path=path)      # on mission 4's grid
    whole = path.read_text(encoding="utf-8")
    path.write_text(whole[: whole.index('"4"') + 20], encoding="utf-8")   # a torn write
    data = mp.load(path)
    assert sorted(data["missions"]) == ["1"]
    assert data["missions"]["1"]["prediction"] == {"cause": "kv-too-small"}
    err = capsys.readouterr().err.splitlines()
    aside = [p for p in tmp_path.iterdir() if ".bad-" in p.name]
    assert len(err) == 1 and len(aside) == 1 and str(aside[0]) in err[0]
    assert "kept mission(s) 1" in err[0]
    assert json.loads(path.read_text(encoding="utf-8")) == data     # rebuilt on disk
    assert mp.load(path) == data and capsys.readouterr().err == ""  # and read quietly after


@pytest.mark.parametrize("content", [b'{"version": 7, "missions": {}}',
                                     b'{"version": 2, "name": null, "missions": {"1": {"att',
                                     b'{"version": 2, "missions": [1, 2]}'])
def test_a_damaged_progress_file_is_kept_beside_never_wiped(tmp_path, capsys, content):
    """kvsim's own file, of another version or cut short: a copy is kept beside it (a new
    file), the progress starts again from what is readable, and it goes on."""
    path = tmp_path / "missions.json"
    path.write_bytes(content)
    assert mp.load(path)["missions"] == {}
    (aside,) = [p for p in tmp_path.iterdir() if ".bad-" in p.name]
    assert aside.read_bytes() == content
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and str(aside) in err and "kept a copy" in err
    mp.commit_prediction(2, {"cause": "swap-link"}, path=path)       # and progress goes on
    assert mp.load(path)["missions"]["2"]["prediction_counts"] is True
    assert aside.read_bytes() == content                             # the copy stays


@pytest.mark.parametrize("content", [b"\xff\xfe\x00binary", b"[1, 2]", b"my thesis, chapter 1\n",
                                     b'{"format": "kvsim-missions-export", "missions": 1}'])
def test_another_programs_file_is_refused_and_left_as_it_is(tmp_path, capsys, content):
    """A mistyped --progress-file pointing at somebody else's file: one line, and the file
    is neither moved, renamed, copied nor written (issue 30)."""
    path = tmp_path / "thesis.txt"
    path.write_bytes(content)
    for call in (lambda: mp.load(path), lambda: mp.commit_prediction(2, {"cause": "swap-link"},
                                                                      path=path),
                 lambda: mp.reset(path), lambda: mp.set_name("Ana", path=path)):
        with pytest.raises(KvsimError) as info:
            call()
        msg = str(info.value)
        assert "\n" not in msg and "is not a kvsim progress file" in msg and str(path) in msg
        assert "nothing was" in msg
    assert path.read_bytes() == content
    assert [p.name for p in tmp_path.iterdir()] == ["thesis.txt"]     # no lock beside it
    assert capsys.readouterr().err == ""


# ------------------------------------------------------------------------------ CLI

def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def one_line(status, out, err, *needles):
    assert status != 0 and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)


def test_verify_exits_non_zero_when_a_code_is_not_confirmed(capsys):
    s = M.expert_settings(1)
    claims_three = mp.completion_code(1, 3, s)              # a right checksum, a false claim
    one_line(*run(capsys, "missions", "--verify", claims_three), "NOT confirmed",
             "claims 3 star(s)", "earn 2 now", claims_three)
    status, out, _ = run(capsys, "missions", "--verify", claims_three, "--json")
    assert status == 1 and json.loads(out)["ok"] is False
    status, out, _ = run(capsys, "missions", "--verify", mp.completion_code(1, 2, s))
    assert status == 0 and "confirmed" in out
    one_line(*run(capsys, "missions", "--verify", "M9/1/0.9/-/Ana/ABCDE"),
             "'M9/1/0.9/-/Ana/ABCDE'", "mission '9' is not known")
    one_line(*run(capsys, "missions", "--verify", "M1/1/lots/-/Ana/ABCDE"),
             "'M1/1/lots/-/Ana/ABCDE'", "not a number")


def test_leaderboard_refuses_a_file_that_is_not_codes(capsys, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# kvsim\n\nA simulator of a paged KV cache.\n\nSee the book.\n")
    one_line(*run(capsys, "missions", "--leaderboard", str(readme)), "line 3 is not 'name CODE'",
             "(2 such lines in all)", str(readme))
    binary = tmp_path / "codes.bin"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xff")
    one_line(*run(capsys, "missions", "--leaderboard", str(binary)), "not UTF-8 text",
             str(binary))
    with pytest.raises(KvsimError, match="line 2 is not 'name CODE'"):
        mp.leaderboard(["Ana M1/2/0.9/-/Ana/ABCDE", "Bo has no code"])


def test_leaderboard_names_the_line_and_reason_of_every_rejected_code(capsys, tmp_path):
    s = M.expert_settings(1)
    good, false_claim = mp.completion_code(1, 2, s, name="Ana"), mp.completion_code(1, 3, s, name="Bo")
    codes = tmp_path / "codes.txt"
    codes.write_text(f"Ana {good}\n\nBo {false_claim}\nCy M7/1/0.9/-/Cy/ABCDE\n")
    status, out, err = run(capsys, "missions", "--leaderboard", str(codes))
    assert status == 1 and out.splitlines()[1].split()[:3] == ["1", "Ana", "2"]
    lines = err.splitlines()
    assert len(lines) == 2 and "Traceback" not in err
    assert lines[0].startswith("kvsim: rejected: line 3:") and "NOT confirmed" in lines[0]
    assert lines[1].startswith("kvsim: rejected: line 4:") and "mission '7' is not known" in lines[1]
