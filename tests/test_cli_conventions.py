"""The conventions every ``kvsim`` subcommand keeps (issue 34, item 6).

``--version`` prints kvsim's version everywhere (the flag that picks vLLM's
metric names is ``--vllm-version``); each subcommand's help ends with its own
real examples, each of which parses; long runs draw a progress line on stderr
only on a terminal and never with ``--quiet``; the exporter's default port is
not vLLM's 8000.
"""
from __future__ import annotations

import argparse
import io
import shlex
import sys

import pytest

import kvsim
import kvsim.engine
from kvsim import cli
from kvsim.cli import build_parser, main
from kvsim.cli.progress import ProgressLine, progress_wanted


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


SUBCOMMANDS = sorted(_subcommands())


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_every_subcommand_is_listed():
    assert set(SUBCOMMANDS) == {"capacity", "simulate", "sweep", "plan", "exporter", "lint-rules",
                                "twin", "missions", "scenarios", "models", "gpus"}


@pytest.mark.parametrize("argv", [["--version"]] + [[name, "--version"] for name in SUBCOMMANDS])
def test_version_prints_kvsims_version_everywhere(capsys, argv):
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (f"kvsim {kvsim.__version__}\nengine: {kvsim.engine.build_note()}\n", "")


@pytest.mark.parametrize("command", ["exporter", "lint-rules"])
@pytest.mark.parametrize("form", [["--version", "v1-0.10"], ["--version=v0"]])
def test_the_old_metric_set_flag_is_one_line_not_a_silent_version(capsys, command, form):
    target = ["--scenario", "belgavi"] if command == "exporter" else ["--expr", "up"]
    assert main([command, *target, *form]) == 2
    out, err = capsys.readouterr()
    value = form[-1].split("=")[-1]
    assert out == "" and err.count("\n") == 1
    assert f"expected --vllm-version {value}" in err and "Traceback" not in err


def test_lint_rules_picks_the_metric_set_with_vllm_version(capsys):
    expr = "vllm:gpu_cache_usage_perc > 0.9"               # deprecated on 0.10, gone on v1
    assert main(["lint-rules", "--expr", expr, "--vllm-version", "v1-0.10"]) == 0
    assert "deprecated" in capsys.readouterr().out
    assert main(["lint-rules", "--expr", expr]) == 1                      # the default: v1
    assert "does not exist in vLLM v1 " in capsys.readouterr().out


def _examples(parser: argparse.ArgumentParser) -> list[str]:
    epilog = parser.epilog or ""
    assert "examples:\n" in epilog, parser.prog
    return [line.strip() for line in epilog.split("examples:\n", 1)[1].splitlines()
            if line.strip()]


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_each_subcommands_help_ends_with_its_own_examples_and_they_parse(capsys, name):
    subparser = _subcommands()[name]
    examples = _examples(subparser)
    assert 2 <= len(examples) <= 3, examples
    for line in examples:
        words = shlex.split(line)
        assert words[:2] == ["kvsim", name], line
        args = build_parser().parse_args(words[1:])           # a bad example raises here
        assert args.command == name
    assert main([name, "--help"]) == 0
    assert capsys.readouterr().out.rstrip().endswith(examples[-1])


def test_no_two_subcommands_share_an_epilog():
    epilogs = [p.epilog for p in _subcommands().values()]
    assert len(set(epilogs)) == len(epilogs)


# --- the progress line ---------------------------------------------------------------------

def test_progress_is_drawn_only_on_a_terminal_and_not_when_quiet():
    assert progress_wanted(False, _Terminal()) is True
    assert progress_wanted(True, _Terminal()) is False
    assert progress_wanted(False, io.StringIO()) is False           # a pipe or a file


def test_the_progress_line_redraws_in_place_and_erases_itself():
    stream = _Terminal()
    with ProgressLine("kvsim twin", stream=stream) as line:
        line("fitting the step-time scale (run 1 of 8)")
        line("what-if 2 of 5")
    text = stream.getvalue()
    assert text.startswith("\rkvsim twin: fitting the step-time scale (run 1 of 8)")
    assert "\rkvsim twin: what-if 2 of 5" in text
    assert text.endswith("\r" + " " * len("kvsim twin: fitting the step-time scale (run 1 of 8)")
                         + "\r")
    quiet = _Terminal()
    with ProgressLine("kvsim twin", stream=quiet, quiet=True) as line:
        line("what-if 1 of 5")
    assert quiet.getvalue() == ""


SWEEP = ["sweep", "--scenario", "mission-1-storm", "--grid", "gpu_memory_utilization=0.6,0.7",
         "--set", "duration_s=20"]


def _sweep(monkeypatch, capsys, stderr, *extra):
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main([*SWEEP, *extra]) == 0
    return capsys.readouterr().out


def test_sweep_shows_progress_on_a_terminal_only(monkeypatch, capsys):
    terminal, quiet, piped = _Terminal(), _Terminal(), io.StringIO()
    shown = _sweep(monkeypatch, capsys, terminal)
    assert "2/2 runs" in terminal.getvalue()
    assert _sweep(monkeypatch, capsys, quiet, "--quiet") == shown and quiet.getvalue() == ""
    assert _sweep(monkeypatch, capsys, piped) == shown and piped.getvalue() == ""


# --- the exporter's port -------------------------------------------------------------------

def test_the_exporters_default_port_is_one_number_and_not_vllms():
    from kvsim.cli import exporter as exporter_command
    from kvsim.observe import exporter
    args = build_parser().parse_args(["exporter", "--scenario", "belgavi"])
    assert args.port == exporter_command.DEFAULT_PORT == exporter.DEFAULT_PORT == 9188
    assert "default 9188" in _subcommands()["exporter"].format_help()


def test_the_cli_reexports_what_tests_and_scripts_read():
    assert callable(cli.main) and callable(cli.parse_sets)
    assert cli.LEADERBOARD_MAX_BYTES == 2**20
