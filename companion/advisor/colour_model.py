"""Phase 8 (seven of one colour): which physical die shows which colour matters.

Each die is its own group and its outcome is the colour it shows, so a full state is one
colour per die (4**10 = 1,048,576 states; partial states 5**10 ~ 9.8M, used only while
building). Completion depends on the colours alone, so the colour DP is exactly optimal for
it. The score also depends on the numbers: the colour DP scores a final colour state with
the numbers averaged over each die's faces of that colour (a plan that looks at colours
only), and on the last roll the advice is exact with the numbers, through per-colour tables
of E[score of colour c] (a phase-8 score is the score of the one colour with >= 7 dice).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from companion.advisor.product_dp import Group, Solution, expand_all, solve
from companion.dice import COLORS, Color, DiceSet, Face
from companion.rules.evaluation import HouseRules
from companion.rules.evaluator import best_score
from companion.rules.phases import phase as phase_of

PHASE = 8
ROLLS_PER_TURN = 3
NCOL = len(COLORS)


def _colour_faces(dice_set: DiceSet) -> list[list[list[Face]]]:
    """faces[d][c]: the faces of die d printed in colour c."""
    return [[[f for f in die.faces if f.color is col] for col in COLORS] for die in dice_set.dice]


def colour_groups(dice_set: DiceSet) -> tuple[Group, ...]:
    return tuple(
        Group(1, tuple(len(fc) / len(die.faces) for fc in per_die))
        for die, per_die in zip(dice_set.dice, _colour_faces(dice_set))
    )


def _group_size() -> int:
    return phase_of(PHASE).groups[0].size


def _score(faces: Sequence[Face], rules: HouseRules) -> float:
    result = best_score(PHASE, list(faces), rules)
    return 0.0 if result is None else float(result)


def _mean_score(dice_faces: list[list[Face]], rules: HouseRules) -> tuple[float, float]:
    """(P complete, E score) when die i shows a uniform face of dice_faces[i]."""
    total = 0.0
    combos = list(itertools.product(*dice_faces))
    hits = 0
    for combo in combos:
        result = best_score(PHASE, list(combo), rules)
        if result is not None:
            hits += 1
            total += result
    return hits / len(combos), total / len(combos)


def colour_rewards(dice_set: DiceSet, rules: HouseRules) -> tuple[np.ndarray, np.ndarray]:
    """Completion and number-averaged score of every full colour state (axis d: colour of die d).

    At most one colour can have 7 of 10 dice, and only its dice matter: the reward depends on
    (colour, set of dice showing it). Each such pair is scored by the evaluator on every
    combination of those dice's faces of that colour.
    """
    faces = _colour_faces(dice_set)
    n = len(dice_set.dice)
    need = _group_size()
    shape = (NCOL,) * n
    states = np.indices(shape).reshape(n, -1)  # states[d, s] = colour of die d in state s
    weights = 1 << np.arange(n)[:, None]
    complete = np.zeros(states.shape[1])
    score = np.zeros(states.shape[1])
    for c in range(NCOL):
        shows = states == c
        masks = (shows * weights).sum(axis=0)
        for mask in np.unique(masks[shows.sum(axis=0) >= need]):
            dice = [d for d in range(n) if mask >> d & 1]
            p, e = _mean_score([faces[d][c] for d in dice], rules)
            where = masks == mask
            complete[where], score[where] = p, e
    return complete.reshape(shape), score.reshape(shape)


@dataclass
class ColourTables:
    groups: tuple[Group, ...]
    complete_first: Solution
    score_first: Solution
    exact_last: "LastRollTables"

    def fresh_turn(self) -> dict[str, float]:
        """Fresh turn of 3 rolls (no dice kept) for each objective's best colour plan."""
        out = {}
        for name, sol in (("complete", self.complete_first), ("score", self.score_first)):
            p, s = (float(expand_all(t, self.groups).flat[0]) for t in sol.full[ROLLS_PER_TURN - 1])
            out[name] = (p, s)
        return out


@dataclass
class LastRollTables:
    """Per colour c, over per-die options (0 = rerolled, 1 = kept not showing c, 2.. = kept
    showing its j-th face of colour c): P(colour c complete) and E[score of colour c].
    Since at most one colour completes, the phase's figures are the sums over colours."""

    options: list[list[list[Face]]]  # options[c][d] = faces of die d in colour c
    complete: list[np.ndarray]
    score: list[np.ndarray]


def last_roll_tables(dice_set: DiceSet, rules: HouseRules) -> LastRollTables:
    faces = _colour_faces(dice_set)
    n = len(dice_set.dice)
    need = _group_size()
    per_colour = [[faces[d][c] for d in range(n)] for c in range(NCOL)]
    complete, score = [], []
    for c in range(NCOL):
        shape = tuple(1 + len(fc) for fc in per_colour[c])  # full options: not c, or a c-face
        p_final, s_final = np.zeros(shape), np.zeros(shape)
        for pos in np.ndindex(shape):
            shown = [per_colour[c][d][i - 1] for d, i in enumerate(pos) if i > 0]
            if len(shown) >= need:
                p_final[pos], s_final[pos] = 1.0, _cached_score(tuple(sorted(shown, key=_face_key)), rules)
        groups = tuple(Group(1, (1 - len(fc) / 6,) + (1 / 6,) * len(fc)) for fc in per_colour[c])
        complete.append(expand_all(p_final, groups))
        score.append(expand_all(s_final, groups))
    return LastRollTables(per_colour, complete, score)


def _face_key(face: Face) -> tuple:
    return (face.value or 0, face.value is None, face.color.value)


@lru_cache(maxsize=1 << 16)
def _cached_score(faces: tuple[Face, ...], rules: HouseRules) -> float:
    return _score(faces, rules)


def build_colour_tables(dice_set: DiceSet, rules: HouseRules) -> ColourTables:
    groups = colour_groups(dice_set)
    complete, score = colour_rewards(dice_set, rules)
    # Only V_0..V_2 are needed (a decision has at most 2 rolls left); W_3 of the empty keep
    # (the fresh turn) is the expectation of V_2.
    by_completion = solve(groups, complete, score, ROLLS_PER_TURN - 1, keep_tables=False)
    by_score = solve(groups, score, complete, ROLLS_PER_TURN - 1, keep_tables=False)
    return ColourTables(groups, by_completion, by_score, last_roll_tables(dice_set, rules))
