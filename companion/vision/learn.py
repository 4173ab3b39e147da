"""Adding a confirmed photo's dice to a dice-set profile (companion/vision/profile.py).

The players' confirmation gives, for each die, its box in the photo and its face. What the
profile keeps of a die is what the reading computed of it before any profile: the reader's
embedding of its crop, its calibrated values and the colours of the photo's colour head
(read_features.py). A die the photo's reading boxed takes them from the reading; any other (a
die typed in and pointed at, every die of a label file) is cut as the pipeline cuts a detected
box (from the sharper copy when the faces are small, as find_faces would) and read, its colours
by the colour head of the photo's light (told by the reading, else by the confirmed dice's
bodies, as the pipeline tells it by the kept dice's).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from companion.dice import Face
from companion.vision.crops import box_crop
from companion.vision.decoder import color_index, value_index
from companion.vision.image_io import WorkImage, load_detail, load_work_image
from companion.vision.models import Models
from companion.vision.ink_look import LOOK_DIMS, ink_looks
from companion.vision.inks import cast_of, light_reference, measure_inks
from companion.vision.light_colour import photo_kind
from companion.vision.pipeline import DEFAULT_SETTINGS
from companion.vision.read_features import ReadFeatures
from companion.vision.stage1_find_faces import zoom_for_faces
from companion.vision.tuning import SearchLevels
from companion.vision.profile import Profile, ProfileError
from companion.vision.reader import softmax
from companion.vision.reading import Box
from companion.vision.settings import ReadSettings
from companion.vision.stage4_decide import colour_probs
from companion.vision.white_balance import LightCorrection, correction_of, light_correction

# A box may stick out of the photo by this many pixels (rounding in a label file) and is
# then cut back to the photo.
BOX_SLACK = 2.0


class LabelError(ValueError):
    """A confirmed die that cannot be learnt from: its box is not inside the photo."""


@dataclass(frozen=True, slots=True)
class ConfirmedDie:
    face: Face
    box: Box  # pixels of the upright full-size photo, around the top face
    # a player looked at it (or corrected it, or typed it in and pointed at it); False: the
    # reader's own guess, confirmed with the photo (profile.py: it teaches less)
    checked: bool = True


def learn_photo(profile: Profile | None, photo: str, source: bytes | str | os.PathLike | WorkImage,
                dice: Sequence[ConfirmedDie], models: Models, settings: ReadSettings = DEFAULT_SETTINGS,
                seen: ReadFeatures | None = None) -> Profile:
    """`profile` (None: a new one) with the dice of one confirmed photo added under the name
    `photo` (replacing what that name held). `seen`: the photo's reading's features (None: the
    confirmed boxes are read alone). Raises ImageError for a photo that cannot be read, LabelError for a box
    outside it, ProfileError for a reader without an embedding or a profile of another reader;
    the profile given is never changed (profiles are values)."""
    reader = models.reader
    if not reader.has_embedding:
        raise ProfileError("the reader has no embedding output: make it with python -m training.reader_embedding")
    if profile is not None:
        profile.check_reader(reader.fingerprint)
    work = source if isinstance(source, WorkImage) else load_work_image(source)
    boxes = [_inside(d.box, work, i) for i, d in enumerate(dice)]
    if not dice:
        return profile if profile is not None else Profile.empty(reader.fingerprint, embedding_width(models))
    rows = seen.matches(boxes) if seen is not None else [None] * len(boxes)
    alone = [i for i, row in enumerate(rows) if row is None]
    read = _read_alone(work, [boxes[i] for i in alone], models, settings, seen) if alone else None
    # per die: (features, row) of the reading where it boxed the die, else of the dice read alone
    taken = [(seen, row) if row is not None else (read, alone.index(i)) for i, row in enumerate(rows)]
    emb, value, color, face = ([getattr(f, name)[k] for f, k in taken]
                               for name in ("embedding", "value_probs", "color_probs", "face"))
    looks = [_look(f, k) for f, k in taken]
    start = profile if profile is not None else Profile.empty(reader.fingerprint, len(emb[0]))
    return start.add(photo, np.stack(emb), [value_index(d.face.value) for d in dice],
                     [color_index(d.face.color) for d in dice], np.stack(value), np.stack(color),
                     np.asarray(face, np.float32), [d.checked for d in dice], np.stack(looks))


def _look(features: ReadFeatures | None, row: int) -> np.ndarray:
    """How die `row`'s ink looks (ink_look.py), NaN where the reading measured none."""
    if features is None or features.ink is None:
        return np.full(LOOK_DIMS, np.nan, np.float32)
    return features.ink[row]


