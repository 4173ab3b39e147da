"""Decoding with the physical set: readings are assigned one-to-one to the 10 dice.

The reader gives, per detected top face, probabilities over values (1..10, W) and ink
colours. Each die of the set carries six known faces, so a detection can only be one of
60 (die, face) options, and two detections cannot be the same die. The decoder

- picks the most probable consistent reading: the assignment of detections to distinct
  dice (and a face of each) that maximises the product of the face probabilities,
  found exactly by dynamic programming over the 2^10 subsets of used dice;
- computes, by the same recursion with sums instead of maxima, the exact posterior of
  every (detection, die) pair over all consistent assignments, and from it the
  confidence of each decoded face and of its die.

Pure numpy: no I/O, no model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from companion.dice import COLORS, Color, DiceSet, Face, standard_set

# The reader's value classes, in output order: 1..10, then W (None).
VALUE_CLASSES: tuple[int | None, ...] = tuple(range(1, 11)) + (None,)
COLOR_CLASSES = COLORS  # red, orange, green, blue
_TINY = 1e-12


def value_index(value: int | None) -> int:
    return VALUE_CLASSES.index(value)


def color_index(color: Color) -> int:
    return COLOR_CLASSES.index(color)


@dataclass(frozen=True, slots=True)
class DecodeSettings:
    """The decoder's levels (models/tuning.json: die_min_posterior)."""

    die_min_posterior: float  # name the die only when it is this sure (else null)


@dataclass(frozen=True, slots=True)
class DecodedDie:
    """The decoded reading of one detection (in the order the detections were given)."""

    index: int  # which detection
    face: Face
    confidence: float  # posterior of the decoded face over all consistent assignments
    die: str | None  # the physical die, when sure enough
    die_posterior: float  # posterior of the most likely die for this detection
    assigned: str  # the die of the most probable consistent assignment (reported only when sure)


@dataclass(frozen=True, slots=True)
class _Layout:
    ids: tuple[str, ...]
    value_idx: np.ndarray  # (dice, 6) value class of each face
    color_idx: np.ndarray  # (dice, 6) colour class of each face
    faces: tuple[tuple[Face, ...], ...]


@lru_cache(maxsize=8)
def _layout(dice_set: DiceSet) -> _Layout:
    ids = tuple(d.id for d in dice_set.dice)
    faces = tuple(d.faces for d in dice_set.dice)
    v = np.array([[value_index(f.value) for f in fs] for fs in faces], dtype=np.int64)
    c = np.array([[color_index(f.color) for f in fs] for fs in faces], dtype=np.int64)
    return _Layout(ids, v, c, faces)


def face_likelihoods(value_probs: np.ndarray, color_probs: np.ndarray, dice_set: DiceSet) -> np.ndarray:
    """(n, dice, 6): how well each detection fits each face of each die (value x colour)."""
    lay = _layout(dice_set)
    pv = np.asarray(value_probs, dtype=np.float64)[:, lay.value_idx]
    pc = np.asarray(color_probs, dtype=np.float64)[:, lay.color_idx]
    return np.maximum(pv * pc, _TINY)


