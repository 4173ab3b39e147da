"""How often the live view's hand check (companion/vision/hand.py) sees the hand in generated
scenes that have one, and a hand in scenes that have none (a photo the view would then take
only at a tap).

    .venv/bin/python benchmarks/bench_hand.py data/calib [more folders of training.synth]

Each folder is one that `python -m training.synth` writes (images/ and labels.jsonl; the
generator draws a hand reaching in from an edge in some scenes: conditions.hand). The check is
given the labelled dice boxes, as the live view gives it the dice the reader found. Prints
figures; never fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from companion.vision.hand import hand_in_view  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    for folder in args.folders:
        found = hands = refused = others = 0
        for line in (folder / "labels.jsonl").read_text("utf-8").splitlines():
            label = json.loads(line)
            image = cv2.imread(str(folder / label["image"]), cv2.IMREAD_COLOR)
            seen = hand_in_view(image, [d["box"] for d in label["dice"]], label["width"] / image.shape[1])
            if label["conditions"].get("hand"):
                hands, found = hands + 1, found + seen
            else:
                others, refused = others + 1, refused + seen
        print(f"{folder}: hands seen {found} of {hands}; a hand seen in {refused} of {others} scenes without one",
              flush=True)


if __name__ == "__main__":
    main()
