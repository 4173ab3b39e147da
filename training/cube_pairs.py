"""What the cube model weighed for each two boxes on one cube, and what they truly were.

    .venv/bin/python -m training.cube_pairs --data data/more/stress_tilt_calib --limit 200 \
        --out pairs.jsonl [--photos photos.jsonl]

For every kept box (before the cube model's drops) with another kept box within
the tuning's same_cube_reach, one row: the photo, both boxes' P(side face), sureness, detection score and face
probability, the reader's readings, how likely the two are one die's faces (same_die), the geometry
(distance in box sizes, log size ratio, the offset's cosine with the photo's nearer direction), the
box's cube features, whether the pipeline dropped or flagged it, what it truly is (`_truths`, as
training.evaluate counts: a top face read, a die read twice, an extra reading, a real die lost)
and evaluate's read-twice count of the photo. `--photos`: per photo, what the cube model weighed
of all its kept boxes (to replay other drop rules through `cubes._second_on_cube` without reading
the photos again). Reads the photos through the whole pipeline (training.evaluate); with
`--first-search`, with the first search's boxes only (training.cubes FIRST_SEARCH).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

import companion.vision.pipeline as pipeline
import companion.vision.stage3_one_per_cube as one_per_cube
from companion.dice import standard_set
from companion.vision import cubes
from companion.vision.decoder import COLOR_CLASSES, VALUE_CLASSES
from companion.vision.models import load_models
from companion.vision.pipeline import DEFAULT_SETTINGS
from companion.vision.tuning import shipped_tuning
from training.common import FIRST_SEARCH_HELP, read_dataset
from training.cubes import FIRST_SEARCH
import training.evaluate as evaluate
from training.evaluate import IOU_MIN, _cube_outline, _inside, box_iou, evaluate_image, match_boxes

_calls: list[dict] = []
_results: list = []


def _recording_analyse(*args, **kwargs):
    """pipeline.analyse, keeping what it read."""
    out = pipeline.analyse(*args, **kwargs)
    _results.append(out)
    return out


def _recording_decide(rgb, detections, faces, model, levels, value_probs=None, colour_probs=None, dice_set=None,
                      lowered=None, faint=None):
    """cubes.decide, keeping what it weighed."""
    out = cubes.decide(rgb, detections, faces, model, levels, value_probs, colour_probs, dice_set, lowered, faint)
    if model is not None and rgb is not None and detections and value_probs is not None and colour_probs is not None:
        feats = cubes.box_features(rgb, detections, faces, value_probs.max(axis=1), colour_probs.max(axis=1))
        side = model.side_probability(feats)
        together = cubes.same_die(value_probs, colour_probs, dice_set or standard_set())
        pairs, pair_rows = cubes.pair_features(rgb, detections, feats, side, together, value_probs.argmax(axis=1),
                                               colour_probs.argmax(axis=1), levels.same_cube_reach)
        _calls.append({"rgb_shape": rgb.shape, "detections": list(detections), "faces": np.asarray(faces),
                       "features": feats, "side": side, "together": together, "pairs": pairs, "pair_rows": pair_rows,
                       "value": value_probs.argmax(axis=1), "colour": colour_probs.argmax(axis=1),
                       "value_probs": value_probs, "colour_probs": colour_probs,
                       "lowered": cubes._mask(lowered, len(detections)), "faint": cubes._mask(faint, len(detections)),
                       "drop": out.drop, "check": out.check})
    return out


def _truths(image, boxes: list, result) -> list[str]:
    """Per box, what it truly is, as training.evaluate counts the pipeline's readings: "top" (it
    reads a labelled top face), "twice" (a reading on no top face inside the outline of a cube
    whose top face is read), "extra" (any other reading on no top face), "cut" (it reads a top face
    mostly out of the frame, which counts neither way); a box not read (dropped):
    "lost" (a labelled top face no reading reads), "twice" or "other" as above."""
    read_boxes = [r.box for r in result.dice]
    matched = match_boxes(read_boxes, [d.score for d in result.detections], list(image.dice))
    read = {j for j in matched if j >= 0}
    cubes_read = [poly for j, t in enumerate(image.dice) if j in read and (poly := _cube_outline(t)) is not None]
    out = []
    for b in boxes:
        centre = ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)
        twice = any(_inside(centre, poly) for poly in cubes_read)
        k = min(range(len(read_boxes)), key=lambda k: max(abs(u - v) for u, v in zip(read_boxes[k], b)), default=-1)
        if k >= 0 and max(abs(u - v) for u, v in zip(read_boxes[k], b)) < 1.0:  # read
            j = matched[k]
            out.append(("cut" if image.dice[j].ignored else "top") if j >= 0 else "twice" if twice else "extra")
        elif any(box_iou(b, t.box) >= 0.5 for j, t in enumerate(image.dice) if j not in read and not t.ignored):
            out.append("lost")
        else:
            out.append("twice" if twice else "other")
    return out


def _rows(image, call: dict, result, read_twice: int) -> list[dict]:
    sx = image.width / call["rgb_shape"][1]
    sy = image.height / call["rgb_shape"][0]
    dets = call["detections"]
    boxes = [(d.box[0] * sx, d.box[1] * sy, d.box[2] * sx, d.box[3] * sy) for d in dets]
    truth = _truths(image, boxes, result)
    side, sure = call["side"], [d.score * float(f) for d, f in zip(dets, call["faces"])]
    feats = call["features"]
    nearer = cubes.nearer_direction(dets)
    rows = []
    for i, d in enumerate(dets):
        near = [(cubes._near(d, dets[j]), j) for j in range(len(dets)) if j != i]
        near = [p for p in near if p[0] < shipped_tuning().cubes.same_cube_reach]
        if not near:
            continue
        dist, j = min(near)
        offset = np.asarray(d.centre) - np.asarray(dets[j].centre)
        toward = None if nearer is None else float(offset @ nearer / (np.linalg.norm(offset) * np.linalg.norm(nearer) + 1e-9))
        rows.append({
            "photo": image.path.name, "box": i, "partner": j, "truth": truth[i], "truth_partner": truth[j],
            "dropped": bool(call["drop"][i]), "flagged": bool(call["check"][i]),
            "partner_dropped": bool(call["drop"][j]),
            "side": float(side[i]), "side_partner": float(side[j]), "sure": sure[i], "sure_partner": sure[j],
            "score": d.score, "face": float(call["faces"][i]), "together": float(call["together"][i, j]),
            "near": dist, "size_ratio": float(np.log(max(d.side, 1.0) / max(dets[j].side, 1.0))),
            "toward": toward, "reading": _reading(call, i), "reading_partner": _reading(call, j),
            "features": dict(zip(cubes.FEATURES, feats[i].round(4).tolist())), "photo_read_twice": read_twice,
        })
    return rows


def _photo(image, call: dict, result) -> dict:
    """What the cube model weighed of all a photo's kept boxes, and what each truly is."""
    sx = image.width / call["rgb_shape"][1]
    sy = image.height / call["rgb_shape"][0]
    boxes = [(d.box[0] * sx, d.box[1] * sy, d.box[2] * sx, d.box[3] * sy) for d in call["detections"]]
    truth = _truths(image, boxes, result)
    return {"photo": image.path.name, "boxes": [[round(v, 1) for v in b] for b in boxes],
            "scores": [d.score for d in call["detections"]], "faces": call["faces"].tolist(),
            "side": call["side"].tolist(), "together": call["together"].round(4).tolist(),
            "value": call["value"].tolist(), "colour": call["colour"].tolist(),
            "lowered": call["lowered"].tolist(), "faint": call["faint"].tolist(), "features": call["features"].round(5).tolist(),
            "value_probs": call["value_probs"].round(4).tolist(), "colour_probs": call["colour_probs"].round(4).tolist(),
            "drop": call["drop"].tolist(), "check": call["check"].tolist(), "truth": truth,
            "pairs": [[i, j, _pair_label(image, boxes, truth, i, j)] for i, j in call["pairs"]],
            "pair_rows": call["pair_rows"].round(5).tolist()}


