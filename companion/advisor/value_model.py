"""Phases 1-7, 9 and 10: only the numbers matter, so dice that roll the same numbers are alike.

The standard set has two such groups: four low dice rolling {1,2,3,4,W,W} and six high dice
rolling {5..10}. A final state is one multiset per group (70 x 462 = 32,340 states); each is
scored once by the rules evaluator, the single source of truth, and the DP does the rest.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from companion.advisor.product_dp import Group, Solution, solve
from companion.dice import Color, DiceSet, Face
from companion.rules.evaluation import HouseRules
from companion.rules.evaluator import best_score
from companion.rules.phases import ROLLS_PER_TURN


@dataclass(frozen=True)
class ValueGroups:
    """The dice grouped by the numbers they roll; values[g][o] is outcome o of group g (None = W)."""

    groups: tuple[Group, ...]
    values: tuple[tuple[int | None, ...], ...]
    die_group: dict[str, int]  # die id -> group number

    def locate(self, value: int | None, group: int) -> int:
        return self.values[group].index(value)


def value_groups(dice_set: DiceSet) -> ValueGroups:
    """Group the dice by their multiset of face values (colours ignored)."""
    layouts: dict[tuple[Any, ...], list[str]] = {}
    for die in dice_set.dice:
        key = tuple(sorted((f.value is None, f.value or 0) for f in die.faces))
        layouts.setdefault(key, []).append(die.id)
    groups, values, die_group = [], [], {}
    for g, (key, ids) in enumerate(layouts.items()):
        counts: dict[int | None, int] = {}
        for is_wild, v in key:
            counts[None if is_wild else v] = counts.get(None if is_wild else v, 0) + 1
        outcomes = tuple(counts)
        values.append(outcomes)
        groups.append(Group(len(ids), tuple(float(Fraction(counts[o], 6)) for o in outcomes)))
        die_group.update({i: g for i in ids})
    return ValueGroups(tuple(groups), tuple(values), die_group)


def final_rewards(phase: int, vg: ValueGroups, rules: HouseRules) -> tuple[np.ndarray, np.ndarray]:
    """Completion (0/1) and score (0 when missed) of every full state, from the evaluator."""
    fulls = [g.full() for g in vg.groups]
    shape = tuple(len(f) for f in fulls)
    complete, score = np.zeros(shape), np.zeros(shape)
    for pos in np.ndindex(shape):
        faces: list[Face] = []
        for g, i in enumerate(pos):
            counts = vg.groups[g].counts[fulls[g][i]]
            for o, n in enumerate(counts):
                # Colours do not matter outside Phase 8; any colour will do.
                faces += [Face(vg.values[g][o], Color.RED)] * n
        result = best_score(phase, faces, rules)
        if result is not None:
            complete[pos], score[pos] = 1.0, float(result)
    return complete, score


@dataclass
class ValueTables:
    """Both objectives solved for one phase: keep tables W_r and final rewards."""

    vg: ValueGroups
    complete_first: Solution  # primary: completion, secondary: score
    score_first: Solution  # primary: score, secondary: completion
    final_complete: np.ndarray
    final_score: np.ndarray
    fresh: dict[str, tuple[float, float]]  # a fresh turn: objective -> (primary, secondary)

    @property
    def nbytes(self) -> int:
        arrays = [self.final_complete, self.final_score]
        for sol in (self.complete_first, self.score_first):
            arrays += [a for pair in sol.keep.values() for a in pair]
            arrays += [a for pair in sol.full.values() for a in pair]
        return sum(a.nbytes for a in arrays)


def build_value_tables(phase: int, dice_set: DiceSet, rules: HouseRules) -> ValueTables:
    vg = value_groups(dice_set)
    complete, score = final_rewards(phase, vg, rules)
    by_completion = solve(vg.groups, complete, score, ROLLS_PER_TURN)
    by_score = solve(vg.groups, score, complete, ROLLS_PER_TURN)
    # A decision has at most 2 rolls left; of W_3 only the empty keep (a fresh turn) is used.
    empty = tuple(0 for _ in vg.groups)
    fresh: dict[str, tuple[float, float]] = {}
    for name, sol in (("complete", by_completion), ("score", by_score)):
        primary, secondary = sol.keep.pop(ROLLS_PER_TURN)
        fresh[name] = (float(primary[empty]), float(secondary[empty]))
        sol.full.clear()  # V_r on full states is only needed while building
    return ValueTables(vg, by_completion, by_score, complete, score, fresh)


__all__ = ["ValueGroups", "ValueTables", "build_value_tables", "value_groups"]
