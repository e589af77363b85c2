"""Learner copies (kvsim/book/learner.py): what JupyterLab opens answers no Predict box before a guess.

The browser test (test_jupyterlab.py) drives the copies in a real JupyterLab;
these tests check the copies and the kernel side without one:

* each Predict region is the site's (up to the next box, prediction or
  section), and in a copy it shows no output and no number until it runs;
  everything outside the regions is the chapter's own, byte for byte;
* references read as on the site: citations as the built site's author-year
  links say them, equations with the site's numbers, terms as words, other
  chapters as links to their copies;
* the set-up asks for the learner's kernel, the chart library is saved in its
  output, the copy will not look modified on opening, and it is trusted;
* in the kernel, a prediction not yet made holds the run: it says so, the
  cells below show that they wait instead of running, and a guess or a skip
  lets them run; an unglued number reads ``…`` instead of failing;
* the folder a copy is written to holds nothing of anyone else's.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kvsim.book import exercises, learner, notebook
from kvsim.book.learner import BookContext, citation_label, learner_notebook, predict_regions
from kvsim.errors import KvsimError

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
CHAPTERS = learner._chapters(BOOK)
SITE = ROOT / "_build" / "html"


def cells_of(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


@pytest.fixture(scope="module")
def context() -> BookContext:
    return BookContext.from_book(BOOK, CHAPTERS)


@pytest.fixture(scope="module")
def copies(context) -> dict[str, tuple[dict, dict]]:
    """{chapter: (the chapter, its learner copy)} (no chart library: checked on its own)."""
    out = {}
    for path in CHAPTERS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        out[path.stem] = (nb, learner_notebook(nb, context, path.stem))
    return out


def test_every_prediction_has_its_region_ending_where_the_site_ends_it():
    seen = []
    for path in CHAPTERS:
        cells = cells_of(path)
        for pid, region in predict_regions(cells):
            seen.append(pid)
            assert region, f"{path.name}: {pid} is followed by nothing"
            end = region[-1] + 1
            if end < len(cells):
                nxt = source(cells[end])
                assert ("kvbook-predict" in nxt or re.match(r"\s*#{1,3} ", nxt)
                        or "exercises.predict(" in nxt
                        or re.search(r"^#{1,3} ", source(cells[region[-1]]), re.M)), (
                    f"{path.name}: {pid}'s region ends at cell {end}, which opens nothing")
            for j in region[:-1]:
                assert cells[j]["cell_type"] == "code" or not re.search(r"^#{1,3} ", source(cells[j]), re.M), (
                    path.name, pid, j)
    assert sorted(seen) == sorted(exercises.PREDICTIONS), "a prediction with no cell, or a cell with none"


def test_a_copy_blanks_the_regions_and_keeps_everything_else(copies):
    for name, (nb, copy) in copies.items():
        regions = {j for _, region in predict_regions(nb["cells"]) for j in region}
        assert len(copy["cells"]) == len(nb["cells"])
        for j, (old, new) in enumerate(zip(nb["cells"], copy["cells"], strict=True)):
            if j in regions and new["cell_type"] == "code":
                assert new["outputs"] == [] and new["execution_count"] is None, (name, j)
            elif j in regions:
                for saved in new.get("metadata", {}).get("user_expressions", []):
                    assert saved["result"]["data"] == {"text/plain": learner.PLACEHOLDER}, (name, j)
            elif new["cell_type"] == "code" and learner.SETUP_CALL not in source(old):
                assert new["outputs"] == old["outputs"], (name, j)
            elif new["cell_type"] == "markdown":
                assert new.get("metadata", {}).get("user_expressions") == \
                    old.get("metadata", {}).get("user_expressions"), (name, j)
        assert copy["metadata"]["kvbook"]["learner_copy"] is True
        assert copy["metadata"]["language_info"]["version"] == ".".join(map(str, sys.version_info[:3]))
        assert sum(learner.LEARNER_SETUP_CALL in source(c) for c in copy["cells"]) == 1
        assert nb == json.loads((BOOK / f"{name}.ipynb").read_text(encoding="utf-8")), "the chapter changed"


def test_no_raw_reference_is_left_and_each_reads_as_the_site_would(copies, context):
    for name, (_, copy) in copies.items():
        text = "\n".join(source(c) for c in copy["cells"] if c["cell_type"] == "markdown")
        left = re.findall(r"\{(?:cite:p|cite:t|term|eq|doc)\}`", text)
        assert not left, (name, left[:3])
        assert not re.search(r"\$\$[ \t]*\(eq-", text), name
        for label, number in context.equations.items():
            if f"(eq-{label[3:]})" in "\n".join(source(c) for c in copies[name][0]["cells"]):
                assert f"\\tag{{{number}}}" in text, (name, label)
    ch01 = "\n".join(source(c) for c in copies[CHAPTERS[0].stem][1]["cells"])
    assert "(GQA, (Ainslie et al., 2023))" in ch01
    assert "[chapter 2](ch02-admission-and-preemption.ipynb)" in ch01


@pytest.mark.parametrize("fields, label", [
    ({"author": "Kwon, Woosuk and Li, Zhuohan and Stoica, Ion", "year": "2023"}, ("Kwon et al.", "2023")),
    ({"author": "Bonanni, Matthew", "year": "2025"}, ("Bonanni", "2025")),
    ({"author": "Agrawal, Amey and Kedia, Nitin", "year": "2024"}, ("Agrawal and Kedia", "2024")),
    ({"author": "{NVIDIA}", "year": "2025"}, ("NVIDIA", "2025")),
    ({"author": "Goiri, {\\'I}{\\~n}igo", "year": "2024"}, ("Goiri", "2024")),
    ({"author": "{\\'I}{\\~n}igo Goiri", "year": "2024"}, ("Goiri", "2024")),
    ({"title": "KV cache preemption in {vLLM}", "year": "2025"}, ("KV cache preemption in vLLM", "2025")),
    ({"title": "An undated article"}, ("An undated article", "n.d.")),
])
def test_citations_read_author_year(fields, label):
    assert citation_label(fields) == label


@pytest.mark.skipif(not (SITE / "book").is_dir(), reason="no built site (make book)")
def test_citations_and_equation_numbers_are_the_built_sites(context):
    """The built site's own rendering: each cited key's link text, each equation's number."""
    for path in CHAPTERS:
        page = (SITE / "book" / f"{path.stem}.html").read_text(encoding="utf-8")
        for label, number in re.findall(r'id="equation-(eq-[\w-]+)".*?class="eqno">\((\d+)\)', page, re.S):
            assert context.equations[label] == int(number), (path.stem, label)
        md = "\n".join(source(c) for c in cells_of(path) if c["cell_type"] == "markdown")
        shown = {re.sub(r"<[^>]+>", "", t) for t in re.findall(
            r'<a class="reference internal" href="references.html#[^"]+"[^>]*>(.*?)</a>', page)}
        for m in re.finditer(r"\{cite:p\}`([^`]+)`", md):
            for key in m.group(1).split(","):
                who, year = context.citations[key.strip()]
                assert f"{who}, {year}" in shown, (path.stem, key, sorted(shown)[:5])


