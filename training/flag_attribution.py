"""Which doubts flag the dice read right: the needless flags, doubt by doubt.

    .venv/bin/python -m training.flag_attribution --data data/table/choose data/table/warm_choose

Per set: the dice read right and how many carry a flag, the wrong dice read and how many carry
one; then per doubt (companion/vision/doubts.py's names, the decision's and `decoder_unsure`, the
decoder under its own level): the right dice it flags, those it alone flags (dropping it would
spare them), and the wrong dice it alone flags (dropping it would leave them silent). A missed
die is no die read and counts in neither.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import asdict, dataclass, field

from companion.dice import standard_set
from companion.vision.image_io import load_work_image
from companion.vision.models import load_models
from companion.vision.pipeline import DEFAULT_SETTINGS, kept_boxes
from companion.vision.stage4_decide import decide_dice
from companion.vision.stage5_doubt import doubt_names
from training.common import LabelledImage, read_dataset
from training.evaluate import match_boxes

DECODER_UNSURE = "decoder_unsure"


@dataclass
class Attribution:
    right: int = 0
    right_flagged: int = 0
    wrong: int = 0
    wrong_flagged: int = 0
    flags_right: Counter = field(default_factory=Counter)  # per doubt: right dice it flags
    alone_right: Counter = field(default_factory=Counter)  # ... right dice it alone flags
    alone_wrong: Counter = field(default_factory=Counter)  # ... wrong dice it alone flags

    def add(self, right: bool, names: list[str]) -> None:
        if right:
            self.right, self.right_flagged = self.right + 1, self.right_flagged + bool(names)
            self.flags_right.update(names)
        else:
            self.wrong, self.wrong_flagged = self.wrong + 1, self.wrong_flagged + bool(names)
        if len(names) == 1:
            (self.alone_right if right else self.alone_wrong)[names[0]] += 1


def attribute(image: LabelledImage, models, into: Attribution) -> None:
    """Add one photo's dice read (not those mostly cut by the frame) to `into`."""
    work = load_work_image(image.path)
    dice_set = standard_set()
    kept = kept_boxes(work, models, DEFAULT_SETTINGS, dice_set, None, embeddings=False)
    if kept is None:
        return
    decided = decide_dice(kept, models, DEFAULT_SETTINGS, dice_set)
    names = doubt_names(decided, models.tuning, DEFAULT_SETTINGS)
    boxes = [work.to_full(d.box) for d in decided.detections]
    matched = match_boxes(boxes, [d.score for d in decided.detections], list(image.dice))
    for d in decided.decoded:
        j = matched[d.index]
        truth = image.dice[j] if j >= 0 else None
        if truth is not None and truth.ignored:
            continue
        right = truth is not None and (d.face.value, d.face.color) == (truth.value, truth.color)
        into.add(right, names[d.index] + ([DECODER_UNSURE] if d.uncertain else []))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.flag_attribution", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", required=True, help="dataset folders (labels.jsonl + images)")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    models = load_models(DEFAULT_SETTINGS.models_dir, DEFAULT_SETTINGS.providers)
    figures = {}
    for data in args.data:
        a = Attribution()
        for image in read_dataset(data):
            attribute(image, models, a)
        figures[data] = asdict(a)
        print(f"{data}: right dice {a.right}, flagged {a.right_flagged} ({100 * a.right_flagged / max(a.right, 1):.1f} %);"
              f" wrong dice read {a.wrong}, flagged {a.wrong_flagged}")
        for name, n in a.flags_right.most_common():
            print(f"  {name:20s} right flagged {n:4d}   alone on right {a.alone_right[name]:4d}"
                  f"   alone on wrong {a.alone_wrong[name]:3d}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
