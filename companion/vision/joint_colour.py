"""One light for all dice: the ink colours of a photo's dice decided together.

The reader judges each crop alone, and a coloured light, or a set whose inks were drawn apart from
those it learnt, can make a red ink look like the orange it learnt (or a blue like green). The
photo as a whole still tells them apart: every die of a set carries the same few inks, lit by the
same light, so within one photo its red inks look alike, and unlike its orange inks. For each
pair of inks that look alike (red and orange, green and blue), the dice the reader puts in that
pair are labelled jointly: each way of splitting them between the two colours is weighed by the
reader's probabilities and by how well the measured inks (companion/vision/inks.py) fit two inks
of the photo. A die's colour probabilities become its share of the weighed splits; a die whose
colour changes is flagged for the player to check (pipeline.py). The decoder then applies the
set's layout (which faces exist in which ink) to the probabilities.

On light bodies under the training look's light (split_inks) each ink is measured against the
die's own body, the photo's white reference, by hue and by darkness, and the photo's two inks may
lie anywhere: no usual hue, only their order within the photo (red below orange in hue and
darker). Under a light beyond the training look's, and on dark bodies (no white reference), the
inks are told by hue alone, each near its colour's usual hue (joint_colours).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from companion.dice import Color
from companion.vision.decoder import color_index
from companion.vision.inks import Ink

# Each pair, the ink of lower hue first; the hues (unwrapped, degrees) its two inks may take;
# and the least gap between them: two inks of one photo as alike as this are one ink.
PAIRS = ((Color.RED, Color.ORANGE, (-40.0, 130.0), 25), (Color.GREEN, Color.BLUE, (100.0, 340.0), 30))
# Where an ink's hue (inks.measure_inks, degrees) usually lies, and how far one photo's ink may
# be from it: the medians of the dice on light bodies of data/calib and its stress sets.
USUAL_HUE = {Color.RED: (25.0, 12.0), Color.ORANGE: (60.0, 12.0), Color.GREEN: (170.0, 20.0), Color.BLUE: (257.0, 15.0)}
# How far a die's hue lies from its photo's ink: within one photo the same ink is measured
# HUE_SPREAD degrees apart (median 1.3, a tenth beyond 8.3; chosen on the calibration sets),
# more on a less colourful face (its chroma under FAINT of the photo's median), and now and
# then anywhere (OUTLIER: a glint, a face cut short).
HUE_SPREAD = 8.0
FAINT = 0.5
OUTLIER = 0.03
# Under a light beyond the training look's (a cast over UNUSUAL_CAST, pipeline.py) the same ink
# is measured farther apart within one photo: the blue channel holds a fraction of the red's
# light, and its noise and JPEG loss move the hue. On the first halves of the calib sets, a tenth
# of a photo's same-ink dice lie beyond 9-10.5 degrees of their mean there (green 20), against
# 5-6 (green 10) under the usual light: UNUSUAL_HUE_SPREAD is HUE_SPREAD times that ratio, about
# 1.75 (12-16 read alike). With it the inks do not outweigh a colour head that reads a die apart
# from the photo's others: 2 swaps where 8 degrees make 3 on the first half of
# data/more/stress_warm_calib, 28 where 8 make 35 on 600 more warm photos (`training.synth --split
# calib --light warm --count 600 --seed 8351`), the same swaps on the other calib sets' first halves.
UNUSUAL_HUE_SPREAD = 14.0
MIN_CHROMA = 0.15  # of the photo's median: an ink this faint is not measured at all
MIN_PAIR_MASS = 0.5  # the reader's probability for the pair that makes a die one of its dice
INK_WEIGHT = 0.5  # the inks' evidence against the reader's (log-likelihoods), chosen on the calibration sets
DISPUTE_SURE = 0.9  # chosen on the calibration sets
# On dark bodies (no white reference) an ink is measured raw, its light's colour kept: under a
# warm lamp a photo's reds measure 30-36 degrees and its oranges 40-53 (a median gap of 11,
# a tenth under 5.4), far closer than PAIRS' gap, but colourful against the black and so
# measured alike within the photo (a half of a red or orange die within 0.3-0.7 degrees of its
# ink's mean, a tenth beyond 1.3-4.8, at a median chroma of 0.45-0.5). There a red or orange
# die's hue lies from its photo's ink by a hue noise of DARK_HUE_FLOOR degrees and
# DARK_HUE_NOISE over its own chroma (the opponent-plane noise across the hue, in degrees per
# unit of chroma), on a grid of DARK_GRID_STEP degrees, the two inks at least DARK_GAP apart.
# Chosen on the first halves of the calibration sets (swaps there 21 -> 20, the first half of
# data/stress_warm_calib's dark photos 2 -> 1) and checked on the whole sets: 47 -> 42 swaps in
# all, data/stress_warm_calib 8 -> 7, data/more/stress_warm_calib 10 -> 7,
# data/more/stress_dark_calib 3 -> 2, the others' unchanged. Green and blue keep the light
# bodies' model: a blue ink on black under a warm lamp is too faint to be measured alike.
DARK_PAIRS = (Color.RED,)
DARK_HUE_FLOOR = 1.0
DARK_HUE_NOISE = 0.2
DARK_GRID_STEP = 0.25
DARK_GAP = 3.0


@dataclass(frozen=True, slots=True)
class JointColours:
    probs: np.ndarray  # (n, 4): the colour probabilities after the photo's evidence
    moved: np.ndarray  # (n,) bool: the photo moved this die to the other colour of its pair
    # (n,) bool: the die's ink, among the photo's others of both colours of its pair, says the
    # other colour (at DISPUTE_SURE at least), and the reader is too sure to be moved
    disputed: np.ndarray


@dataclass(frozen=True, slots=True)
class InkLevels:
    """The levels of the photo's two-ink split (split_inks), chosen on the choosing sets."""

    ink_hue_spread: float  # degrees: how far apart one ink's dice are measured in one photo (hue)
    ink_darkness_spread: float  # degrees: ... and darkness (Ink.darkness)
    ink_weight: float  # the inks' evidence against the reader's (log-likelihoods)
    ink_range: tuple[float, float]  # degrees of hue and of darkness a photo's ink may take: the Occam
    # cost of a second ink (a flat prior over this range for each ink's unknown mean)
    ink_noise: float  # the measurement's noise in the colour plane (chroma units, see _ink_points)
    ink_usual_spread: float  # degrees: how far a set's ink may lie from its colour's usual hue (a weak prior)
    ink_order: float  # degrees: how surely a pair's inks keep their order (ORDER) within one photo
    ink_dispute_sure: float  # the inks alone say the other colour at least this surely: a dispute


