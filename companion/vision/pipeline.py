"""read_image: photo in, dice out. Load -> detect top faces -> read each crop -> decode with the
set -> flag what the scene says to check (a second box on a cube, an unusual light, a reading
the set cannot produce)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from companion.dice import MAX_DICE, DiceSet, standard_set
from companion.vision.crops import box_crop
from companion.vision.cubes import CubeDecision, decide, nearer_direction
from companion.vision.detector import Detection, Heatmap
from companion.vision.image_io import WorkImage, load_work_image
from companion.vision.inks import cast_of, dark_bodies, light_reference
from companion.vision.light_colour import possible_kinds
from companion.vision.models import Models, load_models
from companion.vision.profile import Profile
from companion.vision.reader import ReaderLogits, softmax
from companion.vision.reading import DieReading, Reading
from companion.vision.settings import ReadSettings
from companion.vision.stage1_find_faces import find_faces
from companion.vision.stage4_decide import decide_dice
from companion.vision.stage5_doubt import doubt_dice
from companion.vision.top_faces import candidates
from companion.vision.white_balance import LightCorrection, correction_of, light_correction

DEFAULT_SETTINGS = ReadSettings()

# Boxes read beyond the set's 10 dice: the reader's face head may turn some down (a reader
# without that head keeps the 10 surest as before).
EXTRA_CANDIDATES = 4


@dataclass(frozen=True)
class Analysis:
    """Everything one reading computed, for evaluation and calibration (in detection order)."""

    detections: list[Detection]
    value_logits: np.ndarray  # (n, 11)
    color_logits: np.ndarray  # (n, 4)
    dice: list[DieReading]  # dice[i] belongs to detections[i]
    unusual_light: bool = False  # the crops were corrected for a light beyond the training look's


def _nothing() -> Analysis:
    return Analysis([], np.zeros((0, 11)), np.zeros((0, 4)), [])


def read_boxes(
    work: WorkImage, detections: list[Detection], models: Models, settings: ReadSettings = DEFAULT_SETTINGS,
    light: LightCorrection | None = None, cascade: bool = False, face_bands: tuple[tuple[float, float], ...] = (),
) -> ReaderLogits:
    """The reader's logits for each detected box's crop, corrected for the photo's light
    (`light`; None: measured here, photo_light); with `cascade`, the crops its first part is sure
    of read by it alone (ReadSettings.reader_cascade: then without embeddings); with `face_bands`,
    a read for the face head alone (ReaderModel.logits)."""
    return models.reader.logits(reader_crops(work, detections, models, settings, light), settings.reader_turns,
                                settings.reader_sure, settings.reader_sure_one,
                                settings.reader_cascade if cascade else 1.0, face_bands)


def needs_embedding(models: Models, settings: ReadSettings, light: LightCorrection) -> bool:
    """Could the crops' embeddings be asked for under this light: is there a colour head for a
    photo light it can be (the cast is told only after the reader)?"""
    heads = models.light_colour if settings.light_colour_head else None
    return heads is not None and any(heads.get(kind) is not None for kind in possible_kinds(light))


def reader_crops(
    work: WorkImage, detections: list[Detection], models: Models, settings: ReadSettings = DEFAULT_SETTINGS,
    light: LightCorrection | None = None,
) -> np.ndarray:
    """(n, size, size, 3) uint8: each box's crop as the reader is given it, corrected for the
    photo's light (`light`; None: measured here, photo_light)."""
    crops = np.stack([box_crop(work.rgb, d.box, models.reader.size) for d in detections])
    return (light or photo_light(work, detections, settings)).apply(crops)


def photo_light(work: WorkImage, detections: list[Detection], settings: ReadSettings = DEFAULT_SETTINGS) -> LightCorrection:
    """How the photo's light makes the crops differ from the training look's (white_balance.py)."""
    return light_correction(work.rgb, [d.box for d in detections]) if settings.balance_light else LightCorrection()


