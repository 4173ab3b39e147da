"""Colour heads per photo light: the ink colour where the reader's own colour head is out of its depth.

The reader learnt its colours under the training look's light only. Under a 2200-3000 K lamp
the crops are corrected half of the way back (white_balance.py), but what is left of the cast
still moves a red towards the orange the reader learnt (a blue towards its green); on dark
bodies nothing tells the light at all. The reader's features of a crop (its `embedding`
output, what its heads read) still tell the inks apart: for each photo light (LIGHTS) a
multinomial logistic regression on them and on the reader's colour log-probabilities (and, for
a `relative` head, on both less their means over the photo's dice: every die of a photo is lit
by the same light, so the die is judged against its photo's others), learnt
from training-split photos under warm and cold lights with their crops taken as the pipeline
takes them (training/light_colour.py), gives the colour, blended with the reader's. It is read
from models/light_colour.json; without that file (or a head for the photo's light) the
reader's colour head decides as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.vision.inks import Ink
from companion.vision.reader import log_softmax
from companion.vision.session import ModelsMissing
from companion.vision.white_balance import BALANCE_CAST, LightCorrection

# The photo lights a head may be learnt for: the training look's (a white reference, its cast
# within BALANCE_CAST), beyond it with the crops corrected (white_balance.py), and none told
# (mostly dark bodies: no white reference).
LIGHTS = ("usual", "corrected", "dark")


def photo_kind(light: LightCorrection, cast: float | None) -> str | None:
    """Which of LIGHTS the photo's is (None: beyond the training look's, the crops left as they are)."""
    if light.unusual:
        return "corrected"
    if cast is None:
        return "dark"
    return "usual" if cast <= BALANCE_CAST else None


def possible_kinds(light: LightCorrection) -> set[str]:
    """The kinds photo_kind can give under `light` before the kept dice's cast is told."""
    return {kind for cast in (None, BALANCE_CAST) if (kind := photo_kind(light, cast)) is not None}


INK_FEATURES = 3


def ink_features(inks: list[Ink]) -> np.ndarray:
    """(n, INK_FEATURES): each face's measured ink (inks.measure_inks) as a point of its hue
    circle, as far from the centre as its chroma is of the photo's median (at most 2), and
    whether it was measured against a light body."""
    chroma = np.array([ink.chroma for ink in inks], dtype=np.float64)
    scale = float(np.median(chroma)) if len(chroma) else 0.0
    faint = np.minimum(chroma / scale, 2.0) if scale > 0 else np.zeros(len(inks))
    hue = np.radians([ink.hue for ink in inks])
    return np.stack([faint * np.cos(hue), faint * np.sin(hue), [float(ink.referenced) for ink in inks]],
                    axis=1).reshape(-1, INK_FEATURES)


def head_inputs(embedding: np.ndarray, color_logits: np.ndarray, inks: np.ndarray | None = None,
                relative: bool = False) -> np.ndarray:
    """(n, d + 4 [+ d + 4] [+ INK_FEATURES]): the reader's embedding of each crop, its colour
    log-probabilities, (`relative`) both less their means over the photo's dice (the rows given:
    one photo's), and (given) its ink_features."""
    parts = [np.asarray(embedding, dtype=np.float64), log_softmax(np.asarray(color_logits, np.float64))]
    if relative:
        # one light for all dice: what it adds to every crop's features drops out of each
        # die's difference from the photo's mean, and the die is judged against its photo's others
        parts += [x - x.mean(axis=0, keepdims=True) for x in parts]
    return np.concatenate(parts + ([] if inks is None else [np.asarray(inks, dtype=np.float64)]), axis=1)


@dataclass(frozen=True)
class LightColourHead:
    mean: np.ndarray  # (d,) the inputs' standardisation
    scale: np.ndarray  # (d,)
    weights: np.ndarray  # (d, 4) per colour, in the decoder's colour order
    bias: np.ndarray  # (4,)
    # with the reader's colour log-probabilities: this share of the head's, the rest the reader's
    # (1: the head alone), chosen on the calibration sets
    blend: float = 1.0
    temperature: float = 1.0  # what the decoder divides the blended logits by (chosen on the calibration sets)
    inks: bool = False  # the inputs include the faces' ink_features
    relative: bool = False  # the inputs include the features less their photo's means (head_inputs)

    @classmethod
    def from_dict(cls, meta: dict) -> LightColourHead:
        return cls(np.array(meta["mean"]), np.array(meta["scale"]), np.array(meta["weights"]),
                   np.array(meta["bias"]), float(meta.get("blend", 1.0)), float(meta.get("temperature", 1.0)),
                   bool(meta.get("inks", False)), bool(meta.get("relative", False)))

    def logits(self, embedding: np.ndarray, color_logits: np.ndarray, inks: np.ndarray | None = None) -> np.ndarray:
        """(n, 4) colour logits for the crops whose reader embedding and colour logits (and, for a
        head that takes them, ink_features) are given, all of one photo's dice for a `relative`
        head: the head's log-probabilities blended with the reader's (see `blend`)."""
        z = (head_inputs(embedding, color_logits, inks if self.inks else None, self.relative) - self.mean) / self.scale
        head = log_softmax(z @ self.weights + self.bias)
        return self.blend * head + (1.0 - self.blend) * log_softmax(np.asarray(color_logits, np.float64))


@dataclass(frozen=True)
class LightColourHeads:
    """The heads of one file, by photo light (LIGHTS); a light without one keeps the reader's colour."""

    heads: dict[str, LightColourHead]
    reader: str = ""  # the fingerprint of the reader whose embeddings they were learnt on (reader.file_fingerprint)
    name: str = "light_colour.json"

    @classmethod
    def load(cls, path: Path) -> LightColourHeads | None:
        """The heads of `path`; None when the folder has none."""
        if not path.is_file():
            return None
        meta = json.loads(path.read_text())
        heads = {light: LightColourHead.from_dict(h) for light, h in meta["heads"].items() if light in LIGHTS}
        return cls(heads, meta.get("trained", {}).get("reader", ""), path.name)

    def get(self, kind: str | None, reader: str = "") -> LightColourHead | None:
        """The head for the photo light `kind`. `reader`, the reader's fingerprint: heads learnt on
        another reader's embeddings would read its features as noise, and are refused (ModelsMissing,
        as for any models folder that cannot read: the scorepad then asks for the dice by hand)."""
        if reader and self.reader and reader != self.reader:
            raise ModelsMissing(f"{self.name} was learnt on the embeddings of another reader ({self.reader}, not "
                                f"{reader}): make it again with python -m training.light_colour (models/README.md)")
        return None if kind is None else self.heads.get(kind)
