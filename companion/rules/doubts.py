"""Which doubted dice could change a phase's verdict: the ones worth asking the player about.

A reader's doubt about one die names what it doubts ("value", "color", or "die": whether it
is a die at all), its runner-up face and how sure it is of the face it read. The runner-up is
only the reader's next guess: a die read wrong often shows another face. So each doubt is
weighed against every other reading it leaves plausible:

- "value": any face of the same ink colour (the digit misread, the ink seen), and the runner-up;
- "color": the same value in any other colour, and the runner-up;
- "die" or not said: any face the set prints (a side face read for the top one shows any), or
  no die at all; but where the reader is SURE of the face it read, a "die" doubt is only
  whether the box is a die: no die at all, or the runner-up.

Where the dice as read are a roll the set can show, only readings that keep it one are
weighed (each face on a physical die of its own). The doubt matters when any of them makes
or misses the phase otherwise, or scores otherwise, with the other dice as read.

A phase missed as read could also be made by several doubted dice read wrong at once, none
of which could make it alone. Each such group is weighed with its dice as wilds (a wild
stands for any number; in the colour phase each colour is tried), and asked about when the
reader gives all of its dice together at least JOINTLY_WRONG of being wrong (from each die's
confidence; a doubt without one counts as surely wrong).

>>> from companion.dice import parse_faces, parse_face
>>> faces = parse_faces("7b 7r 7g 3o 3r Wb".split())
>>> doubts_that_matter(1, faces, [Doubt(0, "color", parse_face("7g"))])  # colour: not in phase 1
[False]
>>> doubts_that_matter(1, faces, [Doubt(3, "value", parse_face("3b"))])  # 3o as 8o: the set of 3s breaks
[True]
>>> doubts_that_matter(1, faces, [Doubt(0, "color", None)])  # 7b in any other colour: still 7
[False]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

from companion.dice import COLORS, Face, standard_set
from companion.rules.evaluation import HouseRules
from companion.rules.evaluator import best_score
from companion.rules.phases import COLOR_PHASE

DOUBT_KINDS = ("value", "color", "die")
UNKNOWN = None  # a doubt whose kind the reader did not say: any other reading, or no die
# Several doubted dice read wrong at once are asked about from this joint chance on (1 in 100).
JOINTLY_WRONG = 0.01
# A reader this sure of a face (its confidence: value and colour both right) doubts only that it is a die.
SURE = 0.99


@dataclass(frozen=True, slots=True)
class Doubt:
    """The reader's doubt about die `index`: what it doubts (None: not said), its next-best
    face (None: not said), and its confidence that the face read is right (None: not said)."""

    index: int
    kind: str | None  # one of DOUBT_KINDS, or UNKNOWN
    runner_up: Face | None = None
    confidence: float | None = None

    def __post_init__(self) -> None:
        if self.kind is not UNKNOWN and self.kind not in DOUBT_KINDS:
            raise ValueError(f"a doubt is one of {', '.join(DOUBT_KINDS)}, not {self.kind!r}")
        if self.confidence is not None and not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"a doubt's confidence is 0..1, not {self.confidence!r}")

    @property
    def wrong(self) -> float:
        """The chance that the face read is wrong (1 when the reader did not say)."""
        return 1.0 if self.confidence is None else 1.0 - self.confidence


def doubts_that_matter(phase: int, faces: Sequence[Face], doubts: Sequence[Doubt],
                       rules: HouseRules = HouseRules()) -> list[bool]:
    """For each doubt, whether another reading could change the phase's outcome or score."""
    if not doubts:
        return []
    for doubt in doubts:
        if not 0 <= doubt.index < len(faces):
            raise ValueError(f"a doubt names die {doubt.index}, but there are {len(faces)} dice")
    verdict = _verdict(phase, faces, rules)
    showable = _can_show(faces)
    out = [_matters(phase, faces, doubt, verdict, rules, showable) for doubt in doubts]
    if not verdict[0]:
        rest = [d for d, ask in zip(doubts, out) if not ask]
        together = _made_together(phase, faces, rest, rules)
        out = [ask or d.index in together for d, ask in zip(doubts, out)]
    return out


def _matters(phase: int, faces: Sequence[Face], doubt: Doubt, verdict: tuple[bool, int | None],
             rules: HouseRules, showable: bool) -> bool:
    others = [f for i, f in enumerate(faces) if i != doubt.index]
    if doubt.kind in ("die", UNKNOWN) and (not others or _verdict(phase, others, rules) != verdict):
        return True
    for face in _readings(faces[doubt.index], doubt):
        swapped = list(faces)
        swapped[doubt.index] = face
        if showable and not _can_show(swapped):
            continue  # no roll of the set: not what the die shows, with the others as read
        if _verdict(phase, swapped, rules) != verdict:
            return True
    return False


def _readings(read: Face, doubt: Doubt) -> list[Face]:
    """The other faces the die may show, by what the reader doubts (the module's list)."""
    faces = _set_faces()
    if doubt.kind == "die" and doubt.confidence is not None and doubt.confidence >= SURE:
        faces = []
    elif doubt.kind == "value":
        faces = [f for f in faces if f.color == read.color]
    elif doubt.kind == "color":
        faces = [f for f in faces if f.value == read.value]
    if doubt.runner_up is not None and doubt.runner_up not in faces:
        faces = [*faces, doubt.runner_up]
    return [f for f in faces if f != read]


def _made_together(phase: int, faces: Sequence[Face], doubts: Sequence[Doubt], rules: HouseRules) -> set[int]:
    """The dice of every smallest group of two or more doubts that, read otherwise together
    (as wilds), make the missed phase, where the reader gives the whole group at least
    JOINTLY_WRONG of being wrong. With every group needing a natural number a wild may do
    less than a number: then every such group counts."""
    plausible = [d for d in doubts if d.wrong > 0]
    if len(plausible) < 2 or not (rules.natural_in_every_group
                                  or _made_as_wilds(phase, faces, {d.index for d in plausible}, rules)):
        return set()  # not even all of them at once (wilds only ever help)
    found: list[set[int]] = []
    for size in range(2, len(plausible) + 1):
        for group in combinations(plausible, size):
            indices = {d.index for d in group}
            if any(f <= indices for f in found) or math.prod(d.wrong for d in group) < JOINTLY_WRONG:
                continue
            if rules.natural_in_every_group or _made_as_wilds(phase, faces, indices, rules):
                found.append(indices)
    return set().union(*found)


def _made_as_wilds(phase: int, faces: Sequence[Face], indices: set[int], rules: HouseRules) -> bool:
    for color in COLORS if phase == COLOR_PHASE else COLORS[:1]:  # elsewhere a wild's colour counts for nothing
        swapped = [Face(None, color) if i in indices else f for i, f in enumerate(faces)]
        if _verdict(phase, swapped, rules)[0]:
            return True
    return False


def _can_show(faces: Sequence[Face]) -> bool:
    return standard_set().can_show(faces)


def _set_faces() -> list[Face]:
    return sorted({f for die in standard_set().dice for f in die.faces}, key=lambda f: f.token)


def _verdict(phase: int, faces: Sequence[Face], rules: HouseRules) -> tuple[bool, int | None]:
    score = best_score(phase, faces, rules)
    return score is not None, score
