"""What the evaluator answers: the best arrangement of the dice for a phase."""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HouseRules:
    """Table rules that change scoring. By default a group made only of wilds is legal."""

    natural_in_every_group: bool = False  # forbid groups made only of wilds


@dataclass(frozen=True, slots=True)
class Group:
    """One group of the arrangement.

    `dice` are indices into the evaluated dice; `stands_for` gives, per die, the number it
    counts as (a natural die counts as itself; a wild as the number it stands for). In a
    colour group a wild stands for no number, so its entry is None.
    """

    kind: str  # "set" | "run" | "color"
    dice: tuple[int, ...]
    stands_for: tuple[int | None, ...]


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The verdict for one phase: complete or not, the best score (None when missed), the groups."""

    phase: int
    complete: bool
    score: int | None
    groups: tuple[Group, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "complete": self.complete,
            "score": self.score,
            "groups": [
                {"kind": g.kind, "dice": list(g.dice), "stands_for": list(g.stands_for)} for g in self.groups
            ],
        }
