"""Stage 2 of reading a photo (pipeline.py): read the faces found.

Each box's crop, corrected for the photo's light (white_balance.py), is read by the reader
(reader.py): value, colour, and whether it is a top face at all, with the face probability each
box needs to be kept as a die (lower on dark bodies, its own for a faint face).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from companion.dice import MAX_DICE
from companion.vision.crops import box_crop
from companion.vision.detector import Detection
from companion.vision.image_io import WorkImage
from companion.vision.inks import dark_bodies
from companion.vision.light_colour import possible_kinds
from companion.vision.models import Models
from companion.vision.profile import Profile
from companion.vision.reader import ReaderLogits
from companion.vision.settings import ReadSettings
from companion.vision.stage1_find_faces import FoundFaces
from companion.vision.white_balance import LightCorrection, light_correction

DEFAULT_SETTINGS = ReadSettings()


@dataclass(frozen=True)
class ReadFaces:
    """The boxes read and what the reader said (per-box arrays over `detections`)."""

    image: WorkImage  # the image the boxes are in
    detections: list[Detection]  # the surest boxes found, then the faint faces read
    every_box: list[Detection]  # every box found, those not read too, and the faint faces read
    light: LightCorrection  # the photo's light, told by every box read
    read: ReaderLogits
    faces: np.ndarray  # the face head's probability (1 for a reader without that head)
    face_threshold: np.ndarray  # the face probability each box needs to be kept as a die
    faint_box: np.ndarray  # a faint face (found by the upright view alone)
    embeddings: bool  # the crops' embeddings may be asked for: no cascade


def read_faces(
    found: FoundFaces, models: Models, settings: ReadSettings = DEFAULT_SETTINGS, profile: Profile | None = None,
    embeddings: bool = True,
) -> ReadFaces | None:
    """Read the surest boxes found (None: there are none), and the faint faces where the reader has a
    face head. Without `embeddings` (and a `profile`) the reader's cascade reads the crops where
    nothing asks for their embeddings. Raises ProfileError for a profile of another reader."""
    work, every_box, faint = found.image, found.boxes, found.faint
    # the surest are read, a few beyond the set's dice: the face head may turn some down
    detections = every_box[:MAX_DICE + models.tuning.read.extra_candidates]
    if not detections:
        return None
    light = photo_light(work, detections, settings)
    embeddings = embeddings or profile is not None
    read = read_boxes(work, detections, models, settings, light, may_cascade(models, settings, light, embeddings))
    if profile is not None:
        profile.check_reader(models.reader.fingerprint)
    faces = read.face_probability()
    faces = np.ones(len(detections)) if faces is None else faces
    levels = settings.levels(models.tuning)
    face_threshold = _face_threshold(work, detections, faces, models.calibration.face_threshold,
                                     levels.dark_face_threshold, models.tuning.detection_sure)
    if faint and levels.faint_face_threshold is not None and read.face is not None:
        # the faces only the upright view found are read too, after the boxes the views agree on
        faint_read = read_boxes(work, faint, models, settings, light, may_cascade(models, settings, light, embeddings))
        detections, read = detections + faint, _joined(read, faint_read)
        faces = np.concatenate([faces, faint_read.face_probability()])
        face_threshold = np.concatenate([face_threshold, np.full(len(faint), levels.faint_face_threshold)])
        every_box = every_box + faint
    else:
        faint = []
    faint_box = np.arange(len(detections)) >= len(detections) - len(faint)
    return ReadFaces(work, detections, every_box, light, read, faces, face_threshold, faint_box, embeddings)


def may_cascade(models: Models, settings: ReadSettings, light: LightCorrection, embeddings: bool) -> bool:
    """May the crops be read by the reader's cascade, without their embeddings?"""
    return not (embeddings or needs_embedding(models, settings, light))


def read_boxes(
    work: WorkImage, detections: list[Detection], models: Models, settings: ReadSettings = DEFAULT_SETTINGS,
    light: LightCorrection | None = None, cascade: bool = False, face_bands: tuple[tuple[float, float], ...] = (),
) -> ReaderLogits:
    """The reader's logits for each detected box's crop, corrected for the photo's light
    (`light`; None: measured here, photo_light); with `cascade`, the crops its first part is sure
    of read by it alone (ReadSettings.reader_cascade: then without embeddings); with `face_bands`,
    a read for the face head alone (ReaderModel.logits)."""
    levels = settings.levels(models.tuning)
    return models.reader.logits(reader_crops(work, detections, models, settings, light), settings.reader_turns,
                                levels.reader_sure, levels.reader_sure_one,
                                levels.reader_cascade if cascade else 1.0, face_bands)


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


def _joined(a: ReaderLogits, b: ReaderLogits) -> ReaderLogits:
    """Two reads' logits, one after the other (an output one of them lacks: None)."""
    def both(x: np.ndarray | None, y: np.ndarray | None) -> np.ndarray | None:
        return None if x is None or y is None else np.concatenate([x, y])

    return ReaderLogits(both(a.value, b.value), both(a.color, b.color), both(a.face, b.face),  # type: ignore[arg-type]
                        both(a.embedding, b.embedding), both(a.agree, b.agree))


def _face_threshold(
    work: WorkImage, detections: list[Detection], faces: np.ndarray, calibrated: float, dark: float | None,
    detection_sure: float,
) -> np.ndarray:
    """Per box, the face probability it needs to be read as a die: the calibration's, or on a photo
    whose dice (the boxes that pass it, at least one) have dark bodies (inks.dark_bodies: told on
    the faces' discs, not their centres, which a bright numeral can fill),
    `dark` (ReadSettings.dark_face_threshold; None: none) for a box the detector is sure of
    (`detection_sure`: the unsure boxes the face head rates that low are mostly on a cube's side)."""
    out = np.full(len(detections), calibrated)
    if dark is None or dark >= calibrated:
        return out
    passing = [d.box for d, f in zip(detections, faces) if f >= calibrated]
    if not dark_bodies(work.rgb, passing):  # no dice to tell, or light ones
        return out
    out[[d.score >= detection_sure for d in detections]] = dark
    return out