def analyse(
    work: WorkImage, models: Models, settings: ReadSettings = DEFAULT_SETTINGS, dice_set: DiceSet | None = None,
    profile: Profile | None = None,
) -> Analysis:
    """Everything one reading computes, the stages in order (see the module docstring)."""
    dice_set = dice_set or standard_set()
    kept = kept_boxes(work, models, settings, dice_set, profile, embeddings=False)
    if kept is None:
        return _nothing()
    decided = decide_dice(kept, models, settings, dice_set, profile)
    dice = doubt_dice(decided, models.tuning, settings, dice_set)
    return Analysis(decided.detections, decided.value_logits, decided.color_logits, dice, kept.light.unusual)


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


def kept_boxes(
    work: WorkImage, models: Models, settings: ReadSettings = DEFAULT_SETTINGS, dice_set: DiceSet | None = None,
    profile: Profile | None = None, embeddings: bool = True,
) -> KeptBoxes | None:
    """Find a photo's faces, read them and keep those that are dice (None: none are), as analyse
    does before deciding the dice; training takes the same boxes from here. Without `embeddings`
    the reader's cascade reads the crops (read_boxes) where nothing of the read asks for them."""
    faces_found = find_faces(work, models, settings)
    seen, work, every_box, upright, faint = (faces_found.seen, faces_found.image, faces_found.boxes,
                                             faces_found.upright, faces_found.faint)
    detections = every_box[:MAX_DICE + EXTRA_CANDIDATES]  # the surest are read
    if not detections:
        return None
    light = photo_light(work, detections, settings)
    def cascade(light: LightCorrection) -> bool:  # may the crops be read without their embeddings?
        return not (embeddings or profile is not None or needs_embedding(models, settings, light))

    read = read_boxes(work, detections, models, settings, light, cascade(light))
    if profile is not None:
        profile.check_reader(models.reader.fingerprint)
    faces = read.face_probability()
    faces = np.ones(len(detections)) if faces is None else faces
    face_threshold = _face_threshold(work, detections, faces, models.calibration.face_threshold, settings,
                                     models.tuning.detection_sure)
    if faint and settings.faint_face_threshold is not None and read.face is not None:
        # the faces only the upright view found are read too, after the boxes the views agree on
        faint_read = read_boxes(work, faint, models, settings, light, cascade(light))
        detections, read = detections + faint, _joined(read, faint_read)
        faces = np.concatenate([faces, faint_read.face_probability()])
        face_threshold = np.concatenate([face_threshold, np.full(len(faint), settings.faint_face_threshold)])
        every_box = every_box + faint
    else:
        faint = []
    faint_box = np.arange(len(detections)) >= len(detections) - len(faint)
    # an unsure box unlike every die this table confirmed is none of its dice (profile.py)
    allowed = None if profile is None else profile.keeps(read.embedding, faces)
    dice_set = dice_set or standard_set()
    keep, second = _kept_boxes(detections, faces, face_threshold, settings, allowed,
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
        read = read_boxes(work, detections, models, settings, light, cascade(light))
    lone = np.zeros(len(detections), dtype=bool)
    if "missed_tops" not in settings.disabled_doubts and read.face is not None:
        lone = _missed_tops(seen, upright, work, detections, every_box, keep, second, models, settings, light,
                            not embeddings)
    lone[faint_box] = True  # the mirror views doubt a faint face: flagged too
    return KeptBoxes(work, detections, light, read, faces, keep, second, None if reference is None else cast_of(reference),
                     lone)


def _joined(a: ReaderLogits, b: ReaderLogits) -> ReaderLogits:
    """Two reads' logits, one after the other (an output one of them lacks: None)."""
    def both(x: np.ndarray | None, y: np.ndarray | None) -> np.ndarray | None:
        return None if x is None or y is None else np.concatenate([x, y])

    return ReaderLogits(both(a.value, b.value), both(a.color, b.color), both(a.face, b.face),  # type: ignore[arg-type]
                        both(a.embedding, b.embedding), both(a.agree, b.agree))


def _face_threshold(
    work: WorkImage, detections: list[Detection], faces: np.ndarray, calibrated: float, settings: ReadSettings,
    detection_sure: float,
) -> np.ndarray:
    """Per box, the face probability it needs to be read as a die: the calibration's, or on a photo
    whose dice (the boxes that pass it, at least one) have dark bodies (inks.dark_bodies: told on
    the faces' discs, not their centres, which a bright numeral can fill),
    ReadSettings.dark_face_threshold for a box the detector is sure of (`detection_sure`: the
    unsure boxes the face head rates that low are mostly on a cube's side)."""
    out = np.full(len(detections), calibrated)
    dark = settings.dark_face_threshold
    if dark is None or dark >= calibrated:
        return out
    passing = [d.box for d, f in zip(detections, faces) if f >= calibrated]
    if not dark_bodies(work.rgb, passing):  # no dice to tell, or light ones
        return out
    out[[d.score >= detection_sure for d in detections]] = dark
    return out


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
    found = [(k, c) for k, c in candidates(upright, models.detector.stride, kept, others, nearer_direction(kept))
             if not flagged[keep[k]]]
    if not found:
        return out
    peaks = list(dict.fromkeys(c for _, c in found))  # a peak beyond two kept boxes is read once
    # read at the turns any box is (upright only, more boxes there that are no top face pass the face
    # head), but only the face head is asked: a peak it reads far from a top face, or sure of one,
    # after a stage of the vote is read no further (ReadSettings.missed_top_bands)
    read = read_boxes(work, [_scaled(c, 1 / to_seen) for c in peaks], models, settings, light, cascade,
                      settings.missed_top_bands)
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
    allowed: np.ndarray | None = None, cubes: Callable[[list[int]], CubeDecision] | None = None,
) -> tuple[list[int], np.ndarray]:
    """The boxes read as dice (surest first) and, per box, whether to flag it as maybe a
    cube's side face (cubes.py: one the cube model drops with settings.one_per_cube, when its
    cube's other box is read, is flagged instead without it). `allowed` (None: all): the boxes
    a dice-set profile does not turn down."""
    passes = np.asarray(faces) >= face_threshold  # one threshold, or one per box (_face_threshold)
    keep = [i for i in range(len(detections)) if passes[i] and (allowed is None or allowed[i])]
    cube = cubes(keep) if cubes is not None else decide(None, [detections[i] for i in keep], faces[keep], None)
    second = np.zeros(len(detections), dtype=bool)
    flag = cube.check if settings.one_per_cube else cube.check | cube.drop
    second[[keep[k] for k in np.flatnonzero(flag)]] = True
    if settings.one_per_cube:
        keep = [i for k, i in enumerate(keep) if not cube.drop[k]]
    # more boxes than dice in the set: the weakest cannot all be dice; keep the 10 surest
    return keep[:MAX_DICE], second


