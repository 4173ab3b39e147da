"""One die per cube: a box that may be a second box on a cube already read.

Seen from well off vertical, a cube's side face can look enough like a top face for the
detector to box it next to the real top face, and the photo then reads one die twice. A side
face's centre lies about half a face from its top face's centre plus half its own,
foreshortened, height; two dice standing apart are usually a face's size apart. So a box whose
centre is closer than CUBE_NEAR times the larger box's size to the centre of a surer box, and
that is not itself a sure top face (its detector score times the reader's face probability
under SIDE_SURE), may be a side face of that cube.

From boxes alone this cannot be told from two dice touching at a strong tilt (seen from 35
degrees off vertical, the centres of two touching dice come as close, in box sizes, as a top
and a side face), so by default such a box is flagged for the player to check rather than
dropped; ReadSettings.one_per_cube drops it instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from companion.vision.detector import Detection

CUBE_NEAR = 0.85
SIDE_SURE = 0.45


def second_boxes(detections: Sequence[Detection], face_probs: Sequence[float]) -> list[int]:
    """Indices of the boxes that may be a second box on a cube a surer box is on."""
    sure = [d.score * float(f) for d, f in zip(detections, face_probs)]
    surer: list[int] = []
    second: list[int] = []
    for i in sorted(range(len(detections)), key=lambda i: -sure[i]):
        if sure[i] < SIDE_SURE and any(_same_cube(detections[i], detections[j]) for j in surer):
            second.append(i)
        else:
            surer.append(i)
    return sorted(second)


def _same_cube(a: Detection, b: Detection) -> bool:
    ax, ay = (a.box[0] + a.box[2]) / 2, (a.box[1] + a.box[3]) / 2
    bx, by = (b.box[0] + b.box[2]) / 2, (b.box[1] + b.box[3]) / 2
    size = math.sqrt(max(_area(a), _area(b)))
    return math.hypot(ax - bx, ay - by) < CUBE_NEAR * size


def _area(d: Detection) -> float:
    return max(0.0, d.box[2] - d.box[0]) * max(0.0, d.box[3] - d.box[1])
