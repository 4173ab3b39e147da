"""One die per cube: which boxes are a cube's side face rather than a die's top face.

Seen from well off vertical, a cube's side face can look enough like a top face for the
detector to box it, next to the real top face (the photo then reads one die twice) or alone
when the real top face was missed (a wrong die, read at full confidence). A side face's
centre lies about half a face from its top face's centre plus half its own, foreshortened,
height; two dice standing apart are usually a face's size apart. From distances alone this
cannot be told from two dice touching at a strong tilt (seen from 35 degrees off vertical,
the centres of two touching dice come as close, in box sizes, as a top and a side face).

What else tells them apart is what the photo's top faces share: they all lie in the table
plane, so they share one perspective (box size and shape change smoothly across the photo)
and one light (every top face has the same normal, so a die body's top looks alike on every
die, while a side face is lit otherwise), and a cube shows its side faces toward the camera,
the way the photo's faces grow. `box_features` measures, for each box, how it departs from
the photo's other boxes in size, shape and shading, how close and how much surer its nearest
neighbour is, how dark the ground between them is (a gap between two dice, none between a
top face and its own side), and whether it lies toward the camera from that neighbour. A logistic regression (`CubeModel`, models/cubes.json,
trained by `python -m training.cubes` on generated photos whose every cube outline is
labelled) turns them into the probability that the box is a side face.

A box that is probably a side face (at least `drop` in the model file) is a second box on a
cube when a box on the same cube is its top face by every sign (within a box size, less likely
a side face, surer or itself unflagged) and the two readings can be two faces of one die of the
set (`same_die`: a side face shows another face of its own die, while only about one in five
pairs of the set's faces share a die, so two dice side by side rarely pass). The pipeline
drops it (the die is then read once, and the box kept is flagged); with
ReadSettings(one_per_cube=False) it flags it instead. So it does with a box that is its
cube's top face boxed again (`_boxed_twice`): over the "1" of a surer box's "10" in the same
colour, or reading a surer box's face a fraction of a box from it. It also flags a box whose probability
is at least `flag`: a side face alone, whose top face was missed, reads a wrong die. Without the
model file, the distance rule alone (`second_boxes`) flags a possible second box.

The rules' levels (`CubeLevels`: how near, how sure, how likely one die) are the models' tuning
(models/tuning.json); the drop and flag levels are the model file's.

A side face the cube model rates as a top face by its box alone, or whose reading no face of its
top face's die explains (the top face misread), is told by the two boxes together: the pair model
(`PairModel`, the file's "pairs", trained by `python -m training.cube_pair_model`) weighs
`pair_features` (how close the two are, how far toward the camera, how they overlap, their
shapes, shades and readings, what the cube model says of each) and gives P(box i is a side face
of the cube whose top face box j is); box i is dropped from its `drop` (0.9), when that is more
than j's of i.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.dice import DiceSet, standard_set
from companion.vision.decoder import color_index, value_index
from companion.vision.detector import Detection
from companion.vision.tuning import CubeLevels

FEATURES = (
    "sure", "score", "face", "value_conf", "colour_conf", "size_vs_photo", "aspect_vs_photo", "shade_vs_photo",
    "near", "near_sure", "surer_by", "shade_vs_near", "size_vs_near", "aspect_vs_near", "overlap_near",
    "gap_dark", "boxes", "toward_camera", "perspective",
)
# what the model weighs besides: a neighbour's evidence counts only when it is close
DERIVED = ("close", "close_surer_by", "close_shade", "close_unsure", "log_sure", "close_toward")
INPUTS = FEATURES + DERIVED
# What the pair model (`PairModel`) weighs of two boxes within same_cube_reach, box i against box j:
# is i a side face of the cube whose top face j is? A side face lies toward the camera from its top
# face, closer than two top faces can (their faces cannot overlap), overlapping its box, foreshortened
# across that offset, lit otherwise and read as another face of j's die; what the cube model says of
# each box alone counts too.
PAIR_FEATURES = (
    "near", "overlap", "overlap_back", "size_ratio", "aspect_diff", "toward", "toward_persp", "along", "across",
    "gap_dark", "shade_diff", "together", "log_together", "side", "side_other", "log_side_ratio", "sure", "sure_other",
    "score", "face", "value_conf", "colour_conf", "same_value", "same_colour", "boxes", "perspective",
)
_INNER = 0.2  # the margin of a box left out when measuring its body's shade (edges, bevels, shadow)


def second_boxes(detections: Sequence[Detection], face_probs: Sequence[float] | np.ndarray,
                 levels: CubeLevels) -> list[int]:
    """Indices of the boxes that may be a second box on a cube a surer box is on (by distance
    alone: closer than levels.cube_near box sizes to a surer box, and not itself levels.side_sure)."""
    sure = [d.score * float(f) for d, f in zip(detections, face_probs)]
    surer: list[int] = []
    second: list[int] = []
    for i in sorted(range(len(detections)), key=lambda i: -sure[i]):
        if sure[i] < levels.side_sure and any(_same_cube(detections[i], detections[j], levels) for j in surer):
            second.append(i)
        else:
            surer.append(i)
    return sorted(second)


def tied_boxes(detections: Sequence[Detection], face_probs: Sequence[float] | np.ndarray,
               together: np.ndarray, levels: CubeLevels) -> np.ndarray:
    """Per box: closer than levels.cube_near box sizes to another box, neither sure (side_sure), the
    two within levels.sure_tie of each other's sureness (the detector's mirror views move its score
    by about twice that, so either may be the top face) and their readings two faces of one die
    (`together`, same_die, from levels.same_die): which of them is the cube's top face nothing tells."""
    sure = [d.score * float(f) for d, f in zip(detections, face_probs)]
    n = len(detections)
    out = np.zeros(n, dtype=bool)
    for i in range(n):
        out[i] = sure[i] < levels.side_sure and any(
            j != i and sure[j] < levels.side_sure and abs(sure[i] - sure[j]) < levels.sure_tie
            and together[i, j] >= levels.same_die and _same_cube(detections[i], detections[j], levels)
            for j in range(n))
    return out


