"""The best plan for a phase, found from value counts alone (no dice indices).

A plan names each group's target (a set's number, a run's lowest number, the colour of a
colour group) and what the phase scores with it. Only the counts of each number matter for
the score, so the search works on a canonical key and can be cached: the roll advisor asks
the same few thousand value multisets again and again.

Ordering of plans (the tie-break, documented in docs/rules.md), best first:
  1. the higher score;
  2. the fewer wilds used (naturals are preferred, wilds stay unused);
  3. the higher score in the first group (naturals fill the groups in the phase's order);
  4. the higher targets, compared group by group in the phase's order (a set's number,
     a run's lowest number; for colour: red, orange, green, blue in that order).
Every loop below walks the targets from the best to the worst and only replaces its answer
on a strictly better (score, -wilds, first-group score), which realises rule 4.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

from companion.dice import COLORS, Face
from companion.rules.phases import phase as phase_of

COLOR_GROUP_SIZE = 7
# Non-colour key: counts[0] = wilds, counts[v] = natural dice showing v (v = 1..10).
CountsKey = tuple[int, ...]
# Colour key: the sorted codes 16 * (place of the colour in COLORS) + value (0 for a wild).
ColorKey = tuple[int, ...]
_COLOR_CODE = {color: 16 * i for i, color in enumerate(COLORS)}


@dataclass(frozen=True, slots=True)
class Plan:
    score: int
    wilds: int  # wild dice the groups use
    targets: tuple[Any, ...]  # per group: set -> number, run -> lowest number, color -> Color


def search(phase_no: int, key: tuple[Any, ...], strict: bool) -> Plan | None:
    """The best plan, or None when the phase cannot be made. `strict`: a natural in every group."""
    groups = phase_of(phase_no).groups
    kinds = tuple(g.kind for g in groups)
    if kinds == ("color",):
        return _color(key, strict)
    if kinds == ("run",):
        return _run(key, groups[0].size, strict)
    if kinds == ("set", "set"):
        return _two_sets(key, groups[0].size, groups[1].size, strict)
    if kinds == ("set", "run"):
        return _set_and_run(key, groups[0].size, groups[1].size, strict)
    raise NotImplementedError(f"phase {phase_no}: no search for groups {kinds}")


# 65,536 plans: more than the 32,340 value multisets of the standard set; about 25 MB when full.
cached_search = lru_cache(maxsize=1 << 16)(search)


def _set_candidates(counts: CountsKey, strict: bool) -> list[int]:
    """Numbers worth trying for a set, highest first.

    Every number that is not rolled gives the same all-wild set, so only the highest one is
    tried (rule 4); with the house rule an all-wild set is not allowed at all.
    """
    present = [v for v in range(10, 0, -1) if counts[v]]
    if not strict:
        absent = next((v for v in range(10, 0, -1) if not counts[v]), None)
        if absent is not None:
            present.append(absent)
            present.sort(reverse=True)
    return present


def _rank(score: int, used_wilds: int, first: int) -> int:
    """(score, -wilds, first-group score) packed into one int: scores stay below 256."""
    return (score << 16) | ((255 - used_wilds) << 8) | first


def _two_sets(counts: CountsKey, a: int, b: int, strict: bool) -> Plan | None:
    wilds = counts[0]
    best_rank, best_targets = -1, None
    candidates = [(v, counts[v]) for v in _set_candidates(counts, strict)]
    for v1, c1 in candidates:
        n1 = c1 if c1 < a else a
        if a - n1 > wilds:
            continue  # this number cannot even make the first set
        for v2, c2 in candidates:
            if v1 != v2:
                first = n1
                n2 = c2 if c2 < b else b
            else:
                # One number for both sets: the first takes what it can, the second the rest,
                # keeping one natural back for the second under the house rule.
                total = c1 if c1 < a + b else a + b
                first = n1
                n2 = total - first
                if strict and n2 == 0 and first > 1:
                    first, n2 = first - 1, 1
            if strict and (first == 0 or n2 == 0):
                continue
            used_wilds = a + b - first - n2
            if used_wilds > wilds:
                continue
            rank = _rank(v1 * first + v2 * n2, used_wilds, v1 * first)
            if rank > best_rank:
                best_rank, best_targets = rank, (v1, v2)
    return None if best_targets is None else Plan(best_rank >> 16, 255 - ((best_rank >> 8) & 255), best_targets)


def _windows(counts: CountsKey, size: int) -> list[tuple[int, int, int]]:
    """(lowest number, sum of the rolled numbers in it, how many are rolled), highest first."""
    out = []
    for start in range(11 - size, 0, -1):
        total = present = 0
        for v in range(start, start + size):
            if counts[v]:
                total += v
                present += 1
        out.append((start, total, present))
    return out


def _run(counts: CountsKey, size: int, strict: bool) -> Plan | None:
    wilds = counts[0]
    best: Plan | None = None
    for start, total, present in _windows(counts, size):
        missing = size - present
        if missing > wilds or (strict and present == 0):
            continue
        if best is None or (total, -missing) > (best.score, -best.wilds):
            best = Plan(total, missing, (start,))
    return best


def _set_and_run(counts: CountsKey, a: int, k: int, strict: bool) -> Plan | None:
    wilds = counts[0]
    best_rank, best_targets = -1, None
    windows = _windows(counts, k)
    for v in _set_candidates(counts, strict):
        cv = counts[v]
        full = cv if cv < a else a
        if a - full > wilds:
            continue  # this number cannot even make the set
        for start, total, present in windows:
            set_n = full
            if cv and start <= v < start + k:
                # The run wants one v too: the set takes up to `a`, the run one more.
                others = present - 1
                run_n = others + (1 if cv > set_n else 0)
                if strict and run_n == 0 and set_n > 1:
                    set_n, run_n = set_n - 1, 1
                run_sum = total - v + v * (run_n - others)
            else:
                run_n, run_sum = present, total
            if strict and (set_n == 0 or run_n == 0):
                continue
            used_wilds = a + k - set_n - run_n
            if used_wilds > wilds:
                continue
            rank = _rank(v * set_n + run_sum, used_wilds, v * set_n)
            if rank > best_rank:
                best_rank, best_targets = rank, (v, start)
    return None if best_targets is None else Plan(best_rank >> 16, 255 - ((best_rank >> 8) & 255), best_targets)


def _color(key: ColorKey, strict: bool) -> Plan | None:
    values: list[list[int]] = [[] for _ in COLORS]
    wilds = [0] * len(COLORS)
    for code in key:
        place, value = divmod(code, 16)
        if value:
            values[place].append(value)
        else:
            wilds[place] += 1
    best: Plan | None = None
    for place, color in enumerate(COLORS):
        naturals = min(len(values[place]), COLOR_GROUP_SIZE)
        missing = COLOR_GROUP_SIZE - naturals
        if missing > wilds[place] or (strict and naturals == 0):
            continue
        score = sum(sorted(values[place], reverse=True)[:naturals])
        if best is None or (score, -missing) > (best.score, -best.wilds):
            best = Plan(score, missing, (color,))
    return best


def counts_key(values: list[int | None]) -> CountsKey:
    counts = [0] * 11
    for v in values:
        counts[0 if v is None else v] += 1
    return tuple(counts)


def color_key(faces: Sequence[Face]) -> ColorKey:
    return tuple(sorted([_COLOR_CODE[f.color] + (f.value or 0) for f in faces]))
