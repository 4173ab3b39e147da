"""The roll advisor: which dice to keep, with exact odds (pure: no I/O).

>>> from companion.dice import parse_tokens
>>> dice = parse_tokens("1b 2b 3r Wr 5r 6r 7r 8r 9r 10g".split())
>>> advise(1, dice, rolls_left=2).best.keep   # keep the W and the 10, reroll the rest
(3, 9)
>>> advise(1, dice, rolls_left=0).best.p_complete   # no roll left: the dice as they are
0.0
"""

from companion.advisor.advice import Advice, KeepOption, advise, advise_keep, warm_up
from companion.advisor.fresh import FreshTurn, fresh_turn
from companion.rules.phases import MAX_ROLLS_LEFT

__all__ = ["MAX_ROLLS_LEFT", "Advice", "FreshTurn", "KeepOption", "advise", "advise_keep", "fresh_turn", "warm_up"]
