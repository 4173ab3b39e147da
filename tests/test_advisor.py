"""The roll advisor against exhaustive enumeration with the rules evaluator.

Every figure the advisor gives for a keep on the last roll is compared with the average of
the evaluator over every face the rerolled dice can show (exact to float rounding). With
two rolls left, the figures must be the average, over every outcome of the reroll, of the
best plan's figures on the last roll (the Bellman equation, checked outcome by outcome).
"""

from __future__ import annotations

import collections
import itertools
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.advisor import Advice, advise, advise_keep
from companion.advisor import colour_advice
from companion.cli import main
from companion.dice import DiceError, DieToken, Face, parse_tokens, standard_set
from companion.rules import HouseRules
from companion.rules.evaluator import best_score

DICE = standard_set().dice
ALL_PHASES = list(range(1, 11))
EXACT = 1e-9


def random_roll(rng: random.Random) -> list[Face]:
    return [rng.choice(die.faces) for die in DICE]


def named(faces: list[Face]) -> list[DieToken]:
    """Tokens that name their die, so there is a single reading."""
    return [DieToken(face, die.id) for face, die in zip(faces, DICE)]


def enumerate_keep(phase: int, faces: list[Face], keep: set[int], rules=HouseRules()) -> tuple[float, float]:
    """Exact (P complete, E score) on the last roll: every face of every rerolled die."""
    rerolled = [i for i in range(len(faces)) if i not in keep]
    hits = total = outcomes = 0
    for combo in itertools.product(*(DICE[i].faces for i in rerolled)):
        final = list(faces)
        for i, face in zip(rerolled, combo):
            final[i] = face
        score = best_score(phase, final, rules)
        outcomes += 1
        if score is not None:
            hits += 1
            total += score
    return hits / outcomes, total / outcomes


def small_rerolls(n: int = 10, most: int = 2):
    """Keep sets that reroll at most `most` dice (enumeration stays small)."""
    for k in range(most + 1):
        for rerolled in itertools.combinations(range(n), k):
            yield set(range(n)) - set(rerolled)


@pytest.mark.parametrize("phase", ALL_PHASES)
def test_last_roll_figures_equal_exhaustive_enumeration(phase):
    rng = random.Random(100 + phase)
    for _ in range(2):
        faces = random_roll(rng)
        tokens = named(faces)
        for keep in small_rerolls():
            expected = enumerate_keep(phase, faces, keep)
            chance_plan, score_plan = advise_keep(phase, tokens, sorted(keep), 1)
            for plan in (chance_plan, score_plan):  # no later choice: both plans are the same
                assert plan.p_complete == pytest.approx(expected[0], abs=EXACT)
                assert plan.expected_score == pytest.approx(expected[1], abs=EXACT)
                assert plan.expected_score_upper is None


@pytest.mark.parametrize("phase", [1, 8, 10])
def test_last_roll_advice_beats_every_enumerated_keep(phase):
    rng = random.Random(7 * phase)
    faces = random_roll(rng)
    advice = advise(phase, named(faces), 1)
    figures = [enumerate_keep(phase, faces, keep) for keep in small_rerolls()]
    assert advice.best.p_complete >= max(p for p, _ in figures) - EXACT
    assert advice.best_score.expected_score >= max(s for _, s in figures) - EXACT
    # The advice's own figures are those of its keep.
    chance_plan, score_plan = advise_keep(phase, named(faces), advice.best.keep, 1)
    assert chance_plan.p_complete == pytest.approx(advice.best.p_complete, abs=EXACT)
    assert score_plan.expected_score == pytest.approx(advice.best_score.expected_score, abs=EXACT)


def readings(faces: list[Face]) -> list[tuple[int, ...]]:
    """Brute force: every one-to-one map token -> die that carries its face."""
    options = [[d for d, die in enumerate(DICE) if die.has_face(f)] for f in faces]
    return [combo for combo in itertools.product(*options) if len(set(combo)) == len(combo)]


def test_phase8_unnamed_dice_average_over_every_reading():
    rng = random.Random(8)
    checked = 0
    while checked < 2:
        faces = random_roll(rng)
        rng.shuffle(faces)  # token order no longer follows the dice
        maps = readings(faces)
        if len(maps) < 2:
            continue  # want a roll that really is ambiguous
        checked += 1
        tokens = [DieToken(f) for f in faces]
        for keep in list(small_rerolls(most=1)) + [set(range(0, 10, 2))]:
            if len(keep) < 9 and keep != set(range(0, 10, 2)):
                continue
            per_reading = []
            for reading in maps:
                on_dice = [None] * 10
                for token_index, die in enumerate(reading):
                    on_dice[die] = faces[token_index]
                per_reading.append(enumerate_keep(8, on_dice, {reading[i] for i in keep}))
            p = sum(r[0] for r in per_reading) / len(per_reading)
            s = sum(r[1] for r in per_reading) / len(per_reading)
            plan, _ = advise_keep(8, tokens, sorted(keep), 1)
            assert plan.p_complete == pytest.approx(p, abs=EXACT)
            assert plan.expected_score == pytest.approx(s, abs=EXACT)


