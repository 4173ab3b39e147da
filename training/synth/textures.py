"""Procedural table surfaces, evaluated per pixel in table coordinates (so in perspective).

Each kind is a function of the table point (X, Y) under every pixel, in die edges, plus
noise tiles sampled with cv2.remap; no photographic texture is needed at run time.
"""

from __future__ import annotations

import colorsys
from typing import Callable

import cv2
import numpy as np

TABLES_TRAIN = ("wood", "wood", "felt", "cloth", "laminate", "checks", "stripes", "dots", "stone", "tiles", "paper-mat", "printed-fabric", "newspaper")
TABLES_VAL = ("marble", "tartan", "terrazzo", "wood", "felt")

Rgb = np.ndarray


def _noise_tile(rng: np.random.Generator, size: int = 128, blur: float = 2.0) -> np.ndarray:
    tile = rng.standard_normal((size, size)).astype(np.float32)
    if blur > 0:  # blur a wrapped copy so the tile still repeats seamlessly
        pad = int(3 * blur) + 1
        tile = cv2.GaussianBlur(np.pad(tile, pad, mode="wrap"), (0, 0), blur)[pad:-pad, pad:-pad]
    return (tile - tile.mean()) / (tile.std() + 1e-6)


def _sample(tile: np.ndarray, x: np.ndarray, y: np.ndarray, scale: float) -> np.ndarray:
    """The tile repeated every `1/scale` die edges, read at table points (x, y)."""
    n = tile.shape[0]
    mx = ((x * scale * n) % n).astype(np.float32)
    my = ((y * scale * n) % n).astype(np.float32)
    return cv2.remap(tile, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)


def _hsv(h: float, s: float, v: float) -> Rgb:
    return np.array(colorsys.hsv_to_rgb(h % 1.0, np.clip(s, 0, 1), np.clip(v, 0, 1)), np.float32)


def _mix(a: Rgb, b: Rgb, t: np.ndarray) -> np.ndarray:
    return a + (b - a) * t[:, :, None]


def _rotated(x: np.ndarray, y: np.ndarray, angle: float) -> tuple[np.ndarray, np.ndarray]:
    c, s = float(np.cos(angle)), float(np.sin(angle))
    return x * c + y * s, -x * s + y * c


def wood(rng, x, y):
    u, v = _rotated(x, y, rng.uniform(0, np.pi))
    hue = rng.uniform(0.04, 0.11)
    light = _hsv(hue, rng.uniform(0.3, 0.6), rng.uniform(0.45, 0.9))
    dark = light * rng.uniform(0.45, 0.8)
    plank_w = rng.uniform(4, 14)
    plank = np.floor(v / plank_w)
    warp = _sample(_noise_tile(rng, 128, 3), u * 0.05, v * 0.3, 1.0)
    grain = 0.5 + 0.5 * np.sin(2 * np.pi * (v * rng.uniform(0.4, 1.2) + warp * rng.uniform(0.4, 1.2) + plank * 0.37))
    fine = _sample(_noise_tile(rng, 128, 0.7), u * 0.02, v * 0.5, 1.0)
    t = np.clip(grain ** rng.uniform(1.0, 3.0) + fine * 0.08, 0, 1)
    out = _mix(light, dark, t)
    out *= (1.0 + 0.08 * np.sin(plank * 12.9898))[:, :, None]
    seam = np.abs(v / plank_w - np.round(v / plank_w)) * plank_w < 0.06
    out[seam] *= 0.55
    return out


def felt(rng, x, y):
    colour = _hsv(rng.choice([0.33, 0.38, 0.6, 0.0, 0.08, 0.75]) + rng.uniform(-0.03, 0.03), rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.7))
    fibre = _sample(_noise_tile(rng, 128, 0.6), x, y, 0.6)
    mottle = _sample(_noise_tile(rng, 64, 4), x, y, 0.03)
    return colour * (1 + 0.06 * fibre + 0.05 * mottle)[:, :, None]


