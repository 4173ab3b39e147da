"""Shared checks for the rules tests: is an Evaluation's arrangement legal, and what is its rank."""

from __future__ import annotations

from typing import Sequence

from companion.dice import Face
from companion.rules import Evaluation
from rules_oracle import COLOR_ORDER, PHASE_GROUPS


def assert_legal(evaluation: Evaluation, faces: Sequence[Face], strict: bool = False) -> None:
    """The groups match the phase, use distinct dice, follow the rules, and add up to the score."""
    assert evaluation.complete and evaluation.score is not None
    wanted = PHASE_GROUPS[evaluation.phase]
    assert [(g.kind, len(g.dice)) for g in evaluation.groups] == list(wanted)
    used = [i for g in evaluation.groups for i in g.dice]
    assert len(used) == len(set(used)), "a die is used twice"
    assert all(0 <= i < len(faces) for i in used)
    for group in evaluation.groups:
        chosen = [faces[i] for i in group.dice]
        assert len(group.stands_for) == len(group.dice)
        for face, number in zip(chosen, group.stands_for):
            if face.value is not None:
                assert number == face.value, "a natural die stands for its own number"
        if strict:
            assert any(f.value is not None for f in chosen), "house rule: a natural in every group"
        if group.kind == "set":
            assert len(set(group.stands_for)) == 1 and 1 <= group.stands_for[0] <= 10
        elif group.kind == "run":
            low = min(group.stands_for)
            assert list(group.stands_for) == list(range(low, low + len(group.dice)))
            assert 1 <= low and low + len(group.dice) - 1 <= 10
        else:
            assert len({f.color for f in chosen}) == 1, "one colour"
            assert all(n is None for f, n in zip(chosen, group.stands_for) if f.value is None)
    assert evaluation.score == sum(faces[i].points for i in used)


def rank_of(evaluation: Evaluation, faces: Sequence[Face]) -> tuple:
    """The evaluation's place in the tie-break order used by tests.rules_oracle.oracle_rank."""
    wilds = sum(1 for g in evaluation.groups for i in g.dice if faces[i].value is None)
    first = sum(faces[i].points for i in evaluation.groups[0].dice)
    targets = []
    for group in evaluation.groups:
        if group.kind == "set":
            targets.append(group.stands_for[0])
        elif group.kind == "run":
            targets.append(min(group.stands_for))
        else:
            targets.append(-COLOR_ORDER.index(faces[group.dice[0]].color))
    return (evaluation.score, -wilds, first, tuple(targets))
