"""Which doubted dice could change a phase's verdict: the ones worth asking the player about.

A reader's doubt about one die names what it doubts ("value", "color", or "die": whether it
is a die at all) and its runner-up face. The doubt matters when the phase, scored with the
runner-up in the die's place (or without the die, for "die"), is made or missed otherwise,
or scores otherwise. Without a runner-up every other reading is tried: any face the set
prints (a colour doubt: the same value in the other colours), and for a doubt of unknown
kind also no die at all; it matters when any of them changes the verdict.

>>> from companion.dice import parse_faces, parse_face
>>> faces = parse_faces("7b 7r 7g 3o 3r Wb".split())
>>> doubts_that_matter(1, faces, [Doubt(0, "color", parse_face("7g"))])  # colour: not in phase 1
[False]
>>> doubts_that_matter(1, faces, [Doubt(3, "value", parse_face("8o"))])  # 3o as 8o: the set of 3s breaks
[True]
>>> doubts_that_matter(1, faces, [Doubt(0, "color", None)])  # 7b in any other colour: still 7
[False]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from companion.dice import COLORS, Face, standard_set
from companion.rules.evaluation import HouseRules
from companion.rules.evaluator import evaluate

DOUBT_KINDS = ("value", "color", "die")
UNKNOWN = None  # a doubt whose kind the reader did not say: any other reading, or no die


@dataclass(frozen=True, slots=True)
class Doubt:
    """The reader's doubt about die `index`: what it doubts (None: not said), and its
    next-best face (None: not said)."""

    index: int
    kind: str | None  # one of DOUBT_KINDS, or UNKNOWN
    runner_up: Face | None = None

    def __post_init__(self) -> None:
        if self.kind is not UNKNOWN and self.kind not in DOUBT_KINDS:
            raise ValueError(f"a doubt is one of {', '.join(DOUBT_KINDS)}, not {self.kind!r}")


def doubts_that_matter(phase: int, faces: Sequence[Face], doubts: Sequence[Doubt],
                       rules: HouseRules = HouseRules()) -> list[bool]:
    """For each doubt, whether another reading could change the phase's outcome or score."""
    if not doubts:
        return []
    verdict = _verdict(phase, faces, rules)
    out = [_matters(phase, faces, doubt, verdict, rules) for doubt in doubts]
    rest = [d for d, ask in zip(doubts, out) if not ask and d.kind != "die"]
    # A miss that two or more misread dice could make only together: ask them all.
    if not verdict[0] and len(rest) > 1 and _could_make_together(phase, faces, rest, rules):
        out = [ask or (d in rest) for d, ask in zip(doubts, out)]
    return out


def _matters(phase: int, faces: Sequence[Face], doubt: Doubt, verdict: tuple[bool, int | None],
             rules: HouseRules) -> bool:
    if not 0 <= doubt.index < len(faces):
        raise ValueError(f"a doubt names die {doubt.index}, but there are {len(faces)} dice")
    others = [f for i, f in enumerate(faces) if i != doubt.index]
    if doubt.kind in ("die", UNKNOWN) and (not others or _verdict(phase, others, rules) != verdict):
        return True
    if doubt.kind == "die":
        return False
    read = faces[doubt.index]
    for face in _readings(read, doubt):
        swapped = list(faces)
        swapped[doubt.index] = face
        if _verdict(phase, swapped, rules) != verdict:
            return True
    return False


def _could_make_together(phase: int, faces: Sequence[Face], doubts: Sequence[Doubt], rules: HouseRules) -> bool:
    """Whether the doubted dice, read otherwise all at once, could make the phase: each as its
    runner-up, else as a wild (a wild stands for any number; in the colour phase it counts in
    its own colour, so every colour is tried for a doubt of no kind). With every group needing a natural number a wild may do less
    than a number: then any two doubts could."""
    if rules.natural_in_every_group:
        return True
    for color in COLORS:
        swapped = list(faces)
        for doubt in doubts:
            wild = Face(None, color if doubt.kind is UNKNOWN else faces[doubt.index].color)
            swapped[doubt.index] = doubt.runner_up or wild
        if _verdict(phase, swapped, rules)[0]:
            return True
    return False


def _readings(read: Face, doubt: Doubt) -> list[Face]:
    """The other faces the die may show: the runner-up, else every face the set prints (of the
    same value, for a colour doubt)."""
    if doubt.runner_up is not None:
        return [doubt.runner_up]
    faces = sorted({f for die in standard_set().dice for f in die.faces} - {read}, key=lambda f: f.token)
    if doubt.kind == "color":
        faces = [f for f in faces if f.value == read.value]
    return faces


def _verdict(phase: int, faces: Sequence[Face], rules: HouseRules) -> tuple[bool, int | None]:
    result = evaluate(phase, faces, rules)
    return result.complete, result.score
