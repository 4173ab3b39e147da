"""Small raster helpers shared by the scene parts: warping a texture into the photo."""

from __future__ import annotations

import math

import cv2
import numpy as np


def quad_of(size_wh: tuple[int, int]) -> np.ndarray:
    w, h = size_wh
    return np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)


def warp_blend(canvas: np.ndarray, texture: np.ndarray, dst_quad: np.ndarray, src_quad: np.ndarray | None = None) -> None:
    """Paint an RGBA float texture onto `canvas` (H, W, 3 float32) where `dst_quad` says.

    Only the quad's bounding box is warped, which keeps 30+ faces per photo cheap.
    """
    height, width = canvas.shape[:2]
    dst = np.asarray(dst_quad, np.float32)
    x0 = max(0, int(math.floor(dst[:, 0].min())) - 1)
    y0 = max(0, int(math.floor(dst[:, 1].min())) - 1)
    x1 = min(width, int(math.ceil(dst[:, 0].max())) + 2)
    y1 = min(height, int(math.ceil(dst[:, 1].max())) + 2)
    if x1 <= x0 or y1 <= y0:
        return
    src = quad_of((texture.shape[1], texture.shape[0])) if src_quad is None else np.asarray(src_quad, np.float32)
    matrix = cv2.getPerspectiveTransform(src, dst - np.float32([x0, y0]))
    warped = cv2.warpPerspective(texture, matrix, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    alpha = warped[:, :, 3:4]
    roi = canvas[y0:y1, x0:x1]
    roi *= 1.0 - alpha
    roi += warped[:, :, :3] * alpha


def fill_polygon_mask(shape: tuple[int, int], polygon: np.ndarray, value: float = 1.0) -> np.ndarray:
    mask = np.zeros(shape, np.float32)
    pts = np.round(np.asarray(polygon) * 4).astype(np.int32)  # 2 fractional bits: smoother edges
    cv2.fillPoly(mask, [pts], value, lineType=cv2.LINE_AA, shift=2)
    return mask
