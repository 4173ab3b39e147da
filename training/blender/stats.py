"""python -m training.blender.stats DIR [--last N]: what a Blender training render has made so far.

Frames, the crops the reader's training cuts from them (training/common.py: LabelledDie.reader_face),
the looks they cover, and the rate over the last N frames from the images' times. Needs no
Blender; safe to run while the render appends.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from training.common import read_dataset


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.blender.stats", description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--last", type=int, default=200, help="frames the rate is measured over (default 200)")
    args = ap.parse_args(argv)
    if not (args.folder / "labels.jsonl").is_file():
        raise SystemExit(f"no dataset at {args.folder} (no labels.jsonl)")
    images = read_dataset(args.folder)
    crops = sum(1 for im in images for d in im.dice if d.reader_face)
    print(f"{args.folder}: {len(images)} frames, {crops} crops for the reader "
          f"({crops / max(1, len(images)):.2f} a frame), {sum(len(im.dice) for im in images)} labelled faces")
    for key in ("body", "table"):
        counts = Counter(str(im.conditions.get(key)) for im in images)
        print(f"  {key}: " + ", ".join(f"{name} {n}" for name, n in counts.most_common()))
    mixed = sum(1 for im in images if im.conditions.get("light", {}).get("mixed"))
    print(f"  mixed light: {mixed} frames ({mixed / max(1, len(images)):.0%})")
    recent = images[-args.last:]
    if len(recent) >= 2:
        times = sorted(im.path.stat().st_mtime for im in recent)
        per_frame = (times[-1] - times[0]) / (len(recent) - 1)
        recent_crops = sum(1 for im in recent[1:] for d in im.dice if d.reader_face)
        print(f"  rate over the last {len(recent)} frames: {per_frame:.2f} s a frame, "
              f"{(times[-1] - times[0]) / max(1, recent_crops):.2f} s a crop (wall time)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
