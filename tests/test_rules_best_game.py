"""The best possible game with the standard set scores 649, as the printed rules say.

Each phase's best is the maximum over every roll the 10 physical dice can show. Phases other
than 8 depend only on the numbers rolled, so the rolls are enumerated as value multisets:
dice with the same numbers on their faces (the four low dice, the six high dice) are
interchangeable. Phase 8 depends only, for each colour, on which dice show that colour and
with which face, so each colour is enumerated on its own.
"""

from __future__ import annotations

from itertools import combinations_with_replacement, product

import pytest

from companion.dice import COLORS, Face, standard_set
from companion.rules import best_score

FIVE_PHASE_BONUS = 40
FIRST_FINISH_BONUS = 40
COLOR_PHASE = 8


def value_multisets() -> set[tuple]:
    """Every multiset of numbers (None = wild) the standard set can roll, as sorted tuples."""
    by_numbers: dict[tuple, int] = {}
    for die in standard_set().dice:
        numbers = tuple(sorted({f.value for f in die.faces}, key=lambda v: (v is None, v or 0)))
        by_numbers[numbers] = by_numbers.get(numbers, 0) + 1
    parts = [list(combinations_with_replacement(numbers, n)) for numbers, n in by_numbers.items()]
    return {sum(choice, ()) for choice in product(*parts)}


def best_by_numbers(phase: int, rolls: list[list[Face]]) -> int:
    best = -1
    for roll in rolls:
        score = best_score(phase, roll)
        if score is not None and score > best:
            best = score
    return best


def best_colour_phase() -> int:
    best = -1
    for color in COLORS:
        # Per die: each face of this colour, or "some other colour" (a face that does not count).
        options = []
        for die in standard_set().dice:
            mine = [f for f in die.faces if f.color is color]
            other = [f for f in die.faces if f.color is not color][:1]
            options.append(mine + other)
        for roll in product(*options):
            score = best_score(COLOR_PHASE, list(roll))
            if score is not None and score > best:
                best = score
    return best


def test_value_multisets_count():
    # 4 low dice over {1,2,3,4,W} and 6 high dice over {5..10}: C(8,4) * C(11,5).
    assert len(value_multisets()) == 70 * 462


@pytest.mark.slow
def test_best_possible_game_is_649_with_phase8_at_56():
    # The colour is irrelevant outside phase 8; red is as good as any.
    rolls = [[Face(v, COLORS[0]) for v in numbers] for numbers in value_multisets()]
    bests = {p: best_by_numbers(p, rolls) for p in range(1, 11) if p != COLOR_PHASE}
    bests[COLOR_PHASE] = best_colour_phase()
    assert bests[COLOR_PHASE] == 56
    assert sum(bests[p] for p in range(1, 6)) >= 221  # the Five Phase Bonus is reachable
    assert sum(bests.values()) + FIVE_PHASE_BONUS + FIRST_FINISH_BONUS == 649
