"""``kvsim twin`` says what it guessed (issue 34, item 4).

On stderr it names the inputs it read from the metrics, those given and those
defaulted; a what-if table that stands on a default is labelled illustrative
and says which; with the model, the pool and the arrival rate all defaulted it
prints no what-ifs (one line, exit 2) unless ``--allow-defaults``; the steps
that take seconds report progress. The shipped real scrapes are the cases:
two of them carry none of the three, one carries the pool.
"""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

import kvsim
from kvsim.cli import main
from kvsim.observe.exposition import exposition
from kvsim.observe.readings import read_scrape_text, since_start
from kvsim.observe.twin import CORE_INPUTS, build_twin, what_ifs

SCRAPES = Path(__file__).resolve().parents[1] / "book" / "data" / "scrapes"
POOL_ONLY = str(SCRAPES / "vllm-0.11.0-issue-28924.prom")              # the pool, nothing else
NOTHING = [str(SCRAPES / "vllm-0.10.0-production-stack-617.prom"),      # neither of the three
           str(SCRAPES / "vllm-0.10-pr-22227-two-engines.prom")]


def _twin(path: str, **kw):
    return build_twin(since_start(read_scrape_text(Path(path).read_text(), path)), **kw)


def _stderr_lines(err: str) -> dict[str, list[str]]:
    """``kvsim twin: <kind>: a, b, c`` lines as {kind: [a, b, c]}."""
    found = {}
    for line in err.splitlines():
        if line.startswith("kvsim twin: "):
            kind, _, items = line[len("kvsim twin: "):].partition(": ")
            found[kind] = items.split(", ")
    return found


@pytest.mark.parametrize("path", NOTHING)
def test_a_twin_of_defaults_prints_no_what_ifs(capsys, path):
    assert _twin(path).mostly_defaults
    assert main(["twin", path]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("kvsim: error: ") and path in err
    for needle in ("the model, the KV pool and the arrival rate are all kvsim's defaults",
                   "--allow-defaults", "--model"):
        assert needle in err
    assert main(["twin", path, "--json"]) == 2                     # JSON too: no table of guesses
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("path", NOTHING)
def test_allow_defaults_prints_them_labelled_illustrative(capsys, path):
    assert main(["twin", path, "--allow-defaults"]) == 0
    out, err = capsys.readouterr()
    table = out.split("\nwhat-ifs (", 1)[1]
    assert "ILLUSTRATIVE: built on kvsim's defaults for model, KV pool, arrival rate" in table
    assert "twin (baseline)" in table
    said = _stderr_lines(err)
    assert set(CORE_INPUTS) <= set(said["defaulted"])
    assert not set(CORE_INPUTS) & set(said["inferred from the metrics"])


def test_the_twin_alone_needs_no_permission(capsys):
    assert main(["twin", NOTHING[0], "--no-what-ifs"]) == 0
    assert "what-ifs (" not in capsys.readouterr().out


def test_one_real_input_is_enough_for_a_table_but_it_stays_illustrative(capsys):
    twin = _twin(POOL_ONLY, fit_scale=False)
    assert not twin.mostly_defaults and twin.illustrative
    assert twin.weak_inputs() == ["model", "arrival rate", "prompt lengths", "output lengths",
                                  "GPU"]
    assert main(["twin", POOL_ONLY]) == 0
    out, err = capsys.readouterr()
    assert ("ILLUSTRATIVE: built on kvsim's defaults for model, arrival rate, prompt lengths, "
            "output lengths, GPU") in out
    said = _stderr_lines(err)
    assert {"KV pool", "block_size", "prefix caching"} <= set(said["inferred from the metrics"])
    assert {"model", "arrival rate", "GPU"} <= set(said["defaulted"])
    assert "given" not in said


def test_a_given_model_is_said_to_be_given(capsys):
    assert main(["twin", NOTHING[0], "--model", "llama-3.1-8b", "--no-what-ifs"]) == 0
    said = _stderr_lines(capsys.readouterr().err)
    assert said["given"] == ["model"]
    assert "model" not in said["defaulted"] and "model" not in said["inferred from the metrics"]
    assert not _twin(NOTHING[0], model="llama-3.1-8b").mostly_defaults


def test_a_twin_read_from_full_metrics_is_not_illustrative(tmp_path, capsys):
    result = kvsim.run_scenario("mission-1-storm")
    scrape = tmp_path / "storm.prom"
    scrape.write_text(exposition(result, result.simulated_s))
    argv = ["twin", str(scrape), "--uptime", str(result.simulated_s), "--no-fit",
            "--duration", "60"]
    assert main([*argv, "--json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["illustrative"] is False and data["weak_inputs"] == []
    assert "step-time scale" in data["defaulted"]                  # --no-fit: said, not hidden
    assert len(data["what_ifs"]) >= 4
    said = _stderr_lines(err)
    assert {"model", "KV pool", "arrival rate", "GPU"} <= set(said["inferred from the metrics"])
    assert main(argv) == 0
    assert "ILLUSTRATIVE" not in capsys.readouterr().out


# --- progress ------------------------------------------------------------------------------

class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_build_twin_and_what_ifs_report_each_step():
    steps: list[str] = []
    twin = _twin(POOL_ONLY, fit_scale=False, progress=steps.append)
    assert steps == ["reading the series", "checking the twin's configuration"]
    steps.clear()
    rows = what_ifs(twin, progress=steps.append)
    assert len(steps) == len(rows) >= 4
    assert steps[0] == f"what-if 1 of {len(rows)}: twin (baseline)"
    assert all(step.startswith(f"what-if {i} of {len(rows)}: ") for i, step in enumerate(steps, 1))


def test_the_fit_reports_its_runs():
    result = kvsim.run_scenario("mission-1-storm")
    window = since_start(read_scrape_text(exposition(result, result.simulated_s), "storm"),
                         uptime_s=result.simulated_s)
    steps: list[str] = []
    twin = build_twin(window, duration_s=60, progress=steps.append)
    fits = [s for s in steps if s.startswith("fitting the step-time scale")]
    assert len(fits) == twin.fit["runs"] >= 1


def test_the_cli_draws_progress_on_a_terminal_and_not_when_quiet(monkeypatch, capsys):
    argv = ["twin", POOL_ONLY, "--duration", "60"]
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(argv) == 0
    drawn = terminal.getvalue()
    assert "\rkvsim twin: reading the series" in drawn and "\rkvsim twin: what-if 5 of 5" in drawn
    report = drawn.rsplit("\r", 1)[1]                  # after the line is erased: the report
    assert report.startswith("kvsim twin: inferred from the metrics: ")
    shown = capsys.readouterr().out
    quiet = _Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    assert main([*argv, "--quiet"]) == 0
    assert "\r" not in quiet.getvalue() and quiet.getvalue().startswith("kvsim twin: inferred")
    assert capsys.readouterr().out == shown
