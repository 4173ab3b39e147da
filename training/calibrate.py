"""Fit the reader's temperatures on the calibration set (never the validation set).

    .venv/bin/python -m training.calibrate --data data/calib --out models/calibration.json

Runs the shipped pipeline on every photo, keeps the detected dice that match a labelled
die, and picks, separately for the value head and the colour head, the temperature that
minimises the negative log-likelihood of the true class (temperature scaling, Guo et al.
2017). The decoder then turns the calibrated probabilities into each die's confidence.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from companion.vision.decoder import COLOR_CLASSES, VALUE_CLASSES
from companion.vision.models import CALIBRATION_FILE, load_models, softmax
from training.common import read_dataset
from training.evaluate import evaluate_image

TEMPERATURES = np.exp(np.linspace(np.log(0.25), np.log(8.0), 121))


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--models", help="models folder (default: the repo's models/)")
    ap.add_argument("--out", help=f"default: MODELS/{CALIBRATION_FILE}")
    args = ap.parse_args(argv)
    folder = Path(args.models) if args.models else None
    models = load_models(folder)
    results = [evaluate_image(im, models) for im in read_dataset(args.data)]
    found = [m for r in results for m in r.matches if m.pred is not None]
    vl = np.array([m.value_logits for m in found]).reshape(-1, len(VALUE_CLASSES))
    cl = np.array([m.color_logits for m in found]).reshape(-1, len(COLOR_CLASSES))
    vy = np.array([VALUE_CLASSES.index(m.truth.value) for m in found], dtype=np.int64)
    cy = np.array([COLOR_CLASSES.index(m.truth.color) for m in found], dtype=np.int64)
    tv, v0, v1 = fit_temperature(vl, vy)
    tc, c0, c1 = fit_temperature(cl, cy)
    data = {"value_temperature": round(tv, 4), "color_temperature": round(tc, 4), "fitted_on": args.data,
            "dice": len(found), "value_nll": [round(v0, 5), round(v1, 5)], "color_nll": [round(c0, 5), round(c1, 5)]}
    out = Path(args.out) if args.out else (folder or Path(models_dir_default())) / CALIBRATION_FILE
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps(data))
    return 0


def models_dir_default() -> Path:
    from companion.vision.models import models_dir

    return models_dir()


if __name__ == "__main__":
    raise SystemExit(main())
