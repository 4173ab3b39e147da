"""The game's vocabulary: modes, errors, and the record of one attempt."""

from __future__ import annotations

from typing import Any

import enum
from dataclasses import dataclass

from companion.dice import Face
from companion.rules.evaluation import Evaluation
from companion.rules.phases import PHASE_COUNT

FINISHED = PHASE_COUNT + 1  # the "current phase" of a player who has made all ten
BONUS = 40  # both the Five Phase Bonus and the First Finish Bonus
FIVE_PHASE_THRESHOLD = 221
FIVE_PHASE_BONUS_PHASE = 5  # making this phase earns the Five Phase Bonus, on Phases 1..5's total
SOLITAIRE_MISS_PENALTY = -5
MAX_NAME_LENGTH = 30  # a name must fit a scorepad column on a phone


class GameError(ValueError):
    """An action the game must refuse: out of turn, after the end, an unknown player...

    `turn` is the index of the offending attempt when the error comes from replaying a log.
    """

    def __init__(self, message: str, turn: int | None = None) -> None:
        super().__init__(message)
        self.turn = turn


class Mode(str, enum.Enum):
    STANDARD = "standard"
    SOLITAIRE = "solitaire"

    @classmethod
    def parse(cls, value: "Mode | str") -> "Mode":
        if isinstance(value, Mode):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise GameError(f"unknown mode {value!r}: use 'standard' or 'solitaire'") from None


class Stage(str, enum.Enum):
    NORMAL = "normal"  # players take turns in seat order
    LAST_CHANCES = "last_chances"  # someone made Phase 10; the others get one chaining turn each
    OVER = "over"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One scored attempt: the player's final dice for their current phase, and what it earned.

    `five_phase_bonus`, `first_finish_bonus` and `penalty` are what this attempt added to the
    player's scorepad (0 when it added nothing); `last_chance` tells it was played after
    normal play had ended.
    """

    player: str
    phase: int
    faces: tuple[Face, ...]
    evaluation: Evaluation
    made: bool
    five_phase_bonus: int = 0
    first_finish_bonus: int = 0
    penalty: int = 0
    last_chance: bool = False

    @property
    def score(self) -> int | None:
        return self.evaluation.score if self.made else None

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "phase": self.phase,
            "dice": [f.token for f in self.faces],
            "made": self.made,
            "score": self.score,
            "five_phase_bonus": self.five_phase_bonus,
            "first_finish_bonus": self.first_finish_bonus,
            "penalty": self.penalty,
            "last_chance": self.last_chance,
            "evaluation": self.evaluation.to_json(),
        }
