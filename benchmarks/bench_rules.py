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


def rate(func: Callable, phase: int, rolls: Sequence[list[Face]], cold: bool) -> float:
    if cold:
        clear_cache()
    start = time.perf_counter()
    for roll in rolls:
        func(phase, roll)
    return len(rolls) / (time.perf_counter() - start)


def report(name: str, rolls: Sequence[list[Face]], cold: bool) -> None:
    print(f"\n{name}: {len(rolls):,} rolls of 10 dice per phase")
    print(f"{'phase':>5} {'evaluate/s':>12} {'best_score/s':>13}")
    totals = {evaluate: 0.0, best_score: 0.0}
    for phase in range(1, 11):
        rates = {}
        for func in (evaluate, best_score):
            rates[func] = rate(func, phase, rolls, cold)
            totals[func] += len(rolls) / rates[func]
        print(f"{phase:>5} {rates[evaluate]:>12,.0f} {rates[best_score]:>13,.0f}")
    calls = 10 * len(rolls)
    print(f"{'all':>5} {calls / totals[evaluate]:>12,.0f} {calls / totals[best_score]:>13,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rolls", type=int, default=50_000, help="random rolls per phase (default 50000)")
    parser.add_argument("--seed", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    report("cold (no cache hits)", cold_rolls(rng), cold=True)
    clear_cache()
    report("random (cache kept)", random_rolls(rng, args.rolls), cold=False)


if __name__ == "__main__":
    main()
