"""Fit the reader's temperatures on the calibration set (never the validation set).

    .venv/bin/python -m training.calibrate --data data/calib --out models/calibration.json

These settings are chosen on this set, which is never trained on and is not the validation set:

- the detector's threshold (the heatmap peak score above which a box is a die) and, for a
  reader with a face head, the face threshold (the probability of "a top face" below which
  the reader turns a box down): the pair that maximises the share of photos whose dice are
  all found with nothing extra, among the pairs that lose at most 1 point of recall against
  the lowest pair tried (a missed die costs the player more than an extra one, which the
  scorepad flags when its score is low);
- the reader's temperatures: with that threshold the shipped pipeline runs on every photo,
  the detected dice that match a labelled die are kept, and for the value head and the
  colour head separately the temperature that minimises the negative log-likelihood of the
  true class is picked (temperature scaling, Guo et al. 2017). The decoder then turns the
  calibrated probabilities into each die's confidence.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from companion.vision.decoder import COLOR_CLASSES, VALUE_CLASSES
from companion.vision.image_io import load_work_image
from companion.vision.models import CALIBRATION_FILE, default_models_dir, load_models
from companion.vision.stage2_read import read_boxes
from companion.vision.stage1_find_faces import find_faces
from companion.vision.reader import softmax
from companion.vision.settings import MAX_VIEWS
from training.common import read_dataset
from training.evaluate import box_iou, evaluate_image

THRESHOLDS = np.round(np.arange(0.15, 0.751, 0.025), 3)
FACE_THRESHOLDS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
RECALL_SLACK = 0.01

TEMPERATURES = np.exp(np.linspace(np.log(0.1), np.log(10.0), 161))


def nll(logits: np.ndarray, labels: np.ndarray, t: float) -> float:
    p = softmax(logits, t)[np.arange(len(labels)), labels]
    return float(-np.log(np.maximum(p, 1e-12)).mean())


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> tuple[float, float, float]:
    """The grid temperature with the lowest NLL; also the NLL before (T=1) and after."""
    if len(labels) == 0:
        return 1.0, float("nan"), float("nan")
    losses = [nll(logits, labels, t) for t in TEMPERATURES]
    best = int(np.argmin(losses))
    return float(TEMPERATURES[best]), nll(logits, labels, 1.0), float(losses[best])


@dataclass
class PhotoOutcome:
    """One calibration photo at the lowest thresholds: the dice to find, and per true and per
    false detection its detector score and the reader's face probability (1 without a face head)."""

    dice: int
    tp_score: np.ndarray
    tp_face: np.ndarray
    fp_score: np.ndarray
    fp_face: np.ndarray

    def counts(self, det_t: float, face_t: float) -> tuple[int, int]:
        found = int(((self.tp_score >= det_t) & (self.tp_face >= face_t)).sum())
        extra = int(((self.fp_score >= det_t) & (self.fp_face >= face_t)).sum())
        return found, extra


def detection_outcomes(images, models) -> list[PhotoOutcome]:
    models = replace(models, detector=replace(models.detector, threshold=float(THRESHOLDS[0])))
    out = []
    for im in images:
        found = find_faces(load_work_image(im.path), models)
        work, dets = found.image, found.boxes
        faces = (read_boxes(work, dets, models).face_probability() if dets else None)
        faces = np.ones(len(dets)) if faces is None else faces
        taken: set[int] = set()
        tp, fp = [], []
        for d, face in zip(dets, faces):
            box = work.to_full(d.box)
            best = max(((box_iou(box, t.box), j) for j, t in enumerate(im.dice) if j not in taken),
                       default=(0.0, -1))
            if best[0] >= 0.5:
                taken.add(best[1])
                if not im.dice[best[1]].ignored:
                    tp.append((d.score, face))
            else:
                fp.append((d.score, face))
        tp_a, fp_a = np.array(tp).reshape(-1, 2), np.array(fp).reshape(-1, 2)
        out.append(PhotoOutcome(sum(not t.ignored for t in im.dice), tp_a[:, 0], tp_a[:, 1], fp_a[:, 0], fp_a[:, 1]))
    return out


