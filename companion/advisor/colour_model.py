"""Phase 8 (seven of one colour): which physical die shows which colour matters.

Three exact pieces (see docs/advisor.md):

* Completion depends on the colours alone, and dice with the same colour layout (how many
  faces of each colour) are interchangeable for it. The standard set has four such classes
  (3 + 2 + 3 + 2 dice): 40,000 full states, 275,625 partial ones, and the DP is exactly
  optimal for the chance, hedging between colours included.
* The score is the score of the one colour with >= 7 dice (two colours cannot both have 7
  of 10). For each colour c, a DP over per-die states {rerolled, not c, showing its j-th
  face of colour c} gives the exact chance and expected score of playing for c from here
  (numbers included). On the last roll the phase's figures are the sums over colours: exact.
* With two rolls left, "keep K now, then play for colour c" is exact per colour; the best
  colour is a lower bound on the best play after K, the sum over colours an upper bound.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from companion.advisor.product_dp import Group, Solution, best_below, solve
from companion.dice import COLORS, DiceSet, Face
from companion.rules.evaluation import HouseRules
from companion.rules.evaluator import best_score
from companion.rules.phases import COLOR_PHASE, ROLLS_PER_TURN
from companion.rules.phases import phase as phase_of

NCOL = len(COLORS)


def colour_faces(dice_set: DiceSet) -> list[list[list[Face]]]:
    """faces[d][c]: the faces of die d printed in colour c."""
    return [[[f for f in die.faces if f.color is col] for col in COLORS] for die in dice_set.dice]


def group_size() -> int:
    return phase_of(COLOR_PHASE).groups[0].size


def _face_key(face: Face) -> tuple[int, bool, str]:
    return (face.value or 0, face.value is None, face.color.value)


@lru_cache(maxsize=1 << 16)
def _score_of(faces: tuple[Face, ...], rules: HouseRules) -> float | None:
    result = best_score(COLOR_PHASE, list(faces), rules)
    return None if result is None else float(result)


def score_of(faces: Sequence[Face], rules: HouseRules) -> float | None:
    """The evaluator's Phase 8 score of these faces (cached on the sorted faces)."""
    return _score_of(tuple(sorted(faces, key=_face_key)), rules)


# ---- Completion: colour classes --------------------------------------------------------


@dataclass(frozen=True)
class ColourClasses:
    """Dice grouped by colour layout; groups[k] rolls colour o with probability probs[o]."""

    groups: tuple[Group, ...]
    die_class: tuple[int, ...]  # die index -> class


def colour_classes(dice_set: DiceSet) -> ColourClasses:
    layouts: dict[tuple[int, ...], list[int]] = {}
    for d, per_colour in enumerate(colour_faces(dice_set)):
        layouts.setdefault(tuple(len(fc) for fc in per_colour), []).append(d)
    die_class = [0] * len(dice_set.dice)
    groups = []
    for k, (layout, dice) in enumerate(layouts.items()):
        groups.append(Group(len(dice), tuple(n / sum(layout) for n in layout)))
        for d in dice:
            die_class[d] = k
    return ColourClasses(tuple(groups), tuple(die_class))


def class_completion(dice_set: DiceSet, rules: HouseRules) -> tuple[ColourClasses, np.ndarray, float]:
    """Exact best chance of completing, with hedging: W_2 on every kept class multiset, and
    a fresh turn's chance (W_3 of keeping nothing)."""
    classes = colour_classes(dice_set)
    fulls = [g.full() for g in classes.groups]
    shape = tuple(len(f) for f in fulls)
    complete = np.zeros(shape)
    for pos in np.ndindex(shape):
        totals = np.zeros(NCOL, dtype=int)
        for g, i in enumerate(pos):
            totals += classes.groups[g].counts[fulls[g][i]]
        # Any number stands in: completion depends on the colour counts only.
        faces = [Face(5, col) for col, n in zip(COLORS, totals) for _ in range(n)]
        complete[pos] = 1.0 if score_of(faces, rules) is not None else 0.0
    # The chance has no secondary figure: the tie-break array is all zeros.
    solution = solve(classes.groups, complete, np.zeros(shape), ROLLS_PER_TURN)
    return classes, solution.keep[ROLLS_PER_TURN - 1][0], float(solution.keep[ROLLS_PER_TURN][0].flat[0])


# ---- Score: one colour at a time -------------------------------------------------------


@dataclass
class SingleColour:
    """Playing for one colour c. Per die d the options are 0: not c, j >= 1: its j-th face
    of colour c (faces[d]); a die's table axis also has the rerolled slot.
    complete_first holds keep tables W_1 (last roll: the same for both objectives) and W_2;
    score_first holds W_2."""

    colour: int
    faces: list[list[Face]]
    groups: tuple[Group, ...]
    complete_first: Solution
    score_first: Solution

    def slot(self, die: int, face: Face | None) -> int:
        """Table index on die's axis: rerolled (face None), not c, or the c-face shown."""
        group = self.groups[die]
        if face is None:
            return group.index[(0,) * group.outcomes]
        option = 1 + self.faces[die].index(face) if face in self.faces[die] else 0
        return group.index[tuple(int(o == option) for o in range(group.outcomes))]

    def slot_not_c(self, die: int) -> int:
        """Table index on die's axis for "kept, showing another colour"."""
        group = self.groups[die]
        return group.index[(1,) + (0,) * (group.outcomes - 1)]


