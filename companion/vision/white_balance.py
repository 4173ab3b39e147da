"""One light for all dice: the reader's crops seen as under the training's light.

Every die of a photo is lit by the same light, and a white or ivory body is the photo's white
reference (inks.light_reference). Under a light more coloured than nearly all the training
look's (a 2200-3000 K lamp the phone barely corrects), the reader sees inks it never learnt:
a red that looks like its orange, a blue like its green. The light multiplies each channel of
everything it lights, so one gain per channel (von Kries) undoes it: the gains that take the
photo's median light body BALANCE_SHARE of the way to the training look's (TRAINING_BODY),
brightness kept, applied to the crops the reader sees. Not all the way: under a 2200 K lamp the
blue channel holds a fifth of the red's light, and the full gain amplifies its noise and JPEG
loss as much as it restores the inks. Under the usual light nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from companion.vision.inks import SRGB_TO_LINEAR, cast_of, light_reference

# The median light die body of data/calib (the training look), log linear RGB:
# `python -m training.light_calibration --reference data/calib` (its 222 photos with a light body).
TRAINING_BODY = np.array([-0.8206, -1.0298, -1.3251])
# A light whose cast (inks.light_cast) is beyond this is beyond the training look's: 95% of the
# data/calib photos stay under 1.29, under a 2200-3000 K lamp the median is 1.78 (docs/vision.md).
BALANCE_CAST = 1.2
BALANCE_SHARE = 0.5  # chosen on the calibration sets (docs/vision.md)
# The colour head's temperature for crops so corrected (the calibration's is for the training
# look): `python -m training.light_calibration --unusual data/calib data/stress_*_calib`.
UNUSUAL_COLOUR_TEMPERATURE = 1.35

_LEVELS = 4096  # linear values are coded back to sRGB through a table this fine
_lin = np.linspace(0.0, 1.0, _LEVELS)
_TO_SRGB = np.round(255.0 * np.where(_lin <= 0.0031308, 12.92 * _lin, 1.055 * _lin ** (1 / 2.4) - 0.055)).astype(np.uint8)


@dataclass(frozen=True)
class LightCorrection:
    """What the reader's crops need for the photo's light: per channel (R, G, B) linear gains,
    or None when the light is within the training look's (or has no white reference)."""

    gains: np.ndarray | None = None

    @property
    def unusual(self) -> bool:
        """The light is beyond the training look's (and the crops are corrected)."""
        return self.gains is not None

    def apply(self, images: np.ndarray) -> np.ndarray:
        return images if self.gains is None else balance(images, self.gains)


def light_correction(rgb: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> LightCorrection:
    """The gains that take the photo's light BALANCE_SHARE of the way to the training look's,
    brightness kept, when its cast is beyond BALANCE_CAST; none when it is not, or the photo has
    no white reference (mostly dark bodies)."""
    return correction_of(light_reference(rgb, boxes))


def correction_of(reference: np.ndarray | None) -> LightCorrection:
    """light_correction for a photo whose white reference (inks.light_reference) is known."""
    if reference is None or cast_of(reference) <= BALANCE_CAST:
        return LightCorrection()
    shift = TRAINING_BODY - reference
    return LightCorrection(np.exp(BALANCE_SHARE * (shift - shift.mean())))


def balance(images: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """sRGB uint8 images (..., 3) with each channel's linear light multiplied by its gain."""
    linear = SRGB_TO_LINEAR[images] * gains.astype(np.float32)
    return _TO_SRGB[np.clip(np.rint(linear * (_LEVELS - 1)), 0, _LEVELS - 1).astype(np.int32)]
