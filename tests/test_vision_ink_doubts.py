"""A colour the photo's inks doubt is flagged, under the usual light too (doubts.ink_doubts).

Real ONNX models through the real pipeline on a photo of a look the training never had: one
of the Blender-rendered calibration photos (`training.blender --seed 4501 --split calib`,
photo 23, kept in tests/photos with its label row), where the reader takes the orange 10 for
a red one while the photo's own inks tell its orange from the three reds."""

from dataclasses import replace

import numpy as np

from companion.vision import ReadSettings, read_image
from companion.vision.doubts import ink_doubts
from companion.vision.inks import Ink
from companion.vision.models import load_models
from photo_helpers import PHOTOS, die_on, needs_models
from companion.vision.tuning import shipped_tuning

LEVELS = shipped_tuning().doubts

PHOTO = PHOTOS / "blender_calib_000023.jpg"
# every flag but the inks' off, the decoder's confidence included: what is flagged is the inks' doing;
# and the reader's colours left as they are (joint_colour.split_inks would move the orange 10)
NO_FLAGS = ReadSettings().without_scene_flags()
INKS_ONLY = replace(NO_FLAGS, decoding=replace(shipped_tuning().pipeline.decoding, uncertain_below=0.0), usual_light_joint=False)




@needs_models
def test_an_orange_the_reader_calls_red_is_flagged_by_the_photos_inks():
    models = load_models()
    without = read_image(PHOTO, models, INKS_ONLY)
    alone = die_on(without, PHOTO, "10o")
    assert alone.face.token == "10r" and not alone.uncertain  # the reader alone
    reading = read_image(PHOTO, models, INKS_ONLY.with_doubts("ink_doubts"))
    die = die_on(reading, PHOTO, "10o")
    assert die.face.token == "10r" and die.uncertain  # flagged, its colour left as the reader read it
    # the photo's right dice (three reds and a green) are not flagged by the inks
    assert [d.face.token for d in reading.dice if d.uncertain] == ["10r"]


@needs_models
def test_the_shipped_settings_flag_it_and_read_the_others_unflagged():
    reading = read_image(PHOTO, load_models(), ReadSettings())
    assert die_on(reading, PHOTO, "10o").uncertain
    assert sorted(d.face.token for d in reading.dice if not d.uncertain) == ["10g", "1r", "Wr", "Wr"]


def test_inks_that_agree_with_the_reader_flag_nothing():
    # three reds and an orange whose inks sit at red's and orange's hues, each read as it is
    logits = np.log(np.array([[0.98, 0.02, 0, 0], [0.97, 0.03, 0, 0], [0.99, 0.01, 0, 0], [0.03, 0.97, 0, 0]]) + 1e-9)
    agree = [Ink(25.0, 0.3, True), Ink(26.0, 0.3, True), Ink(24.0, 0.3, True), Ink(48.0, 0.3, True)]
    assert not ink_doubts(logits, agree, 1.0, LEVELS).any()
    # the fourth read red too: its ink, far from the other reds', says orange
    logits[3] = logits[0]
    assert ink_doubts(logits, agree, 1.0, LEVELS).tolist() == [False, False, False, True]
    assert ink_doubts(np.zeros((0, 4)), [], 1.0, LEVELS).tolist() == []
