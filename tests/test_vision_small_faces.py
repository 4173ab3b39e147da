"""A small face whose value the reader reads not far ahead of the next one is flagged however sure
the decoder is of it (doubts.small_faces): in few pixels a blurred numeral can look like another.

Real ONNX models through the real pipeline on two generated calibration photos kept in
tests/photos with their label rows:
- data/calib photo 624 (`training.synth --split calib`, seed 2001): dim light, small dark dice; an
  orange 8 read as an orange wild at 0.99;
- data/more/stress_dark_calib2 photo 190 (`training.synth --split calib --seed 8551 --dark-bodies`):
  a red 1 read as a red 7 at 0.99.
Both are read with the boxes of the first search: searched again in its own pixels
(ReadSettings.zoom_within_work), photo 624's 8o is read Wo at 0.979, flagged by its confidence."""

from dataclasses import replace

import numpy as np
import pytest

from companion.vision import ReadSettings, read_image
from companion.vision.doubts import small_faces
from companion.vision.models import load_models
from photo_helpers import PHOTOS, die_on, needs_models
from companion.vision.tuning import shipped_tuning

LEVELS = shipped_tuning().doubts

CASES = [("calib_000624.jpg", "8o", "Wo"), ("dark_calib_8551_000190.jpg", "1r", "7r")]


@needs_models
@pytest.mark.parametrize(("name", "truth", "read"), CASES)
def test_a_small_face_read_with_a_narrow_lead_is_flagged(name, truth, read):
    photo = PHOTOS / name
    models = load_models()
    first = ReadSettings(zoom_within_work=False)
    without = read_image(photo, models, replace(first, disabled_doubts=frozenset({"small_faces"})))
    wrong = die_on(without, photo, truth)
    assert wrong.face.token == read and wrong.confidence >= 0.98 and not wrong.uncertain  # silent without the flag
    shipped = read_image(photo, models, first)
    assert die_on(shipped, photo, truth).uncertain
    # the reading itself is unchanged; a right die may gain a flag too, never lose one
    assert [d.face.token for d in without.dice] == [d.face.token for d in shipped.dice]
    assert all(a.uncertain for b, a in zip(without.dice, shipped.dice) if b.uncertain)


def test_only_a_small_face_with_a_narrow_lead_is_flagged():
    def logits(lead):
        row = np.full(11, -30.0)
        row[2], row[6] = 0.0, -lead
        return row

    small, large = LEVELS.small_face * 0.9, LEVELS.small_face * 1.1
    boxes = [(10.0, 10.0, 10.0 + small, 10.0 + small), (100.0, 10.0, 100.0 + large, 10.0 + large),
             (200.0, 10.0, 200.0 + large, 10.0 + small), (300.0, 10.0, 300.0 + small, 10.0 + small)]
    narrow, wide = LEVELS.small_face_lead * 0.9, LEVELS.small_face_lead * 1.1
    flags = small_faces(boxes, np.stack([logits(narrow), logits(narrow), logits(narrow), logits(wide)]), LEVELS)
    # small and narrow; large; foreshortened (its shorter side counts) and narrow; small but wide
    assert flags.tolist() == [True, False, True, False]
    assert small_faces([], np.zeros((0, 11)), LEVELS).shape == (0,)
