"""A cube's top face the detector missed, next to a box it kept: the kept box is then
probably that cube's side face, read as a die of its own (a lone side face: no other box on
its cube, so cubes.py's pair rules never see it, and its reading is a wrong die at full
confidence).

Seen from well off vertical, a cube shows its side faces toward the camera, the way the
photo's faces grow; its top face lies beyond the side face, away from the camera. When the
detector boxed the side face and missed the top face, the top face still leaves a peak in
the upright view's heatmap (mostly well under the detector's threshold; over it where the
mirror views, averaged in, took it under), about a face away from the kept box on that far
side. `candidates` finds such peaks next to each kept box; the reader's face head
then judges a box there (pipeline.kept_boxes), and a kept box with a sure top face beyond it
is flagged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from companion.vision.detector import Detection, Heatmap, peaks_to_detections
from companion.vision.tuning import MissedTopLevels

def candidates(
    heat: Heatmap, stride: int, kept: Sequence[Detection], others: Sequence[Detection],
    nearer: np.ndarray | None, levels: MissedTopLevels, overlap: float,
) -> list[tuple[int, Detection]]:
    """(index in `kept`, box) for each peak of the heatmap (from levels.missed_heat, well under the
    detector's threshold: a missed top face next to a lone side face leaves a weak peak) that lies
    levels.missed_reach from a kept box (about half a face plus half the side face's foreshortened
    height), away from the camera (levels.missed_away, against `nearer`: the direction the photo's
    faces grow; None: no candidates) and over no box read (`others`, within levels.missed_same_box:
    a peak the detector boxed is that box, whatever its heat; one over the threshold in this view
    alone that no box marks is a face the detector missed too). `overlap`: the detector's
    (peaks_to_detections). Boxes in the heatmap's image pixels."""
    if nearer is None or not kept or not np.linalg.norm(nearer) > 0:
        return []
    away = -nearer / np.linalg.norm(nearer)
    weak = peaks_to_detections(heat.total / heat.views, heat.size, stride, heat.scale, levels.missed_heat,
                               levels.missed_candidates, heat.image_wh, overlap)
    near, far = levels.missed_reach
    out: list[tuple[int, Detection]] = []
    for c in weak:
        if any(_near(c, d) < levels.missed_same_box for d in others):
            continue
        for k, d in enumerate(kept):
            offset = np.subtract(c.centre, d.centre)
            dist = float(np.linalg.norm(offset)) / max(d.side, 1.0)
            if near <= dist <= far and float(offset @ away) / (np.linalg.norm(offset) + 1e-9) >= levels.missed_away:
                out.append((k, c))
    return out


def _near(a: Detection, b: Detection) -> float:
    """The distance between two boxes' centres, in box b's size."""
    return math.dist(a.centre, b.centre) / max(b.side, 1.0)
