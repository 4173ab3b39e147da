"""The calibration that goes with the models (calibration.json, written by training.calibrate)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Calibration:
    """Temperatures for the reader's two heads and the detector's threshold, set on the calibration set."""

    value_temperature: float = 1.0
    color_temperature: float = 1.0
    detector_threshold: float | None = None  # chosen on the calibration set; None: the model's own
    face_threshold: float = 0.0  # a box whose crop the reader's face head rates lower is dropped (dark photos: settings.dark_face_threshold)
    detector_views: int = 1  # the detector views the thresholds were chosen with

    @classmethod
    def load(cls, path: Path) -> Calibration:
        """The calibration in `path`; no file: the models' own settings, temperatures of 1."""
        if not path.is_file():
            return cls()
        data = json.loads(path.read_text("utf-8"))
        threshold = data.get("detector_threshold")
        return cls(float(data.get("value_temperature", 1.0)), float(data.get("color_temperature", 1.0)),
                   float(threshold) if threshold is not None else None, float(data.get("face_threshold", 0.0)),
                   int(data.get("detector_views", 1)))
