"""The doubts: what flags a die for the player to check beyond the decoder's own confidence.

The decoder's confidence is calibrated over all dice, but its sure misreads cluster where the
photo itself says something is off: the reader's quarter turns disagree, the photo's boxes are
already doubtful, the photo's inks dispute a colour, one die's value or colour or face is far less
sure than the photo's others', a box is far larger than the others, sits on ground of its own
body's colour (a flat print), is cut by the frame, or is a small face barely read. Measured
against the photo, not against one level, these spare photos where every die is less sure (a
look the training never had). Each doubt below is a named test over one photo's context; its
levels are the models' tuning (models/tuning.json, tuning.py), each chosen on the choosing sets.
"""


from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np

from companion.dice import Color, DiceSet, Face
from companion.vision.cubes import perspective
from companion.vision.decoder import VALUE_CLASSES, DecodedDie, color_index, value_index
from companion.vision.detector import Detection
from companion.vision.inks import Ink
from companion.vision.joint_colour import joint_colours
from companion.vision.reader import softmax
from companion.vision.tuning import DoubtLevels

# The detector clips its boxes at the image's edge: a box this near it touches the frame.
CUT_EDGE = 0.5


def turn_doubts(agree: np.ndarray | None, confidence: np.ndarray, levels: DoubtLevels) -> np.ndarray:
    """Per die: its turns disagree (`agree` False) and the decoder is under levels.turns_sure.
    `agree` None (a reader asked for one turn): no flag."""
    if agree is None:
        return np.zeros(len(confidence), dtype=bool)
    return ~np.asarray(agree, dtype=bool) & (np.asarray(confidence) < levels.turns_sure)


def doubtful_photo(weak: np.ndarray, second: np.ndarray, faces: np.ndarray, levels: DoubtLevels) -> np.ndarray:
    """Per box: in a photo where some box is weak or a possible second box on a cube, is the
    face head under levels.doubtful_face_sure? (All False in a photo without such a box.)"""
    faces = np.asarray(faces, dtype=np.float64)
    if not (np.asarray(weak, dtype=bool) | np.asarray(second, dtype=bool)).any():
        return np.zeros(len(faces), dtype=bool)
    return faces < levels.doubtful_face_sure


def doubted_photo(unsure: np.ndarray, confidence: np.ndarray, levels: DoubtLevels) -> np.ndarray:
    """Per die: the photo has at least levels.doubted_share of its dice flagged (`unsure`) and
    the decoder is under levels.doubted_sure of this one (`confidence`); or the photo has at least
    levels.doubted_all_share of its dice flagged.

    The decoder's confidence is calibrated over all photos, but a photo where a third of the
    dice already draw a flag is one whose scene confuses the reader (a strong tilt, blur, a
    faint warm-lit ink): there a die read at 0.96-0.98 is worth less than the same confidence
    in a clean photo. The player checks such a photo anyway; only its dice get a mark more."""
    unsure = np.asarray(unsure, dtype=bool)
    if not len(unsure) or unsure.mean() < levels.doubted_share:
        return np.zeros(len(unsure), dtype=bool)
    if unsure.mean() >= levels.doubted_all_share:
        return np.ones(len(unsure), dtype=bool)
    return np.asarray(confidence, dtype=np.float64) < levels.doubted_sure


def ink_doubts(color_logits: np.ndarray, inks: list[Ink], color_temperature: float, levels: DoubtLevels) -> np.ndarray:
    """Per die: the photo's inks, decided together against the reader's colour logits (n, 4) at
    color_temperature times levels.ink_doubt_temperature, move it to the other colour of its pair or
    dispute its colour (joint_colour.py). Only a flag: the colours stay the reader's."""
    if len(inks) == 0:
        return np.zeros(0, dtype=bool)
    joint = joint_colours(softmax(color_logits, color_temperature * levels.ink_doubt_temperature), inks)
    return joint.moved | joint.disputed


def faint_warm_inks(colors: list[Color | None], inks: list[Ink], levels: DoubtLevels) -> np.ndarray:
    """Per die (its colour as read, None: not read, and its ink measured on a dark body): read red
    or orange, and its ink's chroma under levels.faint_warm_share of the median of the photo's other red
    and orange dice (none other: no flag)."""
    chroma = np.array([ink.chroma for ink in inks], dtype=np.float64)
    warm = np.flatnonzero([c in (Color.RED, Color.ORANGE) for c in colors])
    out = np.zeros(len(colors), dtype=bool)
    for i in warm if len(warm) > 1 else ():
        out[i] = chroma[i] < levels.faint_warm_share * float(np.median(chroma[warm[warm != i]]))
    return out


