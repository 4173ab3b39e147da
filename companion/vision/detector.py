"""The detector: a CenterNet-style heatmap of top-face centres plus each face's box size."""

from __future__ import annotations

import math

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from companion.vision.regions import merge_if_cheaper
from companion.vision.session import metadata, open_session
from companion.vision.settings import CPU_PROVIDERS, MAX_VIEWS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from onnxruntime import InferenceSession

# (flip up-down, flip left-right) for each mirror view, in the order they are added
_MIRRORS = ((False, False), (False, True), (True, False), (True, True))
# The network's largest stride: its input is padded to a multiple of this, and a window of the
# input is cut in whole blocks of it, so that it lines up with the strides as the whole image does
BLOCK = 32
# views_near_peaks: the network's reach: a window's mirror views match the whole image's at cells
# this many input pixels inside it, and the core so matched reaches this far around a peak (its face
# and the cells next to it)
MIRROR_REACH = 64
MIRROR_CORE = 16
# What one run of the detector costs beyond its pixels, in pixels of input: windows are merged only
# where one run over their bounding box costs less than a run over each (the heat is the same either way)
MIRROR_RUN_PX = 4096


@dataclass(frozen=True, slots=True)
class Detection:
    box: tuple[float, float, float, float]  # in the working image's pixels
    score: float

    @property
    def centre(self) -> tuple[float, float]:
        return (self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2

    @property
    def area(self) -> float:
        return max(0.0, self.box[2] - self.box[0]) * max(0.0, self.box[3] - self.box[1])

    @property
    def side(self) -> float:
        """The side of the square of the box's area: its size whatever its shape."""
        return math.sqrt(self.area)


@dataclass(frozen=True)
class Heatmap:
    """The detector's face-centre heatmap for one image, summed over the views taken so far."""

    batch: np.ndarray  # the input it was computed from (1, 3, h, w)
    total: np.ndarray  # the sum of the views' heatmaps
    size: np.ndarray  # the upright view's box sizes (4, h', w')
    scale: float  # input pixels per image pixel
    image_wh: tuple[int, int]
    views: int | np.ndarray = 1  # per cell where not every cell has the same (views_near_peaks)


@dataclass(frozen=True)
class DetectorModel:
    """The detector session with its input size, stride, threshold and mirror views.

    The threshold and the views are those the calibration chose them with; a caller that
    wants others makes a copy (dataclasses.replace) or passes `views` per call.
    """

    session: InferenceSession
    input_long_side: int
    stride: int
    threshold: float
    overlap: float  # a weaker peak whose box overlaps a stronger one's beyond this (IoU) is that face
    max_detections: int = 24
    views: int = 1

    @classmethod
    def load(cls, path: Path, overlap: float, providers: Sequence[str] = CPU_PROVIDERS,
             threshold: float | None = None, views: int = 1) -> DetectorModel:
        """The model at `path`; `threshold` None keeps the one written into the model (its training's)."""
        session = open_session(path, providers)
        meta = metadata(session)
        own = float(meta.get("threshold", 0.3)) if threshold is None else threshold  # 0.3: training.detector's
        return cls(session, int(meta.get("input_long_side", 448)), int(meta.get("stride", 4)), own, overlap,
                   views=views)

    def prepare(self, rgb: np.ndarray, long_side: int | None = None) -> tuple[np.ndarray, float]:
        """Shrink to the input size, pad to a multiple of 32; return NCHW float and the scale."""
        h, w = rgb.shape[:2]
        k = (long_side or self.input_long_side) / max(h, w)
        nw, nh = max(1, round(w * k)), max(1, round(h * k))
        small = cv2.resize(rgb, (nw, nh), interpolation=cv2.INTER_AREA) if k != 1 else rgb
        ph, pw = -(-nh // BLOCK) * BLOCK, -(-nw // BLOCK) * BLOCK
        batch = np.zeros((1, 3, ph, pw), dtype=np.float32)
        batch[0, :, :nh, :nw] = small.transpose(2, 0, 1)
        return batch, k

    def detect(self, rgb: np.ndarray, long_side: int | None = None, views: int | None = None) -> list[Detection]:
        """Top faces in `rgb`, shrunk to the model's input size (or to `long_side`: the network
        is fully convolutional, so a larger input finds smaller faces), over `views` mirror
        views (default: the detector's own number)."""
        return self.detections(self.all_views(self.heatmap(rgb, long_side), views))

    def detect_in_windows(
        self, rgb: np.ndarray, windows: list[tuple[int, int, int, int]], long_side: int | None = None,
        views: int | None = None,
    ) -> list[Detection]:
        """detect(), looking only inside `windows`: boxes (x0, y0, x1, y1) of the network's
        input, in whole 32-pixel blocks (see companion/vision/regions.py), that do not overlap.

        Each window is cut from the whole image's input, so its pixels, and how they line up
        with the network's strides, are those the whole search would see: a face well inside
        scores the same.
        """
        batch, k = self.prepare(rgb, long_side)
        out: list[Detection] = []
        for x0, y0, x1, y1 in windows:
            x1, y1 = min(x1, batch.shape[3]), min(y1, batch.shape[2])
            if x1 <= x0 or y1 <= y0:
                continue
            part = np.ascontiguousarray(batch[:, :, y0:y1, x0:x1])
            heat, size = self.session.run(None, {"image": part})
            wh = (min(rgb.shape[1], x1 / k) - x0 / k, min(rgb.shape[0], y1 / k) - y0 / k)
            window = self.all_views(Heatmap(part, heat[0, 0], size[0], k, wh), views)
            dx, dy = x0 / k, y0 / k
            out += [Detection((d.box[0] + dx, d.box[1] + dy, d.box[2] + dx, d.box[3] + dy), d.score)
                    for d in self.detections(window)]
        return out

    def heatmap(self, rgb: np.ndarray, long_side: int | None = None) -> Heatmap:
        """The upright view's heatmap alone: enough to tell how large the faces are."""
        batch, k = self.prepare(rgb, long_side)
        heat, size = self.session.run(None, {"image": batch})
        return Heatmap(batch, heat[0, 0], size[0], k, (rgb.shape[1], rgb.shape[0]))

    def all_views(self, heatmap: Heatmap, views: int | None = None) -> Heatmap:
        """The heatmap summed over mirror images of the input too (each mirrored back).

        A die is a die in a mirror, but a false peak on a side face or a pattern rarely
        survives all views, and a weak true peak gains: on the calibration photos this gives
        fewer false boxes at the same recall. The box sizes come from the upright view. The
        input is padded to a multiple of 32, so a mirrored cell maps exactly onto a cell.
        """
        views = max(1, min(views or self.views, MAX_VIEWS))
        if not isinstance(heatmap.views, int):
            raise ValueError("all_views adds whole views to a heatmap that has them everywhere")
        total = heatmap.total.copy()
        for up_down, left_right in _MIRRORS[heatmap.views:views]:
            axes = tuple(a for a, flip in ((2, up_down), (3, left_right)) if flip)
            mirrored, _ = self.session.run(None, {"image": np.ascontiguousarray(np.flip(heatmap.batch, axes))})
            total += np.flip(mirrored[0, 0], tuple(a - 2 for a in axes))
        return replace(heatmap, total=total, views=max(views, heatmap.views))

    def views_near_peaks(self, heatmap: Heatmap, views: int | None, band: tuple[float, float]) -> Heatmap:
        """all_views(), taken only around the upright view's peaks whose heat lies in `band`.

        Well above the band a peak is a face and well under it none, whatever the mirror views
        add (on the calibration sets the views move a peak's heat by 0.1 at most, typically), so
        only the ground around a peak in between pays for them: a window of the input reaching
        MIRROR_REACH pixels beyond the peak's MIRROR_CORE, in whole 32-pixel blocks so that it
        lines up with the network's strides as the whole image does. In the core the window's
        views see what the whole image's do, and there the heatmap is their mean; elsewhere it
        is the upright view's (ReadSettings.mirror_band). Windows are merged only where that
        saves work (mirror_windows), so cores may overlap: each sets its cells, all alike.
        """
        views = max(1, min(views or self.views, MAX_VIEWS))
        if not isinstance(heatmap.views, int) or heatmap.views != 1:  # per-cell views: already taken
            raise ValueError("views_near_peaks starts from the upright view alone")
        heat, batch = heatmap.total, heatmap.batch
        windows = self.mirror_windows(heatmap, band)
        if views == 1 or not windows:
            return heatmap
        s, (height, width) = self.stride, batch.shape[2:]
        total, taken = heat.copy(), np.ones(heat.shape, np.float32)
        for x0, y0, x1, y1 in windows:
            part = batch[:, :, y0:y1, x0:x1]
            summed = np.zeros(((y1 - y0) // s, (x1 - x0) // s), np.float32)  # the views' sum, but the upright's
            for up_down, left_right in _MIRRORS[1:views]:
                axes = tuple(a for a, flip in ((2, up_down), (3, left_right)) if flip)
                mirrored, _ = self.session.run(None, {"image": np.ascontiguousarray(np.flip(part, axes))})
                summed += np.flip(mirrored[0, 0], tuple(a - 2 for a in axes))
            # the core: MIRROR_REACH inside each side of the window that is not the image's edge
            cx0 = x0 + (MIRROR_REACH if x0 > 0 else 0)
            cy0 = y0 + (MIRROR_REACH if y0 > 0 else 0)
            cx1 = x1 - (MIRROR_REACH if x1 < width else 0)
            cy1 = y1 - (MIRROR_REACH if y1 < height else 0)
            core = (slice(cy0 // s, cy1 // s), slice(cx0 // s, cx1 // s))
            inside = (slice((cy0 - y0) // s, (cy1 - y0) // s), slice((cx0 - x0) // s, (cx1 - x0) // s))
            # set, not added: where two windows' cores overlap, both hold the whole image's views
            total[core] = heat[core] + summed[inside]
            taken[core] = views
        return replace(heatmap, total=total, views=taken)

    def mirror_windows(self, heatmap: Heatmap, band: tuple[float, float]) -> list[tuple[int, int, int, int]]:
        """The windows of the input (x0, y0, x1, y1) views_near_peaks takes the views in: one
        around each upright peak in `band`, merged with others where one run over their bounding
        box costs less than a run over each (regions.merge_if_cheaper); they may overlap."""
        heat, (height, width) = heatmap.total, heatmap.batch.shape[2:]
        peaks = local_peaks(heat) & (heat >= band[0]) & (heat <= band[1])
        s, block, margin = self.stride, BLOCK, MIRROR_REACH + MIRROR_CORE
        centres = [(int(x) * s + s // 2, int(y) * s + s // 2) for y, x in zip(*np.nonzero(peaks))]
        return merge_if_cheaper([(max(0, x - margin) // block * block, max(0, y - margin) // block * block,
                                  min(width, -(-(x + margin) // block) * block),
                                  min(height, -(-(y + margin) // block) * block)) for x, y in centres], MIRROR_RUN_PX)

    def detections(self, heatmap: Heatmap) -> list[Detection]:
        return peaks_to_detections(heatmap.total / heatmap.views, heatmap.size, self.stride, heatmap.scale,
                                   self.threshold, self.max_detections, heatmap.image_wh, self.overlap)


def box_ious(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The intersection over union of box `a` with each row of `b` (x0, y0, x1, y1); boxes along
    the last axis, so that a column of boxes against a row gives every pair's."""
    x0 = np.maximum(a[..., 0], b[..., 0])
    y0 = np.maximum(a[..., 1], b[..., 1])
    x1 = np.minimum(a[..., 2], b[..., 2])
    y1 = np.minimum(a[..., 3], b[..., 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
    area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    return inter / np.maximum(area_a + area_b - inter, 1e-9)


def local_peaks(heat: np.ndarray) -> np.ndarray:
    """Where the heatmap is the largest of its 3 x 3 neighbourhood."""
    return heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))


def peaks_to_detections(
    heat: np.ndarray, size: np.ndarray, stride: int, scale: float, threshold: float, max_det: int,
    image_wh: tuple[int, int], overlap: float,
) -> list[Detection]:
    """Local maxima of the heatmap above threshold -> boxes in working-image pixels.

    size holds, per cell, (dx, dy, log w, log h): the centre's sub-cell offset and the box size
    in input pixels. A final overlap check drops a weaker peak on the same face.
    """
    ys, xs = np.nonzero(local_peaks(heat) & (heat >= threshold))
    if len(ys) == 0:
        return []
    scores = heat[ys, xs]
    order = np.argsort(-scores)[: max_det * 2]
    ys, xs, scores = ys[order], xs[order], scores[order]
    cx = (xs + size[0, ys, xs]) * stride / scale
    cy = (ys + size[1, ys, xs]) * stride / scale
    bw = np.exp(np.clip(size[2, ys, xs], -3, 8)) / scale
    bh = np.exp(np.clip(size[3, ys, xs], -3, 8)) / scale
    w, h = image_wh
    boxes = np.stack([np.clip(cx - bw / 2, 0, w), np.clip(cy - bh / 2, 0, h),
                      np.clip(cx + bw / 2, 0, w), np.clip(cy + bh / 2, 0, h)], axis=1)
    ious = box_ious(boxes[:, None], boxes[None])  # every pair's at once
    kept: list[int] = []
    for i in range(len(boxes)):
        if kept and ious[i, kept].max() > overlap:
            continue
        kept.append(i)
        if len(kept) == max_det:
            break
    return [Detection((float(boxes[i][0]), float(boxes[i][1]), float(boxes[i][2]), float(boxes[i][3])),
                      float(scores[i])) for i in kept]
