"""Flat things lying on the table beside the dice: coins, score cards with printed digits
(distractors that look like numerals), notes, pencils."""

from __future__ import annotations

import colorsys
from dataclasses import dataclass

import cv2
import numpy as np

from training.synth.camera import Camera
from training.synth.fonts import FontSpec, glyph_mask
from training.synth.raster import warp_blend

KINDS = ("coin", "card", "note", "pencil")


@dataclass(frozen=True)
class Item:
    kind: str
    center: tuple[float, float]
    size: tuple[float, float]  # width, length in die edges
    yaw: float

    @property
    def radius(self) -> float:
        return float(np.hypot(*self.size)) / 2

    def corners(self) -> np.ndarray:
        c, s = np.cos(self.yaw), np.sin(self.yaw)
        ex, ey = np.array([c, s]) * self.size[0] / 2, np.array([-s, c]) * self.size[1] / 2
        centre = np.asarray(self.center)
        pts = np.stack([centre - ex + ey, centre + ex + ey, centre + ex - ey, centre - ex - ey])
        return np.column_stack([pts, np.zeros(4)])


def _coin(rng: np.random.Generator) -> np.ndarray:
    size = 96
    metal = np.array(rng.choice([(0.75, 0.75, 0.78), (0.72, 0.45, 0.25), (0.85, 0.7, 0.3)]), np.float32)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / size - 0.5
    r = np.hypot(xx, yy)
    alpha = np.clip((0.5 - r) * size, 0, 1)
    shade = 0.8 + 0.35 * (xx - yy) + 0.15 * np.sin(r * 60) * (r > 0.4)
    rgb = metal * shade[:, :, None]
    return np.dstack([rgb, alpha]).astype(np.float32)


def _printed(rng: np.random.Generator, fonts: tuple[FontSpec, ...], size: tuple[int, int], paper: np.ndarray, count: int, big: bool) -> np.ndarray:
    w, h = size
    rgb = np.ones((h, w, 3), np.float32) * paper
    for _ in range(count):
        font = fonts[int(rng.integers(len(fonts)))]
        text = str(rng.choice(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "W", "A", "K", "Q", "+", "12", "40"]))
        glyph = glyph_mask(font, text, 0).astype(np.float32) / 255.0
        target_h = (rng.uniform(0.2, 0.4) if big else rng.uniform(0.04, 0.09)) * h
        scale = target_h / glyph.shape[0]
        gw, gh = max(1, int(glyph.shape[1] * scale)), max(1, int(target_h))
        if gw >= w or gh >= h:
            continue
        small = cv2.resize(glyph, (gw, gh), interpolation=cv2.INTER_AREA)
        x, y = int(rng.integers(0, w - gw)), int(rng.integers(0, h - gh))
        ink = np.array(rng.choice([(0.75, 0.1, 0.1), (0.1, 0.2, 0.7), (0.1, 0.5, 0.2), (0.9, 0.5, 0.1), (0.1, 0.1, 0.1)]), np.float32)
        region = rgb[y : y + gh, x : x + gw]
        region += (ink - region) * small[:, :, None]
    return np.dstack([rgb, np.ones((h, w), np.float32)])


