"""Flags from doubts the decoder's confidence does not carry: the reader's turns that disagree,
a photo whose boxes the detector already doubts, a box the face head doubts far more than the
photo's others in a strongly tilted view, a colour the photo's inks dispute, a box far
larger than the photo's others, a value or colour led by far less than the photo's other dice
lead theirs, a box whose ground is its own body's colour (a flat print, no cube), a small
box cut by the photo's edge, a small face whose value is not far ahead of the next, and on dark
bodies a red or orange read from an ink far fainter than the photo's other reds and oranges.

The decoder's confidence is calibrated over all dice, but its wrong readings above 0.9 cluster
where the reader's quarter turns, each read on its own, do not agree on the value or colour
(the average of the turns can still be sure), and the boxes that are no die at all (a side
face, a shadow, a die boxed twice) come in photos where some box is already doubtful: a weak
detection, or a box the cube model takes for a second one on a cube. Such a photo is one
whose scene confuses the detector (a strong tilt, dark bodies, clutter), so there a box the
reader's face head is not quite sure of is asked about too. The photo is flagged anyway, so
the player looks at it in any case; only its dice get a mark more.

The levels were chosen on data/calib and its four stress sets (warm, cold, dark bodies,
tilt 27-40 degrees), with the decoder's uncertain_below at 0.95. A face level of 0.985 leaves
at most 1 % of each set's photos with a silent error (a wrong, missed or extra die without a
flag): only colour misreads the reader is sure of (0.98 and over) stay silent. 0.98 leaves 2 %
of the warm set's photos so; 0.99 flags more dice and catches no more; the same 0.985 in every
photo, not only the doubtful ones, flags 5 points more of the right dark-bodied dice and
catches no more either. The turns' 0.99 is the decoder's level under an unusual light
(pipeline.UNUSUAL_LIGHT_SURE): it catches the same misreads as any level up to 0.999, at the
fewest flags. Both together flag 1.6 to 5.2 points more of the right dice.

Under the usual light the reader's colour decides every die it is sure of (the photo's inks,
measured on small faces, are less sure than the reader there: pipeline._joint_decode). Yet on
photos of a look the training never had (another renderer's) the reader can be sure of an
orange it reads as red while the photo's own inks tell the two apart. There the inks are
still asked, as a flag that never moves a colour: the dice are weighed together as under an
unusual light (joint_colour.py), against the reader's colour probabilities softened by
INK_DOUBT_TEMPERATURE (its confidence on a look it never saw is worth less than on the
training look's), and a die they would move to the other colour of its pair, or whose ink
disputes its colour, is flagged.

The decoder's confidence can also be surer of a colour than the reader was: the set's
constraint and the value's certainty lift a face the reader saw as, say, orange only some
tens of times likelier than red to 0.98-0.99. The colour misreads those flags left silent on
the calibration sets (a red wild read orange at a strong tilt, an orange 2 read red under a
cold light) are such dice, and what sets them apart is the photo itself: the reader is as
sure of the other dice's colours there as anywhere (log-odds of 7-20), of theirs three to
five times less. A die whose colour log-odds over the next colour are under
COLOUR_MARGIN_SHARE of the median of the photo's other dice is flagged. Measured against the
photo, not against one level, it spares photos where every colour is less sure (a look the
training never had): one level that catches the same misreads (4.5) flags 1-5 points more of
the right dice, the share 0.1-2.
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

# Flag a die whose reader turns disagree unless the decoder is at least this sure of it.
TURNS_SURE = 0.99
# In a photo with a doubtful box (a detection under the pipeline's DETECTION_SURE, or a possible
# second box on a cube), flag every box the reader's face head rates below this.
DOUBTFUL_FACE_SURE = 0.985
# How much softer the reader's colour probabilities are taken when the photo's inks are weighed
# against them under the usual light (ink_doubts): so much that the inks nearly decide alone.
# Chosen on the Blender-rendered calibration set (data/calib_blender) and the generator's five:
# each red/orange swap of the Blender set, had the reader been 0.99 or 0.999 sure of it, is
# flagged from 24 (16 misses one at 0.999, 8 two), for 0.1-0.4 points more of each set's dice flagged.
INK_DOUBT_TEMPERATURE = 24.0
# Flag a die whose reader colour log-odds over the next colour (the turns' mean
# log-probabilities, before any temperature) are under this share of the median of the
# photo's other dice (colour_margin_doubts).
COLOUR_MARGIN_SHARE = 0.35
# Flag a die whose reader value log-odds over the next value are under this share of the
# median of the photo's other dice (value_margin_doubts). Chosen on the first halves of
# data/more and the other choosing sets: under a warm lamp a red 1 read 7 at 0.99 had a lead
# of 2.3 where the photo's other dice had 9-15; 0.25 catches it for 0.2-1.1 points more of
# the first halves' dice flagged (0.3-1.7 points on the whole choosing sets, with the flat-print
# flag: the model card), 0.35 for up to 2.5.
VALUE_MARGIN_SHARE = 0.25
# A cube's side face read alone, its top face missed, is boxed like a die's top face, and the
# reader's face head, which tells a top face from anything else, is then less sure of it than of
# the photo's dice (0.78-0.95 on data/more/stress_tilt_calib's side faces read silently at 0.99-1.00,
# against 0.99 and over for 95% of the right dice). Side faces show only where the camera looks
# from well off vertical, where the photo's faces grow toward it: in a photo whose faces' log size
# changes by at least TILTED_VIEW across it (cubes.perspective), a die whose face probability is
# under FACE_SHARE_BELOW and whose face log-odds are under FACE_SHARE of the median of the photo's
# other dice is flagged (face_margin_doubts). Chosen on the calibration sets' tilted photos (their
# first halves hold no such die; the whole sets hold three, in ten silent photos), kept within the
# other calib sets' flags: replayed, without the view's gate 0.5 points more of data/calib's dice
# # are flagged, with it 0.1; measured (training.evaluate), 0.2 on data/calib and data/more/calib,
# 0.1-0.8 on the stress, far and page sets.
FACE_SHARE = 0.4
FACE_SHARE_BELOW = 0.96
TILTED_VIEW = 0.5
# Flag a box whose longer side is more than this many times the smallest other box's in the
# photo (oversized_boxes). Chosen on data/page_far_calib (a note with a green 2 read 2g at
# 1.00, its box 4.6 times the photo's dice) and the other choosing sets: 4 costs at most 0.12
# points more of any set's dice flagged, 3 up to 1.2 points, 2.5 up to 3.8.
OVERSIZED = 4.0
# A flat print (a card's numeral) has no cube around it: the ground just outside its box, out
# to FLAT_RING of its longer side, is the paper its "face" is printed on, the colour of that
# face's body (within FLAT_BODY_TOLERANCE on every channel, 0..1), while a die's top face ends
# at its edge and side faces. A box whose share of such ground is over FLAT_PRINT_LEAD above
# every other box's in the photo is flagged (flat_prints; dice on a table of their own body
# colour all have much such ground, and none leads). Chosen on data/far_calib (a card's green
# "+" read 4g at 1.00: a share 0.56, the photo's dice 0.00) and the other choosing sets: a
# tolerance of 0.10 gives a light die's own side faces a share too (0.38 beside that card).
FLAT_RING = 0.25
FLAT_BODY_TOLERANCE = 0.06
FLAT_PRINT_LEAD = 0.4
# A die the photo's edge cuts shows only part of itself: a top face mostly outside the frame, or
# the side face of a die whose top face is outside it, boxed and read as surely as a whole top
# face. A box that touches the frame's edge (within CUT_EDGE pixels; the detector clips its boxes
# there) and whose area is under CUT_AREA of the median area of the photo's other boxes is
# flagged (cut_boxes). Chosen on the 18 choosing sets (about 37,000 dice found): it catches the
# two side faces read silently at the edge there (areas 0.33 and 0.38 of the photo's median) and
# flags 46 dice more in all (training.evaluate); in an offline replay a CUT_AREA of 0.5 caught the
# same two for three times the flags.
# A box at the edge that is the photo's only box has no other face to be measured against: it is
# flagged too (a side face filling the view, its die's top face outside the frame, reads as
# surely as a top face).
CUT_EDGE = 0.5
CUT_AREA = 0.4
# On dark bodies (no white reference) an ink is measured raw, and a red or orange ink is colourful
# against the black: within one photo its dice measure alike (joint_colour.py's DARK_ levels). A
# die read red or orange whose ink's chroma is under FAINT_WARM_SHARE of the median of the photo's
# other red and orange dice is more likely a blue or green ink that a warm light turned warm (under
# a 2700 K lamp a blue on black measures a tenth of a red's chroma): it is flagged (faint_warm_inks).
# Chosen on the dark photos of the choosing sets (1,676 photos, 10,155 dice read): from 0.15 to
# 0.25 it flags 7-8 dice more, one of them wrong (a 10b read 10o at 1.00, its chroma 0.09 beside
# its photo's reds and oranges at 0.67-0.72); 0.3 flags 15 right dice for 3 wrong ones.
FAINT_WARM_SHARE = 0.2
# In a photo where at least DOUBTED_SHARE of the dice read are flagged already, flag every die the
# decoder is under DOUBTED_SURE of (doubted_photo). Chosen on the first halves of the choosing sets
# (see doubted_photo's docstring for the figures).
DOUBTED_SHARE = 0.3
DOUBTED_SURE = 0.985
# Where at least DOUBTED_ALL_SHARE of a photo's dice are flagged already, every die is (doubted_photo):
# the player checks the photo in any case, and its few sure readings are no surer than its scene.
# Chosen on the choosing sets: at 0.85 it catches the two photos of data/v1_calib whose only sure
# reading was a side face (8 of 9 and 9 of 10 dice flagged; silent photos 1.00% -> 0.50%) for 48
# dice more flagged in all (about 37,000); 0.75 catches the same two for 205.
DOUBTED_ALL_SHARE = 0.85
# A small face shows its numeral in few pixels, and there the reader's sure values are less often
# right than its confidence says: a blurred or foreshortened 3 read 5, 2 read 8, 1 read 7. Of the dice
# no other flag marked on the 18 choosing sets (30,367 of 36,720 found), those whose box's shorter
# side is under SMALL_FACE pixels of the image the reader cut them from and whose value leads the next
# by under SMALL_FACE_LEAD (reader log-odds) were wrong 6 times in 527 (1.1%), the others 5 times in
# 29,840 (0.02%). A die with both is flagged (small_faces). Replayed there: a lead under 4.0 alone
# flags 809 right dice for the same 6, under 3.5 alone 497 for 4; 45 pixels 438 for 5, 60 pixels 634
# for 6; a lead under 4.5 with 50 pixels 711 for 6 (sides taken at the 960-px working size). Measured
# (training.evaluate): silent photos there 22 -> 16, dice flagged 0.3-3.1 points more (more than the
# replay's 1.4: a photo with more flags has its less sure dice flagged too, doubted_photo).
SMALL_FACE = 50.0
SMALL_FACE_LEAD = 4.0


def turn_doubts(agree: np.ndarray | None, confidence: np.ndarray) -> np.ndarray:
    """Per die: its turns disagree (`agree` False) and the decoder is under TURNS_SURE.
    `agree` None (a reader asked for one turn): no flag."""
    if agree is None:
        return np.zeros(len(confidence), dtype=bool)
    return ~np.asarray(agree, dtype=bool) & (np.asarray(confidence) < TURNS_SURE)


def doubtful_photo(weak: np.ndarray, second: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Per box: in a photo where some box is weak or a possible second box on a cube, is the
    face head under DOUBTFUL_FACE_SURE? (All False in a photo without such a box.)"""
    faces = np.asarray(faces, dtype=np.float64)
    if not (np.asarray(weak, dtype=bool) | np.asarray(second, dtype=bool)).any():
        return np.zeros(len(faces), dtype=bool)
    return faces < DOUBTFUL_FACE_SURE


