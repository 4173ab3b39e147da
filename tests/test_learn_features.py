"""Learning a confirmed photo from what its reading computed (companion/vision/read_features.py),
with the real ONNX models: the profile keeps, per read die, the very embedding and probabilities
the reading gave the set's decoder before any profile (so the guard checks what reading with the
profile will do); only a die the reading did not box is read again; the server's reader keeps
the features of the photos it read, not of a live view's frames."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from companion.vision.dice_reader import DiceReader
from companion.vision.image_io import load_work_image
from companion.vision.learn import ConfirmedDie, learn_photo
from companion.vision.pipeline import analyse
from conftest import REPO, models_ready

pytestmark = pytest.mark.skipif(not models_ready(), reason="models/ has no ONNX files yet")
PHOTO = REPO / "sample_images" / "s11_wide_touching.jpg"


@pytest.fixture(scope="module")
def reader() -> DiceReader:
    return DiceReader.load()


def test_read_dice_are_learnt_from_their_reading_and_a_pointed_one_is_read_alone(reader):
    work = load_work_image(PHOTO)
    analysis = analyse(work, reader.models, reader.settings, learnable=True)
    seen = analysis.features
    assert seen is not None and len(seen) == len(analysis.dice) >= 5
    dice = [ConfirmedDie(d.face, d.box, checked=False) for d in analysis.dice]
    # a die the reader missed, pointed at beside the others: no read box overlaps it
    x0, y0, x1, y1 = analysis.dice[0].box
    side = x1 - x0
    spot = next((x, y) for x in range(0, work.full_width - int(side), int(side)) for y in (0, work.full_height - side)
                if not any(d.box[0] < x + side and x < d.box[2] and d.box[1] < y + side and y < d.box[3]
                           for d in analysis.dice))
    dice.append(ConfirmedDie(analysis.dice[0].face, (spot[0], spot[1], spot[0] + side, spot[1] + side)))
    profile = learn_photo(None, "photo 1", work, dice, reader.models, reader.settings, seen=seen)
    n = len(analysis.dice)
    np.testing.assert_allclose(profile.embeddings[:n], seen.embedding, atol=1e-5)
    np.testing.assert_allclose(profile.base_color[:n], seen.color_probs, atol=1e-6)
    np.testing.assert_allclose(profile.base_value[:n], seen.value_probs, atol=1e-6)
    assert not profile.checked[:n].any() and profile.checked[n]
    # the pointed die: read on its own, an embedding of its own (like no read die's exactly)
    assert abs(np.linalg.norm(profile.embeddings[n]) - 1) < 1e-4
    assert (profile.embeddings[:n] @ profile.embeddings[n]).max() < 0.999
    # without the reading's features the boxes are read alone, to the same features
    again = learn_photo(None, "photo 1", work, dice[:n], reader.models, reader.settings)
    np.testing.assert_allclose(again.base_color, profile.base_color[:n], atol=1e-5)


def test_the_servers_reader_keeps_what_learning_takes_of_the_photos_it_read_not_of_frames(reader):
    data = PHOTO.read_bytes()
    mine = dataclasses.replace(reader)
    reading = mine.read(data)
    seen = mine.recent.get(data)
    assert seen is not None and len(seen) == len(reading.dice)
    frames = dataclasses.replace(reader, learns=False)
    frames.read(data)
    assert frames.recent.get(data) is None
