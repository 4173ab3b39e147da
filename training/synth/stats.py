"""Print what a dataset holds: dice per image, values, colours, face sizes, conditions.

    python -m training.synth.stats data/val
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np


def _face_px(polygon: list[list[float]]) -> float:
    pts = np.asarray(polygon, float)
    x, y = pts[:, 0], pts[:, 1]
    return float(np.sqrt(abs(0.5 * (x @ np.roll(y, 1) - y @ np.roll(x, 1)))))


def summarise(records: list[dict]) -> list[str]:
    dice = [d for r in records for d in r["dice"]]
    sizes = np.array([_face_px(d["polygon"]) for d in dice]) if dice else np.zeros(1)
    lines = [
        f"images: {len(records)}, labelled top faces: {len(dice)} ({len(dice) / max(1, len(records)):.2f} per image)",
        f"truncated: {sum(d['truncated'] for d in dice)}, images without dice: {sum(not r['dice'] for r in records)}",
        "top-face size (sqrt of area, px): " + ", ".join(f"p{q}={np.percentile(sizes, q):.0f}" for q in (1, 10, 50, 90, 99)),
        "values: " + " ".join(f"{k}:{v}" for k, v in sorted(Counter(str(d["value"]) for d in dice).items(), key=lambda kv: (len(kv[0]), kv[0]))),
        "colours: " + " ".join(f"{k}:{v}" for k, v in sorted(Counter(d["color"] for d in dice).items())),
    ]
    for key in ("body", "table", "blur", "marker_6_9", "wild_style", "generator"):
        counts = Counter(str(r["conditions"].get(key)) for r in records)
        lines.append(f"{key}: " + " ".join(f"{k}:{v}" for k, v in counts.most_common()))
    lines.append(f"fonts: {len({r['conditions'].get('font') for r in records})} distinct")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.synth.stats")
    parser.add_argument("dataset", type=Path)
    args = parser.parse_args(argv)
    text = (args.dataset / "labels.jsonl").read_text("utf-8")
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    print("\n".join(summarise(records)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
