"""The roll advisor: which dice to keep, with exact odds (pure: no I/O).

    from companion.advisor import advise
    advise(1, dice, rolls_left=2).to_json()
"""

from companion.advisor.advice import Advice, KeepOption, advise, advise_keep, warm_up
from companion.advisor.fresh import FreshTurn, fresh_turn
from companion.rules.phases import MAX_ROLLS_LEFT

__all__ = ["MAX_ROLLS_LEFT", "Advice", "FreshTurn", "KeepOption", "advise", "advise_keep", "fresh_turn", "warm_up"]
