"""The reader's vote over turned crops (real ONNX reader): plain faces stop after the first
turns, unsure ones get every turn, and the answer is the mean of the turns read."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.crops import box_crop
from companion.vision.image_io import load_work_image
from companion.vision.models import load_models, models_present
from companion.vision.reader import FIRST_TURNS, ReaderModel
from companion.vision.settings import ReadSettings
from companion.vision.tuning import shipped_tuning

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"
pytestmark = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")


def _crops() -> np.ndarray:
    """Crops of the first samples' dice, and the same crops blurred beyond reading."""
    crops = []
    for line in (SAMPLES / "labels.jsonl").read_text().splitlines()[:4]:
        row = json.loads(line)
        work = load_work_image(SAMPLES / row["image"])
        crops += [box_crop(work.rgb, work.to_work(tuple(d["box"]))) for d in row["dice"] if not d.get("truncated")]
    plain = np.stack(crops)
    blurred = np.stack([cv2.GaussianBlur(c, (0, 0), 4.0) for c in crops])
    return np.concatenate([plain, blurred])


def _log_probs(logits: np.ndarray) -> np.ndarray:
    return logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)


def _turned_mean(joined: ReaderModel, crops: np.ndarray, turns) -> list[np.ndarray]:
    """Each head's log-probabilities averaged over the turns, straight from the joined file's session."""
    per_turn = []
    for k in turns:
        batch = np.ascontiguousarray(np.rot90(crops, k, axes=(1, 2)).transpose(0, 3, 1, 2), dtype=np.float32)
        per_turn.append([_log_probs(h) for h in joined.session.run(joined.heads, {"crops": batch})])
    return [np.mean(heads, axis=0) for heads in zip(*per_turn)]


def _heads(logits):
    return [logits.value, logits.color] + ([logits.face] if logits.face is not None else [])


@pytest.mark.slow
def test_unsure_crops_get_every_turn_and_plain_ones_the_first_two(joined_reader):
    reader, joined = load_models().reader, ReaderModel.load(joined_reader)
    settings = ReadSettings()  # the shipped vote: 4 turns (here with two for every crop to start)
    crops = _crops()
    first = _turned_mean(joined, crops, range(FIRST_TURNS))
    every = _turned_mean(joined, crops, range(settings.reader_turns))
    sure = np.ones(len(crops), bool)
    for head in first:
        sure &= np.exp(_log_probs(head)).max(1) > settings.levels(shipped_tuning()).reader_sure
    assert 0 < sure.sum() < len(crops)  # both kinds are in the batch
    got = _heads(reader.logits(crops, settings.reader_turns, settings.levels(shipped_tuning()).reader_sure, sure_one=1.0))
    for head, one, all_ in zip(got, first, every):
        np.testing.assert_allclose(head[sure], one[sure], atol=1e-4)
        np.testing.assert_allclose(head[~sure], all_[~sure], atol=1e-4)
    # at 1.0 nothing is sure enough: every crop is read at every turn, the vote as before
    for head, all_ in zip(_heads(reader.logits(crops, settings.reader_turns, 1.0, 1.0)), every):
        np.testing.assert_allclose(head, all_, atol=1e-4)


@pytest.mark.slow
def test_a_crop_sure_at_the_first_turn_stops_there_and_the_others_go_on_as_before(joined_reader):
    reader, joined = load_models().reader, ReaderModel.load(joined_reader)
    crops = _crops()
    one, two, every = (_turned_mean(joined, crops, range(n)) for n in (1, FIRST_TURNS, 4))

    def sure(heads, level):
        return np.all([np.exp(_log_probs(h)).max(1) > level for h in heads], axis=0)

    # a level that some crops pass after one turn and others do not
    level = float(np.median(np.min([np.exp(_log_probs(h)).max(1) for h in one], axis=0)))
    after_one, after_two = sure(one, level), sure(two, 0.99)
    assert 0 < after_one.sum() < len(crops)
    got = _heads(reader.logits(crops, 4, 0.99, level))
    for head, h1, h2, h4 in zip(got, one, two, every):
        np.testing.assert_allclose(head[after_one], h1[after_one], atol=1e-4)
        second = ~after_one & after_two
        np.testing.assert_allclose(head[second], h2[second], atol=1e-4)
        rest = ~after_one & ~after_two
        np.testing.assert_allclose(head[rest], h4[rest], atol=1e-4)
    # two turns in all: a crop unsure after the first gets the second, and nothing more
    for head, h1, h2 in zip(_heads(reader.logits(crops, 2, 0.99, level)), one, two):
        np.testing.assert_allclose(head, np.where(after_one[:, None], h1, h2), atol=1e-4)


def _face_probability(face_log_probs: np.ndarray) -> np.ndarray:
    return np.exp(_log_probs(face_log_probs))[:, 1]


@pytest.mark.slow
def test_with_face_bands_a_crop_whose_face_probability_leaves_its_stage_s_band_stops_and_the_others_read_as_before(joined_reader):
    reader, joined = load_models().reader, ReaderModel.load(joined_reader)
    if not reader.has_face_head:
        pytest.skip("the reader has no face head")
    crops = _crops()
    one, two, every = (_turned_mean(joined, crops, range(n)) for n in (1, FIRST_TURNS, 4))

    def sure(heads, level):
        return np.all([np.exp(_log_probs(h)).max(1) > level for h in heads], axis=0)

    # bands that some crops leave upright (the plain faces, sure of a top face) and others not,
    # and, after two turns, one that only the surest faces leave
    bands = ((0.0, float(np.median(_face_probability(one[2])))), (0.0, 0.999))
    def outside(heads, band):
        return _face_probability(heads[2]) > band[1]

    after_one = sure(one, 0.999) | outside(one, bands[0])
    after_two = ~after_one & (sure(two, 0.99) | outside(two, bands[1]))
    rest = ~after_one & ~after_two
    assert outside(one, bands[0]).any() and rest.any()
    got = _heads(reader.logits(crops, 4, 0.99, 0.999, face_bands=bands))
    for head, h1, h2, h4 in zip(got, one, two, every):
        np.testing.assert_allclose(head[after_one], h1[after_one], atol=1e-4)
        np.testing.assert_allclose(head[after_two], h2[after_two], atol=1e-4)
        np.testing.assert_allclose(head[rest], h4[rest], atol=1e-4)
    # without a band, those crops read on as before
    plain = _heads(reader.logits(crops, 4, 0.99, 0.999))
    for head, h4 in zip(plain, every):
        keep_going = outside(one, bands[0]) & ~sure(one, 0.999) & ~sure(two, 0.99)
        np.testing.assert_allclose(head[keep_going], h4[keep_going], atol=1e-4)
