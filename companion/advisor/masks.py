"""Keep masks (bit i = keep token i) and the figures of every mask for one decision."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class KeepFigures:
    """For every keep mask (bit i = keep token i): both objectives' (primary, secondary)."""

    complete_first: tuple[np.ndarray, np.ndarray]  # (p_complete, expected score)
    score_first: tuple[np.ndarray, np.ndarray]  # (expected score, p_complete)
    score_upper: np.ndarray | None = None  # Phase 8, 2 rolls left: an upper bound on the score
    # Phase 8, 2 rolls left: make a mask's scores exact for some plans (when small enough).
    refine: "Callable[[int, tuple[bool, ...]], None] | None" = None
    refined_chance_plans: set[int] | None = None  # masks whose chance-plan score is exact


@lru_cache(maxsize=16)
def mask_bits(n: int) -> np.ndarray:
    """bits[m, i] = 1 when mask m keeps token i (read-only: shared between calls)."""
    bits = (np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1
    bits.setflags(write=False)
    return bits
