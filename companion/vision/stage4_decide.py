"""Stage 4 of reading a photo (pipeline.py): decide the dice with the set.

Each kept box's value and colour probabilities (the reader's, calibrated; the colour head's for a
corrected light; a table's profile's) go to the set's decoder (decoder.py), which reads them
together as distinct dice of the set; the photo's inks may move the colours the reader is unsure
of (joint_colour.py). What the decision itself doubts is kept by name (doubts.DECISION_DOUBTS).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from companion.dice import DiceSet, Face
from companion.vision.decoder import COLOR_CLASSES, VALUE_CLASSES, DecodedDie, decode
from companion.vision.detector import Detection
from companion.vision.image_io import WorkImage
from companion.vision.ink_look import ink_looks
from companion.vision.inks import Ink, measure_inks
from companion.vision.joint_colour import HUE_SPREAD, UNUSUAL_HUE_SPREAD, joint_colours, split_inks
from companion.vision.light_colour import ink_features, photo_kind
from companion.vision.models import Models
from companion.vision.profile import Profile
from companion.vision.reader import softmax
from companion.vision.settings import ReadSettings
from companion.vision.stage3_one_per_cube import KeptBoxes
from companion.vision.tuning import Tuning
from companion.vision.white_balance import BALANCE_CAST, UNUSUAL_COLOUR_TEMPERATURE

# The photo's light, told by its light dice bodies (inks.light_cast): beyond UNUSUAL_CAST the
# light is more coloured than nearly all the training look's; the crops were then corrected
# towards the training light (white_balance.py) and the reader, still overconfident there, is
# trusted only from the tuning's unusual_light_sure (so is a photo whose light is untold).
UNUSUAL_CAST = BALANCE_CAST


@dataclass(frozen=True)
class DecidedDice:
    """The dice decided from the kept boxes (per-box arrays over `detections`, the kept boxes)."""

    image: WorkImage  # the image the boxes are in
    detections: list[Detection]
    faces: np.ndarray  # the face head's probability
    value_logits: np.ndarray  # the reader's (n, 11)
    color_logits: np.ndarray  # the reader's (n, 4)
    color_temperature: float  # the calibration's, for the reader's colour logits
    value_probs: np.ndarray  # what the decoder decided on (n, 11)
    color_probs: np.ndarray  # ... (n, 4): the joint colours where they moved any
    decoded: list[DecodedDie]
    flags: dict[str, np.ndarray]  # per doubt raised in deciding (doubts.DECISION_DOUBTS), the boxes it flags
    cast: float | None  # the light's cast (inks.light_cast; None: no white reference)
    inks: Callable[[], list[Ink]]  # the boxes' inks, measured when first asked
    agree: np.ndarray | None  # did the reader's turns agree (None: one turn)
    second: np.ndarray  # maybe a second box on a cube (cubes.py)
    lone: np.ndarray  # maybe a side face whose top face was missed (top_faces.py)
    side: np.ndarray  # the cube model's probability that the box is a side face (0 without one)
    embedding: np.ndarray | None = None  # the reader's, of the kept boxes' crops
    base_probs: tuple[np.ndarray, np.ndarray] | None = None  # value and colour probabilities before any profile
    light_kind: str | None = None  # light_colour.photo_kind: which colour head read the colours
    looks: Callable[[], np.ndarray] | None = None  # the boxes' ink looks (ink_look.py), measured when first asked


def decide_dice(
    kept: KeptBoxes, models: Models, settings: ReadSettings, dice_set: DiceSet, profile: Profile | None = None,
) -> DecidedDice:
    """The set's reading of the kept boxes, and what deciding it doubted."""
    keep, read, work = kept.keep, kept.read, kept.work
    cal = models.calibration
    detections = [kept.detections[i] for i in keep]
    boxes = [d.box for d in detections]  # in the pixels of `work`, which the crops were cut from
    value_logits, color_logits = read.value[keep], read.color[keep]
    value_probs = softmax(value_logits, cal.value_temperature)
    cast = kept.cast
    embedding = None if read.embedding is None else read.embedding[keep]
    # the kept faces' inks, against their bodies where these are a white reference: measured
    # once, when first asked (the colour head, the joint colours and the ink doubts ask alike)
    inks = functools.cache(lambda: measure_inks(work.rgb, boxes, light=cast is not None))
    # how the inks look against their bodies (ink_look.py): for a profile that learnt them, and learning
    looks = functools.cache(lambda: ink_looks(work.rgb, boxes, light=cast is not None))
    kind = photo_kind(kept.light, cast)
    color_probs = colour_probs(models, kind, color_logits, embedding, settings, inks)
    base_probs = (value_probs, color_probs)
    unbacked = np.zeros(len(detections), dtype=bool)
    if profile is not None:  # what this table's confirmed dice taught, before the set's constraint
        applied = profile.apply(embedding, value_probs, color_probs, looks() if profile.uses_inks else None)
        value_probs, color_probs, unbacked = applied.value_probs, applied.color_probs, applied.unbacked
    faces = kept.faces[keep]
    decoded = decode(value_probs, color_probs, dice_set, settings.levels(models.tuning).decoding)
    flags = _decision_flags(detections, value_probs, color_probs, decoded, settings)
    flags["unbacked"] = unbacked  # the profile read it otherwise, and its guard could not back that
    if settings.joint_colour:
        decoded, flags, color_probs = _joint_decode(detections, faces, value_probs, color_probs, decoded, flags,
                                                    cast, inks, dice_set, settings, models.tuning)
    flags["missed_tops"] = kept.lone[keep]  # a side face read alone (kept_boxes: unless "missed_tops" is off)
    return DecidedDice(work, detections, faces, value_logits, color_logits, cal.color_temperature, value_probs,
                       color_probs, decoded, flags,
                       cast, inks, None if read.agree is None else read.agree[keep], kept.second[keep],
                       kept.lone[keep], kept.side[keep], embedding, base_probs, kind, looks)


