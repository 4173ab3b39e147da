"""The doubts: what the doubt model (doubt_model.py) weighs beyond the decoder's own confidence.

The decoder's confidence is calibrated over all dice, but its sure misreads cluster where the
photo itself says something is off: the reader's quarter turns disagree, the photo's boxes are
already doubtful, the photo's inks dispute a colour, one die's value or colour or face is far less
sure than the photo's others', a box is far larger than the others, sits on ground of its own
body's colour (a flat print), is cut by the frame, or is a small face barely read. Each doubt is a
continuous score over one photo's context (FEATURES), and its distance to a level of the models'
tuning (MARGINS; models/tuning.json, tuning.py); the doubt model weighs them all.
"""


from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np

from companion.dice import Color, DiceSet, Face
from companion.vision.cubes import perspective
from companion.vision.decoder import DecodedDie, color_index, value_index
from companion.vision.detector import Detection
from companion.vision.inks import Ink
from companion.vision.joint_colour import joint_colours
from companion.vision.reader import softmax
from companion.vision.tuning import DoubtLevels, Tuning
from companion.vision.white_balance import BALANCE_CAST

# The detector clips its boxes at the image's edge: a box this near it touches the frame.
CUT_EDGE = 0.5


def _leads(logits: np.ndarray) -> np.ndarray:
    """Per die: how far its top logit leads the next."""
    logits = np.asarray(logits, dtype=np.float64)
    logits = np.sort(logits.reshape(len(logits), -1), axis=1) if logits.size else logits.reshape(0, 2)
    return logits[:, -1] - logits[:, -2]


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


# --- the photo's context, which the doubts' scores are measured over --------------------------------

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
    side: np.ndarray | None = None  # the cube model's probability that the box is a side face (None: no model)

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


# The flags raised where the dice are decided (stage4_decide.py), by name, that are doubt scores too.
DECISION_DOUBTS: dict[str, DoubtKind | None] = {
    "set_changes": None,  # the set's constraint read the die otherwise than the reader saw it
    "unbacked": None,  # a table's profile read it otherwise, and its guard could not back that (always flagged)
    "colour_moved": "color",  # the photo's inks, together, moved its colour (joint_colour.py)
    "colour_disputes": "color",  # ... or its ink disputes the reader's colour
    "missed_tops": "die",  # a top face beyond the box: the box is a side face (top_faces.py)
}
# The decision flags ReadSettings.disabled_doubts may switch off (their scores then read 0).
SWITCHABLE = frozenset({"set_changes", "colour_disputes", "missed_tops"})


def runner_up(value_probs: np.ndarray, color_probs: np.ndarray, read: Face, dice_set: DiceSet) -> Face | None:
    """The likeliest face of the set other than `read`, by the die's value (11) and colour (4)
    probabilities (None: the set has no other face)."""
    faces = sorted({f for die in dice_set.dice for f in die.faces if f != read}, key=lambda f: f.token)
    if not faces:
        return None
    score = [value_probs[value_index(f.value)] * color_probs[color_index(f.color)] for f in faces]
    return faces[int(np.argmax(score))]


# --- the doubts as scores: what a fitted doubt model weighs (training/doubt_model.py) -------------