def _plain_felt(rng, x, y, hue: tuple[float, float], sat: tuple[float, float], val: tuple[float, float]):
    """A felt of one chosen colour: a games mat whose colour lights the dice above it."""
    colour = _hsv(rng.uniform(*hue), rng.uniform(*sat), rng.uniform(*val))
    fibre = _sample(_noise_tile(rng, 128, 0.6), x, y, 0.6)
    mottle = _sample(_noise_tile(rng, 64, 4), x, y, 0.03)
    return colour * (1 + 0.06 * fibre + 0.05 * mottle)[:, :, None]


def felt_green(rng, x, y):
    return _plain_felt(rng, x, y, (0.30, 0.40), (0.45, 0.85), (0.25, 0.6))


def felt_blue(rng, x, y):
    return _plain_felt(rng, x, y, (0.56, 0.64), (0.45, 0.85), (0.25, 0.6))


def slate(rng, x, y):
    return _plain_felt(rng, x, y, (0.52, 0.62), (0.05, 0.2), (0.12, 0.3))


def cloth(rng, x, y):
    u, v = _rotated(x, y, rng.uniform(0, np.pi))
    freq = rng.uniform(2.0, 5.0)
    weave = np.sin(2 * np.pi * u * freq) * np.sin(2 * np.pi * v * freq)
    base = _hsv(rng.uniform(0, 1), rng.uniform(0.0, 0.7), rng.uniform(0.3, 0.95))
    folds = _sample(_noise_tile(rng, 64, 6), x, y, 0.02)
    return base * (1 + 0.07 * weave + 0.08 * folds)[:, :, None]


def laminate(rng, x, y):
    base = _hsv(rng.uniform(0, 1), rng.uniform(0, 0.25), rng.uniform(0.55, 0.97))
    speck = _sample(_noise_tile(rng, 256, 0.5), x, y, 0.3)
    return base * (1 + 0.03 * speck)[:, :, None]


def checks(rng, x, y):
    u, v = _rotated(x, y, rng.uniform(0, np.pi))
    period = rng.uniform(1.0, 5.0)
    a = (np.sin(np.pi * u / period) > 0).astype(np.float32)
    b = (np.sin(np.pi * v / period) > 0).astype(np.float32)
    c1 = _hsv(rng.uniform(0, 1), rng.uniform(0.3, 0.9), rng.uniform(0.3, 0.9))
    c2 = _hsv(rng.uniform(0, 1), rng.uniform(0, 0.3), rng.uniform(0.8, 1.0))
    return _mix(c2, c1, cv2.GaussianBlur((a + b) / 2, (0, 0), 0.7))


def stripes(rng, x, y):
    u, _ = _rotated(x, y, rng.uniform(0, np.pi))
    period = rng.uniform(0.8, 6.0)
    t = (np.sin(2 * np.pi * u / period) > rng.uniform(-0.5, 0.5)).astype(np.float32)
    c1 = _hsv(rng.uniform(0, 1), rng.uniform(0.2, 0.9), rng.uniform(0.3, 0.95))
    c2 = _hsv(rng.uniform(0, 1), rng.uniform(0, 0.9), rng.uniform(0.3, 0.95))
    return _mix(c1, c2, cv2.GaussianBlur(t, (0, 0), 0.7))


def dots(rng, x, y):
    period = rng.uniform(1.0, 4.0)
    u, v = _rotated(x, y, rng.uniform(0, np.pi))
    du = u / period - np.round(u / period)
    dv = v / period - np.round(v / period)
    t = (np.hypot(du, dv) < rng.uniform(0.12, 0.35)).astype(np.float32)
    ground = _hsv(rng.uniform(0, 1), rng.uniform(0, 0.8), rng.uniform(0.3, 0.95))
    dot = _hsv(rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.2, 1))
    return _mix(ground, dot, cv2.GaussianBlur(t, (0, 0), 0.7))


