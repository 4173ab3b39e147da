"""Give a reader ONNX file an `embedding` output beside its heads, without retraining.

    python -m training.reader_embedding runs/joined/reader.onnx --out runs/joined/reader.onnx

The embedding is what each head reads: the features the reader pools from a crop just before
its linear heads (for an ensemble, each part's own features). Each part's feature vector is
scaled to length 1 and the parts are concatenated and divided by sqrt(parts), so the
embedding has length 1 and a dot product of two embeddings is the mean of the parts' cosine
similarities. The run-time uses it to learn one table's dice from the players' confirmations
(companion/vision/profile.py, docs/vision.md "Learning a table's dice").

Only nodes are added: the heads' outputs are computed by the same nodes from the same weights,
so they are bit-identical to the file's before (tests/test_reader_embedding.py). A file that
already has the output is refused, so the command is not applied twice by mistake.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

EMBEDDING = "embedding"
# The head whose input is traced back to find each part's features; every head reads the same.
TRACED_HEAD = "value"
LINEAR_OPS = ("Gemm", "MatMul")


def feature_tensors(graph) -> list[str]:
    """The tensors the reader's linear `value` head(s) read: one per ensemble part.

    A single reader's `value` output is made by a Gemm (or MatMul) whose first input is the
    pooled features; an ensemble's is a Mean of LogSoftmax nodes, each over one part's Gemm.
    """
    producer = {out: node for node in graph.node for out in node.output}

    def linear_inputs(name: str) -> list[str]:
        node = producer.get(name)
        if node is None:
            raise ValueError(f"tensor {name!r} has no producing node: not a reader made by training.reader")
        if node.op_type in LINEAR_OPS:
            return [node.input[0]]
        if node.op_type in ("Mean", "LogSoftmax", "Identity"):
            return [t for i in node.input for t in linear_inputs(i)]
        raise ValueError(f"the {TRACED_HEAD!r} head is made by a {node.op_type} node, not a linear layer")

    if TRACED_HEAD not in [o.name for o in graph.output]:
        raise ValueError(f"the model has no {TRACED_HEAD!r} output: not a reader")
    features = list(dict.fromkeys(linear_inputs(TRACED_HEAD)))
    return features


def add_embedding(model, width: int | None = None):
    """The same model with an `embedding` output (n, sum of the parts' widths) appended."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    if EMBEDDING in [o.name for o in graph.output]:
        raise ValueError(f"the model already has an {EMBEDDING!r} output")
    features = feature_tensors(graph)
    normed = [f"{EMBEDDING}_part{k}" for k in range(len(features))]
    nodes = [helper.make_node("LpNormalization", [f], [n], axis=1, p=2) for f, n in zip(features, normed)]
    joined = normed[0]
    if len(normed) > 1:
        joined = f"{EMBEDDING}_joined"
        nodes.append(helper.make_node("Concat", normed, [joined], axis=1))
    scale = numpy_helper.from_array(np.array(1.0 / math.sqrt(len(features)), np.float32), f"{EMBEDDING}_scale")
    nodes.append(helper.make_node("Mul", [joined, scale.name], [EMBEDDING]))
    graph.initializer.append(scale)
    graph.node.extend(nodes)
    graph.output.append(helper.make_tensor_value_info(EMBEDDING, TensorProto.FLOAT, ["n", width or "d"]))
    return model, len(features)


def embedding_metadata(parts: int) -> dict[str, str]:
    """The metadata entry that says how the embedding of a reader of `parts` part(s) is made."""
    return {EMBEDDING: f"{parts} part(s), each part's pooled features L2-normalised, concatenated, / sqrt({parts})"}


def feature_widths(model, features: list[str]) -> int:
    """The embedding's width: the sum of the parts' feature widths (their heads' input rows)."""
    inits = {t.name: t for t in model.graph.initializer}
    total = 0
    for node in model.graph.node:
        if node.op_type in LINEAR_OPS and node.input[0] in features and node.output[0].endswith(TRACED_HEAD):
            w = inits[node.input[1]]
            trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
            total += int(w.dims[1] if trans_b else w.dims[0])
    return total


def main(argv=None) -> int:
    import onnx

    from training.common import save_onnx

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reader", type=Path, help="a reader ONNX file (training.reader or training.ensemble)")
    ap.add_argument("--out", type=Path, required=True, help="where to write it (may be the same file)")
    args = ap.parse_args(argv)
    model = onnx.load(str(args.reader))
    width = feature_widths(model, feature_tensors(model.graph)) or None
    try:
        model, parts = add_embedding(model, width)
    except ValueError as exc:
        ap.error(f"{args.reader}: {exc}")
    meta = embedding_metadata(parts)
    # save_onnx appends metadata entries: drop none of the file's own (seed, steps, parts...)
    save_onnx(model, args.out, meta)
    print(f"{args.out}: {EMBEDDING} output of {width} values from {parts} part(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
