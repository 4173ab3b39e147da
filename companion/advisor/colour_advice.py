"""Phase 8: every keep mask's figures, averaged over the readings of the dice.

One roll left: exact from the per-colour tables. Two rolls left: the chance is exact from
the colour-class DP; the scores are bounded for every mask at once, then made exact for the
keeps the advice returns by enumerating the reroll (see docs/advisor.md).
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from companion.advisor.colour_model import (
    NCOL,
    ColourClasses,
    LastRollPlay,
    SingleColour,
    class_completion,
    last_roll_play,
    single_colour,
)
from companion.advisor.masks import KeepFigures, mask_bits
from companion.advisor.product_dp import TIE
from companion.dice import COLORS, DiceSet, DieToken, Face, standard_set
from companion.rules.evaluation import HouseRules

_DEFAULT_RULES = HouseRules()

# Enumerating the reroll's outcomes costs a few lookups each. One advice enumerates at most
# this many outcomes (summed over readings, keeps and plans; 6**7 take about 25 ms of CPU
# here), so a decision stays well under 250 ms even on a busy machine; past it the bounds
# stand instead.
EXACT_OUTCOMES = 6**7


@dataclass(frozen=True)
class ColourTables:
    classes: ColourClasses
    completion: np.ndarray  # W_2 of the class DP: the exact chance, hedging included
    fresh_p_complete: float  # a fresh turn's best chance
    colours: tuple[SingleColour, ...]  # playing for one colour, numbers included
    last_roll: LastRollPlay  # the best one-colour keep on the last roll, every state

    @property
    def nbytes(self) -> int:
        arrays = [self.completion]
        for sc in self.colours:
            for sol in (sc.complete_first, sc.score_first):
                arrays += [a for pair in sol.keep.values() for a in pair]
        arrays += self.last_roll.tables
        return sum(a.nbytes for a in arrays)


def colour_tables(rules: HouseRules = _DEFAULT_RULES, dice_set: DiceSet | None = None) -> ColourTables:
    """Phase 8's tables, built on first use (a few seconds) and kept in memory."""
    return _colour_tables(rules, None if dice_set is None or dice_set == standard_set() else dice_set)


@lru_cache(maxsize=4)
def _colour_tables(rules: HouseRules, dice_set: DiceSet | None) -> ColourTables:
    dice_set = dice_set or standard_set()
    classes, completion, fresh_p = class_completion(dice_set, rules)
    colours = tuple(single_colour(dice_set, c, rules) for c in range(NCOL))
    return ColourTables(classes, completion, fresh_p, colours, last_roll_play(colours, dice_set))


def colour_figures(
    tokens: list[DieToken], readings: list[tuple[int, ...]], rolls_left: int, rules: HouseRules, dice_set: DiceSet
) -> KeepFigures:
    """Average over the readings (token -> die maps) of each keep mask's figures."""
    tables = colour_tables(rules, dice_set)
    n = len(tokens)
    totals = [np.zeros(1 << n) for _ in range(5)]
    for reading in readings:
        parts = _one_reading(tokens, reading, rolls_left, tables)
        for total, part in zip(totals, parts):
            total += part
    cp, cs, ss, sp, upper = (t / len(readings) for t in totals)
    values = KeepFigures((cp, cs), (ss, sp), upper)
    if rolls_left == 2:
        full = (1 << n) - 1
        budget = [EXACT_OUTCOMES]  # outcomes left to enumerate in this call

        def refine(mask: int, objectives: tuple[bool, ...]) -> None:
            """Make `mask`'s figures exact for these objectives (True: score-first), in
            order, each if its enumeration fits what is left of the budget."""
            outcomes = len(readings) * 6 ** (n - bin(mask).count("1"))
            for score_first in objectives:
                if mask == full or outcomes > budget[0]:
                    return
                budget[0] -= outcomes
                [(first, second)] = exact_two_rolls(tokens, readings, mask, tables.last_roll, (score_first,))
                if score_first:
                    ss[mask], sp[mask] = first, second
                    upper[mask] = first  # exact: no bound to report
                else:
                    cs[mask] = second
                    refined_chance_plans.add(mask)

        refined_chance_plans: set[int] = set()
        values = KeepFigures((cp, cs), (ss, sp), upper, refine, refined_chance_plans)
    return values


Figures = tuple[np.ndarray, ...]


def _one_reading(
    tokens: list[DieToken], reading: tuple[int, ...], rolls_left: int, tables: ColourTables
) -> Figures:
    """(complete-first p, s, score-first s, p, upper bound on s) of every mask for one reading."""
    bits = mask_bits(len(tokens))
    per_colour = [_single_colour_figures(tokens, reading, rolls_left, sc, bits) for sc in tables.colours]
    if rolls_left == 1:
        # No later choice: the figures of a keep are the same for both objectives, and exact.
        p = functools.reduce(operator.add, (f[0] for f in per_colour))
        s = functools.reduce(operator.add, (f[1] for f in per_colour))
        return p, s, s.copy(), p.copy(), s.copy()
    # Two rolls left: the chance is exact from the class DP (it hedges between colours). For
    # the score, "keep this, then play for colour c" is exact per colour: the best colour is
    # a lower bound on the best play, and the sum over colours an upper bound.
    p_exact = _class_figure(tokens, reading, tables, bits)
    cf_p, cf_s, sf_s, sf_p = (np.stack([f[k] for f in per_colour], axis=1) for k in range(4))
    rows = np.arange(len(bits))
    best_cf = _lex_best(cf_p, cf_s)
    best_sf = _lex_best(sf_s, sf_p)
    return p_exact, cf_s[rows, best_cf], sf_s[rows, best_sf], sf_p[rows, best_sf], sf_s.sum(axis=1)


