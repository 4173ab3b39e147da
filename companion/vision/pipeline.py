"""read_image: photo in, dice out. Load -> detect top faces -> read each crop -> decode with the set."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.dice import DiceSet, standard_set
from companion.vision.crops import box_crop
from companion.vision.decoder import MAX_DICE, DecodeSettings, decode
from companion.vision.image_io import WorkImage, load_work_image
from companion.vision.models import Detection, Models, load_models, softmax
from companion.vision.reading import DieReading, Reading

# A reading is also flagged when the detector itself is unsure the box is a die's top face.
DETECTION_SURE = 0.5


@dataclass(frozen=True)
class Analysis:
    """Everything one reading computed, for evaluation and calibration (in detection order)."""

    detections: list[Detection]
    value_logits: np.ndarray  # (n, 11)
    color_logits: np.ndarray  # (n, 4)
    dice: list[DieReading]  # dice[i] belongs to detections[i]


def analyse(
    work: WorkImage, models: Models, dice_set: DiceSet | None = None, settings: DecodeSettings = DecodeSettings()
) -> Analysis:
    detections = models.detector.detect(work.rgb)
    # more boxes than dice in the set: the weakest cannot all be dice; keep the 10 surest
    detections = sorted(detections, key=lambda d: -d.score)[:MAX_DICE]
    if not detections:
        return Analysis([], np.zeros((0, 11)), np.zeros((0, 4)), [])
    crops = np.stack([box_crop(work.rgb, d.box, models.reader.size) for d in detections])
    value_logits, color_logits = models.reader.logits(crops)
    cal = models.calibration
    decoded = decode(
        softmax(value_logits, cal.value_temperature),
        softmax(color_logits, cal.color_temperature),
        dice_set or standard_set(),
        settings,
    )
    dice = [_reading(work, detections[d.index], d) for d in decoded]
    return Analysis(detections, value_logits, color_logits, dice)


def read_work_image(
    work: WorkImage, models: Models, dice_set: DiceSet | None = None, settings: DecodeSettings = DecodeSettings()
) -> list[DieReading]:
    """Read the dice of an already loaded photo (boxes in full-size upright pixels)."""
    readings = analyse(work, models, dice_set, settings).dice
    # reading order: top to bottom, then left to right, by rows of about one die's height
    return sorted(readings, key=lambda r: (round(r.box[1] / max(r.box[3] - r.box[1], 1)), r.box[0]))


def _reading(work: WorkImage, det: Detection, d) -> DieReading:
    return DieReading(
        value=d.face.value,
        color=d.face.color,
        confidence=d.confidence,
        box=work.to_full(det.box),
        die=d.die,
        uncertain=d.uncertain or det.score < DETECTION_SURE,
        polygon=None,
    )


def read_image(source: bytes | str | os.PathLike, models_folder: Path | None = None) -> Reading:
    """Read every die in a photo (JPEG, PNG or WebP; bytes or a path).

    Raises ImageError for data that is not an image, is broken, or is too large to decode
    safely; a photo without dice gives a Reading with an empty list.
    """
    start = time.perf_counter()
    work = load_work_image(source)  # bad input fails before the models are even loaded
    models = load_models(models_folder)
    dice = read_work_image(work, models)
    ms = (time.perf_counter() - start) * 1000
    return Reading(work.full_width, work.full_height, dice, ms)