@dataclass(frozen=True)
class PairModel:
    """A logistic regression over `pair_features` (standardised): P(box i is a side face of the
    cube whose top face box j is), trained by `python -m training.cube_pair_model`."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    drop: float  # drop box i from this probability, when j stays

    @classmethod
    def from_json(cls, data: dict) -> PairModel:
        if tuple(data["features"]) != PAIR_FEATURES:
            raise ValueError("the cube model's pair model was trained on other pair features than this code measures.")
        a = lambda k: np.asarray(data[k], dtype=np.float64)  # noqa: E731
        return cls(a("mean"), a("scale"), a("weights"), float(data["bias"]), float(data["drop"]))

    def probability(self, features: np.ndarray) -> np.ndarray:
        x = (features - self.mean) / self.scale
        return 1.0 / (1.0 + np.exp(-(x @ self.weights + self.bias)))


@dataclass(frozen=True)
class CubeModel:
    """A logistic regression over `box_features` (standardised): P(the box is a side face)."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    drop: float  # drop a box this likely a side face when its cube's other box is read
    flag: float  # flag a box this likely a side face
    pairs: PairModel | None = None  # the pair model (None: the file has none)

    @classmethod
    def load(cls, path: Path) -> CubeModel | None:
        """The model in `path` (None: no such file). Raises ValueError for a file made for
        other features."""
        if not path.is_file():
            return None
        data = json.loads(path.read_text("utf-8"))
        if tuple(data["features"]) != INPUTS:
            raise ValueError(f"{path} was trained on other box features than this code measures.")
        a = lambda k: np.asarray(data[k], dtype=np.float64)  # noqa: E731
        pairs = PairModel.from_json(data["pairs"]) if "pairs" in data else None
        return cls(a("mean"), a("scale"), a("weights"), float(data["bias"]), float(data["drop"]), float(data["flag"]),
                   pairs)

    def side_probability(self, features: np.ndarray) -> np.ndarray:
        x = (model_inputs(features) - self.mean) / self.scale
        return 1.0 / (1.0 + np.exp(-(x @ self.weights + self.bias)))


