"""Under the usual light the photo's inks decide the colour of a die the reader is unsure of
(joint_colour.usual_light_colours), and leave every other die as the reader read it.

Real ONNX models through the real pipeline on a photo of a look the training never had: the
Blender-rendered calibration photo 23 (`training.blender --seed 4501 --split calib`, kept in
tests/photos with its label row), whose orange 10 the reader takes for red (0.77) while its ink
measures 26 degrees from the photo's three reds."""


import numpy as np
from photo_helpers import PHOTOS, labelled_dice, needs_models, read_as

from companion.vision import ReadSettings, read_image
from companion.vision.inks import Ink
from companion.vision.joint_colour import USUAL_MIN_CHROMA, joint_colours, usual_light_colours
from companion.vision.models import load_models

PHOTO = PHOTOS / "blender_calib_000023.jpg"


@needs_models
def test_the_photos_inks_read_the_orange_ten_the_reader_calls_red():
    models = load_models()
    alone = read_as(read_image(PHOTO, models, ReadSettings(usual_light_joint=False)), labelled_dice(PHOTO))
    together = read_as(read_image(PHOTO, models), labelled_dice(PHOTO))
    assert alone["H6:10o"].face.token == "10r"  # the reader's colour alone
    assert together["H6:10o"].face.token == "10o" and together["H6:10o"].uncertain  # a moved colour is flagged
    # the other dice read as with usual_light_joint=False, all right
    for truth, die in together.items():
        if truth != "H6:10o":
            assert die.face.token == alone[truth].face.token == truth.split(":")[1]
            assert die.uncertain == alone[truth].uncertain


def _probs(rows):
    return np.array(rows, dtype=np.float64)


REDS = [Ink(22.0, 0.08, True), Ink(21.0, 0.08, True), Ink(20.0, 0.07, True)]


def test_an_unsure_die_with_a_colourful_ink_takes_the_photos_colour():
    # three sure reds, and a fourth die the reader leans red on (0.77) whose ink sits 26 degrees above theirs
    probs = _probs([[0.99, 0.01, 0, 0]] * 3 + [[0.77, 0.23, 0, 0]])
    joint = usual_light_colours(probs, REDS + [Ink(47.0, 0.08, True)])
    assert joint.probs[3, 1] > 0.5 and joint.moved.tolist() == [False, False, False, True]
    assert np.allclose(joint.probs[:3], probs[:3])


def test_a_sure_die_or_a_faint_ink_keeps_the_readers_colour():
    ink = Ink(47.0, 0.08, True)
    sure = _probs([[0.99, 0.01, 0, 0]] * 3 + [[0.95, 0.05, 0, 0]])
    assert np.array_equal(usual_light_colours(sure, REDS + [ink]).probs, sure)
    # the inks alone, with every die movable, would move it: the reader's sureness is what keeps it
    assert joint_colours(_probs([[0.99, 0.01, 0, 0]] * 3 + [[0.77, 0.23, 0, 0]]), REDS + [ink]).moved[3]
    unsure = _probs([[0.99, 0.01, 0, 0]] * 3 + [[0.77, 0.23, 0, 0]])
    faint = Ink(47.0, 0.5 * USUAL_MIN_CHROMA, True)
    kept = usual_light_colours(unsure, REDS[:2] + [Ink(20.0, 0.5 * USUAL_MIN_CHROMA, True), faint])
    assert np.array_equal(kept.probs, unsure) and not kept.moved.any()
