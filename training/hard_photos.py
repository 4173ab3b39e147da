"""Find the training photos the shipped detector gets wrong, so a fine-tune can see them more often.

    .venv/bin/python -m training.hard_photos --data data/train --out data/cache/hard-train.json

Plain fine-tuning now gains a few tenths of a point a stage: most training photos are already
found exactly, so most steps teach little. This runs the shipped detector (models/, with its
calibrated threshold and views, without the reader's face head) on the cached detector inputs
of the training photos, which the trainer cuts its inputs from, and lists the photos where it
misses a labelled top face (no box with IoU >= 0.5) or puts a box on nothing labelled (IoU
under 0.3 with every face, those cut by the frame included); `training.detector --hard` then
draws a share of each batch from them. Training photos only: never calibration or validation.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from companion.vision.models import load_models
from training.common import build_cache, cache_dir_for
from training.detector import pairwise_iou
from training.evaluate import IOU_MIN

EXTRA_IOU = 0.3  # a box this far from every labelled face is on nothing (0.3-0.5: a badly placed box)


def photo_errors(boxes: list[tuple], truths: np.ndarray) -> tuple[int, int]:
    """(missed labelled faces, boxes on nothing) for one photo; truths (k, 5): x0 y0 x1 y1 ignored.

    Not the trainer's one-to-one matching (match_counts): a face is missed only when no box
    at all covers it, and a box is on nothing only when it is far from every face, so a photo
    is hard for what the detector cannot do, not for a duplicate or a loose box."""
    iou = pairwise_iou(np.asarray(boxes, np.float32).reshape(-1, 4), truths[:, :4])
    missed = int(((iou < IOU_MIN).all(axis=0) & (truths[:, 4] < 0.5)).sum())
    extra = int((iou < EXTRA_IOU).all(axis=1).sum())
    return missed, extra


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="the training photos (their detector cache is built if missing)")
    ap.add_argument("--limit", type=int, default=0, help="the cache of the first N photos, as the trainer's --limit")
    ap.add_argument("--models", help="models folder (default: the repo's models/)")
    ap.add_argument("--out", required=True, help="JSON file: the hard photos' indices in the cache, and counts")
    args = ap.parse_args(argv)
    models = load_models(Path(args.models) if args.models else None)
    cache = build_cache(args.data, cache_dir_for(args.data, args.limit), limit=args.limit)
    detector = models.detector
    hard, missed, extra, t0 = [], 0, 0, time.time()
    for i, (w, h) in enumerate(cache.det_sizes):
        boxes = [d.box for d in detector.detect(np.asarray(cache.det_images[i, :h, :w]))]
        m, e = photo_errors(boxes, cache.det_boxes[i])
        missed, extra = missed + m, extra + e
        if m or e:
            hard.append(i)
        if (i + 1) % 2000 == 0:
            print(f"{i + 1} photos, {len(hard)} hard, {time.time() - t0:.0f} s", flush=True)
    n = len(cache.det_sizes)
    Path(args.out).write_text(json.dumps({
        "data": args.data, "limit": args.limit, "photos": n, "hard": len(hard), "missed": missed, "extra": extra,
        "threshold": detector.threshold, "views": detector.views, "indices": hard}))
    print(f"{len(hard)} of {n} photos hard ({missed} faces missed, {extra} boxes on nothing): {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
