"""A models folder's 8-bit versions (training/quantise.py) are read in place of the 32-bit models
unless the settings ask for these."""

import shutil

import pytest

from conftest import models_ready, sample_photos

from companion.vision import ReadSettings, read_image
from companion.vision.models import (
    CALIBRATION_FILE,
    DETECTOR_FILE,
    QUANTISED_FILES,
    READER_FILE,
    default_models_dir,
    load_models,
    model_file,
)
from companion.vision.reader import file_fingerprint


def test_the_environment_can_ask_for_the_32_bit_models():
    assert ReadSettings().quantised
    assert ReadSettings.from_env({}).quantised
    assert not ReadSettings.from_env({"COMPANION_QUANTISED": "0"}).quantised
    assert ReadSettings.from_env({"COMPANION_QUANTISED": "1"}).quantised


def test_the_8_bit_file_is_read_where_the_folder_has_one(tmp_path):
    (tmp_path / READER_FILE).write_bytes(b"32")
    (tmp_path / DETECTOR_FILE).write_bytes(b"32")
    assert model_file(tmp_path, READER_FILE) == tmp_path / READER_FILE  # none there: the 32-bit one
    (tmp_path / QUANTISED_FILES[READER_FILE]).write_bytes(b"8")
    assert model_file(tmp_path, READER_FILE) == tmp_path / QUANTISED_FILES[READER_FILE]
    assert model_file(tmp_path, READER_FILE, quantised=False) == tmp_path / READER_FILE
    assert model_file(tmp_path, DETECTOR_FILE) == tmp_path / DETECTOR_FILE


@pytest.mark.skipif(not models_ready(), reason="needs the models")
def test_load_models_reads_the_8_bit_reader_unless_asked_not_to(tmp_path):
    shipped = default_models_dir()
    for name in (DETECTOR_FILE, READER_FILE, CALIBRATION_FILE):
        shutil.copy2(shipped / name, tmp_path / name)
    # a stand-in for the 8-bit reader: the same model with another metadata entry, so another fingerprint
    onnx = pytest.importorskip("onnx")
    model = onnx.load(str(shipped / READER_FILE))
    entry = model.metadata_props.add()
    entry.key, entry.value = "stand_in", "yes"
    onnx.save(model, str(tmp_path / QUANTISED_FILES[READER_FILE]))
    eight = load_models(tmp_path)
    assert eight.reader.fingerprint == file_fingerprint(tmp_path / QUANTISED_FILES[READER_FILE])
    assert load_models(tmp_path, quantised=False).reader.fingerprint == file_fingerprint(tmp_path / READER_FILE)


@pytest.mark.skipif(not models_ready() or not sample_photos() or not any(
    (default_models_dir() / name).is_file() for name in QUANTISED_FILES.values()), reason="needs the 8-bit models")
@pytest.mark.parametrize("photo", sample_photos(), ids=lambda p: p.name)
def test_the_8_bit_models_read_every_sample_as_the_32_bit_ones(photo):
    eight = read_image(photo, load_models()).dice
    full = read_image(photo, load_models(quantised=False)).dice
    assert [(d.value, d.color, d.uncertain) for d in eight] == [(d.value, d.color, d.uncertain) for d in full]