def _pair_label(image, boxes: list, truth: list[str], i: int, j: int) -> int:
    """1: box i is a second box on the cube whose top face box j reads; 0: box i reads a
    labelled top face (read or dropped); -1: neither (a box on no die, a cut face, box i on another cube)."""
    if truth[i] in ("top", "lost"):
        return 0
    if truth[i] != "twice":
        return -1
    centre = ((boxes[i][0] + boxes[i][2]) / 2, (boxes[i][1] + boxes[i][3]) / 2)
    for t in image.dice:
        poly = _cube_outline(t)
        if box_iou(boxes[j], t.box) >= IOU_MIN and poly is not None and _inside(centre, poly):
            return 1
    return -1


def _reading(call: dict, i: int) -> str:
    return f"{VALUE_CLASSES[int(call['value'][i])] or 'W'}{COLOR_CLASSES[int(call['colour'][i])].value[0]}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--skip", type=int, default=0, help="leave out the first photos (a set's second half)")
    ap.add_argument("--models", type=Path, default=Path("models"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--photos", type=Path, help="also write, per photo, what the cube model weighed of all its boxes")
    ap.add_argument("--first-search", action="store_true", help=FIRST_SEARCH_HELP)
    args = ap.parse_args(argv)
    settings = FIRST_SEARCH if args.first_search else DEFAULT_SETTINGS
    models = load_models(args.models)
    # the pipeline and evaluate, as they run, through the recording wrappers
    setattr(one_per_cube, "decide", _recording_decide)  # noqa: B010
    setattr(evaluate, "analyse", _recording_analyse)  # noqa: B010
    if args.photos:  # written afresh, as --out: a run's rows, not a previous run's too
        args.photos.write_text("", encoding="utf-8")
    with args.out.open("w", encoding="utf-8") as f:
        for image in read_dataset(args.data, args.limit)[args.skip:]:
            _calls.clear()
            _results.clear()
            result = evaluate_image(image, models, settings)
            if _calls:
                for row in _rows(image, _calls[-1], _results[-1], result.read_twice):
                    f.write(json.dumps({"set": str(args.data), **row}) + "\n")
                if args.photos:
                    with args.photos.open("a", encoding="utf-8") as g:
                        g.write(json.dumps({"set": str(args.data), **_photo(image, _calls[-1], _results[-1])}) + "\n")
            if result.read_twice:
                print(image.path.name, "read twice", result.read_twice, flush=True)


if __name__ == "__main__":
    main()
