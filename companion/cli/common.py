"""What every subcommand shares: the usage exit status, the one-line error, the house-rule flag."""

from __future__ import annotations

import argparse
import sys

from companion.rules import HouseRules

EXIT_USAGE = 2  # bad input, as argparse itself exits


def usage_error(command: str, message: str) -> int:
    """Print `companion COMMAND: error: MESSAGE` on stderr; return the usage exit status."""
    print(f"companion {command}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def add_house_rule_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--natural-in-every-group",
        action="store_true",
        help="house rule: a group made only of wilds does not count",
    )


def house_rules(args: argparse.Namespace) -> HouseRules:
    return HouseRules(natural_in_every_group=args.natural_in_every_group)
