"""Do a photo's own inks tell its red dice from its orange ones: by hue, by darkness, or by either?

    .venv/bin/python -m training.ink_separation --data data/table/far_choose data/table/choose

companion/vision/joint_colour.py decides a photo's colours together from each die's ink hue
measured against its body (companion/vision/inks.py). Where a set's inks lie far from their usual
hues, a red and an orange ink may take nearly the same hue; the orange ink is still the lighter
one. Per photo on light bodies whose true dice show both inks of a pair, on the labelled boxes,
this counts whether every die of the first colour lies below every die of the second by hue (the
angle of the ink's colour), by darkness (the angle of its offset out of the colour plane: how much
darker than the body per unit of colour, which the numeral's ink coverage divides out), and by
either; and the median gap between the two inks' dice on each.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass

import numpy as np

from companion.dice import Color
from companion.vision.image_io import load_work_image
from companion.vision.inks import body_chroma_of, dark_bodies, face_centre, ink_offset
from companion.vision.joint_colour import PAIRS as JOINT_PAIRS
from training.common import LabelledImage, read_dataset

PAIRS = tuple((first, second) for first, second, _, _ in JOINT_PAIRS)
# each pair's hues unwrapped from where joint_colour.py's grid for it starts (degrees)
HUE_FROM = {(first, second): hues[0] for first, second, hues, _ in JOINT_PAIRS}


@dataclass(frozen=True)
class Separation:
    photos: int  # photos on light bodies showing both inks of the pair
    by_hue: int  # ... whose two inks' dice the hue alone orders apart
    by_darkness: int  # ... the darkness alone
    by_either: int
    hue_gap: float  # median over the photos of the gap between the two inks' median hue (degrees)
    darkness_gap: float  # ... darkness (degrees)


def hue_and_darkness(offset: np.ndarray) -> tuple[float, float]:
    """An ink's offset from its body (inks.ink_offset): its hue in the opponent plane (as inks.py's
    Ink.hue, degrees, 0..360) and its elevation out of that plane (degrees: below 0, darker than
    the body)."""
    grey = float(offset.mean())
    c = offset - grey
    u, v = (c[0] - c[1]) / math.sqrt(2.0), (c[0] + c[1] - 2.0 * c[2]) / math.sqrt(6.0)
    hue = math.degrees(math.atan2(v, u)) % 360.0
    return hue, math.degrees(math.atan2(grey, math.hypot(u, v)))


def photo_inks(image: LabelledImage) -> list[tuple[Color, float, float]] | None:
    """The photo's labelled dice (not cut by the frame) as (colour, hue, darkness); None on dark bodies."""
    work = load_work_image(image.path)
    dice = [d for d in image.dice if not d.ignored]
    boxes = [work.to_work(d.box) for d in dice]
    if not boxes or dark_bodies(work.rgb, boxes):
        return None
    patches = [face_centre(work.rgb, b) for b in boxes]
    body = body_chroma_of(patches)
    if body is None:
        return None
    return [(d.color, *hue_and_darkness(ink_offset(p, body))) for d, p in zip(dice, patches) if p is not None]


def separation(photos: list[list[tuple[Color, float, float]]], pair: tuple[Color, Color]) -> Separation:
    first, second = pair
    start = HUE_FROM[pair]
    counts = [0, 0, 0, 0]
    gaps: list[tuple[float, float]] = []
    for inks in photos:
        a = [((h - start) % 360.0 + start, e) for c, h, e in inks if c is first]
        b = [((h - start) % 360.0 + start, e) for c, h, e in inks if c is second]
        if not a or not b:
            continue
        hue = max(h for h, _ in a) < min(h for h, _ in b)
        dark = max(e for _, e in a) < min(e for _, e in b)
        counts = [counts[0] + 1, counts[1] + hue, counts[2] + dark, counts[3] + (hue or dark)]
        gaps.append((float(np.median([h for h, _ in b]) - np.median([h for h, _ in a])),
                     float(np.median([e for _, e in b]) - np.median([e for _, e in a]))))
    hue_gap, dark_gap = (np.median(np.array(gaps), axis=0) if gaps else (math.nan, math.nan))
    return Separation(photos=counts[0], by_hue=counts[1], by_darkness=counts[2], by_either=counts[3],
                      hue_gap=round(float(hue_gap), 1), darkness_gap=round(float(dark_gap), 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.ink_separation", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", required=True, help="dataset folders (labels.jsonl + images)")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    figures = {}
    for data in args.data:
        photos = [inks for inks in (photo_inks(image) for image in read_dataset(data)) if inks is not None]
        figures[data] = {f"{a.value}-{b.value}": asdict(separation(photos, (a, b))) for a, b in PAIRS}
        for name, s in figures[data].items():
            print(f"{data} {name}: {s['photos']} photos with both inks; ordered apart by hue {s['by_hue']}, "
                  f"by darkness {s['by_darkness']}, by either {s['by_either']}; median gap hue "
                  f"{s['hue_gap']} deg, darkness {s['darkness_gap']} deg")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
