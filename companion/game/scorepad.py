"""The scorepad: a read-only snapshot of every player's line and who plays next."""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass

from companion.game.table import Seat


@dataclass(frozen=True, slots=True)
class PlayerScore:
    name: str
    phase: int  # the phase the player is on; 11 once all ten are made
    phases: tuple[int | None, ...]  # the score of each phase, None while not made
    five_phase_bonus: int
    first_finish_bonus: int
    failures: int
    penalty: int  # 0 or less (solitaire only)
    total: int

    @classmethod
    def of(cls, seat: Seat) -> "PlayerScore":
        return cls(
            name=seat.name,
            phase=seat.phase,
            phases=tuple(seat.scores),
            five_phase_bonus=seat.five_phase_bonus,
            first_finish_bonus=seat.first_finish_bonus,
            failures=seat.failures,
            penalty=seat.penalty,
            total=seat.total,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "phase": self.phase,
            "phases": list(self.phases),
            "five_phase_bonus": self.five_phase_bonus,
            "first_finish_bonus": self.first_finish_bonus,
            "failures": self.failures,
            "penalty": self.penalty,
            "total": self.total,
        }


@dataclass(frozen=True, slots=True)
class Scorepad:
    players: tuple[PlayerScore, ...]
    over: bool
    winners: tuple[str, ...]  # empty until the game is over
    next: str | None  # whose attempt is next; None once over

    def player(self, name: str) -> PlayerScore:
        for line in self.players:
            if line.name == name:
                return line
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        return {
            "players": [p.to_json() for p in self.players],
            "over": self.over,
            "winners": list(self.winners),
            "next": self.next,
        }
