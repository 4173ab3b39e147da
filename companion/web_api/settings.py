"""The server's settings and limits: one frozen object, made once by `create_app`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

# The names a browser on this machine reaches the server by. A DNS-rebinding page reaches
# it by its own name instead, so any other Host is refused.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

MAX_PHOTO_BYTES = 25 * 1024 * 1024  # one photo upload (the multipart framing gets 1 MB more)
MAX_FRAME_BYTES = 1024 * 1024  # one frame of the live view (a 640-px JPEG is about 60 KB)
MAX_HELD_BYTES = 4 * 1024 * 1024  # a live view's photo, held until kept (the page sends it at photo_long_side)
MAX_JSON_BYTES = 64 * 1024  # a JSON request: a game of 8 players' names is under 1 KB
MAX_LIST_ITEMS = 64  # players or rolls in a request (a roll's dice have the set's own bound)
MAX_STREAMS = 128  # live-update streams open at once: a table's phones, many times over
# Guessing the join code (32^8 = 2^40 codes) at 10 wrong codes a minute takes one client about
# 100,000 years on average
JOIN_TRIES = 10
JOIN_WINDOW_S = 60.0


def cores() -> int:
    """The CPU cores this process may run on (its affinity, not the machine's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """What `companion serve` (or a test) decides about one server."""

    join_code: str | None = None  # LAN mode: every request must carry it
    hosts: tuple[str, ...] = LOOPBACK_HOSTS  # the Host names served (LAN mode adds its addresses)
    keepalive_s: float = 15.0  # a comment on every idle live stream this often
    # Open live streams at once; each holds a worker thread, and make_server adds this many
    # threads to the request workers, so streams can never starve requests.
    max_streams: int = MAX_STREAMS
    # How often an idle stream checks that its client is still there (the server tells).
    disconnect_poll_s: float = 1.0
    photo_reads: int = field(default_factory=cores)  # photos decoded and read at once
    # LAN mode: a client that tried this many different wrong join codes within the window waits
    join_tries: int = JOIN_TRIES
    join_window_s: float = JOIN_WINDOW_S

    @property
    def lan(self) -> bool:
        return self.join_code is not None


@dataclass(frozen=True, slots=True)
class LiveSettings:
    """The live view's frames: what the page sends (through /api/info) and how they are read."""

    frame_long_side: int = 640  # the page scales each frame to this long side
    max_fps: float = 4.0  # the most frames a page sends a second (one at a time), while the dice settle
    idle_fps: float = 1.0  # ... while they move, or lie as last read: only to keep the view's overlay current


LIVE = LiveSettings()
