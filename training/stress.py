"""A stress set: labelled photos made again through camera faults the generator does not make.

    .venv/bin/python -m training.stress --data data/calib --limit 100 --out data/stress_calib
    .venv/bin/python -m training.evaluate --data data/stress_calib     # "by stress" rows

Each source photo is written once per fault (and once unchanged, `none`), all at the same
size, so the labels' polygons stay true and every fault is measured on the same photos. The
faults go past what the generator's randomisation reaches, or are things it never does: an
uncorrected lamp or shade colour cast, a phone's "vivid" colours, local tone mapping, heavy
sharpening, a photo sent through a messaging app (shrunk, then enlarged), long motion blur,
dark and overexposed shots, low JPEG quality and a cheap lens's colour fringes. A model that
only learnt the generator's look loses most here, so this is a measure of robustness, not a
target: decide things on a stress set made from data/calib, never from data/val.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from training import faults

Fault = Callable[[np.ndarray], np.ndarray]

FAULTS: dict[str, Fault] = {
    "none": lambda rgb: rgb,
    "lamp_cast": lambda rgb: faults.cast(rgb, (1.0, 0.72, 0.45)),  # tungsten light left uncorrected
    "shade_cast": lambda rgb: faults.cast(rgb, (0.78, 0.9, 1.0)),  # blue shade light
    "green_cast": lambda rgb: faults.cast(rgb, (0.85, 1.0, 0.8)),  # fluorescent tube
    "vivid": lambda rgb: faults.saturate(rgb, 1.6),
    "tone_mapped": lambda rgb: faults.tone_map(rgb, 3.0, tiles=8),
    "oversharpened": lambda rgb: faults.sharpen(rgb, 2.0, 2.0),
    "messaging_app": lambda rgb: faults.low_resolution(rgb, 0.4, 45),
    "motion_blur": lambda rgb: faults.motion_blur(rgb, 9, 30.0),
    "dark_noisy": lambda rgb: faults.dark_noisy(rgb, 0.4, 6.0, 1.8, np.random.default_rng(0)),
    "overexposed": lambda rgb: faults.overexpose(rgb, 1.9),
    "jpeg_q25": lambda rgb: faults.jpeg(rgb, 25),
    "colour_fringes": lambda rgb: faults.colour_fringes(rgb, 1.006),
}


def make_stress_set(src: Path, out: Path, limit: int, versions: dict[str, Fault] = FAULTS) -> int:
    """Write every version (fault) of the first `limit` photos of `src` into `out`; returns photos written."""
    (out / "images").mkdir(parents=True, exist_ok=True)
    lines = [json.loads(line) for line in (src / "labels.jsonl").read_text().splitlines() if line.strip()]
    written = 0
    with open(out / "labels.jsonl", "w") as labels:
        for i, label in enumerate(lines[:limit] if limit else lines):
            bgr = cv2.imread(str(src / label["image"]), cv2.IMREAD_COLOR)
            rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
            for name, fault in versions.items():
                image = f"images/{i:06d}_{name}.jpg"
                faulty = cv2.cvtColor(fault(rgb), cv2.COLOR_RGB2BGR)
                cv2.imwrite(str(out / image), faulty, [cv2.IMWRITE_JPEG_QUALITY, 92])
                labels.write(json.dumps({**label, "image": image,
                                         "conditions": {**label.get("conditions", {}), "stress": name}}) + "\n")
                written += 1
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="a labelled dataset to take the photos from")
    ap.add_argument("--out", required=True, help="the folder to write the stress set into")
    ap.add_argument("--limit", type=int, default=100, help="source photos (0: all)")
    args = ap.parse_args(argv)
    n = make_stress_set(Path(args.data), Path(args.out), args.limit)
    print(f"wrote {n} photos ({len(FAULTS)} versions of each) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
