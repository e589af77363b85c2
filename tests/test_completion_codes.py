"""Honest completion codes (issue 19, item 5).

A code binds the learner's name; a changed name, setting or star count fails;
a code of the first format (no name) is refused in one line; an instructor's
room key (``$KVSIM_ROOM_KEY``) lets the leaderboard tell codes made with it
from others, and anyone who knows the key can make such codes (the limit the
notes state). Only mission 2 is scored (the cheapest search, cached for the
session); every file lives under ``tmp_path``.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kvsim.cli import main
from kvsim.errors import KvsimError
from kvsim.lab import codes
from kvsim.lab import progress as mp

ROOT = Path(__file__).resolve().parents[1]

TWO = {"preemption_mode": "recompute", "gpu_memory_utilization": 0.80}   # kvsim's least: 2 stars
ONE = {"preemption_mode": "recompute", "gpu_memory_utilization": 0.95}   # passes, more memory
KEY, OTHER_KEY = "room-3-tuesday", "room-5-friday"


pytestmark = pytest.mark.usefixtures("isolated_progress")


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def one_line(status, out, err, *needles, exit_status=2):
    assert status == exit_status and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)


def _with_checksum(body: str, salt: str = "kvsim-missions-v2") -> str:
    """What anyone can compute from the public salt (the checksum is no secret)."""
    digest = hashlib.sha256(f"{salt}|{body}".encode()).digest()
    return f"{body}/{base64.b32encode(digest).decode()[:5]}"


# ------------------------------------------------------------------------- the name

def test_a_code_carries_the_name_it_was_made_with():
    code = mp.completion_code(2, 2, TWO, name="  Ana   López ")
    assert "/Ana_López/" in code and len(code.split("/")) == 6
    v = mp.verify(code)
    assert v["ok"] and v["name"] == "Ana López" and v["rescored"] == 2
    assert v["room"] is None and not v["room_tag"]
    nameless = mp.completion_code(2, 2, TWO)
    assert "/-/-/" in nameless and mp.verify(nameless)["name"] is None


@pytest.mark.parametrize("edit", [
    lambda c: c.replace("/Ana/", "/Bob/"),                        # the name
    lambda c: c.replace("/Ana/", "/ana/"),
    lambda c: c.replace(",0.8/", ",0.9/"),                       # a setting
    lambda c: c.replace("M2/2/", "M2/3/"),                        # the stars
    lambda c: c.replace("/-/Ana/", "/swap-link/Ana/"),            # a prediction added
], ids=["name", "name-case", "settings", "stars", "prediction"])
def test_a_changed_name_setting_star_or_prediction_fails(edit):
    code = mp.completion_code(2, 2, TWO, name="Ana")
    changed = edit(code)
    assert changed != code
    v = mp.verify(changed)
    assert not v["checksum_ok"] and not v["ok"] and v["rescored"] is None
    assert "fails its checksum" in mp.rejection(v)


def test_a_recomputed_checksum_is_caught_only_by_rescoring():
    """The limit the notes state: the checksum is public, so a changed claim with a right
    checksum is caught by re-scoring, and a changed *name* is not caught at all."""
    code = mp.completion_code(2, 2, TWO, name="Ana")
    body = "/".join(code.split("/")[:5])
    more_stars = _with_checksum(body.replace("M2/2/", "M2/3/"))
    v = mp.verify(more_stars)
    assert v["checksum_ok"] and not v["ok"] and v["rescored"] == 2
    assert "NOT confirmed" in mp.rejection(v)
    other_name = _with_checksum(body.replace("/Ana", "/Bob"))
    assert mp.verify(other_name)["ok"] and mp.verify(other_name)["name"] == "Bob"


@pytest.mark.parametrize("name, needle", [
    ("a/b", "has '/'"), ("Ana_Lopez", "has '_'"), ("", "is empty"), ("  ", "is empty"),
    ("x" * 33, "has 33 characters"), ("--", "no letter or digit"), (7, "is not text"),
])
def test_a_bad_name_is_one_line(name, needle):
    with pytest.raises(KvsimError) as info:
        mp.completion_code(2, 2, TWO, name=name)
    text = str(info.value)
    assert needle in text and "1 to 32 letters" in text or "not text" in text
    assert "\n" not in text


# ------------------------------------------------------------------ the first format

def test_a_first_format_code_is_refused_in_one_line(capsys, tmp_path):
    old = _with_checksum("M2/2/recompute,0.8/-", salt="kvsim-missions-v1")
    with pytest.raises(KvsimError, match="first format, which binds no name: refused"):
        mp.verify(old)
    one_line(*run(capsys, "missions", "--verify", old), old, "first format", "binds no name",
             "--name NAME")
    board = tmp_path / "codes.txt"
    board.write_text(f"Ana {old}\n")
    status, out, err = run(capsys, "missions", "--leaderboard", str(board))
    row = out.splitlines()[1].split()
    assert status == 1 and (row[1], row[6]) == ("Ana", "0")     # name, total
    assert err.splitlines() == [f"kvsim: rejected: line 1: completion code {old!r} is in the "
                                f"first format, which binds no name: refused; expected a code "
                                f"of this kvsim (`kvsim missions --name NAME` prints yours), "
                                f"M<mission>/<stars>/<settings>/<prediction>/<name>/<checksum>"
                                f"[/<room tag>]"]


def test_a_first_format_progress_file_is_upgraded_not_lost(tmp_path, capsys):
    old = _with_checksum("M2/2/recompute,0.8/-", salt="kvsim-missions-v1")
    rec = {"attempts": 3, "stars": 2, "settings": TWO, "prediction": None,
           "prediction_counts": False, "code": old}
    path = tmp_path / "missions.json"
    path.write_text(json.dumps({"version": 1, "missions": {"2": rec}}))
    data = mp.load(path)
    assert capsys.readouterr().err == ""                      # an upgrade, not a damaged file
    new = data["missions"]["2"]["code"]
    assert data["version"] == 2 and data["name"] is None and data["missions"]["2"]["stars"] == 2
    assert new == mp.completion_code(2, 2, TWO) and mp.verify(new)["ok"]
    assert json.loads(path.read_text()) == data              # written back upgraded
    # an old code whose checksum is wrong is not upgraded: that record is damaged
    path.write_text(json.dumps({"version": 1, "missions": {"2": dict(rec, code=old[:-1] + "Z"
                                                                     if old[-1] != "Z" else
                                                                     old[:-1] + "Y")}}))
    assert mp.load(path)["missions"] == {}
    assert "damaged record(s) for mission 2" in capsys.readouterr().err


# ------------------------------------------------------------- set_name and --name

def test_set_name_makes_every_stored_code_again(tmp_path, capsys):
    pf = tmp_path / "p.json"
    mp.commit_prediction(2, {"cause": "swap-link"}, path=pf)
    assert mp.attempt(2, TWO, path=pf).stars == 3
    before = mp.load(pf)["missions"]["2"]["code"]
    assert mp.verify(before)["name"] is None and "no name yet" in mp.progress_text(pf)
    assert mp.set_name("Ana Lopez", path=pf) == ("name 'Ana Lopez': 1 completion code(s) made "
                                                 "again with it (no room tag: $KVSIM_ROOM_KEY "
                                                 "is not set)")
    after = mp.load(pf)["missions"]["2"]["code"]
    v = mp.verify(after)
    assert v["ok"] and v["name"] == "Ana Lopez" and v["stars"] == 3
    assert v["prediction"] == {"cause": "swap-link"}          # the prediction it was scored with
    assert mp.attempt(2, ONE, path=pf).stars == 1            # a later code keeps the name
    status, out, _ = run(capsys, "missions", "--name", "Bo", "--progress-file", str(pf))
    assert status == 0 and out.splitlines()[1] == "name 'Bo' (in every completion code)"
    assert mp.verify(mp.load(pf)["missions"]["2"]["code"])["name"] == "Bo"
    one_line(*run(capsys, "missions", "--name", "Bo/Ana", "--progress-file", str(pf)),
             "name='Bo/Ana'", "has '/'")
    assert mp.load(pf)["name"] == "Bo"                       # a refused name changes nothing


def test_an_export_carries_the_name_and_an_unnamed_file_takes_it(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    mp.set_name("Ana", path=a)
    mp.attempt(2, TWO, path=a)
    out = mp.export_progress(tmp_path / "x.json", path=a)
    assert mp.import_progress(out, path=b)[2] == "imported"
    assert mp.load(b)["name"] == "Ana"
    assert mp.verify(mp.load(b)["missions"]["2"]["code"])["name"] == "Ana"


# ---------------------------------------------------------------- the leaderboard

def test_the_leaderboard_uses_the_name_in_the_code(capsys, tmp_path):
    ana, bo = (mp.completion_code(2, 2, TWO, name="Ana"), mp.completion_code(2, 1, ONE, name="Bo"))
    nameless = mp.completion_code(2, 2, TWO)
    board = tmp_path / "codes.txt"
    board.write_text(f"{ana}\nBo: {bo}\nBo {ana}\nCy {nameless}\n")
    status, out, err = run(capsys, "missions", "--leaderboard", str(board))
    rows = [line.split() for line in out.splitlines()[1:]]
    assert status == 1
    assert [(r[1], r[6]) for r in rows] == [("Ana", "2"), ("Bo", "1"), ("Cy", "0")]  # totals
    assert err.splitlines() == [
        f"kvsim: rejected: line 3: completion code {ana!r} was made for 'Ana', not 'Bo': a "
        f"code's name cannot be changed",
        f"kvsim: rejected: line 4: completion code {nameless!r} carries no name: the learner "
        f"runs `kvsim missions --name NAME` and hands in the code it prints"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_leaderboard_reports_progress_per_code_on_a_terminal_only(capsys, tmp_path,
                                                                      monkeypatch):
    ana, bo = (mp.completion_code(2, 2, TWO, name="Ana"), mp.completion_code(2, 1, ONE, name="Bo"))
    steps: list[str] = []
    rows = mp.leaderboard(["# the room", ana, f"Bo {bo}"], progress=steps.append)
    assert steps == ["code 1 of 2", "code 2 of 2"] and len(rows) == 2
    board = tmp_path / "codes.txt"
    board.write_text(f"{ana}\nBo {bo}\n")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["missions", "--leaderboard", str(board)]) == 0
    assert "\rkvsim missions: code 2 of 2" in terminal.getvalue()
    assert terminal.getvalue().endswith("\r")                       # erased before the table
    table = capsys.readouterr().out
    quiet = _Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    assert main(["missions", "--leaderboard", str(board), "--quiet"]) == 0
    assert quiet.getvalue() == "" and capsys.readouterr().out == table


def test_the_leaderboard_takes_the_name_as_the_code_prints_it():
    """A code carries 'Ana Lopez' as Ana_Lopez; a teacher who copies that into the line's name
    gets the learner's row, not a rejection (issue 29)."""
    code = mp.completion_code(2, 2, TWO, name="Ana Lopez")
    assert "/Ana_Lopez/" in code
    for line in (f"Ana_Lopez {code}", f"ana lopez: {code}", f"Ana  Lopez {code}"):
        (row,) = mp.leaderboard([line])
        assert (row["name"], row["total"], row["rejected"]) == ("Ana Lopez", 2, []), line
    (row,) = mp.leaderboard([f"Ana_Lopes {code}"])            # another name is still refused
    assert row["total"] == 0 and "was made for 'Ana Lopez', not 'Ana_Lopes'" in row["why"][0]