def bellman(phase: int, faces: list[Face], keep: set[int]):
    """Average over every outcome of the reroll of the last-roll advice's two plans."""
    rerolled = [i for i in range(10) if i not in keep]
    sums = [0.0, 0.0, 0.0, 0.0]
    outcomes = list(itertools.product(*(DICE[i].faces for i in rerolled)))
    for combo in outcomes:
        final = list(faces)
        for i, face in zip(rerolled, combo):
            final[i] = face
        advice = advise(phase, named(final), 1)
        for k, value in enumerate(
            (advice.best.p_complete, advice.best.expected_score, advice.best_score.p_complete, advice.best_score.expected_score)
        ):
            sums[k] += value
    return [x / len(outcomes) for x in sums]


@pytest.mark.parametrize("phase", [1, 2, 4, 7, 9, 10])
def test_two_rolls_left_is_the_average_of_the_best_last_roll(phase):
    rng = random.Random(31 + phase)
    faces = random_roll(rng)
    for keep in [set(range(10)) - {i} for i in (0, 5)] + [set(range(10)) - {3, 8}]:
        chance_plan, score_plan = advise_keep(phase, named(faces), sorted(keep), 2)
        cp, cs, sp, ss = bellman(phase, faces, keep)
        assert chance_plan.p_complete == pytest.approx(cp, abs=EXACT)
        assert chance_plan.expected_score == pytest.approx(cs, abs=EXACT)
        assert score_plan.p_complete == pytest.approx(sp, abs=EXACT)
        assert score_plan.expected_score == pytest.approx(ss, abs=EXACT)
        assert score_plan.expected_score_upper is None


def test_phase8_two_rolls_left_is_the_average_of_the_best_last_roll():
    # The chance comes from the colour-class DP (it hedges between colours); the scores from
    # enumerating the reroll with the best one-colour keep on the last roll. Both must equal
    # the Bellman average of the last-roll advice, which tries all 1,024 keeps.
    rng = random.Random(39)
    for _ in range(2):
        faces = random_roll(rng)
        for keep in (set(range(10)) - {0}, set(range(10)) - {3, 8}):
            chance_plan, score_plan = advise_keep(8, named(faces), sorted(keep), 2)
            cp, cs, sp, ss = bellman(8, faces, keep)
            assert chance_plan.p_complete == pytest.approx(cp, abs=EXACT)
            assert chance_plan.expected_score == pytest.approx(cs, abs=EXACT)
            assert score_plan.p_complete == pytest.approx(sp, abs=EXACT)
            assert score_plan.expected_score == pytest.approx(ss, abs=EXACT)
            assert chance_plan.expected_score_upper is None and score_plan.expected_score_upper is None


def test_phase8_two_rolls_bounds_hold_when_enumeration_is_too_big(monkeypatch):
    # Past the enumeration budget the score is bracketed: "play for the best colour" (exact
    # for that plan) below, the sum over colours above.
    monkeypatch.setattr(colour_advice, "EXACT_OUTCOMES", 1)
    rng = random.Random(41)
    faces = random_roll(rng)
    for keep in (set(range(10)) - {2}, set(range(10)) - {1, 6}):
        chance_plan, score_plan = advise_keep(8, named(faces), sorted(keep), 2)
        cp, cs, sp, ss = bellman(8, faces, keep)
        assert chance_plan.p_complete == pytest.approx(cp, abs=EXACT)
        assert score_plan.expected_score <= ss + EXACT <= score_plan.expected_score_upper + 2 * EXACT
        assert cs <= chance_plan.expected_score_upper + EXACT


def test_more_rolls_never_hurt():
    rng = random.Random(3)
    for phase in ALL_PHASES:
        tokens = named(random_roll(rng))
        figures = [advise(phase, tokens, k) for k in (0, 1, 2)]
        for before, after in zip(figures, figures[1:]):
            assert after.best.p_complete >= before.best.p_complete - EXACT
            assert after.best_score.expected_score >= before.best_score.expected_score - EXACT


