"""Dice as rounded cubes: face textures (numeral, 6/9 marker, wild), geometry and drawing."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import cv2
import numpy as np

from companion.dice import Die, Face
from training.synth.appearance import Appearance
from training.synth.camera import Camera
from training.synth.fonts import FontSpec, glyph_mask
from training.synth.raster import warp_blend

TEXTURE_SIZES = (32, 48, 64, 96, 128, 192, 256)
UP = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class Light:
    direction: np.ndarray  # unit vector from the table towards the light
    ambient: float  # share of light that comes from everywhere (no shadow)
    kelvin: float
    softness: float  # shadow blur, in die edges
    shadow_strength: float

    def lambert(self, normal: np.ndarray) -> float:
        return self.ambient + (1.0 - self.ambient) * max(0.0, float(normal.dot(self.direction)))


@dataclass(frozen=True)
class PlacedDie:
    """One die on the table: which face is up, how the other faces sit, where and how turned."""

    die: Die
    top: int  # index into die.faces
    sides: tuple[int, int, int, int]  # faces on the local +x, +y, -x, -y sides
    side_turns: tuple[int, int, int, int]  # each side numeral's quarter turns
    center: tuple[float, float]
    yaw: float  # radians
    edge: float = 1.0  # cube size in die edges (distractor dice differ)

    @property
    def top_face(self) -> Face:
        return self.die.faces[self.top]

    def axes(self) -> tuple[np.ndarray, np.ndarray]:
        """The die's own x and y directions on the table, each one half-edge long."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return np.array([c, s, 0.0]) * self.edge, np.array([-s, c, 0.0]) * self.edge

    def top_corners(self) -> np.ndarray:
        """The top face's corners in world units, in the numeral's TL, TR, BR, BL order."""
        ex, ey = self.axes()
        c = np.array([self.center[0], self.center[1], self.edge])
        return np.stack([c - 0.5 * ex + 0.5 * ey, c + 0.5 * ex + 0.5 * ey, c + 0.5 * ex - 0.5 * ey, c - 0.5 * ex - 0.5 * ey])

    def side_faces(self) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(face index, outward normal, corners TL TR BR BL) for the four side faces."""
        ex, ey = self.axes()
        out = []
        up = UP * self.edge
        for face_index, axis, turns in zip(self.sides, (ex, ey, -ex, -ey), self.side_turns):
            centre = np.array([self.center[0], self.center[1], 0.5 * self.edge]) + 0.5 * axis
            right = np.cross(UP, axis)
            corners = np.stack(
                [centre - 0.5 * right + 0.5 * up, centre + 0.5 * right + 0.5 * up, centre + 0.5 * right - 0.5 * up, centre - 0.5 * right - 0.5 * up]
            )
            out.append((face_index, axis / self.edge, np.roll(corners, turns, axis=0)))
        return out

    def footprint(self) -> np.ndarray:
        return self.top_corners()[:, :2]

    def vertices(self, inset: float = 0.0) -> np.ndarray:
        """The 8 cube corners, optionally of a smaller cube `inset` inside each face."""
        ex, ey = self.axes()
        half = 0.5 - inset
        base = np.array([self.center[0], self.center[1], 0.5 * self.edge])
        up = UP * self.edge
        return np.array([base + sx * half * ex + sy * half * ey + sz * half * up for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])


def random_placed_die(rng: np.random.Generator, die: Die, center: tuple[float, float], yaw: float, edge: float = 1.0) -> PlacedDie:
    order = rng.permutation(6)
    return PlacedDie(
        die=die,
        top=int(order[0]),
        sides=tuple(int(i) for i in order[1:5]),
        side_turns=tuple(int(t) for t in rng.integers(0, 4, size=4)),
        center=center,
        yaw=yaw,
        edge=edge,
    )


# ---- face textures -------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _edge_maps(size: int, bevel_q: int) -> tuple[np.ndarray, np.ndarray]:
    """Rounded-square alpha and a 0..1 profile that rises towards the rounded edge."""
    bevel = bevel_q / 100.0
    radius = min(0.45, bevel * 1.4)
    coords = (np.arange(size, dtype=np.float32) + 0.5) / size - 0.5
    qx = np.abs(coords)[None, :] - (0.5 - radius)
    qy = np.abs(coords)[:, None] - (0.5 - radius)
    outside = np.hypot(np.maximum(qx, 0), np.maximum(qy, 0)) + np.minimum(np.maximum(qx, qy), 0) - radius
    alpha = np.clip(0.5 - outside * size, 0.0, 1.0)
    profile = np.clip(1.0 + outside / bevel, 0.0, 1.0) ** 2
    return alpha.astype(np.float32), profile.astype(np.float32)


def _place(canvas: np.ndarray, glyph: np.ndarray, box_h: float, max_w: float, cx: float, cy: float) -> tuple[float, float, float, float]:
    """Resize `glyph` to fit (max_w x box_h) and add it centred at (cx, cy); returns its box."""
    gh, gw = glyph.shape
    scale = min(box_h / gh, max_w / gw)
    w, h = max(1, int(round(gw * scale))), max(1, int(round(gh * scale)))
    small = cv2.resize(glyph, (w, h), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    x0, y0 = int(round(cx - w / 2)), int(round(cy - h / 2))
    size = canvas.shape[0]
    sx0, sy0 = max(0, -x0), max(0, -y0)
    x0c, y0c = max(0, x0), max(0, y0)
    x1c, y1c = min(size, x0 + w), min(size, y0 + h)
    if x1c > x0c and y1c > y0c:
        region = canvas[y0c:y1c, x0c:x1c]
        np.maximum(region, small[sy0 : sy0 + (y1c - y0c), sx0 : sx0 + (x1c - x0c)].astype(np.float32) / 255.0, out=region)
    return x0, y0, x0 + w, y0 + h


def _draw_marker(mask: np.ndarray, marker: str, box: tuple[float, float, float, float], size: int) -> None:
    x0, y0, x1, y1 = box
    width = x1 - x0
    cx = (x0 + x1) / 2
    shift = 4  # cv2 fixed-point bits, for sub-pixel shapes on small textures
    f = float(1 << shift)
    if marker in ("underline", "bar"):
        half = width * (0.42 if marker == "underline" else 0.22)
        thick = size * (0.05 if marker == "underline" else 0.075)
        top = y1 + size * 0.045
        pts = np.array([[cx - half, top], [cx + half, top], [cx + half, top + thick], [cx - half, top + thick]])
        cv2.fillPoly(mask, [np.round(pts * f).astype(np.int32)], 1.0, cv2.LINE_AA, shift)
    else:
        r = size * 0.05
        centre = (x1 + r * 1.3, y1 - r) if marker == "dot" else (cx, y1 + size * 0.045 + r)
        cv2.circle(mask, (int(centre[0] * f), int(centre[1] * f)), int(r * f), 1.0, -1, cv2.LINE_AA, shift)


def _draw_wild_frame(mask: np.ndarray, style: str, size: int) -> None:
    thick = max(1, int(size * 0.04))
    if style == "circled":
        cv2.circle(mask, (size // 2, size // 2), int(size * 0.36), 1.0, thick, cv2.LINE_AA)
    elif style == "boxed":
        a, b = int(size * 0.16), int(size * 0.84)
        cv2.rectangle(mask, (a, a), (b, b), 1.0, thick, cv2.LINE_AA)


@lru_cache(maxsize=4096)
def face_ink_mask(font: FontSpec, text: str, bold: int, marker: str, wild_style: str, height_q: int, size: int) -> np.ndarray:
    """Where the ink is on one face texture (float 0..1), cached per look and size."""
    mask = np.zeros((size, size), np.float32)
    height = height_q / 100.0 * size
    has_marker = text in ("6", "9")
    if text == "W" and wild_style != "plain":
        height *= 0.8
    cy = size / 2 - (size * 0.05 if has_marker and marker != "dot" else 0.0)
    box = _place(mask, glyph_mask(font, text, bold), height, size * 0.8, size / 2, cy)
    if has_marker:
        _draw_marker(mask, marker, box, size)
    if text == "W":
        _draw_wild_frame(mask, wild_style, size)
    mask.setflags(write=False)
    return mask


def texture_size_for(pixels: float) -> int:
    for size in TEXTURE_SIZES:
        if size >= pixels:
            return size
    return TEXTURE_SIZES[-1]


def numeral_ink(app: Appearance, face: Face, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Ink mask and ink colour of a Phase 10 face."""
    text = "W" if face.is_wild else str(face.value)
    font = app.wild_font if face.is_wild else app.font
    mask = face_ink_mask(font, text, app.bold, app.marker, app.wild_style, int(round(app.glyph_height * 50)) * 2, size)
    return mask, np.asarray(app.inks[face.color], np.float32)


