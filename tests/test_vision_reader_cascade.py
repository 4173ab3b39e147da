"""The reader's cascade (real ONNX reader and its parts): the crops the first part is sure of
are read by it alone and read as the joined reader reads them, the others exactly as the joined
reader votes, and a read that may need the crops' embeddings still gets both parts."""

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from companion.vision import read_image
from companion.vision.crops import box_crop
from companion.vision.image_io import load_work_image
from companion.vision.models import default_models_dir, load_models, models_present
from companion.vision.pipeline import kept_boxes
from companion.vision.reader import (PART_FILE, PART_SOURCE, ReaderModel, file_fingerprint, load_parts, log_softmax,
                                     softmax)
from companion.vision.session import ModelsMissing, open_session
from companion.vision.settings import ReadSettings
from companion.vision.tuning import shipped_tuning

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"
PHOTOS = Path(__file__).parent / "photos"
pytestmark = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
SETTINGS = ReadSettings()
LEVELS = SETTINGS.levels(shipped_tuning())  # the shipped run-time levels (models/tuning.json)


def _crops(count: int = 4) -> np.ndarray:
    """Crops of the first samples' labelled dice."""
    crops = []
    for line in (SAMPLES / "labels.jsonl").read_text().splitlines()[:count]:
        row = json.loads(line)
        work = load_work_image(SAMPLES / row["image"])
        crops += [box_crop(work.rgb, work.to_work(tuple(d["box"]))) for d in row["dice"] if not d.get("truncated")]
    return np.stack(crops)