# Within one photo a set's two inks of a pair keep their order in hue and darkness, wherever the
# set's inks were drawn: red below orange in hue and darker, green below blue in hue and darker
# (per unit of colour: Ink.darkness). On data/table/choose's photos showing both inks of a pair, red
# lies below orange in hue in 130 of 131 and is darker in 126; green below blue in 135 of 135 and
# darker in 123 (hue gaps: median 39 and 91 degrees, darkness 12 and 11).
ORDER = {Color.RED: (1.0, 1.0), Color.GREEN: (1.0, 1.0)}
# ... but not always: the two gaps summed fail in 3 of data/table/far_choose's 65 photos showing
# red and orange (sets whose inks were drawn far from the usual) and 1 of warm_choose's 67, in
# none of the tables' 300 showing green and blue
ORDER_LAPSE = 0.02
OUTLIER_SIGMAS = 3.0  # a die this many spreads from its ink is a glint or a face cut short


def split_inks(color_probs: np.ndarray, inks: list[Ink], levels: InkLevels) -> JointColours:
    """The photo's colour probabilities (n, 4), each pair's dice split between its two inks at
    once, the photo's own inks for a reference: each split is weighed by the reader's
    probabilities and by how well the dice's inks (hue and darkness against their body, as
    measured by inks.measure_inks) fit one or two inks of this photo, each ink's hue and darkness
    unknown (a flat prior over `levels.ink_range`, only a weak one about the usual hue), the
    pair's order kept (ORDER).
    Used on light bodies, whose inks are measured against the body's own light."""
    probs = np.array(color_probs, dtype=np.float64, copy=True)
    moved = np.zeros(len(probs), dtype=bool)
    disputed = np.zeros(len(probs), dtype=bool)
    chroma = np.array([ink.chroma for ink in inks])
    scale = float(np.median(chroma)) if len(chroma) else 0.0
    if scale <= 0.0:
        return JointColours(probs, moved, disputed)
    faint = chroma / scale
    for first, second, _, _ in PAIRS:
        a, b = color_index(first), color_index(second)
        mass = probs[:, a] + probs[:, b]
        # an ink measured lighter than its body is its body's misreading (a bold numeral taken for
        # the body, a glint), not an ink
        darker = np.array([ink.darkness < 0.0 for ink in inks], dtype=bool)
        # and an ink measured more vaguely than the flat prior's own spread (its range over the
        # square root of 12) says nothing of which ink it is
        _, spread = _ink_points(inks, levels)
        told = np.all(spread < np.array(levels.ink_range) / np.sqrt(12.0), axis=1)
        members = np.flatnonzero((mass >= MIN_PAIR_MASS) & (faint >= MIN_CHROMA) & darker & told)
        if len(members) < 2:
            continue
        points, spread = _ink_points([inks[i] for i in members], levels)
        first_prob = np.clip(probs[members, a] / mass[members], 1e-9, 1.0 - 1e-9)
        splits = ((np.arange(1 << len(members))[:, None] >> np.arange(len(members))) & 1).astype(np.float64)
        ink = levels.ink_weight * _two_inks(splits, points, spread, levels, (first, second))
        reader = splits @ np.log(1.0 - first_prob) + (1.0 - splits) @ np.log(first_prob)
        share, ink_share = _share(ink + reader, splits), _share(ink, splits)
        says_second = probs[members, b] > probs[members, a]
        two = bool((ink_share > 0.5).any() and (ink_share <= 0.5).any())
        for k, i in enumerate(members):
            probs[i, a], probs[i, b] = mass[i] * (1.0 - share[k]), mass[i] * share[k]
            moved[i] = says_second[k] != (share[k] > 0.5)
            sure = levels.ink_dispute_sure
            ink_says = ink_share[k] >= sure if share[k] <= 0.5 else ink_share[k] <= 1.0 - sure
            disputed[i] = two and bool(ink_says)
    return JointColours(probs, moved, disputed)


