"""Train the cube model's pair model (companion/vision/cubes.py `PairModel`): is box i a side face
of the cube whose top face box j is?

    .venv/bin/python -m training.cube_pairs --data data/cubes_train/tilt --first-search --out /tmp/rows.jsonl \\
        --photos data/cache/pairs-tilt.jsonl        # and the same for data/cubes_train/dark
    .venv/bin/python -m training.cube_pair_model --photos data/cache/pairs-tilt.jsonl \\
        data/cache/pairs-dark.jsonl --steps 3000 --l2 0.001 --drop 0.9 --models models/cubes.json

training.cube_pairs reads each photo through the shipped pipeline and writes, per photo, the
`pair_features` of every two kept boxes within the tuning's same_cube_reach with a label from the generator:
1 where box i lies on the cube outline of the labelled top face box j reads and reads no top face
itself, 0 where box i reads a labelled top face, -1 (left out) otherwise (`--first-search`: of the
first search's boxes only, as the shipped pair model learnt). A logistic regression is
fit on them as training.cubes fits the cube model (full-batch Adam from zero weights: no seed) and
written into the cube model's file under "pairs", with `--drop`, the threshold the calibration
sets chose. Train only on training-split photos.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from companion.vision.cubes import PAIR_FEATURES
from training.cubes import fit


def load_pairs(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    """(features, labels) of the labelled pairs (label 0 or 1) in training.cube_pairs' photo files."""
    x: list[list[float]] = []
    y: list[float] = []
    for path in paths:
        for line in path.read_text("utf-8").splitlines():
            photo = json.loads(line)
            for (_, _, label), row in zip(photo.get("pairs", []), photo.get("pair_rows", [])):
                if label >= 0:
                    x.append(row)
                    y.append(float(label))
    return np.asarray(x, dtype=np.float64).reshape(-1, len(PAIR_FEATURES)), np.asarray(y)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--photos", type=Path, nargs="+", required=True, help="training.cube_pairs --photos files")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--l2", type=float, default=1e-3, help="weight decay of the standardised weights")
    ap.add_argument("--drop", type=float, required=True, help="drop box i from this P(side face of j's cube)")
    ap.add_argument("--models", type=Path, required=True, help="the cube model file to write the pair model into")
    args = ap.parse_args(argv)
    x, y = load_pairs(args.photos)
    print(f"{len(y)} pairs, {int(y.sum())} a side face beside its top face", flush=True)
    model = fit(x, y, args.steps, args.l2)
    data = json.loads(args.models.read_text("utf-8"))
    data["pairs"] = {"features": list(PAIR_FEATURES), **model, "drop": args.drop,
                     "trained": {"photos": [str(p) for p in args.photos], "pairs": len(y), "side_faces": int(y.sum()),
                                 "steps": args.steps, "l2": args.l2}}
    args.models.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote the pair model into {args.models}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
