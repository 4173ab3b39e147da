"""Which physical die can show which token: the readings consistent with a whole roll.

A token without a die id may come from any die that carries its face. A roll of all the
dice is explained by a one-to-one map token -> die. Every such map is equally likely: each
is one outcome of ten independent fair dice (probability 6**-10), and no die carries the
same face twice, so the advisor averages over them uniformly.
"""

from __future__ import annotations

from typing import Sequence

from companion.dice import DiceError, DiceSet, DieToken

# A roll of the standard set has at most a few hundred readings; this guards against a
# pathological custom set.
MAX_ASSIGNMENTS = 20_000


def candidates(tokens: Sequence[DieToken], dice_set: DiceSet) -> list[list[int]]:
    """For each token, the indices (in dice_set.dice) of the dice it may be showing on."""
    return dice_set.candidates(tokens)


def assignments(tokens: Sequence[DieToken], dice_set: DiceSet) -> list[tuple[int, ...]]:
    """Every one-to-one map token index -> die index consistent with the faces shown
    (DiceError, from the set's own check, when there is none)."""
    dice_set.check_shown(tokens)
    options = candidates(tokens, dice_set)
    # Place the most constrained tokens first so dead ends are found early.
    order = sorted(range(len(tokens)), key=lambda i: len(options[i]))
    found: list[tuple[int, ...]] = []
    chosen = [-1] * len(tokens)
    used: set[int] = set()

    def place(k: int) -> None:
        if len(found) >= MAX_ASSIGNMENTS:
            raise DiceError("too many ways to read these dice")
        if k == len(order):
            found.append(tuple(chosen))
            return
        i = order[k]
        for die in options[i]:
            if die not in used:
                used.add(die)
                chosen[i] = die
                place(k + 1)
                used.discard(die)

    place(0)
    return found
