"""The evaluator on the printed rules' examples, each phase, and the edge cases."""

from __future__ import annotations

import pytest

from companion.dice import Color, Face, parse_faces
from companion.rules import Evaluation, Group, HouseRules, best_score, evaluate
from rules_checks import assert_legal

STRICT = HouseRules(natural_in_every_group=True)


def roll(text: str, color: str = "") -> list[Face]:
    """'8 8 W 10' with one colour for all, or full tokens '8r Wb'."""
    return parse_faces([t + color for t in text.split()])


def check(phase: int, faces: list[Face], rules: HouseRules = HouseRules()) -> Evaluation:
    result = evaluate(phase, faces, rules)
    if result.complete:
        assert_legal(result, faces, rules.natural_in_every_group)
    assert best_score(phase, faces, rules) == result.score
    return result


# The printed rules' own examples.


def test_phase1_two_eights_sets_with_two_wilds_scores_34():
    faces = roll("8r 8b 8g 10o Wr Wg")
    result = check(1, faces)
    assert result.score == 34
    assert result.groups == (
        Group("set", (0, 1, 2), (8, 8, 8)),
        Group("set", (3, 4, 5), (10, 10, 10)),
    )


def test_phase1_six_wild_six_with_three_sevens_scores_33():
    result = check(1, roll("6r Wb 6g 7o 7r 7g"))
    assert result.score == 33
    # The higher-scoring group comes first; the wild stands for 6.
    assert result.groups == (Group("set", (3, 4, 5), (7, 7, 7)), Group("set", (0, 1, 2), (6, 6, 6)))


def test_phase8_seven_orange_with_an_orange_wild():
    faces = roll("2 4 W 5 8 9 10", "o")
    result = check(8, faces)
    assert result.complete and result.score == 38
    assert result.groups == (Group("color", tuple(range(7)), (2, 4, None, 5, 8, 9, 10)),)


# One example per phase.


@pytest.mark.parametrize(
    "phase, text, score",
    [
        (1, "9 9 9 3 3 3 1 2", 36),
        (2, "3 3 3 5 6 7 8 1", 35),
        (3, "9 9 9 9 1 2 3 4", 46),
        (4, "4 5 W 7 8 9 10", 43),
        (5, "3 4 5 6 7 8 9 10", 52),
        (6, "2 3 4 5 6 7 8 9 10 1", 54),
        (7, "5 5 5 5 6 6 6 W", 38),
        (9, "7 7 7 7 7 3 3", 41),
        (10, "10 10 10 10 W 9 9 9", 67),
    ],
)
def test_each_phase_scores_its_example(phase, text, score):
    result = check(phase, roll(text, "b"))
    assert result.complete and result.score == score


@pytest.mark.parametrize(
    "phase, text",
    [
        (1, "9 9 9 3 3 4"),
        (2, "3 3 3 5 6 8 9"),
        (3, "9 9 9 1 2 3 4"),
        (4, "1 2 3 4 5 6 8"),
        (5, "3 4 5 6 7 8 9 9"),
        (6, "1 2 3 4 5 6 7 8 8 10"),
        (7, "5 5 5 5 6 6 7 7"),
        (9, "7 7 7 7 3 3 2"),
        (10, "10 10 10 10 9 9 8 8"),
    ],
)
def test_each_phase_can_be_missed(phase, text):
    assert evaluate(phase, roll(text, "g")) == Evaluation(phase, False, None, ())
    assert best_score(phase, roll(text, "g")) is None


def test_run_with_a_gap_takes_a_wild_in_the_gap():
    result = check(2, roll("10 10 10 5 6 W 8 2", "r"))
    assert result.score == 30 + 19
    assert result.groups[1] == Group("run", (3, 4, 5, 6), (5, 6, 7, 8))


def test_set_and_run_share_a_number():
    # Four 5s: three make the set, the fourth joins the run.
    result = check(3, roll("5 5 5 5 5 6 7 8", "r"))
    assert result.score == 20 + 26
    assert result.groups == (
        Group("set", (0, 1, 2, 3), (5, 5, 5, 5)),
        Group("run", (4, 5, 6, 7), (5, 6, 7, 8)),
    )


# All-wild groups and the house rule.


def test_all_wild_group_is_legal_by_default_and_stands_for_ten():
    result = check(1, roll("5 5 5 W W W", "r"))
    assert result.score == 15
    assert result.groups == (Group("set", (0, 1, 2), (5, 5, 5)), Group("set", (3, 4, 5), (10, 10, 10)))


def test_house_rule_splits_a_set_so_each_group_has_a_natural():
    result = check(1, roll("5 5 5 W W W", "r"), STRICT)
    assert result.score == 15
    assert result.groups == (Group("set", (0, 1, 3), (5, 5, 5)), Group("set", (2, 4, 5), (5, 5, 5)))


def test_house_rule_misses_when_a_group_could_only_be_wilds():
    faces = roll("5 W W W W W", "r")
    assert check(1, faces).score == 5
    assert not check(1, faces, STRICT).complete


