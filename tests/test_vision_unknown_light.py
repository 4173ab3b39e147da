"""A photo whose light no white reference tells (dark bodies) is trusted only as far as an
unusual light (the tuning's unusual_light_sure): real ONNX models through the real pipeline on a
generated calibration photo kept in tests/photos with its label row, photo 96 of
`training.synth --split calib --seed 8301 --light warm` (docs/synthetic_data.md, the choosing
sets): black dice under a warm lamp, a red 5 read as 8 at 0.97, silent with every other flag on
but the doubted-photo flag (doubts.doubted_photo) and the small face's (doubts.small_faces), which
catch it too: the other flags mark 6 of the photo's 7 dice. Read with the boxes of the first
search: searched again in its own pixels (ReadSettings.zoom_within_work), the 5r is read 8r at
0.93, flagged by its confidence."""


from dataclasses import replace

from companion.vision import ReadSettings, read_image
from companion.vision.models import load_models
from photo_helpers import PHOTOS, die_on, needs_models
from companion.vision.tuning import shipped_tuning

TUNING = shipped_tuning()

PHOTO = PHOTOS / "warm_calib_8301_000096.jpg"



@needs_models
def test_a_misread_under_a_light_no_white_body_tells_is_flagged():
    models = load_models()
    first = ReadSettings(zoom_within_work=False)
    die = die_on(read_image(PHOTO, models, first), PHOTO, "5r")
    assert die.face.token == "8r" and 0.95 <= die.confidence < TUNING.unusual_light_sure
    assert die.uncertain
    alone = replace(first, disabled_doubts=frozenset({"unknown_light", "doubted_photos", "small_faces"}))
    without = die_on(read_image(PHOTO, models, alone), PHOTO, "5r")
    assert without.face.token == "8r" and not without.uncertain  # silent without it
    doubted = die_on(read_image(PHOTO, models, replace(first, disabled_doubts=frozenset({"unknown_light", "small_faces"}))),
                     PHOTO, "5r")
    assert doubted.uncertain
