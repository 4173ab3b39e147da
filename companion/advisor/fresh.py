"""A fresh turn (3 rolls, nothing kept yet): each phase's chance and expected score."""

from __future__ import annotations

from dataclasses import dataclass

from companion.advisor.colour_advice import colour_tables
from companion.advisor.value_advice import value_tables
from companion.advisor.colour_model import colour_groups, colour_rewards
from companion.advisor.product_dp import expand_all, solve
from companion.dice import DiceSet, standard_set
from companion.rules.evaluation import HouseRules
from companion.rules.phases import COLOR_PHASE, ROLLS_PER_TURN

_DEFAULT_RULES = HouseRules()


@dataclass(frozen=True)
class FreshTurn:
    """best_*: the plan with the best chance; score_*: the plan with the best expected score.

    For Phase 8 the expected scores come from plans that decide on colours only (exact for
    those plans); score_upper bounds the best play's expected score from above."""

    phase: int
    best_p_complete: float
    best_expected_score: float
    score_p_complete: float
    score_expected_score: float
    score_upper: float | None = None


def fresh_turn(phase: int, rules: HouseRules = _DEFAULT_RULES, dice_set: DiceSet | None = None) -> FreshTurn:
    """Phases other than 8: about a second (the tables). Phase 8: about a minute."""
    if phase != COLOR_PHASE:
        tables = value_tables(phase, rules, dice_set)
        cp, cs = tables.fresh["complete"]
        ss, sp = tables.fresh["score"]
        return FreshTurn(phase, cp, cs, sp, ss)
    return _colour_fresh_turn(rules, dice_set or standard_set())


def _colour_fresh_turn(rules: HouseRules, dice_set: DiceSet) -> FreshTurn:
    exact_p = colour_tables(rules, dice_set).fresh_p_complete
    groups = colour_groups(dice_set)
    figures = {}
    for name, optimistic in (("mean", False), ("best", True)):
        complete, score = colour_rewards(dice_set, rules, optimistic)
        for objective, (a, b) in (("complete", (complete, score)), ("score", (score, complete))):
            if optimistic and objective == "complete":
                continue  # the relaxation is only needed for the score bound
            last = ROLLS_PER_TURN - 1  # the decision after the first roll
            solution = solve(groups, a, b, last, keep_tables=False)
            figures[name, objective] = tuple(float(expand_all(t, groups).flat[0]) for t in solution.full[last])
    cp, cs = figures["mean", "complete"]
    ss, sp = figures["mean", "score"]
    upper = figures["best", "score"][0]
    # The colour DP and the class DP answer the same question for the chance: they must agree.
    assert abs(cp - exact_p) < 1e-9, (cp, exact_p)
    return FreshTurn(COLOR_PHASE, exact_p, cs, sp, ss, upper)
