"""How many dice the turn screen asks the player to check, and what it costs in wrong scores.

    .venv/bin/python benchmarks/bench_checks.py                         # the sample photos
    .venv/bin/python benchmarks/bench_checks.py --set data/checks_val   # a generated set
    (made with: .venv/bin/python -m training.synth --out data/checks_val --count 100 --seed 9101 --split val;
     and data/checks_val2: --count 300 --seed 9201)

Each labelled photo is read by the shipped reader (as the server reads an upload). The read
dice are matched to the true dice (a read die whose box centre lies in a true die's box, the
nearest true centre where boxes cross); a true die left unmatched was missed, a read die left
unmatched is not a die. Then, for every
phase 1..10 as the phase being played, two ways of asking are compared:

- every flagged die: each die the reader doubts is asked (and the player puts it right);
- where it matters: only the doubts the rules engine says could change the phase's outcome or
  score (companion/rules/doubts.py, as the page asks the server), each die with its own doubt,
  runner-up and confidence, weighed against every reading the doubt leaves plausible (and
  several dice read wrong at once where that could make a missed phase); one at a time, as
  the page asks, weighed again after each answer.

Dice the photo missed are added by the player first in both (the page asks for them before
Confirm). A turn is "scored wrong" when its final dice give another outcome or score than the
true dice. "Needed checks not asked": dice read wrong whose own correction changes the verdict
but that were not asked. Prints figures; never fails.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # training/ is not installed: imported from the checkout

from companion.dice import MAX_DICE, Face, parse_face  # noqa: E402
from companion.rules import PHASES, evaluate  # noqa: E402
from companion.rules.doubts import Doubt, doubts_that_matter  # noqa: E402


@dataclass
class Read:
    face: Face
    truth: Face | None  # None: not a die
    doubt: Doubt | None  # index filled in per turn


def face_of(value, color: str) -> Face:
    return parse_face(f"{value}{color}")


def match(photo, reading) -> tuple[list[Read], list[Face]]:
    """The read dice with their true faces, and the true faces the reader missed."""
    truths = [face_of("W" if d.value is None else d.value, d.color.value) for d in photo.dice]
    free = set(range(len(truths)))
    reads = []
    for i, die in enumerate(reading["dice"]):
        x0, y0, x1, y1 = die["box"]
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        inside = [j for j in sorted(free) if photo.dice[j].box[0] <= cx <= photo.dice[j].box[2]
                  and photo.dice[j].box[1] <= cy <= photo.dice[j].box[3]]
        # of true boxes that cross (a die beside a part-hidden one), the one whose centre is nearest
        hit = min(inside, key=lambda j: _distance(photo.dice[j].box, cx, cy), default=None)
        if hit is not None:
            free.discard(hit)
        flagged = die.get("uncertain") or die.get("doubt")
        runner = die.get("runner_up")
        doubt = Doubt(i, die.get("doubt"), face_of(runner["value"], runner["color"]) if runner else None,
                      die.get("confidence")) if flagged else None
        reads.append(Read(face_of(die["value"], die["color"]), truths[hit] if hit is not None else None, doubt))
    reads = reads[:MAX_DICE]  # the page takes at most the set's dice from a reading
    return reads, [truths[j] for j in sorted(free)][:MAX_DICE - len(reads)]


def _distance(box, x: float, y: float) -> float:
    return ((box[0] + box[2]) / 2 - x) ** 2 + ((box[1] + box[3]) / 2 - y) ** 2


def verdict(phase: int, faces: list[Face]) -> tuple[bool, int | None]:
    if not faces:
        return False, None
    result = evaluate(phase, faces)
    return result.complete, result.score


def turn(phase: int, reads: list[Read], missed: list[Face], policy: str) -> tuple[int, bool, int]:
    """(dice asked, scored wrong, needed checks not asked) for one photo played at `phase`."""
    doubts = [Doubt(i, r.doubt.kind, r.doubt.runner_up, r.doubt.confidence) for i, r in enumerate(reads) if r.doubt]
    if policy == "all":
        asked = {d.index for d in doubts}
    else:
        asked = ask_as_the_page_does(phase, reads, missed, doubts)
    final = [r.truth if i in asked else r.face for i, r in enumerate(reads)]
    final = [f for f in final if f is not None] + missed
    truth = verdict(phase, [r.truth for r in reads if r.truth is not None] + missed)
    # a die left as read, doubted and wrong, whose own correction changes the dice confirmed
    shown = [r.truth if i in asked else r.face for i, r in enumerate(reads)]
    needed = 0
    for i, r in enumerate(reads):
        if i in asked or r.truth == r.face or r.doubt is None:
            continue
        fixed = [r.truth if k == i else f for k, f in enumerate(shown)]
        needed += verdict(phase, [f for f in fixed if f is not None] + missed) != verdict(phase, final)
    return len(asked), verdict(phase, final) != truth, needed


def ask_as_the_page_does(phase: int, reads: list[Read], missed: list[Face], doubts: list[Doubt]) -> set[int]:
    """The page asks the first die that matters; a die the player corrects changes the dice,
    so what matters is weighed again (a die put right as "not a die" leaves the photo)."""
    asked: set[int] = set()
    while True:
        current = [r.truth if i in asked else r.face for i, r in enumerate(reads)]
        kept = [i for i, f in enumerate(current) if f is not None]  # the page's dice, in order
        faces = [current[i] for i in kept] + missed
        position = {i: k for k, i in enumerate(kept)}
        open_doubts = [Doubt(position[d.index], d.kind, d.runner_up, d.confidence) for d in doubts
                       if d.index not in asked and d.index in position]
        matters = doubts_that_matter(phase, faces, open_doubts) if faces else []
        first = next((kept[d.index] for d, m in zip(open_doubts, matters) if m), None)
        if first is None:
            return asked
        asked.add(first)


def main(argv: list[str] | None = None) -> int:
    from companion.vision import read_image
    from training.common import read_dataset

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=REPO / "sample_images", help="a labelled photo folder")
    parser.add_argument("--limit", type=int, default=0, help="only the first N photos")
    args = parser.parse_args(argv)
    photos = read_dataset(args.set, args.limit)
    rows = []
    for photo in photos:
        reading = read_image(str(photo.path)).to_json()
        rows.append(match(photo, reading))
    flagged = sum(r.doubt is not None for reads, _ in rows for r in reads)
    with_runner = sum(r.doubt is not None and (r.doubt.runner_up is not None or r.doubt.kind == "die")
                      for reads, _ in rows for r in reads)
    print(f"{args.set}: {len(photos)} photos, {sum(len(r) for r, _ in rows)} dice read, {flagged} flagged "
          f"({with_runner} with a runner-up or a 'die' doubt), {sum(len(m) for _, m in rows)} missed")
    for policy, label in (("all", "every flagged die"), ("matters", "where it matters")):
        asked, wrong, needed, turns = [], 0, 0, 0
        for reads, missed in rows:
            per_photo = []
            for phase in PHASES:
                n, bad, need = turn(phase.number, reads, missed, policy)
                per_photo.append(n)
                wrong += bad
                needed += need
                turns += 1
            asked.append(statistics.mean(per_photo))
        print(f"  {label:<18} checks asked per photo {statistics.mean(asked):.2f}; turns scored wrong "
              f"{wrong}/{turns} ({wrong / turns:.1%}); needed checks not asked {needed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
