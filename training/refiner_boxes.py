"""How close the detector's boxes, and the refined ones, come to the labelled top faces.

    .venv/bin/python -m training.refiner_boxes --models runs/r13 --data data/calib --limit 300

For each labelled face (not cut by the frame) the detector box that overlaps it most (the
first 14 boxes, as the pipeline reads them) is refined once and twice; prints the mean IoU
with the face and the share of faces at IoU 0.5 and 0.7 or more, overall and by tilt.
A face without a box overlapping it by 0.1 counts as IoU 0.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from companion.vision.image_io import load_work_image
from companion.vision.models import load_models
from companion.vision.pipeline import EXTRA_CANDIDATES, MAX_DICE, find_faces
from training.common import read_dataset
from training.evaluate import box_iou


def face_ious(models, im) -> list[tuple[float, float, float, float]]:
    """(tilt, detector IoU, IoU after one pass, after two) per labelled face."""
    work, dets = find_faces(load_work_image(im.path), models)
    boxes = [d.box for d in dets[:MAX_DICE + EXTRA_CANDIDATES]]
    refined = {}
    for passes in (1, 2):
        models.refiner.passes = passes
        refined[passes] = models.refiner.refine(work.rgb, boxes)
    tilt = float(im.conditions.get("tilt_deg", 0.0))
    rows = []
    for d in im.dice:
        if d.ignored:
            continue
        ious = [box_iou(work.to_full(b), d.box) for b in boxes]
        if not ious or max(ious) < 0.1:
            rows.append((tilt, 0.0, 0.0, 0.0))
            continue
        j = int(np.argmax(ious))
        rows.append((tilt, ious[j], *(box_iou(work.to_full(refined[p][j]), d.box) for p in (1, 2))))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="a models folder with refiner.onnx")
    ap.add_argument("--data", default="data/calib")
    ap.add_argument("--limit", type=int, default=300)
    args = ap.parse_args(argv)
    models = load_models(Path(args.models))
    if models.refiner is None:
        raise SystemExit(f"{args.models} has no refiner.onnx")
    r = np.array([row for im in read_dataset(args.data, args.limit) for row in face_ious(models, im)])
    groups = {"all": r[:, 0] >= 0, "tilt <14": r[:, 0] < 14, "tilt 14-27": (r[:, 0] >= 14) & (r[:, 0] < 27),
              "tilt >=27": r[:, 0] >= 27}
    print("faces       n     mean IoU: detector, 1 pass, 2 passes | IoU>=0.5 | IoU>=0.7")
    for name, m in groups.items():
        x = r[m]
        cols = [" ".join(f"{f(x[:, k]):.4f}" for k in (1, 2, 3)) for f in
                (np.mean, lambda v: np.mean(v >= 0.5), lambda v: np.mean(v >= 0.7))]
        print(f"{name:10s} {len(x):5d}  " + " | ".join(cols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
