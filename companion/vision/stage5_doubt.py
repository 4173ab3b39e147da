"""Stage 5 of reading a photo (pipeline.py): doubt. Which of the decided dice the player should
check, what to ask of each and the next likeliest face (doubts.py holds the doubts)."""

from __future__ import annotations

import numpy as np

from companion.dice import DiceSet
from companion.vision.decoder import DecodedDie, color_index, value_index
from companion.vision.detector import Detection
from companion.vision.doubts import PhotoContext, doubt_of, doubt_scores, doubted_photo, raised, runner_up
from companion.vision.image_io import WorkImage
from companion.vision.reading import DieReading
from companion.vision.settings import ReadSettings
from companion.vision.stage4_decide import DecidedDice, usual_light
from companion.vision.tuning import Tuning


def doubt_dice(decided: DecidedDice, tuning: Tuning, settings: ReadSettings, dice_set: DiceSet) -> list[DieReading]:
    """The decided dice as read, each flagged when any doubt not disabled holds (in detection order)."""
    names = doubt_names(decided, tuning, settings)
    return [_reading(decided.image, decided.detections[d.index], d, names[d.index], decided.value_probs[d.index],
                     decided.color_probs[d.index], dice_set) for d in decided.decoded]


def doubt_names(decided: DecidedDice, tuning: Tuning, settings: ReadSettings) -> list[list[str]]:
    """Per kept box, the names of the doubts not disabled that hold for it."""
    detections = decided.detections
    flags = {**decided.flags, **raised(_context(decided, tuning), settings.disabled_doubts)}
    if "doubted_photos" not in settings.disabled_doubts:  # many dice flagged: the photo's less sure ones too
        flags["doubted_photos"] = _doubted(_any(flags, len(detections)), decided.decoded, tuning)
    return [[name for name, f in flags.items() if f[i]] for i in range(len(detections))]


def doubt_scores_of(decided: DecidedDice, tuning: Tuning) -> np.ndarray:
    """(n, doubts.FEATURES): per decided die, the doubts' continuous scores and the reader's margins
    (doubts.doubt_scores; what training/doubt_model.py fits a doubt model on)."""
    return doubt_scores(_context(decided, tuning), decided.flags, decided.value_probs, decided.color_probs)


def _context(decided: DecidedDice, tuning: Tuning) -> PhotoContext:
    detections = decided.detections
    return PhotoContext(decided.image.rgb, detections, decided.faces, decided.value_logits, decided.color_logits,
                        decided.color_temperature, decided.decoded, decided.cast, usual_light(decided.cast),
                        decided.inks, decided.agree, decided.second,
                        np.array([d.score < tuning.detection_sure for d in detections], dtype=bool), tuning.doubts,
                        decided.side)


def _any(flags: dict[str, np.ndarray], n: int) -> np.ndarray:
    out = np.zeros(n, dtype=bool)
    for flagged in flags.values():
        out |= flagged
    return out


def _doubted(unsure: np.ndarray, decoded: list[DecodedDie], tuning: Tuning) -> np.ndarray:
    """doubts.doubted_photo over the dice read, each flagged for `unsure` or the decoder's own
    doubt (a box no die was decoded from is left as it is)."""
    index = [d.index for d in decoded]
    flagged = unsure[index] | np.array([d.uncertain for d in decoded], dtype=bool)
    out = np.zeros(len(unsure), dtype=bool)
    out[index] = doubted_photo(flagged, np.array([d.confidence for d in decoded]), tuning.doubts)
    return out


def _reading(work: WorkImage, det: Detection, d: DecodedDie, doubts: list[str], value_probs: np.ndarray,
             color_probs: np.ndarray, dice_set: DiceSet) -> DieReading:
    """One decoded die; flagged when the decoder is unsure of its face or any of `doubts` (the names
    of those raised about it) holds, with what is doubted and the runner-up face then."""
    uncertain = d.uncertain or bool(doubts)
    if not uncertain:
        return DieReading(d.face.value, d.face.color, d.confidence, work.to_full(det.box), d.die)
    doubt = doubt_of(doubts, float(value_probs[value_index(d.face.value)]), float(color_probs[color_index(d.face.color)]))
    return DieReading(d.face.value, d.face.color, d.confidence, work.to_full(det.box), d.die, uncertain=True,
                      doubt=doubt, runner_up=runner_up(value_probs, color_probs, d.face, dice_set))
