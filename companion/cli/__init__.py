"""The `companion` command: one module per subcommand, each a thin wrapper over the core.

Each subcommand module defines ``register(subparsers)`` that adds its parser and sets
``func`` to a callable taking the parsed arguments and returning the exit status.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from companion import __version__
from companion.cli.common import EXIT_USAGE

# Order is the order shown by --help.
SUBCOMMANDS = ("score", "advise", "replay", "read", "learn", "serve", "export_corrections")



def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion",
        description="Phase 10 Dice companion: score phases, read dice from photos, keep the scorepad.",
        epilog="Run 'companion COMMAND --help' for each command's options and examples.",
    )
    parser.add_argument("--version", action="version", version=f"companion {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"companion.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
