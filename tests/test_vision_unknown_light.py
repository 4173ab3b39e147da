"""A photo whose light no white reference tells (dark bodies) is trusted only as far as an
unusual light (pipeline.UNUSUAL_LIGHT_SURE): real ONNX models through the real pipeline on a
generated calibration photo kept in tests/photos with its label row, photo 96 of
`training.synth --split calib --seed 8301 --light warm` (docs/synthetic_data.md, the choosing
sets): black dice under a warm lamp, a red 5 read as 8 at 0.97, silent with every other flag on."""

import json
from pathlib import Path

import pytest

from companion.vision import ReadSettings, read_image
from companion.vision.models import load_models, models_present
from companion.vision.pipeline import UNUSUAL_LIGHT_SURE
from training.evaluate import IOU_MIN, box_iou

needs_models = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
PHOTO = Path(__file__).parent / "photos" / "warm_calib_8301_000096.jpg"


def _red_five(reading):
    truth = json.loads(PHOTO.with_suffix(".json").read_text("utf-8"))["dice"]
    (box,) = [d["box"] for d in truth if d["value"] == 5 and d["color"] == "red"]
    (die,) = [d for d in reading.dice if box_iou(d.box, box) >= IOU_MIN]
    return die


@needs_models
def test_a_misread_under_a_light_no_white_body_tells_is_flagged():
    models = load_models()
    die = _red_five(read_image(PHOTO, models, ReadSettings()))
    assert die.face.token == "8r" and 0.95 <= die.confidence < UNUSUAL_LIGHT_SURE
    assert die.uncertain
    without = _red_five(read_image(PHOTO, models, ReadSettings(flag_unknown_light=False)))
    assert without.face.token == "8r" and not without.uncertain  # silent without it
