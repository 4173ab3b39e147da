"""Player names: the one check every way into a game (and the starter roll) goes through.

>>> player_names([" Ann ", "Bob"])
('Ann', 'Bob')
>>> player_names(["Ann", "ann"])
Traceback (most recent call last):
...
companion.game.model.GameError: player name 'ann' is given twice
"""

from __future__ import annotations

from typing import Sequence

from companion.game.model import MAX_NAME_LENGTH, GameError


def player_names(players: Sequence[str]) -> tuple[str, ...]:
    """The names stripped of surrounding spaces; GameError when one is blank, too long or repeated."""
    if isinstance(players, str) or not isinstance(players, Sequence):
        raise GameError("players must be a list of names")
    if not players:
        raise GameError("a game needs at least 1 player")
    names: list[str] = []
    for name in players:
        if not isinstance(name, str) or not name.strip():
            raise GameError(f"a player's name must be non-empty text, got {name!r}")
        name = name.strip()
        if len(name) > MAX_NAME_LENGTH:
            raise GameError(f"name {name[:MAX_NAME_LENGTH]!r}... is longer than {MAX_NAME_LENGTH} characters")
        # Names that differ only in case would make an ambiguous scorepad.
        if any(name.casefold() == other.casefold() for other in names):
            raise GameError(f"player name {name!r} is given twice")
        names.append(name)
    return tuple(names)
