"""The two figures companion/vision/white_balance.py takes from the calibration sets.

    .venv/bin/python -m training.light_calibration --reference data/calib
    .venv/bin/python -m training.light_calibration --unusual data/calib data/stress_warm_calib ...

--reference: the training look's white reference. For each photo, the median light body of its
labelled top faces (inks.light_reference), in log linear RGB; printed: the median over the
photos (white_balance.TRAINING_BODY) and the spread of the photos' light cast (inks.light_cast).

--unusual: the colour head's temperature for crops corrected from a light beyond the training
look's (white_balance.UNUSUAL_COLOUR_TEMPERATURE): the whole pipeline reads each photo, and over
the dice of the photos it corrected (matched to a label at IoU >= 0.5), the temperature with the
least log-loss of the true colour.
"""

from __future__ import annotations

import argparse

import numpy as np

from companion.vision.decoder import color_index
from companion.vision.image_io import load_work_image
from companion.vision.inks import light_cast, light_reference
from companion.vision.models import load_models
from companion.vision.pipeline import analyse
from training.common import read_dataset
from training.evaluate import IOU_MIN, box_iou

TEMPERATURES = np.round(np.arange(0.8, 3.0001, 0.05), 2)


def references(folder: str, limit: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(photos with a white reference, 3) log linear RGB, and those photos' light casts."""
    refs, casts = [], []
    for image in read_dataset(folder, limit):
        work = load_work_image(image.path)
        boxes = [work.to_work(d.box) for d in image.dice if not d.ignored]
        reference = light_reference(work.rgb, boxes)
        if reference is not None:
            refs.append(reference)
            casts.append(light_cast(work.rgb, boxes))
    return np.array(refs), np.array(casts)


def corrected_colours(folders: list[str], limit: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """The colour logits (n, 4) and true colours (n,) of the labelled dice found in the photos
    whose crops the pipeline corrected for the light, and how many photos those were."""
    models = load_models()
    logits, truth, photos = [], [], 0
    for folder in folders:
        for image in read_dataset(folder, limit):
            work = load_work_image(image.path)
            result = analyse(work, models)
            if not result.unusual_light:
                continue
            photos += 1
            for det, row in zip(result.detections, result.color_logits):
                box = work.to_full(det.box)
                iou, die = max(((box_iou(box, d.box), d) for d in image.dice), key=lambda t: t[0], default=(0.0, None))
                if die is not None and iou >= IOU_MIN and not die.ignored:
                    logits.append(row)
                    truth.append(color_index(die.color))
    return np.array(logits).reshape(-1, 4), np.array(truth, dtype=np.int64), photos


def log_loss(logits: np.ndarray, truth: np.ndarray, temperature: float) -> float:
    z = logits / temperature
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-log_p[np.arange(len(truth)), truth].mean())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", help="a dataset folder lit as the training (labels.jsonl + images)")
    ap.add_argument("--unusual", nargs="+", help="calibration dataset folders, some under lights beyond the training's")
    ap.add_argument("--limit", type=int, default=0, help="only the first N photos of each folder")
    args = ap.parse_args(argv)
    if not args.reference and not args.unusual:
        ap.error("give --reference, --unusual or both")
    if args.reference:
        refs, casts = references(args.reference, args.limit)
        if not len(refs):
            print("no photo with a light die body")
            return 1
        median = np.median(refs, axis=0)
        print(f"{len(refs)} photos with a white reference")
        print(f"median light body, log linear RGB: ({median[0]:.4f}, {median[1]:.4f}, {median[2]:.4f})")
        q = np.quantile(casts, [0.5, 0.9, 0.95, 0.99])
        print(f"light cast: median {q[0]:.3f}, 90% {q[1]:.3f}, 95% {q[2]:.3f}, 99% {q[3]:.3f}, max {casts.max():.3f}")
    if args.unusual:
        logits, truth, photos = corrected_colours(args.unusual, args.limit)
        if not len(truth):
            print("no photo under an unusual light")
            return 1
        losses = [log_loss(logits, truth, t) for t in TEMPERATURES]
        best = TEMPERATURES[int(np.argmin(losses))]
        print(f"{photos} photos corrected for the light, {len(truth)} dice, colour argmax wrong for "
              f"{int((logits.argmax(axis=1) != truth).sum())}")
        print(f"colour temperature {best:.2f}: log-loss {min(losses):.4f} (at 1.00: {log_loss(logits, truth, 1.0):.4f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
