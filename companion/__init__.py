"""Phase 10 Dice Companion: read the dice from a photo, score the phase, keep the scorepad."""

__version__ = "0.1.0"
