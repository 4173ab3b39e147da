"""The models of one folder (detector, reader, calibration, tuning, doubt model), loaded once per process.

The shipped models are package data (``companion.models``, the repository's ``models/``);
the settings name another folder (ReadSettings.models_dir: the CLI's and server's --models,
else COMPANION_MODELS).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from companion import assets
from companion.vision.calibration import Calibration
from companion.vision.cubes import CubeModel
from companion.vision.detector import DetectorModel
from companion.vision.doubt_model import DOUBT_MODEL_FILE, DoubtModel
from companion.vision.light_colour import LightColourHeads
from companion.vision.reader import PART_FILE, ReaderModel
from companion.vision.session import ModelsMissing
from companion.vision.settings import CPU_PROVIDERS
from companion.vision.tuning import TUNING_FILE, Tuning, shipped_tuning

__all__ = ["CALIBRATION_FILE", "CUBES_FILE", "DETECTOR_FILE", "DOUBT_MODEL_FILE", "LIGHT_COLOUR_FILE", "READER_FILE", "TUNING_FILE", "Models", "ModelsMissing",
           "default_models_dir", "load_models", "models_present"]

DETECTOR_FILE = "detector.onnx"
READER_FILE = "reader.onnx"
CALIBRATION_FILE = "calibration.json"
CUBES_FILE = "cubes.json"  # optional: which boxes are side faces (cubes.py)
LIGHT_COLOUR_FILE = "light_colour.json"  # optional: the colour of crops corrected from an unusual light


def default_models_dir() -> Path:
    """The models the package ships."""
    return assets.models_dir()


@dataclass(frozen=True)
class Models:
    detector: DetectorModel  # with the calibration's threshold and views
    reader: ReaderModel
    calibration: Calibration
    cubes: CubeModel | None = None  # None: the folder has no cube model
    light_colour: LightColourHeads | None = None  # None: the folder has no such head (light_colour.py)
    tuning: Tuning = field(default_factory=shipped_tuning)  # the levels chosen with these models (tuning.py)
    doubt: DoubtModel = field(default_factory=lambda: shipped_doubt_model())  # which dice to check (doubt_model.py)


_cache: dict[tuple[Path, tuple[str, ...]], Models] = {}
_lock = threading.Lock()


def load_models(folder: Path | None = None, providers: Sequence[str] = CPU_PROVIDERS) -> Models:
    """Both models and the calibration, loaded once per folder (and providers) and kept for the process."""
    folder = (folder or default_models_dir()).resolve()
    key = (folder, tuple(providers))
    with _lock:
        if key not in _cache:
            calibration = Calibration.load(folder / CALIBRATION_FILE)
            tuning = Tuning.load(folder)
            detector = DetectorModel.load(folder / DETECTOR_FILE, tuning.read.peak_overlap, providers,
                                          calibration.detector_threshold, calibration.detector_views)
            _cache[key] = Models(detector, ReaderModel.load(folder / READER_FILE, providers), calibration,
                                 CubeModel.load(folder / CUBES_FILE), LightColourHeads.load(folder / LIGHT_COLOUR_FILE),
                                 tuning, load_doubt_model(folder, tuning))
        return _cache[key]


def load_doubt_model(folder: Path, tuning: Tuning) -> DoubtModel:
    """The folder's doubt model, its margins measured at `tuning`'s levels; the shipped one where the
    folder has none. A damaged or mismatched file is refused (DoubtModelError, a sentence)."""
    path = folder / DOUBT_MODEL_FILE
    return DoubtModel.load(path if path.is_file() else default_models_dir() / DOUBT_MODEL_FILE, tuning)


def shipped_doubt_model() -> DoubtModel:
    """The doubt model the package ships, at the shipped levels."""
    return load_doubt_model(default_models_dir(), shipped_tuning())


def models_present(folder: Path | None = None) -> bool:
    folder = folder or default_models_dir()
    reader = (folder / READER_FILE).is_file() or (folder / PART_FILE.format(0)).is_file()  # or its parts alone
    return (folder / DETECTOR_FILE).is_file() and reader