@dataclass(frozen=True)
class CubeDecision:
    """Per box: dropped (a second box on a cube whose other box is read) and flagged."""

    drop: np.ndarray
    check: np.ndarray
    side: np.ndarray | None = None  # the cube model's probability that the box is a side face (None: no model)


def decide(
    rgb: np.ndarray | None, detections: Sequence[Detection], faces: Sequence[float] | np.ndarray,
    model: CubeModel | None, levels: CubeLevels, value_probs: np.ndarray | None = None,
    colour_probs: np.ndarray | None = None, dice_set: DiceSet | None = None, lowered: np.ndarray | None = None,
    faint: np.ndarray | None = None,
) -> CubeDecision:
    """Which boxes are side faces: dropped when their cube's top face is read, else flagged.
    `value_probs` and `colour_probs` (n, classes): what the reader read on each box; `lowered`
    (n,): the boxes read as dice only from a lowered face threshold (levels.lowered_side; None: none);
    `faint` (n,): the boxes only the detector's upright view found (levels.faint_side; None: none).
    Without a model (or the photo, `rgb`, or the readings) the distance rule alone flags."""
    n = len(detections)
    near = np.zeros(n, dtype=bool)  # maybe a second box on a cube, to flag: by distance alone first
    near[second_boxes(detections, faces, levels)] = True
    if model is None or rgb is None or n == 0 or value_probs is None or colour_probs is None:
        return CubeDecision(np.zeros(n, dtype=bool), near)
    features = box_features(rgb, detections, faces, value_probs.max(axis=1), colour_probs.max(axis=1))
    side = model.side_probability(features)
    together = same_die(value_probs, colour_probs, dice_set or standard_set())
    value, colour = value_probs.argmax(axis=1), colour_probs.argmax(axis=1)
    pairs = _Pairs(detections, faces, side, together, value, colour, _mask(lowered, n), _mask(faint, n),
                   pair_probabilities(rgb, detections, features, side, together, value, colour, model.pairs,
                                      levels.same_cube_reach), levels)
    drop, kept_for = _second_on_cube(pairs, model)
    near |= tied_boxes(detections, faces, together, levels) | _doubted_beside(pairs, drop)
    # which of the two is the top face is not certain either: the one kept is flagged
    return CubeDecision(drop, (near | kept_for | (side >= model.flag)) & ~drop, side)


def _doubted_beside(pairs: _Pairs, drop: np.ndarray) -> np.ndarray:
    """Per box: beside a box kept (within same_cube_reach), maybe another face of its die
    (doubt_same_die), and at least doubt_side a side face by the cube model or doubt_pair one of
    that box's cube by the pair model: to flag, never to drop (levels far under the drop levels: both
    models learnt the side faces of the generator's own look, not every look's)."""
    n, lv = len(pairs.detections), pairs.levels
    doubted = np.zeros(n, dtype=bool)
    for i in range(n):
        doubted[i] = any(j != i and not drop[j] and pairs.together[i, j] >= lv.doubt_same_die
                         and (pairs.side[i] >= lv.doubt_side or pairs.pair[i, j] >= lv.doubt_pair)
                         and _near(pairs.detections[i], pairs.detections[j]) < lv.same_cube_reach for j in range(n))
    return doubted


def _mask(boxes: np.ndarray | None, n: int) -> np.ndarray:
    """A per-box flag given or None (no box): a bool array of n."""
    return np.zeros(n, dtype=bool) if boxes is None else np.asarray(boxes, dtype=bool)


@dataclass(frozen=True)
class _Pairs:
    """What `_second_on_cube` weighs of each two kept boxes."""

    detections: Sequence[Detection]
    faces: Sequence[float] | np.ndarray
    side: np.ndarray  # P(side face), per box
    together: np.ndarray  # (n, n): same_die
    value: np.ndarray  # the reader's value class, per box
    colour: np.ndarray  # the reader's colour class, per box
    lowered: np.ndarray  # read as a die only from a lowered face threshold, per box
    faint: np.ndarray  # found by the detector's upright view alone, per box
    pair: np.ndarray  # (n, n): the pair model's P(box i is a side face of box j's cube)
    levels: CubeLevels

    @property
    def sure(self) -> list[float]:
        return [d.score * float(f) for d, f in zip(self.detections, self.faces)]