@lru_cache(maxsize=256)
def pip_mask(count: int, size: int) -> np.ndarray:
    """An ordinary die's pips (distractor dice that must not be read)."""
    spots = {1: [(1, 1)], 2: [(0, 0), (2, 2)], 3: [(0, 0), (1, 1), (2, 2)], 4: [(0, 0), (0, 2), (2, 0), (2, 2)],
             5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)], 6: [(0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)]}[count]
    mask = np.zeros((size, size), np.float32)
    f = 16.0
    for row, col in spots:
        cx, cy = size * (0.27 + 0.23 * col), size * (0.27 + 0.23 * row)
        cv2.circle(mask, (int(cx * f), int(cy * f)), int(size * 0.085 * f), 1.0, -1, cv2.LINE_AA, 4)
    mask.setflags(write=False)
    return mask


@dataclass(frozen=True)
class CubeLook:
    """What drawing a cube needs: body, edges, gloss, and each face's ink."""

    body_rgb: tuple[float, float, float]
    bevel: float
    gloss: float
    ink: Callable[[int, int], tuple[np.ndarray, np.ndarray]]  # (face index, texture size) -> mask, rgb


def phase10_look(app: Appearance, die: Die) -> CubeLook:
    def ink(index: int, size: int) -> tuple[np.ndarray, np.ndarray]:
        mask, rgb = numeral_ink(app, die.faces[index], size)
        return (mask * app.ink_strength if app.ink_strength < 1.0 else mask), rgb

    return CubeLook(app.body_rgb, app.bevel, app.gloss, ink)


