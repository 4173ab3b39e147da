"""Camera faults: they keep the labels true, reach training at the asked share, and make the stress set."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from training.detector import augment
from training.faults import colour_fringes, random_fault
from training.stress import FAULTS, make_stress_set

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"


def _photo(h=120, w=160) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(40, 216, (h, w, 3), dtype=np.uint8)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_every_fault_keeps_the_photo_size_so_the_labels_stay_true(name):
    rgb = _photo()
    out = FAULTS[name](rgb.copy())
    assert out.shape == rgb.shape and out.dtype == np.uint8
    if name != "none":
        assert not np.array_equal(out, rgb), f"{name} left the photo unchanged"


def test_a_lamp_cast_makes_grey_warm_and_a_shade_cast_makes_it_cool():
    grey = np.full((32, 32, 3), 128, np.uint8)
    r, g, b = FAULTS["lamp_cast"](grey)[0, 0].astype(int)
    assert r > g > b
    r, g, b = FAULTS["shade_cast"](grey)[0, 0].astype(int)
    assert b > g > r


def test_motion_blur_smears_without_changing_the_light():
    rgb = np.zeros((64, 64, 3), np.uint8)
    rgb[32, 32] = 255
    out = FAULTS["motion_blur"](rgb)
    assert out[32, 32, 0] < 64  # the point is spread along the smear
    assert abs(int(out.astype(int).sum()) - int(rgb.astype(int).sum())) < 0.1 * rgb.astype(int).sum()


def test_a_stress_set_holds_each_fault_of_each_photo_with_the_same_labels(tmp_path):
    versions = {name: FAULTS[name] for name in ("none", "jpeg_q25", "messaging_app")}
    assert make_stress_set(SAMPLES, tmp_path, limit=2, versions=versions) == 6
    source = [json.loads(line) for line in (SAMPLES / "labels.jsonl").read_text().splitlines()[:2]]
    lines = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert [line["conditions"]["stress"] for line in lines] == ["none", "jpeg_q25", "messaging_app"] * 2
    for i, line in enumerate(lines):
        assert line["dice"] == source[i // 3]["dice"]
        image = cv2.imread(str(tmp_path / line["image"]))
        assert image.shape[:2] == (line["height"], line["width"])


def test_random_faults_keep_the_size_and_vary():
    rng = np.random.default_rng(1)
    rgb = _photo(64, 64)
    outs = [random_fault(rgb, rng) for _ in range(40)]
    assert all(o.shape == rgb.shape and o.dtype == np.uint8 for o in outs)
    assert len({o.tobytes() for o in outs}) >= 30  # a few draws may repeat (JPEG qualities are whole numbers)


def test_colour_fringes_move_red_and_blue_apart_and_leave_green():
    rgb = np.zeros((40, 40, 3), np.uint8)
    rgb[:, 20] = 255
    out = colour_fringes(rgb, 1.0, dx=2.0)
    assert np.array_equal(out[..., 1], rgb[..., 1])
    assert out[10, 22, 0] == 255 and out[10, 18, 2] == 255


def test_detector_faults_change_pixels_but_not_boxes():
    img = _photo(300, 400)
    boxes = np.array([[100.0, 80.0, 150.0, 130.0, 1.0]], np.float32)
    plain, plain_boxes = augment(img, boxes, np.random.default_rng(5), 256, fault_share=0.0)
    faulty, faulty_boxes = augment(img, boxes, np.random.default_rng(5), 256, fault_share=1.0)
    assert np.array_equal(plain_boxes, faulty_boxes)
    assert not np.array_equal(plain, faulty)


def test_reader_faults_reach_about_the_asked_share_of_crops():
    torch = pytest.importorskip("torch")
    from training.reader import with_faults

    x = torch.from_numpy(_photo(64, 64)).permute(2, 0, 1).float().repeat(200, 1, 1, 1)
    assert torch.equal(with_faults(torch, x, 0.0, np.random.default_rng(0)), x)
    out = with_faults(torch, x, 0.3, np.random.default_rng(0))
    changed = int(((out - x).abs().amax(dim=(1, 2, 3)) > 0).sum())
    assert 40 <= changed <= 80