def _second_on_cube(pairs: _Pairs, model: CubeModel) -> tuple[np.ndarray, np.ndarray]:
    """(dropped, kept for a dropped box): a box goes when a box on the same cube (within
    levels.same_cube_reach) stays that is its top face (`_side_face_of`) or the same face boxed again
    (`_boxed_twice`). A box kept for another is never dropped: a drop never leaves a cube
    without its top face."""
    n = len(pairs.detections)
    sure = pairs.sure
    drop = np.zeros(n, dtype=bool)
    kept_for = np.zeros(n, dtype=bool)
    for i in np.argsort(-pairs.side):
        if kept_for[i]:
            continue
        partners = [j for j in range(n) if j != i and not drop[j]
                    and _near(pairs.detections[i], pairs.detections[j]) < pairs.levels.same_cube_reach
                    and (_side_face_of(pairs, i, j, sure, model) or _boxed_twice(pairs, i, j, sure)
                         or _doubted_side_face_of(pairs, i, j, sure) or _paired_side_face_of(pairs, i, j, model)
                         or _faint_side_face_of(pairs, i, j) or _unsure_side_face_of(pairs, i, j))]
        if partners:
            drop[i] = True
            kept_for[min(partners, key=lambda j: _near(pairs.detections[i], pairs.detections[j]))] = True
    return drop, kept_for


def _side_face_of(pairs: _Pairs, i: int, j: int, sure: list[float], model: CubeModel) -> bool:
    """Is box j the top face of the cube box i is a side face of, by every sign? Box i is likely
    a side face (from `model.drop`), j less so, and surer or itself unflagged, and the two
    readings can be two faces of one die of the set (levels.same_die: a side face shows another face
    of its own die, while only about one in five pairs of the set's faces share a die). A box j read as a die only from a
    lowered face threshold (the face head holds its sureness low) counts surer where the detector
    scores it higher: its face probability says less than its detector score there."""
    side = pairs.side
    surer = sure[j] > sure[i] or (pairs.lowered[j] and pairs.detections[j].score > pairs.detections[i].score)
    return bool(side[i] >= model.drop and side[j] < side[i] and (surer or side[j] < model.flag)
                and pairs.together[i, j] >= pairs.levels.same_die)


def _paired_side_face_of(pairs: _Pairs, i: int, j: int, model: CubeModel) -> bool:
    """Is box i a side face of box j's cube by the pair model (from its `drop`), and more likely
    so than j is of i's?"""
    return bool(model.pairs is not None and pairs.pair[i, j] >= model.pairs.drop and pairs.pair[i, j] > pairs.pair[j, i])


def _faint_side_face_of(pairs: _Pairs, i: int, j: int) -> bool:
    """Is box i, a faint face, a side face of the cube of box j, one the detector's views agree on:
    at least faint_side a side face by the cube model and faint_pair one of j's cube by the pair model
    (far under their drop levels: a faint face is kept to find a dark or tilted top face, not to read
    a cube twice)?"""
    return bool(pairs.faint[i] and not pairs.faint[j] and pairs.side[i] >= pairs.levels.faint_side
                and pairs.pair[i, j] >= pairs.levels.faint_pair)


def _unsure_side_face_of(pairs: _Pairs, i: int, j: int) -> bool:
    """Is box i, one the face head is unsure of (under unsure_face, and less sure than of box j),
    a side face of box j's cube: at least unsure_side a side face by the cube model, unsure_pair one of
    j's cube by the pair model, and the two readings at least unsure_same_die two faces of one die?"""
    face, lv = pairs.faces, pairs.levels
    return bool(face[i] < lv.unsure_face and face[i] < face[j] and pairs.side[i] >= lv.unsure_side
                and pairs.pair[i, j] >= lv.unsure_pair and pairs.together[i, j] >= lv.unsure_same_die)


