"""The roll advice: which dice to keep, with the exact odds of each plan."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from companion.advisor.assignment import assignments
from companion.advisor.colour_model import PHASE as COLOUR_PHASE
from companion.advisor.colour_model import ColourTables, LastRollTables, build_colour_tables, last_roll_tables
from companion.advisor.colour_model import colour_rewards, colour_groups, NCOL
from companion.advisor.product_dp import TIE, Group, solve
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

    def to_json(self) -> dict:
        return {"keep": list(self.keep), "p_complete": self.p_complete, "expected_score": self.expected_score}


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


def advise(
    phase: int,
    dice: Sequence[DieToken | Face],
    rolls_left: int,
    rules: HouseRules = _DEFAULT_RULES,
    dice_set: DiceSet | None = None,
) -> Advice:
    """Advice for the 10 dice showing with `rolls_left` (0, 1 or 2) rolls to come."""
    dice_set = dice_set or standard_set()
    tokens = _tokens(dice, dice_set)
    _check(phase, rolls_left)
    readings = assignments(tokens, dice_set)  # raises when the faces cannot all be showing
    faces = [t.face for t in tokens]
    final = best_score(phase, faces, rules)
    everything = tuple(range(len(tokens)))
    keep_all = KeepOption(everything, 1.0 if final is not None else 0.0, float(final or 0))
    if rolls_left == 0:
        return Advice(phase, 0, keep_all, keep_all, keep_all)
    if phase == COLOUR_PHASE:
        values = _colour_values(tokens, readings, rolls_left, rules, dice_set)
    else:
        values = _value_values(phase, tokens, readings[0], rolls_left, rules, dice_set)
    full = (1 << len(tokens)) - 1
    # Keeping everything ends the turn: its figures are the dice as they stand.
    for a, b in (values.complete_first, values.score_first[::-1]):
        a[full], b[full] = keep_all.p_complete, keep_all.expected_score
    best = _choose(*values.complete_first)
    best_s = _choose(*values.score_first)
    return Advice(
        phase,
        rolls_left,
        KeepOption(_indices(best), *_floats(values.complete_first, best)),
        KeepOption(_indices(best_s), *_floats(values.score_first[::-1], best_s)),
        keep_all,
    )


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
    return float(pair[0][mask]), float(pair[1][mask])


def _choose(primary: np.ndarray, secondary: np.ndarray) -> int:
    """The best mask: highest primary, then secondary; on a tie the plan keeping more dice
    (fewer to pick up, and a die that cannot matter stays put), then the lowest indices."""
    masks = sorted(range(len(primary)), key=lambda m: (-bin(m).count("1"), _indices(m)))
    best = masks[0]
    for m in masks[1:]:
        p, s, bp, bs = primary[m], secondary[m], primary[best], secondary[best]
        if p > bp + TIE or (p >= bp - TIE and s > bs + TIE):
            best = m
    return best


def _mask_bits(n: int) -> np.ndarray:
    """bits[m, i] = 1 when mask m keeps token i."""
    return (np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1


# ---- Phases other than 8: numbers only -------------------------------------------------


@lru_cache(maxsize=32)
def value_tables(phase: int, rules: HouseRules = _DEFAULT_RULES, dice_set: DiceSet | None = None) -> ValueTables:
    """The phase's tables, built on first use (about a second) and kept in memory."""
    return build_value_tables(phase, dice_set or standard_set(), rules)


def _value_values(
    phase: int, tokens: list[DieToken], reading: tuple[int, ...], rolls_left: int, rules: HouseRules, dice_set: DiceSet
) -> _Values:
    tables = value_tables(phase, rules, None if dice_set is standard_set() else dice_set)
    vg = tables.vg
    # Only the numbers matter, and every reading puts a number on a die of the same group.
    kinds = [(vg.die_group[dice_set.dice[d].id], t.face.value) for t, d in zip(tokens, reading)]
    columns = sorted(set(kinds), key=lambda k: (k[0], k[1] is None, k[1] or 0))
    onehot = np.array([[k == col for col in columns] for k in kinds], dtype=np.int64)
    counts = _mask_bits(len(tokens)) @ onehot
    index = np.empty((len(counts), len(vg.groups)), dtype=np.int64)
    cache: dict[tuple, tuple[int, ...]] = {}
    for m, row in enumerate(map(tuple, counts)):
        if row not in cache:
            cache[row] = tables.state_index([col for col, n in zip(columns, row) for _ in range(n)])
        index[m] = cache[row]
    at = tuple(index.T)
    cf, sf = tables.complete_first.keep[rolls_left], tables.score_first.keep[rolls_left]
    return _Values((cf[0][at].copy(), cf[1][at].copy()), (sf[0][at].copy(), sf[1][at].copy()))


# ---- Phase 8: colours on physical dice ---------------------------------------------------


@lru_cache(maxsize=4)
def colour_last_roll(rules: HouseRules = _DEFAULT_RULES, dice_set: DiceSet | None = None) -> LastRollTables:
    """Exact last-roll tables (numbers included): a fraction of a second to build."""
    return last_roll_tables(dice_set or standard_set(), rules)