# Per score, what it is about: the doubt model asks whether a flagged die is a die at all where its
# scores about the box ("die") weigh most (doubt_model.py: DoubtModel.kind).
FEATURES: dict[str, DoubtKind | None] = {
    "confidence": None,  # the decoder's confidence in the face, as log-odds
    "value_prob": "value",  # the decided value's probability, as log-odds
    "colour_prob": "color",  # the decided colour's probability, as log-odds
    "value_lead": "value",  # the reader's value log-odds over the next value
    "colour_lead": "color",  # ... its colour's over the next colour
    "value_lead_share": "value",  # log of the value lead over the median of the photo's other dice's
    "colour_lead_share": "color",  # ... the colour lead's
    "face": "die",  # the face head's log-odds that the box is a die's top face
    "face_share": "die",  # those log-odds less the median of the photo's other dice's
    "face_share_tilted": "die",  # ... times the view's perspective (capped at 1): a side face shows in tilted views
    "perspective": None,  # how strongly the photo's faces grow toward the camera (cubes.perspective)
    "detection": "die",  # the detector's score
    "second_box": "die",  # maybe a second box on a cube (cubes.py): 0 or 1
    "side_face": "die",  # the cube model's probability that the box is a side face (cubes.py; 0 without it)
    "photo_second": "die",  # another box of the photo is maybe a second box on a cube: 0 or 1
    "photo_weakest": None,  # the detector's lowest score among the photo's other boxes
    "missed_top": "die",  # a top face beyond the box was missed: a side face (top_faces.py): 0 or 1
    "turns_disagree": None,  # the reader's turns disagree: 0 or 1
    "set_changes": None,  # the set's constraint read it otherwise than the reader saw it: 0 or 1
    "colour_moved": "color",  # the photo's inks, decided together, moved its colour: 0 or 1
    "colour_disputed": "color",  # ... or its ink disputes the colour: 0 or 1
    "ink_against": "color",  # log-odds of the other colour of its pair over its own, by the photo's inks
    "faint_warm": "color",  # on dark bodies, log of its warm ink's chroma over the photo's other warm inks'
    "size_share": "die",  # log of its longer side over the smallest other box's
    "flat_lead": "die",  # its body-like ground less the most of any other box's
    "at_edge": "die",  # the box touches the photo's edge: 0 or 1
    "edge_area": "die",  # at the edge, log of its area over the median of the other boxes'
    "shorter_side": "value",  # log of the box's shorter side in the pixels it was read in
    "cast": None,  # the light's cast told by the dice's bodies (0: none told)
    "no_reference": None,  # no light body tells the light (dark bodies): 0 or 1
    "photo_unsure": None,  # the mean doubt (1 - confidence) of the photo's other dice
    "dice": None,  # how many dice the photo reads
}
# Each doubt as one score, from FEATURES' (doubt_margins): how far the die lies beyond the doubt's
# level (the tuning's), its gate included (over 0: beyond it; under 0: by how far it is not). The
# doubt model may weigh each doubt as one level would, or otherwise.
MARGINS: dict[str, DoubtKind | None] = {
    "small_face_margin": "value",  # under small_face pixels with a lead under small_face_lead
    "value_margin": "value",  # the value lead's share of the others' under value_margin_share
    "colour_margin": "color",  # under colour_margin_share
    "face_margin": "die",  # a tilted view, the face under face_share_below and the others'
    "doubtful_photo_margin": "die",  # a weak or second box in the photo, the face under doubtful_face_sure
    "turns_margin": None,  # the turns disagree and the decoder is under turns_sure
    "light_margin": None,  # a light no white reference tells, or beyond the usual: the decoder under unusual_light_sure
    "oversized_margin": "die",  # over `oversized` times the smallest other box
    "flat_print_margin": "die",  # a body-like ground over flat_print_lead above the others'
    "cut_margin": "die",  # at the edge with under cut_area of the others' median area
    "faint_warm_margin": "color",  # a warm ink's chroma under faint_warm_share of the others'
}
ALL_FEATURES: dict[str, DoubtKind | None] = {**FEATURES, **MARGINS}
# A margin whose doubt does not apply to the die (no gate passed): this far under its level.
NOT_APPLIED = -10.0


def _log_odds(p: np.ndarray, low: float = -12.0, high: float = 12.0) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-9, 1 - 1e-9)
    return np.clip(np.log(p) - np.log1p(-p), low, high)


def _others(x: np.ndarray, reduce: Callable[[np.ndarray], float], alone: float) -> np.ndarray:
    """Per die, `reduce` over the photo's other dice (`alone` for a photo of one)."""
    return np.array([reduce(np.delete(x, i)) if len(x) > 1 else alone for i in range(len(x))], dtype=np.float64)