def colour_margin_doubts(color_logits: np.ndarray, levels: DoubtLevels) -> np.ndarray:
    """Per die: the reader's colour logits (n, 4) put its colour over the next one by less than
    levels.colour_margin_share of the median margin of the photo's other dice (a photo of one die: no flag)."""
    return _margin_doubts(np.asarray(color_logits, dtype=np.float64).reshape(-1, 4), levels.colour_margin_share)


def value_margin_doubts(value_logits: np.ndarray, levels: DoubtLevels) -> np.ndarray:
    """Per die: the reader's value logits (n, 11) put its value over the next one by less than
    levels.value_margin_share of the median margin of the photo's other dice (a photo of one die: no flag)."""
    return _margin_doubts(np.asarray(value_logits, dtype=np.float64).reshape(-1, len(VALUE_CLASSES)), levels.value_margin_share)


def _leads(logits: np.ndarray) -> np.ndarray:
    """Per die: how far its top logit leads the next."""
    logits = np.asarray(logits, dtype=np.float64)
    logits = np.sort(logits.reshape(len(logits), -1), axis=1) if logits.size else logits.reshape(0, 2)
    return logits[:, -1] - logits[:, -2]


def _margin_doubts(logits: np.ndarray, share: float) -> np.ndarray:
    """Per die: its top logit leads the next by under `share` of the median lead of the others."""
    margin = _leads(logits)
    out = np.zeros(len(margin), dtype=bool)
    for i in range(len(margin) if len(margin) > 1 else 0):
        out[i] = margin[i] < share * float(np.median(np.delete(margin, i)))
    return out


def face_margin_doubts(faces: np.ndarray, perspective: float, levels: DoubtLevels) -> np.ndarray:
    """Per die: in a photo seen from well off vertical (`perspective`, cubes.perspective, at least
    levels.tilted_view), the face head's probability (`faces`) is under levels.face_share_below and its
    log-odds under levels.face_share of the median of the photo's other dice (a photo of one die: no flag)."""
    faces = np.asarray(faces, dtype=np.float64)
    out = np.zeros(len(faces), dtype=bool)
    if perspective < levels.tilted_view or len(faces) < 2:
        return out
    p = np.clip(faces, 1e-9, 1 - 1e-9)
    odds = np.log(p) - np.log1p(-p)
    for i in np.flatnonzero(faces < levels.face_share_below):
        out[i] = odds[i] < levels.face_share * float(np.median(np.delete(odds, i)))
    return out


def oversized_boxes(boxes: list[tuple[float, float, float, float]], levels: DoubtLevels) -> np.ndarray:
    """Per box (x0, y0, x1, y1): its longer side is over levels.oversized times the smallest longer
    side of the photo's other boxes (a photo of one box: no flag)."""
    sides = np.array([max(b[2] - b[0], b[3] - b[1]) for b in boxes], dtype=np.float64)
    out = np.zeros(len(sides), dtype=bool)
    for i in range(len(sides) if len(sides) > 1 else 0):
        out[i] = sides[i] > levels.oversized * float(np.delete(sides, i).min())
    return out


def body_like_ground(rgb: np.ndarray, box: tuple[float, float, float, float], levels: DoubtLevels) -> float:
    """The share of the ground around `box` (x0, y0, x1, y1), out to levels.flat_ring of its longer side,
    within levels.flat_body_tolerance of the median colour of the box's inner part (its face's body)."""
    x0, y0, x1, y1 = box
    h, w = rgb.shape[:2]
    grow = levels.flat_ring * max(x1 - x0, y1 - y0)
    gx0, gy0 = max(0, int(x0 - grow)), max(0, int(y0 - grow))
    gx1, gy1 = min(w, int(np.ceil(x1 + grow))), min(h, int(np.ceil(y1 + grow)))
    ix0, iy0 = int(x0 + 0.15 * (x1 - x0)), int(y0 + 0.15 * (y1 - y0))
    ix1, iy1 = int(np.ceil(x1 - 0.15 * (x1 - x0))), int(np.ceil(y1 - 0.15 * (y1 - y0)))
    inner = rgb[max(iy0, 0):max(iy1, iy0 + 1), max(ix0, 0):max(ix1, ix0 + 1)].reshape(-1, 3)
    ground = np.ascontiguousarray(rgb[gy0:gy1, gx0:gx1])
    if inner.size == 0 or ground.size == 0:
        return 0.0
    body = np.median(inner, axis=0)
    xs, ys = np.arange(gx0, gx1) + 0.5, np.arange(gy0, gy1) + 0.5
    outside = ((xs < x0) | (xs > x1))[None, :] | ((ys < y0) | (ys > y1))[:, None]
    if not outside.any():
        return 0.0
    # every channel within the tolerance, in the image's own code values: the ground is never
    # converted to floats (a tenth of the time on a 90 px box)
    reach = levels.flat_body_tolerance * 255.0
    near_body = cv2.inRange(ground, np.ceil(body - reach), np.floor(body + reach))
    return float(np.count_nonzero(near_body[outside]) / np.count_nonzero(outside))