def test_the_set_up_saves_the_chart_library_for_offline_charts(context):
    nb = json.loads(CHAPTERS[0].read_text(encoding="utf-8"))
    copy = learner_notebook(nb, context, CHAPTERS[0].stem, runtime_js="/* the runtime */")
    setup = next(c for c in copy["cells"] if learner.LEARNER_SETUP_CALL in source(c))
    assert setup["outputs"][0]["data"]["text/html"] == "<script>/* the runtime */</script>"


def test_a_prediction_holds_the_run_until_a_guess(monkeypatch, capsys):
    monkeypatch.delenv(exercises.HOLD_ENV_VAR, raising=False)
    pid = "ch01-predict-gqa"
    try:
        exercises.hold_unmade_predictions(True)
        exercises.predict(pid, None)
        err = capsys.readouterr().err
        assert err.startswith("Waiting for your guess: ") and "\n" not in err.strip()
        assert exercises.waiting_for_guess() == pid
        below = ["x = 1\n", "print(x)\n"]
        note = "".join(notebook._gate(below))
        assert "not_run_note" in note and "x = 1" not in note      # a cell below does not run
        assert notebook._gate(['exercises.predict("ch01-predict-pool", prediction)\n']) == \
            ['exercises.predict("ch01-predict-pool", prediction)\n']
        assert pid in exercises.not_run_note()
        exercises.predict("ch01-predict-pool", None)              # a later one: still the first
        assert exercises.waiting_for_guess() == pid
        capsys.readouterr()
        exercises.predict(pid, "skip")
        out = capsys.readouterr().out
        assert out.startswith("You chose to see the answer without guessing: kvsim shows 128 KiB")
        assert exercises.waiting_for_guess() is None and notebook._gate(below) == below
        exercises.predict(pid, None)
        exercises.predict(pid, 256)
        assert exercises.waiting_for_guess() is None
        assert capsys.readouterr().out.startswith("You predicted 256 KiB; kvsim shows 128 KiB")
        monkeypatch.setenv(exercises.HOLD_ENV_VAR, "0")           # unattended: never holds
        exercises.hold_unmade_predictions(True)
        exercises.predict(pid, None)
        assert exercises.waiting_for_guess() is None
        assert capsys.readouterr().out.startswith("Not predicted yet")
    finally:
        exercises.hold_unmade_predictions(False)