def _doubted_side_face_of(pairs: _Pairs, i: int, j: int, sure: list[float]) -> bool:
    """Is box i, read as a die only from a lowered face threshold, a side face of box j's cube:
    likely a side face (lowered_side), within cube_near of j, j surer and less side-like, and the
    two readings maybe faces of one die (lowered_same_die, under same_die: a side face the face head
    doubts is often misread)?"""
    side, lv = pairs.side, pairs.levels
    return bool(pairs.lowered[i] and side[i] >= lv.lowered_side and side[j] < side[i] and sure[j] > sure[i]
                and pairs.together[i, j] >= lv.lowered_same_die
                and _same_cube(pairs.detections[i], pairs.detections[j], lv))


def _boxed_twice(pairs: _Pairs, i: int, j: int, sure: list[float]) -> bool:
    """Is box i the surer box j's top face boxed again: over the "1" of j's "10" in the same
    colour (covered by it for ten_covered of its area), or reading j's face within same_face_reach of
    it (two dice's top faces lie at least about half a box apart)?"""
    if not (sure[j] > sure[i] and pairs.colour[i] == pairs.colour[j]):
        return False
    a, b = pairs.detections[i], pairs.detections[j]
    if pairs.value[i] == value_index(1) and pairs.value[j] == value_index(10):
        return _overlap(a, b) >= pairs.levels.ten_covered
    return bool(pairs.value[i] == pairs.value[j] and _near(a, b) < pairs.levels.same_face_reach)


def same_die(value_probs: np.ndarray, colour_probs: np.ndarray, dice_set: DiceSet) -> np.ndarray:
    """(n, n): for each two boxes, how likely their readings are two different faces of one
    die of the set (the most likely die's share: the sum, over its ordered pairs of faces, of
    one box reading the one and the other box the other)."""
    n = len(value_probs)
    out = np.zeros((n, n))
    for die in dice_set.dice:
        v = [value_index(f.value) for f in die.faces]
        c = [color_index(f.color) for f in die.faces]
        p = value_probs[:, v] * colour_probs[:, c]  # (n, 6): each box reading each of the die's faces
        total = p.sum(axis=1)
        # every ordered pair of the die's faces, less each face paired with itself
        out = np.maximum(out, np.outer(total, total) - p @ p.T)
    return out


def box_features(
    rgb: np.ndarray, detections: Sequence[Detection], faces: Sequence[float] | np.ndarray,
    value_conf: Sequence[float] | np.ndarray, colour_conf: Sequence[float] | np.ndarray,
) -> np.ndarray:
    """(n, len(FEATURES)): each box against the photo's other boxes and its nearest one."""
    n = len(detections)
    sure = np.array([d.score * float(f) for d, f in zip(detections, faces)])
    size = np.log(np.array([max(d.side, 1.0) for d in detections]))
    aspect = np.array([_aspect(d) for d in detections])
    shade = np.array([_shade(rgb, d.box) for d in detections])
    out = np.zeros((n, len(FEATURES)))
    size_l, aspect_l, shade_l = size.tolist(), aspect.tolist(), shade.tolist()  # a handful each: lists are quicker
    centres = np.array([d.centre for d in detections])
    nearer = _nearer(centres, size)
    strength = min(_strength(centres, nearer), 3.0)  # the photo's, the same for every box
    for i, d in enumerate(detections):
        others = [j for j in range(n) if j != i]
        near, j = min(((_near(d, detections[k]), k) for k in others), default=(3.0, -1))
        row = [sure[i], d.score, float(faces[i]), float(value_conf[i]), float(colour_conf[i]),
               _vs(size_l, i, others), _vs(aspect_l, i, others), _vs(shade_l, i, others), min(near, 3.0)]
        if j < 0:
            row += [0.0, sure[i], 0.0, 0.0, 0.0, 0.0, 0.0]
        else:
            row += [sure[j], sure[j] - sure[i], abs(shade[i] - shade[j]), size[i] - size[j], aspect[i] - aspect[j],
                    _overlap(d, detections[j]), _gap_dark(rgb, d, detections[j], shade[i], shade[j])]
        toward = 0.0
        if j >= 0 and nearer is not None:
            offset = centres[i] - centres[j]
            toward = float(offset @ nearer / (np.linalg.norm(offset) * np.linalg.norm(nearer) + 1e-9))
        out[i] = row + [n / 10, toward, strength]
    return out


