"""Cutting the reader's square crops around detected top faces (shared with training)."""

from __future__ import annotations

import cv2
import numpy as np

READER_SIZE = 64  # crop side in pixels fed to the reader
READER_CONTEXT = 1.3  # crop side = this x the box's longer side: the whole face and a margin


def crop_square(
    rgb: np.ndarray, cx: float, cy: float, side: float, size: int = READER_SIZE, angle_deg: float = 0.0
) -> np.ndarray:
    """A size x size crop of the square of `side` pixels centred on (cx, cy), turned by angle_deg.

    One affine warp does the cut, the resize and the turn; pixels outside the photo repeat the
    border, so a face at the edge still gets a full crop.
    """
    k = size / max(side, 1e-3)
    src = rgb
    if k < 0.5:
        # shrinking a lot aliases: low-pass the neighbourhood first (INTER_AREA cannot rotate)
        x0, y0 = int(max(0, cx - side)), int(max(0, cy - side))
        x1, y1 = int(min(rgb.shape[1], cx + side + 1)), int(min(rgb.shape[0], cy + side + 1))
        if x1 > x0 and y1 > y0:
            src = cv2.GaussianBlur(rgb[y0:y1, x0:x1], (0, 0), 0.3 / k)
            cx, cy = cx - x0, cy - y0
    m = cv2.getRotationMatrix2D((float(cx), float(cy)), float(angle_deg), k)
    m[0, 2] += size / 2 - cx
    m[1, 2] += size / 2 - cy
    return cv2.warpAffine(src, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def box_crop(rgb: np.ndarray, box: tuple[float, float, float, float], size: int = READER_SIZE) -> np.ndarray:
    """The reader's crop for a detected box: square, centred, READER_CONTEXT x its longer side."""
    x0, y0, x1, y1 = box
    side = max(x1 - x0, y1 - y0) * READER_CONTEXT
    return crop_square(rgb, (x0 + x1) / 2, (y0 + y1) / 2, side, size)