def _lex_best(primary: np.ndarray, secondary: np.ndarray) -> np.ndarray:
    """Per row, the column with the best primary, then the best secondary."""
    top = primary >= primary.max(axis=1, keepdims=True) - TIE
    return np.asarray(np.argmax(np.where(top, secondary, -np.inf), axis=1))


def _single_colour_figures(
    tokens: list[DieToken], reading: tuple[int, ...], rolls_left: int, sc: SingleColour, bits: np.ndarray
) -> Figures:
    """(cf p, cf s, sf s, sf p) of playing for colour sc.colour, for every mask."""
    n = len(tokens)
    kept = np.array([sc.slot(d, t.face) for t, d in zip(tokens, reading)])
    rolled = np.array([sc.slot(d, None) for d in reading])
    per_token = np.where(bits == 1, kept[None, :], rolled[None, :])
    per_die = np.empty_like(per_token)
    per_die[:, list(reading)] = per_token
    at = tuple(per_die[:, d] for d in range(n))
    cf = sc.complete_first.keep[rolls_left]
    sf = sc.score_first.keep[2] if rolls_left == 2 else cf[::-1]
    return cf[0][at], cf[1][at], sf[0][at], sf[1][at]


def _class_figure(
    tokens: list[DieToken], reading: tuple[int, ...], tables: ColourTables, bits: np.ndarray
) -> np.ndarray:
    """Exact best chance of completing (two rolls left) of every mask, from the class DP."""
    classes = tables.classes
    index = []
    for k, group in enumerate(classes.groups):
        onehot = np.zeros((len(tokens), NCOL), dtype=np.int64)
        for t, (token, d) in enumerate(zip(tokens, reading)):
            if classes.die_class[d] == k:
                onehot[t, COLORS.index(token.face.color)] = 1
        index.append(group.codes(bits @ onehot))
    return np.asarray(tables.completion[tuple(index)])


def exact_two_rolls(
    tokens: list[DieToken], readings: list[tuple[int, ...]], mask: int, play: LastRollPlay, objectives: tuple[bool, ...]
) -> list[tuple[float, float]]:
    """Phase 8, two rolls left, keep `mask`, then the best one-colour keep on the last roll
    for each objective (True: score first): its (primary, secondary) figures averaged over
    every outcome of the reroll and every reading."""
    n = len(tokens)
    columns = [c for score_first in objectives for c in ((2, 3) if score_first else (0, 1))]
    sums = np.zeros(len(columns))
    for reading in readings:
        kept = {reading[t]: tokens[t].face for t in range(n) if mask >> t & 1}
        sums += exact_one_reading(kept, play, columns)
    means = sums / len(readings)
    return [(float(means[2 * k]), float(means[2 * k + 1])) for k in range(len(objectives))]


def exact_one_reading(kept: dict[int, Face], play: LastRollPlay, columns: Sequence[int]) -> np.ndarray:
    """Mean over every outcome of the dice not in `kept` of the best one-colour last keep's
    figures; `columns` are pairs (primary, secondary) of play.tables' rows."""
    x: np.ndarray | None = None
    for c, table in enumerate(play.tables):
        index = _outcome_index(kept, play, c)
        if x is None:
            x = np.empty((len(play.tables), len(columns), len(index)))
        for k, row in enumerate(columns):
            np.take(table[row], index, out=x[c, k])
    assert x is not None, "a last roll has one table per colour"
    out = []
    for k in range(0, len(columns), 2):
        a, b = x[:, k, :], x[:, k + 1, :]
        # Per outcome the best colour, lexicographically: real differences of the primary are
        # at least 6**-10 ~ 1.7e-8, the secondary (<= 100) scaled by 1e-12 only breaks ties.
        choice = np.argmax(a + 1e-12 * b, axis=0)
        out += [a.max(axis=0).mean(), np.take_along_axis(b, choice[None, :], axis=0).mean()]
    return np.array(out)


def _outcome_index(kept: dict[int, Face], play: LastRollPlay, colour: int) -> np.ndarray:
    """Flat index into play.tables[colour] of every outcome of the rerolled dice."""
    shape = play.shapes[colour]
    strides = np.cumprod((1,) + shape[::-1][:-1])[::-1]
    slots = play.slots[colour]
    index = np.array([sum(int(strides[d]) * slots[d].get(face, 0) for d, face in kept.items())])
    for d in range(len(shape)):
        if d not in kept:  # every face of a rerolled die, each with probability 1/6
            step = np.array([int(strides[d]) * slots[d].get(f, 0) for f in play.faces[d]])
            index = (index[:, None] + step[None, :]).ravel()
    return index
