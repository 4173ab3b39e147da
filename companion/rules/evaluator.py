"""Evaluate a roll for a phase: complete or not, the best score, and which dice do what.

The search for the best plan works on value counts (companion.rules.search); this module
checks the input, asks for the plan and lays it out on the actual dice. Dice are handed out
deterministically: for each number the lowest indices go to the earliest group, and each
group's missing numbers are filled by the lowest-indexed wilds still free.
"""

from __future__ import annotations

from typing import Any, Sequence

from companion.dice import MAX_DICE, Face
from companion.rules.evaluation import Evaluation, Group, HouseRules
from companion.rules.phases import COLOR_PHASE, PHASES, Requirement
from companion.rules.search import COLOR_GROUP_SIZE, Plan, cached_search, color_key, counts_key

__all__ = ["evaluate", "best_score", "clear_cache"]

_DEFAULT_RULES = HouseRules()


def _check(phase: int, faces: Sequence[Face]) -> None:
    if isinstance(phase, bool) or not isinstance(phase, int) or not 1 <= phase <= len(PHASES):
        raise ValueError(f"phase must be a whole number 1..{len(PHASES)}, got {phase!r}")
    if not 1 <= len(faces) <= MAX_DICE:
        raise ValueError(f"a roll has 1 to {MAX_DICE} dice, got {len(faces)}")


def _plan(phase: int, faces: Sequence[Face], rules: HouseRules) -> Plan | None:
    _check(phase, faces)
    if len(faces) < PHASES[phase - 1].dice_needed:
        return None
    if phase == COLOR_PHASE:
        key = color_key(faces)
    else:
        key = counts_key([f.value for f in faces])
    return cached_search(phase, key, rules.natural_in_every_group)


def best_score(phase: int, faces: Sequence[Face], rules: HouseRules = _DEFAULT_RULES) -> int | None:
    """The best score of the phase with these dice, or None when it cannot be made."""
    plan = _plan(phase, faces, rules)
    return None if plan is None else plan.score


def clear_cache() -> None:
    """Forget the cached plans (benchmarks use it to time the search itself)."""
    cached_search.cache_clear()


def evaluate(phase: int, faces: Sequence[Face], rules: HouseRules = _DEFAULT_RULES) -> Evaluation:
    """The best arrangement of `faces` (1 to 10 dice; value None = wild) for `phase` (1..10)."""
    plan = _plan(phase, faces, rules)
    if plan is None:
        return Evaluation(phase, False, None, ())
    requirements = PHASES[phase - 1].groups
    groups: tuple[Group, ...]
    if requirements[0].kind == "color":
        groups = (_color_group(faces, plan),)
    else:
        groups = _number_groups(faces, requirements, plan, rules.natural_in_every_group)
    return Evaluation(phase, True, plan.score, groups)


def _color_group(faces: Sequence[Face], plan: Plan) -> Group:
    color = plan.targets[0]
    naturals = sorted(
        (i for i, f in enumerate(faces) if f.color is color and f.value is not None),
        key=lambda i: (-faces[i].points, i),  # the naturals' values, highest first
    )[:COLOR_GROUP_SIZE]
    wilds = [i for i, f in enumerate(faces) if f.color is color and f.value is None]
    chosen = sorted(naturals + wilds[: COLOR_GROUP_SIZE - len(naturals)])
    return Group("color", tuple(chosen), tuple(faces[i].value for i in chosen))


def _demands(requirements: Sequence[Requirement], targets: tuple[Any, ...]) -> list[list[int]]:
    """The numbers each group asks for, one entry per die."""
    out = []
    for req, target in zip(requirements, targets):
        if req.kind == "set":
            out.append([target] * req.size)
        else:
            out.append(list(range(target, target + req.size)))
    return out


def _number_groups(
    faces: Sequence[Face], requirements: Sequence[Requirement], plan: Plan, strict: bool
) -> tuple[Group, ...]:
    free: dict[int, list[int]] = {}
    for i, f in enumerate(faces):
        free.setdefault(f.value or 0, []).append(i)
    demands = _demands(requirements, plan.targets)
    slots = [_take_naturals(demand, free) for demand in demands]
    if strict:
        _keep_a_natural_in_each(slots, demands)
    wilds = iter(free.get(0, ()))
    groups = []
    for req, demand, taken in zip(requirements, demands, slots):
        dice = [(next(wilds) if index is None else index, number) for number, index in zip(demand, taken)]
        if req.kind == "set":
            dice.sort()  # a set reads in dice order; a run already reads in number order
        indices, numbers = zip(*dice)
        groups.append(Group(req.kind, indices, numbers))
    return tuple(groups)


def _take_naturals(demand: list[int], free: dict[int, list[int]]) -> list[int | None]:
    """Per demanded number, the lowest free natural die showing it, or None (a wild will do)."""
    taken: list[int | None] = []
    for number in demand:
        pool = free.get(number)
        taken.append(pool.pop(0) if pool else None)
    return taken


def _keep_a_natural_in_each(slots: list[list[int | None]], demands: list[list[int]]) -> None:
    """Under the house rule, hand a later group a natural that an earlier group can spare.

    The search only picks plans where this is possible; greedy filling in group order can
    still leave a later group with wilds only when both groups want the same number.
    """
    for g, taken in enumerate(slots):
        if any(i is not None for i in taken):
            continue
        for e in range(g):
            if _hand_over(slots[e], demands[e], taken, demands[g]):
                break


def _hand_over(
    giver: list[int | None], giver_demand: list[int], taker: list[int | None], taker_demand: list[int]
) -> bool:
    """Move one natural the taker also wants from a giver that keeps at least one; True if done."""
    spare = [s for s, i in enumerate(giver) if i is not None]
    if len(spare) < 2:
        return False
    for s in reversed(spare):
        number = giver_demand[s]
        if number in taker_demand:
            taker[taker_demand.index(number)] = giver[s]
            giver[s] = None
            return True
    return False
