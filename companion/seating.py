"""Who starts: each player rolls one high die; the highest starts, the rest keep their seats.

Pure rule code (no I/O). Play goes round the table in seating order from the starter, so the
turn order is the seating order rotated. When several players share the highest roll, only
they roll again (`tied` names them); the others' rolls no longer matter. The names are the
game's (`companion.game.player_names`): stripped, none blank, too long or given twice.

>>> first_player(["Ann", "Bob", "Cid"], [7, 10, 9])
FirstPlayer(order=('Bob', 'Cid', 'Ann'), tied=())
>>> first_player(["Ann", "Bob", "Cid"], [10, 10, 9]).tied
('Ann', 'Bob')
>>> first_player(["Ann", " ann"], [7, 9])
Traceback (most recent call last):
...
companion.seating.SeatingError: player name 'ann' is given twice
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from companion.dice import HIGH_VALUES
from companion.game import GameError, player_names

_HIGH_RANGE = f"{min(HIGH_VALUES)}..{max(HIGH_VALUES)}"


class SeatingError(ValueError):
    """Rolls that cannot decide: wrong count, a value no high die shows, or names no game takes."""


@dataclass(frozen=True, slots=True)
class FirstPlayer:
    """`order` is the turn order when the rolls decided; otherwise `tied` must roll again."""

    order: tuple[str, ...] | None
    tied: tuple[str, ...]

    def to_json(self) -> dict:
        return {"order": None if self.order is None else list(self.order), "tied": list(self.tied)}


def first_player(seating: Sequence[str], rolls: Sequence[int]) -> FirstPlayer:
    """Decide the starter from one high-die roll per player, given in seating order."""
    if len(seating) != len(rolls):
        raise SeatingError(f"one roll per player: {len(seating)} players, {len(rolls)} rolls")
    if not seating:
        raise SeatingError("no players")
    try:
        seating = player_names(seating)
    except GameError as exc:
        raise SeatingError(str(exc)) from None
    for name, value in zip(seating, rolls):
        if isinstance(value, bool) or not isinstance(value, int) or value not in HIGH_VALUES:
            raise SeatingError(f"{name}'s roll {value!r} is not a high die ({_HIGH_RANGE})")
    best = max(rolls)
    top = [i for i, value in enumerate(rolls) if value == best]
    if len(top) > 1:
        return FirstPlayer(None, tuple(seating[i] for i in top))
    start = top[0]
    return FirstPlayer(tuple(seating[start:]) + tuple(seating[:start]), ())
