import pytest

from companion.dice import (
    HIGH_VALUES,
    MAX_DICE,
    Color,
    DiceError,
    Face,
    parse_face,
    parse_token,
    parse_tokens,
    standard_set,
)
from companion.rules.phases import COLOR_PHASE, MAX_ROLLS_LEFT, PHASE_COUNT


def test_standard_set_has_four_low_and_six_high_dice():
    dice = standard_set()
    assert [d.id for d in dice.low] == ["L1", "L2", "L3", "L4"]
    assert [d.id for d in dice.high] == ["H1", "H2", "H3", "H4", "H5", "H6"]
    for die in dice.low:
        assert sorted(f.points for f in die.faces) == [0, 0, 1, 2, 3, 4]
    for die in dice.high:
        assert sorted(f.points for f in die.faces) == [5, 6, 7, 8, 9, 10]


def test_the_numbers_the_rules_use_come_from_the_set_and_the_phases():
    assert MAX_DICE == 10 and HIGH_VALUES == (5, 6, 7, 8, 9, 10)
    assert PHASE_COUNT == 10 and COLOR_PHASE == 8 and MAX_ROLLS_LEFT == 2


@pytest.mark.parametrize(
    "text, face",
    [
        ("7b", Face(7, Color.BLUE)),
        ("10G", Face(10, Color.GREEN)),
        ("wr", Face(None, Color.RED)),
        ("7blue", Face(7, Color.BLUE)),
        ("Worange", Face(None, Color.ORANGE)),
        (" 1R ", Face(1, Color.RED)),
    ],
)
def test_tokens_parse_in_any_case_with_letter_or_name(text, face):
    assert parse_face(text) == face


@pytest.mark.parametrize("text", ["", "11b", "0r", "7", "b7", "7x", "7bl", "W", "H3:7b", "Z9:7b"])
def test_bad_tokens_name_the_token(text):
    with pytest.raises(DiceError) as err:
        parse_token(text)
    assert repr(text) in str(err.value)


def test_named_die_must_carry_the_face():
    assert parse_token("h3:7r").die == "H3"
    with pytest.raises(DiceError, match="no face 7b"):
        parse_token("H3:7b")


def test_roll_size_and_repeated_die_are_checked():
    with pytest.raises(DiceError, match="1 to 10"):
        parse_tokens([])
    with pytest.raises(DiceError, match="1 to 10"):
        parse_tokens(["5r"] * 11)
    with pytest.raises(DiceError, match="more than once"):
        parse_tokens(["H1:5r", "H1:6o"])


def test_token_round_trip():
    for die in standard_set().dice:
        for face in die.faces:
            assert parse_face(face.token) == face
