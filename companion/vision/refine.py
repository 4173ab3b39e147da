"""The box refiner: a second look at where each detected top face is (optional model).

At strong tilts the detector's box slides from the top face toward the die's body or onto a
side face; the reader then gets a crop off the face, and a box that overlaps the face by less
than half counts as a missed die. The refiner sees a square REFINER_CONTEXT x a box's longer
side around it and gives the top face's box in that square (training/refiner.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.vision.crops import crop_square

REFINER_FILE = "refiner.onnx"
REFINER_SIZE = 64  # crop side in pixels fed to the refiner
REFINER_CONTEXT = 2.0  # crop side = this x the box's longer side
# How many times each box is refined (each pass starts from the last one's box); 0 turns the
# refiner off, for comparisons.
REFINER_PASSES = int(os.environ.get("COMPANION_REFINER_PASSES", "1"))

Box = tuple[float, float, float, float]


@dataclass
class BoxRefiner:
    session: object
    size: int = REFINER_SIZE
    context: float = REFINER_CONTEXT
    passes: int = REFINER_PASSES

    @classmethod
    def load(cls, session, meta: dict[str, str]) -> "BoxRefiner":
        return cls(session, int(meta.get("input_size", REFINER_SIZE)), float(meta.get("context", REFINER_CONTEXT)))

    def refine(self, rgb: np.ndarray, boxes: list[Box]) -> list[Box]:
        """Each box (x0, y0, x1, y1, pixels of `rgb`) moved onto the top face it is nearest."""
        if not boxes:
            return []
        b = np.asarray(boxes, dtype=np.float64)
        for _ in range(self.passes):
            b = self._once(rgb, b)
        return [tuple(float(v) for v in row) for row in b]

    def _once(self, rgb: np.ndarray, b: np.ndarray) -> np.ndarray:
        centre = (b[:, :2] + b[:, 2:]) / 2
        side = self.context * np.maximum(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1])
        crops = np.stack([refiner_crop(rgb, cx, cy, s, self.size) for (cx, cy), s in zip(centre, side)])
        out = self.session.run(None, {"crops": np.ascontiguousarray(crops.transpose(0, 3, 1, 2), np.float32)})[0]
        c = centre + out[:, :2] * side[:, None]
        half = np.exp(np.clip(out[:, 2:], -4, 1)) * side[:, None] / 2
        h, w = rgb.shape[:2]
        return np.concatenate([np.clip(c - half, 0, (w, h)), np.clip(c + half, 0, (w, h))], axis=1)


def refiner_crop(rgb: np.ndarray, cx: float, cy: float, side: float, size: int = REFINER_SIZE) -> np.ndarray:
    """The square of `side` pixels centred on (cx, cy), as the refiner learnt it: (cx, cy) at the
    crop's centre point (size / 2 - 0.5 in pixel-centre terms, as torch's grid_sample has it),
    not at pixel size / 2 where crop_square puts it."""
    half_pixel = 0.5 * side / size
    return crop_square(rgb, cx + half_pixel, cy + half_pixel, side, size)


def refiner_path(folder: Path) -> Path | None:
    """The folder's refiner, if it ships one."""
    path = folder / REFINER_FILE
    return path if path.is_file() else None