def test_the_books_example_code_is_a_real_one_star_code_and_never_the_answer():
    import re
    from pathlib import Path

    from kvsim.lab import missions
    code = codes.example_code(1)
    v = mp.verify(code)
    assert v["ok"] and v["stars"] == 1 and v["name"] == "Ana Lopez"
    assert v["settings"] != missions.expert_settings(1)
    # the pages that show a code take it from kvsim: no typed code is left on them
    root = Path(__file__).resolve().parents[1]
    for page in ("book/lab-hub.md", "book/instructor-notes/ch05.md"):
        text = (root / page).read_text(encoding="utf-8")
        assert "{example-code}`1`" in text, page
        assert not re.search(r"`M[1-4]/[0-3]/", text), page


def test_a_code_made_before_a_mission_gained_a_lever_reads_it_at_its_start_value():
    """Missions 1 and 3 gained max_num_seqs (issue 29); a learner's code from before has one
    value fewer and still verifies, re-scored with the lever where its run had it."""
    body = "M1/1/0.95/-/Ana"                               # as kvsim wrote it before the lever
    old = f"{body}/{codes._checksum(body)}"
    v = mp.verify(old)
    assert v["ok"] and v["stars"] == 1
    assert v["settings"] == {"gpu_memory_utilization": 0.95, "max_num_seqs": 256}
    with pytest.raises(KvsimError, match="setting"):
        mp.verify("M1/1/0.95,256,7/-/Ana/ABCDE")           # one value too many is still refused


