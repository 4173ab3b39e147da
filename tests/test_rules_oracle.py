"""Property tests: the evaluator against the brute-force oracle in tests/rules_oracle.py."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.dice import COLORS, Face, standard_set
from companion.rules import HouseRules, best_score, evaluate
from rules_checks import assert_legal, rank_of
from rules_oracle import oracle_rank

# Any numbers, or a roll built from two or three numbers and wilds, so that sets, numbers
# shared between groups, all-wild groups and ties come up often.
faces = st.builds(Face, st.one_of(st.none(), st.integers(1, 10)), st.sampled_from(COLORS))


@st.composite
def few_numbers(draw) -> list[Face]:
    numbers = draw(st.lists(st.integers(1, 10), min_size=1, max_size=3))
    values = st.one_of(st.none(), st.sampled_from(numbers))
    return draw(st.lists(st.builds(Face, values, st.sampled_from(COLORS)), min_size=5, max_size=10))


rolls = st.one_of(st.lists(faces, min_size=1, max_size=10), st.lists(faces, min_size=7, max_size=10), few_numbers())
phases = st.integers(1, 10)


def agree(phase: int, roll: list[Face], strict: bool) -> None:
    rules = HouseRules(natural_in_every_group=strict)
    result = evaluate(phase, roll, rules)
    expected = oracle_rank(phase, roll, strict)
    assert best_score(phase, roll, rules) == result.score
    if expected is None:
        assert not result.complete and result.score is None and result.groups == ()
        return
    assert_legal(result, roll, strict)
    assert rank_of(result, roll) == expected


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(phases, rolls, st.booleans())
def test_evaluator_matches_the_oracle_on_any_faces(phase, roll, strict):
    agree(phase, roll, strict)


@st.composite
def physical_rolls(draw) -> list[Face]:
    """A roll of the standard set: some of the 10 dice, each on one of its faces, in any order."""
    dice = list(standard_set().dice)
    kept = draw(st.lists(st.sampled_from(dice), min_size=1, max_size=10, unique_by=lambda d: d.id))
    return [draw(st.sampled_from(d.faces)) for d in kept]


@settings(max_examples=300, deadline=None)
@given(phases, physical_rolls(), st.booleans())
def test_evaluator_matches_the_oracle_on_rolls_of_the_standard_set(phase, roll, strict):
    agree(phase, roll, strict)


def test_evaluator_matches_the_oracle_on_seeded_random_rolls():
    # A fixed sweep besides hypothesis: every phase, both rules, full 10-dice rolls.
    rng = random.Random(20261129)
    dice = standard_set().dice
    for _ in range(150):
        roll = [rng.choice(d.faces) for d in dice]
        rng.shuffle(roll)
        for phase in range(1, 11):
            for strict in (False, True):
                agree(phase, roll, strict)


def test_evaluator_matches_the_oracle_on_seeded_rolls_of_few_numbers():
    # Two numbers and wilds: where the house rule and shared numbers bite.
    rng = random.Random(649)
    for _ in range(300):
        numbers = rng.sample(range(1, 11), 2)
        roll = [Face(rng.choice([None, *numbers]), rng.choice(COLORS)) for _ in range(rng.randint(6, 10))]
        for phase in range(1, 11):
            for strict in (False, True):
                agree(phase, roll, strict)


def sweep(count: int, seed: int) -> int:
    """Long check outside pytest: `count` mixed rolls, every phase, both rules; returns checks."""
    rng = random.Random(seed)
    dice = standard_set().dice
    checks = 0
    for k in range(count):
        if k % 3 == 0:  # the physical set, some of its dice
            roll = [rng.choice(d.faces) for d in dice]
            rng.shuffle(roll)
            roll = roll[: rng.randint(1, 10)]
        elif k % 3 == 1:  # any faces
            roll = [Face(rng.choice([None] * 3 + list(range(1, 11))), rng.choice(COLORS)) for _ in range(rng.randint(1, 10))]
        else:  # one to three numbers and wilds
            numbers = rng.sample(range(1, 11), rng.randint(1, 3))
            roll = [Face(rng.choice([None, *numbers]), rng.choice(COLORS)) for _ in range(rng.randint(5, 10))]
        for phase in range(1, 11):
            for strict in (False, True):
                agree(phase, roll, strict)
                checks += 1
    return checks


if __name__ == "__main__":
    # .venv/bin/python tests/test_rules_oracle.py ROLLS SEED
    import sys

    print(f"{sweep(int(sys.argv[1]), int(sys.argv[2])):,} evaluations agree with the oracle")
