"""The second look around unsure boxes (companion/vision/relook.py), with the real reader:
a box slid half off its top face is moved back onto it, and a sure box is left alone."""

import json
from pathlib import Path

import numpy as np
import pytest

from companion.vision import relook as relook_module
from companion.vision.crops import box_crop
from companion.vision.image_io import load_work_image
from companion.vision.models import Detection, _iou, load_models, models_present

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"
pytestmark = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")


def _faces(name: str):
    row = next(json.loads(line) for line in (SAMPLES / "labels.jsonl").read_text().splitlines()
               if json.loads(line)["image"] == name)
    work = load_work_image(SAMPLES / row["image"])
    return work, [work.to_work(tuple(d["box"])) for d in row["dice"] if not d.get("truncated")]


def _read(work, boxes):
    reader = load_models().reader
    return reader, reader.logits(np.stack([box_crop(work.rgb, b, reader.size) for b in boxes]))


def test_shifted_places_keep_the_size_and_surround_the_box():
    places = relook_module.shifted((10.0, 20.0, 30.0, 60.0))
    assert len(places) == 8 * len(relook_module.SHIFTS)
    assert all(abs((x1 - x0) - 20) < 1e-9 and abs((y1 - y0) - 40) < 1e-9 for x0, y0, x1, y1 in places)
    centres = {((x0 + x1) / 2 - 20, (y0 + y1) / 2 - 40) for x0, y0, x1, y1 in places}
    assert (-5.0, -10.0) in centres and (10.0, 20.0) in centres  # a quarter and a half, both ways


def test_sure_boxes_are_not_looked_at_again():
    work, boxes = _faces("s00_white_10.jpg")
    reader, read = _read(work, boxes)
    sure = np.setdiff1d(np.arange(len(boxes)), relook_module.unsure(read))
    assert len(sure) >= 8
    detections = [Detection(b, 0.9) for b in boxes]
    moved, _ = relook_module.relook(work.rgb, detections, read, reader)
    assert all(moved[i].box == detections[i].box for i in sure)


def test_a_box_slid_off_its_face_is_moved_back():
    work, boxes = _faces("s00_white_10.jpg")
    reader, truth_read = _read(work, boxes)
    slid = []
    for x0, y0, x1, y1 in boxes:  # each box slid down by half its height, onto the body below
        h = y1 - y0
        slid.append((x0, y0 + 0.5 * h, x1, y1 + 0.5 * h))
    _, read = _read(work, slid)
    looked = relook_module.unsure(read)
    assert len(looked) >= 3  # half a face leaves the reader unsure
    detections = [Detection(b, 0.9) for b in slid]
    moved, again = relook_module.relook(work.rgb, detections, read, reader)
    back = [i for i in looked if _iou(np.array(moved[i].box), np.array([boxes[i]]))[0] > 0.7]
    assert len(back) >= 0.8 * len(looked)
    for i in back:  # moved back, it reads as the face truly there
        assert again.value[i].argmax() == truth_read.value[i].argmax()
        assert again.color[i].argmax() == truth_read.color[i].argmax()
