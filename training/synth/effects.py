"""What the phone camera does to the light: colour cast, exposure, vignetting, blur, noise."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np


def kelvin_rgb(kelvin: float) -> np.ndarray:
    """Approximate colour of a light source, normalised to mean 1 (2000 K candle-warm to 10000 K
    blue sky; the two ends are drawn only by the warm and cold light options)."""
    table = {2000: (1.0, 0.54, 0.12), 2500: (1.0, 0.62, 0.32), 3000: (1.0, 0.71, 0.42), 4000: (1.0, 0.82, 0.64),
             5000: (1.0, 0.91, 0.82), 6500: (1.0, 1.0, 1.0), 8000: (0.86, 0.91, 1.0), 10000: (0.79, 0.86, 1.0)}
    keys = sorted(table)
    k = float(np.clip(kelvin, keys[0], keys[-1]))
    hi = next(x for x in keys if x >= k)
    lo = max(x for x in keys if x <= k)
    t = 0.0 if hi == lo else (k - lo) / (hi - lo)
    rgb = np.array(table[lo]) * (1 - t) + np.array(table[hi]) * t
    return (rgb / rgb.mean()).astype(np.float32)


@dataclass(frozen=True)
class CameraEffects:
    wb_gain: tuple[float, float, float]  # residual white-balance error after the phone's correction
    exposure: float
    gamma: float
    vignette: float
    gradient: float  # light falling off across the table
    gradient_angle: float
    blur_kind: str  # none | defocus | motion
    blur_px: float
    motion_angle: float
    noise: float  # std of sensor noise, 0..1 scale
    jpeg_quality: int
    sharpen: float = 0.0  # phone unsharp-mask strength (halos around edges)
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)  # a second light's colour on one side

    def conditions(self) -> dict:
        return {
            "wb_gain": [round(g, 3) for g in self.wb_gain],
            "exposure": round(self.exposure, 3),
            "vignette": round(self.vignette, 3),
            "blur": self.blur_kind,
            "blur_px": round(self.blur_px, 2),
            "noise": round(self.noise, 4),
            "jpeg_quality": self.jpeg_quality,
            "sharpen": round(self.sharpen, 2),
            "two_lights": self.tint != (1.0, 1.0, 1.0),
        }


# How much of the light's colour the phone's auto white balance takes out (1: all of it).
USUAL_CORRECTION = (0.5, 1.0)
WEAK_CORRECTION = (0.0, 0.35)  # a phone that keeps a lamp's warmth, or fails under it


def sample_effects(rng: np.random.Generator, light_rgb: np.ndarray,
                   correction_range: tuple[float, float] = USUAL_CORRECTION) -> CameraEffects:
    # The phone corrects most of the light's colour; what it leaves is the cast we see.
    correction = rng.uniform(*correction_range)
    wb = (1.0 / light_rgb) ** correction * np.exp(rng.normal(0, 0.04, 3))
    blur_kind = str(rng.choice(["none", "defocus", "motion"], p=[0.45, 0.4, 0.15]))
    return CameraEffects(
        wb_gain=tuple(float(g) for g in wb),
        exposure=float(np.exp(rng.normal(0.0, 0.25))),
        gamma=float(rng.uniform(0.85, 1.15)),
        vignette=float(rng.uniform(0.0, 0.45)),
        gradient=float(rng.uniform(0.0, 0.35)),
        gradient_angle=float(rng.uniform(0, 2 * np.pi)),
        blur_kind=blur_kind,
        blur_px=float(rng.uniform(0.4, 2.2) if blur_kind == "defocus" else rng.uniform(2.0, 7.0)),
        motion_angle=float(rng.uniform(0, 180)),
        noise=float(rng.choice([rng.uniform(0.0, 0.012), rng.uniform(0.01, 0.045)])),
        jpeg_quality=int(rng.integers(40, 96)),
        sharpen=float(rng.uniform(0.3, 1.2)) if rng.random() < 0.4 else 0.0,
        tint=tuple(float(c) for c in kelvin_rgb(rng.uniform(2600, 8000))) if rng.random() < 0.2 else (1.0, 1.0, 1.0),
    )


def neutral_effects() -> CameraEffects:
    """A perfect camera: no cast, blur, noise or fall-off (JPEG quality 95)."""
    return CameraEffects((1.0, 1.0, 1.0), 1.0, 1.0, 0.0, 0.0, 0.0, "none", 0.0, 0.0, 0.0, 95)


def _illumination(shape: tuple[int, int], fx: CameraEffects) -> np.ndarray:
    """Smooth light fall-off; computed small and enlarged since it has no detail."""
    h, w = shape
    ys = np.linspace(-1, 1, 24, dtype=np.float32)[:, None]
    xs = np.linspace(-1, 1, 32, dtype=np.float32)[None, :]
    ramp = np.cos(fx.gradient_angle) * xs + np.sin(fx.gradient_angle) * ys
    radial = (xs ** 2 + ys ** 2) / 2
    small = ((1.0 + fx.gradient * ramp / 2) * (1.0 - fx.vignette * radial)).astype(np.float32)
    # A second light (window vs lamp) colours the side the gradient rises towards.
    side = np.clip(ramp, 0, 1)[:, :, None]
    colour = (1.0 + (np.asarray(fx.tint, np.float32) - 1.0) * side * 0.6).astype(np.float32)
    return cv2.resize(small[:, :, None] * colour, (w, h), interpolation=cv2.INTER_LINEAR)


def _motion_kernel(length: float, angle_deg: float) -> np.ndarray:
    size = max(3, int(np.ceil(length)) | 1)
    kernel = np.zeros((size, size), np.float32)
    c = size // 2
    dx, dy = np.cos(np.radians(angle_deg)) * length / 2, np.sin(np.radians(angle_deg)) * length / 2
    cv2.line(kernel, (int(round(c - dx)), int(round(c - dy))), (int(round(c + dx)), int(round(c + dy))), 1.0, 1, cv2.LINE_AA)
    return kernel / kernel.sum()


NOISE_BANK_SIZE = 1024


@lru_cache(maxsize=1)
def _noise_bank() -> np.ndarray:
    """Sensor noise made once per process (fixed seed); each photo reads a random window.
    Fine luma grain plus coarser colour blotches, as phone sensors show."""
    rng = np.random.default_rng(0)
    n = NOISE_BANK_SIZE
    luma = rng.standard_normal((n, n, 1), dtype=np.float32)
    chroma = cv2.resize(rng.standard_normal((n // 2, n // 2, 3), dtype=np.float32) * 0.5, (n, n), interpolation=cv2.INTER_LINEAR)
    return np.ascontiguousarray(luma + chroma)


def _noise_field(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    bank = _noise_bank()
    if h <= bank.shape[0] and w <= bank.shape[1]:
        y = int(rng.integers(0, bank.shape[0] - h + 1))
        x = int(rng.integers(0, bank.shape[1] - w + 1))
        return bank[y : y + h, x : x + w]
    # Phone-size photos (the samples only): fresh noise of the same make-up.
    luma = rng.standard_normal((h, w, 1), dtype=np.float32)
    chroma = rng.standard_normal((h // 2 + 1, w // 2 + 1, 3), dtype=np.float32) * 0.5
    return luma + cv2.resize(chroma, (w, h), interpolation=cv2.INTER_LINEAR)


def apply_effects(rng: np.random.Generator, image: np.ndarray, fx: CameraEffects, focus: np.ndarray | None = None,
                  blur_scale: float | None = None) -> np.ndarray:
    """Linear-ish float RGB scene -> 8-bit RGB photo (before JPEG). OpenCV calls, for speed.

    The blur is sampled for training-size photos; by default a larger photo is blurred in
    proportion (it shows the same scene, only with more pixels). `blur_scale` overrides that
    factor, for photos whose dice are small because the camera is far, not because it has
    few pixels.
    """
    h, w = image.shape[:2]
    illum = _illumination((h, w), fx)  # (h, w, 3)
    blur_px = fx.blur_px * (blur_scale if blur_scale is not None else max(1.0, max(h, w) / 960))
    gains = np.asarray(fx.wb_gain, np.float32) * np.float32(fx.exposure)
    img = cv2.multiply(image, (illum * gains).astype(np.float32))
    if fx.blur_kind == "defocus" and focus is not None:
        # Depth of field: sharp at the focused depth, blurred (up to 2.5x) away from it.
        far = cv2.GaussianBlur(img, (0, 0), blur_px * 2.5)
        img = img + (far - img) * focus[:, :, None]
    elif fx.blur_kind == "defocus":
        img = cv2.GaussianBlur(img, (0, 0), blur_px)
    elif fx.blur_kind == "motion":
        img = cv2.filter2D(img, -1, _motion_kernel(blur_px, fx.motion_angle))
    if fx.sharpen > 0:
        img = cv2.addWeighted(img, 1.0 + fx.sharpen, cv2.GaussianBlur(img, (0, 0), 1.2), -fx.sharpen, 0.0)
    out = cv2.convertScaleAbs(img, alpha=255.0)
    lut = np.clip(((np.arange(256) / 255.0) ** fx.gamma) * 255.0 + 0.5, 0, 255).astype(np.uint8)
    out = cv2.LUT(out, lut)
    if fx.noise > 0:
        out = cv2.convertScaleAbs(cv2.scaleAdd(_noise_field(rng, h, w), fx.noise * 255.0, out.astype(np.float32)))
    return out
