"""Phases other than 8: every keep mask's figures from the value tables."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from companion.advisor.masks import KeepFigures, mask_bits
from companion.advisor.value_model import ValueTables, build_value_tables
from companion.dice import DiceSet, DieToken, standard_set
from companion.rules.evaluation import HouseRules

_DEFAULT_RULES = HouseRules()


def value_tables(phase: int, rules: HouseRules = _DEFAULT_RULES, dice_set: DiceSet | None = None) -> ValueTables:
    """The phase's tables, built on first use (about a second) and kept in memory."""
    return _value_tables(phase, rules, None if dice_set is None or dice_set == standard_set() else dice_set)


@lru_cache(maxsize=32)  # called with positional arguments only, so one entry per table
def _value_tables(phase: int, rules: HouseRules, dice_set: DiceSet | None) -> ValueTables:
    return build_value_tables(phase, dice_set or standard_set(), rules)


def value_figures(
    phase: int, tokens: list[DieToken], reading: tuple[int, ...], rolls_left: int, rules: HouseRules, dice_set: DiceSet
) -> KeepFigures:
    tables = value_tables(phase, rules, dice_set)
    vg = tables.vg
    # Only the numbers matter, and every reading puts a number on a die of the same group.
    bits = mask_bits(len(tokens))
    index = []
    for g, group in enumerate(vg.groups):
        onehot = np.zeros((len(tokens), group.outcomes), dtype=np.int64)
        for t, (token, d) in enumerate(zip(tokens, reading)):
            if vg.die_group[dice_set.dice[d].id] == g:
                onehot[t, vg.locate(token.face.value, g)] = 1
        index.append(group.codes(bits @ onehot))
    at = tuple(index)
    cf, sf = tables.complete_first.keep[rolls_left], tables.score_first.keep[rolls_left]
    return KeepFigures((cf[0][at].copy(), cf[1][at].copy()), (sf[0][at].copy(), sf[1][at].copy()))