@lru_cache(maxsize=64)
def _contact_shade(size: int, bottom: int) -> np.ndarray:
    """Side faces darken towards the table (less sky reaches them there). `bottom` is the
    texture edge touching the table: 0 bottom, 1 left, 2 top, 3 right."""
    ramp = np.linspace(1.0, 0.72, size, dtype=np.float32) ** 1.5
    shade = np.repeat(ramp[:, None], size, axis=1)
    out = np.ascontiguousarray(np.rot90(shade, k=(-bottom) % 4))
    out.setflags(write=False)
    return out


def _bottom_edge(corners: np.ndarray) -> int:
    """Which texture edge of a side face (corners TL, TR, BR, BL) lies on the table."""
    low = set(np.argsort(corners[:, 2])[:2].tolist())
    return {frozenset({2, 3}): 0, frozenset({0, 3}): 1, frozenset({0, 1}): 2, frozenset({1, 2}): 3}[frozenset(low)]


def face_texture(look: CubeLook, index: int, size: int, shade: float, edge_gain: float, glare: float, rng: np.random.Generator, bottom: int | None = None) -> np.ndarray:
    """RGBA float texture of one lit face, corners rounded; `bottom` marks a side face."""
    ink, ink_rgb = look.ink(index, size)
    alpha, profile = _edge_maps(size, int(round(look.bevel * 100)))
    body = np.asarray(look.body_rgb, np.float32)
    lit = (shade * (1.0 + (edge_gain - 1.0) * profile)).astype(np.float32)
    if bottom is not None:
        lit = lit * _contact_shade(size, bottom)
    ink3 = cv2.merge([ink, ink, ink])
    rgb = cv2.multiply(body + (ink_rgb - body) * ink3, cv2.merge([lit, lit, lit]))
    if glare > 0.02:
        rgb += glare * _glare_blob(size, rng)[:, :, None]
    return cv2.merge([rgb[:, :, 0], rgb[:, :, 1], rgb[:, :, 2], alpha])


