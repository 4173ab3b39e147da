"""The roll advice: which dice to keep, with the exact odds of each plan."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from companion.advisor.assignment import assignments
from companion.advisor.colour_model import (
    NCOL,
    ColourClasses,
    LastRollPlay,
    SingleColour,
    class_completion,
    last_roll_play,
    single_colour,
)
from companion.advisor.colour_model import PHASE as COLOUR_PHASE
from companion.advisor.product_dp import TIE
from companion.advisor.value_model import ValueTables, build_value_tables
from companion.dice import COLORS, DiceError, DiceSet, DieToken, Face, standard_set
from companion.rules.evaluation import HouseRules
from companion.rules.evaluator import best_score

MAX_ROLLS_LEFT = 2  # a turn has 3 rolls; a decision comes after the 1st or the 2nd
_DEFAULT_RULES = HouseRules()


@dataclass(frozen=True)
class KeepOption:
    """A plan: keep these dice (indices into the given dice) now and play on optimally.

    p_complete: probability that the phase is made by the end of the turn;
    expected_score: expected phase score, a miss counting 0."""

    keep: tuple[int, ...]
    p_complete: float
    expected_score: float
    # Phase 8 with two rolls left only (None elsewhere: the figures are exact). Then
    # expected_score is exact for "keep these, then on the last roll play for one colour"
    # (for best_score the colour with the best expected score, for best the likeliest one),
    # and the best play's expected score after this keep lies between it and this bound.
    # p_complete of `best` stays exact (it hedges between colours).
    expected_score_upper: float | None = None

    def to_json(self) -> dict:
        out = {"keep": list(self.keep), "p_complete": self.p_complete, "expected_score": self.expected_score}
        if self.expected_score_upper is not None:
            out["expected_score_upper"] = self.expected_score_upper
        return out


@dataclass(frozen=True)
class Advice:
    phase: int
    rolls_left: int
    best: KeepOption  # maximises the chance of completing the phase (then the score)
    best_score: KeepOption  # maximises the expected score (then the chance)
    keep_all: KeepOption  # stop here with the dice as they are

    def to_json(self) -> dict:
        return {"best": self.best.to_json(), "best_score": self.best_score.to_json(), "keep_all": self.keep_all.to_json()}


@dataclass(frozen=True)
class _Values:
    """For every keep mask (bit i = keep token i): both objectives' (primary, secondary)."""

    complete_first: tuple[np.ndarray, np.ndarray]  # (p_complete, expected score)
    score_first: tuple[np.ndarray, np.ndarray]  # (expected score, p_complete)
    score_upper: np.ndarray | None = None  # Phase 8, 2 rolls left: an upper bound on the score
    # Phase 8, 2 rolls left: make a mask's scores exact for some plans (when small enough).
    refine: "Callable[[int, tuple[bool, ...]], None] | None" = None
    refined_chance_plans: set[int] | None = None  # masks whose chance-plan score is exact


def advise(
    phase: int,
    dice: Sequence[DieToken | Face],
    rolls_left: int,
    rules: HouseRules = _DEFAULT_RULES,
    dice_set: DiceSet | None = None,
    *,
    exact_scores: bool = True,
) -> Advice:
    """Advice for the 10 dice showing with `rolls_left` (0, 1 or 2) rolls to come.

    exact_scores=False skips the enumeration that makes Phase 8's two-roll expected scores
    exact (up to ~0.1 s): the keeps are the same, those scores are then bounds."""
    values, keep_all = _figures(phase, dice, rolls_left, rules, dice_set)
    if values is None:
        return Advice(phase, 0, keep_all, keep_all, keep_all)
    best = _choose(*values.complete_first)
    best_s = _choose(*values.score_first)
    if values.refine is not None and exact_scores:
        # The score plan's figure first: it is the one a bound would blur most.
        if best == best_s:
            values.refine(best, (True, False))
        else:
            values.refine(best_s, (True,))
            values.refine(best, (False,))
    return Advice(
        phase,
        rolls_left,
        _option(values, best, score_first=False),
        _option(values, best_s, score_first=True),
        keep_all,
    )


def _option(values: _Values, mask: int, score_first: bool) -> KeepOption:
    pair = values.score_first[::-1] if score_first else values.complete_first
    p, s = _floats(pair, mask)
    upper = None
    exact = values.score_upper is None or (not score_first and mask in (values.refined_chance_plans or ()))
    if not exact and values.score_upper[mask] > s + 1e-9:
        upper = float(values.score_upper[mask])
    return KeepOption(_indices(mask), p, s, upper)


def advise_keep(
    phase: int,
    dice: Sequence[DieToken | Face],
    keep: Sequence[int],
    rolls_left: int,
    rules: HouseRules = _DEFAULT_RULES,
    dice_set: DiceSet | None = None,
) -> tuple[KeepOption, KeepOption]:
    """The figures of one keep (indices into `dice`), played on for the best chance and for
    the best score: (chance-first plan, score-first plan). Keeping every die ends the turn."""
    n = len(dice)
    if any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n for i in keep):
        raise ValueError(f"keep indices must be whole numbers 0..{n - 1}, got {list(keep)!r}")
    mask = sum(1 << i for i in set(keep))
    values, keep_all = _figures(phase, dice, rolls_left, rules, dice_set)
    if values is None:
        return keep_all, keep_all
    if values.refine is not None:
        values.refine(mask, (True, False))
    return _option(values, mask, score_first=False), _option(values, mask, score_first=True)