def choose_thresholds(outcomes: list[PhotoOutcome], face_thresholds=(0.0,)) -> tuple[float, float, dict]:
    """The (detector, face) thresholds with the most photos found exactly (every die, nothing extra).

    A missed die costs the player more than an extra one (which is flagged when weak): only
    pairs that give up at most RECALL_SLACK of recall against the lowest thresholds compete.
    """
    table = {}
    total = sum(o.dice for o in outcomes)
    for ft in face_thresholds:
        for t in THRESHOLDS:
            counts = [o.counts(float(t), float(ft)) for o in outcomes]
            exact = sum(1 for o, (f, e) in zip(outcomes, counts) if f == o.dice and e == 0)
            found, extra = sum(f for f, _ in counts), sum(e for _, e in counts)
            table[(float(t), float(ft))] = {"photos_exact": exact / max(1, len(outcomes)),
                                            "recall": found / max(1, total),
                                            "precision": found / max(1, found + extra)}
    floor = table[(float(THRESHOLDS[0]), float(face_thresholds[0]))]["recall"] - RECALL_SLACK
    allowed = [k for k in table if table[k]["recall"] >= floor]
    best = max(allowed, key=lambda k: (round(table[k]["photos_exact"], 6), table[k]["recall"], -k[0], -k[1]))
    return best[0], best[1], table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--models", help="models folder (default: the repo's models/)")
    ap.add_argument("--out", help=f"default: MODELS/{CALIBRATION_FILE}")
    ap.add_argument("--detector-views", type=int, default=MAX_VIEWS, choices=range(1, MAX_VIEWS + 1),
                    help="mirror images the detector's heatmap is averaged over (default %(default)s)")
    args = ap.parse_args(argv)
    folder = Path(args.models) if args.models else None
    models = load_models(folder)
    models = replace(models, detector=replace(models.detector, views=args.detector_views))
    images = read_dataset(args.data)
    face_grid = FACE_THRESHOLDS if models.reader.has_face_head else (0.0,)
    threshold, face_threshold, table = choose_thresholds(detection_outcomes(images, models), face_grid)
    models = replace(models, detector=replace(models.detector, threshold=threshold),
                     calibration=replace(models.calibration, face_threshold=face_threshold))
    for (t, ft), row in table.items():
        print(f"threshold {t:.3f} face {ft:.2f}: photos exact {row['photos_exact']:.4f}  "
              f"recall {row['recall']:.4f}  precision {row['precision']:.4f}")
    results = [evaluate_image(im, models) for im in images]
    found = [m for r in results for m in r.matches if m.pred is not None]
    vl = np.array([m.value_logits for m in found]).reshape(-1, len(VALUE_CLASSES))
    cl = np.array([m.color_logits for m in found]).reshape(-1, len(COLOR_CLASSES))
    vy = np.array([VALUE_CLASSES.index(m.truth.value) for m in found], dtype=np.int64)
    cy = np.array([COLOR_CLASSES.index(m.truth.color) for m in found], dtype=np.int64)
    tv, v0, v1 = fit_temperature(vl, vy)
    tc, c0, c1 = fit_temperature(cl, cy)
    data = {"value_temperature": round(tv, 4), "color_temperature": round(tc, 4),
            "detector_threshold": threshold, "face_threshold": face_threshold, "detector_views": args.detector_views,
            "threshold_table": {f"{t:.3f} {ft:.2f}": r for (t, ft), r in table.items()},
            "fitted_on": args.data,
            "dice": len(found), "value_nll": [round(v0, 5), round(v1, 5)], "color_nll": [round(c0, 5), round(c1, 5)]}
    out = Path(args.out) if args.out else (folder or default_models_dir()) / CALIBRATION_FILE
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
