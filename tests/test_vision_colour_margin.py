"""A colour the reader is far less sure of than of the photo's other dice is flagged, however
sure the decoder is (doubts.colour_margin_doubts).

Real ONNX models through the real pipeline on two generated calibration photos kept in
tests/photos with their label rows: data/stress_tilt_calib photo 70 (`training.synth --split
calib --seed 2601 --tilt 27 40`), where a red wild on a black die is read orange at 0.988,
and data/stress_cold_calib photo 107 (`--seed 2401 --light cold`), where an orange 2 is read
red at 0.98. Both were silent errors with every other flag on. The cold photo is read with the
boxes of the first search: searched again in its own pixels (ReadSettings.zoom_within_work), the
2o's crop gives a colour lead just over the share (5.3 against the others' median 14.8), and it
is read 2r at 0.994 without a flag (the model card counts it)."""

from dataclasses import replace

import numpy as np
import pytest

from companion.vision import ReadSettings, read_image
from companion.vision.doubts import colour_margin_doubts
from companion.vision.models import load_models
from photo_helpers import PHOTOS, die_on, gained_flags, needs_models
from companion.vision.tuning import shipped_tuning

LEVELS = shipped_tuning().doubts




@needs_models
@pytest.mark.parametrize("name, truth, read", [
    ("tilt_calib_000070.jpg", "Wr", "Wo"),
    ("cold_calib_000107.jpg", "2o", "2r"),
])
def test_a_colour_the_reader_was_far_less_sure_of_is_flagged(name, truth, read):
    photo, models = PHOTOS / name, load_models()
    # with the reader's own colour head: a colour head for the photo's light (light_colour.py),
    # where the models have one, would change how sure the decoder is
    reader = ReadSettings(light_colour_head=False, zoom_within_work=False)
    die = die_on(read_image(photo, models, reader), photo, truth)
    assert die.face.token == read and die.confidence >= 0.98  # misread, and the decoder is sure of it
    assert die.uncertain
    without = die_on(read_image(photo, models, replace(reader, disabled_doubts=frozenset({"colour_margin"}))), photo, truth)
    assert without.face.token == read and not without.uncertain  # silent without this flag
    # with the shipped colour heads: flagged
    assert die_on(read_image(photo, models, ReadSettings(zoom_within_work=False)), photo, truth).uncertain


@needs_models
def test_only_the_misread_colour_gains_a_flag_in_the_tilted_photo():
    photo, models = PHOTOS / "tilt_calib_000070.jpg", load_models()
    before = read_image(photo, models, ReadSettings(disabled_doubts=frozenset({"colour_margin"})))
    after = read_image(photo, models, ReadSettings())
    assert gained_flags(before, after) == ["Wo"]


def test_the_margin_is_judged_against_the_photos_other_dice():
    def logits(margin):  # a colour `margin` log-odds ahead of the next one
        return [0.0, -margin, -30.0, -30.0]

    sure = [logits(12.0), logits(10.0), logits(14.0)]
    weak = 0.9 * LEVELS.colour_margin_share * 12.0
    assert colour_margin_doubts(np.array(sure + [logits(weak)]), LEVELS).tolist() == [False, False, False, True]
    # where every colour is that unsure (a look the training never had), none stands out
    assert not colour_margin_doubts(np.array([logits(weak)] * 4), LEVELS).any()
    assert not colour_margin_doubts(np.array([logits(0.5)]), LEVELS).any()  # one die: nothing to compare