def _glare_blob(size: int, rng: np.random.Generator) -> np.ndarray:
    coords = (np.arange(size, dtype=np.float32) + 0.5) / size
    cx, cy = rng.uniform(0.2, 0.8, size=2)
    sx, sy = rng.uniform(0.12, 0.4, size=2)
    return np.exp(-(((coords[None, :] - cx) / sx) ** 2 + ((coords[:, None] - cy) / sy) ** 2) / 2)


# ---- drawing a die ---------------------------------------------------------------------------


def _silhouette(canvas: np.ndarray, cam: Camera, placed: PlacedDie, inset: float, colour: np.ndarray, px_per_unit: float) -> None:
    """The body behind the faces: fills the rounded corners where the faces' corners are cut."""
    pts = cam.project(placed.vertices(inset)).astype(np.float32)
    hull = cv2.convexHull(pts).reshape(-1, 2)
    f = 16.0
    poly = np.round(hull * f).astype(np.int32)
    cv2.fillPoly(canvas, [poly], colour.tolist(), cv2.LINE_AA, 4)
    thick = max(1, int(round(2 * inset * px_per_unit)))
    cv2.polylines(canvas, [poly], True, colour.tolist(), thick, cv2.LINE_AA, 4)


def draw_die(canvas: np.ndarray, cam: Camera, placed: PlacedDie, look: CubeLook, light: Light, glare_gain: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw the die; returns its top face's texture and image quad (see `repaint_tops`)."""
    top = placed.top_corners()
    top_px = cam.project(top)
    px_per_unit = float(np.sqrt(abs(cv2.contourArea(top_px.astype(np.float32))))) + 1e-6
    size = texture_size_for(px_per_unit * 1.2)
    dark = float(np.mean(look.body_rgb)) < 0.35
    edge_gain = rng.uniform(1.15, 1.6) if dark else rng.uniform(0.72, 0.92)
    faces = [(placed.top, UP.copy(), top)] + placed.side_faces()
    view = cam.position
    visible = [(i, n, c) for i, n, c in faces if n.dot(view - c.mean(axis=0)) > 1e-6]
    shades = [light.lambert(n) for _, n, _ in visible]
    body = np.asarray(look.body_rgb, np.float32) * float(np.mean(shades)) * edge_gain
    _silhouette(canvas, cam, placed, look.bevel * 0.7, body, px_per_unit)
    for (index, normal, corners), shade in zip(visible, shades):
        glare = 0.0
        if normal[2] > 0.5:
            to_cam = view - corners.mean(axis=0)
            half = light.direction + to_cam / np.linalg.norm(to_cam)
            spec = max(0.0, float(normal.dot(half / np.linalg.norm(half)))) ** 30
            glare = glare_gain * look.gloss * spec
        bottom = None if normal[2] > 0.5 else _bottom_edge(corners)
        tex = face_texture(look, index, size, shade, edge_gain, glare, rng, bottom)
        quad = cam.project(corners)
        warp_blend(canvas, tex, quad)
        if bottom is None:
            top_paint = (tex, quad)
    return top_paint


def repaint_tops(canvas: np.ndarray, tops: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Paint the top faces again, last. Nothing stands higher than a die's top (distractor
    dice are no taller, clutter is flat), so no top is ever hidden; painting them last makes
    sure no side face drawn in a slightly wrong order covers a labelled face."""
    for tex, quad in tops:
        warp_blend(canvas, tex, quad)