@lru_cache(maxsize=4)
def colour_plan(rules: HouseRules = _DEFAULT_RULES, dice_set: DiceSet | None = None) -> "ColourPlan":
    """V_1 of the colour DP for both objectives (the slow part: seconds, once)."""
    dice_set = dice_set or standard_set()
    groups = colour_groups(dice_set)
    complete, score = colour_rewards(dice_set, rules)
    by_completion = solve(groups, complete, score, 1, keep_tables=False)
    by_score = solve(groups, score, complete, 1, keep_tables=False)
    tables = (*by_completion.full[1], *by_score.full[1])
    return ColourPlan(groups, np.stack(tables, axis=-1))


@dataclass(frozen=True)
class ColourPlan:
    """V_1 on full colour states (axis d: colour of die d), last axis: completion-first
    (p, score) then score-first (score, p)."""

    groups: tuple[Group, ...]
    stacked: np.ndarray


def _colour_values(
    tokens: list[DieToken], readings: list[tuple[int, ...]], rolls_left: int, rules: HouseRules, dice_set: DiceSet
) -> _Values:
    """Average over the readings (token -> die maps) of each keep mask's figures."""
    key_set = None if dice_set is standard_set() else dice_set
    n = len(tokens)
    totals = [np.zeros(1 << n) for _ in range(4)]
    contracted: dict[tuple[int, ...], np.ndarray] = {}  # readings often share the colours per die
    for reading in readings:
        if rolls_left == 1:
            parts = _last_roll(tokens, reading, colour_last_roll(rules, key_set))
        else:
            parts = _colour_contract(tokens, reading, colour_plan(rules, key_set), contracted)
        for total, part in zip(totals, parts):
            total += part
    cp, cs, sp, ss = (t / len(readings) for t in totals)
    return _Values((cp, cs), (sp, ss))


def _last_roll(tokens: list[DieToken], reading: tuple[int, ...], tables: LastRollTables):
    """Exact figures of every keep mask when this is the last roll (numbers included)."""
    n = len(tokens)
    bits = _mask_bits(n)
    p_total, s_total = np.zeros(1 << n), np.zeros(1 << n)
    die_of_token = np.array(reading)
    for c in range(NCOL):
        group_index = [
            Group(1, (1.0,) + (0.0,) * len(tables.options[c][d])) for d in range(n)
        ]  # only the index layout is used
        kept_index = np.empty(n, dtype=np.int64)
        empty_index = np.empty(n, dtype=np.int64)
        for t, token in enumerate(tokens):
            d = die_of_token[t]
            faces_c = tables.options[c][d]
            option = 1 + faces_c.index(token.face) if token.face in faces_c else 0
            g = group_index[d]
            unit = tuple(int(o == option) for o in range(g.outcomes))
            kept_index[t] = g.index[unit]
            empty_index[t] = g.index[(0,) * g.outcomes]
        per_token = np.where(bits == 1, kept_index[None, :], empty_index[None, :])
        per_die = np.empty_like(per_token)
        per_die[:, die_of_token] = per_token
        at = tuple(per_die.T)
        p_total += tables.complete[c][at]
        s_total += tables.score[c][at]
    return p_total, s_total, s_total.copy(), p_total.copy()


def _colour_contract(
    tokens: list[DieToken], reading: tuple[int, ...], plan: ColourPlan, memo: dict[tuple[int, ...], np.ndarray]
):
    """W_2 of every keep mask: E over the rerolled dice's colours of V_1, one die at a time.

    x has shape (done, 4, rest): `done` indexes the dice already turned into a 2-slot axis
    (0 = rerolled, 1 = kept), the middle axis is the next die's colour, and the four tables
    ride along in the last axis, so each step is one small contiguous contraction."""
    colours = [0] * len(plan.groups)
    for t, d in zip(tokens, reading):
        colours[d] = COLORS.index(t.face.color)
    key = tuple(colours)
    if key not in memo:
        memo[key] = _contract(plan, key)
    by_die = memo[key]
    by_mask = _by_token_mask(by_die, reading)
    return [by_mask[:, k] for k in range(by_mask.shape[1])]


def _contract(plan: ColourPlan, colours: tuple[int, ...]) -> np.ndarray:
    x = plan.stacked
    for d, group in enumerate(plan.groups):
        x = x.reshape(1 << d, group.outcomes, -1)
        out = np.empty((x.shape[0], 2, x.shape[2]))
        rerolled, scratch = out[:, 0, :], np.empty(out[:, 0, :].shape)
        np.multiply(x[:, 0, :], group.probs[0], out=rerolled)
        for o in range(1, group.outcomes):
            np.multiply(x[:, o, :], group.probs[o], out=scratch)
            rerolled += scratch
        out[:, 1, :] = x[:, colours[d], :]
        x = out
    return x.reshape((2,) * len(plan.groups) + (-1,))


def _by_token_mask(x: np.ndarray, reading: tuple[int, ...]) -> np.ndarray:
    n = len(reading)
    bits = _mask_bits(n)
    per_die = np.empty_like(bits)
    per_die[:, list(reading)] = bits
    return x[tuple(per_die.T)]