def _pencil(rng: np.random.Generator) -> np.ndarray:
    w, h = 16, 256
    body = np.array(rng.choice([(0.95, 0.75, 0.1), (0.2, 0.4, 0.8), (0.8, 0.2, 0.2), (0.2, 0.6, 0.3)]), np.float32)
    rgb = np.ones((h, w, 3), np.float32) * body
    rgb *= (0.75 + 0.35 * np.sin(np.linspace(0, np.pi, w)))[None, :, None]
    tip = int(h * 0.1)
    rgb[:tip] = (0.85, 0.7, 0.5)
    rgb[: tip // 3] = (0.15, 0.15, 0.15)
    alpha = np.ones((h, w), np.float32)
    for y in range(tip):
        half = w / 2 * y / tip
        alpha[y, : max(0, int(w / 2 - half))] = 0
        alpha[y, int(w / 2 + half) :] = 0
    return np.dstack([rgb, alpha])


def item_texture(rng: np.random.Generator, item: Item, fonts: tuple[FontSpec, ...]) -> np.ndarray:
    if item.kind == "coin":
        return _coin(rng)
    if item.kind == "card":
        paper = np.array([rng.uniform(0.85, 1.0)] * 3, np.float32)
        return _printed(rng, fonts, (128, 180), paper, int(rng.integers(1, 4)), big=True)
    if item.kind == "note":
        paper = np.array(rng.choice([(0.97, 0.97, 0.95), (0.98, 0.92, 0.55), (0.9, 0.95, 1.0)]), np.float32)
        return _printed(rng, fonts, (160, 220), paper, int(rng.integers(4, 14)), big=False)
    return _pencil(rng)


def random_item(rng: np.random.Generator, centre: tuple[float, float]) -> Item:
    kind = str(rng.choice(KINDS, p=[0.35, 0.25, 0.2, 0.2]))
    size = {
        "coin": (d := rng.uniform(1.1, 1.7), d),
        "card": (w := rng.uniform(3.5, 4.5), w * 1.4),
        "note": (w := rng.uniform(5.0, 9.0), w * 1.35),
        "pencil": (rng.uniform(0.45, 0.55), rng.uniform(8, 12)),
    }[kind]
    return Item(kind, centre, (float(size[0]), float(size[1])), float(rng.uniform(0, 2 * np.pi)))


def draw_item(canvas: np.ndarray, cam: Camera, item: Item, texture: np.ndarray) -> None:
    warp_blend(canvas, texture, cam.project(item.corners()))


def draw_hand(rng: np.random.Generator, canvas: np.ndarray, keep_clear: np.ndarray) -> bool:
    """A blurry hand-like blob reaching in from an edge, never over `keep_clear` (dice) pixels."""
    h, w = canvas.shape[:2]
    skin = np.array(colorsys.hsv_to_rgb(rng.uniform(0.03, 0.09), rng.uniform(0.25, 0.6), rng.uniform(0.35, 0.95)), np.float32)
    for _ in range(6):
        mask = np.zeros((h // 4 + 1, w // 4 + 1), np.float32)
        side = int(rng.integers(4))
        reach = rng.uniform(0.12, 0.3)
        along = rng.uniform(0.15, 0.85)
        cx, cy = [(along, -0.05), (1.05, along), (along, 1.05), (-0.05, along)][side]
        tip = [(along, reach), (1 - reach, along), (along, 1 - reach), (reach, along)][side]
        palm = (int(cx * w / 4), int(cy * h / 4))
        radius = int(min(w, h) / 4 * rng.uniform(0.12, 0.22))
        cv2.circle(mask, palm, int(radius * 1.6), 1.0, -1)
        for k in range(int(rng.integers(2, 5))):
            spread = (k - 1.5) * radius * 0.5
            fx, fy = tip[0] * w / 4, tip[1] * h / 4
            end = (int(fx + (spread if side % 2 == 0 else 0)), int(fy + (spread if side % 2 else 0)))
            cv2.line(mask, palm, end, 1.0, max(2, int(radius * 0.5)))
        big = cv2.resize(cv2.GaussianBlur(mask, (0, 0), 1.2), (w, h), interpolation=cv2.INTER_LINEAR)
        if (big[keep_clear] > 0.02).any():
            continue
        shade = cv2.resize(np.linspace(0.75, 1.1, 16, dtype=np.float32)[None, :], (w, h)) if side % 2 == 0 else 1.0
        colour = skin[None, None, :] * (np.asarray(shade)[..., None] if np.ndim(shade) else shade)
        canvas *= (1.0 - big)[:, :, None]
        canvas += colour * big[:, :, None]
        return True
    return False
