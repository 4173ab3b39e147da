"""The box refiner's training crops and targets agree with the run-time crop and with the face."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `training` is not an installed package

from companion.vision.crops import crop_square  # noqa: E402
from companion.vision.refine import REFINER_CONTEXT, REFINER_SIZE, refiner_crop  # noqa: E402

torch = pytest.importorskip("torch")

from training.refiner import PRE_CONTEXT, PRE_SIZE, decode_boxes, refiner_batch  # noqa: E402

FACE = (240, 40, 40)


def _pre_crop(rng) -> tuple[np.ndarray, np.ndarray]:
    """A red square face (corners given) on a random grey background, cut as the cache cuts it."""
    img = np.repeat(np.repeat(rng.integers(60, 200, (40, 40, 1), dtype=np.uint8), 10, 0), 10, 1).repeat(3, 2)
    corners = np.array([[180.0, 170.0], [230.0, 170.0], [230.0, 220.0], [180.0, 220.0]])
    img[170:220, 180:230] = FACE
    (x0, y0), (x1, y1) = corners.min(0), corners.max(0)
    cx, cy, side = (x0 + x1) / 2, (y0 + y1) / 2, max(x1 - x0, y1 - y0) * PRE_CONTEXT
    pre = crop_square(img, cx, cy, side, PRE_SIZE)
    return pre, (corners - (cx, cy)) * (PRE_SIZE / side)


def test_an_unmoved_box_gives_the_run_time_crop_and_a_centred_target():
    pre, polygon = _pre_crop(np.random.default_rng(0))
    x, target, truth, moved, side = refiner_batch(torch, pre[None], polygon[None], np.random.default_rng(1), jitter=False)
    # the run-time crop of the same box, cut from the pre-crop (the face box is 50 px there x its scale)
    face = PRE_SIZE / PRE_CONTEXT
    # (the pre-crop's centre point is at PRE_SIZE / 2 - 0.5 in pixel-centre terms, as crop_square cut it)
    middle = PRE_SIZE / 2 - 0.5
    run_time = refiner_crop(pre, middle, middle, REFINER_CONTEXT * face, REFINER_SIZE).astype(np.float32)
    trained_on = x[0].permute(1, 2, 0).numpy()
    assert trained_on.shape == run_time.shape == (REFINER_SIZE, REFINER_SIZE, 3)
    assert np.abs(trained_on - run_time).mean() < 0.5
    assert np.allclose(target[0, :2].numpy(), 0, atol=1e-4)
    assert np.allclose(np.exp(target[0, 2:].numpy()), 1 / REFINER_CONTEXT, atol=1e-3)


def test_the_target_box_of_a_moved_turned_crop_holds_the_face():
    pre, polygon = _pre_crop(np.random.default_rng(2))
    n = 64
    x, target, truth, moved, side = refiner_batch(torch, np.repeat(pre[None], n, 0), np.repeat(polygon[None], n, 0),
                                                  np.random.default_rng(3))
    assert np.allclose(decode_boxes(target.numpy(), moved[:, :2], side), truth, atol=1e-3)
    red = (x[:, 0] > 200) & (x[:, 1] < 90)  # (n, size, size): the face's pixels in each crop
    for i in range(n):
        (cx, cy), (w, h) = (target[i, :2].numpy() + 0.5) * REFINER_SIZE, np.exp(target[i, 2:].numpy()) * REFINER_SIZE
        face = red[i].numpy()
        # the box is the turned square's bounding box: the face fills at least half of it, and
        # no red lies beyond it (give or take the one pixel that interpolation smears)
        assert face[_box_mask(cx, cy, w - 2, h - 2)].mean() > 0.45, i
        assert face[~_box_mask(cx, cy, w + 2, h + 2)].sum() == 0, i


def _box_mask(cx: float, cy: float, w: float, h: float) -> np.ndarray:
    """The crop's pixels whose centres lie in the box (pixel j covers j..j+1)."""
    centres = np.arange(REFINER_SIZE) + 0.5
    inside_x = np.abs(centres - cx) <= w / 2
    inside_y = np.abs(centres - cy) <= h / 2
    return inside_y[:, None] & inside_x[None, :]