def test_keep_all_is_the_dice_as_they_stand():
    tokens = parse_tokens("L1:1b L2:2b L3:3r L4:Wr H1:5r H2:6r H3:7r H4:9r H5:10g H6:8r".split())
    for phase in ALL_PHASES:
        score = best_score(phase, [t.face for t in tokens])
        advice = advise(phase, tokens, 2)
        assert advice.keep_all.keep == tuple(range(10))
        assert advice.keep_all.p_complete == (0.0 if score is None else 1.0)
        assert advice.keep_all.expected_score == float(score or 0)
        stop = advise(phase, tokens, 0)
        assert stop.best == stop.best_score == stop.keep_all == advice.keep_all


def test_a_perfect_roll_keeps_everything():
    # Two sets of three with the three highest numbers: nothing can do better, and on a
    # tie the advice keeps more dice.
    tokens = parse_tokens("1b 2b 3r 4r 10g 10r 10o 9r 9r 9g".split())
    advice = advise(1, tokens, 2)
    assert advice.best.keep == advice.best_score.keep == tuple(range(10))
    assert advice.best_score.expected_score == 57.0 and advice.best.p_complete == 1.0


def test_house_rule_changes_the_odds():
    # All four low dice wild: by default they make a set on their own.
    tokens = parse_tokens("Wr Wo Wb Wg 5r 5g 5b 9o 9r 10o".split())
    loose = advise(10, tokens, 0)
    strict = advise(10, tokens, 0, HouseRules(natural_in_every_group=True))
    assert loose.keep_all.expected_score == best_score(10, [t.face for t in tokens])
    strict_score = best_score(10, [t.face for t in tokens], HouseRules(natural_in_every_group=True))
    assert strict.keep_all.expected_score == float(strict_score or 0)


@pytest.mark.parametrize(
    "dice, rolls_left, error",
    [
        ("1b 2b 3r Wr 5r 6r 7r 8r 9r", 2, "all 10 dice"),
        ("1b 1b 3r Wr 5r 6r 7r 8r 9r 10g", 2, "cannot all be showing"),
        ("L2:1b 2b 3r Wr 5r 6r 7r 8r 9r 10g", 1, "no face 1b"),
    ],
)
def test_bad_dice_are_refused(dice, rolls_left, error):
    with pytest.raises(DiceError, match=error):
        advise(1, parse_tokens_loose(dice), rolls_left)


def parse_tokens_loose(text: str) -> list[DieToken]:
    out = []
    for token in text.split():
        die, _, face = token.rpartition(":")
        out.append(DieToken(parse_tokens([face])[0].face, die or None))
    return out


@pytest.mark.parametrize("phase, rolls_left", [(0, 1), (11, 1), (1, 3), (1, -1), (True, 1)])
def test_bad_phase_or_rolls_left_is_refused(phase, rolls_left):
    tokens = parse_tokens("1b 2b 3r Wr 5r 6r 7r 8r 9r 10g".split())
    with pytest.raises(ValueError):
        advise(phase, tokens, rolls_left)


def test_advice_json_shape():
    advice = advise(3, parse_tokens("1b 2b 3r Wr 5r 6r 7r 8r 9r 10g".split()), 2)
    assert isinstance(advice, Advice)
    data = advice.to_json()
    assert set(data) == {"best", "best_score", "keep_all"}
    for option in data.values():
        assert set(option) == {"keep", "p_complete", "expected_score"}
        assert all(isinstance(i, int) for i in option["keep"])
        assert 0.0 <= option["p_complete"] <= 1.0


def test_cli_prints_the_advice(capsys):
    tokens = "1b 2b 3r Wr 5r 6r 7r 8r 9r 10g".split()
    assert main(["advise", "--phase", "2", "--rolls-left", "2", *tokens]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(advise(2, parse_tokens(tokens), 2).to_json()))


