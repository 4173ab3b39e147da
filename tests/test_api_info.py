"""/api/info gives the page what the core defines, so the page restates no number."""

from __future__ import annotations

from companion.dice import MAX_DICE, standard_set
from companion.game import FIVE_PHASE_BONUS_PHASE, MAX_NAME_LENGTH
from companion.rules.phases import ROLLS_PER_TURN
from companion.store import MAX_SET_NAME
from companion.vision.image_io import MAX_DETAIL, WORK_LONG_SIDE


def test_info_gives_the_high_dice_values_and_the_readers_photo_size(client):
    info = client.get("/api/info").json
    high = {f.value for d in standard_set().high for f in d.faces if f.value is not None}
    low = {f.value for d in standard_set().low for f in d.faces if f.value is not None}
    assert info["high_values"] == sorted(high) and not high & low
    assert info["photo_long_side"] == round(WORK_LONG_SIDE * MAX_DETAIL)


def test_info_gives_the_games_name_length_and_the_phase_of_the_five_phase_bonus(client):
    info = client.get("/api/info").json
    assert info["max_name_length"] == MAX_NAME_LENGTH
    assert info["five_phase_bonus_phase"] == FIVE_PHASE_BONUS_PHASE
    assert 1 <= info["five_phase_bonus_phase"] <= len(info["phases"])


def test_info_gives_the_dice_a_roll_shows_and_the_rolls_of_a_turn(client):
    info = client.get("/api/info").json
    assert info["dice_count"] == MAX_DICE == len(standard_set().dice)
    assert info["rolls_per_turn"] == ROLLS_PER_TURN
    assert info["face_values"] == sorted({f.value for d in standard_set().dice for f in d.faces if f.value})
    assert info["max_set_name_length"] == MAX_SET_NAME
