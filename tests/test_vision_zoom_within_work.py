"""A photo too small for a sharper copy, whose faces are small, is searched again in the working
image itself at a larger detector input (ReadSettings.zoom_within_work, the tuning's min_work_zoom):
a 960-px photo holds twice the pixels of the detector's 448-px input.

Real ONNX models through the real pipeline on a generated calibration photo kept in tests/photos
with its label row: data/stress_tilt_calib photo 1 (`training.synth --split calib --seed 2601
--tilt 27 40`), 960 x 720, eight black dice whose faces are 21-48 px. At the detector's input the
green 7 beside a red 9 gets no box; searched again, every die is found and read right."""

from companion.vision import ReadSettings, read_image
from companion.vision.models import load_models
from photo_helpers import PHOTOS, die_on, labelled_dice, needs_models, on_no_die
from training.evaluate import IOU_MIN, box_iou

PHOTO = PHOTOS / "tilt_calib_000001.jpg"


def _found(reading, box) -> bool:
    return any(box_iou(d.box, box) >= IOU_MIN for d in reading.dice)


@needs_models
def test_a_small_photo_with_small_faces_is_searched_again_in_its_own_pixels():
    models = load_models()
    truth = labelled_dice(PHOTO)
    (missed,) = [d["box"] for d in truth if (d["value"], d["color"]) == (7, "green")]
    without = read_image(PHOTO, models, ReadSettings(zoom_within_work=False))
    assert not _found(without, missed)  # the first search alone misses the green 7

    shipped = read_image(PHOTO, models)
    assert all(_found(shipped, d["box"]) for d in truth)
    assert not on_no_die(shipped, PHOTO)
    for d in truth:
        token = f"{d['value']}{d['color'][0]}"
        assert die_on(shipped, PHOTO, token).face.token == token
