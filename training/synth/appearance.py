"""The look of one photo's dice set: body, inks, font, 6/9 marker, wild style.

Each split draws from its own pools: the validation split holds out some fonts, body colours,
ink hue offsets and table kinds that training never sees, so validation measures how the
models cope with a look they were not trained on (the real dice's look is unknown).
"""

from __future__ import annotations

import colorsys
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from companion.dice import COLORS, Color
from training.synth.fonts import FontSpec, families, fonts_for_split

SPLITS = ("train", "val", "calib")

# name: (rgb 0..1, weight). Ivory/white most likely (DEVELOPERS.md), black possible.
BODIES_TRAIN: dict[str, tuple[tuple[float, float, float], float]] = {
    "ivory": ((0.93, 0.90, 0.80), 5.0),
    "white": ((0.95, 0.95, 0.95), 5.0),
    "cream": ((0.96, 0.92, 0.78), 2.0),
    "black": ((0.07, 0.07, 0.08), 2.5),
    "grey": ((0.55, 0.56, 0.58), 0.7),
    "light-grey": ((0.80, 0.80, 0.80), 1.0),
    "beige": ((0.85, 0.78, 0.65), 0.8),
    "light-blue": ((0.70, 0.82, 0.95), 0.4),
    "yellow": ((0.97, 0.90, 0.45), 0.3),
    "navy": ((0.10, 0.14, 0.30), 0.4),
}
BODIES_VAL: dict[str, tuple[tuple[float, float, float], float]] = {
    "pearl": ((0.97, 0.95, 0.93), 4.0),
    "charcoal": ((0.20, 0.20, 0.22), 2.0),
    "sand": ((0.88, 0.82, 0.70), 2.0),
    "mint": ((0.78, 0.93, 0.85), 0.7),
    "ivory": ((0.93, 0.90, 0.80), 3.0),
    "white": ((0.95, 0.95, 0.95), 3.0),
    "black": ((0.07, 0.07, 0.08), 2.0),
}
MARKERS = ("underline", "bar", "dot", "dot-below")
WILD_STYLES = ("plain", "circled", "boxed")


@lru_cache(maxsize=1)
def ink_bases() -> dict[Color, tuple[float, float, float]]:
    text = resources.files("companion").joinpath("data/phase10_dice.json").read_text("utf-8")
    colors = json.loads(text)["colors"]
    return {c: tuple(v / 255.0 for v in colors[c.value]["approx_rgb"]) for c in COLORS}


@dataclass(frozen=True)
class Appearance:
    split: str
    body_name: str
    body_rgb: tuple[float, float, float]
    inks: dict[Color, tuple[float, float, float]]
    font: FontSpec
    bold: int  # extra stroke, 0..2
    wild_font: FontSpec
    marker: str  # how 6 and 9 are told apart
    wild_style: str
    glyph_height: float  # numeral height as a fraction of the face
    bevel: float  # rounded-edge width as a fraction of the face
    gloss: float  # 0 matte .. 1 glossy plastic
    ink_strength: float = 1.0  # below 1: faded or thin paint that lets the body show through

    def conditions(self) -> dict:
        return {
            "body": self.body_name,
            "font": self.font.name,
            "wild_font": self.wild_font.name,
            "bold": self.bold,
            "marker_6_9": self.marker,
            "wild_style": self.wild_style,
            "ink_rgb": {c.value: [round(v * 255) for v in rgb] for c, rgb in self.inks.items()},
            "gloss": round(self.gloss, 2),
            "ink_strength": round(self.ink_strength, 2),
        }


def _weighted(rng: np.random.Generator, table: dict) -> str:
    names = list(table)
    weights = np.array([table[n][1] for n in names], float)
    return names[int(rng.choice(len(names), p=weights / weights.sum()))]


def jitter_rgb(rng: np.random.Generator, rgb, hue_deg: float, sat: tuple[float, float], val: tuple[float, float]):
    h, s, v = colorsys.rgb_to_hsv(*rgb)
    h = (h + hue_deg / 360.0) % 1.0
    s = float(np.clip(s * rng.uniform(*sat), 0.0, 1.0))
    v = float(np.clip(v * rng.uniform(*val), 0.0, 1.0))
    return colorsys.hsv_to_rgb(h, s, v)


def _hue_offset(rng: np.random.Generator, split: str) -> float:
    """Training inks stay within +-7 deg of the base hue; validation also sees 7..11 deg."""
    if split == "val" and rng.random() < 0.5:
        return float(rng.choice([-1, 1]) * rng.uniform(7.0, 11.0))
    return float(rng.uniform(-7.0, 7.0))


def _inks(rng: np.random.Generator, split: str, dark_body: bool) -> dict[Color, tuple[float, float, float]]:
    shared_val = rng.uniform(0.75, 1.1) if not dark_body else rng.uniform(0.95, 1.25)
    inks = {}
    for color, base in ink_bases().items():
        hue = _hue_offset(rng, split)
        rgb = jitter_rgb(rng, base, hue, (0.7, 1.1), (0.9, 1.1))
        inks[color] = tuple(float(np.clip(c * shared_val, 0, 1)) for c in rgb)
    return inks


def _pick_font(rng: np.random.Generator, split: str) -> FontSpec:
    groups = families(fonts_for_split(split))
    members = list(groups.values())[int(rng.integers(len(groups)))]
    return members[int(rng.integers(len(members)))]


def sample_appearance(rng: np.random.Generator, split: str) -> Appearance:
    bodies = BODIES_VAL if split == "val" else BODIES_TRAIN
    body_name = _weighted(rng, bodies)
    body = jitter_rgb(rng, bodies[body_name][0], rng.uniform(-4, 4), (0.8, 1.2), (0.95, 1.03))
    dark_body = float(np.mean(body)) < 0.35
    font = _pick_font(rng, split)
    wild_font = font if rng.random() < 0.75 else _pick_font(rng, split)
    return Appearance(
        split=split,
        body_name=body_name,
        body_rgb=tuple(float(c) for c in body),
        inks=_inks(rng, split, dark_body),
        font=font,
        bold=int(rng.choice([0, 0, 1, 2])),
        wild_font=wild_font,
        marker=MARKERS[int(rng.choice(len(MARKERS), p=[0.4, 0.25, 0.2, 0.15]))],
        wild_style=WILD_STYLES[int(rng.choice(len(WILD_STYLES), p=[0.7, 0.2, 0.1]))],
        glyph_height=float(rng.uniform(0.42, 0.66)),
        bevel=float(rng.uniform(0.06, 0.14)),
        gloss=float(rng.beta(2, 3)),
        ink_strength=float(rng.uniform(0.7, 1.0)) if rng.random() < 0.25 else 1.0,
    )
