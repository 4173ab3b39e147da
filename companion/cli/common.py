"""What every subcommand shares: the usage exit status, the one-line error, the house-rule flag."""

from __future__ import annotations

import argparse
import os
import stat
import sys

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
