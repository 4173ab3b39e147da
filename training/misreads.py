"""A contact sheet of misread faces, to see what fails: each tile is the face as the reader
was given it (a crop around the labelled top face, at the working size), captioned with the
truth, what was read, and the confidence."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from companion.vision.crops import box_crop
from companion.vision.image_io import load_work_image

TILE = 128
COLUMNS = 8


def misread_sheet(results, path: Path, limit: int = 48) -> int:
    """Draw up to `limit` faces found but read wrong (in dataset order) into `path`; returns
    how many were drawn (no file when none)."""
    tiles = []
    for result in results:
        if len(tiles) >= limit:
            break
        wrong = [m for m in result.matches if m.pred is not None and not m.right and m.truth_box is not None]
        if not wrong:
            continue
        work = load_work_image(result.image.path)
        for m in wrong[: limit - len(tiles)]:
            tile = np.ascontiguousarray(box_crop(work.rgb, work.to_work(m.truth_box), TILE)[:, :, ::-1])
            caption = f"{m.truth.token}>{m.pred.token} {m.confidence:.2f}"
            cv2.rectangle(tile, (0, 0), (TILE - 1, 15), (0, 0, 0), -1)
            cv2.putText(tile, caption, (2, 12), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 255, 255), 1, cv2.LINE_AA)
            tiles.append(tile)
    if not tiles:
        return 0
    drawn = len(tiles)
    tiles += [np.zeros_like(tiles[0])] * (-drawn % COLUMNS)
    sheet = np.vstack([np.hstack(tiles[i:i + COLUMNS]) for i in range(0, len(tiles), COLUMNS)])
    if not cv2.imwrite(str(path), sheet, [cv2.IMWRITE_JPEG_QUALITY, 85]):
        raise OSError(f"cannot write {path}")
    return drawn
