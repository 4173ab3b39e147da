"""Train the colour heads per photo light (companion/vision/light_colour.py); the shipped file
holds the head for crops corrected from an unusual light:

    .venv/bin/python -m training.light_colour --data data/light_train/{warm,warm_tilt,warm_dark,cold,cold_dark} \\
        --first-search --lights corrected --relative --blend 0.75 --temperature 1.35 --steps 1000 --l2 0.003 --out models/light_colour.json

Each photo goes through the shipped pipeline up to the reader (models/, as analyse runs it):
every box it reads as a die (analyse's kept boxes), matched to a labelled top face (IoU >= 0.5,
as training.evaluate matches), gives the reader's embedding and colour logits of its crop
(corrected for the light as the pipeline corrects it), its true colour and the photo's light
(light_colour.photo_kind); with `--relative` the inputs also hold each box's features less the
means of its photo's kept boxes (light_colour.head_inputs), as the pipeline gives them.
Features are cached per folder in data/cache/light_colour-<format>-<reader>-<folder>.npz (resumable). For each
light of `--lights`, a multinomial logistic regression (numpy, full-batch Adam on standardised
inputs, from zero weights: no randomness) is fit on the boxes under that light with the steps
and weight decay given; `--blend` and `--temperature` are what the calibration sets chose (see
the model card) and are written into the file with it. `--first-search` collects the first
search's boxes only (KEPT_FIRST_SEARCH), the boxes the shipped file was made from. Train only on
training-split photos.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from companion.vision.decoder import color_index
from companion.vision.image_io import load_work_image
from companion.vision.inks import measure_inks
from companion.vision.light_colour import INK_FEATURES, LIGHTS, head_inputs, ink_features, photo_kind
from companion.vision.models import Models, default_models_dir, load_models
from companion.vision.pipeline import kept_boxes
from companion.vision.settings import ReadSettings
from training.common import FIRST_SEARCH_HELP, LabelledImage, per_photo, read_dataset

CHECKPOINT = 100  # photos between cache writes
EMBEDDING = 320
# The boxes kept as dice: the calibration's face threshold on every photo. The pipeline also keeps
# a dark photo's sure boxes from a lower face probability (ReadSettings.dark_face_threshold); the
# shipped head learnt without them, and this command remakes it.
KEPT = ReadSettings(dark_face_threshold=None)
# --first-search: the first search's boxes only, as the shipped head was made from
KEPT_FIRST_SEARCH = replace(KEPT, zoom_within_work=False)


def photo_crops(image: LabelledImage, models: Models, settings: ReadSettings = KEPT) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(embeddings, colour logits, true colour index or -1, the photo's light: LIGHTS' index, -1
    for an uncorrected light beyond the training look's) of the kept boxes of a photo."""
    empty = (np.zeros((0, EMBEDDING)), np.zeros((0, 4)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
             np.zeros((0, INK_FEATURES)))
    # the boxes the pipeline reads as dice (analyse): a relative head's photo means are over them;
    # those the calibration's face threshold keeps, as the shipped head learnt from (KEPT)
    found = kept_boxes(load_work_image(image.path), models, settings)
    if found is None or found.read.embedding is None:
        return empty
    work, dets, keep, read, light = found.work, found.detections, found.keep, found.read, found.light
    boxes = [work.to_full(dets[i].box) for i in keep]
    cast = found.cast
    kind = photo_kind(light, cast)
    inks = ink_features(measure_inks(work.rgb, [dets[i].box for i in keep], light=cast is not None))
    return (read.embedding[keep], read.color[keep], _labels(image, boxes, [dets[i].score for i in keep]),
            np.full(len(keep), -1 if kind is None else LIGHTS.index(kind), dtype=np.int64), inks)


def _labels(image: LabelledImage, boxes: list[tuple[float, float, float, float]], scores: list[float]) -> np.ndarray:
    from training.evaluate import match_boxes

    labels = np.full(len(boxes), -1, dtype=np.int64)
    for i, j in enumerate(match_boxes(boxes, scores, image.dice)):  # as training.evaluate matches
        if j >= 0 and not image.dice[j].ignored:
            labels[i] = color_index(image.dice[j].color)
    return labels


# the rule kept_boxes follows (which boxes, read under which light; kept3: a photo with no sharper
# copy searched again in its own pixels; kept2: the first search's boxes only): a cache of another
# rule is not reused
CACHE_FORMAT = "kept3"
FIRST_SEARCH_FORMAT = "kept2"


def collect(folder: Path, models: Models, cache_dir: Path, first_search: bool = False) -> list[tuple[np.ndarray, ...]]:
    """Per photo of `folder`, its kept boxes' embeddings, colour logits, colours (-1: no labelled
    top face), photo light and ink features (photo_crops; cached, resumable); `first_search`: of
    the first search's boxes only (KEPT_FIRST_SEARCH)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    settings, rule = (KEPT_FIRST_SEARCH, FIRST_SEARCH_FORMAT) if first_search else (KEPT, CACHE_FORMAT)
    # named for what its rows are: the boxes the pipeline keeps (the rule), read by this reader
    path = cache_dir / f"light_colour-{rule}-{models.reader.fingerprint[:12]}-{folder.name}.npz"
    done: dict[str, tuple[np.ndarray, ...]] = {}
    if path.is_file():
        with np.load(path, allow_pickle=False) as z:
            parts = [np.split(z[k], z["splits"]) for k in ("e", "c", "y", "k", "i")]
            for name, *rows in zip(z["names"], *parts):
                done[str(name)] = tuple(rows)
    return per_photo(folder, read_dataset(folder), done, lambda image: photo_crops(image, models, settings),
                     lambda done: _save(path, done), CHECKPOINT)


def inputs(rows: list[tuple[np.ndarray, ...]], inks: bool, relative: bool) -> tuple[np.ndarray, ...]:
    """The head's inputs (head_inputs, each photo's boxes together), colours and photo lights of
    every labelled box of `rows` (collect's, one per photo)."""
    if not any(len(r[2]) for r in rows):
        raise ValueError("The photos given have no boxes with a labelled top face to learn colours from.")
    x = [head_inputs(r[0], r[1], r[4] if inks else None, relative) for r in rows if len(r[2])]
    y, k = (np.concatenate([r[n] for r in rows if len(r[2])]) for n in (2, 3))
    x = np.concatenate(x).reshape(len(y), -1)
    return x[y >= 0], y[y >= 0], k[y >= 0]


def _save(path: Path, done: dict[str, tuple[np.ndarray, ...]]) -> None:
    names = list(done)
    sizes = np.cumsum([len(done[k][2]) for k in names])[:-1]
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, names=np.array(names), e=np.concatenate([done[k][0] for k in names]).reshape(-1, EMBEDDING),
             c=np.concatenate([done[k][1] for k in names]).reshape(-1, 4),
             y=np.concatenate([done[k][2] for k in names]), k=np.concatenate([done[k][3] for k in names]),
             i=np.concatenate([done[k][4] for k in names]).reshape(-1, INK_FEATURES), splits=sizes)
    tmp.replace(path)


