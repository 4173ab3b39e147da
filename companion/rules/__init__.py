"""The rules of Phase 10 Dice: phases as data and the exact best-arrangement evaluator.

>>> from companion.dice import parse_faces
>>> phase(8).name
'7 of one colour'
>>> evaluate(1, parse_faces("8r 8b 8g 10o Wr Wb".split())).score
34
>>> best_score(4, parse_faces("1r 2r 3r 4r 5r 6r".split())) is None  # a run of 7 needs 7 dice
True
"""

from companion.rules.evaluation import Evaluation, Group, HouseRules
from companion.rules.evaluator import best_score, evaluate
from companion.rules.phases import PHASES, Phase, Requirement, phase

__all__ = ["PHASES", "Phase", "Requirement", "phase", "Evaluation", "Group", "HouseRules", "evaluate", "best_score"]
