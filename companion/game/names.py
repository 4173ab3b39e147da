"""Player names: the one check every way into a game (and the starter roll) goes through.

Two names are the same name when a person reads them the same: compared after Unicode
NFKC normalisation (fullwidth "Ａnn" is "Ann"), case folding and the removal of format
characters (zero-width spaces, direction marks), with runs of spaces read as one.

>>> player_names([" Ann ", "Bob"])
('Ann', 'Bob')
>>> player_names(["Ann", "ann"])
Traceback (most recent call last):
...
companion.game.model.GameError: player name 'ann' is given twice
>>> player_names(["Ann", "\\uff21nn"])
Traceback (most recent call last):
...
companion.game.model.GameError: player name 'Ａnn' reads the same as 'Ann'
"""

from __future__ import annotations

import unicodedata
from typing import Sequence

from companion.game.model import MAX_NAME_LENGTH, GameError

# Characters no name holds: control characters (NUL, newlines, escapes), line and paragraph
# separators, and lone surrogates (half of a UTF-16 pair: no character at all, and no text
# encoding can store them).
_REFUSED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


def name_key(name: str) -> str:
    """The name as a person reads it: what two names are compared by."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return " ".join(unicodedata.normalize("NFKC", text.casefold()).split())


def check_name(name: object) -> str:
    """The name stripped of surrounding spaces; GameError when it is not one a scorepad can show."""
    if not isinstance(name, str):
        raise GameError(f"a player's name must be non-empty text, got {name!r}")
    bad = next((c for c in name if unicodedata.category(c) in _REFUSED_CATEGORIES), None)
    if bad is not None:
        what = "a lone surrogate" if unicodedata.category(bad) == "Cs" else "a control character"
        raise GameError(f"a player's name may not hold {what} (U+{ord(bad):04X})")
    name = name.strip()
    if not name_key(name):
        raise GameError(f"a player's name must be non-empty text, got {name!r}")
    if len(name) > MAX_NAME_LENGTH:
        raise GameError(f"name {name[:MAX_NAME_LENGTH]!r}... is longer than {MAX_NAME_LENGTH} characters")
    return name


def player_names(players: Sequence[str]) -> tuple[str, ...]:
    """The names stripped of surrounding spaces; GameError when one is blank, too long, holds a
    character no name holds, or reads the same as another."""
    if isinstance(players, str) or not isinstance(players, Sequence):
        raise GameError("players must be a list of names")
    if not players:
        raise GameError("a game needs at least 1 player")
    names: list[str] = []
    keys: dict[str, str] = {}
    for given in players:
        name = check_name(given)
        key = name_key(name)
        if key in keys:
            if keys[key].casefold() == name.casefold():
                raise GameError(f"player name {name!r} is given twice")
            raise GameError(f"player name {name!r} reads the same as {keys[key]!r}")
        keys[key] = name
        names.append(name)
    return tuple(names)
