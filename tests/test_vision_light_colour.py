"""The colour head for crops corrected from an unusual light (companion/vision/light_colour.py):
the shipped file is the one its command records, its fit is reproducible, and through the real
models and pipeline it reads a warm-lit red the reader's own colour head calls orange."""

import json

import numpy as np
import pytest
from photo_helpers import tokens_read

from companion.vision import ReadSettings, read_image
from companion.vision.light_colour import (
    INK_FEATURES,
    LIGHTS,
    LightColourHead,
    LightColourHeads,
    head_inputs,
    possible_kinds,
)
from companion.vision.models import LIGHT_COLOUR_FILE, ModelsMissing, default_models_dir, load_models, models_present
from companion.vision.white_balance import LightCorrection
from training.light_colour import EMBEDDING, fit
from training.synth.dataset import encode_jpeg, render_indexed
from training.synth.scene import SceneOptions

needs_models = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
HEAD = default_models_dir() / LIGHT_COLOUR_FILE
# photo 42 of the warm calibration set (data/stress_warm_calib/images/000042.jpg): its red wild on L4
WARM_PHOTO, WARM_SWAPPED = 42, "L4:Wr"


def test_the_shipped_head_records_its_training_and_fits_the_shipped_reader():
    meta = json.loads(HEAD.read_text())
    trained = meta["trained"]
    # made from training-split photos only, for this reader's embeddings
    assert trained["data"] and all("calib" not in d and "val" not in d for d in trained["data"])
    assert trained["reader"] == load_models().reader.fingerprint
    assert trained["steps"] > 0
    heads = LightColourHeads.load(HEAD)
    assert heads is not None and heads.heads and set(heads.heads) <= set(LIGHTS)
    for light, head in heads.heads.items():
        width = (EMBEDDING + 4) * (2 if head.relative else 1) + (INK_FEATURES if head.inks else 0)
        assert head.weights.shape == (width, 4) and head.mean.shape == (width,)
        assert 0.0 <= head.blend <= 1.0 and head.temperature > 0 and meta["heads"][light]["boxes"] > 1000


def test_a_folder_without_the_head_has_none(tmp_path):
    assert LightColourHeads.load(tmp_path / LIGHT_COLOUR_FILE) is None


def test_heads_learnt_for_another_reader_are_refused(tmp_path):
    # a retrained reader makes other embeddings: the heads must be made again, not misread them
    meta = json.loads(HEAD.read_text())
    meta["trained"]["reader"] = "0123456789abcdef"
    (tmp_path / LIGHT_COLOUR_FILE).write_text(json.dumps(meta))
    stale = LightColourHeads.load(tmp_path / LIGHT_COLOUR_FILE)
    shipped = load_models().reader.fingerprint
    with pytest.raises(ModelsMissing, match="another reader"):
        stale.get("corrected", shipped)
    assert LightColourHeads.load(HEAD).get("corrected", shipped) is not None


def test_the_fit_is_reproducible_and_learns_the_colours():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 4, 400)
    centres = rng.normal(size=(4, EMBEDDING))
    embedding = centres[truth] + 0.5 * rng.normal(size=(400, EMBEDDING))
    embedding /= np.linalg.norm(embedding, axis=1, keepdims=True)
    logits = rng.normal(size=(400, 4))  # a reader that knows nothing: the embedding must tell
    x = head_inputs(embedding, logits)
    first, again = fit(x, truth, 200, 1e-3), fit(x, truth, 200, 1e-3)
    assert first == again  # no randomness: the same data and steps give the same file
    head = LightColourHead(*(np.array(first[k]) for k in ("mean", "scale", "weights", "bias")))
    assert np.mean(head.logits(embedding, logits).argmax(axis=1) == truth) > 0.95
    # blend 0: the reader's colour alone
    reader = LightColourHead(*(np.array(first[k]) for k in ("mean", "scale", "weights", "bias")), blend=0.0)
    assert np.array_equal(reader.logits(embedding, logits).argmax(axis=1), logits.argmax(axis=1))


def test_relative_inputs_are_each_die_against_its_photos_others():
    rng = np.random.default_rng(1)
    embedding, logits = rng.normal(size=(6, EMBEDDING)), rng.normal(size=(6, 4))
    plain, relative = head_inputs(embedding, logits), head_inputs(embedding, logits, relative=True)
    width = EMBEDDING + 4
    assert relative.shape == (6, 2 * width) and np.array_equal(relative[:, :width], plain)
    # one light for all dice: what it adds to every crop's features leaves the relative part as it was
    lit = head_inputs(embedding + rng.normal(size=EMBEDDING), logits, relative=True)
    assert np.allclose(lit[:, width:], relative[:, width:])
    assert not np.allclose(lit[:, :width], relative[:, :width])
    # and a die's relative features depend on the photo's other dice
    assert not np.allclose(head_inputs(embedding[:3], logits[:3], relative=True)[:, width:], relative[:3, width:])


@needs_models
def test_under_a_warm_lamp_the_head_reads_a_red_the_readers_colour_head_calls_orange():
    # WARM_PHOTO of the warm calibration set (calib split, seed 2301, --light warm, cast 1.79): the
    # crops are corrected, and the reader's colour head, decided jointly with the inks, still
    # reads one of its red dice orange; the head learnt for corrected crops reads it red
    photo = render_indexed(2301, "calib", WARM_PHOTO, SceneOptions(light="warm"))
    data = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    models = load_models()
    assert models.light_colour is not None
    before = tokens_read(read_image(data, models, ReadSettings(light_colour_head=False)), photo.dice)
    after = tokens_read(read_image(data, models), photo.dice)
    swapped = [t for t, read in before.items() if read != "-" and read[-1] != t[-1]]
    assert swapped == [WARM_SWAPPED]
    assert after[WARM_SWAPPED] == WARM_SWAPPED.split(":")[1]
    assert sum(read == t.split(":")[1] for t, read in after.items()) >= sum(
        read == t.split(":")[1] for t, read in before.items())


def test_the_kinds_a_photo_light_can_be_before_its_cast_is_told():
    assert possible_kinds(LightCorrection()) == {"dark", "usual"}  # no white body, or one within the usual cast
    assert possible_kinds(LightCorrection(gains=(2.0, 1.0, 0.4))) == {"corrected"}
