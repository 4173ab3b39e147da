"""Cut reader crops around the boxes the shipped detector itself proposes on training photos.

    .venv/bin/python -m training.box_crops --data data/train --limit 12000 --seed 0

The reader is trained on crops around the labelled top faces, moved and rescaled at random.
At run time it reads crops around the detector's boxes, which at strong tilts slide toward
the die's body or a side face in ways a random shift does not copy. So the run-time search
(companion.vision.pipeline.find_faces, below its threshold like training.negatives) runs on
each photo, and every box is cut as the reader would cut it:
- a box that overlaps a labelled top face with IoU >= POSITIVE_IOU is a positive, labelled
  with that face's value and colour;
- a box that overlaps none with IoU >= NEGATIVE_IOU is a negative (side faces, pip dice,
  clutter), and one random die-sized box a photo away from every die is added;
- boxes in between are left out: a poor box on a real die is neither.
Training photos only: never the calibration or validation sets.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from companion.vision.crops import crop_square
from companion.vision.image_io import load_work_image
from companion.vision.models import load_models
from companion.vision.pipeline import find_faces
from training.common import COLOR_CLASSES, PRECROP_CONTEXT, PRECROP_SIZE, VALUE_CLASSES, LabelledImage, read_dataset
from training.evaluate import box_iou
from training.negatives import MINE_THRESHOLD, NEGATIVE_IOU, _random_box

POSITIVE_IOU = 0.5  # the evaluation's match: a box this close counts as finding the face
NEGATIVE = -1  # value and colour label of a negative crop


def box_crops_dir(data: str | Path, limit: int) -> Path:
    data = Path(data).resolve()
    return data.parent / "cache" / f"boxcrops-{data.name}-{limit}"


def mine_photo(image: LabelledImage, models, rng) -> list[tuple[np.ndarray, int, int, float]]:
    """(pre-crop, value class, colour class, IoU) for each box of one photo; classes NEGATIVE for negatives."""
    work, detections = find_faces(load_work_image(image.path), models)
    h, w = work.rgb.shape[:2]
    faces = [(work.to_work(d.box), d) for d in image.dice]
    rows = []
    for det in detections:
        ious = [box_iou(det.box, box) for box, _ in faces]
        best = int(np.argmax(ious)) if ious else -1
        iou = ious[best] if ious else 0.0
        if iou >= POSITIVE_IOU and not faces[best][1].ignored:
            d = faces[best][1]
            rows.append((det.box, VALUE_CLASSES.index(d.value), COLOR_CLASSES.index(d.color), iou))
        elif iou < NEGATIVE_IOU:
            rows.append((det.box, NEGATIVE, NEGATIVE, iou))
    extra = _random_box([box for box, _ in faces], (w, h), rng)
    if extra is not None:
        rows.append((extra, NEGATIVE, NEGATIVE, 0.0))
    out = []
    for (x0, y0, x1, y1), value, color, iou in rows:
        side = max(x1 - x0, y1 - y0) * PRECROP_CONTEXT
        out.append((crop_square(work.rgb, (x0 + x1) / 2, (y0 + y1) / 2, side, PRECROP_SIZE), value, color, iou))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--limit", type=int, default=12000, help="mine the first N photos")
    ap.add_argument("--models", help="models folder whose detector proposes the boxes (default: models/)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    models = load_models(Path(args.models) if args.models else None)
    models.detector.threshold = MINE_THRESHOLD
    rng = np.random.default_rng(args.seed)
    out_dir = box_crops_dir(args.data, args.limit)
    out_dir.mkdir(parents=True, exist_ok=True)
    crops, labels, t0 = [], [], time.time()
    images = read_dataset(args.data, args.limit)
    for i, image in enumerate(images):
        for crop, value, color, iou in mine_photo(image, models, rng):
            crops.append(crop)
            labels.append((value, color, iou))
        if (i + 1) % 500 == 0:
            print(f"{i + 1}/{len(images)} photos, {len(crops)} crops, {time.time() - t0:.0f}s", flush=True)
    labels = np.asarray(labels, np.float64).reshape(-1, 3)
    np.save(out_dir / "crops.npy", np.stack(crops) if crops else np.zeros((0, PRECROP_SIZE, PRECROP_SIZE, 3), np.uint8))
    np.save(out_dir / "labels.npy", labels[:, :2].astype(np.int64))
    np.save(out_dir / "iou.npy", labels[:, 2].astype(np.float32))
    positives = int((labels[:, 0] != NEGATIVE).sum())
    (out_dir / "done.json").write_text(json.dumps({"images": len(images), "positives": positives,
                                                    "negatives": len(labels) - positives,
                                                    "detector_threshold": MINE_THRESHOLD, "seed": args.seed}))
    print(f"wrote {positives} positives and {len(labels) - positives} negatives to {out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