def _figures(
    phase: int, dice: Sequence[DieToken | Face], rolls_left: int, rules: HouseRules, dice_set: DiceSet | None
) -> tuple[_Values | None, KeepOption]:
    """Every keep mask's figures (None when no roll is left) and the stop-now option."""
    dice_set = dice_set or standard_set()
    tokens = _tokens(dice, dice_set)
    _check(phase, rolls_left)
    readings = assignments(tokens, dice_set)  # raises when the faces cannot all be showing
    final = best_score(phase, [t.face for t in tokens], rules)
    keep_all = KeepOption(tuple(range(len(tokens))), 1.0 if final is not None else 0.0, float(final or 0))
    if rolls_left == 0:
        return None, keep_all
    if phase == COLOUR_PHASE:
        values = _colour_values(tokens, readings, rolls_left, rules, dice_set)
    else:
        values = _value_values(phase, tokens, readings[0], rolls_left, rules, dice_set)
    full = (1 << len(tokens)) - 1
    # Keeping everything ends the turn: its figures are the dice as they stand.
    for a, b in (values.complete_first, values.score_first[::-1]):
        a[full], b[full] = keep_all.p_complete, keep_all.expected_score
    if values.score_upper is not None:
        values.score_upper[full] = keep_all.expected_score
    return values, keep_all


def _tokens(dice: Sequence[DieToken | Face], dice_set: DiceSet) -> list[DieToken]:
    tokens = [d if isinstance(d, DieToken) else DieToken(d) for d in dice]
    if len(tokens) != len(dice_set.dice):
        # A turn always rolls every die, so the advice needs all of them.
        raise DiceError(f"the advice needs all {len(dice_set.dice)} dice showing, got {len(tokens)}")
    return tokens


def _check(phase: int, rolls_left: int) -> None:
    if isinstance(phase, bool) or not isinstance(phase, int) or not 1 <= phase <= 10:
        raise ValueError(f"phase must be a whole number 1..10, got {phase!r}")
    if isinstance(rolls_left, bool) or not isinstance(rolls_left, int) or not 0 <= rolls_left <= MAX_ROLLS_LEFT:
        raise ValueError(f"rolls left must be 0, 1 or 2 (a turn has 3 rolls), got {rolls_left!r}")


def _indices(mask: int) -> tuple[int, ...]:
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


def _floats(pair: tuple[np.ndarray, np.ndarray], mask: int) -> tuple[float, float]:
    """(first, second) of a plan; sums of probabilities may land a hair outside [0, 1]."""
    return min(max(float(pair[0][mask]), 0.0), 1.0), float(pair[1][mask])


def _choose(primary: np.ndarray, secondary: np.ndarray) -> int:
    """The best mask: highest primary, then secondary (each within TIE of the best); among
    plans tied on both, the one keeping more dice (fewer to pick up, and a die that cannot
    matter stays put), then the one whose kept indices come first."""
    top = primary >= primary.max() - TIE
    top &= secondary >= secondary[top].max() - TIE
    tied = np.flatnonzero(top)
    return int(min(tied, key=lambda m: (-bin(int(m)).count("1"), _indices(int(m)))))


