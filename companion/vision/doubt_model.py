"""The doubt model: per die read, how likely its reading is wrong, and which dice the player checks.

One fitted model (models/doubt_model.json, made by `python -m training.doubt_model fit`) weighs the
doubts' continuous scores and the reader's margins (doubts.ALL_FEATURES); a die is flagged where its
probability of being wrong reaches the operating point (models/tuning.json: doubt_flag_from). The
model is a sum of small boosted trees of two levels: a split, then a split on each side.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from companion.vision.doubts import ALL_FEATURES, FEATURES, DoubtKind, doubt_margins
from companion.vision.tuning import Tuning

DOUBT_MODEL_FILE = "doubt_model.json"
FORMAT = "doubt-trees"
VERSION = 2  # 2: with its digest, its operating point in tuning.json; 1: measured, not shipped
# A side of a tree that does not split: its threshold, which every score is under.
NO_SPLIT = 1e30


class DoubtModelError(ValueError):
    """A doubt model file this code cannot use (damaged, or another format, version or feature list)."""


@dataclass(frozen=True)
class DoubtModel:
    """Trees of two levels over ALL_FEATURES (the doubts' scores, FEATURES, and their margins, made
    from them by doubts.doubt_margins): per tree, a split (feature[:, 0] under threshold[:, 0]?),
    then on the lower side a split on feature[:, 1], on the upper side on feature[:, 2], each leading
    to a leaf of `leaves` (lower-lower, lower-upper, upper-lower, upper-upper)."""

    bias: float
    feature: np.ndarray  # (trees, 3) int: indices into ALL_FEATURES
    threshold: np.ndarray  # (trees, 3)
    leaves: np.ndarray  # (trees, 4): what the tree adds to the log-odds
    typical: np.ndarray  # (FEATURES,) a typical right die's scores: what a doubt is told against
    tuning: Tuning  # the levels the margins are measured from (the models' tuning.json)

    def log_odds(self, scores: np.ndarray) -> np.ndarray:
        """(n,) the log-odds that each die's reading is wrong, from its scores (n, FEATURES)."""
        x = doubt_margins(scores, self.tuning)
        if not len(self.feature):
            return np.full(len(x), self.bias)
        under = x[:, self.feature] < self.threshold  # (n, trees, 3)
        lower = np.where(under[:, :, 1], self.leaves[:, 0], self.leaves[:, 1])
        upper = np.where(under[:, :, 2], self.leaves[:, 2], self.leaves[:, 3])
        return self.bias + np.where(under[:, :, 0], lower, upper).sum(axis=1)

    def probability(self, scores: np.ndarray) -> np.ndarray:
        """(n,) the probability that each die's reading is wrong."""
        return 1.0 / (1.0 + np.exp(-self.log_odds(scores)))

    def flags(self, scores: np.ndarray) -> np.ndarray:
        """(n,) the dice to check: their probability of being wrong at the tuning's operating point or over."""
        return self.probability(scores) >= self.tuning.doubt_flag_from

    def kind(self, scores: np.ndarray, value_prob: float, color_prob: float) -> DoubtKind:
        """What to ask of one flagged die (scores (FEATURES,)): whether it is a die at all where its
        scores about the box, put back to a typical right die's, lower its log-odds of being wrong
        by more than the tuning's doubt_die_drop; else the less sure of its value (`value_prob`) and
        colour (`color_prob`)."""
        x = np.asarray(scores, dtype=np.float64).reshape(1, len(FEATURES))
        if self.die_drop(x)[0] > self.tuning.doubt_die_drop:
            return "die"
        return "value" if value_prob <= color_prob else "color"

    def die_drop(self, scores: np.ndarray) -> np.ndarray:
        """(n,) how much lower each die's log-odds of being wrong would be with its scores about the
        box (FEATURES of kind "die") a typical right die's."""
        x = np.asarray(scores, dtype=np.float64).reshape(-1, len(FEATURES))
        return self.log_odds(x) - self.log_odds(np.where(_OF_DIE, self.typical, x))

    def to_json(self) -> dict[str, Any]:
        """The file's content: the trees, the features they split on and a digest of both."""
        names = list(ALL_FEATURES)
        body = {"features": names, "bias": float(self.bias), "typical": [float(v) for v in self.typical],
                "trees": [{"split": [[names[int(f)], float(t)] for f, t in zip(fs, ts)], "leaves": [float(v) for v in vs]}
                          for fs, ts, vs in zip(self.feature, self.threshold, self.leaves)]}
        return {"format": FORMAT, "version": VERSION, **body, "digest": _digest(body)}

    @classmethod
    def from_json(cls, data: Any, tuning: Tuning, source: str = "the doubt model") -> DoubtModel:
        """The model in `data` (a file's parsed JSON), checked whole; DoubtModelError says what is wrong."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DoubtModelError(f"{source} is not a {FORMAT} doubt model.")
        if data.get("version") != VERSION:
            raise DoubtModelError(f"{source} is a doubt model of version {data.get('version')!r}; this reader reads "
                                  f"version {VERSION}: fit it again (make doubt-model).")
        if data.get("features") != list(ALL_FEATURES):
            raise DoubtModelError(f"{source} was fitted on other features than this reader measures; fit it again "
                                  "(make doubt-model).")
        body = {k: data.get(k) for k in ("features", "bias", "typical", "trees")}
        try:
            if data.get("digest") != _digest(body):
                raise ValueError("digest")
            return cls._parse(body, tuning)
        except (KeyError, TypeError, ValueError, IndexError):
            raise DoubtModelError(f"{source} is damaged (its trees do not match its digest or cannot be read); "
                                  "restore it or fit it again (make doubt-model).") from None

    @classmethod
    def _parse(cls, body: dict[str, Any], tuning: Tuning) -> DoubtModel:
        index = {name: i for i, name in enumerate(ALL_FEATURES)}
        trees = body["trees"]
        feature = np.array([[index[f] for f, _ in t["split"]] for t in trees], dtype=np.int64).reshape(-1, 3)
        threshold = np.array([[float(v) for _, v in t["split"]] for t in trees], dtype=np.float64).reshape(-1, 3)
        leaves = np.array([t["leaves"] for t in trees], dtype=np.float64).reshape(-1, 4)
        typical = np.array(body["typical"], dtype=np.float64).reshape(len(FEATURES))
        bias = float(body["bias"])
        if not all(np.isfinite(a).all() for a in (leaves, typical, np.array([bias]))) or np.isnan(threshold).any():
            raise ValueError("not finite")
        return cls(bias, feature, threshold, leaves, typical, tuning)

    @classmethod
    def load(cls, path: Path, tuning: Tuning) -> DoubtModel:
        """The model in the file at `path`; DoubtModelError (a sentence) where it is missing or unusable."""
        try:
            data = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            raise DoubtModelError(f"No doubt model at {path}: fit one (make doubt-model).") from None
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise DoubtModelError(f"{path} is damaged (not JSON); restore it or fit it again (make doubt-model).") from None
        return cls.from_json(data, tuning, str(path))


# Which of FEATURES are about the box being a die's top face (put back to a typical die's in die_drop).
_OF_DIE = np.array([FEATURES[name] == "die" for name in FEATURES])


def _digest(body: dict[str, Any]) -> str:
    """A digest of the model's content, so that a damaged file is refused rather than misread."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()
