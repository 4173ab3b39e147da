"""training.reader_embedding: the reader's `embedding` output, added without touching its heads."""

import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `training` is not an installed package

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from training.ensemble import join  # noqa: E402
from training.reader_embedding import EMBEDDING, add_embedding, main  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "models"
HEADS = {"value": 11, "color": 4, "face": 2}
SIDE, WIDTH = 4, 6


def _reader(path: Path, seed: int) -> Path:
    """A tiny reader shaped like training.reader's: features = ReLU(flat @ w), linear heads."""
    rng = np.random.default_rng(seed)
    weights = [numpy_helper.from_array(rng.normal(size=(3 * SIDE * SIDE, WIDTH)).astype(np.float32), "w_feat")]
    nodes = [helper.make_node("Flatten", ["crops"], ["flat"], axis=1),
             helper.make_node("MatMul", ["flat", "w_feat"], ["pre"]), helper.make_node("Relu", ["pre"], ["feat"])]
    for head, n in HEADS.items():
        weights += [numpy_helper.from_array(rng.normal(size=(n, WIDTH)).astype(np.float32), f"w_{head}"),
                    numpy_helper.from_array(rng.normal(size=(n,)).astype(np.float32), f"b_{head}")]
        nodes.append(helper.make_node("Gemm", ["feat", f"w_{head}", f"b_{head}"], [head], transB=1))
    graph = helper.make_graph(
        nodes, "reader", [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["n", 3, SIDE, SIDE])],
        [helper.make_tensor_value_info(h, TensorProto.FLOAT, ["n", n]) for h, n in HEADS.items()], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    for key, value in {"input_size": str(SIDE), "context": "1.3", "seed": str(seed)}.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(path))
    return path


def _session(path: Path):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _crops(n: int = 5) -> np.ndarray:
    return np.random.default_rng(3).uniform(0, 255, (n, 3, SIDE, SIDE)).astype(np.float32)


def _features(path: Path, crops: np.ndarray) -> np.ndarray:
    """The tiny reader's features, in numpy: ReLU(flat @ w)."""
    w = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}["w_feat"]
    return np.maximum(crops.reshape(len(crops), -1) @ w, 0)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_a_reader_gains_its_normalised_features_and_keeps_its_heads_bit_for_bit(tmp_path):
    plain = _reader(tmp_path / "r.onnx", seed=1)
    out = tmp_path / "r_emb.onnx"
    assert main([str(plain), "--out", str(out)]) == 0
    crops = _crops()
    before = _session(plain).run(list(HEADS), {"crops": crops})
    after = _session(out)
    assert [o.name for o in after.get_outputs()] == [*HEADS, EMBEDDING]
    for old, new in zip(before, after.run(list(HEADS), {"crops": crops})):
        assert np.array_equal(old, new)
    (embedding,) = after.run([EMBEDDING], {"crops": crops})
    np.testing.assert_allclose(embedding, _unit(_features(plain, crops)), atol=1e-6)


def test_an_ensemble_gets_each_parts_features_normalised_side_by_side(tmp_path):
    parts = [_reader(tmp_path / f"r{k}.onnx", seed=k) for k in range(2)]
    model, _meta = join(parts)
    crops = _crops()
    joined = tmp_path / "joined.onnx"
    onnx.save(model, str(joined))
    before = _session(joined).run(list(HEADS), {"crops": crops})
    model, n_parts = add_embedding(model)
    assert n_parts == 2
    out = tmp_path / "joined_emb.onnx"
    onnx.save(model, str(out))
    session = _session(out)
    for old, new in zip(before, session.run(list(HEADS), {"crops": crops})):
        assert np.array_equal(old, new)
    (embedding,) = session.run([EMBEDDING], {"crops": crops})
    expected = np.concatenate([_unit(_features(p, crops)) for p in parts], axis=1) / np.sqrt(2)
    np.testing.assert_allclose(embedding, expected, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(embedding, axis=1), 1.0, atol=1e-6)


def test_a_reader_that_has_the_output_already_is_refused(tmp_path):
    plain = _reader(tmp_path / "r.onnx", seed=1)
    once = tmp_path / "once.onnx"
    assert main([str(plain), "--out", str(once)]) == 0
    with pytest.raises(SystemExit) as exc:
        main([str(once), "--out", str(tmp_path / "twice.onnx")])
    assert exc.value.code == 2
    assert not (tmp_path / "twice.onnx").exists()


def _without_embedding(model):
    """The shipped graph with the embedding's nodes and output taken away again."""
    graph = model.graph
    kept = [n for n in graph.node if not any(o.startswith(EMBEDDING) for o in n.output)]
    del graph.node[:]
    graph.node.extend(kept)
    outputs = [o for o in graph.output if o.name != EMBEDDING]
    del graph.output[:]
    graph.output.extend(outputs)
    return model


@pytest.mark.skipif(not (MODELS / "reader_part0.onnx").is_file(), reason="models/ has no reader yet")
def test_the_shipped_readers_heads_are_those_of_its_graph_without_the_embedding(tmp_path, joined_reader):
    shipped = onnx.load(str(joined_reader))  # the shipped parts, joined
    assert EMBEDDING in [o.name for o in shipped.graph.output]
    stripped = tmp_path / "stripped.onnx"
    onnx.save(_without_embedding(shipped), str(stripped))
    crops = np.random.default_rng(5).uniform(0, 255, (6, 3, 64, 64)).astype(np.float32)
    heads = ["value", "color", "face"]
    full = _session(joined_reader)
    for old, new in zip(_session(stripped).run(heads, {"crops": crops}), full.run(heads, {"crops": crops})):
        assert np.array_equal(old, new)
    (embedding,) = full.run([EMBEDDING], {"crops": crops})
    assert embedding.shape == (6, 320)
    np.testing.assert_allclose(np.linalg.norm(embedding, axis=1), 1.0, atol=1e-5)
