"""training.ensemble: readers joined into one ONNX file give the mean of their log-probabilities."""

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from training.ensemble import join, main  # noqa: E402

HEADS = {"value": 11, "color": 4, "face": 2}
SIDE = 4


def _reader(path: Path, seed: int, input_size: str = str(SIDE)) -> Path:
    """A tiny stand-in reader with the real one's input, outputs and metadata: one linear layer per head."""
    rng = np.random.default_rng(seed)
    nodes = [helper.make_node("Flatten", ["crops"], ["flat"], axis=1)]
    weights = []
    for head, n in HEADS.items():
        # the same initializer names in every reader: joining must keep them apart
        weights.append(numpy_helper.from_array(rng.normal(size=(3 * SIDE * SIDE, n)).astype(np.float32), f"w_{head}"))
        nodes.append(helper.make_node("MatMul", ["flat", f"w_{head}"], [head]))
    graph = helper.make_graph(
        nodes, "reader", [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["n", 3, SIDE, SIDE])],
        [helper.make_tensor_value_info(h, TensorProto.FLOAT, ["n", n]) for h, n in HEADS.items()], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    for key, value in {"input_size": input_size, "context": "1.3", "seed": str(seed)}.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(path))
    return path


def _run(path: Path, crops: np.ndarray) -> list[np.ndarray]:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"crops": crops})


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def test_joined_readers_average_their_log_probabilities(tmp_path):
    parts = [_reader(tmp_path / f"r{k}.onnx", seed=k) for k in range(3)]
    out = tmp_path / "ensemble.onnx"
    assert main([*map(str, parts), "--out", str(out)]) == 0
    crops = np.random.default_rng(9).uniform(0, 255, (5, 3, SIDE, SIDE)).astype(np.float32)
    joined = _run(out, crops)
    singles = [_run(p, crops) for p in parts]
    for h, head in enumerate(HEADS):
        expected = np.mean([_log_softmax(s[h]) for s in singles], axis=0)
        assert joined[h].shape == (5, HEADS[head])
        np.testing.assert_allclose(joined[h], expected, rtol=1e-4, atol=1e-4)
    # the parts differ, so the mean is not any one of them
    assert not np.allclose(joined[0], _log_softmax(singles[0][0]), atol=1e-3)


def test_joined_reader_keeps_the_crop_metadata_and_names_its_parts(tmp_path):
    parts = [_reader(tmp_path / f"r{k}.onnx", seed=k) for k in range(2)]
    out = tmp_path / "ensemble.onnx"
    main([*map(str, parts), "--out", str(out)])
    meta = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    assert meta["input_size"] == str(SIDE) and meta["context"] == "1.3"
    assert meta["ensemble"].split() == [str(p) for p in parts]
    assert (meta["r0_seed"], meta["r1_seed"]) == ("0", "1")  # each part's training record, kept


def test_readers_of_different_crops_are_refused(tmp_path):
    a = _reader(tmp_path / "a.onnx", seed=0)
    b = _reader(tmp_path / "b.onnx", seed=1, input_size="96")
    with pytest.raises(ValueError, match="input_size"):
        join([a, b])


def test_one_reader_is_not_an_ensemble(tmp_path):
    with pytest.raises(SystemExit):
        main([str(_reader(tmp_path / "a.onnx", seed=0)), "--out", str(tmp_path / "e.onnx")])
