"""What a reading says about its doubts (the contract the page asks by): every uncertain die
carries `doubt`, what the reader doubts most ("value", "color", or "die": is it a die's top face at
all), and `runner_up`, the next likeliest face of the set; a die read without doubt carries null
for both. Real ONNX models through the real pipeline on photos kept in tests/photos (their
docstrings in the tests named below say where each comes from)."""

from __future__ import annotations

import numpy as np
import pytest

from companion.dice import Color, Face, standard_set
from companion.vision import read_image
from companion.vision.decoder import COLOR_CLASSES, VALUE_CLASSES
from companion.vision.doubts import runner_up
from companion.vision.models import load_models
from photo_helpers import PHOTOS, die_on, needs_models

SET_FACES = {f for die in standard_set().dice for f in die.faces}


def faces_of(reading_json):
    for die in reading_json["dice"]:
        yield die, Face(None if die["value"] == "W" else die["value"], Color(die["color"]))


@needs_models
@pytest.mark.parametrize(("name", "token", "doubt", "truth"), [
    ("warm_calib_8301_000082.jpg", "1r", "value", "1r"),  # read 7r
    ("warm_calib_000099.jpg", "10b", "color", "10b"),  # read 10o
])
def test_a_misread_die_asks_about_what_was_misread_and_offers_the_truth_next(name, token, doubt, truth):
    die = die_on(read_image(PHOTOS / name, load_models()), PHOTOS / name, token)
    assert die.face.token != token and die.uncertain
    assert die.doubt == doubt
    assert die.runner_up is not None and die.runner_up.token == truth


@needs_models
def test_every_die_of_the_sample_photos_keeps_the_contract():
    from training.readings_snapshot import photos

    seen = set()
    for path in photos(samples=True):
        reading = read_image(path, load_models()).to_json()
        for die, face in faces_of(reading):
            if not die["uncertain"]:
                assert die["doubt"] is None and die["runner_up"] is None
                continue
            seen.add(die["doubt"])
            assert die["doubt"] in ("value", "color", "die")
            alt = die["runner_up"]
            other = Face(None if alt["value"] == "W" else alt["value"], Color(alt["color"]))
            assert other in SET_FACES and other != face
    assert seen  # the samples are read right, but some of their dice are asked about


def test_the_runner_up_is_the_likeliest_other_face_of_the_set():
    value = np.full(len(VALUE_CLASSES), 0.01)
    colour = np.full(len(COLOR_CLASSES), 0.01)
    value[VALUE_CLASSES.index(7)], value[VALUE_CLASSES.index(1)] = 0.6, 0.3
    colour[COLOR_CLASSES.index(Color.RED)], colour[COLOR_CLASSES.index(Color.ORANGE)] = 0.9, 0.05
    assert runner_up(value, colour, Face(7, Color.RED), standard_set()) == Face(1, Color.RED)
    colour[COLOR_CLASSES.index(Color.ORANGE)] = 0.8
    assert runner_up(value, colour, Face(7, Color.RED), standard_set()) == Face(7, Color.ORANGE)