def single_colour(dice_set: DiceSet, colour: int, rules: HouseRules) -> SingleColour:
    faces = [per_colour[colour] for per_colour in colour_faces(dice_set)]
    sides = [len(die.faces) for die in dice_set.dice]
    groups = tuple(Group(1, (1 - len(fc) / s,) + (1 / s,) * len(fc)) for fc, s in zip(faces, sides))
    shape = tuple(1 + len(fc) for fc in faces)
    complete, score = np.zeros(shape), np.zeros(shape)
    for pos in np.ndindex(shape):
        shown = [faces[d][i - 1] for d, i in enumerate(pos) if i > 0]
        if len(shown) >= group_size():
            result = score_of(shown, rules)
            if result is not None:
                complete[pos], score[pos] = 1.0, result
    by_completion = solve(groups, complete, score, ROLLS_PER_TURN - 1)
    by_score = solve(groups, score, complete, ROLLS_PER_TURN - 1)
    # Only the keep tables are used; on the last roll both objectives share W_1.
    by_completion.full.clear()
    by_score.full.clear()
    by_score.keep.pop(1)
    return SingleColour(colour, faces, groups, by_completion, by_score)


@dataclass
class LastRollPlay:
    """The best last-roll keep among those that keep dice of one colour only, for every
    state, seen through one colour c: per die d the slot is 0 (not showing c) or j (showing
    its j-th face of colour c). tables[c][flat slot index] = (chance-first p, s, score-first
    s, p) of c's best keep for each objective; the state's value is the best over colours.

    Why one colour: two colours both reaching 7 of 10 is impossible, and keeping a die of
    colour c' while playing for c blocks a chance at c. Every last-roll optimum we checked
    (tests, benchmark) was such a keep; the figures are exact for this plan in any case."""

    tables: list[np.ndarray]  # per colour: (4, states), states = the slots flattened
    shapes: list[tuple[int, ...]]
    slots: list[list[dict[Face, int]]]  # slots[c][d][face] (faces not of colour c: slot 0)
    faces: list[tuple[Face, ...]]  # every face of each die (each rolls with probability 1/6)


def last_roll_play(colours: Sequence[SingleColour], dice_set: DiceSet) -> LastRollPlay:
    tables, shapes, slots = [], [], []
    for sc in colours:
        shape = tuple(1 + len(fc) for fc in sc.faces)
        h_p, h_s = np.zeros(shape), np.zeros(shape)
        for other in colours:
            # Keeping die d (it shows c) is "kept, c-face j" for c and "kept, not x" for x != c.
            index = []
            for d, fc in enumerate(sc.faces):
                kept = [other.slot(d, f) for f in fc] if other is sc else [other.slot_not_c(d)] * len(fc)
                index.append([other.slot(d, None)] + kept)
            grid = np.ix_(*index)
            h_p += other.complete_first.keep[1][0][grid]
            h_s += other.complete_first.keep[1][1][grid]
        groups = tuple(Group(1, (1.0 / len(fc),) * len(fc)) for fc in sc.faces)
        columns = []
        for a, b in ((h_p, h_s), (h_s, h_p)):
            a, b = a.copy(), b.copy()
            for axis, group in enumerate(groups):
                best_below(a, b, group, axis)  # keep die `axis` or reroll it, whichever is better
            columns += [a.ravel(), b.ravel()]
        tables.append(np.stack(columns))
        shapes.append(shape)
        slots.append([{f: j + 1 for j, f in enumerate(fc)} for fc in sc.faces])
    return LastRollPlay(tables, shapes, slots, [die.faces for die in dice_set.dice])


# ---- Fresh-turn figures for the docs table (slow: per-die colour DP, ~10M states) -------


def colour_groups(dice_set: DiceSet) -> tuple[Group, ...]:
    return tuple(
        Group(1, tuple(len(fc) / len(die.faces) for fc in per_die))
        for die, per_die in zip(dice_set.dice, colour_faces(dice_set))
    )


def colour_rewards(dice_set: DiceSet, rules: HouseRules, optimistic: bool) -> tuple[np.ndarray, np.ndarray]:
    """Completion and score of every full colour state (axis d: colour of die d).

    Only the colour with >= 7 dice scores, and only its dice matter. The score is the mean
    over those dice's faces of that colour (optimistic=False: the exact reward of a plan that
    decides on colours only) or the best of them (optimistic=True: a relaxation whose value
    bounds every plan's, numbers seen or not)."""
    faces = colour_faces(dice_set)
    n = len(dice_set.dice)
    shape = (NCOL,) * n
    states = np.indices(shape).reshape(n, -1)
    weights = 1 << np.arange(n)[:, None]
    complete, score = np.zeros(states.shape[1]), np.zeros(states.shape[1])
    for c in range(NCOL):
        shows = states == c
        masks = (shows * weights).sum(axis=0)
        for mask in np.unique(masks[shows.sum(axis=0) >= group_size()]):
            combos = list(itertools.product(*(faces[d][c] for d in range(n) if mask >> d & 1)))
            results = [score_of(combo, rules) for combo in combos]
            where = masks == mask
            complete[where] = sum(r is not None for r in results) / len(results)
            points = [r or 0.0 for r in results]
            score[where] = max(points) if optimistic else sum(points) / len(points)
    return complete.reshape(shape), score.reshape(shape)