def _read_alone(work: WorkImage, boxes: list[Box], models: Models, settings: ReadSettings,
                seen: ReadFeatures | None) -> ReadFeatures:
    """Dice the reading did not box, read as the pipeline reads a detected box: the colours by
    the colour head of the photo's light where the reading told it."""
    reader = models.reader
    image = _crop_source(work, boxes, models.tuning.search)
    in_work = [image.to_work(b) for b in boxes]
    crops = np.stack([box_crop(image.rgb, b, reader.size) for b in in_work])
    if settings.balance_light:  # the crops as a reading of this photo sees them (white_balance.py)
        crops = light_correction(image.rgb, in_work).apply(crops)
    levels = settings.levels(models.tuning)
    read = reader.logits(crops, settings.reader_turns, levels.reader_sure, levels.reader_sure_one)
    if read.embedding is None:  # has_embedding said otherwise: a broken file
        raise ProfileError("the reader gave no embedding")
    cal = models.calibration
    kind, white = (seen.light_kind, seen.white_reference) if seen is not None else _light_of(image, in_work, settings)
    color = colour_probs(models, kind, read.color, read.embedding, settings,
                         lambda: measure_inks(image.rgb, in_work, light=white))
    face = read.face_probability()
    return ReadFeatures(np.asarray(boxes, np.float64), read.embedding, softmax(read.value, cal.value_temperature),
                        color, np.ones(len(boxes), np.float32) if face is None else np.asarray(face, np.float32),
                        kind, white, ink_looks(image.rgb, in_work, light=white))


def _light_of(image: WorkImage, boxes: list[Box], settings: ReadSettings) -> tuple[str | None, bool]:
    """The photo's light as its colour heads are chosen (light_colour.photo_kind), told by the
    confirmed dice's bodies as the pipeline tells it by the kept dice's; and whether they are a
    white reference."""
    reference = light_reference(image.rgb, boxes)
    light = correction_of(reference) if settings.balance_light else LightCorrection()
    return photo_kind(light, None if reference is None else cast_of(reference)), reference is not None


def _inside(box: Box, work: WorkImage, index: int) -> Box:
    x0, y0, x1, y1 = (float(v) for v in box)
    w, h = work.full_width, work.full_height
    if not all(np.isfinite((x0, y0, x1, y1))) or x1 <= x0 or y1 <= y0:
        raise LabelError(f"die {index + 1}: box {list(box)} is not [x0, y0, x1, y1] with x0 < x1 and y0 < y1")
    if x0 < -BOX_SLACK or y0 < -BOX_SLACK or x1 > w + BOX_SLACK or y1 > h + BOX_SLACK:
        raise LabelError(f"die {index + 1}: box {list(box)} lies outside the {w} x {h} photo")
    return (max(0.0, x0), max(0.0, y0), min(float(w), x1), min(float(h), y1))


def _crop_source(work: WorkImage, boxes: list[Box], levels: SearchLevels) -> WorkImage:
    """The image the pipeline would cut these faces from: the sharper copy when they are small."""
    zoom = zoom_for_faces([max(b[2] - b[0], b[3] - b[1]) / work.scale_x for b in boxes], levels)
    return work if zoom <= 1.0 else load_detail(work, round(work.long_side * zoom))


def embedding_width(models: Models) -> int:
    """How many values the reader's embedding of a crop has."""
    crop = np.zeros((1, models.reader.size, models.reader.size, 3), np.uint8)
    embedding = models.reader.logits(crop, 1).embedding
    if embedding is None:
        raise ProfileError("the reader gave no embedding")
    return int(embedding.shape[1])
