"""What a reading computed of each die it kept, as learning a confirmed photo needs it.

A dice-set profile (profile.py) keeps, per confirmed die, the reader's embedding of its crop and
the probabilities the set's decoder is given before any profile: the reader's calibrated values
and the colours of the photo's colour head. A reading computes all of them; learning the photo
once it is confirmed takes them from the reading instead of cutting and reading the crops again
(learn.py), and reads only the dice the reading did not box (a die typed in and pointed at).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
import hashlib
import threading

import numpy as np

from companion.vision.detector import box_ious
from companion.vision.reading import Box

SAME_DIE = 0.5  # a confirmed box overlapping a read one this much (IoU) is that die, as evaluation matches


@dataclass(frozen=True)
class ReadFeatures:
    """Per die a reading kept (rows in its order): its box and what the profile learns of it."""

    boxes: np.ndarray  # (n, 4) pixels of the upright full-size photo
    embedding: np.ndarray  # (n, d) rows of length 1
    value_probs: np.ndarray  # (n, 11) before any profile
    color_probs: np.ndarray  # (n, 4) before any profile: the colour head's where the photo's light has one
    face: np.ndarray  # (n,) the face head's probability (1 without one)
    light_kind: str | None  # the photo's light as the colour heads are chosen (light_colour.photo_kind)
    white_reference: bool  # the dice's bodies told the light (inks measured against them)
    ink: np.ndarray | None = None  # (n, 3) how each die's ink looks against its body (ink_look.py; None: not measured)

    def __len__(self) -> int:
        return len(self.boxes)

    def matches(self, boxes: list[Box]) -> list[int | None]:
        """Per box: the row of the die read there (IoU >= SAME_DIE, each row once, best first)."""
        out: list[int | None] = [None] * len(boxes)
        if not boxes or not len(self):
            return out
        iou = box_ious(np.asarray(boxes, np.float64).reshape(-1, 1, 4), self.boxes.astype(np.float64)[None])
        for flat in np.argsort(-iou, axis=None):
            i, j = divmod(int(flat), iou.shape[1])
            if iou[i, j] < SAME_DIE:
                break
            if out[i] is None and j not in out:
                out[i] = j
        return out


class RecentReadings:
    """The features of the last `size` photos read, by their bytes: the photo the players
    confirm is learnt from what its reading computed (a process restart: read again)."""

    def __init__(self, size: int = 16):
        self.size = size
        self._kept: OrderedDict[str, ReadFeatures] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, data: bytes, features: ReadFeatures | None) -> None:
        if features is None or self.size <= 0:
            return
        key = _digest(data)
        with self._lock:
            self._kept[key] = features
            self._kept.move_to_end(key)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)

    def get(self, data: bytes) -> ReadFeatures | None:
        with self._lock:
            return self._kept.get(_digest(data))


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()
