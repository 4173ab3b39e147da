"""The shipped detector (real ONNX model) and its mirror views."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from companion.vision.image_io import load_work_image
from companion.vision.models import CALIBRATION_FILE, DETECTOR_FILE, READER_FILE, DetectorModel, load_models, models_present

MODELS = Path(__file__).resolve().parents[1] / "models"
SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"
pytestmark = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")


def _scores(detector: DetectorModel, rgb: np.ndarray) -> list[float]:
    return sorted(d.score for d in detector.detect(rgb))


def test_views_that_include_the_mirror_give_the_mirror_image_the_same_scores():
    detector = DetectorModel.load(MODELS / DETECTOR_FILE)
    detector.threshold = 0.2
    # a 4:3 landscape photo fills the 448-px input's width exactly: no padding to mirror
    rgb = load_work_image(SAMPLES / "s00_white_10.jpg").rgb
    assert rgb.shape[1] > rgb.shape[0]
    mirror = np.ascontiguousarray(rgb[:, ::-1])
    detector.views = 1
    plain, plain_mirror = _scores(detector, rgb), _scores(detector, mirror)
    assert len(plain) >= 10
    # one view is not mirror-blind (so the check below can fail)...
    assert not np.allclose(plain, plain_mirror, atol=1e-4)
    for views in (2, 4):
        detector.views = views
        # ...while the averaged heatmap is the same for a photo and its mirror image
        assert np.allclose(_scores(detector, rgb), _scores(detector, mirror), atol=1e-4)


def test_the_calibration_sets_the_detector_views(tmp_path, monkeypatch):
    monkeypatch.delenv("COMPANION_DETECTOR_VIEWS", raising=False)
    for name in (DETECTOR_FILE, READER_FILE):
        shutil.copy(MODELS / name, tmp_path / name)
    calibration = json.loads((MODELS / CALIBRATION_FILE).read_text())
    calibration["detector_views"] = 2
    (tmp_path / CALIBRATION_FILE).write_text(json.dumps(calibration))
    assert load_models(tmp_path).detector.views == 2
