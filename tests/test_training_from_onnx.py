"""training.from_onnx: the shipped ONNX models back as PyTorch checkpoints to fine-tune from.
Runs where the training extra (PyTorch) is installed; the real shipped models are used."""

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from companion.vision.models import load_models, models_present  # noqa: E402
from companion.vision.reader import ReaderModel  # noqa: E402
from training.common import build_detector, init_weights  # noqa: E402
from training.from_onnx import (  # noqa: E402
    _detector_batches, _reader_batches, main, onnx_weights, rebuilt_model, restore_batch_statistics,
)
from training.synth.__main__ import main as synth_main  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "models"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")]


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("train")
    synth_main(["--out", str(out), "--count", "6", "--split", "train", "--seed", "77"])
    return str(out)


def _detector(photos):
    weights, meta = onnx_weights(MODELS / "detector.onnx")
    return rebuilt_model("detector", weights, meta), list(_detector_batches(photos, 6, int(meta["input_long_side"])))


def _train_mode_gap(model, batches, session) -> float:
    """How far training mode's output (each batch's own statistics) is from the file's."""
    model.train()
    gaps = []
    with torch.no_grad():
        for x in batches:
            heat = session.run(None, {"image": x.numpy()})[0]
            gaps.append(np.abs(model(x)[0].numpy() - heat).mean())
    model.eval()
    return float(np.mean(gaps))


def test_the_rebuilt_detector_computes_what_the_file_does(photos):
    model, batches = _detector(photos)
    session = load_models().detector.session
    restore_batch_statistics(model, batches)
    for x in batches[:2]:
        heat, size = session.run(None, {"image": x.numpy()})
        with torch.no_grad():
            got_heat, got_size = model(x)
        np.testing.assert_allclose(got_heat.numpy(), heat, atol=1e-4)
        np.testing.assert_allclose(got_size.numpy(), size, atol=1e-3)


def test_restored_statistics_bring_training_mode_closer_to_the_file(photos):
    session = load_models().detector.session
    model, batches = _detector(photos)
    passed_through = _train_mode_gap(model, batches, session)
    model, batches = _detector(photos)  # training mode moved the running statistics: start again
    restore_batch_statistics(model, batches)
    assert _train_mode_gap(model, batches, session) < 0.8 * passed_through


def test_the_ensemble_members_average_to_the_shipped_reader(photos, joined_reader):
    crops = next(iter(_reader_batches(photos, 6, 256, 64)))
    reader = ReaderModel.load(joined_reader)
    outputs = reader.session.run(reader.heads, {"crops": crops.numpy()})
    parts = []
    for part in ("r0", "r1"):
        weights, meta = onnx_weights(joined_reader, part)
        model = rebuilt_model("reader", weights, meta, part)
        with torch.no_grad():
            parts.append([torch.log_softmax(head, -1).numpy() for head in model(crops)])
    for k, shipped in enumerate(outputs):
        np.testing.assert_allclose((parts[0][k] + parts[1][k]) / 2, shipped, atol=1e-4)


def test_a_reader_ensemble_needs_a_part(joined_reader):
    with pytest.raises(ValueError, match="no convolutions"):
        onnx_weights(joined_reader)


def test_the_checkpoint_starts_a_fine_tune_where_the_file_is(photos, tmp_path):
    out = tmp_path / "detector.pt"
    assert main([str(MODELS / "detector.onnx"), "--data", photos, "--limit", "6", "--out", str(out)]) == 0
    model = build_detector()
    init_weights(out, model, log=lambda _msg: None)
    model.eval()
    x = next(iter(_detector_batches(photos, 1, load_models().detector.input_long_side)))
    with torch.no_grad():
        heat = model(x)[0].numpy()
    np.testing.assert_allclose(heat, load_models().detector.session.run(None, {"image": x.numpy()})[0], atol=1e-4)
