"""One light for all dice: the ink colours of a photo's dice decided together.

The reader judges each crop alone, and a coloured light can make a red ink look like the
orange it learnt (or a green like blue). The photo as a whole still tells them apart: every die
is lit by the same light, so its red inks look alike, and unlike its orange inks. For each pair
of inks that look alike (red and orange, green and blue), the hues of the dice the reader puts
in that pair (companion/vision/inks.py) are split into two groups at their widest gap. When the
gap is clear (wider than MIN_GAP and than either group's own spread) and the reader itself puts
dice of each group in each colour, the lower-hue group is the pair's first colour (red, green)
and the other its second (orange, blue): a die the reader put in the other colour of its group
is moved to its group's colour and flagged for the player to check. Otherwise the photo gives
no clear evidence and the reader's probabilities stand. The decoder then applies the set's
constraint to the probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from companion.dice import Color
from companion.vision.decoder import color_index
from companion.vision.inks import Ink

# Each pair, first the ink of lower hue (in the opponent plane of inks.py), and a hue between them.
PAIRS = ((Color.RED, Color.ORANGE, 41.0), (Color.GREEN, Color.BLUE, 211.0))
MIN_GAP = 12.0  # degrees: the least gap between two groups of one photo's hues that tells two inks
SPREAD_FACTOR = 1.5  # ...and the gap must be this many times wider than either group's own spread
MIN_CHROMA = 0.3  # an ink less colourful than this is not measured well enough to count
MOVED_SHARE = 0.85  # a moved die's probability for its group's colour, within its pair
MIN_PAIR_MASS = 0.5  # the reader's probability for the pair that makes a die one of its dice


@dataclass(frozen=True, slots=True)
class JointColours:
    probs: np.ndarray  # (n, 4): the colour probabilities after the photo's evidence
    moved: np.ndarray  # (n,) bool: the photo moved this die to the other colour of its pair


def joint_colours(color_probs: np.ndarray, inks: list[Ink]) -> JointColours:
    """The photo's colour probabilities (n, 4), each pair's split decided for all dice at once."""
    probs = np.array(color_probs, dtype=np.float64, copy=True)
    moved = np.zeros(len(probs), dtype=bool)
    for first, second, middle in PAIRS:
        a, b = color_index(first), color_index(second)
        mass = probs[:, a] + probs[:, b]
        members = np.array([i for i, ink in enumerate(inks) if mass[i] >= MIN_PAIR_MASS and ink.chroma >= MIN_CHROMA
                            and ink.referenced == inks[0].referenced], dtype=np.int64)
        if len(members) < 3:
            continue
        hues = (np.array([inks[i].hue for i in members]) - middle + 180.0) % 360.0 - 180.0
        second_group = _clear_split(hues)
        if second_group is None:
            continue
        says_second = probs[members, b] > probs[members, a]
        # the reader must see each group's colour in it: the photo only says which dice look alike
        if not (says_second[second_group].any() and (~says_second[~second_group]).any()):
            continue
        for k in np.nonzero(says_second != second_group)[0]:
            i = members[k]
            share = MOVED_SHARE if second_group[k] else 1.0 - MOVED_SHARE
            probs[i, a], probs[i, b] = mass[i] * (1.0 - share), mass[i] * share
            moved[i] = True
    return JointColours(probs, moved)


def _clear_split(hues: np.ndarray) -> np.ndarray | None:
    """Which hues lie above the widest gap between them, when that gap is clear (else None)."""
    order = np.argsort(hues)
    ordered = hues[order]
    gaps = np.diff(ordered)
    k = int(np.argmax(gaps))
    low, high = ordered[: k + 1], ordered[k + 1:]
    spread = max(float(low[-1] - low[0]), float(high[-1] - high[0]))
    if gaps[k] < max(MIN_GAP, SPREAD_FACTOR * spread):
        return None
    upper = np.zeros(len(hues), dtype=bool)
    upper[order[k + 1:]] = True
    return upper