def _ink_against(ctx: PhotoContext, colours: list[Color | None]) -> np.ndarray:
    """Per die: the log-odds of the other colour of its pair over its own, after the photo's inks
    are weighed against the reader's softened colours as ink_doubts does (0 where they are not asked)."""
    out = np.zeros(len(colours))
    if not ctx.usual_light or not colours:
        return out
    joint = joint_colours(softmax(ctx.color_logits, ctx.color_temperature * ctx.levels.ink_doubt_temperature), ctx.inks())
    partner = {Color.RED: Color.ORANGE, Color.ORANGE: Color.RED, Color.GREEN: Color.BLUE, Color.BLUE: Color.GREEN}
    probs = np.clip(joint.probs, 1e-9, 1.0)
    for i, c in enumerate(colours):
        if c is not None:
            out[i] = np.log(probs[i, color_index(partner[c])]) - np.log(probs[i, color_index(c)])
    return np.clip(out, -12.0, 12.0)


def _faint_warm(ctx: PhotoContext, colours: list[Color | None]) -> np.ndarray:
    """Per die read red or orange on dark bodies: log of its ink's chroma over the median of the
    photo's other red and orange dice's (0 elsewhere: faint_warm_inks's measure)."""
    out = np.zeros(len(colours))
    warm = np.flatnonzero([c in (Color.RED, Color.ORANGE) for c in colours])
    if ctx.cast is not None or len(warm) < 2:
        return out
    chroma = np.array([ink.chroma for ink in ctx.inks()], dtype=np.float64)
    for i in warm:
        other = float(np.median(chroma[warm[warm != i]]))
        out[i] = np.log((chroma[i] + 1e-3) / (other + 1e-3))
    return np.clip(out, -6.0, 3.0)


def doubt_scores(ctx: PhotoContext, decided: dict[str, np.ndarray], value_probs: np.ndarray,
                 colour_probs: np.ndarray) -> np.ndarray:
    """(n, len(FEATURES)): per box of the photo, the doubts' continuous scores and the reader's
    margins, in FEATURES' order. `decided`: the flags raised where the dice were decided
    (DECISION_DOUBTS' names; one missing reads as all False); `value_probs` (n, 11) and
    `colour_probs` (n, 4): what the decoder decided from."""
    n = len(ctx.detections)
    if n == 0:
        return np.zeros((0, len(FEATURES)))
    colours = ctx.colours()
    values: list[Face | None] = [None] * n
    for d in ctx.decoded:
        values[d.index] = d.face
    decided_value = np.array([value_probs[i, value_index(f.value)] if f is not None else 0.0
                              for i, f in enumerate(values)])
    decided_colour = np.array([colour_probs[i, color_index(f.color)] if f is not None else 0.0
                               for i, f in enumerate(values)])
    confidence = ctx.confidence()
    value_lead = np.clip(_leads(np.asarray(ctx.value_logits).reshape(n, -1)), 0.0, 40.0)
    colour_lead = np.clip(_leads(np.asarray(ctx.color_logits).reshape(n, -1)), 0.0, 40.0)
    face = _log_odds(ctx.faces)
    view = perspective(ctx.detections)
    face_share = face - _others(face, lambda x: float(np.median(x)), float(face[0]) if n else 0.0)
    boxes = np.asarray(ctx.boxes, dtype=np.float64).reshape(-1, 4)
    sides = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    ground = np.array([body_like_ground(ctx.rgb, b, ctx.levels) for b in ctx.boxes], dtype=np.float64)
    height, width = ctx.rgb.shape[:2]
    at_edge = ((boxes[:, 0] <= CUT_EDGE) | (boxes[:, 1] <= CUT_EDGE)
               | (boxes[:, 2] >= width - CUT_EDGE) | (boxes[:, 3] >= height - CUT_EDGE))
    edge_area = np.log(np.maximum(area, 1.0) / np.maximum(_others(area, lambda x: float(np.median(x)), 1e9), 1.0))

    detection = np.array([d.score for d in ctx.detections], dtype=np.float64)
    second = np.asarray(ctx.second, dtype=np.float64)

    def flag(name: str) -> np.ndarray:
        return np.asarray(decided.get(name, np.zeros(n, dtype=bool)), dtype=np.float64)

    columns = {
        "confidence": _log_odds(confidence),
        "value_prob": _log_odds(decided_value),
        "colour_prob": _log_odds(decided_colour),
        "value_lead": value_lead,
        "colour_lead": colour_lead,
        "value_lead_share": np.log((value_lead + 0.1) / (_others(value_lead, lambda x: float(np.median(x)), 0.0) + 0.1)),
        "colour_lead_share": np.log((colour_lead + 0.1) / (_others(colour_lead, lambda x: float(np.median(x)), 0.0) + 0.1)),
        "face": face,
        "face_share": face_share,
        "face_share_tilted": face_share * min(view, 1.0),
        "perspective": np.full(n, view),
        "detection": detection,
        "second_box": second,
        "side_face": np.zeros(n) if ctx.side is None else np.asarray(ctx.side, dtype=np.float64),
        "photo_second": _others(second, lambda x: float(x.max()), 0.0),
        "photo_weakest": _others(detection, lambda x: float(x.min()), 1.0),
        "missed_top": flag("missed_tops"),
        "turns_disagree": np.zeros(n) if ctx.agree is None else (~np.asarray(ctx.agree, dtype=bool)).astype(np.float64),
        "set_changes": flag("set_changes"),
        "colour_moved": flag("colour_moved"),
        "colour_disputed": flag("colour_disputes"),
        "ink_against": _ink_against(ctx, colours),
        "faint_warm": _faint_warm(ctx, colours),
        "size_share": np.log(sides / _others(sides, lambda x: float(x.min()), float(sides[0]))),
        "flat_lead": ground - _others(ground, lambda x: float(x.max()), float(ground[0])),
        "at_edge": at_edge.astype(np.float64),
        "edge_area": np.where(at_edge, np.clip(edge_area, -6.0, 3.0), 0.0),
        "shorter_side": np.log(np.maximum(np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]), 1.0)),
        "cast": np.full(n, 0.0 if ctx.cast is None else ctx.cast),
        "no_reference": np.full(n, float(ctx.cast is None)),
        "photo_unsure": _others(1.0 - confidence, lambda x: float(x.mean()), 0.0),
        "dice": np.full(n, float(n)),
    }
    return np.stack([columns[name] for name in FEATURES], axis=1)


