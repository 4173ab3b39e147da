"""Make sample_images/: a dozen phone-size photos with their expected readings.

    python -m training.synth.samples [--out sample_images]

They use the validation look (held-out fonts, bodies, inks, tables) and cover what the
pipeline must cope with: white and black dice, 1 to 10 dice, strong tilt, a busy table, a die
cut by the frame, an EXIF-rotated JPEG (stored sideways; labels are in upright pixels), a
PNG, a WebP, and a photo with no dice. Each photo takes the first seed from its own range
whose render has the property it is there for, so the set is the same on every run.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
from PIL import Image

from training.synth.scene import FAR_BLUR_SCALE, Photo, SceneOptions, render_scene

EXIF_ORIENTATION = 0x0112
ROTATED_CW = 6  # "rotate 90 degrees clockwise to display"
SPLIT = "val"


@dataclass(frozen=True)
class Sample:
    name: str
    fmt: str  # jpg | png | webp
    opts: SceneOptions
    wanted: Callable[[Photo], bool] = field(default=lambda photo: True)
    exif_rotated: bool = False


def _all_in_frame(n: int) -> Callable[[Photo], bool]:
    return lambda p: len(p.dice) == n and not any(d["truncated"] for d in p.dice)


PHONE, PHONE_PORTRAIT, MID, MID_PORTRAIT, WIDE = (4032, 3024), (3024, 4032), (2000, 1500), (1500, 2000), (2000, 1125)
QUIET = 0.006  # low sensor noise: noisy phone-size photos would not fit the size budget

SAMPLES: tuple[Sample, ...] = (
    Sample("s00_white_10", "jpg", SceneOptions(size=PHONE, n_dice=10, body="white", tilt_deg=12.0, clutter=0, noise_max=QUIET), _all_in_frame(10)),
    Sample("s01_black_10", "jpg", SceneOptions(size=PHONE, n_dice=10, body="black", tilt_deg=22.0, clutter=1, noise_max=QUIET), _all_in_frame(10)),
    Sample("s02_strong_tilt", "jpg", SceneOptions(size=PHONE_PORTRAIT, n_dice=6, tilt_deg=40.0, clutter=0, noise_max=QUIET), _all_in_frame(6)),
    Sample("s03_busy_exif", "jpg", SceneOptions(size=PHONE, n_dice=10, clutter=6, tilt_deg=18.0, noise_max=QUIET),
           lambda p: len(p.dice) == 10 and len(p.conditions["clutter"]) >= 4, exif_rotated=True),
    Sample("s04_pearl_3", "jpg", SceneOptions(size=MID, n_dice=3, body="pearl", clutter=0, noise_max=QUIET), _all_in_frame(3)),
    Sample("s05_single", "jpg", SceneOptions(size=MID, n_dice=1, clutter=1, noise_max=QUIET), _all_in_frame(1)),
    Sample("s06_out_of_frame", "jpg", SceneOptions(size=MID, n_dice=10, out_of_frame=True, noise_max=QUIET),
           lambda p: sum(d["truncated"] for d in p.dice) >= 1 and len(p.dice) >= 8),
    Sample("s07_png", "png", SceneOptions(size=(1600, 1200), n_dice=5, clutter=0, noise_max=0.003), _all_in_frame(5)),
    Sample("s08_webp", "webp", SceneOptions(size=MID, n_dice=8, body="ivory", noise_max=QUIET), _all_in_frame(8)),
    Sample("s09_no_dice", "jpg", SceneOptions(size=MID, n_dice=0, clutter=4, noise_max=QUIET), lambda p: not p.dice),
    Sample("s10_charcoal_4", "jpg", SceneOptions(size=MID_PORTRAIT, n_dice=4, body="charcoal", clutter=0, noise_max=QUIET), _all_in_frame(4)),
    Sample("s11_wide_touching", "jpg", SceneOptions(size=WIDE, n_dice=10, tilt_deg=34.0, noise_max=QUIET),
           lambda p: len(p.dice) == 10 and p.conditions["touching_pairs"] >= 2),
    # taken from sitting height: small dice in a 12 MP photo (see training.synth --phone-far)
    Sample("s12_far_phone", "jpg", SceneOptions(size=PHONE, n_dice=10, face_px_range=(70.0, 110.0), blur_scale=FAR_BLUR_SCALE,
                                               clutter=1, noise_max=QUIET), _all_in_frame(10)),
)


def render_sample(index: int, sample: Sample, tries: int = 60) -> Photo:
    for attempt in range(tries):
        seed = 50_000 + 1000 * index + attempt
        photo = render_scene(np.random.default_rng(seed), SPLIT, sample.opts)
        if sample.wanted(photo):
            photo.conditions.update({"seed": seed, "sample": sample.name})
            return photo
    raise RuntimeError(f"no seed in {tries} made sample {sample.name}")


def save(photo: Photo, sample: Sample, path: Path) -> None:
    image = Image.fromarray(photo.image)
    if sample.fmt == "png":
        image.save(path, "PNG", optimize=True)
    elif sample.fmt == "webp":
        image.save(path, "WEBP", quality=85, method=4)
    else:
        exif = Image.Exif()
        if sample.exif_rotated:
            image = image.transpose(Image.Transpose.ROTATE_90)  # stored sideways, as a phone does
            exif[EXIF_ORIENTATION] = ROTATED_CW
        image.save(path, "JPEG", quality=88, exif=exif.tobytes())


def _kept_labels(labels: Path, only: list[str] | None) -> dict[str, str]:
    """The label lines of the samples not to be made again (all of them but `only`)."""
    if not only:
        return {}
    unknown = set(only) - {s.name for s in SAMPLES}
    if unknown:
        raise SystemExit(f"no such sample: {', '.join(sorted(unknown))}")
    kept = {}
    for line in labels.read_text(encoding="utf-8").splitlines() if labels.is_file() else []:
        if line.strip():
            name = json.loads(line)["conditions"]["sample"]
            if name not in only:
                kept[name] = line
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.synth.samples", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("sample_images"))
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="make only these samples; the others' photos and labels are kept as they are")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    kept = _kept_labels(args.out / "labels.jsonl", args.only)
    lines = []
    for index, sample in enumerate(SAMPLES):
        if sample.name in kept:
            lines.append(kept[sample.name])
            continue
        photo = render_sample(index, sample)
        photo.conditions.update({"format": sample.fmt, "exif_rotated": sample.exif_rotated})
        name = f"{sample.name}.{sample.fmt}"
        save(photo, sample, args.out / name)
        record = {"image": name, "width": photo.width, "height": photo.height, "dice": photo.dice, "conditions": photo.conditions}
        lines.append(json.dumps(record, separators=(",", ":")))
        print(f"{name}: {len(photo.dice)} dice, {(args.out / name).stat().st_size / 1e6:.2f} MB", flush=True)
    (args.out / "labels.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
