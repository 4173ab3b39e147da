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

# the weakest heat of a peak looked at again (the detector's threshold is about 0.4; a missed
# top face next to a lone side face leaves 0.05-0.2 mostly, up to 0.45 in the upright view
# where the mirror views took the averaged heat under the threshold)
MISSED_HEAT = 0.05
# how far (in the kept box's size) a top face's centre lies from its side face's: about half a
# face plus half the side face's foreshortened height
REACH = (0.35, 1.2)
# how nearly away from the camera (the cosine with the direction the photo's faces shrink) it lies
AWAY = 0.5
# a peak this close (in a read box's size) to a read box's centre is that box again, not a missed face
SAME_BOX = 0.3
MAX_CANDIDATES = 40


def candidates(
    heat: Heatmap, stride: int, kept: Sequence[Detection], others: Sequence[Detection],
    nearer: np.ndarray | None,
) -> list[tuple[int, Detection]]:
    """(index in `kept`, box) for each peak of the heatmap (from MISSED_HEAT) that lies REACH
    from a kept box, away from the camera (AWAY, against `nearer`: the direction the photo's
    faces grow; None: no candidates) and over no box read (`others`: a peak the detector boxed
    is that box, whatever its heat; one over the threshold in this view alone that no box
    marks is a face the detector missed too). Boxes in the heatmap's image pixels."""
    if nearer is None or not kept or not np.linalg.norm(nearer) > 0:
        return []
    away = -nearer / np.linalg.norm(nearer)
    weak = peaks_to_detections(heat.total / heat.views, heat.size, stride, heat.scale, MISSED_HEAT,
                               MAX_CANDIDATES, heat.image_wh)
    out: list[tuple[int, Detection]] = []
    for c in weak:
        if any(_near(c, d) < SAME_BOX for d in others):
            continue
        for k, d in enumerate(kept):
            offset = np.subtract(c.centre, d.centre)
            dist = float(np.linalg.norm(offset)) / max(d.side, 1.0)
            if REACH[0] <= dist <= REACH[1] and float(offset @ away) / (np.linalg.norm(offset) + 1e-9) >= AWAY:
                out.append((k, c))
    return out


def _near(a: Detection, b: Detection) -> float:
    """The distance between two boxes' centres, in box b's size."""
    return math.dist(a.centre, b.centre) / max(b.side, 1.0)