def test_an_unglued_number_reads_as_not_yet_only_in_a_learners_kernel(monkeypatch):
    with pytest.raises(KvsimError, match="no number named"):
        notebook.glued("never_glued:.1f")
    monkeypatch.setattr(notebook, "_learner", True)
    assert notebook.glued("never_glued:.1f") == learner.PLACEHOLDER


def test_copies_go_only_where_nothing_of_anyone_elses_is(tmp_path, monkeypatch):
    monkeypatch.setattr(learner, "_sign", lambda path: True)
    monkeypatch.setattr("kvsim.book.notebook.vega_runtime_js", lambda: "/* runtime */")
    out = tmp_path / "learn"
    written = learner.write_learner_copies(out, book=BOOK)
    assert [p.name for p in written] == [p.name for p in CHAPTERS]
    assert (out / "data").is_dir() and (out / "alerts").is_dir()
    again = learner.write_learner_copies(out, book=BOOK)            # its own copies: rewritten
    assert len(again) == len(written)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.ipynb").write_text("{}")
    (mine / CHAPTERS[0].name).write_text(json.dumps({"cells": [], "metadata": {}}))
    for target, words in [(mine, "not a learner copy"), (BOOK, "the book itself"),
                          (tmp_path / "a-file", "not a folder")]:
        if target.name == "a-file":
            target.write_text("x")
        before = {p: p.read_bytes() for p in target.rglob("*") if p.is_file()} if target.is_dir() else None
        with pytest.raises(KvsimError, match=words) as info:
            learner.write_learner_copies(target, book=BOOK)
        assert "\n" not in str(info.value)
        if before is not None:
            assert {p: p.read_bytes() for p in target.rglob("*") if p.is_file()} == before
    with pytest.raises(KvsimError, match="not a folder"):
        learner.write_learner_copies(out, book=tmp_path / "nowhere")


def test_the_command_says_what_is_wrong_in_one_line(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "kvsim.book.learner", *args], capture_output=True,
                              text=True, cwd=tmp_path, timeout=120)

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    proc = run("mine")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "notes.txt" in proc.stderr
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    proc = run()
    assert proc.returncode == 2 and "give the folder" in proc.stderr
    proc = run("x", "--in-place")
    assert proc.returncode == 2 and "not both" in proc.stderr


def test_shell_lines_for_a_notebook_run_the_kernels_own_kvsim():
    """A `!kvsim ...` line runs whatever `kvsim` the notebook shell's PATH finds (none when the
    kernel's environment is not on it, issue 29); the pages and chapters use the kernel's own
    Python instead: `!{sys.executable} -m kvsim ...`."""
    shell = re.compile(r"^\s*!(?!\[)\s*(\S+)", re.M)        # not an image, ![alt](src)
    found = []
    for page in sorted(BOOK.rglob("*.md")):
        found += [(page.name, m.group(1)) for m in shell.finditer(page.read_text("utf-8"))]
    for chapter in CHAPTERS:
        for cell in cells_of(chapter):
            if cell["cell_type"] == "code":
                found += [(chapter.name, m.group(1)) for m in shell.finditer("".join(cell["source"]))]
    assert found, "no shell line found: the pattern is wrong"
    assert all(cmd == "{sys.executable}" for _, cmd in found), found


@pytest.mark.parametrize("learner, preset, expected", [
    (True, None, "{home}/.cache/kvsim-runs"), (True, "{home}/mine", "{home}/mine"), (False, None, "unset")],
    ids=["learner-default", "learner-keeps-a-set-cache", "book-copy-leaves-it-off"])
def test_a_learner_copy_keeps_its_runs(tmp_path, learner, preset, expected):
    """A learner's kernels keep their runs in ~/.cache/kvsim-runs (chapter 5's grids cost minutes
    of one core once, then are read back), unless KVSIM_RUN_CACHE already names a folder; the
    book's own copies (make execute, nbval) leave the choice to the Makefile."""
    env = {k: v for k, v in os.environ.items() if k != "KVSIM_RUN_CACHE"}
    env["HOME"] = str(tmp_path)
    if preset:
        env["KVSIM_RUN_CACHE"] = preset.format(home=tmp_path)
    code = (f"import os, kvsim.book.notebook as n; n.setup(learner={learner}); "
            "print(os.environ.get('KVSIM_RUN_CACHE', 'unset'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    assert out == expected.format(home=tmp_path)
