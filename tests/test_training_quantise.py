"""training.quantise: the 8-bit models read as the 32-bit ones, and their outputs stay 32-bit."""

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime.quantization")

from conftest import models_ready, sample_photos  # noqa: E402

from companion.vision.models import DETECTOR_FILE, default_models_dir, load_models  # noqa: E402
from companion.vision.reader import softmax  # noqa: E402
from companion.vision.session import open_session  # noqa: E402
from training.quantise import detector_inputs, kept_float, main, name_nodes, pipeline_crops  # noqa: E402

pytestmark = pytest.mark.skipif(not models_ready() or not sample_photos(), reason="needs the models and sample_images/")
SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def _ops(path: Path) -> dict[str, str]:
    return {n.name: n.op_type for n in onnx.load(str(path)).graph.node}


def test_the_output_layers_are_those_left_32_bit(joined_reader):
    reader = onnx.load(str(joined_reader))
    name_nodes(reader)
    kept = {n.op_type for n in reader.graph.node if n.name in kept_float(reader)}
    # the heads, their mean log-probabilities and the embedding's normalising: no convolution
    assert {"Gemm", "LogSoftmax", "Mean", "LpNormalization"} <= kept and not {"Conv", "Identity"} & kept
    detector = onnx.load(str(default_models_dir() / DETECTOR_FILE))
    name_nodes(detector)
    makers = {out: n for n in detector.graph.node for out in n.output}
    expected = {makers["heat"].name, makers[makers["heat"].input[0]].name, makers["size"].name}
    assert set(kept_float(detector)) == expected


@pytest.mark.slow
def test_the_quantised_reader_reads_the_sample_crops_as_the_shipped_one(tmp_path, joined_reader):
    out = tmp_path / "reader.onnx"
    assert main(["--model", "reader", "--data", str(SAMPLES), "--out", str(out)]) == 0
    ops = _ops(out)
    assert "QuantizeLinear" in ops.values() and "DequantizeLinear" in ops.values()
    meta = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    assert meta["input_size"] == "64" and "7-bit weights" in meta["quantised"]
    crops = pipeline_crops([SAMPLES], 0, load_models())
    batch = np.ascontiguousarray(crops.transpose(0, 3, 1, 2), dtype=np.float32)
    names = ["value", "color", "face"]
    shipped = open_session(joined_reader).run(names, {"crops": batch})  # the shipped parts, joined
    quantised = open_session(out).run(names, {"crops": batch})
    for head, a, b in zip(names, shipped, quantised):
        assert b.dtype == np.float32
        # every crop the shipped reader is sure of reads the same (a doubtful box may tip over)
        sure = softmax(a).max(axis=1) > 0.9
        assert sure.sum() > len(a) // 2
        assert (a.argmax(1) == b.argmax(1))[sure].all(), head


@pytest.mark.slow
def test_the_quantised_detector_sees_the_sample_faces_as_the_shipped_one(tmp_path):
    out = tmp_path / "detector.onnx"
    assert main(["--model", "detector", "--data", str(SAMPLES), "--out", str(out)]) == 0
    assert "QuantizeLinear" in _ops(out).values()
    shipped, quantised = open_session(default_models_dir() / DETECTOR_FILE), open_session(out)
    for batch in detector_inputs([SAMPLES], 0, load_models()):
        heat, _ = shipped.run(None, {"image": batch})
        heat_q, _ = quantised.run(None, {"image": batch})
        # where the shipped detector is sure of a face (or of none), so is the quantised one
        assert np.median(np.abs(heat_q - heat)) < 0.01
        assert ((heat_q > 0.5) == (heat > 0.5))[(heat > 0.6) | (heat < 0.4)].all()