def usual_light(cast: float | None) -> bool:
    """The photo has a white reference and its light is within the training look's (UNUSUAL_CAST)."""
    return cast is not None and cast <= UNUSUAL_CAST


def colour_probs(models: Models, light: str | None, color_logits: np.ndarray, embedding: np.ndarray | None,
                  settings: ReadSettings, inks: Callable[[], list[Ink]]) -> np.ndarray:
    """The colour probabilities of the dice read: from the colour head learnt for the photo's
    light (`light`: light_colour.photo_kind) where the models have one, else the reader's, less
    sure of crops corrected from a light beyond the training look's than of the training look's."""
    heads = models.light_colour if settings.light_colour_head else None
    head = None if heads is None else heads.get(light, models.reader.fingerprint)
    if head is not None and embedding is not None:
        features = ink_features(inks()) if head.inks else None
        return softmax(head.logits(embedding, color_logits, features), head.temperature)
    return softmax(color_logits, UNUSUAL_COLOUR_TEMPERATURE if light == "corrected" else models.calibration.color_temperature)


def _joint_decode(
    detections: list[Detection], faces: np.ndarray, value_probs: np.ndarray, color_probs: np.ndarray,
    alone: list[DecodedDie], alone_flags: dict[str, np.ndarray], cast: float | None, inks: Callable[[], list[Ink]],
    dice_set: DiceSet, settings: ReadSettings, tuning: Tuning,
) -> tuple[list[DecodedDie], dict[str, np.ndarray], np.ndarray]:
    """The dice decoded with the colours the photo's inks decide together (joint_colour.py), which
    to flag, and the colour probabilities decided on: whatever the reading of each die alone flags,
    every die the photo reads otherwise, and every die whose ink disputes the reader's colour (a
    change is never silent, and surer colours never hide a die's other doubts). On light bodies
    under the training look's light each pair's dice are split between two inks of the photo's
    own (joint_colour.split_inks: no usual hue)."""
    usual = usual_light(cast)
    if usual and not settings.usual_light_joint:
        return alone, alone_flags, color_probs
    if usual:  # light bodies under the training look's light: the photo's own inks, no usual hue
        joint = split_inks(color_probs, inks(), tuning.inks)
    else:  # under a light beyond the training look's one ink's dice are measured farther apart
        spread = UNUSUAL_HUE_SPREAD if cast is not None and cast > UNUSUAL_CAST else HUE_SPREAD
        joint = joint_colours(color_probs, inks(), spread=spread, dark=cast is None)
    decoded = decode(value_probs, joint.probs, dice_set, settings.levels(tuning).decoding)
    # the set's constraint is still judged against what the reader itself saw
    flags = _merged(_decision_flags(detections, value_probs, color_probs, decoded, settings), alone_flags, len(detections))
    flags["colour_moved"] = joint.moved | np.array([d.face != a.face for d, a in zip(decoded, alone)], dtype=bool)
    if "colour_disputes" not in settings.disabled_doubts:
        flags["colour_disputes"] = np.asarray(joint.disputed, dtype=bool)
    return decoded, flags, joint.probs


def _decision_flags(
    detections: list[Detection], value_probs: np.ndarray, color_probs: np.ndarray, decoded: list[DecodedDie],
    settings: ReadSettings,
) -> dict[str, np.ndarray]:
    """Per doubt raised where the dice are decided (doubts.DECISION_DOUBTS), the boxes it flags: a
    die the set's constraint read otherwise than the reader saw it (the set cannot produce what it
    saw: something was misread)."""
    flags = {}
    if "set_changes" not in settings.disabled_doubts:
        flags["set_changes"] = np.zeros(len(detections), dtype=bool)
        for d in decoded:
            # what the reader saw on the face, before the set had its say
            seen = Face(VALUE_CLASSES[int(value_probs[d.index].argmax())],
                        COLOR_CLASSES[int(color_probs[d.index].argmax())])
            flags["set_changes"][d.index] = d.face != seen
    return flags


def _merged(a: dict[str, np.ndarray], b: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """Two sets of named flags over the same `n` boxes, each name's flags joined."""
    return {name: a.get(name, np.zeros(n, dtype=bool)) | b.get(name, np.zeros(n, dtype=bool)) for name in {**a, **b}}
