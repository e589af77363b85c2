"""``kvsim missions``: the lab's progress, tickets, completion codes and a room's leaderboard.

Chapter 5's missions keep their progress in a file (``--progress-file``,
``$KVSIM_MISSIONS_FILE`` or ``~/.kvsim/missions.json``); ``--export`` saves it
before a Binder session ends and ``--import`` merges it back, re-scored.
"""
from __future__ import annotations

import argparse
import sys

from kvsim.errors import KvsimError

from .arguments import Subcommands, add_quiet_flag, add_subcommand
from .output import dump, one_line
from .progress import ProgressLine

__all__ = ["add_parser", "run", "LEADERBOARD_MAX_BYTES", "EXAMPLES"]

#: Real command lines, shown at the end of ``kvsim missions --help``.
EXAMPLES = (
    "kvsim missions --ticket 1",
    "kvsim missions --name 'Ada Lovelace'",
    "kvsim missions --export",
)

#: The largest leaderboard file `kvsim missions --leaderboard` reads: 1 MiB (a room of a
#: hundred learners' codes is under 30 KB).
LEADERBOARD_MAX_BYTES = 2**20


def add_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Register ``missions`` and its flags (one action at a time)."""
    parser = add_subcommand(subparsers, "missions", examples=EXAMPLES,
                            help="the lab's missions: progress, tickets, completion codes, a "
                                 "room's leaderboard (chapter 5)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--reset", action="store_true", help="forget all progress")
    action.add_argument("--name", metavar="NAME",
                        help="put your name in every completion code (made again, with the room "
                             "tag when $KVSIM_ROOM_KEY is set); prints the progress")
    action.add_argument("--verify", metavar="CODE", help="check a completion code and re-score "
                        "it (and its room tag when $KVSIM_ROOM_KEY is set)")
    action.add_argument("--leaderboard", metavar="PATH",
                        help="a file of lines 'name CODE': verify every code, print the room's "
                             "table (with $KVSIM_ROOM_KEY set, only codes made with it count)")
    action.add_argument("--ticket", metavar="N", help="print mission N's incident ticket")
    action.add_argument("--export", nargs="?", const="", default=None, metavar="FILE",
                        help="write the progress to FILE (default ./kvsim-missions-export.json) "
                             "to keep it after the session (Binder forgets it); prints the path")
    action.add_argument("--import", dest="import_file", metavar="FILE", default=None,
                        help="merge an --export file into this machine's progress, re-scoring it")
    parser.add_argument("--progress-file", metavar="PATH", default=None,
                        help="the progress file (default $KVSIM_MISSIONS_FILE or "
                             "~/.kvsim/missions.json)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_quiet_flag(parser)
    parser.set_defaults(run=run)
    return parser


def _verify(args: argparse.Namespace) -> str:
    from kvsim.lab import progress as mp
    with ProgressLine("kvsim missions", quiet=args.quiet) as progress:
        progress(f"re-scoring {args.verify}")
        verdict = mp.verify(args.verify)
    if args.json:                 # the whole verdict, and a non-zero status if rejected
        args.exit_status = 0 if verdict["ok"] else 1
        return dump(verdict)
    if not verdict["ok"]:         # bad checksum, another room, not confirmed: one line
        raise KvsimError(mp.rejection(verdict))
    shown = ", ".join(f"{k}={val}" for k, val in verdict["settings"].items())
    who = f"made for {verdict['name']!r}" if verdict["name"] else "made without a name"
    room = ("made with this room's key" if verdict["room"] else
            f"room tag not checked (${mp.ROOM_KEY_VAR} is not set)" if verdict["room_tag"] else
            "no room tag")
    return (f"{verdict['code']}: mission {verdict['mission']}, {verdict['stars']} star(s) "
            f"claimed, confirmed ({shown}); {who}; {room}")


def _leaderboard(args: argparse.Namespace) -> str:
    from kvsim.files import read_text_file
    from kvsim.lab import progress as mp
    where = f"--leaderboard {args.leaderboard!r}"
    text = read_text_file(args.leaderboard, what="--leaderboard",
                          expected="a text file of 'name CODE' lines",
                          max_bytes=LEADERBOARD_MAX_BYTES)
    try:
        with ProgressLine("kvsim missions", quiet=args.quiet) as progress:
            rows = mp.leaderboard(text.splitlines(), progress=progress)
    except KvsimError as e:
        raise KvsimError(f"{where}: {e}") from None
    why: list[str] = []
    for row in rows:
        reasons = row["why"]          # one line per rejected code of this learner
        if isinstance(reasons, list):
            why += [str(reason) for reason in reasons]
    if why:                       # the table still prints; the rejections go to stderr
        args.exit_status = 1
        for reason in why:
            print(f"kvsim: rejected: {one_line(reason)}", file=sys.stderr)
    return dump(rows) if args.json else \
        mp.leaderboard_text(rows, room=mp.resolve_room_key() is not None)


def _import(args: argparse.Namespace) -> str:
    from kvsim.lab import progress as mp
    with ProgressLine("kvsim missions", quiet=args.quiet) as progress:
        summary = mp.import_progress(args.import_file, path=args.progress_file,
                                     progress=progress)
    where = str(mp.progress_path(args.progress_file))
    if args.json:
        return dump({"imported_from": args.import_file, "progress_file": where,
                     "missions": {str(n): v for n, v in summary.items()}})
    now = mp.load(args.progress_file)["missions"]
    lines = []
    for n, v in summary.items():
        record = now.get(str(n))
        lines.append(f"mission {n}: {v} ({record['stars'] if record else 0} star(s) now)")
    return "\n".join(lines + [f"progress in {where} (merged from {args.import_file})"])


def run(args: argparse.Namespace) -> str:
    """The one action asked for, or the progress when none is."""
    from kvsim.lab import progress as mp
    from kvsim.lab.missions import get_mission, ticket

    if args.reset:
        path = mp.reset(args.progress_file)
        return dump({"reset": str(path)}) if args.json else f"progress reset ({path})"
    if args.name is not None:
        told = mp.set_name(args.name, args.progress_file)
        return dump(mp.load(args.progress_file)) if args.json else \
            f"{told}\n{mp.progress_text(args.progress_file)}"
    if args.verify is not None:
        return _verify(args)
    if args.leaderboard is not None:
        return _leaderboard(args)
    if args.ticket is not None:
        mission = get_mission(args.ticket)
        return dump({"mission": mission.number, "ticket": ticket(mission)}) if args.json \
            else ticket(mission)
    if args.export is not None:
        written = mp.export_progress(args.export or None, path=args.progress_file)
        return dump({"exported": written}) if args.json else written
    if args.import_file is not None:
        return _import(args)
    if args.json:
        return dump(mp.load(args.progress_file))
    return mp.progress_text(args.progress_file)
