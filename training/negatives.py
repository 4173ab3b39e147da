"""Mine "not a top face" crops for the reader's face head, from the training photos.

    .venv/bin/python -m training.negatives --data data/train --limit 8000 --seed 0

The reader only ever sees what the detector proposes, so its negatives are the detector's
own mistakes: the shipped detector (models/) runs on each photo at a low threshold, and every
box that overlaps no labelled top face (IoU under 0.3) is cut out as the reader would cut it
(side faces, pip dice, coins, patterned tables). One box per photo at a random place away
from every die is added, so the head also sees plain table and clutter. Boxes that partly
overlap a face (IoU 0.3-0.5) are left out: they are a badly placed box on a real die, not a
clear negative. Cut like the positives (training/common.py pre-crops), so the reader's
augmentation applies to both alike. Training photos only: never the calibration or
validation sets.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from companion.vision.crops import crop_square
from companion.vision.image_io import load_work_image
from companion.vision.models import load_models
from training.common import PRECROP_CONTEXT, PRECROP_SIZE, LabelledImage, read_dataset
from training.evaluate import box_iou

MINE_THRESHOLD = 0.2  # below the run-time threshold: the near misses teach the head too
NEGATIVE_IOU = 0.3


def negatives_dir(data: str | Path, limit: int) -> Path:
    data = Path(data).resolve()
    return data.parent / "cache" / f"negatives-{data.name}-{limit}"


def _random_box(truths: list[tuple], work_size: tuple[int, int], rng) -> tuple | None:
    """A die-sized box somewhere on the photo that overlaps no labelled face (None if none found)."""
    w, h = work_size
    sides = [max(t[2] - t[0], t[3] - t[1]) for t in truths] or [w / 12]
    for _ in range(20):
        side = float(rng.choice(sides)) * rng.uniform(0.8, 1.25)
        cx = rng.uniform(side / 2, max(side / 2 + 1, w - side / 2))
        cy = rng.uniform(side / 2, max(side / 2 + 1, h - side / 2))
        box = (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)
        if all(box_iou(box, t) < 0.05 for t in truths):
            return box
    return None


def mine_photo(image: LabelledImage, detector, rng) -> list[tuple[np.ndarray, float]]:
    """(pre-crop, detector score or 0 for a random box) for each negative of one photo."""
    work = load_work_image(image.path)
    h, w = work.rgb.shape[:2]
    truths = [work.to_work(d.box) for d in image.dice]
    boxes = []
    for det in detector.detect(work.rgb):
        if max((box_iou(det.box, t) for t in truths), default=0.0) < NEGATIVE_IOU:
            boxes.append((det.box, det.score))
    extra = _random_box(truths, (w, h), rng)
    if extra is not None:
        boxes.append((extra, 0.0))
    out = []
    for (x0, y0, x1, y1), score in boxes:
        side = max(x1 - x0, y1 - y0) * PRECROP_CONTEXT
        out.append((crop_square(work.rgb, (x0 + x1) / 2, (y0 + y1) / 2, side, PRECROP_SIZE), score))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--limit", type=int, default=8000, help="mine the first N photos")
    ap.add_argument("--models", help="models folder whose detector proposes the boxes (default: models/)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    models = load_models(Path(args.models) if args.models else None)
    models = replace(models, detector=replace(models.detector, threshold=MINE_THRESHOLD))
    rng = np.random.default_rng(args.seed)
    out_dir = negatives_dir(args.data, args.limit)
    out_dir.mkdir(parents=True, exist_ok=True)
    crops, scores, t0 = [], [], time.time()
    images = read_dataset(args.data, args.limit)
    for i, image in enumerate(images):
        for crop, score in mine_photo(image, models.detector, rng):
            crops.append(crop)
            scores.append(score)
        if (i + 1) % 500 == 0:
            print(f"{i + 1}/{len(images)} photos, {len(crops)} negatives, {time.time() - t0:.0f}s", flush=True)
    np.save(out_dir / "crops.npy", np.stack(crops) if crops else np.zeros((0, PRECROP_SIZE, PRECROP_SIZE, 3), np.uint8))
    np.save(out_dir / "scores.npy", np.asarray(scores, np.float32))
    (out_dir / "done.json").write_text(json.dumps({"images": len(images), "negatives": len(crops),
                                                    "detector_threshold": MINE_THRESHOLD, "seed": args.seed}))
    print(f"wrote {len(crops)} negatives to {out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
