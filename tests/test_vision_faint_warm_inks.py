"""On dark bodies a red or orange ink is colourful against the black, and the photo's reds and
oranges measure alike: a die read red or orange from an ink far fainter than theirs is flagged,
maybe a blue or green ink a warm light turned warm (doubts.faint_warm_inks).

Real ONNX models through the real pipeline on a generated calibration photo kept in tests/photos
with its label row: data/stress_warm_calib photo 99 (`training.synth --split calib --seed 2301
--light warm`), eight black dice under a 2729 K lamp. Its 10b is read 10o at 1.00, its ink's
chroma 0.09 beside the photo's reds and oranges at 0.67-0.72."""

from companion.dice import Color
from companion.vision import ReadSettings
from companion.vision.doubts import faint_warm_inks
from companion.vision.inks import Ink
from photo_helpers import PHOTOS, gained_flags, needs_models, silent_then_flagged
from companion.vision.tuning import shipped_tuning

LEVELS = shipped_tuning().doubts

PHOTO = PHOTOS / "warm_calib_000099.jpg"


@needs_models
def test_a_blue_die_read_orange_from_a_faint_ink_on_a_dark_body_is_flagged():
    without, shipped = silent_then_flagged(PHOTO, ReadSettings(disabled_doubts=frozenset({"faint_warm_inks"})), "10b", "10o")
    # the photo's true reds and oranges, as colourful as each other, gain no flag: only the misread does
    assert gained_flags(without, shipped) == ["10o"]


def test_only_a_red_or_orange_far_fainter_than_the_photos_others_is_flagged():
    def ink(chroma):
        return Ink(30.0, chroma, False)

    red, orange, blue = Color.RED, Color.ORANGE, Color.BLUE
    bright = [ink(0.7), ink(0.6), ink(0.65)]
    faint = 0.65 * LEVELS.faint_warm_share * 0.9
    assert faint_warm_inks([red, orange, red, orange], bright + [ink(faint)], LEVELS).tolist() == [False, False, False, True]
    assert not faint_warm_inks([red, orange, red, orange], bright + [ink(0.65 * LEVELS.faint_warm_share * 1.1)], LEVELS).any()
    assert not faint_warm_inks([red, orange, red, blue], bright + [ink(faint)], LEVELS).any()  # a faint blue is a blue
    assert not faint_warm_inks([None, None, None, red], bright + [ink(faint)], LEVELS).any()  # no other red or orange read
    assert faint_warm_inks([red, None, None, orange], bright + [ink(faint)], LEVELS).tolist() == [False, False, False, True]
    assert faint_warm_inks([], [], LEVELS).shape == (0,)
