"""Where the second search for small dice looks: around what the first search saw, faintly.

The second search runs the detector on a copy up to twice as sharp, four times the pixels of
the first. Dice the first search missed still leave a faint response in its heatmap, so the
second one need only cover the ground around such responses. (When the first search found
no face at all, it is no guide, and the whole photo is searched.) How far that ground reaches
and when the whole photo is searched instead are tuned levels (tuning.RegionLevels).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import cv2
import numpy as np

if TYPE_CHECKING:  # the detector imports this module (merge_if_cheaper)
    from companion.vision.detector import Heatmap
    from companion.vision.tuning import RegionLevels

Box = tuple[int, int, int, int]


def whole_photo(upright: Heatmap) -> list[Box]:
    w, h = upright.image_wh
    return [(0, 0, w, h)]


def faint_regions(
    upright: Heatmap, stride: int, face_px: float | None, faint_heat: float, levels: RegionLevels,
) -> list[Box]:
    """The ground around every faint response of the first search (working-image pixels), in
    boxes that neither overlap nor touch, so that no die is seen twice; the whole photo when
    that is nearly all of it (levels.whole_share: more is not worth the seams), or when the
    first search found no face (face_px None: its heatmap is then no guide to where the dice are).

    A heatmap cell `faint_heat` warm (of 1) may hold a die (ReadSettings.faint_heat); 0
    searches the whole photo, for comparisons. The ground reaches levels.region_margin faces
    beyond each such cell.
    """
    warm = upright.total / upright.views >= faint_heat
    if faint_heat <= 0 or face_px is None or not warm.any():
        return whole_photo(upright)
    cell = stride / upright.scale
    reach = max(1, int(np.ceil(levels.region_margin * face_px / cell)))
    ground = cv2.dilate(warm.astype(np.uint8), np.ones((2 * reach + 1, 2 * reach + 1), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(ground, connectivity=8)
    cells = merge_touching([(int(x), int(y), int(x + bw), int(y + bh)) for x, y, bw, bh, _ in stats[1:count]])
    w, h = upright.image_wh
    boxes = [_to_pixels(box, cell, w, h) for box in cells]
    if sum((b[2] - b[0]) * (b[3] - b[1]) for b in boxes) > levels.whole_share * w * h:
        return whole_photo(upright)
    return boxes


def input_windows(regions: list[Box], k: float, block: int = 32) -> list[Box]:
    """The regions (working-image pixels) as windows of the detector's input at `k` input
    pixels per working pixel, widened to whole blocks of the network's largest stride so that
    a window sees its pixels as the whole search would, and merged where they then touch."""
    return merge_touching([(int(x0 * k) // block * block, int(y0 * k) // block * block,
                             -(-int(np.ceil(x1 * k)) // block) * block, -(-int(np.ceil(y1 * k)) // block) * block)
                            for x0, y0, x1, y1 in regions])


def merge_touching(boxes: list[Box]) -> list[Box]:
    """Boxes that overlap or touch become their bounding box, until none do."""
    boxes = list(boxes)
    i = 0
    while i < len(boxes):
        a = boxes[i]
        j = next((j for j in range(i + 1, len(boxes)) if _touch(a, boxes[j])), None)
        if j is None:
            i += 1
            continue
        b = boxes.pop(j)
        boxes[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
        i = 0  # the grown box may now touch one already passed
    return boxes


def merge_if_cheaper(boxes: list[Box], run_px: int) -> list[Box]:
    """Boxes merged into their bounding box where one run over it costs less than runs over
    each: a run costs its area plus `run_px`, the fixed cost of a run in pixels. The pair that
    saves the most goes first, until no merge saves; the boxes left may overlap. Where they
    still cost more than one run over the bounding box of all (pairs can each fail to save
    where all together would), that one run."""
    boxes = list(boxes)
    while len(boxes) > 1:
        saving, i, j = max((_area(a) + _area(b) + run_px - _area(_union(a, b)), i, j)
                           for i, a in enumerate(boxes) for j, b in enumerate(boxes[i + 1:], i + 1))
        if saving < 0:
            break
        boxes[i] = _union(boxes[i], boxes.pop(j))
    if len(boxes) > 1:
        everything = functools.reduce(_union, boxes)
        if _area(everything) <= sum(map(_area, boxes)) + (len(boxes) - 1) * run_px:
            return [everything]
    return boxes


def _area(a: Box) -> int:
    return (a[2] - a[0]) * (a[3] - a[1])


def _union(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _touch(a: Box, b: Box) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def _to_pixels(box: Box, cell: float, w: int, h: int) -> Box:
    return (max(0, int(box[0] * cell)), max(0, int(box[1] * cell)),
            min(w, int(np.ceil(box[2] * cell))), min(h, int(np.ceil(box[3] * cell))))
