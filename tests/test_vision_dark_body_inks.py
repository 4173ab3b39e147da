"""On dark bodies (no white reference) a photo's red and orange inks are measured raw, a few
degrees apart under a warm lamp, but each colourful enough against the black to be measured
alike within the photo (joint_colour.DARK_HUE_NOISE): the photo's reds, decided together,
take back a red the colour head reads orange (and, the set's constraint applied, the blue whose
die the misread red took).

Real ONNX models through the real pipeline on photo 369 of the more warm calibration set
(`training.synth --split calib --seed 8301 --light warm`, data/more/stress_warm_calib, black
bodies): its red 4's ink measures 35 degrees, among red inks at 32-33 and orange ones at 40-42;
the head reads it orange (0.78), and with the light bodies' hue model the inks leave it so,
and its blue 2 green."""

import pytest

from companion.vision import joint_colour, read_image
from companion.vision.models import load_models, models_present
from training.evaluate import IOU_MIN, box_iou
from training.synth.dataset import encode_jpeg, render_indexed
from training.synth.scene import SceneOptions

needs_models = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
SEED, INDEX, RED_FOUR, BLUE_TWO = 8301, 369, "4r", "2b"


def _read_as(reading, photo) -> dict[str, tuple[str, bool]]:
    """Each labelled top face (die:face) -> what the reading made of it (box IoU >= 0.5) and
    whether it is flagged, or ('-', False)."""
    out = {}
    for die in photo.dice:
        if die["truncated"]:
            continue
        hits = [r for r in reading.dice if box_iou(r.box, die["box"]) >= IOU_MIN]
        out[f"{die['die']}:{die['value'] or 'W'}{die['color'][0]}"] = (
            (hits[0].face.token, hits[0].uncertain) if hits else ("-", False))
    return out


@pytest.fixture(scope="module")
def photo():
    return render_indexed(SEED, "calib", INDEX, SceneOptions(light="warm"))


@needs_models
def test_a_warm_lit_red_on_a_black_body_is_told_by_the_photos_other_reds(photo, monkeypatch):
    data = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    models = load_models()
    told = _read_as(read_image(data, models), photo)
    (four,) = [t for t in told if t.endswith(":" + RED_FOUR)]
    (two,) = [t for t in told if t.endswith(":" + BLUE_TWO)]
    assert told[four] == (RED_FOUR, True)  # moved by the photo's inks: flagged for the player to check
    assert told[two][0] == BLUE_TWO
    # with the light bodies' hue model for red and orange the same photo reads them orange and green
    monkeypatch.setattr(joint_colour, "DARK_PAIRS", ())
    untold = _read_as(read_image(data, models), photo)
    assert (untold[four][0], untold[two][0]) == ("4o", "2g")
    # every other die reads alike either way
    assert ({t: r[0] for t, r in told.items() if t not in (four, two)}
            == {t: r[0] for t, r in untold.items() if t not in (four, two)})