def stone(rng, x, y):
    n1 = _sample(_noise_tile(rng, 128, 1), x, y, 0.15)
    n2 = _sample(_noise_tile(rng, 128, 0.5), x, y, 0.6)
    c1 = _hsv(rng.uniform(0, 1), rng.uniform(0, 0.25), rng.uniform(0.3, 0.8))
    c2 = _hsv(rng.uniform(0, 1), rng.uniform(0, 0.25), rng.uniform(0.2, 0.9))
    return _mix(c1, c2, np.clip(0.5 + 0.25 * n1 + 0.2 * n2, 0, 1))


def tiles(rng, x, y):
    size = rng.uniform(3, 12)
    u, v = _rotated(x, y, rng.uniform(0, np.pi))
    iu, iv = np.floor(u / size), np.floor(v / size)
    base = _hsv(rng.uniform(0, 1), rng.uniform(0, 0.5), rng.uniform(0.4, 0.95))
    tint = 1 + 0.06 * np.sin(iu * 12.9898 + iv * 78.233)
    grout = (np.minimum(np.abs(u / size - np.round(u / size)), np.abs(v / size - np.round(v / size))) * size) < 0.08
    out = base * tint[:, :, None]
    out[grout] = base * rng.uniform(0.4, 1.2)
    return out


def paper_mat(rng, x, y):
    base = _hsv(rng.uniform(0.05, 0.15), rng.uniform(0, 0.12), rng.uniform(0.8, 0.98))
    fibre = _sample(_noise_tile(rng, 128, 1.0), x, y, 0.4)
    out = base * (1 + 0.03 * fibre)[:, :, None]
    u, v = _rotated(x, y, rng.uniform(0, np.pi))
    grid = rng.uniform(2, 6)
    lines = (np.abs(u / grid - np.round(u / grid)) * grid < 0.04) | (np.abs(v / grid - np.round(v / grid)) * grid < 0.04)
    out[lines] *= rng.uniform(0.6, 0.9)
    return out


def marble(rng, x, y):
    u, v = _rotated(x, y, rng.uniform(0, np.pi))
    turb = _sample(_noise_tile(rng, 128, 4), x, y, 0.05) + 0.5 * _sample(_noise_tile(rng, 128, 2), x, y, 0.12)
    vein = np.abs(np.sin(u * 0.4 + turb * 2.5)) ** 0.3
    base = _hsv(rng.uniform(0, 1), rng.uniform(0, 0.1), rng.uniform(0.75, 0.95))
    dark = _hsv(rng.uniform(0, 1), rng.uniform(0, 0.2), rng.uniform(0.2, 0.5))
    return _mix(dark, base, vein)


def tartan(rng, x, y):
    u, v = _rotated(x, y, rng.uniform(0, np.pi))
    period = rng.uniform(4, 12)
    out = np.ones(x.shape + (3,), np.float32) * _hsv(rng.uniform(0, 1), 0.7, rng.uniform(0.3, 0.6))
    for _ in range(3):
        colour = _hsv(rng.uniform(0, 1), rng.uniform(0.4, 0.9), rng.uniform(0.2, 0.9))
        width, phase = rng.uniform(0.05, 0.2), rng.uniform(0, 1)
        band_u = ((u / period + phase) % 1.0) < width
        band_v = ((v / period + phase) % 1.0) < width
        out[band_u] = 0.5 * out[band_u] + 0.5 * colour
        out[band_v] = 0.5 * out[band_v] + 0.5 * colour
    return cv2.GaussianBlur(out, (0, 0), 0.6)


def terrazzo(rng, x, y):
    base = _hsv(rng.uniform(0, 1), rng.uniform(0, 0.15), rng.uniform(0.6, 0.95))
    out = np.ones(x.shape + (3,), np.float32) * base
    for _ in range(3):
        chips = _sample(_noise_tile(rng, 128, 1.0), x, y, 0.25)
        colour = _hsv(rng.uniform(0, 1), rng.uniform(0.1, 0.7), rng.uniform(0.2, 0.9))
        out[chips > 1.6] = colour
    return out


