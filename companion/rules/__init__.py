"""The rules of Phase 10 Dice: phases as data and the exact best-arrangement evaluator."""

from companion.rules.phases import PHASES, Phase, Requirement, phase
from companion.rules.evaluation import Evaluation, Group, HouseRules

__all__ = ["PHASES", "Phase", "Requirement", "phase", "Evaluation", "Group", "HouseRules", "evaluate"]


def __getattr__(name: str):
    # The evaluator is imported lazily so the data types stay importable on their own.
    if name == "evaluate":
        from companion.rules.evaluator import evaluate

        return evaluate
    raise AttributeError(name)