def _ink_points(inks: list[Ink], levels: InkLevels) -> tuple[np.ndarray, np.ndarray]:
    """The dice's inks as points (hue unwrapped about their circular mean, darkness), degrees, and
    per die and axis how far one ink's dice lie apart: a spread of the ink itself and the
    measurement's noise, which is about even across the colour plane, so that a faint ink's angles
    move more (ink_noise over its chroma, in radians)."""
    hue = np.radians([ink.hue for ink in inks])
    centre = np.arctan2(np.sin(hue).mean(), np.cos(hue).mean())
    unwrapped = np.degrees(centre) + _wrap(np.degrees(hue - centre))
    points = np.stack([unwrapped, [ink.darkness for ink in inks]], axis=1)
    noise = np.degrees(levels.ink_noise / np.maximum([ink.chroma for ink in inks], 1e-3))[:, None]
    own = np.array([levels.ink_hue_spread, levels.ink_darkness_spread])[None, :]
    return points, np.hypot(own, noise)


def _two_inks(splits: np.ndarray, points: np.ndarray, spread: np.ndarray, levels: InkLevels,
              pair: tuple[Color, Color]) -> np.ndarray:
    """Per split (rows: 1 where a die takes the pair's second colour), the log-likelihood of the
    dice's ink points under one ink per colour used, each ink's mean unknown (integrated over a
    flat prior on `levels.ink_range`, weighed by a weak prior on its hue: within
    `levels.ink_usual_spread` of its colour's usual one), and the two inks' order kept."""
    w = 1.0 / spread ** 2  # (m, 2)
    total = np.zeros(len(splits))
    means = []
    for color, group in zip(pair, (1.0 - splits, splits)):
        weight = group @ w  # (K, 2)
        present = weight[:, 0] > 0
        safe = np.where(weight > 0, weight, 1.0)
        mean = (group @ (w * points)) / safe
        # the ink's mean again without the dice beyond OUTLIER_SIGMAS of the first (a glint, a face
        # cut short): one far off costs no more than that, and does not pull the others' ink
        near = group[:, :, None] * (w[None] * (points[None] - mean[:, None]) ** 2 < OUTLIER_SIGMAS ** 2)  # (K, m, 2)
        kept = np.einsum("kmd,md->kd", near, w)
        mean = np.where(kept > 0, np.einsum("kmd,md->kd", near, w * points) / np.where(kept > 0, kept, 1.0), mean)
        far = np.minimum(w[None] * (points[None] - mean[:, None]) ** 2, OUTLIER_SIGMAS ** 2)  # (K, m, 2)
        squares = np.einsum("km,kmd->kd", group, far)
        # the Gaussian integral over the ink's unknown mean, against the flat prior's range
        fit = -0.5 * squares + 0.5 * np.log(2.0 * np.pi / safe) - np.log(np.array(levels.ink_range))[None, :]
        usual = -0.5 * (_wrap(mean[:, 0] - USUAL_HUE[color][0]) / levels.ink_usual_spread) ** 2
        total += np.where(present, fit.sum(axis=1) + usual, 0.0)
        means.append((mean, present))
    (mean_a, has_a), (mean_b, has_b) = means
    # the second colour's ink lies on ORDER's side of the first's: a logistic in units of `order`
    lead = ((mean_b - mean_a) * np.array(ORDER[pair[0]])[None, :]).sum(axis=1) / levels.ink_order
    kept = ORDER_LAPSE + (1.0 - 2.0 * ORDER_LAPSE) / (1.0 + np.exp(-np.clip(lead, -50.0, 50.0)))
    return total + np.where(has_a & has_b, np.log(kept), 0.0)


