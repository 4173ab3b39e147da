"""What every subcommand shares: the usage exit status, the one-line error, the house-rule flag,
the dice reader's flags."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path
from typing import Any

from companion.rules import HouseRules

EXIT_USAGE = 2  # bad input, as argparse itself exits


def usage_error(command: str, message: str) -> int:
    """Print `companion COMMAND: error: MESSAGE` on stderr; return the usage exit status."""
    print(f"companion {command}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def read_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The first `limit` + 1 bytes of a regular file (more than `limit`: too large); OSError (with
    a strerror that says why) for anything else. A FIFO or a device is refused at once: opened without blocking,
    it is never waited on for a writer that may not come."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a folder" if stat.S_ISDIR(info.st_mode) else "a device"
            raise OSError(0, f"it is {kind}, not a file", str(path))
    except OSError:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit + 1)


def add_house_rule_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--natural-in-every-group",
        action="store_true",
        help="house rule: a group made only of wilds does not count",
    )


def house_rules(args: argparse.Namespace) -> HouseRules:
    return HouseRules(natural_in_every_group=args.natural_in_every_group)


def add_reader_flags(parser: argparse.ArgumentParser) -> None:
    """The run-time choices of the dice reader a user may make (the rest: COMPANION_* variables,
    docs/vision.md); each beats its variable."""
    parser.add_argument("--models", metavar="DIR", type=Path, default=None,
                        help="the folder of the dice reader's models: detector.onnx, reader.onnx (or its parts "
                        "reader_part0.onnx, reader_part1.onnx), calibration.json "
                        "(default: $COMPANION_MODELS, else the models the package ships)")
    parser.add_argument("--reader-turns", metavar="N", type=int, choices=range(1, 5), default=None,
                        help="quarter turns of each die the reader votes over, 1..4: fewer is faster and less "
                        "sure (default: $COMPANION_READER_TURNS, else 4)")


def reader_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The ReadSettings fields the reader's flags set (those given)."""
    given = {"models_dir": args.models, "reader_turns": args.reader_turns}
    return {name: value for name, value in given.items() if value is not None}
