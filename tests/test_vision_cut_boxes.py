"""A small box cut by the photo's edge is part of a die, maybe the side face of one whose top face
lies outside the frame, and is flagged however sure its reading (doubts.cut_boxes).

Real ONNX models through the real pipeline on two generated calibration photos kept in
tests/photos with their label rows:
- data/more/stress_dark_calib photo 243 (`training.synth --split calib --seed 8501 --dark-bodies`):
  a black die's side face at the left edge, its top face outside the frame, read 1b at 1.00 beside
  the photo's nine dice, all read right and sure, so the page would say "10 dice" with one of them
  not there;
- data/calib photo 747 (`training.synth --split calib`, seed 2001): a die's side face at the left
  edge read 8b at 1.00;
- data/v1_calib photo 210 (`make data-v1`: the generator at 73db4eb, `--split calib --seed 5001`):
  one die at the left edge, its top face (5b) outside the frame, its side face read 8o at 0.99,
  the photo's only box."""

import numpy as np
import pytest

from companion.vision import ReadSettings, read_image
from companion.vision.doubts import CUT_EDGE, cut_boxes
from companion.vision.models import load_models
from photo_helpers import PHOTOS, gained_flags, needs_models, on_no_die
from companion.vision.tuning import shipped_tuning

LEVELS = shipped_tuning().doubts

CASES = [("dark_calib_8501_000243.jpg", "1b"), ("calib_000747.jpg", "8b")]


@needs_models
@pytest.mark.parametrize(("name", "token"), CASES)
def test_a_side_face_cut_by_the_frame_is_flagged(name, token):
    photo = PHOTOS / name
    models = load_models()
    without = read_image(photo, models, ReadSettings(disabled_doubts=frozenset({"cut_boxes"})))
    (side,) = on_no_die(without, photo)
    assert side.face.token == token and side.confidence >= 0.99 and not side.uncertain  # silent without the flag
    shipped = read_image(photo, models)
    (flagged,) = on_no_die(shipped, photo)
    assert flagged.uncertain
    # the photo's other dice keep their flags: only the cut box gained one
    assert gained_flags(without, shipped) == [token]


def test_only_a_small_box_at_the_frames_edge_is_flagged():
    def box(x, y, side):
        return (x, y, x + side, y + side)

    dice = [box(100.0, 100.0, 40.0), box(300.0, 200.0, 40.0), box(500.0, 100.0, 40.0)]
    small = 40.0 * np.sqrt(LEVELS.cut_area) * 0.9  # under LEVELS.cut_area of the others' area
    assert not cut_boxes(dice, 640, 480, LEVELS).any()
    assert cut_boxes(dice + [box(0.0, 300.0, small)], 640, 480, LEVELS).tolist() == [False, False, False, True]
    assert cut_boxes(dice + [box(640.0 - small, 300.0, small)], 640, 480, LEVELS)[-1]  # the right edge
    assert cut_boxes(dice + [box(300.0, 480.0 - small, small)], 640, 480, LEVELS)[-1]  # the bottom edge
    assert cut_boxes(dice + [box(300.0, 0.0, small)], 640, 480, LEVELS)[-1]  # the top edge
    assert not cut_boxes(dice + [box(300.0, 480.0 - small, small)], 480, 640, LEVELS).any()  # the bottom is farther
    assert cut_boxes(dice + [box(CUT_EDGE, 300.0, small)], 640, 480, LEVELS)[-1]  # within CUT_EDGE of the edge
    assert not cut_boxes(dice + [box(2 * CUT_EDGE, 300.0, small)], 640, 480, LEVELS).any()  # beyond it
    assert not cut_boxes(dice + [box(20.0, 300.0, small)], 640, 480, LEVELS).any()  # small, but inside the frame
    assert not cut_boxes(dice + [box(0.0, 300.0, 40.0)], 640, 480, LEVELS).any()  # at the edge, as large as the dice
    assert cut_boxes([box(0.0, 0.0, 10.0)], 640, 480, LEVELS).tolist() == [True]  # the only box, at the edge
    assert not cut_boxes([box(20.0, 20.0, 10.0)], 640, 480, LEVELS).any()  # the only box, inside the frame
    assert cut_boxes([], 640, 480, LEVELS).shape == (0,)


@needs_models
def test_the_only_box_of_a_photo_at_the_frames_edge_is_flagged():
    photo = PHOTOS / "v1_calib_000210.jpg"
    models = load_models()
    reading = read_image(photo, models)
    (side,) = on_no_die(reading, photo)  # no labelled top face in the frame
    assert len(reading.dice) == 1 and side.confidence >= 0.99  # read as surely as a top face
    assert side.uncertain
    assert not read_image(photo, models, ReadSettings(disabled_doubts=frozenset({"cut_boxes"}))).dice[0].uncertain
