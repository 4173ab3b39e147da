"""A slow, simple brute-force oracle for phase evaluation, kept apart from the evaluator.

It shares no code with companion/rules: the phases are written out again from the printed
rules, and instead of reasoning on value counts it tries every subset of the dice for every
group and checks each subset against the definition of a set, a run or a colour group.

`oracle_rank` gives the best rank over every legal arrangement, where the rank orders
arrangements exactly as docs/rules.md says the evaluator breaks ties:
(score, -wilds used, score of the first group, targets), targets being per group a set's
number, a run's lowest number, or minus the colour's place in (red, orange, green, blue).
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

from companion.dice import Color, Face

PHASE_GROUPS: dict[int, tuple[tuple[str, int], ...]] = {
    1: (("set", 3), ("set", 3)),
    2: (("set", 3), ("run", 4)),
    3: (("set", 4), ("run", 4)),
    4: (("run", 7),),
    5: (("run", 8),),
    6: (("run", 9),),
    7: (("set", 4), ("set", 4)),
    8: (("color", 7),),
    9: (("set", 5), ("set", 2)),
    10: (("set", 5), ("set", 3)),
}
COLOR_ORDER = (Color.RED, Color.ORANGE, Color.GREEN, Color.BLUE)


def best_target(kind: str, size: int, faces: Sequence[Face], strict: bool) -> int | None:
    """The best target these dice can form as one group, or None if they form no legal group."""
    naturals = [f.value for f in faces if f.value is not None]
    if strict and not naturals:
        return None
    if kind == "set":
        if len(set(naturals)) > 1:
            return None
        return naturals[0] if naturals else 10  # all wilds: any number, the highest is preferred
    if kind == "run":
        if len(set(naturals)) != len(naturals):
            return None
        # Lowest numbers that a run of `size` within 1..10 covering every natural can start at.
        starts = [
            s for s in range(1, 12 - size) if all(s <= v < s + size for v in naturals)
        ]
        return max(starts) if starts else None
    colors = {f.color for f in faces}
    if len(colors) != 1:
        return None
    return -COLOR_ORDER.index(colors.pop())


def _legal_groups(kind: str, size: int, faces: Sequence[Face], strict: bool) -> list[tuple[int, int, int, int]]:
    """(bitmask of dice, natural sum, wilds, target) for every subset of `size` dice that is legal."""
    out = []
    for combo in combinations(range(len(faces)), size):
        chosen = [faces[i] for i in combo]
        target = best_target(kind, size, chosen, strict)
        if target is None:
            continue
        mask = sum(1 << i for i in combo)
        points = sum(f.value for f in chosen if f.value is not None)
        wilds = sum(1 for f in chosen if f.value is None)
        out.append((mask, points, wilds, target))
    return out


def oracle_rank(phase: int, faces: Sequence[Face], strict: bool = False) -> tuple | None:
    """The best rank over all legal arrangements, or None when the phase cannot be made."""
    groups = PHASE_GROUPS[phase]
    options = [_legal_groups(kind, size, faces, strict) for kind, size in groups]
    best = None
    if len(groups) == 1:
        for _, points, wilds, target in options[0]:
            rank = (points, -wilds, points, (target,))
            best = rank if best is None or rank > best else best
        return best
    for mask1, points1, wilds1, target1 in options[0]:
        for mask2, points2, wilds2, target2 in options[1]:
            if mask1 & mask2:
                continue
            rank = (points1 + points2, -(wilds1 + wilds2), points1, (target1, target2))
            best = rank if best is None or rank > best else best
    return best


def oracle_score(phase: int, faces: Sequence[Face], strict: bool = False) -> int | None:
    rank = oracle_rank(phase, faces, strict)
    return None if rank is None else rank[0]
