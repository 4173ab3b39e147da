"""The rules of Phase 10 Dice: phases as data and the exact best-arrangement evaluator."""

from companion.rules.phases import PHASES, Phase, Requirement, phase
from companion.rules.evaluation import Evaluation, Group, HouseRules

__all__ = ["PHASES", "Phase", "Requirement", "phase", "Evaluation", "Group", "HouseRules", "evaluate", "best_score"]


def __getattr__(name: str):
    # The evaluator is imported lazily so the data types stay importable on their own.
    if name in ("evaluate", "best_score"):
        from companion.rules import evaluator

        return getattr(evaluator, name)
    raise AttributeError(name)
