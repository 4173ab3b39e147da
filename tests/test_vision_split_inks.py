"""On light bodies under the training look's light, a photo's red and orange dice (and its green
and blue) are split between two inks of the photo's own (joint_colour.split_inks): hue and
darkness against the body, no usual hue.

Real ONNX models through the real pipeline on photos of sets whose inks were drawn far from the
usual hues (data/table/far_choose, `training.synth.games --look far --seed 7101`, kept in
tests/photos with their label rows), and on the Blender-rendered calibration photo 23
(`training.blender --seed 4501 --split calib`), whose orange 10 the reader takes for red (0.77)."""

import numpy as np
import pytest
from photo_helpers import PHOTOS, labelled_dice, needs_models, read_as

from companion.vision import ReadSettings, read_image
from companion.vision.inks import Ink
from companion.vision.joint_colour import split_inks
from companion.vision.models import load_models
from companion.vision.tuning import shipped_tuning

LEVELS = shipped_tuning().inks
ALONE = ReadSettings(usual_light_joint=False)  # each die's colour as the reader reads it alone


@needs_models
@pytest.mark.parametrize("photo, swapped", [
    # light-grey bodies; a set whose orange (247, 116, 86) is lighter and pinker than the usual
    # (the joint step with usual hues read Wo red too)
    ("far_table_choose_000165.jpg", {"Wo"}),
    # lavender bodies; a brown red (136, 52, 29), a khaki orange (173, 140, 53), a teal blue (15, 78, 129)
    # (the joint step with usual hues read all five so, and Wb green)
    ("far_table_choose_000072.jpg", {"10r", "7r", "10b", "5b", "Wb"}),
])
def test_a_set_whose_inks_lie_far_from_the_usual_hues_reads_its_colours_right(photo, swapped):
    models = load_models()
    truth = labelled_dice(PHOTOS / photo)
    alone = read_as(read_image(PHOTOS / photo, models, ALONE), truth)
    together = read_as(read_image(PHOTOS / photo, models), truth)
    assert {t.split(":")[1] for t, d in alone.items() if d.face.token != t.split(":")[1]} == swapped
    for token, die in together.items():
        assert die.face.token == token.split(":")[1]
        if token.split(":")[1] in swapped:
            assert die.uncertain  # a colour the photo moved is flagged


@needs_models
def test_the_photos_inks_read_the_orange_ten_the_reader_calls_red():
    photo = PHOTOS / "blender_calib_000023.jpg"
    models = load_models()
    alone = read_as(read_image(photo, models, ALONE), labelled_dice(photo))
    together = read_as(read_image(photo, models), labelled_dice(photo))
    assert alone["H6:10o"].face.token == "10r"
    assert together["H6:10o"].face.token == "10o" and together["H6:10o"].uncertain
    for truth, die in together.items():
        assert die.face.token == truth.split(":")[1]


def _probs(rows):
    return np.array(rows, dtype=np.float64)


def _reds_and(*others: Ink) -> list[Ink]:
    return [Ink(40.0, 0.1, True, -58.0), Ink(41.5, 0.1, True, -57.0), Ink(39.0, 0.1, True, -59.0), *others]


def test_a_lighter_ink_of_the_same_hue_is_the_photos_orange():
    # three dice the reader is sure are red and two it leans red on; all five at the hue of an
    # orange, but the two 30 degrees lighter: two inks, and the lighter is orange
    probs = _probs([[0.99, 0.01, 0, 0]] * 3 + [[0.7, 0.3, 0, 0]] * 2)
    joint = split_inks(probs, _reds_and(Ink(40.5, 0.1, True, -28.0), Ink(39.5, 0.1, True, -29.0)), LEVELS)
    assert joint.moved.tolist() == [False, False, False, True, True] and (joint.probs[3:, 1] > 0.8).all()
    # the same two as dark as the others: one ink, and every die keeps the reader's red
    alike = split_inks(probs, _reds_and(Ink(40.5, 0.1, True, -58.0), Ink(39.5, 0.1, True, -57.5)), LEVELS)
    assert not alike.moved.any() and (alike.probs[3:, 0] > 0.7).all()


def test_an_ink_measured_lighter_than_its_body_or_too_faint_moves_nothing():
    probs = _probs([[0.99, 0.01, 0, 0]] * 3 + [[0.7, 0.3, 0, 0]])
    for fourth in (Ink(75.0, 0.1, True, 12.0), Ink(75.0, 0.001, True, -40.0)):
        joint = split_inks(probs, _reds_and(fourth), LEVELS)
        assert not joint.moved.any() and np.allclose(joint.probs[3], probs[3])


def test_the_split_follows_the_inks_order_not_a_usual_hue():
    # a set whose orange sits where another set's red does (hue 25) and its red lower still (5):
    # the reader is unsure of both; the lower, darker ink is red wherever it lies
    inks = [Ink(5.0, 0.1, True, -60.0), Ink(6.0, 0.1, True, -61.0), Ink(25.0, 0.1, True, -45.0),
            Ink(26.0, 0.1, True, -44.0)]
    probs = _probs([[0.55, 0.45, 0, 0], [0.45, 0.55, 0, 0], [0.55, 0.45, 0, 0], [0.45, 0.55, 0, 0]])
    joint = split_inks(probs, inks, LEVELS)
    red = np.argmax(joint.probs[:, :2], axis=1) == 0
    assert red.tolist() == [True, True, False, False]
    # moved to the other ink are the two the reader leant the wrong way on
    assert joint.moved.tolist() == [False, True, True, False]
    # the same dice a set of its own apart: its inks darker and lower still, the split the same
    shifted = [Ink(i.hue - 30.0, i.chroma, True, i.darkness - 10.0) for i in inks]
    assert np.allclose(split_inks(probs, shifted, LEVELS).probs, joint.probs, atol=0.02)
