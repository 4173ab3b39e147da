"""A second look around boxes the reader is unsure of: the box may have slid off the top face.

At strong camera tilts a die shows its top face and one or two side faces below it, and the
detector's box sometimes settles between them or on a side face. The reader's crop then
holds half a face: its face head doubts it is a top face, or its value or colour is unsure.
Such a box is tried again at nearby places (shifted by a fraction of its size, in eight
directions), and the place the reader is surest of (top face, value and colour together)
replaces it when it is clearly better. Only unsure boxes are looked at again, so a plain
photo costs nothing more.
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from companion.vision.crops import box_crop
from companion.vision.models import Detection, ReaderLogits, ReaderModel, _iou, softmax

# A box is looked at again when a head's most likely class is at most this likely.
RELOOK_BELOW = float(os.environ.get("COMPANION_RELOOK_BELOW", "0.9"))
# Shifts tried, as fractions of the box's width and height, in each of eight directions.
SHIFTS = (0.25, 0.5)
# A candidate place replaces the box only when it beats it by this much log-probability.
MARGIN = float(os.environ.get("COMPANION_RELOOK_MARGIN", "0.5"))
# A candidate overlapping another detected box this much would read that die instead.
CROWDED_IOU = 0.3
_DIRECTIONS = [(dx, dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dx, dy) != (0, 0)]

Box = tuple[float, float, float, float]


def sureness(read: ReaderLogits) -> np.ndarray:
    """Per box: the log-probability that it is a top face with its likeliest value and colour."""
    total = np.log(softmax(read.value).max(axis=1)) + np.log(softmax(read.color).max(axis=1))
    if read.face is not None:
        total += np.log(np.maximum(softmax(read.face)[:, 1], 1e-12))
    return total


def unsure(read: ReaderLogits, level: float = RELOOK_BELOW) -> np.ndarray:
    """Indices of the boxes some head is unsure of."""
    worst = np.minimum(softmax(read.value).max(axis=1), softmax(read.color).max(axis=1))
    if read.face is not None:
        worst = np.minimum(worst, softmax(read.face)[:, 1])
    return np.flatnonzero(worst <= level)


def shifted(box: Box) -> list[Box]:
    """The box moved by each shift in each of eight directions (its size kept)."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    return [(x0 + dx * s * w, y0 + dy * s * h, x1 + dx * s * w, y1 + dy * s * h)
            for s in SHIFTS for dx, dy in _DIRECTIONS]


def relook(
    rgb: np.ndarray, detections: list[Detection], read: ReaderLogits, reader: ReaderModel
) -> tuple[list[Detection], ReaderLogits]:
    """The detections and their reads, with each unsure box moved where the reader is surest."""
    looked = unsure(read)
    if len(looked) == 0:
        return detections, read
    boxes = np.array([d.box for d in detections])
    owners, places = [], []
    for i in looked:
        others = np.delete(boxes, i, axis=0)
        for place in shifted(detections[i].box):
            if len(others) and _iou(np.array(place), others).max() > CROWDED_IOU:
                continue
            owners.append(i)
            places.append(place)
    if not places:
        return detections, read
    tried = reader.logits(np.stack([box_crop(rgb, p, reader.size) for p in places]))
    return _best_places(detections, read, np.array(owners), places, tried)


def _best_places(
    detections: list[Detection], read: ReaderLogits, owners: np.ndarray, places: list[Box], tried: ReaderLogits
) -> tuple[list[Detection], ReaderLogits]:
    old, new = sureness(read), sureness(tried)
    detections = list(detections)
    heads = {name: getattr(read, name).copy() for name in ("value", "color")}
    face = None if read.face is None else read.face.copy()
    for i in np.unique(owners):
        mine = np.flatnonzero(owners == i)
        best = mine[np.argmax(new[mine])]
        if new[best] < old[i] + MARGIN:
            continue
        detections[i] = replace(detections[i], box=tuple(float(v) for v in places[best]))
        heads["value"][i], heads["color"][i] = tried.value[best], tried.color[best]
        if face is not None:
            face[i] = tried.face[best]
    return detections, ReaderLogits(heads["value"], heads["color"], face)