def doubted_photo(unsure: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """Per die: the photo has at least DOUBTED_SHARE of its dice flagged (`unsure`) and the
    decoder is under DOUBTED_SURE of this one (`confidence`); or the photo has at least
    DOUBTED_ALL_SHARE of its dice flagged.

    The decoder's confidence is calibrated over all photos, but a photo where a third of the
    dice already draw a flag is one whose scene confuses the reader (a strong tilt, blur, a
    faint warm-lit ink): there a die read at 0.96-0.98 is worth less than the same confidence
    in a clean photo. On the first halves of the choosing sets the only misreads left silent on
    tilted photos were such dice (a red 4 read orange at 0.96 and a blue 3 read 5 at 0.98, both
    in data/more/stress_tilt_calib2, in photos with 5 of 8 and 3 of 9 dice flagged). The player
    checks such a photo anyway; only its dice get a mark more."""
    unsure = np.asarray(unsure, dtype=bool)
    if not len(unsure) or unsure.mean() < DOUBTED_SHARE:
        return np.zeros(len(unsure), dtype=bool)
    if unsure.mean() >= DOUBTED_ALL_SHARE:
        return np.ones(len(unsure), dtype=bool)
    return np.asarray(confidence, dtype=np.float64) < DOUBTED_SURE


def ink_doubts(color_logits: np.ndarray, inks: list[Ink], color_temperature: float) -> np.ndarray:
    """Per die: the photo's inks, decided together against the reader's colour logits (n, 4) at
    color_temperature times INK_DOUBT_TEMPERATURE, move it to the other colour of its pair or
    dispute its colour (joint_colour.py). Only a flag: the colours stay the reader's."""
    if len(inks) == 0:
        return np.zeros(0, dtype=bool)
    joint = joint_colours(softmax(color_logits, color_temperature * INK_DOUBT_TEMPERATURE), inks)
    return joint.moved | joint.disputed


def faint_warm_inks(colors: list[Color | None], inks: list[Ink]) -> np.ndarray:
    """Per die (its colour as read, None: not read, and its ink measured on a dark body): read red
    or orange, and its ink's chroma under FAINT_WARM_SHARE of the median of the photo's other red
    and orange dice (none other: no flag)."""
    chroma = np.array([ink.chroma for ink in inks], dtype=np.float64)
    warm = np.flatnonzero([c in (Color.RED, Color.ORANGE) for c in colors])
    out = np.zeros(len(colors), dtype=bool)
    for i in warm if len(warm) > 1 else ():
        out[i] = chroma[i] < FAINT_WARM_SHARE * float(np.median(chroma[warm[warm != i]]))
    return out


def colour_margin_doubts(color_logits: np.ndarray) -> np.ndarray:
    """Per die: the reader's colour logits (n, 4) put its colour over the next one by less than
    COLOUR_MARGIN_SHARE of the median margin of the photo's other dice (a photo of one die: no flag)."""
    return _margin_doubts(np.asarray(color_logits, dtype=np.float64).reshape(-1, 4), COLOUR_MARGIN_SHARE)


def value_margin_doubts(value_logits: np.ndarray) -> np.ndarray:
    """Per die: the reader's value logits (n, 11) put its value over the next one by less than
    VALUE_MARGIN_SHARE of the median margin of the photo's other dice (a photo of one die: no flag)."""
    return _margin_doubts(np.asarray(value_logits, dtype=np.float64).reshape(-1, len(VALUE_CLASSES)), VALUE_MARGIN_SHARE)


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


def face_margin_doubts(faces: np.ndarray, perspective: float) -> np.ndarray:
    """Per die: in a photo seen from well off vertical (`perspective`, cubes.perspective, at least
    TILTED_VIEW), the face head's probability (`faces`) is under FACE_SHARE_BELOW and its log-odds
    under FACE_SHARE of the median of the photo's other dice (a photo of one die: no flag)."""
    faces = np.asarray(faces, dtype=np.float64)
    out = np.zeros(len(faces), dtype=bool)
    if perspective < TILTED_VIEW or len(faces) < 2:
        return out
    p = np.clip(faces, 1e-9, 1 - 1e-9)
    odds = np.log(p) - np.log1p(-p)
    for i in np.flatnonzero(faces < FACE_SHARE_BELOW):
        out[i] = odds[i] < FACE_SHARE * float(np.median(np.delete(odds, i)))
    return out


def oversized_boxes(boxes: list[tuple[float, float, float, float]]) -> np.ndarray:
    """Per box (x0, y0, x1, y1): its longer side is over OVERSIZED times the smallest longer
    side of the photo's other boxes (a photo of one box: no flag)."""
    sides = np.array([max(b[2] - b[0], b[3] - b[1]) for b in boxes], dtype=np.float64)
    out = np.zeros(len(sides), dtype=bool)
    for i in range(len(sides) if len(sides) > 1 else 0):
        out[i] = sides[i] > OVERSIZED * float(np.delete(sides, i).min())
    return out


def body_like_ground(rgb: np.ndarray, box: tuple[float, float, float, float]) -> float:
    """The share of the ground around `box` (x0, y0, x1, y1), out to FLAT_RING of its longer side,
    within FLAT_BODY_TOLERANCE of the median colour of the box's inner part (its face's body)."""
    x0, y0, x1, y1 = box
    h, w = rgb.shape[:2]
    grow = FLAT_RING * max(x1 - x0, y1 - y0)
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
    reach = FLAT_BODY_TOLERANCE * 255.0
    near_body = cv2.inRange(ground, np.ceil(body - reach), np.floor(body + reach))
    return float(np.count_nonzero(near_body[outside]) / np.count_nonzero(outside))


def flat_prints(rgb: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> np.ndarray:
    """Per box: the ground around it is body-like (body_like_ground) by over FLAT_PRINT_LEAD more
    than around any other box of the photo (a photo of one box: no flag)."""
    share = np.array([body_like_ground(rgb, b) for b in boxes], dtype=np.float64)
    out = np.zeros(len(share), dtype=bool)
    for i in range(len(share) if len(share) > 1 else 0):
        out[i] = share[i] - float(np.delete(share, i).max()) > FLAT_PRINT_LEAD
    return out


def cut_boxes(boxes: list[tuple[float, float, float, float]], width: int, height: int) -> np.ndarray:
    """Per box (x0, y0, x1, y1) in an image of `width` x `height`: it touches the image's edge
    (within CUT_EDGE) and its area is under CUT_AREA of the median area of the photo's other
    boxes, or it is the photo's only box."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    at_edge = ((b[:, 0] <= CUT_EDGE) | (b[:, 1] <= CUT_EDGE)
               | (b[:, 2] >= width - CUT_EDGE) | (b[:, 3] >= height - CUT_EDGE))
    out = np.zeros(len(b), dtype=bool)
    if len(b) == 1:  # no other box to measure it against
        return at_edge
    for i in np.flatnonzero(at_edge):
        out[i] = area[i] < CUT_AREA * float(np.median(np.delete(area, i)))
    return out


def small_faces(boxes: list[tuple[float, float, float, float]], value_logits: np.ndarray) -> np.ndarray:
    """Per box (x0, y0, x1, y1, in the pixels of the image the reader cut it from): its shorter side
    is under SMALL_FACE and its value, by the reader's logits (n, 11), leads the next one by under
    SMALL_FACE_LEAD."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    shorter = np.minimum(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1])
    lead = _leads(np.asarray(value_logits, dtype=np.float64).reshape(-1, len(VALUE_CLASSES)))
    return (shorter < SMALL_FACE) & (lead < SMALL_FACE_LEAD)


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
    return ink_doubts(ctx.color_logits, ctx.inks(), ctx.color_temperature)


def _faint_warm_inks(ctx: PhotoContext) -> np.ndarray:
    if ctx.cast is not None:  # light bodies: inks measured against them, not raw
        return _no_flags(ctx)
    return faint_warm_inks(ctx.colours(), ctx.inks())


# Applied in this order (the flags add up: the order changes nothing), then doubted_photo over them.
DOUBTS: tuple[Doubt, ...] = (
    Doubt("ink_doubts", "color", _ink_doubts),
    Doubt("faint_warm_inks", "color", _faint_warm_inks),
    Doubt("second_boxes", "die", lambda ctx: ctx.second),
    Doubt("colour_margin", "color", lambda ctx: colour_margin_doubts(ctx.color_logits)),
    Doubt("value_margin", "value", lambda ctx: value_margin_doubts(ctx.value_logits)),
    Doubt("face_margin", "die", lambda ctx: face_margin_doubts(ctx.faces, perspective(ctx.detections))),
    Doubt("oversized_boxes", "die", lambda ctx: oversized_boxes(ctx.boxes)),
    Doubt("flat_prints", "die", lambda ctx: flat_prints(ctx.rgb, ctx.boxes)),
    Doubt("cut_boxes", "die", lambda ctx: cut_boxes(ctx.boxes, ctx.rgb.shape[1], ctx.rgb.shape[0])),
    Doubt("small_faces", "value", lambda ctx: small_faces(ctx.boxes, ctx.value_logits)),
    Doubt("turn_disagreement", None, lambda ctx: turn_doubts(ctx.agree, ctx.confidence())),
    Doubt("doubtful_photos", "die", lambda ctx: doubtful_photo(ctx.weak, ctx.second, ctx.faces)),
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

