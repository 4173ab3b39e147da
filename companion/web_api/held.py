"""Live-view photos read in full and held, not yet kept: the page keeps one (by its token) once a
later frame shows that the dice lay still, or lets it go (the next one of its game replaces it).

Reading the photo while the page checks that the dice are still, rather than after, saves a
whole read and an upload between still dice and their chips.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

HELD_GAMES = 16  # games with a photo held at once: the oldest is let go first
HELD_S = 60.0  # a photo not kept within this long is let go


@dataclass(frozen=True)
class HeldPhoto:
    token: str
    data: bytes
    mime: str
    reading: dict[str, Any]
    at: float


class HeldPhotos:
    """At most one held photo per game, `games` games at once."""

    def __init__(self, games: int = HELD_GAMES, hold_s: float = HELD_S):
        self._games, self._hold_s = games, hold_s
        self._held: OrderedDict[str, HeldPhoto] = OrderedDict()
        self._lock = threading.Lock()

    def hold(self, game_id: str, data: bytes, mime: str, reading: dict[str, Any]) -> str:
        token = secrets.token_urlsafe(12)
        with self._lock:
            self._held.pop(game_id, None)
            self._held[game_id] = HeldPhoto(token, data, mime, reading, time.monotonic())
            while len(self._held) > self._games:
                self._held.popitem(last=False)
        return token

    def take(self, game_id: str, token: str) -> HeldPhoto | None:
        """The game's held photo if `token` names it (it is then no longer held)."""
        with self._lock:
            held = self._held.get(game_id)
            if held is None or not secrets.compare_digest(held.token, token):
                return None
            del self._held[game_id]
        return held if time.monotonic() - held.at <= self._hold_s else None
