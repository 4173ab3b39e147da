"""How fast the rules engine evaluates 10-dice rolls, in one process.

Two workloads, each run for every phase, timed for evaluate() and for best_score():
  cold   - every one of the 32,340 value multisets the standard set can roll, once each,
           with the plan cache emptied first: every call does the full search.
  random - random rolls of the 10 physical dice (each on one of its faces, in random
           order), with the cache kept: what the web page and the roll advisor see.

Usage: .venv/bin/python benchmarks/bench_rules.py [--rolls N] [--seed S]
"""

from __future__ import annotations

import argparse
import os
import random
import time
from itertools import combinations_with_replacement, product
from typing import Callable, Sequence

from companion.dice import COLORS, Face, standard_set
from companion.rules import best_score, evaluate
from companion.rules.evaluator import clear_cache


def cold_rolls(rng: random.Random) -> list[list[Face]]:
    """One roll per value multiset of the standard set, colours and order at random."""
    by_numbers: dict[tuple, int] = {}
    for die in standard_set().dice:
        numbers = tuple(sorted({f.value for f in die.faces}, key=lambda v: (v is None, v or 0)))
        by_numbers[numbers] = by_numbers.get(numbers, 0) + 1
    parts = [list(combinations_with_replacement(n, k)) for n, k in by_numbers.items()]
    rolls = []
    for choice in product(*parts):
        roll = [Face(v, rng.choice(COLORS)) for v in sum(choice, ())]
        rng.shuffle(roll)
        rolls.append(roll)
    rng.shuffle(rolls)
    return rolls


def random_rolls(rng: random.Random, count: int) -> list[list[Face]]:
    dice = standard_set().dice
    rolls = []
    for _ in range(count):
        roll = [rng.choice(d.faces) for d in dice]
        rng.shuffle(roll)
        rolls.append(roll)
    return rolls


def timed(func: Callable, phase: int, rolls: Sequence[list[Face]], cold: bool) -> tuple[float, float]:
    """(wall seconds, CPU seconds) for one pass. CPU time is printed too because the
    development machine is shared: wall time there includes waiting for a core."""
    if cold:
        clear_cache()
    wall, cpu = time.perf_counter(), time.process_time()
    for roll in rolls:
        func(phase, roll)
    return time.perf_counter() - wall, time.process_time() - cpu


def report(name: str, rolls: Sequence[list[Face]], cold: bool) -> None:
    n = len(rolls)
    print(f"\n{name}: {n:,} rolls of 10 dice per phase; calls per second by wall clock (by CPU time)")
    print(f"{'phase':>5} {'evaluate':>22} {'best_score':>22}")
    totals = {evaluate: [0.0, 0.0], best_score: [0.0, 0.0]}
    for phase in range(1, 11):
        cells = []
        for func in (evaluate, best_score):
            wall, cpu = timed(func, phase, rolls, cold)
            totals[func][0] += wall
            totals[func][1] += cpu
            cells.append(f"{n / wall:>10,.0f} ({n / cpu:>9,.0f})")
        print(f"{phase:>5} {cells[0]:>22} {cells[1]:>22}")
    cells = [f"{10 * n / w:>10,.0f} ({10 * n / c:>9,.0f})" for w, c in totals.values()]
    print(f"{'all':>5} {cells[0]:>22} {cells[1]:>22}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rolls", type=int, default=50_000, help="random rolls per phase (default 50000)")
    parser.add_argument("--seed", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    report("cold (no cache hits)", cold_rolls(rng), cold=True)
    clear_cache()
    report("random (cache kept)", random_rolls(rng, args.rolls), cold=False)


if __name__ == "__main__":
    main()
