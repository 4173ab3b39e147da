"""A box far larger than the photo's other boxes is no die's top face, and is flagged however
sure its reading (doubts.oversized_boxes).

Real ONNX models through the real pipeline on a generated calibration photo kept in
tests/photos with its label row: data/page_far_calib photo 70 (`training.synth --split calib
--seed 8702 --phone-far --long-side 1920 --jpeg-quality 90`, a 12 MP photo from sitting height
as the page uploads it; kept here encoded again at JPEG quality 80 for its size), where a note
on the table with a green 2 drawn on it is read as a die, 2g at 1.00: a silent extra die with
every other flag on."""

import numpy as np

from companion.vision import ReadSettings, read_image
from companion.vision.doubts import oversized_boxes
from companion.vision.models import load_models
from photo_helpers import PHOTOS, gained_flags, needs_models, on_no_die
from companion.vision.tuning import shipped_tuning

LEVELS = shipped_tuning().doubts

PHOTO = PHOTOS / "page_far_calib_000070.jpg"


@needs_models
def test_a_note_read_as_a_sure_die_is_flagged():
    models = load_models()
    without = read_image(PHOTO, models, ReadSettings(disabled_doubts=frozenset({"oversized_boxes"})))
    (note,) = [d for d in on_no_die(without, PHOTO) if d.face.token == "2g"]
    assert note.confidence >= 0.99 and not note.uncertain  # silent without this flag
    shipped = read_image(PHOTO, models)
    (flagged,) = [d for d in on_no_die(shipped, PHOTO) if d.face.token == "2g"]
    assert flagged.uncertain
    # the photo's dice keep their flags: only the note gained one
    assert gained_flags(without, shipped) == ["2g"]


def test_only_a_box_far_larger_than_the_photos_other_boxes_is_flagged():
    def box(side):
        return (10.0, 10.0, 10.0 + side, 10.0 + 0.8 * side)

    dice = [box(20.0), box(24.0), box(40.0)]  # a strong tilt: the near face twice the far one
    assert not oversized_boxes(dice, LEVELS).any()
    assert oversized_boxes(dice + [box(20.0 * LEVELS.oversized * 1.1)], LEVELS).tolist() == [False, False, False, True]
    assert not oversized_boxes([box(200.0)], LEVELS).any()  # one box: nothing to compare
    assert oversized_boxes([], LEVELS).shape == (0,)
    assert np.array_equal(oversized_boxes([box(10.0), box(50.0)], LEVELS), [False, True])
