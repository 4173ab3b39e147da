"""Where a kept box's cube may have a top face the detector missed (top_faces.candidates): a
weak heat peak beyond the box, away from the camera, over no box read. A heatmap made by hand,
no models."""

import numpy as np

from companion.vision.detector import Detection, Heatmap
from companion.vision.top_faces import candidates
from companion.vision.tuning import shipped_tuning

STRIDE = 4
SCALE = 0.5  # input pixels per image pixel: a heat cell is 8 image pixels
THRESHOLD = 0.4  # the detector's
FACE = 40.0  # image pixels
DOWN = np.array([0.0, 0.01])  # the photo's faces grow downwards: the camera is below
LEVELS, OVERLAP = shipped_tuning().missed_tops, shipped_tuning().read.peak_overlap


def _heat(peaks: dict[tuple[int, int], float]) -> Heatmap:
    """A 50 x 50-cell heatmap with these peaks (cell (x, y): heat), each box FACE pixels wide."""
    heat = np.zeros((50, 50), dtype=np.float32)
    for (x, y), h in peaks.items():
        heat[y, x] = h
    size = np.zeros((4, 50, 50), dtype=np.float32)
    size[2:] = np.log(FACE * SCALE)
    return Heatmap(np.zeros((1, 3, 200, 200), dtype=np.float32), heat, size, SCALE, (400, 400))


def _box(cx: float, cy: float, score: float = 0.9) -> Detection:
    return Detection((cx - FACE / 2, cy - FACE / 2, cx + FACE / 2, cy + FACE / 2), score)


def _cell_centre(x: int, y: int) -> tuple[float, float]:
    return x * STRIDE / SCALE, y * STRIDE / SCALE


def test_a_weak_peak_beyond_a_kept_box_away_from_the_camera_is_a_candidate():
    kept = _box(*_cell_centre(20, 25))
    # 25 px (0.6 faces) above it, away from the camera; and as far below it, toward the camera
    heat = _heat({(20, 25): 0.9, (20, 22): 0.1, (20, 28): 0.1})
    found = candidates(heat, STRIDE, [kept], [kept], DOWN, LEVELS, OVERLAP)
    assert [(k, (c.box[1] + c.box[3]) / 2) for k, c in found] == [(0, 22 * STRIDE / SCALE)]


def test_no_candidate_over_a_box_read_without_a_perspective_or_too_far_or_too_weak():
    kept = _box(*_cell_centre(20, 25))
    above = _box(*_cell_centre(20, 21), score=0.3)  # a box read (the face head turned it down)
    heat = _heat({(20, 25): 0.9, (20, 21): 0.2, (30, 15): 0.2, (10, 22): 0.04})
    assert candidates(heat, STRIDE, [kept], [kept, above], DOWN, LEVELS, OVERLAP) == []
    # the same peak over no box read is one, but not in a photo whose perspective is unknown
    assert len(candidates(heat, STRIDE, [kept], [kept], DOWN, LEVELS, OVERLAP)) == 1
    assert candidates(heat, STRIDE, [kept], [kept], None, LEVELS, OVERLAP) == []
    # a peak where a top face would lie, over no box read: too weak, or one, however strong (a peak
    # over the threshold in the upright view that no box marks is a face the detector missed too)
    for heat_there, expected in ((0.04, 0), (0.2, 1), (THRESHOLD + 0.05, 1)):
        beyond = _heat({(20, 25): 0.9, (20, 22): heat_there})
        assert len(candidates(beyond, STRIDE, [kept], [kept], DOWN, LEVELS, OVERLAP)) == expected
    # the detector's box there is that face, whatever its heat
    boxed = _box(*_cell_centre(20, 22))
    assert candidates(_heat({(20, 25): 0.9, (20, 22): THRESHOLD + 0.05}), STRIDE, [kept], [kept, boxed], DOWN, LEVELS,
                      OVERLAP) == []
