"""The game state: turn order, last chances, bonuses and the scorepad (pure, no I/O)."""

from companion.game.game import Game, house_rules_from_json
from companion.game.model import Attempt, GameError, Mode, Stage
from companion.game.scorepad import PlayerScore, Scorepad

__all__ = ["Game", "GameError", "Mode", "Stage", "Attempt", "Scorepad", "PlayerScore", "house_rules_from_json"]