@lru_cache(maxsize=4)
def _transitions(n_dice: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Per die d: the subsets without d, and the same subsets with d added."""
    masks = np.arange(1 << n_dice)
    out = []
    for d in range(n_dice):
        src = masks[(masks >> d) & 1 == 0]
        out.append((src, src | (1 << d)))
    return tuple(out)


@lru_cache(maxsize=4)
def _neighbours(n_dice: int) -> tuple[np.ndarray, np.ndarray]:
    """(dice, 2^n) tables, per die d and subset: the subset without d where d is in it, and
    the subset with d added where it is not; elsewhere 2^n, the index of a zero (see _forward)."""
    masks = np.arange(1 << n_dice)
    without = np.full((n_dice, 1 << n_dice), 1 << n_dice)
    with_ = np.full((n_dice, 1 << n_dice), 1 << n_dice)
    for d in range(n_dice):
        has = (masks >> d) & 1 == 1
        without[d, has] = masks[has] ^ (1 << d)
        with_[d, ~has] = masks[~has] | (1 << d)
    return without, with_


def _forward(weights: np.ndarray, n_dice: int, combine: np.ufunc) -> np.ndarray:
    """fwd[i, mask]: combined weight of assigning detections 0..i-1 to exactly the dice in mask.

    Linear space is safe: each row of weights is scaled to a maximum of 1 and floored at 1e-12,
    so a product over at most 10 detections stays far above the float64 underflow. Each step
    takes every die at once: a die outside a subset adds a zero (an extra last column), which
    leaves a sum or a maximum of non-negative weights exactly as it was, and the dice are
    combined in their order, as one at a time would.
    """
    n, size = weights.shape[0], 1 << n_dice
    without, _ = _neighbours(n_dice)
    fwd = np.zeros((n + 1, size + 1))
    fwd[0, 0] = 1.0
    for i in range(n):
        fwd[i + 1, :size] = combine.reduce(fwd[i, without] * weights[i, :, None], axis=0)
    return fwd[:, :size]


def _backward(weights: np.ndarray, n_dice: int) -> np.ndarray:
    """bwd[i, mask]: summed weight of assigning detections i..n-1 to dice outside mask (each
    step over every die at once, as _forward)."""
    n, size = weights.shape[0], 1 << n_dice
    _, with_ = _neighbours(n_dice)
    bwd = np.zeros((n + 1, size + 1))
    bwd[n, :size] = 1.0
    for i in range(n - 1, -1, -1):
        bwd[i, :size] = np.add.reduce(weights[i, :, None] * bwd[i + 1, with_], axis=0)
    return bwd[:, :size]


def _map_assignment(best: np.ndarray, n_dice: int) -> list[int]:
    """The assignment of detections to distinct dice with the largest product (Viterbi)."""
    fwd = _forward(best, n_dice, np.maximum)
    n = best.shape[0]
    mask = int(np.argmax(fwd[n]))
    dice = [0] * n
    for i in range(n - 1, -1, -1):
        scores = [fwd[i, mask ^ (1 << d)] * best[i, d] if mask >> d & 1 else -1.0 for d in range(n_dice)]
        dice[i] = int(np.argmax(scores))
        mask ^= 1 << dice[i]
    return dice


def _scaled(weights: np.ndarray) -> np.ndarray:
    return np.maximum(weights / weights.max(axis=1, keepdims=True), _TINY)


def die_posteriors(like: np.ndarray) -> np.ndarray:
    """(n, dice): P(detection i is die d) over all one-to-one assignments, exactly."""
    n, n_dice, _ = like.shape
    weights = _scaled(like.sum(axis=2))
    fwd = _forward(weights, n_dice, np.add)
    bwd = _backward(weights, n_dice)
    z = fwd[n].sum()
    post = np.zeros((n, n_dice))
    for d, (src, dst) in enumerate(_transitions(n_dice)):
        post[:, d] = (fwd[:n, src] * bwd[1:, dst]).sum(axis=1) * weights[:, d] / z
    return post


def decode(
    value_probs: np.ndarray,
    color_probs: np.ndarray,
    dice_set: DiceSet | None,
    settings: DecodeSettings,
) -> list[DecodedDie]:
    """Decode n <= 10 detections (rows of the probability arrays) into consistent dice."""
    dice_set = dice_set or standard_set()
    value_probs = np.asarray(value_probs, dtype=np.float64).reshape(-1, len(VALUE_CLASSES))
    color_probs = np.asarray(color_probs, dtype=np.float64).reshape(-1, len(COLOR_CLASSES))
    n = value_probs.shape[0]
    if n == 0:
        return []
    lay = _layout(dice_set)
    n_dice = len(lay.ids)
    if n > n_dice:
        raise ValueError(f"{n} detections cannot be assigned to a set of {n_dice} dice")
    like = face_likelihoods(value_probs, color_probs, dice_set)
    assigned = _map_assignment(_scaled(like.max(axis=2)), n_dice)
    post = die_posteriors(like)
    # P(face f of die d | detection i is die d), per detection
    face_given_die = like / like.sum(axis=2, keepdims=True)
    share = post[:, :, None] * face_given_die  # (n, dice, 6): P(detection i shows face k of die d)
    out = []
    for i, d in enumerate(assigned):
        k = int(np.argmax(like[i, d]))
        face = lay.faces[d][k]
        # the decoded face may sit on several dice: add up their shares
        same = (lay.value_idx == lay.value_idx[d, k]) & (lay.color_idx == lay.color_idx[d, k])
        conf = float(share[i][same].sum())
        best_die = int(np.argmax(post[i]))
        die_p = float(post[i, best_die])
        die_id = lay.ids[d] if best_die == d and die_p >= settings.die_min_posterior else None
        conf = float(min(1.0, max(0.0, conf)))
        out.append(DecodedDie(i, face, conf, die_id, die_p, lay.ids[d]))
    return out
