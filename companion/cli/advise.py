"""`companion advise`: which dice to keep, with the exact odds, as JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any, Iterable

from companion.advisor import MAX_ROLLS_LEFT, advise
from companion.cli.common import add_house_rule_flags, house_rules, usage_error
from companion.dice import MAX_DICE, TOKEN_HELP, parse_tokens
from companion.rules import HouseRules
from companion.rules.phases import PHASES

DESCRIPTION = f"""\
Advise which dice to keep: for the {MAX_DICE} dice showing and the rolls left in the turn, the keep
that gives the best chance of making the phase, the keep that gives the best expected score,
and what keeping everything (stopping now) gives. Prints one JSON object:
  {{"best":       {{"keep": [indices], "p_complete": float, "expected_score": float}},
   "best_score": {{"keep": [indices], "p_complete": float, "expected_score": float}},
   "keep_all":   {{"keep": [indices], "p_complete": float, "expected_score": float}}}}
keep: indices into the tokens as given (0-based) of the dice to keep; reroll the others.
p_complete: chance of making the phase by the end of the turn, playing the later roll the
same way; expected_score: expected phase score (a miss counts 0).
Tokens: {TOKEN_HELP}. All {MAX_DICE} dice are needed (a turn always rolls every die)."""

EPILOG = """\
examples:
  companion advise --phase 1 --rolls-left 2 1b 2b 3r Wr 5r 6r 7r 8r 9r 10g
  companion advise --phase 8 --rolls-left 1 L1:1b L2:2b L3:3r L4:Wr H1:10g H2:6r H3:7r H4:9r H5:5b H6:8r
  companion advise --phase 10 --rolls-left 1 --natural-in-every-group Wr Wo Wb Wg 5r 5g 5b 9o 9r 10o

Phase 8 figures average over every way the faces can sit on the physical dice; name a die
(H3:7r) to pin it. Phase 8 with 2 rolls left: the chance is exact; expected_score is exact
for playing one colour on the last roll (a lower bound on the best play), and an extra
"expected_score_upper" bounds it from above (see docs/advisor.md).
Bad input: a one-line error on stderr and exit status 2."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "advise",
        help="which dice to keep, with exact odds (JSON)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--phase", metavar="N", help=f"the phase, 1..{len(PHASES)} (required)")
    parser.add_argument(
        "--rolls-left", metavar="K",
        help=f"rolls still to come: {MAX_ROLLS_LEFT} after the first roll, 1 less after each, 0 at the end (required)"
    )
    add_house_rule_flags(parser)
    parser.add_argument("tokens", nargs="*", metavar="TOKEN", help=f"the {MAX_DICE} dice showing, e.g. 7b 10g Wr H3:7r")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rules = house_rules(args)
    if args.phase is None or args.rolls_left is None:
        return usage_error("advise", f"give --phase N, --rolls-left K and the {MAX_DICE} dice tokens "
                                        "(see companion advise --help)")
    try:
        phase = _whole(args.phase, "phase", 1, len(PHASES))
        rolls_left = _whole(args.rolls_left, "rolls left", 0, MAX_ROLLS_LEFT)
        result = advise_roll(phase, rolls_left, args.tokens, rules)
    except ValueError as exc:  # DiceError is a ValueError
        return usage_error("advise", str(exc))
    print(json.dumps(result))
    return 0


def _whole(value: Any, name: str, low: int, high: int) -> int:
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise ValueError(f"{name} must be a whole number {low}..{high}, got {value!r}")
    return int(text)


def advise_roll(phase: int, rolls_left: int, tokens: Iterable[str], rules: HouseRules) -> dict:
    """The JSON object for one decision; ValueError (with the reason) on bad input."""
    return advise(phase, parse_tokens(tokens), rolls_left, rules).to_json()
