"""The game state: turn order, last chances, bonuses and the scorepad (pure, no I/O).

>>> from companion.dice import parse_faces
>>> game = Game.new(["Ann", "Bob"])
>>> game.record("Ann", parse_faces("7b 7r 7g 3o 3r Wb".split())).score
27
>>> game.next_player, game.current_phase("Ann"), game.scorepad().players[0].total
('Bob', 2, 27)
"""

from companion.game.game import Game, house_rules_from_json
from companion.game.model import FIVE_PHASE_BONUS_PHASE, MAX_NAME_LENGTH, Attempt, GameError, Mode, Stage
from companion.game.names import player_names
from companion.game.scorepad import PlayerScore, Scorepad

__all__ = ["FIVE_PHASE_BONUS_PHASE", "MAX_NAME_LENGTH", "Game", "GameError", "Mode", "Stage", "Attempt",
           "Scorepad", "PlayerScore", "house_rules_from_json", "player_names"]
