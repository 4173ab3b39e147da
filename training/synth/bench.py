"""Benchmark: how fast one process renders and encodes synthetic photos.

    python -m training.synth.bench [--count 200] [--split train]

Prints images per second for one core (render + JPEG encode, no disk writes). Fonts are
loaded and `--warmup` images rendered (other seeds) before the clock starts, as glyph caches
are warm for most of a long run.
"""

from __future__ import annotations

import argparse
import sys
import time

import cv2

from training.synth.dataset import encode_jpeg, render_indexed
from training.synth.fonts import available_fonts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.synth.bench")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--split", default="train", choices=["train", "val", "calib"])
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--warmup", type=int, default=100, help="images rendered before timing")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    available_fonts()
    for index in range(args.warmup):
        render_indexed(args.seed + 1, args.split, index)
    start = time.perf_counter()
    cpu = time.process_time()
    pixels = 0
    for index in range(args.count):
        photo = render_indexed(args.seed, args.split, index)
        encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
        pixels += photo.width * photo.height
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu
    print(f"{args.count} {args.split} images, {pixels / args.count / 1e6:.2f} Mpixel average")
    print(f"wall: {wall:.1f} s = {args.count / wall:.1f} images/s; cpu: {cpu:.1f} s = {args.count / cpu:.1f} images per cpu-second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
