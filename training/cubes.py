"""Train the cube model (companion/vision/cubes.py): is a box a cube's side face?

    .venv/bin/python -m training.cubes --data data/cubes_train/tilt data/cubes_train/dark --first-search \\
        --steps 3000 --l2 0.001 --drop 0.37 --flag 0.15 --out models/cubes.json

Each photo goes through the shipped pipeline up to the reader (models/, as analyse runs it);
every box the face head keeps at the calibration's threshold (as the shipped model learnt; the
pipeline also keeps a dark photo's sure boxes from ReadSettings.dark_face_threshold) gets the features `box_features` measures and a label from the
generator: a side face when its centre lies inside a labelled cube outline and it is no top
face (box IoU under 0.5 with every labelled top face), a top face when it matches one. Boxes
on neither (clutter, pip dice) are left out. `--collect-threshold` also collects each photo's
boxes at lower detector thresholds, where more side faces are boxed (more of them to learn from). Features are cached per folder in
data/cache/cubes-<format>-<folder>[-t<threshold>].npz (resumable). A logistic regression (numpy, full-batch Adam, from
zero weights: no seed) is fit with the steps and weight decay given; `--drop` and `--flag` are the thresholds the
calibration sets chose (see the model card) and are written into the file with it.
`--first-search` collects the first search's boxes only (FIRST_SEARCH: no second search of a small
photo in its own pixels), the boxes the shipped file was made from.
Train only on training-split photos: the calibration and validation sets choose and report.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from companion.dice import MAX_DICE
from companion.vision.cubes import FEATURES, INPUTS, box_features, model_inputs
from companion.vision.image_io import load_work_image
from companion.vision.calibration import Calibration
from companion.vision.detector import DetectorModel
from companion.vision.models import CALIBRATION_FILE, DETECTOR_FILE, READER_FILE, Models, default_models_dir
from companion.vision.reader import ReaderModel, softmax
from companion.vision.pipeline import DEFAULT_SETTINGS
from companion.vision.stage2_read import read_boxes
from companion.vision.stage1_find_faces import find_faces
from companion.vision.settings import ReadSettings
from companion.vision.tuning import Tuning
from training.common import FIRST_SEARCH_HELP, LabelledImage, per_photo, read_dataset

CHECKPOINT = 100  # photos between cache writes
# the boxes find_faces gives (found2: a photo with no sharper copy searched again in its own
# pixels; found1: the first search's boxes only, FIRST_SEARCH): a cache of another rule is not reused
CACHE_FORMAT = "found2"
FIRST_SEARCH_FORMAT = "found1"
# The first search's boxes only (no second search of a small photo in its own pixels): the boxes
# the shipped cube model was made from, so that the model card's command replays it.
FIRST_SEARCH = replace(DEFAULT_SETTINGS, zoom_within_work=False)


def photo_boxes(image: LabelledImage, models: Models,
                settings: ReadSettings = DEFAULT_SETTINGS) -> tuple[np.ndarray, np.ndarray]:
    """(features, labels: 1 side face, 0 top face, -1 neither) of the boxes the pipeline reads."""
    work = load_work_image(image.path)
    found = find_faces(work, models, settings)
    work, dets = found.image, found.boxes
    dets = dets[:MAX_DICE + models.tuning.read.extra_candidates]
    if not dets:
        return np.zeros((0, len(FEATURES))), np.zeros(0)
    read = read_boxes(work, dets, models, settings)
    cal = models.calibration
    faces = read.face_probability()
    faces = np.ones(len(dets)) if faces is None else faces
    keep = [i for i in range(len(dets)) if faces[i] >= cal.face_threshold]
    if not keep:
        return np.zeros((0, len(FEATURES))), np.zeros(0)
    kept = [dets[i] for i in keep]
    value = softmax(read.value[keep], cal.value_temperature).max(axis=1)
    colour = softmax(read.color[keep], cal.color_temperature).max(axis=1)
    feats = box_features(work.rgb, kept, faces[keep], value, colour)
    return feats, _labels(image, [work.to_full(d.box) for d in kept], [d.score for d in kept])


def _labels(image: LabelledImage, boxes: list[tuple[float, float, float, float]], scores: list[float]) -> np.ndarray:
    from training.evaluate import _cube_outline, _inside, match_boxes

    labels = np.array([0.0 if j >= 0 else -1.0 for j in match_boxes(boxes, scores, image.dice)])
    for i, b in enumerate(boxes):
        if labels[i] < 0:
            centre = ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)
            outlines = [_cube_outline(t) for t in image.dice]
            if any(o is not None and _inside(centre, o) for o in outlines):
                labels[i] = 1.0
    return labels


def _boxes_models(folder: Path, threshold: float | None = None) -> Models:
    """The detector, reader and calibration of `folder`, as load_models loads them, without its
    cube model: the boxes do not depend on it, and it may be one this run replaces. A
    `threshold` under the calibrated one boxes more faces (more side faces to learn from)."""
    calibration = Calibration.load(folder / CALIBRATION_FILE)
    tuning = Tuning.load(folder)
    detector = DetectorModel.load(folder / DETECTOR_FILE, tuning.read.peak_overlap,
                                  threshold=calibration.detector_threshold if threshold is None else threshold,
                                  views=calibration.detector_views)
    return Models(detector, ReaderModel.load(folder / READER_FILE), calibration, tuning=tuning)


def collect(folder: Path, models: Models, cache_dir: Path, threshold: float | None = None,
            first_search: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Every kept box's features and label in `folder` (cached per detector threshold, resumable);
    `first_search`: the first search's boxes only (FIRST_SEARCH)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    settings = FIRST_SEARCH if first_search else DEFAULT_SETTINGS
    name = f"cubes-{FIRST_SEARCH_FORMAT if first_search else CACHE_FORMAT}-{folder.name}"
    path = cache_dir / (f"{name}.npz" if threshold is None else f"{name}-t{threshold:g}.npz")
    done: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if path.is_file():
        with np.load(path, allow_pickle=False) as z:
            if tuple(z["features_names"]) == FEATURES:
                for name, f, y in zip(z["names"], np.split(z["x"], z["splits"]), np.split(z["y"], z["splits"])):
                    done[str(name)] = (f, y)
    rows = per_photo(folder, read_dataset(folder), done, lambda image: photo_boxes(image, models, settings),
                     lambda done: _save(path, done), CHECKPOINT)
    return np.concatenate([r[0] for r in rows]), np.concatenate([r[1] for r in rows])


def _save(path: Path, done: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    names = list(done)
    sizes = np.cumsum([len(done[k][1]) for k in names])[:-1]
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, names=np.array(names), x=np.concatenate([done[k][0] for k in names]).reshape(-1, len(FEATURES)),
             y=np.concatenate([done[k][1] for k in names]), splits=sizes, features_names=np.array(FEATURES))
    tmp.replace(path)


def fit(x: np.ndarray, y: np.ndarray, steps: int, l2: float, lr: float = 0.05) -> dict:
    """A logistic regression on standardised features: full-batch Adam on the mean log loss
    plus l2 times half the squared weights, from zero weights (no randomness)."""
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = (x - mean) / scale
    theta = np.zeros(z.shape[1] + 1)  # weights, then the bias
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    for step in range(1, steps + 1):
        p = 1 / (1 + np.exp(-(z @ theta[:-1] + theta[-1])))
        grad = np.append(z.T @ (p - y) / len(y) + l2 * theta[:-1], (p - y).mean())
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        theta -= lr * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        if step % 1000 == 0 or step == steps:
            loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
            print(f"step {step}: log loss {loss:.5f}", flush=True)
    return {"mean": mean.tolist(), "scale": scale.tolist(), "weights": theta[:-1].tolist(), "bias": float(theta[-1])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", required=True, help="training-split dataset folders")
    ap.add_argument("--models", help="the models folder whose detector and reader make the boxes (default: models/)")
    ap.add_argument("--cache", default="data/cache", help="where the features of each folder are kept")
    ap.add_argument("--collect-threshold", type=float, nargs="+",
                    help="also collect boxes at these detector thresholds (under the calibrated one: more side faces)")
    ap.add_argument("--first-search", action="store_true", help=FIRST_SEARCH_HELP)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--l2", type=float, default=1e-3, help="weight decay of the standardised weights")
    ap.add_argument("--drop", type=float, required=True, help="drop a second box on a cube from this P(side face)")
    ap.add_argument("--flag", type=float, required=True, help="flag a box from this P(side face)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    folder = Path(args.models) if args.models else default_models_dir()
    first = args.first_search
    parts = [collect(Path(d), _boxes_models(folder), Path(args.cache), first_search=first) for d in args.data]
    for t in args.collect_threshold or ():
        parts += [collect(Path(d), _boxes_models(folder, t), Path(args.cache), t, first) for d in args.data]
    x = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    x, y = x[y >= 0], y[y >= 0]
    print(f"{len(y)} boxes, {int(y.sum())} side faces", flush=True)
    model = fit(model_inputs(x), y, args.steps, args.l2)
    meta = {"features": list(INPUTS), **model, "drop": args.drop, "flag": args.flag,
            "trained": {"data": [str(d) for d in args.data], "boxes": len(y), "side_faces": int(y.sum()),
                        "steps": args.steps, "l2": args.l2,
                        "collect_thresholds": args.collect_threshold or [], "first_search": first}}
    Path(args.out).write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
