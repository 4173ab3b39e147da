"""A die whose reader value is far less sure than the photo's other dice' is flagged however
sure the decoder is (doubts.value_margin_doubts).

Real ONNX models through the real pipeline on a generated calibration photo kept in
tests/photos with its label row, photo 82 of `training.synth --split calib --seed 8301 --light
warm` (docs/synthetic_data.md, the choosing sets): under a warm lamp a red 1 on a dark body is
read as 7 at 0.99, its value's lead over the next 2.3 where the photo's other dice lead by 9-15:
silent with every other flag on."""


import numpy as np

from companion.vision import ReadSettings
from companion.vision.doubts import value_margin_doubts
from photo_helpers import PHOTOS, gained_flags, needs_models, silent_then_flagged
from companion.vision.tuning import shipped_tuning

LEVELS = shipped_tuning().doubts

PHOTO = PHOTOS / "warm_calib_8301_000082.jpg"


@needs_models
def test_a_value_far_less_sure_than_the_photos_others_is_flagged():
    without, shipped = silent_then_flagged(PHOTO, ReadSettings(disabled_doubts=frozenset({"value_margin"})), "1r", "7r")
    # the photo's other dice keep their flags: only the misread gained one
    assert gained_flags(without, shipped) == ["7r"]


def test_only_a_lead_far_under_the_photos_others_is_flagged():
    def logits(lead):
        row = np.full(11, -20.0)
        row[3], row[5] = 0.0, -lead
        return row

    # the others' median lead is 12: a lead just under a share of it is flagged, one just over not
    for near, flagged in ((12.0 * LEVELS.value_margin_share * 0.95, True), (12.0 * LEVELS.value_margin_share * 1.05, False)):
        leads = [10.0, 12.0, 14.0, near]
        assert value_margin_doubts(np.stack([logits(x) for x in leads]), LEVELS).tolist() == [False, False, False, flagged]
    # every die as unsure: no die is far under the others
    assert not value_margin_doubts(np.stack([logits(2.0) for _ in range(4)]), LEVELS).any()
    assert not value_margin_doubts(np.stack([logits(0.5)]), LEVELS).any()  # one die: nothing to compare
    assert value_margin_doubts(logits(0.5), LEVELS).tolist() == [False]  # one die's logits as a single row
    assert value_margin_doubts(np.zeros((0, 11)), LEVELS).shape == (0,)