# ------------------------------------------------------------------- the room key

def test_without_a_room_key_every_confirmed_code_counts():
    roomed = mp.completion_code(2, 2, TWO, name="Ana", room_key=KEY)
    plain = mp.completion_code(2, 1, ONE, name="Bo")
    assert len(roomed.split("/")) == 7 and roomed.startswith(plain.split("/")[0])
    v = mp.verify(roomed)
    assert v["ok"] and v["room_tag"] and v["room"] is None     # the tag cannot be checked
    rows = mp.leaderboard([roomed, plain])
    assert [(r["name"], r["total"], r["rejected"]) for r in rows] == [("Ana", 2, []),
                                                                    ("Bo", 1, [])]


def test_with_a_room_key_only_codes_made_with_it_count(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv(codes.ROOM_KEY_VAR, KEY)
    in_room = mp.completion_code(2, 2, TWO, name="Ana")          # made with $KVSIM_ROOM_KEY
    assert mp.verify(in_room)["room"] is True
    at_home = mp.completion_code(2, 2, TWO, name="Bo", room_key=None)
    elsewhere = mp.completion_code(2, 2, TWO, name="Cy", room_key=OTHER_KEY)
    moved = in_room.rsplit("/", 1)[0].replace("/Ana/", "/Di/")   # tag dropped, name changed
    moved = _with_checksum("/".join(moved.split("/")[:5]))
    stolen_tag = f"{moved}/{in_room.rsplit('/', 1)[1]}"          # Ana's tag on Di's code
    board = tmp_path / "codes.txt"
    board.write_text(f"{in_room}\n{at_home}\n{elsewhere}\n{stolen_tag}\n")
    status, out, err = run(capsys, "missions", "--leaderboard", str(board))
    assert status == 1
    lines = out.splitlines()
    assert lines[1].split()[1:7] == ["Ana", "0", "2", "0", "0", "2"] and len(lines) == 6
    assert lines[-1] == "($KVSIM_ROOM_KEY is set: only codes made with this room's key count)"
    assert sorted(r.split()[1] for r in lines[2:5]) == ["Bo", "Cy", "Di"]
    assert all(r.split()[6] == "0" for r in lines[2:5])
    why = err.splitlines()
    assert len(why) == 3
    assert why[0].endswith("was not made with this room's key ($KVSIM_ROOM_KEY): it was made "
                           "without a room key") and "line 2" in why[0]
    assert why[1].endswith("it was made with another room's key") and "line 3" in why[1]
    assert why[2].endswith("it was made with another room's key") and "line 4" in why[2]
    # --verify checks the tag too, and exits non-zero in one line
    status, out, _ = run(capsys, "missions", "--verify", in_room)
    assert status == 0 and "made for 'Ana'; made with this room's key" in out
    one_line(*run(capsys, "missions", "--verify", at_home), "not made with this room's key")
    status, out, _ = run(capsys, "missions", "--verify", at_home, "--json")
    assert status == 1 and json.loads(out)["room"] is False


def test_anyone_who_knows_the_room_key_can_make_a_code_with_it():
    """The room key's limit, as the notes state it: it proves the key, not the player."""
    forged = codes.completion_code(2, 2, TWO, name="Anyone", room_key=KEY)
    v = mp.verify(forged, room_key=KEY)
    assert v["ok"] and v["room"] is True


def test_the_room_tag_without_the_key_is_not_checked_on_verify(capsys):
    roomed = mp.completion_code(2, 2, TWO, name="Ana", room_key=KEY)
    status, out, _ = run(capsys, "missions", "--verify", roomed)
    assert status == 0 and "room tag not checked ($KVSIM_ROOM_KEY is not set)" in out
    status, out, _ = run(capsys, "missions", "--verify", mp.completion_code(2, 2, TWO, name="A"))
    assert status == 0 and out.rstrip().endswith("made for 'A'; no room tag")


def test_set_name_in_the_room_adds_the_tag(tmp_path, monkeypatch):
    pf = tmp_path / "p.json"
    mp.attempt(2, TWO, path=pf)
    monkeypatch.setenv(codes.ROOM_KEY_VAR, KEY)
    assert mp.set_name("Ana", path=pf).endswith("and the room tag of $KVSIM_ROOM_KEY")
    code = mp.load(pf)["missions"]["2"]["code"]
    assert mp.verify(code)["room"] is True
    monkeypatch.setenv(codes.ROOM_KEY_VAR, OTHER_KEY)
    assert mp.verify(code)["room"] is False and not mp.verify(code)["ok"]


# ------------------------------------------------------ issue 30: look-alike names

#: Names the two checks must judge alike: one script, the allowed mixtures, look-alikes.
NAMES = ["Ana Lopez", "Аna Lopez", "Аня", "  Zoë   O'Brien-Smith ", "李雷", "山田 太郎",
         "ヤマダ タロウ", "ラーメン Ana", "김민준", "Ｆｕｌｌ Ｗｉｄｔｈ", "ΑΒΓ", "ΑBC", "J. R. 2",
         "Ali ١٢", "علي ١٢", "Ǆemal", "Ana Lópeʐ", "Jürgen Ωmega", "x1", "Ana_Lopez", ""]


def test_a_name_that_mixes_scripts_is_refused_and_full_width_is_read_plain():
    assert mp.check_name("Ｆｕｌｌ Ｗｉｄｔｈ") == "Full Width"          # NFKC
    for name in ("Аna", "ΑBC", "Jürgen Ωmega", "Ali ١٢"):
        with pytest.raises(KvsimError, match="mixes the letters of"):
            mp.check_name(name)
    for name in ("Аня", "ΑΒΓ", "山田 太郎", "ラーメン Ana", "علي ١٢", "Zoë O'Brien-Smith"):
        assert mp.check_name(name) == name


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_sites_check_name_judges_every_name_as_kvsim_does(tmp_path):
    """book/_ext/static/kvbook/lab.js's checkName, run under Node, gives the same name (or
    refuses) for every name of the table as kvsim.lab.codes.check_name."""
    source = (ROOT / "book" / "_ext" / "static" / "kvbook" / "lab.js").read_text()
    start, end = source.index("  var SCRIPTS = ["), source.index("  function cryptoOk")
    py = []
    for name in NAMES:
        try:
            py.append(mp.check_name(name))
        except KvsimError:
            py.append(None)
    script = tmp_path / "names.js"
    script.write_text("const data = () => null;\n" + source[start:end]
                      + "\nconst names = JSON.parse(process.argv[2]);\n"
                        "console.log(JSON.stringify(names.map(n => checkName(n)[0])));\n")
    out = subprocess.run(["node", str(script), json.dumps(NAMES)], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    assert json.loads(out) == py
    assert py.count(None) >= 5                            # the table has refusals to agree on