def _cubes(work: WorkImage, detections: list[Detection], faces: np.ndarray, read: ReaderLogits, models: Models,
           kept: list[int], dice_set: DiceSet, lowered: np.ndarray, faint: np.ndarray) -> CubeDecision:
    """The cube model's decision on the kept boxes (cubes.py); `lowered`, per box: under the
    calibration's face threshold (a kept one passed only a lowered one, _face_threshold); `faint`,
    per box: found by the upright view alone (faint_faces)."""
    cal = models.calibration
    value = softmax(read.value[kept], cal.value_temperature)
    colour = softmax(read.color[kept], cal.color_temperature)
    return decide(work.rgb, [detections[i] for i in kept], faces[kept], models.cubes, value, colour, dice_set,
                  lowered[kept], faint[kept])


def read_work_image(
    work: WorkImage, models: Models, settings: ReadSettings = DEFAULT_SETTINGS, dice_set: DiceSet | None = None,
    profile: Profile | None = None,
) -> list[DieReading]:
    """Read the dice of an already loaded photo (boxes in full-size upright pixels)."""
    readings = analyse(work, models, settings, dice_set, profile).dice
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
    start = time.perf_counter()
    work = load_work_image(source)  # bad input fails before the models are even loaded
    models = models or load_models(settings.models_dir, settings.providers)
    dice = read_work_image(work, models, settings, profile=profile)
    ms = (time.perf_counter() - start) * 1000
    return Reading(work.full_width, work.full_height, dice, ms)
