"""Stage 5 of reading a photo (pipeline.py): doubt. Which of the decided dice the player should
check, what to ask of each and the next likeliest face: the doubt model (doubt_model.py) weighs the
doubts' scores (doubts.py) and flags each die as likely wrong as its operating point or more."""

from __future__ import annotations

import numpy as np

from companion.dice import DiceSet
from companion.vision.decoder import DecodedDie, color_index, value_index
from companion.vision.detector import Detection
from companion.vision.doubt_model import DoubtModel
from companion.vision.doubts import PhotoContext, doubt_scores, runner_up
from companion.vision.image_io import WorkImage
from companion.vision.reading import DieReading
from companion.vision.stage4_decide import DecidedDice, usual_light
from companion.vision.tuning import Tuning


def doubt_dice(decided: DecidedDice, model: DoubtModel, dice_set: DiceSet,
               scores: np.ndarray | None = None) -> list[DieReading]:
    """The decided dice as read (in detection order), each flagged where the doubt model finds it
    as likely wrong as its operating point or more, or where a table's profile read it otherwise
    and its guard could not back that (`scores`: doubt_scores_of's, where already measured)."""
    scores = doubt_scores_of(decided, model.tuning) if scores is None else scores
    flagged = model.flags(scores) | decided.flags.get("unbacked", np.zeros(len(scores), dtype=bool))
    return [_reading(decided.image, decided.detections[d.index], d, bool(flagged[d.index]), scores[d.index], model,
                     decided.value_probs[d.index], decided.color_probs[d.index], dice_set) for d in decided.decoded]


def doubt_scores_of(decided: DecidedDice, tuning: Tuning) -> np.ndarray:
    """(n, doubts.FEATURES): per decided die, the doubts' continuous scores and the reader's margins
    (doubts.doubt_scores; what the doubt model weighs)."""
    return doubt_scores(_context(decided, tuning), decided.flags, decided.value_probs, decided.color_probs)


def _context(decided: DecidedDice, tuning: Tuning) -> PhotoContext:
    detections = decided.detections
    return PhotoContext(decided.image.rgb, detections, decided.faces, decided.value_logits, decided.color_logits,
                        decided.color_temperature, decided.decoded, decided.cast, usual_light(decided.cast),
                        decided.inks, decided.agree, decided.second,
                        np.array([d.score < tuning.detection_sure for d in detections], dtype=bool), tuning.doubts,
                        decided.side)


def _reading(work: WorkImage, det: Detection, d: DecodedDie, flagged: bool, scores: np.ndarray, model: DoubtModel,
             value_probs: np.ndarray, color_probs: np.ndarray, dice_set: DiceSet) -> DieReading:
    """One decoded die; where flagged, with what the model doubts most of it and the runner-up face."""
    if not flagged:
        return DieReading(d.face.value, d.face.color, d.confidence, work.to_full(det.box), d.die)
    doubt = model.kind(scores, float(value_probs[value_index(d.face.value)]), float(color_probs[color_index(d.face.color)]))
    return DieReading(d.face.value, d.face.color, d.confidence, work.to_full(det.box), d.die, uncertain=True,
                      doubt=doubt, runner_up=runner_up(value_probs, color_probs, d.face, dice_set))