def fit(x: np.ndarray, y: np.ndarray, steps: int, l2: float, lr: float = 0.05) -> dict:
    """A multinomial logistic regression on standardised inputs: full-batch Adam on the mean log
    loss plus l2 times half the squared weights, from zero weights (no randomness)."""
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = (x - mean) / scale
    onehot = np.eye(4)[y]
    w, b = np.zeros((z.shape[1], 4)), np.zeros(4)
    state = [(np.zeros_like(w), np.zeros_like(w)), (np.zeros_like(b), np.zeros_like(b))]
    for step in range(1, steps + 1):
        logits = z @ w + b
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        grads = (z.T @ (p - onehot) / len(y) + l2 * w, (p - onehot).mean(axis=0))
        for param, grad, (m, v) in zip((w, b), grads, state):
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad**2
            param -= lr * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        if step % 500 == 0 or step == steps:
            loss = -np.mean(np.log(p[np.arange(len(y)), y] + 1e-12))
            print(f"step {step}: log loss {loss:.5f}, accuracy {np.mean(p.argmax(axis=1) == y):.4f}", flush=True)
    return {"mean": mean.tolist(), "scale": scale.tolist(), "weights": w.tolist(), "bias": b.tolist()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", required=True, help="training-split dataset folders")
    ap.add_argument("--models", help="the models folder whose detector and reader make the crops (default: models/)")
    ap.add_argument("--cache", default="data/cache", help="where the features of each folder are kept")
    ap.add_argument("--lights", nargs="+", choices=LIGHTS, default=["corrected"],
                    help="the photo lights a head is fit for (one head each, from the boxes under that light)")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--l2", type=float, default=3e-3, help="weight decay of the standardised weights")
    ap.add_argument("--blend", type=float, nargs="+", default=[1.0],
                    help="per light of --lights, the head's share against the reader's colour")
    ap.add_argument("--temperature", type=float, nargs="+", default=[1.0],
                    help="per light of --lights, the decoder's temperature for the blend")
    ap.add_argument("--inks", action="store_true", help="the heads also take the faces' measured inks (ink_features)")
    ap.add_argument("--relative", action="store_true",
                    help="the heads also take each box's features less its photo's means (head_inputs)")
    ap.add_argument("--first-search", action="store_true", help=FIRST_SEARCH_HELP)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    if len(args.blend) != len(args.lights) or len(args.temperature) != len(args.lights):
        ap.error("give one --blend and one --temperature per light of --lights")
    cv2.setNumThreads(1)
    models = load_models(Path(args.models) if args.models else default_models_dir())
    rows = [r for d in args.data for r in collect(Path(d), models, Path(args.cache), args.first_search)]
    x, y, k = inputs(rows, args.inks, args.relative)
    heads = {}
    for light, blend, temperature in zip(args.lights, args.blend, args.temperature):
        under = k == LIGHTS.index(light)
        print(f"{light}: {int(under.sum())} boxes; per colour {np.bincount(y[under], minlength=4).tolist()}", flush=True)
        heads[light] = {**fit(x[under], y[under], args.steps, args.l2), "blend": blend, "temperature": temperature,
                        "inks": args.inks, "relative": args.relative, "boxes": int(under.sum())}
    meta = {"heads": heads, "trained": {"data": [str(d) for d in args.data], "steps": args.steps, "l2": args.l2,
                                        "reader": models.reader.fingerprint, "first_search": args.first_search}}
    Path(args.out).write_text(json.dumps(meta) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
