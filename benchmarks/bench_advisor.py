"""Roll advisor benchmark: table build time and size per phase, time per decision.

    .venv/bin/python benchmarks/bench_advisor.py            # build + per-decision times
    .venv/bin/python benchmarks/bench_advisor.py --fresh    # also the fresh-turn table (Phase 8: ~1 min)
    .venv/bin/python benchmarks/bench_advisor.py --skip-timing --phase8-gap 5000     # Monte Carlo, Phase 8 score bound
    .venv/bin/python benchmarks/bench_advisor.py --skip-timing --phase8-bellman 100  # exact check of it
    .venv/bin/python benchmarks/bench_advisor.py --skip-timing --phase8-choice 100   # the score keep choice
    .venv/bin/python benchmarks/bench_advisor.py --skip-timing --warm-up             # all tables up front

Decisions are timed on random rolls of the standard set (seeded), with die ids
(one reading) and without (the advisor averages over every reading); the first call of a
phase, which builds the tables, is timed separately.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time

from companion.advisor import advise
from companion.advisor.colour_advice import colour_tables
from companion.advisor.value_advice import value_tables
from companion.advisor.assignment import assignments
from companion.advisor.fresh import fresh_turn
from companion.dice import DieToken, standard_set
from companion.rules.evaluator import best_score

DICE = standard_set().dice


def rolls(seed: int, count: int, named: bool) -> list[list[DieToken]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        faces = [rng.choice(d.faces) for d in DICE]
        if named:
            out.append([DieToken(f, d.id) for f, d in zip(faces, DICE)])
        else:
            rng.shuffle(faces)
            out.append([DieToken(f) for f in faces])
    return out


def bench_phase(phase: int, count: int) -> None:
    start = time.perf_counter()
    tables = colour_tables() if phase == 8 else value_tables(phase)
    build = time.perf_counter() - start
    t0 = time.perf_counter()
    advise(phase, rolls(phase, 1, True)[0], 2)  # the first decision after the build, apart
    first = time.perf_counter() - t0
    times = {}
    for named in (True, False):
        for rolls_left in (2, 1):
            samples, cpu = [], []
            for tokens in rolls(phase * 10 + rolls_left, count, named):
                t0, c0 = time.perf_counter(), time.process_time()
                advise(phase, tokens, rolls_left)
                samples.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            times[named, rolls_left] = samples, cpu
    cells = []
    # Wall time suffers from other jobs on a shared machine; CPU time is what the advice costs.
    for (named, rolls_left), (samples, cpu) in times.items():
        cells.append(
            f"{'ids' if named else 'no ids'} r={rolls_left}: mean {1000 * statistics.mean(samples):5.1f} ms,"
            f" max {1000 * max(samples):5.1f} ms (cpu max {1000 * max(cpu):5.1f})"
        )
    print(
        f"phase {phase:2d}: build {build:5.2f} s, tables {tables.nbytes / 1e6:5.1f} MB,"
        f" first decision {1000 * first:5.1f} ms | " + " | ".join(cells)
    )


def worst_phase8_reading(count: int) -> None:
    """The Phase 8 roll (without ids) with the most readings among `count` random rolls, timed."""
    candidates = rolls(4242, count, named=False)
    worst = max(candidates, key=lambda t: len(assignments(t, standard_set())))
    n = len(assignments(worst, standard_set()))
    for rolls_left in (2, 1):
        samples = []
        for _ in range(5):
            t0 = time.perf_counter()
            advise(8, worst, rolls_left)
            samples.append(time.perf_counter() - t0)
        print(f"phase  8, {n} readings ({' '.join(t.token for t in worst)}), r={rolls_left}: max {1000 * max(samples):.1f} ms")


def fresh_table() -> None:
    print("\n| Phase | best chance: P(complete) | its E[score] | best score: E[score] | its P(complete) |")
    print("|---|---|---|---|---|")
    for phase in range(1, 11):
        t0 = time.perf_counter()
        f = fresh_turn(phase)
        took = time.perf_counter() - t0
        score = f"{f.score_expected_score:.3f}"
        if f.score_upper is not None:
            score = f"{f.score_expected_score:.3f} .. {f.score_upper:.3f}"
        print(
            f"| {phase} | {f.best_p_complete:.4f} | {f.best_expected_score:.3f} | {score} | {f.score_p_complete:.4f} |"
            f"  <!-- {took:.1f} s -->"
        )


def phase8_gap(turns: int) -> None:
    """Follow the score advice from a fresh turn; compare the realised mean with the
    lower/upper figures the advice gave with two rolls left."""
    rng = random.Random(88)
    scores, lows, highs = [], [], []
    for _ in range(turns):
        faces = [rng.choice(d.faces) for d in DICE]
        for rolls_left in (2, 1):
            option = advise(8, [DieToken(f, d.id) for f, d in zip(faces, DICE)], rolls_left).best_score
            if rolls_left == 2:
                lows.append(option.expected_score)
                highs.append(option.expected_score_upper or option.expected_score)
            keep = set(option.keep)
            faces = [faces[i] if i in keep else rng.choice(DICE[i].faces) for i in range(len(DICE))]
        scores.append(float(best_score(8, faces) or 0))
    mean = statistics.mean(scores)
    error = statistics.stdev(scores) / math.sqrt(turns)
    low_error = statistics.stdev(lows) / math.sqrt(turns)
    exact_share = sum(h == lo for h, lo in zip(highs, lows)) / turns
    print(
        f"phase 8 score plan, {turns} turns: realised mean {mean:.3f} +- {error:.3f} (1 s.e.);"
        f" advice's figure with two rolls left: mean {statistics.mean(lows):.3f} +- {low_error:.3f}"
        f" (exact in {100 * exact_share:.1f}% of turns), upper {statistics.mean(highs):.3f}"
    )


def phase8_bellman(states: int) -> None:
    """Phase 8, two rolls left, keeps rerolling one to three dice: the best play's exact
    expected score (every outcome of the reroll, each followed by the last-roll advice over
    all 1,024 keeps) against the advisor's exact figure and against its bounds (the figures
    it falls back on past its enumeration budget)."""
    import itertools

    from companion.advisor import advise_keep, colour_advice

    rng = random.Random(808)
    exact_diffs, gaps_low, gaps_high = [], [], []
    budget = colour_advice.EXACT_OUTCOMES
    for _ in range(states):
        faces = [rng.choice(d.faces) for d in DICE]
        named = [DieToken(f, d.id) for f, d in zip(faces, DICE)]
        rerolled = rng.sample(range(len(DICE)), rng.choice((1, 2, 3)))
        keep = [i for i in range(len(DICE)) if i not in rerolled]
        _, exact_plan = advise_keep(8, named, keep, 2)
        colour_advice.EXACT_OUTCOMES = 0  # the bounds path
        _, bound_plan = advise_keep(8, named, keep, 2)
        colour_advice.EXACT_OUTCOMES = budget
        total, outcomes = 0.0, 0
        for combo in itertools.product(*(DICE[i].faces for i in rerolled)):
            final = list(faces)
            for i, face in zip(rerolled, combo):
                final[i] = face
            total += advise(8, [DieToken(f, d.id) for f, d in zip(final, DICE)], 1).best_score.expected_score
            outcomes += 1
        best_play = total / outcomes
        exact_diffs.append(abs(best_play - exact_plan.expected_score))
        gaps_low.append(best_play - bound_plan.expected_score)
        gaps_high.append((bound_plan.expected_score_upper or bound_plan.expected_score) - best_play)
    print(
        f"phase 8, {states} keeps rerolling 1-3 dice, two rolls left: |best play - exact figure| max"
        f" {max(exact_diffs):.2e}; bounds path: best play - lower figure mean {statistics.mean(gaps_low):.3f},"
        f" max {max(gaps_low):.3f}, min {min(gaps_low):.3f}; upper figure - best play mean"
        f" {statistics.mean(gaps_high):.3f}, max {max(gaps_high):.3f}"
    )


def phase8_choice(states: int, top: int = 8) -> None:
    """Does enumerating more keeps change Phase 8's two-roll score choice? The advisor picks
    the keep with the best lower figure and enumerates only it; here the `top` best keeps by
    that figure are all enumerated and the best of them compared with the chosen one."""
    import numpy as np

    from companion.advisor import advice as advice_module
    from companion.advisor import colour_advice
    from companion.rules import HouseRules

    rng = random.Random(12)
    tables = colour_tables()
    gains = []
    for _ in range(states):
        tokens = [DieToken(rng.choice(d.faces), d.id) for d in DICE]
        values, _ = advice_module._figures(8, tokens, 2, HouseRules(), None)
        lower = values.score_first[0]
        order = [int(m) for m in np.argsort(-lower)[:top] if m != (1 << len(DICE)) - 1]
        exact = {}
        for mask in order:
            if 6 ** (len(DICE) - bin(mask).count("1")) <= colour_advice.EXACT_OUTCOMES:
                reading = [tuple(range(len(DICE)))]
                exact[mask] = colour_advice.exact_two_rolls(tokens, reading, mask, tables.last_roll, (True,))[0][0]
        chosen = advice_module._choose(*values.score_first)
        if chosen in exact:
            gains.append(max(exact.values()) - exact[chosen])
    print(
        f"phase 8 score choice, {states} rolls: best exact among the top {top} keeps by the lower figure"
        f" beats the chosen keep by mean {statistics.mean(gains):.4f}, max {max(gains):.4f} ({len(gains)} rolls enumerated)"
    )


def warm_up_all() -> None:
    from companion.advisor import warm_up

    t0 = time.perf_counter()
    held = warm_up()
    print(f"warm_up(): {time.perf_counter() - t0:.1f} s, {held / 1e6:.0f} MB of tables")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=50, help="random rolls per phase and setting")
    parser.add_argument("--fresh", action="store_true", help="print the fresh-turn table")
    parser.add_argument("--phase8-gap", type=int, default=0, metavar="TURNS", help="Monte Carlo of the score bound")
    parser.add_argument("--phase8-bellman", type=int, default=0, metavar="STATES", help="exact check of the score bound")
    parser.add_argument("--phase8-choice", type=int, default=0, metavar="ROLLS", help="check the score keep choice")
    parser.add_argument("--warm-up", action="store_true", help="time warm_up() (run alone: nothing built yet)")
    parser.add_argument("--skip-timing", action="store_true", help="only the extra reports")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if args.warm_up:
        warm_up_all()
    if not args.skip_timing:
        for phase in range(1, 11):
            bench_phase(phase, args.count)
        worst_phase8_reading(2000)
    if args.phase8_bellman:
        phase8_bellman(args.phase8_bellman)
    if args.phase8_choice:
        phase8_choice(args.phase8_choice)
    if args.fresh:
        fresh_table()
    if args.phase8_gap:
        phase8_gap(args.phase8_gap)


if __name__ == "__main__":
    main()