@pytest.mark.parametrize(
    "args",
    [
        ["--phase", "1", "--rolls-left", "1", "1b", "2x"],
        ["--phase", "1", "--rolls-left", "1", "1b", "2b"],
        ["--phase", "12", "--rolls-left", "1", *"1b 2b 3r Wr 5r 6r 7r 8r 9r 10g".split()],
        ["--phase", "1", "--rolls-left", "3", *"1b 2b 3r Wr 5r 6r 7r 8r 9r 10g".split()],
        ["--phase", "1", "--rolls-left", "one", *"1b 2b 3r Wr 5r 6r 7r 8r 9r 10g".split()],
        ["--phase", "1", "--rolls-left", "1", *"1b 1b 3r Wr 5r 6r 7r 8r 9r 10g".split()],
        ["--phase", "1", "--rolls-left", "1"],
        ["--phase", "1", *"1b 2b 3r Wr 5r 6r 7r 8r 9r 10g".split()],
        ["--rolls-left", "1", *"1b 2b 3r Wr 5r 6r 7r 8r 9r 10g".split()],
    ],
)
def test_cli_bad_input_exits_2_with_one_line(args, capsys):
    assert main(["advise", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("companion advise: error: ")


@pytest.mark.parametrize("phase", [1, 8, 10])
def test_house_rule_figures_equal_exhaustive_enumeration(phase):
    strict = HouseRules(natural_in_every_group=True)
    rng = random.Random(500 + phase)
    faces = random_roll(rng)
    for k, keep in enumerate(small_rerolls(most=2)):
        if k % 5:
            continue  # a sample of the keeps is enough here
        expected = enumerate_keep(phase, faces, keep, strict)
        plan, _ = advise_keep(phase, named(faces), sorted(keep), 1, strict)
        assert plan.p_complete == pytest.approx(expected[0], abs=EXACT)
        assert plan.expected_score == pytest.approx(expected[1], abs=EXACT)


@pytest.mark.parametrize("phase", [3, 8])
def test_token_order_only_renames_the_keep(phase):
    rng = random.Random(60 + phase)
    faces = random_roll(rng)
    order = list(range(10))
    rng.shuffle(order)
    tokens = named(faces)
    shuffled = [tokens[i] for i in order]
    for rolls_left in (1, 2):
        plain, moved = advise(phase, tokens, rolls_left), advise(phase, shuffled, rolls_left)
        for plan, a, b in ((0, plain.best, moved.best), (1, plain.best_score, moved.best_score)):
            assert b.p_complete == pytest.approx(a.p_complete, abs=EXACT)
            assert b.expected_score == pytest.approx(a.expected_score, abs=EXACT)
            # The same dice, named by their new positions, have the same figures.
            mapped = advise_keep(phase, shuffled, sorted(order.index(i) for i in a.keep), rolls_left)[plan]
            assert mapped.p_complete == pytest.approx(a.p_complete, abs=EXACT)
            assert mapped.expected_score == pytest.approx(a.expected_score, abs=EXACT)


def test_phase8_last_roll_best_keep_is_one_colour():
    # The two-roll Phase 8 scores enumerate the reroll and play the last roll with the best
    # keep of dice of one colour. Check that no keep mixing colours does better, on random
    # rolls and on rolls split between colours (where mixing would be tempting).
    from companion.advisor.colour_advice import colour_tables, exact_one_reading

    play = colour_tables().last_roll
    rng = random.Random(77)
    rolls = [random_roll(rng) for _ in range(150)]
    while len(rolls) < 300:
        faces = random_roll(rng)
        counts = collections.Counter(f.color for f in faces)
        if sorted(counts.values())[-2:] == [3, 3] or max(counts.values()) <= 3:
            rolls.append(faces)
    for faces in rolls:
        advice = advise(8, named(faces), 1)
        shown = dict(enumerate(faces))
        chance_p, chance_s = exact_one_reading(shown, play, (0, 1))
        score_s, score_p = exact_one_reading(shown, play, (2, 3))
        assert advice.best.p_complete == pytest.approx(chance_p, abs=EXACT)
        assert advice.best.expected_score == pytest.approx(chance_s, abs=EXACT)
        assert advice.best_score.expected_score == pytest.approx(score_s, abs=EXACT)


def test_phase8_skipping_the_enumeration_keeps_the_keeps():
    rng = random.Random(123)
    for _ in range(4):
        tokens = named(random_roll(rng))
        exact = advise(8, tokens, 2)
        quick = advise(8, tokens, 2, exact_scores=False)
        assert exact.best.p_complete == pytest.approx(quick.best.p_complete, abs=EXACT)  # class DP
        for a, b in ((exact.best, quick.best), (exact.best_score, quick.best_score)):
            assert a.keep == b.keep
            if a.expected_score_upper is None and b.expected_score_upper is not None:
                assert b.expected_score - EXACT <= a.expected_score <= b.expected_score_upper + EXACT
        assert quick.best_score.expected_score <= exact.best_score.expected_score + EXACT


@settings(max_examples=40, deadline=None)
@given(
    phase=st.integers(1, 10),
    rolls_left=st.integers(1, 2),
    faces=st.tuples(*(st.sampled_from(die.faces) for die in DICE)),
)
def test_each_plan_is_best_at_its_own_objective(phase, rolls_left, faces):
    advice = advise(phase, named(list(faces)), rolls_left)
    for option in (advice.best, advice.best_score, advice.keep_all):
        assert 0.0 <= option.p_complete <= 1.0 and option.expected_score >= 0.0
    assert advice.best.p_complete >= advice.best_score.p_complete - EXACT
    assert advice.best.p_complete >= advice.keep_all.p_complete - EXACT
    assert advice.best_score.expected_score >= advice.keep_all.expected_score - EXACT
    if phase != 8 or rolls_left == 1:  # Phase 8's two-roll chance-plan score may be a bound
        assert advice.best_score.expected_score >= advice.best.expected_score - EXACT