def _sample_rgb(tile: np.ndarray, x: np.ndarray, y: np.ndarray, period: float, angle: float) -> np.ndarray:
    """A colour tile repeated every `period` die edges, turned by `angle`."""
    u, v = _rotated(x, y, angle)
    return _sample(tile, u, -v, 1.0 / period)  # tile rows run down the table, as print does


def printed_fabric(rng, x, y):
    """A printed tablecloth: a repeating tile of random flowers/leaves/spots in a few colours."""
    n = 192
    ground = _hsv(rng.uniform(0, 1), rng.uniform(0, 0.6), rng.uniform(0.4, 0.98))
    tile = np.ones((n, n, 3), np.float32) * ground
    palette = [_hsv(rng.uniform(0, 1), rng.uniform(0.2, 0.9), rng.uniform(0.2, 0.95)) for _ in range(3)]
    for _ in range(int(rng.integers(6, 20))):
        colour = palette[int(rng.integers(3))].tolist()
        cx, cy = (int(c) for c in rng.integers(0, n, 2))
        a, b = (int(r) for r in rng.integers(4, 24, 2))
        for dx in (-n, 0, n):  # draw wrapped copies so the tile repeats without seams
            for dy in (-n, 0, n):
                cv2.ellipse(tile, (cx + dx, cy + dy), (a, b), float(rng.uniform(0, 180)), 0, 360, colour, -1, cv2.LINE_AA)
    return _sample_rgb(cv2.GaussianBlur(tile, (0, 0), 0.8), x, y, rng.uniform(4, 14), rng.uniform(0, np.pi))


def newspaper(rng, x, y):
    """Printed text under the dice: digits and letters everywhere (distractors)."""
    from training.synth.fonts import available_fonts, glyph_mask

    fonts = available_fonts()
    n = 256
    paper = _hsv(rng.uniform(0.08, 0.15), rng.uniform(0.0, 0.15), rng.uniform(0.75, 0.95))
    ink_layer = np.zeros((n, n), np.float32)
    font = fonts[int(rng.integers(len(fonts)))]
    line_h = int(rng.integers(10, 22))
    for row in range(0, n - line_h, line_h + 4):
        col = 2
        while col < n - line_h:
            text = str(rng.choice(list("0123456789ABCDEFGHKMNPRSTWxyzaeo")))
            glyph = glyph_mask(font, text, 0).astype(np.float32) / 255.0
            w = max(1, int(glyph.shape[1] * line_h / glyph.shape[0]))
            if col + w >= n:
                break
            ink_layer[row : row + line_h, col : col + w] = cv2.resize(glyph, (w, line_h), interpolation=cv2.INTER_AREA)
            col += w + int(rng.integers(1, 6)) + (line_h if rng.random() < 0.15 else 0)
    ink = _hsv(0, 0, rng.uniform(0.05, 0.3)) if rng.random() < 0.8 else _hsv(rng.uniform(0, 1), 0.8, 0.6)
    tile = _mix(paper, ink, ink_layer)
    # Letters from about a fifth of a die (newsprint) to a whole die (posters, menus).
    return _sample_rgb(tile, x, y, rng.uniform(3, 14), rng.uniform(0, np.pi))


KINDS: dict[str, Callable] = {
    "printed-fabric": printed_fabric, "newspaper": newspaper,
    "wood": wood, "felt": felt, "cloth": cloth, "laminate": laminate, "checks": checks, "stripes": stripes,
    "dots": dots, "stone": stone, "tiles": tiles, "paper-mat": paper_mat, "marble": marble, "tartan": tartan,
    "terrazzo": terrazzo, "felt-green": felt_green, "felt-blue": felt_blue, "slate": slate,
}


def table_kinds(split: str) -> tuple[str, ...]:
    return TABLES_VAL if split == "val" else TABLES_TRAIN


def render_table(rng: np.random.Generator, kind: str, table_x: np.ndarray, table_y: np.ndarray) -> np.ndarray:
    """RGB float image of the table seen through the camera (per-pixel table coordinates)."""
    return np.clip(KINDS[kind](rng, table_x, table_y), 0.0, 1.0).astype(np.float32)