def flat_prints(rgb: np.ndarray, boxes: list[tuple[float, float, float, float]], levels: DoubtLevels) -> np.ndarray:
    """Per box: the ground around it is body-like (body_like_ground) by over levels.flat_print_lead more
    than around any other box of the photo (a photo of one box: no flag)."""
    share = np.array([body_like_ground(rgb, b, levels) for b in boxes], dtype=np.float64)
    out = np.zeros(len(share), dtype=bool)
    for i in range(len(share) if len(share) > 1 else 0):
        out[i] = share[i] - float(np.delete(share, i).max()) > levels.flat_print_lead
    return out


def cut_boxes(boxes: list[tuple[float, float, float, float]], width: int, height: int, levels: DoubtLevels) -> np.ndarray:
    """Per box (x0, y0, x1, y1) in an image of `width` x `height`: it touches the image's edge
    (within CUT_EDGE) and its area is under levels.cut_area of the median area of the photo's other
    boxes, or it is the photo's only box."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    at_edge = ((b[:, 0] <= CUT_EDGE) | (b[:, 1] <= CUT_EDGE)
               | (b[:, 2] >= width - CUT_EDGE) | (b[:, 3] >= height - CUT_EDGE))
    out = np.zeros(len(b), dtype=bool)
    if len(b) == 1:  # no other box to measure it against
        return at_edge
    for i in np.flatnonzero(at_edge):
        out[i] = area[i] < levels.cut_area * float(np.median(np.delete(area, i)))
    return out


def small_faces(boxes: list[tuple[float, float, float, float]], value_logits: np.ndarray, levels: DoubtLevels) -> np.ndarray:
    """Per box (x0, y0, x1, y1, in the pixels of the image the reader cut it from): its shorter side
    is under levels.small_face and its value, by the reader's logits (n, 11), leads the next one by
    under levels.small_face_lead."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    shorter = np.minimum(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1])
    lead = _leads(np.asarray(value_logits, dtype=np.float64).reshape(-1, len(VALUE_CLASSES)))
    return (shorter < levels.small_face) & (lead < levels.small_face_lead)


# --- the doubts, as data: each a named test over one photo's context ------------------------------

# What a doubt is about, for the page to ask the right question: the value, the colour, or whether
# the box is a die's top face at all; None: the die as read (the less sure of its value and colour).
DoubtKind = Literal["value", "color", "die"]


@dataclass(frozen=True)
class PhotoContext:
    """What the doubts look at, for the dice read from one photo (per-die arrays in box order)."""

    rgb: np.ndarray  # the image the boxes were cut from
    detections: list[Detection]
    faces: np.ndarray  # the face head's probability
    value_logits: np.ndarray  # the reader's (n, 11)
    color_logits: np.ndarray  # the reader's (n, 4)
    color_temperature: float  # the calibration's
    decoded: list[DecodedDie]  # what the set's decoder read
    cast: float | None  # the light's cast (inks.light_cast; None: no white reference)
    usual_light: bool  # a white reference tells a light within the training look's
    inks: Callable[[], list[Ink]]  # the dice's inks, measured when first asked
    agree: np.ndarray | None  # did the reader's turns agree (None: one turn)
    second: np.ndarray  # maybe a second box on a cube (cubes.py)
    weak: np.ndarray  # the detector is unsure of the box
    levels: DoubtLevels  # the models' tuning (tuning.py)

    @property
    def boxes(self) -> list[tuple[float, float, float, float]]:
        return [d.box for d in self.detections]

    def confidence(self) -> np.ndarray:
        out = np.zeros(len(self.detections))
        out[[d.index for d in self.decoded]] = [d.confidence for d in self.decoded]
        return out

    def colours(self) -> list[Color | None]:
        out: list[Color | None] = [None] * len(self.detections)
        for d in self.decoded:
            out[d.index] = d.face.color
        return out


@dataclass(frozen=True)
class Doubt:
    """One doubt: its name (ReadSettings.disabled_doubts), what it is about, and its test, which
    flags dice of the photo (its levels are this module's constants)."""

    name: str
    kind: DoubtKind | None
    test: Callable[[PhotoContext], np.ndarray]


def _no_flags(ctx: PhotoContext) -> np.ndarray:
    return np.zeros(len(ctx.detections), dtype=bool)


def _ink_doubts(ctx: PhotoContext) -> np.ndarray:
    if not ctx.usual_light:  # elsewhere the inks already decided the colours (joint_colour.py)
        return _no_flags(ctx)
    return ink_doubts(ctx.color_logits, ctx.inks(), ctx.color_temperature, ctx.levels)