def pair_features(
    rgb: np.ndarray, detections: Sequence[Detection], features: np.ndarray, side: np.ndarray, together: np.ndarray,
    value: np.ndarray, colour: np.ndarray, reach: float,
) -> tuple[list[tuple[int, int]], np.ndarray]:
    """The ordered pairs (i, j) of boxes within `reach` box sizes of each other (the tuning's
    same_cube_reach: a side face's centre lies at most about a face from its top face's) and, per pair,
    (len(PAIR_FEATURES),): box i against box j. `features`: box_features; `side`: the cube model's
    P(side face) per box; `together`: same_die; `value`, `colour`: the reader's classes per box."""
    n = len(detections)
    pairs = [(i, j) for i in range(n) for j in range(n)
             if i != j and _near(detections[i], detections[j]) < reach]
    if not pairs:
        return pairs, np.zeros((0, len(PAIR_FEATURES)))
    col = {name: features[:, k] for k, name in enumerate(FEATURES)}
    centres = np.array([d.centre for d in detections])
    nearer = nearer_direction(detections)
    unit = None if nearer is None or not np.linalg.norm(nearer) else nearer / np.linalg.norm(nearer)
    shade = {k: _shade(rgb, detections[k].box) for k in {k for p in pairs for k in p}}
    rows = []
    for i, j in pairs:
        a, b = detections[i], detections[j]
        near = _near(a, b)
        offset = (centres[i] - centres[j]) / max(a.side, b.side, 1.0)
        along = 0.0 if unit is None else float(offset @ unit)
        across = float(np.linalg.norm(offset - along * (unit if unit is not None else 0.0)))
        toward = along / near if near > 0 else 0.0
        rows.append([
            near, _overlap(a, b), _overlap(b, a), math.log(max(a.side, 1.0) / max(b.side, 1.0)), _aspect(a) - _aspect(b),
            toward, toward * col["perspective"][i], along, across, _gap_dark(rgb, a, b, shade[i], shade[j]),
            shade[i] - shade[j], together[i, j], math.log(together[i, j] + 0.01), side[i], side[j],
            math.log((side[i] + 1e-3) / (side[j] + 1e-3)), col["sure"][i], col["sure"][j], col["score"][i],
            col["face"][i], col["value_conf"][i], col["colour_conf"][i], float(value[i] == value[j]),
            float(colour[i] == colour[j]), col["boxes"][i], col["perspective"][i],
        ])
    return pairs, np.asarray(rows, dtype=np.float64)


def pair_probabilities(
    rgb: np.ndarray, detections: Sequence[Detection], features: np.ndarray, side: np.ndarray, together: np.ndarray,
    value: np.ndarray, colour: np.ndarray, model: PairModel | None, reach: float,
) -> np.ndarray:
    """(n, n): the pair model's P(box i is a side face of box j's cube), 0 beyond `reach`
    (pair_features; all 0 without a pair model)."""
    n = len(detections)
    out = np.zeros((n, n))
    if model is None:
        return out
    pairs, rows = pair_features(rgb, detections, features, side, together, value, colour, reach)
    if pairs:
        p = model.probability(rows)
        for (i, j), v in zip(pairs, p):
            out[i, j] = v
    return out


def _nearer(centres: np.ndarray, log_size: np.ndarray) -> np.ndarray | None:
    """The photo's shared perspective: the direction (and rate, per pixel) in which its faces
    grow, toward the camera, where a cube shows its side faces (None: under 3 boxes)."""
    if len(centres) < 3:
        return None
    a = np.column_stack([np.ones(len(centres)), centres - centres.mean(axis=0)])
    coef, *_ = np.linalg.lstsq(a, log_size, rcond=None)
    return coef[1:]


