"""List the photos with a silent error (training.evaluate's ImageResult.silent_error) and, for
every die read, what the reader and the scene said, so that a flag can be tried offline.

    .venv/bin/python -m training.silent_errors --data data/more/stress_tilt_calib --limit 200 --out dice.jsonl

Prints one line per silent error: the photo, the die, its kind (wrong value, wrong colour,
missed, extra), its confidence and the box's detection score, face probability, value and
colour margins and size against the photo's median box. `--out` also writes one JSON line per
die read (and per missed die), with `right`, `uncertain` and those figures.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from companion.dice import Face
from companion.vision import pipeline
from companion.vision.models import load_models
from companion.vision.settings import ReadSettings
from training.common import read_dataset
from training.evaluate import IOU_MIN, box_iou, evaluate_image


def _margin(logits: np.ndarray) -> float:
    p = np.exp(logits - logits.max())
    p = np.sort(p / p.sum())
    return float(p[-1] - p[-2])


def _keep_last(module, name: str, store: dict, key: str) -> None:
    """Wrap module.name so that each call's result is also kept as store[key] (what evaluate's
    read computed on the way: the KeptBoxes, the Analysis)."""
    original = getattr(module, name)

    def wrapped(*args, **kwargs):
        store[key] = out = original(*args, **kwargs)
        return out

    setattr(module, name, wrapped)


def _area(b) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def photo_rows(image, models, settings: ReadSettings, seen: dict, analysis_of) -> tuple[list[dict], bool]:
    result = evaluate_image(image, models, settings)
    analysis = analysis_of["last"]
    found = seen.get("found")
    dets = analysis.detections
    keep = [] if found is None else found.keep
    faces = {} if found is None else {tuple(found.detections[i].box): float(found.faces[i]) for i in keep}
    agree = {} if found is None or found.read.agree is None else {
        tuple(found.detections[i].box): bool(found.read.agree[i]) for i in keep}
    areas = [_area(d.box) for d in dets]
    median = float(np.median(areas)) if areas else 1.0
    rows = []
    for i, reading in enumerate(analysis.dice):
        det = dets[i]
        best = max(((box_iou(reading.box, t.box), t) for t in image.dice), default=(0.0, None), key=lambda x: x[0])
        truth = best[1] if best[0] >= IOU_MIN else None
        if truth is not None and truth.ignored:
            continue
        kind = "extra" if truth is None else "right" if (truth.value, truth.color) == (reading.value, reading.color) \
            else "value" if truth.value != reading.value else "colour"
        rows.append({"photo": image.path.name, "box": [round(v) for v in reading.box], "kind": kind,
                     "read": reading.face.token, "truth": None if truth is None else Face(truth.value, truth.color).token,
                     "uncertain": reading.uncertain, "confidence": reading.confidence, "score": det.score,
                     "face": faces.get(tuple(det.box)), "agree": agree.get(tuple(det.box)),
                     "value_margin": _margin(analysis.value_logits[i]), "colour_margin": _margin(analysis.color_logits[i]),
                     "size": _area(det.box) / median, "aspect": (det.box[2] - det.box[0]) / max(1e-6, det.box[3] - det.box[1]),
                     "n": len(analysis.dice), "sure": result.sure_dice})
    for m in result.matches:
        if m.pred is None:
            rows.append({"photo": image.path.name, "box": [round(v) for v in (m.truth_box or ())], "kind": "missed",
                         "truth": m.truth.token, "uncertain": result.missing_flagged, "n": len(analysis.dice),
                         "sure": result.sure_dice})
    return rows, result.silent_error


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--offset", type=int, default=0, help="skip the first N photos (the second half of a set)")
    ap.add_argument("--out", help="one JSON line per die")
    args = ap.parse_args(argv)
    settings = ReadSettings.from_env()
    models = load_models(settings.models_dir, settings.providers)
    import training.evaluate as ev

    seen: dict = {}
    analysis_of: dict = {}
    _keep_last(pipeline, "kept_boxes", seen, "found")  # the face head's probabilities and turn agreement
    _keep_last(ev, "analyse", analysis_of, "last")
    images = read_dataset(args.data, args.limit + args.offset if args.limit else 0)[args.offset:]
    out = open(args.out, "w") if args.out else None
    silent = flagged_right = right = 0
    for image in images:
        seen.clear()
        rows, is_silent = photo_rows(image, models, settings, seen, analysis_of)
        silent += is_silent
        right += sum(r["kind"] == "right" for r in rows)
        flagged_right += sum(r["kind"] == "right" and r["uncertain"] for r in rows)
        for r in rows:
            r["set"] = args.data
            r["silent"] = is_silent
            if out:
                out.write(json.dumps(r) + "\n")
            if is_silent and r["kind"] != "right" and not r["uncertain"]:
                print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}), flush=True)
    print(f"{args.data}: {silent} of {len(images)} photos with a silent error; "
          f"{flagged_right} of {right} right dice flagged", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