def joint_colours(color_probs: np.ndarray, inks: list[Ink], gaps: tuple[int, int] | None = None,
                  spread: float = HUE_SPREAD, dark: bool = False) -> JointColours:
    """The photo's colour probabilities (n, 4), each pair's split decided for all its dice at
    once (`gaps`: per pair, the least gap between its two inks; None: PAIRS'; `spread`: how far
    one ink's dice are measured apart in the photo, HUE_SPREAD or, under a light beyond the
    training look's, UNUSUAL_HUE_SPREAD; `dark`: the inks were measured on dark bodies, no
    white reference, and the pairs of DARK_PAIRS are told by their hue noise, see DARK_HUE_NOISE)."""
    probs = np.array(color_probs, dtype=np.float64, copy=True)
    moved = np.zeros(len(probs), dtype=bool)
    disputed = np.zeros(len(probs), dtype=bool)
    chroma = np.array([ink.chroma for ink in inks])
    scale = float(np.median(chroma)) if len(chroma) else 0.0
    if scale <= 0.0:
        return JointColours(probs, moved, disputed)
    faint = chroma / scale
    for pair, (first, second, hues, gap) in enumerate(PAIRS):
        raw = dark and first in DARK_PAIRS
        step = DARK_GRID_STEP if raw else 1.0
        gap = round((DARK_GAP if raw else gap if gaps is None else gaps[pair]) / step)  # in grid steps
        a, b = color_index(first), color_index(second)
        grid = np.arange(hues[0], hues[1], step)  # the photo's ink hue
        mass = probs[:, a] + probs[:, b]
        members = np.flatnonzero((mass >= MIN_PAIR_MASS) & (faint >= MIN_CHROMA))
        if len(members) < 2:
            continue
        if raw:  # a likelihood per degree, as on the one-degree grid
            fit = np.array([_raw_hue_fit(inks[i].hue, chroma[i], grid) + np.log(step) for i in members])
        else:
            fit = np.array([_hue_fit(inks[i].hue, faint[i], grid, spread) for i in members])  # (m, grid)
        first_prob = probs[members, a] / mass[members]
        share, ink_share = _second_shares(fit, first_prob, grid, (first, second, gap))
        says_second = probs[members, b] > probs[members, a]
        # the inks tell which dice look alike, the reader which group is which colour: on a dark
        # body (no white reference) the inks' hues may lie anywhere, their order included
        if np.sum((ink_share > 0.5) == says_second) * 2 < len(members):
            ink_share = 1.0 - ink_share
        # only a photo whose inks show both colours can dispute a colour (one ink alone could be either)
        two_inks = bool((ink_share > 0.5).any() and (ink_share <= 0.5).any())
        for k, i in enumerate(members):
            probs[i, a], probs[i, b] = mass[i] * (1.0 - share[k]), mass[i] * share[k]
            moved[i] = says_second[k] != (share[k] > 0.5)
            ink_says = ink_share[k] >= DISPUTE_SURE if share[k] <= 0.5 else ink_share[k] <= 1.0 - DISPUTE_SURE
            disputed[i] = two_inks and bool(ink_says)
    return JointColours(probs, moved, disputed)


