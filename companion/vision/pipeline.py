"""read_image: photo in, dice out, one stage after another, each a module with one entry function
whose typed result the next stage takes:

    load             image_io.load_work_image        -> WorkImage (the upright working image)
    find faces       stage1_find_faces.find_faces     -> FoundFaces
    read             stage2_read.read_faces           -> ReadFaces
    one per cube     stage3_one_per_cube.one_face_per_cube -> KeptBoxes
    decide           stage4_decide.decide_dice        -> DecidedDice
    doubt            stage5_doubt.doubt_dice          -> the DieReadings

The reader reads the boxes before the cube models keep one per cube: they weigh its face head
and its readings."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from companion.dice import DiceSet, standard_set
from companion.vision.detector import Detection
from companion.vision.image_io import WorkImage, load_work_image
from companion.vision.models import Models, load_models
from companion.vision.profile import Profile
from companion.vision.read_features import ReadFeatures
from companion.vision.reading import DieReading, Reading
from companion.vision.settings import ReadSettings
from companion.vision.stage1_find_faces import find_faces
from companion.vision.stage2_read import read_faces
from companion.vision.stage3_one_per_cube import KeptBoxes, one_face_per_cube
from companion.vision.stage4_decide import DecidedDice, decide_dice
from companion.vision.stage5_doubt import doubt_dice, doubt_scores_of

DEFAULT_SETTINGS = ReadSettings()


@dataclass(frozen=True)
class Analysis:
    """Everything one reading computed, for evaluation and calibration (in detection order)."""

    detections: list[Detection]
    value_logits: np.ndarray  # (n, 11)
    color_logits: np.ndarray  # (n, 4)
    dice: list[DieReading]  # dice[i] belongs to detections[i]
    unusual_light: bool = False  # the crops were corrected for a light beyond the training look's
    scores: np.ndarray | None = None  # (n, doubts.FEATURES): the doubts' scores, where asked for (analyse's `scores`)
    features: ReadFeatures | None = None  # what learning the photo takes of each die (analyse's `learnable`)


def _nothing() -> Analysis:
    return Analysis([], np.zeros((0, 11)), np.zeros((0, 4)), [])


def analyse(
    work: WorkImage, models: Models, settings: ReadSettings = DEFAULT_SETTINGS, dice_set: DiceSet | None = None,
    profile: Profile | None = None, scores: bool = False, learnable: bool = False,
) -> Analysis:
    """Everything one reading computes, the stages in order (see the module docstring); with
    `scores`, the doubts' continuous scores too (stage5_doubt.doubt_scores_of); with `learnable`,
    what learning the photo once confirmed takes of each die (read_features.py: the crops'
    embeddings are then read for every die, as with a profile)."""
    dice_set = dice_set or standard_set()
    kept = kept_boxes(work, models, settings, dice_set, profile, embeddings=learnable)
    if kept is None:
        return _nothing()
    decided = decide_dice(kept, models, settings, dice_set, profile)
    doubt_scores = doubt_scores_of(decided, models.doubt.tuning)
    dice = doubt_dice(decided, models.doubt, dice_set, doubt_scores)
    return Analysis(decided.detections, decided.value_logits, decided.color_logits, dice, kept.light.unusual,
                    doubt_scores if scores else None,
                    _features(decided, dice, kept.cast is not None) if learnable else None)


def _features(decided: DecidedDice, dice: list[DieReading], white_reference: bool) -> ReadFeatures | None:
    if decided.embedding is None or decided.base_probs is None:
        return None  # a reader without an embedding: nothing to learn from
    looks = decided.looks() if decided.looks is not None else None
    return ReadFeatures(np.array([d.box for d in dice], np.float64).reshape(-1, 4), decided.embedding,
                        decided.base_probs[0], decided.base_probs[1], np.asarray(decided.faces, np.float32),
                        decided.light_kind, white_reference, looks)


def kept_boxes(
    work: WorkImage, models: Models, settings: ReadSettings = DEFAULT_SETTINGS, dice_set: DiceSet | None = None,
    profile: Profile | None = None, embeddings: bool = True,
) -> KeptBoxes | None:
    """Stages 1-3: the photo's faces found, read and kept one per cube (None: no dice), as analyse
    has them before deciding the dice; training takes the same boxes from here. Without
    `embeddings` the reader's cascade reads the crops where nothing of the read asks for them."""
    found = find_faces(work, models, settings)
    faces_read = read_faces(found, models, settings, profile, embeddings)
    if faces_read is None:
        return None
    return one_face_per_cube(found, faces_read, models, settings, dice_set or standard_set(), profile)


def read_work_image(
    work: WorkImage, models: Models, settings: ReadSettings = DEFAULT_SETTINGS, dice_set: DiceSet | None = None,
    profile: Profile | None = None,
) -> list[DieReading]:
    """Read the dice of an already loaded photo (boxes in full-size upright pixels)."""
    return _in_order(analyse(work, models, settings, dice_set, profile).dice)


def _in_order(readings: list[DieReading]) -> list[DieReading]:
    # reading order: top to bottom, then left to right, by rows of about one die's height
    return sorted(readings, key=lambda r: (round(r.box[1] / max(r.box[3] - r.box[1], 1)), r.box[0]))


def read_image(
    source: bytes | str | os.PathLike, models: Models | None = None, settings: ReadSettings = DEFAULT_SETTINGS,
    profile: Profile | None = None,
) -> Reading:
    """Read every die in a photo (JPEG, PNG or WebP; bytes or a path).

    `models` None loads (once per process) those of settings.models_dir. `profile`: what
    this table's confirmed photos taught about its dice (companion/vision/profile.py; None:
    the base reader alone). Raises ImageError for data that is not an image, is broken, or
    is too large to decode safely, ModelsMissing when the model files are not there, and
    ProfileError for a profile learnt with another reader; a photo without dice gives a
    Reading with an empty list.
    """
    return read_learnable(source, models, settings, profile, learnable=False)[0]


def read_learnable(
    source: bytes | str | os.PathLike, models: Models | None = None, settings: ReadSettings = DEFAULT_SETTINGS,
    profile: Profile | None = None, learnable: bool = True,
) -> tuple[Reading, ReadFeatures | None]:
    """read_image, and (with `learnable`) what learning the photo once confirmed takes of its dice."""
    start = time.perf_counter()
    work = load_work_image(source)  # bad input fails before the models are even loaded
    models = models or load_models(settings.models_dir, settings.providers)
    analysis = analyse(work, models, settings, profile=profile, learnable=learnable)
    ms = (time.perf_counter() - start) * 1000
    return Reading(work.full_width, work.full_height, _in_order(analysis.dice), ms), analysis.features
