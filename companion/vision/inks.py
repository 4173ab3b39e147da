"""Measuring a top face's ink against the face's own body: the evidence the photo gives on colour.

Every die of a photo is lit by the same light, so the same ink looks alike on every die of one
photo even when the light makes red look orange. This module measures, per detected face, the
ink's colour relative to the body it is printed on (a white or ivory body is the photo's white
reference); companion/vision/joint_colour.py then decides the colours of all dice of a photo
together.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

PATCH = 32  # the face's centre is measured at this many pixels square (chosen on the calibration sets)
BODY_PATCH = 12  # and at this many for its body's colour, the photo's white reference
CENTRE = 0.45  # the share of the box (each way) measured: the numeral, inside the top face at any heading and tilt
INK_SHARE = 0.15  # on a dark body, the pixels farthest from it taken as the ink
BODY_SHARE = 0.4  # the pixels nearest the set's body colour taken as the face's body
# a body this bright (linear RGB mean) is a white reference: a light one in a dim room too, not
# black or navy (under 0.06)
LIGHT_BODY = 0.08
# whether a photo's dice have dark bodies is told on the disc of this share of each box's longer
# side around the face's centre (dark_bodies), at this many pixels square: on the true boxes of
# data/calib and its dark and warm sets the face's centre alone takes 299 of 2,005 dark bodies for
# light ones (a bold or bright numeral fills it) and 178 of 6,121 light ones for dark; the disc 90
# of 2,007 and 120 of 6,124
BODY_DISC = 0.35
DISC_PATCH = 24
_EPS = 2e-3


@dataclass(frozen=True, slots=True)
class Ink:
    """One face's ink: its hue angle (degrees) in an opponent plane, relative to the body when
    the body can serve as a white reference, and how colourful it is (0: grey)."""

    hue: float
    chroma: float
    referenced: bool  # measured against a light body (else raw, to be compared with the other inks)
    # how much darker than its body the ink is per unit of its colour: the angle (degrees) of the
    # offset out of the colour plane (below 0: darker). The numeral's ink coverage divides out,
    # and an orange ink is lighter than the same set's red even where their hues meet
    darkness: float = 0.0


def _srgb_to_linear(u8: np.ndarray) -> np.ndarray:
    x = u8.astype(np.float32) / 255.0
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


# every code value's linear light, computed once: a look-up is four times as fast as the curve
# (the light correction in white_balance.py uses the same table)
SRGB_TO_LINEAR = _srgb_to_linear(np.arange(256, dtype=np.uint8))


def _linear(u8: np.ndarray) -> np.ndarray:
    return SRGB_TO_LINEAR[u8]


def _opponent(log_rgb: np.ndarray) -> np.ndarray:
    """Log RGB -> (red-green, yellow-blue): brightness drops out, a grey is (0, 0)."""
    r, g, b = log_rgb[..., 0], log_rgb[..., 1], log_rgb[..., 2]
    return np.stack([r - g, (r + g) / 2 - b], axis=-1)


def measure_inks(rgb: np.ndarray, boxes: list[tuple[float, float, float, float]], light: bool | None = None) -> list[Ink]:
    """The ink of each face in `boxes` (pixels of `rgb`, an sRGB uint8 image), all measured alike.
    `light`: whether the bodies are a white reference (light_reference of these boxes is not
    None), when the caller has measured it already; None: measured here.

    A light body is told from its ink by colour, not brightness (a grey body sits between dark
    and bright inks, and a bold numeral can fill most of the face's centre): every die of a set
    has the same body, so the body's chromaticity is the median of all the faces' pixels, and
    each face's own body is the median of its pixels nearest that chromaticity (its light and
    shading kept). A dark body is the face's darkest part. On a light body each pixel is taken
    relative to the body (its ratio to it, less one): the light divides out (von Kries), and
    the ink is the mean of the centre so taken (see _ink). On a dark body the ink is the face's
    pixels farthest from its body; the light's colour stays, and the same ink still looks
    alike on every die of the photo.
    """
    if light is None:
        light = light_reference(rgb, boxes) is not None
    return patch_inks([face_centre(rgb, box) for box in boxes], light)


def face_centre(rgb: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray | None:
    """The centre of a face whose ink is measured (PATCH pixels square); None when too small."""
    return _patch(rgb, box, PATCH)


def patch_inks(patches: list[np.ndarray | None], light: bool) -> list[Ink]:
    """The inks of one photo's face centres (sRGB uint8 patches; None: not measured), on light
    bodies or dark ones (see measure_inks)."""
    pixels = [None if p is None else _linear(p).reshape(-1, 3) for p in patches]
    body_chroma = body_chroma_of(patches)
    if body_chroma is None:
        return [Ink(0.0, 0.0, False) for _ in patches]
    return [_ink(p, px, body_chroma, light) if p is not None and px is not None else Ink(0.0, 0.0, False)
            for p, px in zip(patches, pixels)]


def _ink(patch: np.ndarray, px: np.ndarray, body_chroma: np.ndarray, light: bool) -> Ink:
    if not light:
        return _dark_ink(px)
    near = np.argsort(np.linalg.norm(_log_chroma(px) - body_chroma, axis=1))
    # measured in the photo's own sRGB code values: JPEG blurs and shares colour between
    # neighbouring pixels in that coding (4:2:0 chroma), moving it from a thin stroke onto the
    # body around it but keeping its sum, so the ink is the mean offset of the whole centre from
    # the body, not its few farthest pixels (whose colour JPEG has partly taken away): on
    # data/calib and its warm, tilt and cold sets, 35-75 % fewer of a photo's red-orange and
    # green-blue pairs of dice are measured in the wrong order than by those pixels.
    return _hue(_offset(patch, near), light)


def ink_offset(patch: np.ndarray, body_chroma: np.ndarray) -> np.ndarray:
    """A light body's face centre (sRGB uint8 patch): its mean offset from its own body (the
    pixels nearest the set's body chromaticity `body_chroma`, see measure_inks), per channel as
    a ratio to the body less one; its colour is what _hue measures, its mean how much darker the
    ink is than the body."""
    px = _linear(patch).reshape(-1, 3)
    return _offset(patch, np.argsort(np.linalg.norm(_log_chroma(px) - body_chroma, axis=1)))


def body_chroma_of(patches: list[np.ndarray | None]) -> np.ndarray | None:
    """The set's body chromaticity: the median of all the faces' pixels (measure_inks)."""
    measured = [_linear(p).reshape(-1, 3) for p in patches if p is not None]
    return np.median(_log_chroma(np.concatenate(measured)), axis=0) if measured else None


def _offset(patch: np.ndarray, near: np.ndarray) -> np.ndarray:
    """The patch's mean offset from its body (the BODY_SHARE of pixels first in `near`)."""
    srgb = patch.reshape(-1, 3).astype(np.float64) / 255.0
    body = np.median(srgb[near[: int(BODY_SHARE * len(srgb))]], axis=0)
    return np.mean(srgb / np.maximum(body, 1e-3) - 1.0, axis=0)