def _batch(crops: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(crops.transpose(0, 3, 1, 2), dtype=np.float32)


def _heads(read) -> list[np.ndarray]:
    return [read.value, read.color] + ([read.face] if read.face is not None else [])


def test_the_shipped_parts_are_the_shipped_joined_reader(joined_reader):
    reader = load_models().reader
    assert len(reader.parts) == 2 and reader.session is None  # models/ ships the parts alone
    crops = _batch(_crops())
    joined = ReaderModel.load(joined_reader).session.run(reader.heads, {"crops": crops})
    parts = [p.run(reader.heads, {"crops": crops}) for p in reader.parts]
    for k, head in enumerate(joined):
        mean = np.mean([log_softmax(part[k]) for part in parts], axis=0)
        assert np.allclose(mean, head, atol=1e-5)


def test_crops_the_first_part_is_sure_of_read_as_the_joined_reader_reads_them_the_others_exactly_alike():
    reader = load_models().reader
    crops = _crops()
    turns, sure, sure_one = SETTINGS.reader_turns, LEVELS.reader_sure, LEVELS.reader_sure_one
    joined = reader.logits(crops, turns, sure, sure_one)
    cascade = reader.logits(crops, turns, sure, sure_one, LEVELS.reader_cascade)
    first = reader.parts[0].run(reader.heads, {"crops": _batch(crops)})
    alone = np.ones(len(crops), dtype=bool)
    for head in first:
        alone &= softmax(head).max(axis=1) > LEVELS.reader_cascade
    assert 0 < alone.sum() < len(crops)  # both kinds are in the batch
    for mine, theirs, own in zip(_heads(cascade), _heads(joined), first):
        # a sure crop: the first part's own answer, and the joined reader's most likely class
        assert np.allclose(mine[alone], log_softmax(own[alone]), atol=1e-6)
        assert np.array_equal(mine[alone].argmax(axis=1), theirs[alone].argmax(axis=1))
        # the others: the joined reader's vote over the same turns
        assert np.allclose(mine[~alone], theirs[~alone], atol=1e-5)
    assert cascade.embedding is None  # some crops' second part was never read
    assert joined.embedding is not None


def test_no_cascade_without_it_or_when_no_crop_is_sure():
    reader = load_models().reader
    crops = _crops(1)
    joined = reader.logits(crops)
    off = reader.logits(crops, cascade=1.0)
    for a, b in zip(_heads(joined), _heads(off)):
        assert np.array_equal(a, b)
    # no crop is this sure: every crop goes to both parts, and its embedding comes too
    everyone = reader.logits(crops, cascade=0.999999999)
    assert everyone.embedding is not None and joined.embedding is not None
    assert np.allclose(everyone.embedding, joined.embedding, atol=1e-5)
    for a, b in zip(_heads(joined), _heads(everyone)):
        assert np.allclose(a, b, atol=1e-5)


def test_the_parts_read_every_turn_as_the_joined_file_reads_and_keep_its_fingerprint(joined_reader):
    """Every head and the embedding, voted over the turns, as the joined file gives them; the
    reader's fingerprint is the file the parts were cut from (the profiles learnt with it fit)."""
    parts, joined = load_models().reader, ReaderModel.load(joined_reader)
    assert joined.session is not None and not joined.parts  # a joined file alone reads by itself
    crops = _crops()
    for stages in ({}, {"sure": 0.0, "sure_one": 1.0}, {"sure": 1.0, "sure_one": 1.0}):
        a, b = parts.logits(crops, **stages), joined.logits(crops, **stages)
        for x, y in zip(_heads(a) + [a.embedding], _heads(b) + [b.embedding]):
            np.testing.assert_allclose(x, y, atol=1e-5)
        assert (a.agree == b.agree).all()
    sources = {open_session(default_models_dir() / PART_FILE.format(k)).get_modelmeta().custom_metadata_map[PART_SOURCE]
               for k in range(2)}
    assert sources == {parts.fingerprint} and parts.fingerprint != file_fingerprint(joined_reader)


def test_parts_of_another_reader_are_not_used(tmp_path, joined_reader):
    models = default_models_dir()
    shutil.copy(joined_reader, tmp_path / "reader.onnx")  # joined again: another file than the one cut
    for k in range(2):
        shutil.copy(models / PART_FILE.format(k), tmp_path / PART_FILE.format(k))
    fingerprint = load_models().reader.fingerprint
    assert len(load_parts(tmp_path / "reader.onnx", fingerprint, 2)) == 2
    alone = ReaderModel.load(tmp_path / "reader.onnx")  # the parts were cut from another file
    assert alone.session is not None and alone.parts == () and alone.fingerprint == file_fingerprint(joined_reader)
    (tmp_path / "reader.onnx").unlink()
    assert ReaderModel.load(tmp_path / "reader.onnx").fingerprint == fingerprint  # the parts alone
    assert load_parts(tmp_path / "reader.onnx", "0123456789abcdef", 2) == ()  # cut from another file
    assert load_parts(tmp_path / "reader.onnx", fingerprint, 3) == ()  # a third part missing: none averaged
    (tmp_path / PART_FILE.format(1)).unlink()
    assert load_parts(tmp_path / "reader.onnx", fingerprint, 2) == ()  # one part alone


@pytest.mark.slow
def test_a_photo_under_an_unusual_light_is_read_by_both_parts():
    """The colour head for a light beyond the training look's reads the embedding of both parts."""
    models = load_models()
    photo = PHOTOS / "warm_calib_8301_000082.jpg"
    found = kept_boxes(load_work_image(photo), models, SETTINGS, embeddings=False)
    assert found is not None and found.light.unusual
    assert found.read.embedding is not None  # both parts read every crop
    plain = kept_boxes(load_work_image(SAMPLES / "s00_white_10.jpg"), models, SETTINGS, embeddings=False)
    assert plain is not None and not plain.light.unusual
    assert plain.read.embedding is None  # under the usual light the cascade read it


@pytest.mark.slow
def test_the_samples_read_alike_with_and_without_the_cascade():
    off = replace(SETTINGS, reader_cascade=1.0)
    for line in (SAMPLES / "labels.jsonl").read_text().splitlines():
        image = SAMPLES / json.loads(line)["image"]
        a, b = read_image(image, settings=off), read_image(image, settings=SETTINGS)
        assert [(d.value, d.color, d.die, d.uncertain) for d in a.dice] == \
            [(d.value, d.color, d.die, d.uncertain) for d in b.dice], image.name
        assert np.allclose([d.confidence for d in a.dice], [d.confidence for d in b.dice], atol=1e-3)


def test_parts_of_two_files_are_refused(tmp_path):
    import onnx

    models = default_models_dir()
    shutil.copy(models / PART_FILE.format(0), tmp_path / PART_FILE.format(0))
    other = onnx.load(str(models / PART_FILE.format(1)))
    next(p for p in other.metadata_props if p.key == PART_SOURCE).value = "0123456789abcdef"
    onnx.save(other, str(tmp_path / PART_FILE.format(1)))
    with pytest.raises(ModelsMissing, match="not cut from one file"):
        ReaderModel.load(tmp_path / "reader.onnx")
    (tmp_path / PART_FILE.format(1)).unlink()
    with pytest.raises(ModelsMissing, match="missing"):
        ReaderModel.load(tmp_path / "reader.onnx")


def test_the_shipped_parts_are_what_the_recorded_commands_cut_from_the_joined_file(tmp_path, joined_reader):
    """Cutting the file the parts join into gives the shipped parts again: the same graphs and
    weights, the same record of each part's training (only the fingerprint of the source differs)."""
    import onnx

    from training.reader_parts import main as cut

    models = default_models_dir()
    assert cut([str(joined_reader), "--out", str(tmp_path)]) == 0
    for k in range(2):
        again, shipped = (onnx.load(str(f / PART_FILE.format(k))) for f in (tmp_path, models))
        assert again.graph.SerializeToString() == shipped.graph.SerializeToString()
        meta = [{p.key: p.value for p in m.metadata_props if p.key != PART_SOURCE} for m in (again, shipped)]
        assert meta[0] == meta[1]
