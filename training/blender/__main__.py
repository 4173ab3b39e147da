"""python -m training.blender --out DIR --count N [--seed S]: path-traced validation photos.

Run with the Blender environment (`make data-blender` makes it). Resumable like
training.synth: photos already in DIR/labels.jsonl are kept and the rest are made.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from training.blender.scene import render_photo
from training.synth.dataset import done_indices, encode_jpeg, image_rng


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.blender", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--count", type=int, default=150)
    ap.add_argument("--seed", type=int, default=4001)
    ap.add_argument("--split", default="val", choices=("val", "calib"),
                    help="whose look the dice take (training.synth's splits; never the training split's)")
    ap.add_argument("--samples", type=int, default=8, help="path-tracing samples per pixel (denoised)")
    ap.add_argument("--long-side", type=int, default=960, help="photo size (the face sizes scale with it)")
    args = ap.parse_args(argv)
    (args.out / "images").mkdir(parents=True, exist_ok=True)
    labels = args.out / "labels.jsonl"
    done = done_indices(labels)
    start, made = time.time(), 0
    with labels.open("a", encoding="utf-8") as sink, tempfile.TemporaryDirectory() as work:
        for index in range(args.count):
            if index in done:
                continue
            photo = render_photo(image_rng(args.seed, args.split, index), Path(work), args.samples, args.long_side,
                                 args.split)
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
            print(f"{args.out}: image {index}, {(time.time() - start) / made:.1f} s per image", file=sys.stderr, flush=True)
    print(f"{args.out}: made {made} images in {time.time() - start:.0f} s, seed={args.seed}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
