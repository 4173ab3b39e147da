"""The models of one folder (detector, reader, calibration), loaded once per process.

Models live in the ``models/`` folder next to the ``companion`` package unless the settings
name another (ReadSettings.models_dir; the CLI and server take it from COMPANION_MODELS).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from companion.vision.calibration import Calibration
from companion.vision.detector import DetectorModel
from companion.vision.reader import ReaderModel
from companion.vision.session import ModelsMissing
from companion.vision.settings import CPU_PROVIDERS

__all__ = ["CALIBRATION_FILE", "DETECTOR_FILE", "READER_FILE", "Models", "ModelsMissing", "default_models_dir",
           "load_models", "models_present"]

DETECTOR_FILE = "detector.onnx"
READER_FILE = "reader.onnx"
CALIBRATION_FILE = "calibration.json"


def default_models_dir() -> Path:
    return Path(__file__).resolve().parent.parent.parent / "models"


@dataclass(frozen=True)
class Models:
    detector: DetectorModel  # with the calibration's threshold and views
    reader: ReaderModel
    calibration: Calibration


_cache: dict[tuple[Path, tuple[str, ...]], Models] = {}
_lock = threading.Lock()


def load_models(folder: Path | None = None, providers: Sequence[str] = CPU_PROVIDERS) -> Models:
    """Both models and the calibration, loaded once per folder (and providers) and kept for the process."""
    folder = (folder or default_models_dir()).resolve()
    key = (folder, tuple(providers))
    with _lock:
        if key not in _cache:
            calibration = Calibration.load(folder / CALIBRATION_FILE)
            detector = DetectorModel.load(folder / DETECTOR_FILE, providers, calibration.detector_threshold,
                                          calibration.detector_views)
            _cache[key] = Models(detector, ReaderModel.load(folder / READER_FILE, providers), calibration)
        return _cache[key]


def models_present(folder: Path | None = None) -> bool:
    folder = folder or default_models_dir()
    return (folder / DETECTOR_FILE).is_file() and (folder / READER_FILE).is_file()