def _second_shares(fit: np.ndarray, first_prob: np.ndarray, grid: np.ndarray,
                   pair: tuple[Color, Color, int]) -> tuple[np.ndarray, np.ndarray]:
    """Per die, the probability of the pair's second colour over every split of the dice
    between the two colours (2^m of them: at most 1,024 for the set's ten dice), weighed by
    the inks and the reader; and what the inks alone say."""
    first, second, gap = pair
    m = len(first_prob)
    splits = ((np.arange(1 << m)[:, None] >> np.arange(m)) & 1).astype(np.float64)  # 1: second colour
    inks = INK_WEIGHT * _split_fit(_group_fit(1.0 - splits, fit, grid, first), _group_fit(splits, fit, grid, second), gap)
    p = np.clip(first_prob, 1e-9, 1.0 - 1e-9)
    reader = splits @ np.log(1.0 - p) + (1.0 - splits) @ np.log(p)
    return _share(inks + reader, splits), _share(inks, splits)


def _share(log_weight: np.ndarray, splits: np.ndarray) -> np.ndarray:
    """Per die, its share of the second colour over the splits, each weighed by exp(log_weight)."""
    weight = np.exp(log_weight - log_weight.max())
    return (weight @ splits) / weight.sum()


def _group_fit(members: np.ndarray, fit: np.ndarray, grid: np.ndarray, color: Color) -> np.ndarray:
    """Per split and hue on the grid, the log-likelihood of the split's dice of `color` (rows
    of `members`) showing one ink of that hue, weighed by how usual the hue is for the colour."""
    usual, spread = USUAL_HUE[color]
    prior = -0.5 * (_wrap(grid - usual) / spread) ** 2
    return members @ fit + (prior - _logsumexp(prior))[None, :]


def _split_fit(first: np.ndarray, second: np.ndarray, gap: int) -> np.ndarray:
    """Per split, the log-likelihood of its two groups' inks over every pair of hues at least
    `gap` grid steps apart, the first's below the second's."""
    # the second's likelihood summed over the hues from each grid step up
    above = np.logaddexp.accumulate(second[:, ::-1], axis=1)[:, ::-1]
    return _logsumexp(first[:, :-gap] + above[:, gap:], axis=1)


def _logsumexp(x: np.ndarray, axis: int | None = None) -> np.ndarray:
    top = np.max(x, axis=axis, keepdims=True)
    out = top + np.log(np.exp(x - top).sum(axis=axis, keepdims=True))
    return out.squeeze() if axis is None else out.squeeze(axis)


def _hue_fit(hue: float, faint: float, grid: np.ndarray, spread: float = HUE_SPREAD) -> np.ndarray:
    """Log-likelihood of a die's measured hue for each photo ink hue on the grid, one ink's dice
    measured `spread` degrees apart (more on a faint face)."""
    spread = spread * max(1.0, FAINT / max(faint, 1e-3))
    outlier = OUTLIER if faint >= FAINT else min(0.5, 3.0 * OUTLIER * FAINT / max(faint, 1e-3))
    near = np.exp(-0.5 * (_wrap(hue - grid) / spread) ** 2) / (np.sqrt(2.0 * np.pi) * spread)
    return np.log((1.0 - outlier) * near + outlier / 360.0)


def _raw_hue_fit(hue: float, chroma: float, grid: np.ndarray) -> np.ndarray:
    """As _hue_fit for an ink measured on a dark body: its hue noise set by its own chroma
    (DARK_HUE_FLOOR, DARK_HUE_NOISE)."""
    spread = float(np.hypot(DARK_HUE_FLOOR, DARK_HUE_NOISE / max(chroma, 1e-3)))
    near = np.exp(-0.5 * (_wrap(hue - grid) / spread) ** 2) / (np.sqrt(2.0 * np.pi) * spread)
    return np.log((1.0 - OUTLIER) * near + OUTLIER / 360.0)


def _wrap(degrees: np.ndarray | float) -> np.ndarray:
    return (np.asarray(degrees) + 180.0) % 360.0 - 180.0