def _dark_ink(px: np.ndarray) -> Ink:
    """A near-black body's colour is mostly noise: the body is the face's darkest part, and the
    ink the mean linear offset of the pixels farthest from it (on dark bodies, measured so, a
    photo's inks are told apart more often than by the mean of the whole centre)."""
    near = np.argsort(px.mean(axis=1))
    body = np.median(px[near[: int(BODY_SHARE * len(px))]], axis=0)
    offset = px - body
    k = max(6, int(INK_SHARE * len(px)))
    return _hue(offset[np.argsort(-np.linalg.norm(offset, axis=1))[:k]].mean(axis=0), False)


def _hue(ink: np.ndarray, light: bool) -> Ink:
    """The ink's colour, its brightness left out: its component across the grey axis, in a plane
    whose first axis is red against green and the second yellow against blue."""
    grey = float(ink.mean())
    c = ink - grey
    u, v = (c[0] - c[1]) / math.sqrt(2.0), (c[0] + c[1] - 2.0 * c[2]) / math.sqrt(6.0)
    chroma = float(math.hypot(u, v))
    return Ink(math.degrees(math.atan2(v, u)) % 360.0, chroma, light, math.degrees(math.atan2(grey, chroma)))


def _log_chroma(px: np.ndarray) -> np.ndarray:
    """Log linear RGB less its mean: the colour of each pixel, its brightness left out."""
    lg = np.log(px + _EPS)
    return lg - lg.mean(axis=-1, keepdims=True)


