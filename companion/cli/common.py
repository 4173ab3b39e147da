"""What every subcommand shares: the usage exit status and the one-line error."""

from __future__ import annotations

import sys

EXIT_USAGE = 2  # bad input, as argparse itself exits


def usage_error(command: str, message: str) -> int:
    """Print `companion COMMAND: error: MESSAGE` on stderr; return the usage exit status."""
    print(f"companion {command}: error: {message}", file=sys.stderr)
    return EXIT_USAGE
