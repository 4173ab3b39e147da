"""`companion replay LOG.json...`: replay game logs and print each final scorepad as one JSON line."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from companion.cli.common import read_file
from companion.game import Game, GameError

EXIT_ILLEGAL = 2
MAX_LOG_BYTES = 10 * 1024 * 1024  # a real game log is a few kilobytes

EPILOG = """\
A log is a JSON object:
  {"players": ["Ann", "Bob"], "mode": "standard",
   "turns": [{"player": "Ann", "dice": ["10g", "10r", "10o", "10b", "9r", "8r", "Wr", "Wb", "Wg", "Wr"]},
             {"player": "Bob", "dice": ["1b", "1r", "3r", "3b", "5o", "5r", "7b", "7g", "9r", "9g"]}]}
players in turn order, mode "standard" (default) or "solitaire", one turn per attempt
(the final dice of a turn). An optional "rules": {"natural_in_every_group": true} sets the house rule.
The scorepad's own game JSON (its "Game file", GET /api/games/ID) is read too: its "attempts"
are the turns.

Each log prints one line: {"players": [{"name", "phase", "phases", "five_phase_bonus",
"first_finish_bonus", "failures", "penalty", "total"}], "over", "winners", "next"}.
An illegal log stops the command with status 2 and one line on stderr naming the file
and the offending turn, e.g. "companion replay: game.json: turns[3]: it is Bob's turn, not Ann's".

examples:
  companion replay game.json
  companion replay monday.json tuesday.json
  companion replay - < game.json
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="replay game logs and print their scorepads",
        description="Replay each game log through the rules and print its scorepad, one JSON object per line.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("logs", nargs="+", metavar="LOG.json", help="a game log; '-' reads standard input")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for path in args.logs:
        try:
            game = Game.from_json(_load(path))
        except GameError as exc:
            print(f"companion replay: {path}: {exc}", file=sys.stderr)
            return EXIT_ILLEGAL
        print(json.dumps(game.scorepad().to_json()), flush=True)
    return 0


def _load(path: str) -> Any:
    """The log's JSON; anything unreadable becomes a GameError that says why."""
    try:
        if path == "-":
            raw = sys.stdin.buffer.read(MAX_LOG_BYTES + 1)
        else:
            raw = read_file(path, MAX_LOG_BYTES)
    except OSError as exc:
        raise GameError(f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_LOG_BYTES:
        raise GameError(f"larger than {MAX_LOG_BYTES // (1024 * 1024)} MiB: not a game log")
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise GameError("not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise GameError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise GameError("not a game log: JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise GameError(f"not a game log: {str(exc).split(':')[0].lower()}") from None
