"""python -m training.synth --out data/train --count 40000 --seed 1 [--split train] [--workers 2]

Stress sets (the scene conditions the models are weakest in):
    --light warm | cold     2200-3000 K lamp or 7500-10000 K shade, weak auto white balance
    --dark-bodies           black, navy or charcoal dice
    --tilt 27 40            the camera this many degrees off vertical

Photos as the page uploads them (web/static/js/photo.js):
    --phone --long-side 1920 --jpeg-quality 90    12 MP photos scaled to 1920 px, JPEG 90
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from training.synth.dataset import PAGE_JPEG_QUALITY, SPLIT_CODES, PageCopy, write_dataset
from training.synth.samples import PHONE
from training.synth.scene import FAR_BLUR_SCALE, FAR_FACE_PX, LIGHT_KELVIN, SceneOptions

DEFAULT_SEEDS = {"train": 1, "val": 1001, "calib": 2001}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.synth",
        description="Make synthetic photos of Phase 10 dice with exact labels (docs/synthetic_data.md). "
        "Resumable: images already in OUT/labels.jsonl are kept and skipped.",
    )
    parser.add_argument("--out", type=Path, required=True, help="dataset directory to create or complete")
    parser.add_argument("--count", type=int, required=True, help="total number of images wanted in OUT")
    parser.add_argument("--split", choices=sorted(SPLIT_CODES), default="train",
                        help="train: training look; val: held-out fonts, bodies, inks, tables; calib: training look, own seeds")
    parser.add_argument("--seed", type=int, default=None, help="base seed (default: 1 train, 1001 val, 2001 calib)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--phone-far", action="store_true",
                        help="12 MP phone photos taken from sitting or standing height: dice faces of "
                             f"{FAR_FACE_PX[0]:.0f}-{FAR_FACE_PX[1]:.0f} px, a quarter of that in the 960-px working image")
    parser.add_argument("--phone-face-px", type=float, nargs=2, metavar=("LO", "HI"),
                        help="12 MP phone photos like --phone-far, with dice faces of LO-HI px instead")
    parser.add_argument("--phone", action="store_true",
                        help="12 MP phone photos framed as the training photos (faces in proportion to the size)")
    parser.add_argument("--long-side", type=int, default=None,
                        help="scale each photo to this long side and encode it again, as the page uploads it")
    parser.add_argument("--jpeg-quality", type=int, default=None,
                        help="the JPEG quality of that scaled copy (default 90, the page's; only with --long-side)")
    parser.add_argument("--light", choices=sorted(LIGHT_KELVIN),
                        help="warm: a 2200-3000 K lamp, cold: 7500-10000 K shade; both with a weak auto white balance")
    parser.add_argument("--dark-bodies", action="store_true", help="every photo's dice have a dark body")
    parser.add_argument("--tilt", type=float, nargs=2, metavar=("LO", "HI"),
                        help="camera tilt off vertical drawn from LO-HI degrees (default 0-40)")
    args = parser.parse_args(argv)
    if args.count < 0:
        parser.error("--count must be >= 0")
    seed = DEFAULT_SEEDS[args.split] if args.seed is None else args.seed
    start = time.time()
    face_px = tuple(args.phone_face_px) if args.phone_face_px else FAR_FACE_PX if args.phone_far else None
    if face_px and not 0 < face_px[0] <= face_px[1]:
        parser.error("--phone-face-px wants 0 < LO <= HI")
    if args.tilt and not 0 <= args.tilt[0] <= args.tilt[1] < 80:
        parser.error("--tilt wants 0 <= LO <= HI < 80")
    if args.long_side is not None and args.long_side < 64:
        parser.error("--long-side wants at least 64 px")
    if args.jpeg_quality is not None and args.long_side is None:
        parser.error("--jpeg-quality is the quality of the --long-side copy: give --long-side too")
    quality = PAGE_JPEG_QUALITY if args.jpeg_quality is None else args.jpeg_quality
    if not 1 <= quality <= 100:
        parser.error("--jpeg-quality wants 1-100")
    if args.phone and face_px:
        parser.error("--phone frames photos as the training photos; --phone-far and --phone-face-px frame them otherwise: give one")
    opts = SceneOptions(size=PHONE, face_px_range=face_px, blur_scale=FAR_BLUR_SCALE) if face_px else SceneOptions()
    if args.phone and not face_px:
        opts = SceneOptions(size=PHONE)
    page = PageCopy(args.long_side, quality) if args.long_side else None
    opts = replace(opts, light=args.light, dark_body=args.dark_bodies, tilt_range=tuple(args.tilt) if args.tilt else None)
    made = write_dataset(args.out, args.count, seed, args.split, max(1, args.workers), opts=opts, page=page)
    elapsed = time.time() - start
    rate = made / elapsed if elapsed > 0 else 0.0
    print(f"{args.out}: made {made} images in {elapsed:.1f} s ({rate:.1f} images/s), split={args.split} seed={seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