def _patch(rgb: np.ndarray, box: tuple[float, float, float, float], size: int) -> np.ndarray | None:
    """The centre of a face (CENTRE of its box each way), resized to size x size; None when too small."""
    x0, y0, x1, y1 = box
    window = _window(rgb, (x0 + x1) / 2, (y0 + y1) / 2, CENTRE * (x1 - x0) / 2, CENTRE * (y1 - y0) / 2)
    if window is None:
        return None
    a, b, c, d = window
    return cv2.resize(rgb[b:d, a:c], (size, size), interpolation=cv2.INTER_AREA)


def _window(rgb: np.ndarray, cx: float, cy: float, half_w: float, half_h: float) -> tuple[int, int, int, int] | None:
    """The pixels (x0, y0, x1, y1) of `rgb` within half_w and half_h of (cx, cy), clipped at its
    edges; None when under 2 pixels either way."""
    a, b = int(max(0, math.floor(cx - half_w))), int(max(0, math.floor(cy - half_h)))
    c, d = int(min(rgb.shape[1], math.ceil(cx + half_w))), int(min(rgb.shape[0], math.ceil(cy + half_h)))
    return None if c - a < 2 or d - b < 2 else (a, b, c, d)


def light_reference(rgb: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> np.ndarray | None:
    """The photo's white reference: the log linear RGB of its median light die body. None when
    most bodies are dark (no white reference) or there are no dice."""
    bodies = [b for b in (_body(rgb, box) for box in boxes) if b is not None]
    light = [b for b in bodies if float(np.exp(b).mean()) >= LIGHT_BODY]
    if not light or len(light) * 2 < len(bodies):
        return None
    return np.median(np.array(light), axis=0)


def dark_bodies(rgb: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> bool:
    """Are most of these faces' bodies dark (black, navy)? Told on each face's disc (_body_disc),
    where the body outweighs even a bold numeral; False without a face to tell."""
    bodies = [b for b in (_body_disc(rgb, box) for box in boxes) if b is not None]
    dark = sum(float(np.exp(b).mean()) < LIGHT_BODY for b in bodies)
    return bool(bodies) and dark * 2 > len(bodies)


def light_cast(rgb: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> float | None:
    """How coloured the photo's light is, told by its dice bodies: the length of the median
    light body's colour in the opponent plane (0: grey). None without a white reference."""
    reference = light_reference(rgb, boxes)
    return None if reference is None else cast_of(reference)


def cast_of(reference: np.ndarray) -> float:
    """A white reference's colour (log linear RGB) as a light cast: its length in the opponent plane."""
    return float(np.hypot(*_opponent(reference)))


def _body_disc(rgb: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray | None:
    """The log linear RGB of a face's body, the median of the disc of BODY_DISC times the box's
    longer side around its centre (at DISC_PATCH pixels square), which lies inside the top face
    at any heading. None when too small."""
    x0, y0, x1, y1 = box
    r = BODY_DISC * max(x1 - x0, y1 - y0)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    window = _window(rgb, cx, cy, r, r)
    if window is None:
        return None
    a, b, c, d = window
    patch = cv2.resize(rgb[b:d, a:c], (DISC_PATCH, DISC_PATCH), interpolation=cv2.INTER_AREA)
    # the disc in the patch's pixels (the cut may be clipped at the photo's edge)
    u = a + (np.arange(DISC_PATCH) + 0.5) * (c - a) / DISC_PATCH - cx
    v = b + (np.arange(DISC_PATCH) + 0.5) * (d - b) / DISC_PATCH - cy
    inside = u[None, :] ** 2 + v[:, None] ** 2 <= r * r
    return np.median(np.log(_linear(patch[inside]) + _EPS), axis=0)


def _body(rgb: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray | None:
    """The log linear RGB of a face's body: the median of its centre, which the body covers most of
    on a light body (whether a body is dark is told on the wider disc: dark_bodies)."""
    patch = _patch(rgb, box, BODY_PATCH)
    return None if patch is None else np.median(np.log(_linear(patch).reshape(-1, 3) + _EPS), axis=0)
