"""Stage 3 of reading a photo (pipeline.py): keep one top face per cube.

The boxes the face head passes are weighed by the cube models (cubes.py): a cube's side face boxed
beside its top face is dropped (or flagged), and a box beyond which a missed top face shows is
flagged (top_faces.py). The crops are read again where the kept dice tell another light.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from companion.dice import MAX_DICE, DiceSet
from companion.vision.cubes import CubeDecision, decide, nearer_direction
from companion.vision.detector import Detection, Heatmap
from companion.vision.image_io import WorkImage
from companion.vision.inks import cast_of, light_reference
from companion.vision.models import Models
from companion.vision.profile import Profile
from companion.vision.reader import ReaderLogits, softmax
from companion.vision.settings import ReadSettings
from companion.vision.stage1_find_faces import FoundFaces
from companion.vision.stage2_read import ReadFaces, may_cascade, read_boxes
from companion.vision.top_faces import candidates
from companion.vision.white_balance import LightCorrection, correction_of


@dataclass(frozen=True)
class KeptBoxes:
    """A photo's boxes up to the dice read from them (kept_boxes); per-box arrays are over
    `detections`, every box the reader read."""

    work: WorkImage  # the image the boxes are in (a sharper copy when small dice were searched again)
    detections: list[Detection]
    light: LightCorrection
    read: ReaderLogits
    faces: np.ndarray  # the face head's probability (1 for a reader without that head)
    keep: list[int]  # the boxes read as dice, surest first
    second: np.ndarray  # maybe a second box on a cube: to flag
    cast: float | None  # the light's cast told by the kept dice's bodies (inks.light_cast; None: no white reference)
    lone: np.ndarray  # maybe a cube's side face whose top face was missed (top_faces.py): to flag
    side: np.ndarray  # the cube model's probability that the box is a side face (0 without one)


def one_face_per_cube(
    found: FoundFaces, faces_read: ReadFaces, models: Models, settings: ReadSettings, dice_set: DiceSet,
    profile: Profile | None = None,
) -> KeptBoxes | None:
    """The boxes read that are dice, one per cube (None: none are)."""
    work, detections, read, faces = faces_read.image, faces_read.detections, faces_read.read, faces_read.faces
    faint_box, light = faces_read.faint_box, faces_read.light
    # an unsure box unlike every die this table confirmed is none of its dice (profile.py)
    allowed = None if profile is None else profile.keeps(read.embedding, faces)
    keep, second, side = _kept_boxes(detections, faces, faces_read.face_threshold, settings, allowed,
                                     lambda kept: _cubes(work, detections, faces, read, models, kept, dice_set,
                                                         faces < models.calibration.face_threshold, faint_box))
    if not keep:
        return None
    # the light was told by every box read, the photo's cast (analyse) by the dice kept: where
    # the two disagree on whether the light is beyond the training look's (a bright box that is
    # no die), the crops are read again as the kept dice's light says, so that the colour head,
    # the joint colours and the flags all judge one light
    reference = light_reference(work.rgb, [detections[i].box for i in keep])
    kept_light = correction_of(reference) if settings.balance_light else LightCorrection()
    if kept_light.unusual != light.unusual:
        light = kept_light
        read = read_boxes(work, detections, models, settings, light,
                          may_cascade(models, settings, light, faces_read.embeddings))
    lone = np.zeros(len(detections), dtype=bool)
    if "missed_tops" not in settings.disabled_doubts and read.face is not None:
        lone = _missed_tops(found.seen, found.upright, work, detections, faces_read.every_box, keep, second, models,
                            settings, light, not faces_read.embeddings)
    lone[faint_box] = True  # the mirror views doubt a faint face: flagged too
    return KeptBoxes(work, detections, light, read, faces, keep, second, None if reference is None else cast_of(reference),
                     lone, side)


def _missed_tops(
    seen: WorkImage, upright: Heatmap, work: WorkImage, detections: list[Detection], every_box: list[Detection],
    keep: list[int], flagged: np.ndarray, models: Models, settings: ReadSettings, light: LightCorrection,
    cascade: bool,
) -> np.ndarray:
    """Per box of `detections` (those read): a kept box beyond which, away from the camera, the
    upright heatmap of `seen` (the working image) has a peak that no box found marks (`every_box`,
    the boxes beyond those read too) and that the reader's face head takes for a top face (as sure
    as it must be of a box kept as a die under the calibration's threshold): the kept box is
    probably that cube's side face (top_faces.py). A box already `flagged` is not looked beyond (the
    reader's second look costs a run of its own; `cascade`: read by the reader's cascade, only the
    face head is asked)."""
    out = np.zeros(len(detections), dtype=bool)
    to_seen = seen.rgb.shape[1] / work.rgb.shape[1]  # the boxes' image (maybe a sharper copy) -> seen's pixels
    kept = [_scaled(detections[i], to_seen) for i in keep]
    others = [_scaled(d, to_seen) for d in every_box]
    found = [(k, c) for k, c in candidates(upright, models.detector.stride, kept, others, nearer_direction(kept),
                                           models.tuning.missed_tops, models.detector.overlap)
             if not flagged[keep[k]]]
    if not found:
        return out
    peaks = list(dict.fromkeys(c for _, c in found))  # a peak beyond two kept boxes is read once
    # read at the turns any box is (upright only, more boxes there that are no top face pass the face
    # head), but only the face head is asked: a peak it reads far from a top face, or sure of one,
    # after a stage of the vote is read no further (ReadSettings.missed_top_bands)
    read = read_boxes(work, [_scaled(c, 1 / to_seen) for c in peaks], models, settings, light, cascade,
                      settings.levels(models.tuning).missed_top_bands)
    faces = read.face_probability()
    if faces is None:
        return out
    # a face the face head would keep as a die's top face, had the detector boxed it
    sure = dict(zip(peaks, (faces >= models.calibration.face_threshold).tolist()))
    for k, c in found:
        out[keep[k]] |= bool(sure[c])
    return out


def _scaled(d: Detection, by: float) -> Detection:
    return Detection((d.box[0] * by, d.box[1] * by, d.box[2] * by, d.box[3] * by), d.score)


def _kept_boxes(
    detections: list[Detection], faces: np.ndarray, face_threshold: float | np.ndarray, settings: ReadSettings,
    allowed: np.ndarray | None, cubes: Callable[[list[int]], CubeDecision],
) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The boxes read as dice (surest first) and, per box, whether to flag it as maybe a
    cube's side face (cubes.py: one the cube model drops with settings.one_per_cube, when its
    cube's other box is read, is flagged instead without it) and the cube model's probability
    that it is one (0 without a model). `allowed` (None: all): the boxes a dice-set profile does
    not turn down."""
    passes = np.asarray(faces) >= face_threshold  # one threshold, or one per box (_face_threshold)
    keep = [i for i in range(len(detections)) if passes[i] and (allowed is None or allowed[i])]
    cube = cubes(keep)
    second = np.zeros(len(detections), dtype=bool)
    flag = cube.check if settings.one_per_cube else cube.check | cube.drop
    second[[keep[k] for k in np.flatnonzero(flag)]] = True
    side = np.zeros(len(detections))
    if cube.side is not None:
        side[keep] = cube.side
    if settings.one_per_cube:
        keep = [i for k, i in enumerate(keep) if not cube.drop[k]]
    # more boxes than dice in the set: the weakest cannot all be dice; keep the 10 surest
    return keep[:MAX_DICE], second, side


def _cubes(work: WorkImage, detections: list[Detection], faces: np.ndarray, read: ReaderLogits, models: Models,
           kept: list[int], dice_set: DiceSet, lowered: np.ndarray, faint: np.ndarray) -> CubeDecision:
    """The cube model's decision on the kept boxes (cubes.py); `lowered`, per box: under the
    calibration's face threshold (a kept one passed only a lowered one, _face_threshold); `faint`,
    per box: found by the upright view alone (faint_faces)."""
    cal = models.calibration
    value = softmax(read.value[kept], cal.value_temperature)
    colour = softmax(read.color[kept], cal.color_temperature)
    return decide(work.rgb, [detections[i] for i in kept], faces[kept], models.cubes, models.tuning.cubes, value,
                  colour, dice_set, lowered[kept], faint[kept])
