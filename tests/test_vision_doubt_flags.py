"""The doubt model's file (companion/vision/doubt_model.py), loaded with the models, is checked on load."""

from __future__ import annotations

import json
import shutil

import pytest

from companion.vision.doubt_model import DOUBT_MODEL_FILE, DoubtModel, DoubtModelError
from companion.vision.models import default_models_dir, load_doubt_model
from companion.vision.tuning import shipped_tuning

SHIPPED = default_models_dir() / DOUBT_MODEL_FILE


def _copy(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(SHIPPED, folder / DOUBT_MODEL_FILE)
    return folder, folder / DOUBT_MODEL_FILE


def test_the_shipped_doubt_model_loads_with_the_reader_and_names_its_features():
    data = json.loads(SHIPPED.read_text("utf-8"))
    model = load_doubt_model(default_models_dir(), shipped_tuning())
    assert len(model.feature) == len(data["trees"]) > 0
    assert 0.0 < shipped_tuning().doubt_flag_from < 1.0


def test_a_damaged_doubt_model_is_refused_with_a_sentence(tmp_path):
    folder, path = _copy(tmp_path)
    data = json.loads(path.read_text("utf-8"))
    data["trees"][3]["leaves"][1] += 0.25  # one leaf changed: the digest no longer matches
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(DoubtModelError, match=r"is damaged .*fit it again \(make doubt-model\)"):
        load_doubt_model(folder, shipped_tuning())
    path.write_text(SHIPPED.read_text("utf-8")[:5000], "utf-8")  # cut short
    with pytest.raises(DoubtModelError, match=r"is damaged \(not JSON\)"):
        load_doubt_model(folder, shipped_tuning())


def test_a_doubt_model_fitted_on_other_features_or_another_version_is_refused(tmp_path):
    folder, path = _copy(tmp_path)
    data = json.loads(SHIPPED.read_text("utf-8"))
    path.write_text(json.dumps({**data, "features": data["features"][:-1]}), "utf-8")
    with pytest.raises(DoubtModelError, match="fitted on other features than this reader measures"):
        load_doubt_model(folder, shipped_tuning())
    path.write_text(json.dumps({**data, "version": 1}), "utf-8")
    with pytest.raises(DoubtModelError, match="version 1; this reader reads version"):
        DoubtModel.load(path, shipped_tuning())