def doubt_margins(scores: np.ndarray, tuning: Tuning) -> np.ndarray:
    """(n, len(ALL_FEATURES)): FEATURES' scores (n, len(FEATURES)) and MARGINS' after them, at the
    levels of `tuning`."""
    x = np.asarray(scores, dtype=np.float64).reshape(-1, len(FEATURES))
    f = {name: x[:, i] for i, name in enumerate(FEATURES)}
    levels = tuning.doubts

    def log_odds(p: float) -> float:
        return float(np.log(p / (1 - p)))

    unusual = (f["no_reference"] > 0) | (f["cast"] > BALANCE_CAST)
    doubtful = (f["photo_second"] > 0) | (f["second_box"] > 0) | (f["photo_weakest"] < tuning.detection_sure) | (
        f["detection"] < tuning.detection_sure)
    margins = {
        "small_face_margin": np.minimum(np.log(levels.small_face) - f["shorter_side"], levels.small_face_lead - f["value_lead"]),
        "value_margin": np.log(levels.value_margin_share) - f["value_lead_share"],
        "colour_margin": np.log(levels.colour_margin_share) - f["colour_lead_share"],
        "face_margin": np.minimum.reduce([f["perspective"] - levels.tilted_view,
                                          log_odds(levels.face_share_below) - f["face"], -f["face_share"]]),
        "doubtful_photo_margin": np.where(doubtful, log_odds(levels.doubtful_face_sure) - f["face"], NOT_APPLIED),
        "turns_margin": np.where(f["turns_disagree"] > 0, log_odds(levels.turns_sure) - f["confidence"], NOT_APPLIED),
        "light_margin": np.where(unusual, log_odds(tuning.unusual_light_sure) - f["confidence"], NOT_APPLIED),
        "oversized_margin": f["size_share"] - np.log(levels.oversized),
        "flat_print_margin": f["flat_lead"] - levels.flat_print_lead,
        "cut_margin": np.where(f["at_edge"] > 0, np.log(levels.cut_area) - f["edge_area"], NOT_APPLIED),
        "faint_warm_margin": np.where(f["faint_warm"] != 0, np.log(levels.faint_warm_share) - f["faint_warm"], NOT_APPLIED),
    }
    return np.concatenate([x, np.stack([margins[name] for name in MARGINS], axis=1).reshape(len(x), -1)], axis=1)
