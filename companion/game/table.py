"""The state machine of a game, fed with evaluated attempts.

It never evaluates dice itself: it is told whether the phase was made and what it scored
(by the evaluator, through `Game`), and keeps the turn order, the scorepad and the bonuses.
Replaying the same attempts always gives the same table, which is how undo works.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from companion.game.model import (
    BONUS,
    FINISHED,
    FIVE_PHASE_BONUS_PHASE,
    FIVE_PHASE_THRESHOLD,
    SOLITAIRE_MISS_PENALTY,
    Mode,
    Stage,
)
from companion.rules.phases import PHASE_COUNT


@dataclass(slots=True)
class Seat:
    """One player's running scorepad."""

    name: str
    phase: int = 1
    scores: list[int | None] = field(default_factory=lambda: [None] * PHASE_COUNT)
    failures: int = 0
    misses_on_phase_10: int = 0
    five_phase_bonus: int = 0
    first_finish_bonus: int = 0
    penalty: int = 0

    @property
    def total(self) -> int:
        phases = sum(s for s in self.scores if s is not None)
        return phases + self.five_phase_bonus + self.first_finish_bonus + self.penalty


def _five_phase_total(seat: Seat) -> int:
    return sum(s or 0 for s in seat.scores[:FIVE_PHASE_BONUS_PHASE])


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt changed, beyond the phase score itself."""

    five_phase_bonus: int = 0
    first_finish_bonus: int = 0
    penalty: int = 0
    last_chance: bool = False


@dataclass(slots=True)
class Table:
    mode: Mode
    seats: list[Seat]
    stage: Stage = Stage.NORMAL
    turn: int = 0  # the seat to play during normal play
    # Seats still owed a last chance, the one playing first. Filled when normal play ends.
    last_chances: list[int] = field(default_factory=list)
    # Seats that were on Phase 10, after the first finisher, when normal play ended.
    finish_bonus_seats: set[int] = field(default_factory=set)

    @classmethod
    def new(cls, names: list[str], mode: Mode) -> "Table":
        return cls(mode, [Seat(n) for n in names])

    @property
    def next_seat(self) -> int | None:
        if self.stage is Stage.OVER:
            return None
        if self.stage is Stage.LAST_CHANCES:
            return self.last_chances[0]
        return self.turn

    def apply(self, seat_index: int, made: bool, score: int | None) -> Outcome:
        """Record the attempt of the seat whose turn it is (the caller checked that)."""
        seat = self.seats[seat_index]
        last_chance = self.stage is Stage.LAST_CHANCES
        if made:
            outcome = self._made(seat_index, score if score is not None else 0, last_chance)
        else:
            outcome = self._missed(seat, last_chance)
        self._advance(seat_index, made, last_chance)
        return outcome

    def _made(self, seat_index: int, score: int, last_chance: bool) -> Outcome:
        seat = self.seats[seat_index]
        phase = seat.phase
        seat.scores[phase - 1] = score
        seat.phase += 1
        five = BONUS if phase == FIVE_PHASE_BONUS_PHASE and _five_phase_total(seat) >= FIVE_PHASE_THRESHOLD else 0
        seat.five_phase_bonus += five
        finish = self._finish_bonus(seat_index, last_chance) if phase == PHASE_COUNT else 0
        seat.first_finish_bonus += finish
        return Outcome(five_phase_bonus=five, first_finish_bonus=finish, last_chance=last_chance)

    def _missed(self, seat: Seat, last_chance: bool) -> Outcome:
        seat.failures += 1
        if seat.phase == PHASE_COUNT:
            seat.misses_on_phase_10 += 1
        penalty = SOLITAIRE_MISS_PENALTY if self.mode is Mode.SOLITAIRE else 0
        seat.penalty += penalty
        return Outcome(penalty=penalty, last_chance=last_chance)

    def _finish_bonus(self, seat_index: int, last_chance: bool) -> int:
        """The +40 for making Phase 10, and the end of normal play when it is the first."""
        if self.mode is Mode.SOLITAIRE:
            return BONUS if self.seats[seat_index].misses_on_phase_10 == 0 else 0
        if last_chance:
            # Only a player who already sat on Phase 10 when normal play ended, seated after
            # the first finisher (they had not yet played that round), earns it again.
            return BONUS if seat_index in self.finish_bonus_seats else 0
        self._end_normal_play(seat_index)
        return BONUS

    def _end_normal_play(self, finisher: int) -> None:
        n = len(self.seats)
        self.last_chances = [(finisher + k) % n for k in range(1, n)]
        self.finish_bonus_seats = {
            i for i in range(finisher + 1, n) if self.seats[i].phase == PHASE_COUNT
        }
        self.stage = Stage.LAST_CHANCES

    def _advance(self, seat_index: int, made: bool, last_chance: bool) -> None:
        seat = self.seats[seat_index]
        if self.mode is Mode.SOLITAIRE:
            if seat.phase == FINISHED:
                self.stage = Stage.OVER
            return
        if not last_chance:
            if self.stage is Stage.NORMAL:
                self.turn = (seat_index + 1) % len(self.seats)
            elif not self.last_chances:  # the first finisher plays alone
                self.stage = Stage.OVER
            return
        # A last chance goes on while the player keeps making phases, up to Phase 10.
        if not made or seat.phase == FINISHED:
            self.last_chances.pop(0)
        if not self.last_chances:
            self.stage = Stage.OVER
