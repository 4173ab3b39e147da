"""The ten phases as data: what groups each one requires, and the turn they are played in."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Requirement:
    """One group a phase asks for: a set, a run, or dice of one colour, of exactly `size` dice."""

    kind: str  # "set" | "run" | "color"
    size: int


@dataclass(frozen=True, slots=True)
class Phase:
    number: int
    name: str
    groups: tuple[Requirement, ...]

    @property
    def dice_needed(self) -> int:
        return sum(g.size for g in self.groups)


def _p(number: int, name: str, *groups: tuple[str, int]) -> Phase:
    return Phase(number, name, tuple(Requirement(kind, size) for kind, size in groups))


PHASES: tuple[Phase, ...] = (
    _p(1, "2 sets of 3", ("set", 3), ("set", 3)),
    _p(2, "1 set of 3 + 1 run of 4", ("set", 3), ("run", 4)),
    _p(3, "1 set of 4 + 1 run of 4", ("set", 4), ("run", 4)),
    _p(4, "1 run of 7", ("run", 7)),
    _p(5, "1 run of 8", ("run", 8)),
    _p(6, "1 run of 9", ("run", 9)),
    _p(7, "2 sets of 4", ("set", 4), ("set", 4)),
    _p(8, "7 of one colour", ("color", 7)),
    _p(9, "1 set of 5 + 1 set of 2", ("set", 5), ("set", 2)),
    _p(10, "1 set of 5 + 1 set of 3", ("set", 5), ("set", 3)),
)


PHASE_COUNT = len(PHASES)
# The one phase that asks for colours rather than numbers (Phase 8, seven of one colour).
COLOR_PHASE = next(p.number for p in PHASES if p.groups[0].kind == "color")
# A turn is up to three rolls; a decision (what to keep) comes after each roll but the last.
ROLLS_PER_TURN = 3
MAX_ROLLS_LEFT = ROLLS_PER_TURN - 1


def phase(number: int) -> Phase:
    if not 1 <= number <= len(PHASES):
        raise ValueError(f"phase must be 1..{len(PHASES)}, got {number}")
    return PHASES[number - 1]
