"""The Blender training split's draws that need no Blender: the dice's look, the lights' plan
and what the phone does to the light (docs/synthetic_data.md, "Blender training crops").

The look is drawn apart from every other split: bodies from white to black with the light and
mid greys the reader is weakest on, inks drawn wide around each base hue, the generator's
training fonts and the other fonts on the machine (never a validation-only family). The lights
run from a candle-warm lamp to shade, often two of them in different colours, and the phone
corrects only part of the cast, bends the codes with its tone curve and saves a JPEG of 72-92.
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from companion.dice import Color
from training.synth.appearance import MARKERS, WILD_STYLES, Appearance, ink_bases, jitter_rgb
from training.synth.effects import kelvin_rgb
from training.synth.fonts import FontSpec, families, fonts_for_split, usable_font
from training.synth.games import tone_curve

SPLIT = "train"
# name: (rgb 0..1, weight): the greys and the tinted whites weigh most, where colour is hardest
BODIES: dict[str, tuple[tuple[float, float, float], float]] = {
    "white": ((0.95, 0.95, 0.95), 2.0),
    "ivory": ((0.93, 0.90, 0.80), 2.0),
    "cream": ((0.96, 0.92, 0.78), 1.5),
    "light-grey": ((0.80, 0.80, 0.80), 2.5),
    "grey": ((0.55, 0.56, 0.58), 2.0),
    "pearl": ((0.97, 0.95, 0.93), 1.0),
    "charcoal": ((0.20, 0.20, 0.22), 1.5),
    "black": ((0.07, 0.07, 0.08), 1.5),
}
# how far each ink's hue may lie from its base, either way, in degrees: red and orange (31 deg
# apart) keep at least 11 deg between them; green and blue are far from every other ink
INK_HUE_SPREAD: dict[Color, float] = {Color.RED: 10.0, Color.ORANGE: 10.0, Color.GREEN: 15.0, Color.BLUE: 15.0}
FONT_SUFFIXES = (".ttf", ".otf", ".woff", ".woff2")
KEY_KELVIN = (2200.0, 7000.0)
MIXED_SHARE = 0.45  # photos lit by a second light of a contrasting colour
JPEG_QUALITY = (72, 92)


def train_fonts(extra_dirs: tuple[Path, ...] = ()) -> tuple[FontSpec, ...]:
    """The generator's training fonts and every other usable font under `extra_dirs` (Blender
    ships its own), less the validation-only families, sorted so that a seed means one font."""
    fonts = {f.name: f for f in fonts_for_split("train")}
    for folder in extra_dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.suffix.lower() not in FONT_SUFFIXES or path.stem in fonts:
                continue
            spec = usable_font(path)
            if spec is not None and not spec.is_validation_only():
                fonts[spec.name] = spec
    return tuple(sorted(fonts.values(), key=lambda f: f.name))


def _weighted(rng: np.random.Generator, table: dict) -> str:
    names = list(table)
    weights = np.array([table[n][1] for n in names], float)
    return names[int(rng.choice(len(names), p=weights / weights.sum()))]


def _pick_font(rng: np.random.Generator, fonts: tuple[FontSpec, ...]) -> FontSpec:
    members = list(families(fonts).values())[int(rng.integers(len(families(fonts))))]
    return members[int(rng.integers(len(members)))]


def sample_inks(rng: np.random.Generator, dark_body: bool) -> dict[Color, tuple[float, float, float]]:
    shared = rng.uniform(0.95, 1.25) if dark_body else rng.uniform(0.7, 1.1)
    inks = {}
    for color, base in ink_bases().items():
        spread = INK_HUE_SPREAD[color]
        rgb = jitter_rgb(rng, base, float(rng.uniform(-spread, spread)), (0.6, 1.15), (0.8, 1.15))
        h, s, v = colorsys.rgb_to_hsv(*rgb)  # the shared brightness scales the value: no channel clips, the hue holds
        inks[color] = tuple(float(c) for c in colorsys.hsv_to_rgb(h, s, min(1.0, v * shared)))
    return inks


def sample_look(rng: np.random.Generator, fonts: tuple[FontSpec, ...]) -> Appearance:
    body_name = _weighted(rng, BODIES)
    body = jitter_rgb(rng, BODIES[body_name][0], rng.uniform(-4, 4), (0.8, 1.2), (0.95, 1.03))
    font = _pick_font(rng, fonts)
    return Appearance(
        split="blender-train",
        body_name=body_name,
        body_rgb=tuple(float(c) for c in body),
        inks=sample_inks(rng, float(np.mean(body)) < 0.35),
        font=font,
        bold=int(rng.choice([0, 0, 1, 2])),
        wild_font=font if rng.random() < 0.75 else _pick_font(rng, fonts),
        marker=MARKERS[int(rng.integers(len(MARKERS)))],
        wild_style=WILD_STYLES[int(rng.choice(len(WILD_STYLES), p=[0.7, 0.2, 0.1]))],
        glyph_height=float(rng.uniform(0.42, 0.66)),
        bevel=float(rng.uniform(0.06, 0.14)),
        gloss=float(rng.beta(2, 3)),
        ink_strength=float(rng.uniform(0.7, 1.0)) if rng.random() < 0.2 else 1.0,
    )


@dataclass(frozen=True)
class LightPlan:
    """The key light, the ambient light and, in mixed light, a second light of another colour."""

    key_kelvin: float
    key_elevation_deg: float
    key_azimuth_deg: float
    key_softness_deg: float  # the key's angular size: a window's sun is small, a lamp's shade large
    ambient_kelvin: float
    ambient_share: float  # the sky's light against the key's
    fill_kelvin: float | None = None  # the second light, when mixed
    fill_share: float = 0.0
    fill_azimuth_deg: float = 0.0

    @property
    def mixed(self) -> bool:
        return self.fill_kelvin is not None

    def conditions(self) -> dict:
        out = {"key_kelvin": round(self.key_kelvin), "key_elevation_deg": round(self.key_elevation_deg, 1),
               "key_softness_deg": round(self.key_softness_deg, 1), "ambient_kelvin": round(self.ambient_kelvin),
               "ambient_share": round(self.ambient_share, 2), "mixed": self.mixed}
        if self.fill_kelvin is not None:
            out.update(fill_kelvin=round(self.fill_kelvin), fill_share=round(self.fill_share, 2))
        return out


def sample_lights(rng: np.random.Generator) -> LightPlan:
    key = float(rng.uniform(*KEY_KELVIN))
    warm = key < 4000
    plan = LightPlan(key, float(rng.uniform(25, 85)), float(rng.uniform(0, 360)),
                     float(rng.choice([rng.uniform(0.5, 3), rng.uniform(3, 30)])),
                     float(np.clip(key + rng.uniform(-400, 400), 2000, 9000)), float(rng.uniform(0.15, 0.6)))
    if rng.random() < MIXED_SHARE:  # a lamp in daylight, or daylight through a window under a lamp
        fill = rng.uniform(5500, 7500) if warm else rng.uniform(2200, 3300)
        ambient = float(np.exp(rng.uniform(math.log(min(key, fill)), math.log(max(key, fill)))))
        plan = LightPlan(plan.key_kelvin, plan.key_elevation_deg, plan.key_azimuth_deg, plan.key_softness_deg,
                         ambient, plan.ambient_share, float(fill), float(rng.uniform(0.25, 0.9)),
                         float(plan.key_azimuth_deg + rng.uniform(60, 300)) % 360)
    return plan


def light_rgb(kelvin: float) -> tuple[float, float, float]:
    """A light's colour for Blender: the generator's colour temperature scale, brightest channel 1."""
    rgb = kelvin_rgb(kelvin)
    return tuple(float(c) for c in rgb / rgb.max())


@dataclass(frozen=True)
class Phone:
    """What the phone does between the light on the sensor and the JPEG."""

    wb_correction: float  # the share of the light's estimated cast its auto white balance takes out
    mixed_weight: float  # how far its estimate of the light leans from the key towards the second light
    table_balance: float  # how far a coloured table misleads its grey-world estimate
    exposure_ev: float  # off the metered exposure
    tone: float  # its S-shaped tone curve's strength
    noise: float  # sensor noise, std in 8-bit codes
    motion_px: float  # hand-held motion blur's length (0: none)
    motion_deg: float
    jpeg_quality: int

    def conditions(self) -> dict:
        return {"wb_correction": round(self.wb_correction, 2), "mixed_weight": round(self.mixed_weight, 2),
                "table_balance": round(self.table_balance, 2), "exposure_ev": round(self.exposure_ev, 2),
                "tone": round(self.tone, 2), "noise": round(self.noise, 2), "motion_px": round(self.motion_px, 2),
                "jpeg_quality": self.jpeg_quality}


def sample_phone(rng: np.random.Generator, face_px: float) -> Phone:
    motion = float(rng.uniform(1.0, max(1.5, 0.08 * face_px))) if rng.random() < 0.2 else 0.0
    return Phone(float(rng.uniform(0.3, 0.85)), float(rng.uniform(0.2, 0.6)), float(rng.uniform(0.0, 0.4)),
                 float(rng.uniform(-0.6, 0.4)), float(rng.uniform(0.2, 0.8)), float(rng.uniform(0.5, 3.0)),
                 motion, float(rng.uniform(0, 180)), int(rng.integers(JPEG_QUALITY[0], JPEG_QUALITY[1] + 1)))


def estimated_light(lights: LightPlan, phone: Phone, table_rgb: tuple[float, float, float]) -> np.ndarray:
    """The light's colour as the phone's auto white balance guesses it (mean 1): the key's,
    leaning towards the second light's in mixed light and towards the table's colour."""
    guess = kelvin_rgb(lights.key_kelvin).astype(np.float64)
    if lights.fill_kelvin is not None:
        guess = guess ** (1 - phone.mixed_weight) * kelvin_rgb(lights.fill_kelvin) ** phone.mixed_weight
    table = np.maximum(np.asarray(table_rgb, np.float64), 1e-3)
    guess = guess * (table / table.mean()) ** phone.table_balance
    return guess / guess.mean()


def _srgb(linear: np.ndarray) -> np.ndarray:
    x = np.clip(linear, 0.0, 1.0)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)


def _motion_blur(image: np.ndarray, length: float, angle_deg: float) -> np.ndarray:
    size = int(math.ceil(length)) | 1
    kernel = np.zeros((size, size), np.float32)
    c = size // 2
    dx, dy = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    cv2.line(kernel, (round(c - dx * length / 2), round(c - dy * length / 2)),
             (round(c + dx * length / 2), round(c + dy * length / 2)), 1.0, 1, cv2.LINE_AA)
    return cv2.filter2D(image, -1, kernel / max(float(kernel.sum()), 1e-6), borderType=cv2.BORDER_REPLICATE)


def phone_finish(linear: np.ndarray, lights: LightPlan, phone: Phone, table_rgb: tuple[float, float, float],
                 rng: np.random.Generator) -> np.ndarray:
    """The rendered light (h, w, 3 linear, clipped where the sensor clips) as the phone's 8-bit
    RGB: its partial white balance, metered exposure, sRGB coding, blur, tone curve and noise."""
    sensor = np.clip(linear.astype(np.float32), 0.0, 1.0)
    gains = estimated_light(lights, phone, table_rgb) ** -phone.wb_correction
    balanced = sensor * (gains / gains.mean()).astype(np.float32)
    luma = float((balanced @ np.float32([0.2126, 0.7152, 0.0722])).mean())
    exposed = balanced * np.float32(0.18 / max(luma, 1e-4) * 2.0 ** phone.exposure_ev)
    coded = _srgb(exposed).astype(np.float32) * 255.0
    if phone.motion_px > 0:
        coded = _motion_blur(coded, phone.motion_px, phone.motion_deg)
    noisy = coded + rng.normal(0.0, phone.noise, coded.shape[:2])[:, :, None] + rng.normal(0.0, phone.noise * 0.5, coded.shape)
    return cv2.LUT(np.clip(noisy + 0.5, 0, 255).astype(np.uint8), tone_curve(phone.tone))
