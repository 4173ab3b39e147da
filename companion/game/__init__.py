"""The game state: turn order, last chances, bonuses and the scorepad (pure, no I/O)."""

from companion.game.game import Game
from companion.game.model import MAX_NAME_LENGTH, Attempt, GameError, Mode, Stage
from companion.game.scorepad import PlayerScore, Scorepad

__all__ = ["MAX_NAME_LENGTH", "Game", "GameError", "Mode", "Stage", "Attempt", "Scorepad", "PlayerScore"]
