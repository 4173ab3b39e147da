"""The roll advice: which dice to keep, with the exact odds of each plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from companion.advisor.assignment import assignments
from companion.advisor.colour_advice import colour_figures, colour_tables
from companion.advisor.masks import KeepFigures
from companion.advisor.product_dp import TIE
from companion.advisor.value_advice import value_figures, value_tables
from companion.dice import DiceError, DiceSet, DieToken, Face, standard_set
from companion.rules.evaluation import HouseRules
from companion.rules.evaluator import best_score
from companion.rules.phases import COLOR_PHASE, MAX_ROLLS_LEFT, PHASE_COUNT, ROLLS_PER_TURN

_DEFAULT_RULES = HouseRules()


@dataclass(frozen=True)
class KeepOption:
    """A plan: keep these dice (indices into the given dice) now and play on optimally.

    p_complete: probability that the phase is made by the end of the turn;
    expected_score: expected phase score, a miss counting 0."""

    keep: tuple[int, ...]
    p_complete: float
    expected_score: float
    # None when the figures are exact. Set only for Phase 8 with two rolls left when the
    # reroll was too big to enumerate (or exact_scores=False): expected_score is then exact
    # for "keep these, then on the last roll play for one colour" (for best_score the colour
    # with the best expected score, for best the likeliest one), and the best play's
    # expected score after this keep lies between it and this bound. p_complete of `best`
    # is exact in every case (it hedges between colours).
    expected_score_upper: float | None = None

    def to_json(self) -> dict[str, Any]:
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

    def to_json(self) -> dict[str, Any]:
        return {"best": self.best.to_json(), "best_score": self.best_score.to_json(), "keep_all": self.keep_all.to_json()}


def advise(
    phase: int,
    dice: Sequence[DieToken | Face],
    rolls_left: int,
    rules: HouseRules = _DEFAULT_RULES,
    dice_set: DiceSet | None = None,
    *,
    exact_scores: bool = True,
) -> Advice:
    """Advice for the 10 dice showing with `rolls_left` (0..MAX_ROLLS_LEFT) rolls to come.

    exact_scores=False skips the enumeration that makes Phase 8's two-roll expected scores
    exact (up to ~0.1 s): the keeps are the same, those scores are then bounds."""
    values, keep_all = _figures(phase, dice, rolls_left, rules, dice_set)
    if values is None:
        return Advice(phase, 0, keep_all, keep_all, keep_all)
    best = _choose(*values.complete_first)
    best_s = _choose(*values.score_first)
    if values.refine is not None and exact_scores:
        # The score plan's figure first: it is the one a bound would blur most.
        values.refine(best_s, (True,))
        values.refine(best, (False,))
    return Advice(
        phase,
        rolls_left,
        _option(values, best, score_first=False),
        _option(values, best_s, score_first=True),
        keep_all,
    )


def _option(values: KeepFigures, mask: int, score_first: bool) -> KeepOption:
    pair = values.score_first[::-1] if score_first else values.complete_first
    p, s = _floats(pair, mask)
    upper = None
    bound = values.score_upper
    exact = bound is None or (not score_first and mask in (values.refined_chance_plans or ()))
    if not exact and bound is not None and bound[mask] > s + 1e-9:
        upper = float(bound[mask])
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
) -> tuple[KeepFigures | None, KeepOption]:
    """Every keep mask's figures (None when no roll is left) and the stop-now option."""
    dice_set = dice_set or standard_set()
    tokens = _tokens(dice, dice_set)
    _check(phase, rolls_left)
    readings = assignments(tokens, dice_set)  # raises when the faces cannot all be showing
    final = best_score(phase, [t.face for t in tokens], rules)
    keep_all = KeepOption(tuple(range(len(tokens))), 1.0 if final is not None else 0.0, float(final or 0))
    if rolls_left == 0:
        return None, keep_all
    if phase == COLOR_PHASE:
        values = colour_figures(tokens, readings, rolls_left, rules, dice_set)
    else:
        values = value_figures(phase, tokens, readings[0], rolls_left, rules, dice_set)
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
    if isinstance(phase, bool) or not isinstance(phase, int) or not 1 <= phase <= PHASE_COUNT:
        raise ValueError(f"phase must be a whole number 1..{PHASE_COUNT}, got {phase!r}")
    if isinstance(rolls_left, bool) or not isinstance(rolls_left, int) or not 0 <= rolls_left <= MAX_ROLLS_LEFT:
        choices = ", ".join(str(k) for k in range(MAX_ROLLS_LEFT)) + f" or {MAX_ROLLS_LEFT}"
        raise ValueError(f"rolls_left must be {choices} (a turn has {ROLLS_PER_TURN} rolls), got {rolls_left!r}")


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


def warm_up(rules: HouseRules = _DEFAULT_RULES, phases: Sequence[int] = tuple(range(1, PHASE_COUNT + 1))) -> int:
    """Build the tables of these phases now (a server may call it at start so that no player
    waits for a first use: about 1 s per phase, 3 s for Phase 8). Returns the bytes held."""
    held = 0
    for number in phases:
        _check(number, 0)
        tables = colour_tables(rules) if number == COLOR_PHASE else value_tables(number, rules)
        held += tables.nbytes
    return held
