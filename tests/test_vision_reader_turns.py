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
from companion.vision.reader import FIRST_TURNS
from companion.vision.settings import ReadSettings

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


def _turned_mean(reader, crops: np.ndarray, turns) -> list[np.ndarray]:
    """Each head's log-probabilities averaged over the turns, straight from the session."""
    per_turn = []
    for k in turns:
        batch = np.ascontiguousarray(np.rot90(crops, k, axes=(1, 2)).transpose(0, 3, 1, 2), dtype=np.float32)
        per_turn.append([_log_probs(h) for h in reader.session.run(reader.heads, {"crops": batch})])
    return [np.mean(heads, axis=0) for heads in zip(*per_turn)]


def _heads(logits):
    return [logits.value, logits.color] + ([logits.face] if logits.face is not None else [])


@pytest.mark.slow
def test_unsure_crops_get_every_turn_and_plain_ones_the_first():
    reader = load_models().reader
    settings = ReadSettings()  # the shipped vote: 4 turns
    crops = _crops()
    first = _turned_mean(reader, crops, range(FIRST_TURNS))
    every = _turned_mean(reader, crops, range(settings.reader_turns))
    sure = np.ones(len(crops), bool)
    for head in first:
        sure &= np.exp(_log_probs(head)).max(1) > settings.reader_sure
    assert 0 < sure.sum() < len(crops)  # both kinds are in the batch
    got = _heads(reader.logits(crops, settings.reader_turns, settings.reader_sure))
    for head, one, all_ in zip(got, first, every):
        np.testing.assert_allclose(head[sure], one[sure], atol=1e-4)
        np.testing.assert_allclose(head[~sure], all_[~sure], atol=1e-4)
    # at 1.0 nothing is sure enough: every crop is read at every turn, the vote as before
    for head, all_ in zip(_heads(reader.logits(crops, settings.reader_turns, 1.0)), every):
        np.testing.assert_allclose(head, all_, atol=1e-4)
