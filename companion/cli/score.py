"""`companion score`: the best arrangement of a roll for a phase, as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Iterable, TextIO

from companion.cli.common import add_house_rule_flags, house_rules, usage_error
from companion.dice import TOKEN_HELP, parse_tokens
from companion.rules import HouseRules, evaluate
from companion.rules.phases import PHASES

LINE_KEYS = ("phase", "dice", "natural_in_every_group")

DESCRIPTION = f"""\
Score a roll for a phase: is the phase made, the best score, and which dice form which group.
Prints one JSON object:
  {{"phase": N, "complete": true|false, "score": int|null,
   "groups": [{{"kind": "set"|"run"|"color", "dice": [indices into the tokens],
               "stands_for": [the number each die counts as; null for a wild in a colour group]}}]}}
Tokens: {TOKEN_HELP}."""

EPILOG = """\
examples:
  companion score --phase 1 8r 8b 8g 10o Wr Wg
      {"phase": 1, "complete": true, "score": 34, "groups": [...]}
  companion score --phase 8 2o 4o Wo 5o 8o 9o 10o
  companion score --phase 1 --natural-in-every-group 5r Wb Wg Wo 5b 5g
  companion score --phase 2 H1:5r H2:6r L1:Wr 3b 4g 5g 5b
  printf '%s\\n' '{"phase": 4, "dice": ["1r","2b","3g","4o","5r","6o","Wb"]}' | companion score --jsonl

--jsonl reads one object per line, {"phase": N, "dice": [tokens]} (optionally
"natural_in_every_group": true), and writes one result per line in the same order.
A bad line gives {"error": "line K: ..."} on its own line and the stream goes on;
blank lines are skipped. The exit status is 0 once the input is read.
Bad input in single-roll mode: a one-line error on stderr and exit status 2."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score a roll for a phase (JSON)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--phase", metavar="N", help=f"the phase, 1..{len(PHASES)} (single-roll mode)")
    parser.add_argument("--jsonl", action="store_true", help="read {\"phase\", \"dice\"} lines on stdin")
    add_house_rule_flags(parser)
    parser.add_argument("tokens", nargs="*", metavar="TOKEN", help="the dice, e.g. 7b 10g Wr H3:7r")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rules = house_rules(args)
    if args.jsonl:
        if args.phase is not None or args.tokens:
            return usage_error("score", "--jsonl reads the phase and dice from stdin: give no --phase and no tokens")
        score_stream(sys.stdin.buffer, sys.stdout, rules)
        return 0
    if args.phase is None:
        return usage_error("score", "give --phase N and the dice tokens, or --jsonl (see companion score --help)")
    try:
        phase = int(args.phase) if args.phase.strip().isdigit() else args.phase
        result = score_roll(_phase_number(phase), args.tokens, rules)
    except ValueError as exc:
        return usage_error("score", str(exc))
    print(json.dumps(result))
    return 0



def _phase_number(value: Any) -> int:
    # JSON numbers like 1.0, true and "1" are refused: a phase is a whole number.
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= len(PHASES):
        raise ValueError(f"phase must be a whole number 1..{len(PHASES)}, got {value!r}")
    return value


def score_roll(phase: int, tokens: Iterable[str], rules: HouseRules) -> dict:
    """The single-shot JSON object for one roll; ValueError (with the reason) on bad input."""
    faces = [t.face for t in parse_tokens(tokens)]
    return evaluate(phase, faces, rules).to_json()


def score_line(text: str, rules: HouseRules) -> dict:
    """One --jsonl line to its result object, or {"error": ...} naming the problem."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        return {"error": f"not JSON: {exc}"}
    if not isinstance(data, dict):
        return {"error": 'expected an object like {"phase": 1, "dice": ["8r", "8b", "Wg"]}'}
    unknown = sorted(set(data) - set(LINE_KEYS))
    if unknown:
        return {"error": f"unknown key {unknown[0]!r}: a line has phase, dice and optionally natural_in_every_group"}
    for key in ("phase", "dice"):
        if key not in data:
            return {"error": f"missing {key!r}"}
    dice = data["dice"]
    if not isinstance(dice, list) or not all(isinstance(t, str) for t in dice):
        return {"error": 'dice must be a list of token strings, e.g. ["8r", "Wg"]'}
    strict = data.get("natural_in_every_group", rules.natural_in_every_group)
    if not isinstance(strict, bool):
        return {"error": "natural_in_every_group must be true or false"}
    try:
        return score_roll(_phase_number(data["phase"]), dice, HouseRules(natural_in_every_group=strict))
    except ValueError as exc:
        return {"error": str(exc)}


def score_stream(lines: Iterable[bytes | str], out: TextIO, rules: HouseRules) -> None:
    """Answer each non-blank line in order, flushing so a caller can talk to us line by line."""
    for number, raw in enumerate(lines, start=1):
        result: dict[str, Any] | None
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError:
            text, result = "-", {"error": "not UTF-8 text"}
        else:
            result = None
        if not text.strip():
            continue
        result = result or score_line(text, rules)
        if "error" in result:
            result = {"error": f"line {number}: {result['error']}"}
        out.write(json.dumps(result) + "\n")
        out.flush()
