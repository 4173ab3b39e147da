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

PATCH = 24  # the face's centre is measured at this many pixels square
CENTRE = 0.45  # the share of the box (each way) measured: the numeral, inside the top face at any heading and tilt
INK_SHARE = 0.12  # the most colourful pixels taken as the ink
# a body this bright (linear RGB mean) is a white reference: a light one in a dim room too, not
# black or navy (under 0.06)
LIGHT_BODY = 0.08
_EPS = 2e-3


@dataclass(frozen=True, slots=True)
class Ink:
    """One face's ink: its hue angle (degrees) in a log-opponent plane, relative to the body
    when the body can serve as a white reference, and how colourful it is (0: grey)."""

    hue: float
    chroma: float
    referenced: bool  # measured against a light body (else raw, to be compared with the other inks)


def _linear(u8: np.ndarray) -> np.ndarray:
    x = u8.astype(np.float32) / 255.0
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


def _opponent(log_rgb: np.ndarray) -> np.ndarray:
    """Log RGB -> (red-green, yellow-blue): brightness drops out, a grey is (0, 0)."""
    r, g, b = log_rgb[..., 0], log_rgb[..., 1], log_rgb[..., 2]
    return np.stack([r - g, (r + g) / 2 - b], axis=-1)


def measure_ink(rgb: np.ndarray, box: tuple[float, float, float, float]) -> Ink:
    """The ink of the face in `box` (pixels of `rgb`, an sRGB uint8 image)."""
    x0, y0, x1, y1 = box
    cx, cy, half_w, half_h = (x0 + x1) / 2, (y0 + y1) / 2, CENTRE * (x1 - x0) / 2, CENTRE * (y1 - y0) / 2
    a, b = int(max(0, math.floor(cx - half_w))), int(max(0, math.floor(cy - half_h)))
    c, d = int(min(rgb.shape[1], math.ceil(cx + half_w))), int(min(rgb.shape[0], math.ceil(cy + half_h)))
    if c - a < 2 or d - b < 2:
        return Ink(0.0, 0.0, False)
    patch = cv2.resize(rgb[b:d, a:c], (PATCH, PATCH), interpolation=cv2.INTER_AREA)
    px = np.log(_linear(patch).reshape(-1, 3) + _EPS)
    body = np.median(px, axis=0)
    referenced = float(np.exp(body).mean()) >= LIGHT_BODY
    # against a light body each pixel's colour is its ratio to the body: the light drops out
    chroma_px = _opponent(px - body) if referenced else _opponent(px)
    off_body = np.linalg.norm(_opponent(px - body), axis=1) + 0.25 * np.abs((px - body).mean(axis=1))
    k = max(6, int(INK_SHARE * len(px)))
    ink = chroma_px[np.argsort(-off_body)[:k]].mean(axis=0)
    return Ink(math.degrees(math.atan2(ink[1], ink[0])) % 360.0, float(np.hypot(*ink)), referenced)



def light_reference(rgb: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> np.ndarray | None:
    """The photo's white reference: the log linear RGB of its median light die body. None when
    most bodies are dark (no white reference) or there are no dice."""
    bodies = [b for b in (_body(rgb, box) for box in boxes) if b is not None]
    light = [b for b in bodies if float(np.exp(b).mean()) >= LIGHT_BODY]
    if not light or len(light) * 2 < len(bodies):
        return None
    return np.median(np.array(light), axis=0)


def light_cast(rgb: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> float | None:
    """How coloured the photo's light is, told by its dice bodies: the length of the median
    light body's colour in the opponent plane (0: grey). None without a white reference."""
    reference = light_reference(rgb, boxes)
    return None if reference is None else cast_of(reference)


def cast_of(reference: np.ndarray) -> float:
    """A white reference's colour (log linear RGB) as a light cast: its length in the opponent plane."""
    return float(np.hypot(*_opponent(reference)))


def _body(rgb: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray | None:
    """The log linear RGB of a face's body: the median of its centre, which the body covers most of."""
    x0, y0, x1, y1 = box
    cx, cy, half_w, half_h = (x0 + x1) / 2, (y0 + y1) / 2, CENTRE * (x1 - x0) / 2, CENTRE * (y1 - y0) / 2
    a, b = int(max(0, math.floor(cx - half_w))), int(max(0, math.floor(cy - half_h)))
    c, d = int(min(rgb.shape[1], math.ceil(cx + half_w))), int(min(rgb.shape[0], math.ceil(cy + half_h)))
    if c - a < 2 or d - b < 2:
        return None
    patch = cv2.resize(rgb[b:d, a:c], (PATCH // 2, PATCH // 2), interpolation=cv2.INTER_AREA)
    return np.median(np.log(_linear(patch).reshape(-1, 3) + _EPS), axis=0)
