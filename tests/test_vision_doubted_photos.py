"""A photo with many dice flagged already: its dice the decoder is not quite sure of are flagged
too, and where nearly all are flagged, every die is (doubts.doubted_photo). Real ONNX models
through the real pipeline on photos of the second tilted choosing set
(data/more/stress_tilt_calib2), regenerated here, and on data/v1_calib photo 8 (`make data-v1`:
the generator at 73db4eb, `--split calib --seed 5001`), kept in tests/photos with its label row:
small dice seen from the side, nine of its ten readings flagged, the tenth a Wo at 1.00 on no
labelled top face; and the rule itself."""

import numpy as np
import pytest

from companion.vision import ReadSettings, read_image
from companion.vision.doubts import doubted_photo
from companion.vision.models import load_models, models_present
from training.synth.dataset import encode_jpeg, render_indexed
from training.synth.scene import SceneOptions
from photo_helpers import PHOTOS, on_no_die
from companion.vision.tuning import shipped_tuning

LEVELS = shipped_tuning().doubts

needs_models = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
TILTED = SceneOptions(tilt_range=(27.0, 40.0))  # data/more/stress_tilt_calib2: seed 8451 (Makefile)


def _read(index, settings):
    photo = render_indexed(8451, "calib", index, TILTED)
    return photo, read_image(encode_jpeg(photo.image, photo.conditions["jpeg_quality"]), load_models(), settings)


@needs_models
@pytest.mark.parametrize("index, truth, read", [
    (52, "4r", "4o"),  # a red 4 read orange at 0.96, in a photo with 5 of its 8 dice flagged
    (240, "3b", "5b"),  # a blue 3 read 5 at 0.98, 3 of 9 flagged
])
def test_a_misread_in_a_much_doubted_photo_is_flagged(index, truth, read):
    # the small face's flag (doubts.small_faces) catches the 5 too: off here, this flag alone
    photo, before = _read(index, ReadSettings(disabled_doubts=frozenset({"doubted_photos", "small_faces"})))
    tokens = [f"{d['value'] or 'W'}{d['color'][0]}" for d in photo.dice]
    assert truth in tokens and read not in tokens
    (wrong,) = [d for d in before.dice if d.face.token == read]
    assert not wrong.uncertain and wrong.confidence < LEVELS.doubted_sure  # silent before
    assert np.mean([d.uncertain for d in before.dice]) >= LEVELS.doubted_share
    _, after = _read(index, ReadSettings(disabled_doubts=frozenset({"small_faces"})))
    (now,) = [d for d in after.dice if d.face.token == read]
    assert now.uncertain
    assert not all(d.uncertain for d in after.dice)  # the surer dice stay unflagged


def test_only_a_much_doubted_photo_has_its_less_sure_dice_flagged():
    confidence = np.array([0.99, 0.97, 0.999, 0.9])
    few = np.array([False, False, False, True])  # a quarter flagged: under LEVELS.doubted_share
    assert not doubted_photo(few, confidence, LEVELS).any()
    many = np.array([True, False, False, True])
    assert doubted_photo(many, confidence, LEVELS).tolist() == [False, True, False, True]
    assert doubted_photo(np.zeros(0, dtype=bool), np.zeros(0), LEVELS).tolist() == []
    nearly_all = np.ones(10, dtype=bool)
    nearly_all[0] = False  # nine of ten flagged: at least LEVELS.doubted_all_share
    assert np.mean(nearly_all) >= LEVELS.doubted_all_share and doubted_photo(nearly_all, np.ones(10), LEVELS).all()
    assert not doubted_photo(many, np.ones(4), LEVELS).any()  # half flagged: the sure dice stay unflagged


@needs_models
def test_every_die_of_a_photo_nearly_all_flagged_is_flagged():
    photo = PHOTOS / "v1_calib_000008.jpg"
    models = load_models()
    before = read_image(photo, models, ReadSettings(disabled_doubts=frozenset({"doubted_photos"})))
    (sure,) = [d for d in before.dice if not d.uncertain]
    assert sure in on_no_die(before, photo) and sure.confidence >= 0.99  # the one sure reading is on no die
    assert np.mean([d.uncertain for d in before.dice]) >= LEVELS.doubted_all_share
    assert all(d.uncertain for d in read_image(photo, models).dice)