def _faint_warm_inks(ctx: PhotoContext) -> np.ndarray:
    if ctx.cast is not None:  # light bodies: inks measured against them, not raw
        return _no_flags(ctx)
    return faint_warm_inks(ctx.colours(), ctx.inks(), ctx.levels)


# Applied in this order (the flags add up: the order changes nothing), then doubted_photo over them.
DOUBTS: tuple[Doubt, ...] = (
    Doubt("ink_doubts", "color", _ink_doubts),
    Doubt("faint_warm_inks", "color", _faint_warm_inks),
    Doubt("second_boxes", "die", lambda ctx: ctx.second),
    Doubt("colour_margin", "color", lambda ctx: colour_margin_doubts(ctx.color_logits, ctx.levels)),
    Doubt("value_margin", "value", lambda ctx: value_margin_doubts(ctx.value_logits, ctx.levels)),
    Doubt("face_margin", "die", lambda ctx: face_margin_doubts(ctx.faces, perspective(ctx.detections), ctx.levels)),
    Doubt("oversized_boxes", "die", lambda ctx: oversized_boxes(ctx.boxes, ctx.levels)),
    Doubt("flat_prints", "die", lambda ctx: flat_prints(ctx.rgb, ctx.boxes, ctx.levels)),
    Doubt("cut_boxes", "die", lambda ctx: cut_boxes(ctx.boxes, ctx.rgb.shape[1], ctx.rgb.shape[0], ctx.levels)),
    Doubt("small_faces", "value", lambda ctx: small_faces(ctx.boxes, ctx.value_logits, ctx.levels)),
    Doubt("turn_disagreement", None, lambda ctx: turn_doubts(ctx.agree, ctx.confidence(), ctx.levels)),
    Doubt("doubtful_photos", "die", lambda ctx: doubtful_photo(ctx.weak, ctx.second, ctx.faces, ctx.levels)),
)
# The doubts raised before these, where the dice are decided (pipeline.py), by name: what each is about.
DECISION_DOUBTS: dict[str, DoubtKind | None] = {
    "decoder": None,  # the decoder's own confidence is under DecodeSettings.uncertain_below
    "weak_box": "die",  # the detector or the face head is unsure the box is a top face
    "unusual_light": None,  # under a light beyond the training look's, the reader is trusted less
    "unknown_light": None,  # ... and where no white reference tells the light
    "set_changes": None,  # the set's constraint read the die otherwise than the reader saw it
    "unbacked": None,  # a table's profile read it otherwise, and its guard could not back that
    "colour_moved": "color",  # the photo's inks, together, moved its colour (joint_colour.py)
    "colour_disputes": "color",  # ... or its ink disputes the reader's colour
    "missed_tops": "die",  # a top face beyond the box: the box is a side face (top_faces.py)
    "doubted_photos": None,  # many of the photo's dice are flagged: its less sure ones too
}
# The doubts ReadSettings.disabled_doubts may name (the others are the reading's own: never off).
SWITCHABLE = frozenset({d.name for d in DOUBTS} | set(DECISION_DOUBTS) - {"decoder", "weak_box", "colour_moved", "unbacked"})
KINDS: dict[str, DoubtKind | None] = {**DECISION_DOUBTS, **{d.name: d.kind for d in DOUBTS}}


def raised(ctx: PhotoContext, disabled: frozenset[str] = frozenset()) -> dict[str, np.ndarray]:
    """Per doubt of DOUBTS not `disabled`: the dice it flags."""
    return {d.name: np.asarray(d.test(ctx), dtype=bool) for d in DOUBTS if d.name not in disabled}


def doubt_of(names: list[str], value_prob: float, color_prob: float) -> DoubtKind:
    """What to ask of a flagged die whose doubts are `names`: whether it is a die at all where any
    doubt is about that, else the value or the colour where only one is doubted, else the less
    sure of the two (its decoded value's and colour's probabilities)."""
    kinds = {KINDS[name] for name in names}
    if "die" in kinds:
        return "die"
    if kinds & {"value", "color"} == {"color"}:
        return "color"
    if kinds & {"value", "color"} == {"value"}:
        return "value"
    return "value" if value_prob <= color_prob else "color"


def runner_up(value_probs: np.ndarray, color_probs: np.ndarray, read: Face, dice_set: DiceSet) -> Face | None:
    """The likeliest face of the set other than `read`, by the die's value (11) and colour (4)
    probabilities (None: the set has no other face)."""
    faces = sorted({f for die in dice_set.dice for f in die.faces if f != read}, key=lambda f: f.token)
    if not faces:
        return None
    score = [value_probs[value_index(f.value)] * color_probs[color_index(f.color)] for f in faces]
    return faces[int(np.argmax(score))]

