"""Replay the photo's colour decision (stage4_decide's joint step) on cached readings, so that its
levels can be compared on the choosing sets without reading the photos again.

    .venv/bin/python -m training.ink_replay cache --data data/table/choose ... --out /tmp/inks.pkl
    .venv/bin/python -m training.ink_replay swaps --cache /tmp/inks.pkl [--set level=value ...]

`cache` reads each photo once up to the decision (stages 1-3 and the colour probabilities, the
joint step off) and keeps per kept box what the decision takes: the value and colour
probabilities, the decoder's reading alone and its flags, the face centre the inks are measured
on, the photo's light cast, and the labelled die the box reads. `swaps` decides the colours
again as the pipeline does (stage4_decide._joint_decode) and counts, per set and per body and
table, the dice read with the other colour of their pair, and the right dice the step moved or
disputed (each such die is flagged).
"""

from __future__ import annotations

import argparse
import json
import pickle
from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np

from companion.dice import standard_set
from companion.vision.image_io import load_work_image
from companion.vision.inks import face_centre, patch_inks
from companion.vision.models import load_models
from companion.vision.pipeline import DEFAULT_SETTINGS, kept_boxes
from companion.vision.stage4_decide import _joint_decode, decide_dice
from training.common import read_dataset
from training.evaluate import SWAPS, match_boxes


@dataclass
class CachedPhoto:
    data: str
    conditions: dict
    detections: list
    faces: np.ndarray
    value_probs: np.ndarray
    color_probs: np.ndarray
    decoded: list  # the decoder's reading of each die alone (the joint step off)
    flags: dict
    cast: float | None
    patches: list  # per kept box, its face centre (inks.face_centre), None when too small
    truths: list  # per kept box, (value, Color) of the labelled die it reads, or None


def cache_photo(image, models, data: str) -> CachedPhoto | None:
    work = load_work_image(image.path)
    settings = replace(DEFAULT_SETTINGS, joint_colour=False)
    kept = kept_boxes(work, models, settings, standard_set(), None, embeddings=False)
    if kept is None:
        return None
    decided = decide_dice(kept, models, settings, standard_set())
    boxes = [d.box for d in decided.detections]
    full = [work.to_full(b) for b in boxes]
    matched = match_boxes(full, [d.score for d in decided.detections], list(image.dice))
    truths = [None if j < 0 or image.dice[j].ignored else (image.dice[j].value, image.dice[j].color) for j in matched]
    return CachedPhoto(data, image.conditions, decided.detections, decided.faces, decided.value_probs,
                       decided.color_probs, decided.decoded, decided.flags, decided.cast,
                       [face_centre(work.rgb, b) for b in boxes], truths)


def replay(photo: CachedPhoto, models, settings=DEFAULT_SETTINGS) -> tuple[list, dict]:
    """The decision's dice and flags for a cached photo, as the pipeline decides them."""
    inks = patch_inks(photo.patches, photo.cast is not None)
    return _joint_decode(photo.detections, photo.faces, photo.value_probs, photo.color_probs, photo.decoded,
                         photo.flags, photo.cast, lambda: inks, standard_set(), settings, models.tuning,
                         )[:2]


def count(photos: list[CachedPhoto], models, settings=DEFAULT_SETTINGS) -> dict:
    """Per set (and per body, table and light kind within it): dice read, colour swaps, right dice
    the step moved (flagged), right dice whose ink disputes their colour (flagged), swapped dice the
    step flags, dice read wrong (value or colour)."""
    out: dict = defaultdict(lambda: defaultdict(lambda: np.zeros(6, dtype=int)))
    for p in photos:
        decoded, flags = replay(p, models, settings)
        keys = ["all"] + [f"{k}={p.conditions.get(k)}" for k in ("body", "table", "light_kind") if p.conditions.get(k)]
        moved = flags.get("colour_moved", np.zeros(len(p.truths), dtype=bool))
        disputed = flags.get("colour_disputes", np.zeros(len(p.truths), dtype=bool))
        for d in decoded:
            truth = p.truths[d.index]
            if truth is None:
                continue
            swapped = d.face.color != truth[1] and {d.face.color, truth[1]} in SWAPS
            right = (d.face.value, d.face.color) == truth
            row = (1, swapped, right and moved[d.index], right and disputed[d.index] and not moved[d.index],
                   swapped and (moved[d.index] or disputed[d.index]), not right)
            for k in keys:
                out[p.data][k] += row
    return {data: {k: v.tolist() for k, v in sorted(levels.items())} for data, levels in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.ink_replay", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cache")
    c.add_argument("--data", nargs="+", required=True)
    c.add_argument("--out", required=True)
    s = sub.add_parser("swaps")
    s.add_argument("--cache", nargs="+", required=True)
    s.add_argument("--set", action="append", default=[], metavar="LEVEL=VALUE",
                   help="an ink level (models/tuning.json, joint_colour.InkLevels) at another value, e.g. ink_weight=0.5")
    s.add_argument("--json")
    args = ap.parse_args(argv)
    models = load_models(DEFAULT_SETTINGS.models_dir, DEFAULT_SETTINGS.providers)
    if args.cmd == "cache":
        # the module under its own name, not __main__'s copy: its cache then loads wherever it is imported
        from training.ink_replay import cache_photo
        photos = []
        for data in args.data:
            for image in read_dataset(data):
                p = cache_photo(image, models, data)
                if p is not None:
                    photos.append(p)
            print(f"{data}: cached", flush=True)
            with open(args.out, "wb") as f:
                pickle.dump(photos, f)
        return 0
    photos = [p for path in args.cache for p in pickle.load(open(path, "rb"))]
    levels = {name: json.loads(value) for name, value in (item.split("=", 1) for item in args.set)}
    levels = {k: tuple(v) if isinstance(v, list) else v for k, v in levels.items()}
    if levels:
        models = replace(models, tuning=replace(models.tuning, inks=replace(models.tuning.inks, **levels)))
    figures = count(photos, models)
    for data, levels in figures.items():
        for k, (dice, swaps, moved, disputed, caught, wrong) in levels.items():
            print(f"{data:34s} {k:28s} dice {dice:5d} swaps {swaps:4d} ({100 * swaps / max(dice, 1):.2f} %, "
                  f"{caught} flagged by the step); right dice moved {moved}, disputed {disputed}; wrong {wrong}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
