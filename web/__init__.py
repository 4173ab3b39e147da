"""The scorepad page, shipped as package data: `companion.web` (see companion/assets.py)."""
