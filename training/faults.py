"""Camera faults the photo generator does not make, for augmenting training and for stress sets.

Each fault takes an RGB uint8 image and its strength and returns an image of the same size,
so labels stay true. `random_fault` draws one at a random strength: the detector and reader
training apply it to a share of their inputs (the generator's own camera model stays the
main source of variety); `training/stress.py` applies each at one fixed strength to whole
photos to measure what they cost.
"""

from __future__ import annotations

import cv2
import numpy as np

from training.synth.dataset import encode_jpeg


def _clip(x: np.ndarray) -> np.ndarray:
    return np.clip(x, 0, 255).astype(np.uint8)


def cast(rgb: np.ndarray, gains: tuple[float, float, float]) -> np.ndarray:
    """A light colour the phone did not correct: each channel scaled (gains normalised to mean 1)."""
    g = np.asarray(gains, np.float32)
    return _clip(rgb.astype(np.float32) * (g / g.mean()))


def saturate(rgb: np.ndarray, factor: float) -> np.ndarray:
    """A phone's "vivid" colour mode: HSV saturation scaled."""
    hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV).astype(np.float32)
    hsv[..., 1] *= factor
    return cv2.cvtColor(_clip(hsv), cv2.COLOR_HSV2RGB)


def tone_map(rgb: np.ndarray, clip: float, tiles: int = 0) -> np.ndarray:
    """Local tone mapping (an HDR look): lightness equalised tile by tile (tiles: per side;
    0: tiles of about 120 px)."""
    tiles = tiles or max(1, round(min(rgb.shape[:2]) / 120))
    lab = cv2.cvtColor(rgb, cv2.COLOR_RGB2LAB)
    lab[..., 0] = cv2.createCLAHE(clipLimit=clip, tileGridSize=(tiles, tiles)).apply(lab[..., 0])
    return cv2.cvtColor(lab, cv2.COLOR_LAB2RGB)


def sharpen(rgb: np.ndarray, amount: float, sigma: float = 2.0) -> np.ndarray:
    """An unsharp mask: bright and dark halos along every edge."""
    x = rgb.astype(np.float32)
    return _clip(x + amount * (x - cv2.GaussianBlur(x, (0, 0), sigma)))


def jpeg(rgb: np.ndarray, quality: int) -> np.ndarray:
    """Compressed as the generator writes its photos, and decoded back."""
    buf = np.frombuffer(encode_jpeg(rgb, quality), np.uint8)
    return cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


def low_resolution(rgb: np.ndarray, factor: float, quality: int = 0) -> np.ndarray:
    """Shrunk (and JPEG-compressed when quality > 0) and enlarged back: a photo sent by a
    messaging app, or taken with digital zoom."""
    h, w = rgb.shape[:2]
    small = cv2.resize(rgb, (max(2, round(w * factor)), max(2, round(h * factor))), interpolation=cv2.INTER_AREA)
    if quality:
        small = jpeg(small, quality)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def motion_blur(rgb: np.ndarray, length: int, angle_deg: float) -> np.ndarray:
    """The phone moved while the shutter was open: a straight smear `length` px long."""
    length = max(2, int(length))
    k = np.zeros((length, length), np.float32)
    k[length // 2, :] = 1.0
    turn = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), angle_deg, 1.0)
    k = cv2.warpAffine(k, turn, (length, length))
    return cv2.filter2D(rgb, -1, k / k.sum())


def dark_noisy(rgb: np.ndarray, gain: float, noise: float, brighten: float, rng: np.random.Generator) -> np.ndarray:
    """Underexposed (x gain), with sensor noise, then brightened by the phone (x brighten)."""
    x = rgb.astype(np.float32) * gain + rng.normal(0, noise, rgb.shape).astype(np.float32)
    return _clip(np.clip(x, 0, 255) * brighten)


def overexpose(rgb: np.ndarray, gain: float) -> np.ndarray:
    """Too bright: light dice bodies and pale inks clip to white."""
    return _clip(rgb.astype(np.float32) * gain)


def colour_fringes(rgb: np.ndarray, scale: float, dx: float = 0.0, dy: float = 0.0) -> np.ndarray:
    """Lateral chromatic aberration: red enlarged about the centre by `scale` and shifted by
    (dx, dy), blue the opposite way. A crop far from the lens's centre sees mostly the shift."""
    h, w = rgb.shape[:2]
    out = rgb.copy()
    for channel, sign in ((0, 1.0), (2, -1.0)):
        m = cv2.getRotationMatrix2D((w / 2, h / 2), 0.0, scale ** sign)
        m[:, 2] += (sign * dx, sign * dy)
        out[..., channel] = cv2.warpAffine(rgb[..., channel], m, (w, h), borderMode=cv2.BORDER_REFLECT)
    return out


def random_fault(rgb: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One fault, drawn uniformly, at a random strength up to a little past the stress set's."""
    kind = int(rng.integers(10))
    if kind == 0:
        warm, green = rng.uniform(-1, 1), rng.uniform(-0.3, 0.3)
        return cast(rgb, (1.0 + 0.3 * warm, 1.0 + green, 1.0 - 0.5 * warm))
    if kind == 1:
        return saturate(rgb, rng.uniform(1.2, 1.8))
    if kind == 2:
        return tone_map(rgb, rng.uniform(1.5, 4.0))
    if kind == 3:
        return sharpen(rgb, rng.uniform(0.7, 2.5), rng.uniform(1.0, 2.5))
    if kind == 4:
        return low_resolution(rgb, rng.uniform(0.3, 0.75), int(rng.integers(30, 80)))
    if kind == 5:
        return motion_blur(rgb, int(rng.integers(3, 12)), rng.uniform(0, 180))
    if kind == 6:
        gain = rng.uniform(0.3, 0.6)
        return dark_noisy(rgb, gain, rng.uniform(2, 8), rng.uniform(0.7, 1.0) / gain, rng)
    if kind == 7:
        return overexpose(rgb, rng.uniform(1.3, 2.2))
    if kind == 8:
        return jpeg(rgb, int(rng.integers(15, 45)))
    return colour_fringes(rgb, rng.uniform(0.995, 1.005), rng.uniform(-1.5, 1.5), rng.uniform(-1.5, 1.5))
