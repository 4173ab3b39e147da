"""python -m training.blender --out DIR --count N [--seed S] [--split val|calib|train]

val and calib: path-traced validation photos (960 px, the dice of training.synth's split).
train: the Blender training split, small frames around one die each in their own look
(training/blender/crops.py), for the reader's second source (training.reader --second-data).

Run with the Blender environment (`make data-blender` makes it). Resumable like
training.synth: images already in DIR/labels.jsonl are kept and the rest are made.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from training.synth.dataset import done_indices, encode_jpeg, image_rng

DEFAULT_SEEDS = {"val": 4001, "calib": 4001, "train": 6001}
DEFAULT_SAMPLES = {"val": 8, "calib": 8, "train": 8}


def _renderer(args: argparse.Namespace):
    """index -> Rendered, for the split asked (each split's module imports bpy)."""
    if args.split == "train":
        from training.blender.crops import blender_fonts, render_crop

        fonts = blender_fonts()
        return lambda index, work: render_crop(image_rng(args.seed, "train", index), work, fonts, args.samples,
                                               args.threads)
    from training.blender.scene import render_photo

    return lambda index, work: render_photo(image_rng(args.seed, args.split, index), work, args.samples,
                                            args.long_side, args.split)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.blender", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--count", type=int, default=150)
    ap.add_argument("--seed", type=int, help="base seed (default 4001; 6001 for train)")
    ap.add_argument("--split", default="val", choices=("val", "calib", "train"),
                    help="val, calib: photos whose dice take training.synth's split's look; "
                         "train: frames around one die in the Blender training look")
    ap.add_argument("--samples", type=int, help="path-tracing samples per pixel, denoised (default 8)")
    ap.add_argument("--long-side", type=int, default=960, help="photo size (the face sizes scale with it; not train)")
    ap.add_argument("--threads", type=int, default=1, help="render threads (default 1: the machine is shared)")
    ap.add_argument("--log-every", type=int, default=1, help="print the rate every N images")
    args = ap.parse_args(argv)
    args.seed = DEFAULT_SEEDS[args.split] if args.seed is None else args.seed
    args.samples = DEFAULT_SAMPLES[args.split] if args.samples is None else args.samples
    if args.count < 0 or args.samples < 1 or args.threads < 1 or args.log_every < 1:
        ap.error("--count wants >= 0; --samples, --threads and --log-every >= 1")
    (args.out / "images").mkdir(parents=True, exist_ok=True)
    labels = args.out / "labels.jsonl"
    done = done_indices(labels)
    render = _renderer(args)
    start, made = time.time(), 0
    with labels.open("a", encoding="utf-8") as sink, tempfile.TemporaryDirectory() as work:
        for index in range(args.count):
            if index in done:
                continue
            photo = render(index, Path(work))
            photo.conditions.update(seed=args.seed, index=index)
            rel = f"images/{index:06d}.jpg"
            tmp = args.out / (rel + ".tmp")
            tmp.write_bytes(encode_jpeg(photo.image, photo.conditions["jpeg_quality"]))
            os.replace(tmp, args.out / rel)
            height, width = photo.image.shape[:2]
            record = {"image": rel, "width": width, "height": height, "dice": photo.dice, "conditions": photo.conditions}
            sink.write(json.dumps(record, separators=(",", ":")) + "\n")
            sink.flush()
            made += 1
            if made % args.log_every == 0:
                print(f"{args.out}: image {index} ({len(done) + made}/{args.count}), "
                      f"{(time.time() - start) / made:.2f} s per image", file=sys.stderr, flush=True)
    print(f"{args.out}: made {made} images in {time.time() - start:.0f} s, seed={args.seed}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