def nearer_direction(detections: Sequence[Detection]) -> np.ndarray | None:
    """The direction (and rate, per pixel) in which the photo's faces grow, toward the camera
    (None: under 3 boxes)."""
    return _nearer(np.array([d.centre for d in detections]), np.log([max(d.side, 1.0) for d in detections]))


def perspective(detections: Sequence[Detection]) -> float:
    """How strongly the photo's faces grow toward the camera: the change of their log size across
    the photo's extent (box_features' `perspective`, uncapped; 0 under 3 boxes)."""
    return _strength(np.array([d.centre for d in detections]).reshape(-1, 2), nearer_direction(detections))


def _strength(centres: np.ndarray, nearer: np.ndarray | None) -> float:
    """The change of the faces' log size across the photo's extent (0 without a perspective)."""
    return 0.0 if nearer is None else float(np.linalg.norm(nearer) * np.ptp(centres, axis=0).max())


def model_inputs(features: np.ndarray) -> np.ndarray:
    """`box_features` and the DERIVED columns the model also weighs."""
    f = {name: features[:, k] for k, name in enumerate(FEATURES)}
    close = np.clip(1.0 - f["near"], 0.0, None)
    return np.column_stack([features, close, close * f["surer_by"], close * f["shade_vs_near"],
                            close * (1.0 - f["sure"]), np.log(f["sure"] + 0.05),
                            close * f["toward_camera"] * f["perspective"]])


def _vs(values: list[float], i: int, others: list[int]) -> float:
    """How box i's value departs from the median of the photo's other boxes (0: no others)."""
    return values[i] - statistics.median(values[k] for k in others) if others else 0.0


def _aspect(d: Detection) -> float:
    w, h = max(d.box[2] - d.box[0], 1.0), max(d.box[3] - d.box[1], 1.0)
    return math.log(h / w)


def _near(a: Detection, b: Detection) -> float:
    """The distance between two boxes' centres, in the larger box's size."""
    return math.dist(a.centre, b.centre) / max(a.side, b.side, 1.0)


def _same_cube(a: Detection, b: Detection, levels: CubeLevels) -> bool:
    return _near(a, b) < levels.cube_near


def _overlap(a: Detection, b: Detection) -> float:
    """The share of box a that box b covers."""
    w = min(a.box[2], b.box[2]) - max(a.box[0], b.box[0])
    h = min(a.box[3], b.box[3]) - max(a.box[1], b.box[1])
    return max(0.0, w) * max(0.0, h) / max(a.area, 1.0)


def _luma(pixels: np.ndarray) -> np.ndarray:
    return np.log(1.0 + pixels[..., 0] * 0.30 + pixels[..., 1] * 0.59 + pixels[..., 2] * 0.11)


def _shade(rgb: np.ndarray, box: tuple[float, float, float, float]) -> float:
    """The body's shade: the median log luma of the box's middle (most of it body, not ink)."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    h_img, w_img = rgb.shape[:2]
    ya, yb = int(max(0, y0 + _INNER * h)), int(min(h_img, math.ceil(y1 - _INNER * h)))
    xa, xb = int(max(0, x0 + _INNER * w)), int(min(w_img, math.ceil(x1 - _INNER * w)))
    if yb <= ya or xb <= xa:
        return 0.0
    return float(np.median(_luma(rgb[ya:yb, xa:xb].astype(np.float32))))


def _gap_dark(rgb: np.ndarray, a: Detection, b: Detection, shade_a: float, shade_b: float) -> float:
    """How much darker than both bodies the darkest stretch between the two centres is."""
    (ax, ay), (bx, by) = a.centre, b.centre
    t = np.linspace(0.15, 0.85, 15)
    xs = np.clip(np.round(ax + (bx - ax) * t).astype(int), 0, rgb.shape[1] - 1)
    ys = np.clip(np.round(ay + (by - ay) * t).astype(int), 0, rgb.shape[0] - 1)
    line = _luma(rgb[ys, xs].astype(np.float32))
    darkest = float(np.convolve(line, np.ones(3) / 3, mode="valid").min())
    return min(shade_a, shade_b) - darkest