def test_all_wild_run_and_house_rule():
    faces = roll("W W W W W W W", "g")
    result = check(4, faces)
    assert result.score == 0
    assert result.groups == (Group("run", tuple(range(7)), tuple(range(4, 11))),)
    assert not check(4, faces, STRICT).complete


def test_house_rule_run_borrows_a_shared_number_from_the_set():
    # Phase 2: the run 3..6 has no natural but the 4s; one of them must leave the set.
    faces = roll("4 4 W W W W W", "b")
    assert check(2, faces).groups[0] == Group("set", (0, 1, 2), (4, 4, 4))
    result = check(2, faces, STRICT)
    assert result.score == 8
    assert all(any(faces[i].value for i in g.dice) for g in result.groups)


def test_house_rule_colour_phase_needs_a_natural():
    faces = roll("W W W W W W W", "r")
    assert check(8, faces).score == 0
    assert not check(8, faces, STRICT).complete
    assert check(8, roll("W W W W W W 1", "r"), STRICT).score == 1


# Runs at the ends of 1..10.


def test_wild_cannot_extend_a_run_above_ten():
    result = check(4, roll("10 9 8 7 6 5 W", "o"))
    assert result.score == 45
    assert result.groups[0].stands_for == (4, 5, 6, 7, 8, 9, 10)
    assert result.groups[0].dice == (6, 5, 4, 3, 2, 1, 0)


def test_wild_cannot_extend_a_run_below_one():
    result = check(4, roll("1 2 3 4 5 6 W", "o"))
    assert result.score == 21
    assert result.groups[0].stands_for == (1, 2, 3, 4, 5, 6, 7)


def test_run_cannot_hold_both_one_and_ten():
    result = check(6, roll("1 10 W W W W W W W W", "o"))
    assert result.score == 10
    assert result.groups[0].stands_for == tuple(range(2, 11))


def test_run_of_nine_ties_go_to_the_higher_run():
    result = check(6, roll("W 2 3 4 5 6 7 8 9", "b"))
    assert result.score == 44
    assert result.groups[0].stands_for == tuple(range(2, 11))


def test_run_of_nine_prefers_the_better_end():
    assert check(6, roll("1 2 3 4 5 6 7 8 9", "b")).score == 45
    assert check(6, roll("1 2 3 4 5 6 7 8 W", "b")).score == 36
    assert not check(6, roll("1 2 3 4 5 6 7 8 1", "b")).complete


# The colour phase.


def test_wild_of_the_wrong_colour_does_not_count():
    assert not check(8, roll("2o 4o Wr 5o 8o 9o 10o")).complete
    assert check(8, roll("2o 4o Wo 5o 8o 9o 10o")).score == 38


def test_colour_phase_keeps_the_seven_highest_and_leaves_wilds_unused():
    faces = roll("1g 2g 3g Wg 5g 6g 7g 8g 9g 10r")
    result = check(8, faces)
    assert result.score == 2 + 3 + 5 + 6 + 7 + 8 + 9
    assert result.groups[0].dice == (1, 2, 4, 5, 6, 7, 8)


def test_colour_phase_with_blue():
    faces = roll("5b 6b 7b Wb 9b 10b 3b 5g 5g Wg")
    result = check(8, faces)
    assert result.score == 40
    assert result.groups[0].dice == (0, 1, 2, 3, 4, 5, 6)


# Fewer dice, extra dice, any tokens.


def test_fewer_than_needed_is_incomplete_but_exactly_enough_works():
    assert not check(1, roll("8 8 8 9 9", "r")).complete
    assert check(1, roll("8 8 8 9 9 9", "r")).score == 51
    assert check(9, roll("W W W W W W W", "r")).score == 0


def test_extra_matching_dice_score_nothing():
    result = check(1, roll("8 8 8 8 8 8 8", "r"))
    assert result.score == 48
    assert result.groups == (Group("set", (0, 1, 2), (8, 8, 8)), Group("set", (3, 4, 5), (8, 8, 8)))


def test_faces_need_not_be_possible_with_the_physical_set():
    assert check(10, roll("5b 5b 5b 5b 5b 5b 5b 5b")).score == 40


def test_a_single_die_is_evaluated():
    assert evaluate(9, roll("7r")) == Evaluation(9, False, None, ())


# Bad input.


@pytest.mark.parametrize("phase", [0, 11, -1, "1", 1.0, True, None])
def test_bad_phase_number_is_a_value_error(phase):
    with pytest.raises(ValueError, match="phase"):
        evaluate(phase, roll("1 2 3", "r"))
    with pytest.raises(ValueError, match="phase"):
        best_score(phase, roll("1 2 3", "r"))


@pytest.mark.parametrize("count", [0, 11, 15])
def test_wrong_number_of_dice_is_a_value_error(count):
    with pytest.raises(ValueError, match="1 to 10 dice"):
        evaluate(1, [Face(5, Color.RED)] * count)
    with pytest.raises(ValueError, match="1 to 10 dice"):
        best_score(1, [Face(5, Color.RED)] * count)