@lru_cache(maxsize=16)
def _mask_bits(n: int) -> np.ndarray:
    """bits[m, i] = 1 when mask m keeps token i (read-only: shared between calls)."""
    bits = (np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1
    bits.setflags(write=False)
    return bits


# ---- Phases other than 8: numbers only -------------------------------------------------


def value_tables(phase: int, rules: HouseRules = _DEFAULT_RULES, dice_set: DiceSet | None = None) -> ValueTables:
    """The phase's tables, built on first use (about a second) and kept in memory."""
    return _value_tables(phase, rules, None if dice_set is None or dice_set == standard_set() else dice_set)


@lru_cache(maxsize=32)  # called with positional arguments only, so one entry per table
def _value_tables(phase: int, rules: HouseRules, dice_set: DiceSet | None) -> ValueTables:
    return build_value_tables(phase, dice_set or standard_set(), rules)


def _value_values(
    phase: int, tokens: list[DieToken], reading: tuple[int, ...], rolls_left: int, rules: HouseRules, dice_set: DiceSet
) -> _Values:
    tables = value_tables(phase, rules, dice_set)
    vg = tables.vg
    # Only the numbers matter, and every reading puts a number on a die of the same group.
    bits = _mask_bits(len(tokens))
    index = []
    for g, group in enumerate(vg.groups):
        onehot = np.zeros((len(tokens), group.outcomes), dtype=np.int64)
        for t, (token, d) in enumerate(zip(tokens, reading)):
            if vg.die_group[dice_set.dice[d].id] == g:
                onehot[t, vg.locate(token.face.value, g)] = 1
        index.append(group.codes(bits @ onehot))
    at = tuple(index)
    cf, sf = tables.complete_first.keep[rolls_left], tables.score_first.keep[rolls_left]
    return _Values((cf[0][at].copy(), cf[1][at].copy()), (sf[0][at].copy(), sf[1][at].copy()))


# ---- Phase 8: colours on physical dice ---------------------------------------------------


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


def _colour_values(
    tokens: list[DieToken], readings: list[tuple[int, ...]], rolls_left: int, rules: HouseRules, dice_set: DiceSet
) -> _Values:
    """Average over the readings (token -> die maps) of each keep mask's figures."""
    tables = colour_tables(rules, dice_set)
    n = len(tokens)
    totals = [np.zeros(1 << n) for _ in range(5)]
    for reading in readings:
        parts = _one_reading(tokens, reading, rolls_left, tables)
        for total, part in zip(totals, parts):
            total += part
    cp, cs, ss, sp, upper = (t / len(readings) for t in totals)
    values = _Values((cp, cs), (ss, sp), upper)
    if rolls_left == 2:
        full = (1 << n) - 1
        budget = [EXACT_OUTCOMES]  # outcomes left to enumerate in this call

        def refine(mask: int, objectives: tuple[bool, ...]) -> None:
            """Make `mask`'s figures exact for these objectives (True: score-first), if the
            enumeration fits what is left of the budget."""
            outcomes = len(readings) * 6 ** (n - bin(mask).count("1"))
            if mask == full or outcomes > budget[0]:
                return
            budget[0] -= outcomes
            exact = _exact_two_rolls(tokens, readings, mask, tables.last_roll, objectives)
            for score_first, (first, second) in zip(objectives, exact):
                if score_first:
                    ss[mask], sp[mask] = first, second
                    upper[mask] = first  # exact: no bound to report
                else:
                    cs[mask] = second
                    refined_chance_plans.add(mask)

        refined_chance_plans: set[int] = set()
        values = _Values((cp, cs), (ss, sp), upper, refine, refined_chance_plans)
    return values


def _one_reading(tokens: list[DieToken], reading: tuple[int, ...], rolls_left: int, tables: ColourTables):
    """(complete-first p, s, score-first s, p, upper bound on s) of every mask for one reading."""
    bits = _mask_bits(len(tokens))
    per_colour = [_single_colour_figures(tokens, reading, rolls_left, sc, bits) for sc in tables.colours]
    if rolls_left == 1:
        # No later choice: the figures of a keep are the same for both objectives, and exact.
        p = sum(f[0] for f in per_colour)
        s = sum(f[1] for f in per_colour)
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
    return np.argmax(np.where(top, secondary, -np.inf), axis=1)


def _single_colour_figures(tokens, reading, rolls_left: int, sc: SingleColour, bits: np.ndarray):
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


def _class_figure(tokens, reading, tables: ColourTables, bits: np.ndarray) -> np.ndarray:
    """Exact best chance of completing (two rolls left) of every mask, from the class DP."""
    classes = tables.classes
    index = []
    for k, group in enumerate(classes.groups):
        onehot = np.zeros((len(tokens), NCOL), dtype=np.int64)
        for t, (token, d) in enumerate(zip(tokens, reading)):
            if classes.die_class[d] == k:
                onehot[t, COLORS.index(token.face.color)] = 1
        index.append(group.codes(bits @ onehot))
    return tables.completion[tuple(index)]


def warm_up(rules: HouseRules = _DEFAULT_RULES, phases: Sequence[int] = tuple(range(1, 11))) -> int:
    """Build the tables of these phases now (a server may call it at start so that no player
    waits for a first use: about 1 s per phase, 3 s for Phase 8). Returns the bytes held."""
    held = 0
    for number in phases:
        _check(number, 0)
        tables = colour_tables(rules) if number == COLOUR_PHASE else value_tables(number, rules)
        held += tables.nbytes
    return held


# Enumerating the reroll's outcomes costs a few lookups each. One advice enumerates at most
# this many outcomes (summed over readings and keeps; 6**7 take 50-130 ms on a loaded 2-CPU
# machine), so a decision stays well under 250 ms; past it the bounds stand instead.
EXACT_OUTCOMES = 6**7


def _exact_two_rolls(
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
        sums += _exact_one_reading(kept, play, columns)
    means = sums / len(readings)
    return [(float(means[2 * k]), float(means[2 * k + 1])) for k in range(len(objectives))]


def _exact_one_reading(kept: dict[int, Face], play: LastRollPlay, columns: Sequence[int]) -> np.ndarray:
    """Mean over every outcome of the dice not in `kept` of the best one-colour last keep's
    figures; `columns` are pairs (primary, secondary) of play.tables' rows."""
    x = None
    for c, table in enumerate(play.tables):
        index = _outcome_index(kept, play, c)
        if x is None:
            x = np.empty((len(play.tables), len(columns), len(index)))
        for k, row in enumerate(columns):
            np.take(table[row], index, out=x[c, k])
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
