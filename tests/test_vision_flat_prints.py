"""A print on a card read as a die has no cube around it: the ground beside its box is the card,
the colour of its "face's" body, and it is flagged however sure its reading (doubts.flat_prints).

Real ONNX models through the real pipeline on a generated calibration photo kept in
tests/photos with its label rows: data/far_calib photo 51 (`training.synth --split calib
--seed 3002 --phone-far`, a 12 MP photo from sitting height; kept cropped to x 1100-4032,
y 0-2500 and halved, JPEG quality 85, for its size), where a card's green "+" in a drawn square
is read as a die, 4g at 1.00: a silent extra die with every other flag on."""

import numpy as np

from companion.vision import ReadSettings, read_image
from companion.vision.doubts import body_like_ground, flat_prints
from companion.vision.models import load_models
from photo_helpers import PHOTOS, gained_flags, needs_models, on_no_die
from companion.vision.tuning import shipped_tuning

LEVELS = shipped_tuning().doubts

PHOTO = PHOTOS / "far_calib_000051.jpg"


@needs_models
def test_a_print_on_a_card_read_as_a_sure_die_is_flagged():
    models = load_models()
    without = read_image(PHOTO, models, ReadSettings(disabled_doubts=frozenset({"flat_prints"})))
    (card,) = on_no_die(without, PHOTO)
    assert card.face.token == "4g" and card.confidence >= 0.99 and not card.uncertain  # silent without this flag
    shipped = read_image(PHOTO, models)
    (flagged,) = on_no_die(shipped, PHOTO)
    assert flagged.uncertain
    # the photo's dice keep their flags: only the card gained one
    assert gained_flags(without, shipped) == ["4g"]


def _scene(card: bool) -> tuple[np.ndarray, list[tuple[float, float, float, float]]]:
    """A grey table with two ivory dice (a darker side face below each) and, with `card`, an
    ivory card with a green mark on it."""
    rgb = np.full((200, 300, 3), 90, dtype=np.uint8)
    boxes = []
    for x in (20, 100):
        rgb[40:70, x:x + 30] = (235, 230, 210)  # top face
        rgb[70:80, x:x + 30] = (150, 145, 130)  # side face in shade
        rgb[50:60, x + 10:x + 20] = (200, 40, 40)  # ink
        boxes.append((float(x), 40.0, float(x + 30), 70.0))
    if card:
        rgb[100:190, 180:290] = (235, 230, 210)
        rgb[140:150, 225:245] = (30, 150, 50)
        boxes.append((215.0, 125.0, 255.0, 165.0))
    return rgb, boxes


def test_only_a_box_on_ground_of_its_own_body_colour_is_flagged():
    rgb, boxes = _scene(card=True)
    shares = [body_like_ground(rgb, b, LEVELS) for b in boxes]
    assert shares[2] - max(shares[:2]) > LEVELS.flat_print_lead
    assert flat_prints(rgb, boxes, LEVELS).tolist() == [False, False, True]
    rgb, boxes = _scene(card=False)
    assert not flat_prints(rgb, boxes, LEVELS).any()
    # dice on a table of their own body colour: every box has such ground, none leads
    rgb[:] = (235, 230, 210)
    assert not flat_prints(rgb, boxes, LEVELS).any()
    assert not flat_prints(rgb, boxes[:1], LEVELS).any()  # one box: nothing to compare
    assert flat_prints(rgb, [], LEVELS).shape == (0,)
