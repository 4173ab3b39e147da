"""Split a joined reader (training.ensemble) into one ONNX file per part, for the reader's cascade.

    python -m training.reader_parts runs/joined/reader.onnx --out models/

writes models/reader_part0.onnx, models/reader_part1.onnx, ...: part k's own nodes and weights,
cut from the joined file unchanged, with its heads' raw logits (value, color, face) and its
pooled features (`features`, what training.reader_embedding normalises into the embedding) as
outputs. Each part's metadata names the SHA-256 fingerprint of the file it was cut from: the
run-time takes it as the reader's (profiles learnt with the joined file fit its parts), and uses
parts beside a joined file only if cut from that very file (companion/vision/reader.py), so a
reader joined or retrained again never runs with stale parts. models/ ships the parts alone
(training.reader_join joins them again).

The run-time gives the joined file's output from the parts: the mean of their log-softmax, and
their features joined into the embedding; its cascade reads every crop with the first part alone
and only the crops it is not sure of with the others too (ReadSettings.reader_cascade;
tests/test_vision_reader_cascade.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from companion.vision.reader import PART_FEATURES, PART_FILE, PART_SOURCE, file_fingerprint
from training.ensemble import SHARED_META
from training.reader_embedding import feature_tensors

HEADS = ("value", "color", "face")


def split(model) -> list:
    """One ModelProto per part of the joined reader `model`, in its parts' order."""
    import onnx
    from onnx import helper

    graph = model.graph
    features = feature_tensors(graph)  # one per part, in the parts' order (r0_, r1_, ...)
    if len(features) < 2:
        raise ValueError("not a joined reader: its heads read the features of one part only")
    producer = {out: node for node in graph.node for out in node.output}
    inits = {t.name: t for t in graph.initializer}
    inputs = {i.name for i in graph.input}
    heads = [h for h in HEADS if h in [o.name for o in graph.output]]
    parts = []
    for k, feature in enumerate(features):
        prefix = f"r{k}_"
        wanted = [f"{prefix}{h}" for h in heads] + [feature]
        nodes, seen, stack = [], set(), list(wanted)
        while stack:  # every node the part's heads and features are computed by
            name = stack.pop()
            node = producer.get(name)
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            nodes.append(node)
            stack += [i for i in node.input if i and i not in inputs]
        order = {id(n): i for i, n in enumerate(graph.node)}
        nodes.sort(key=lambda n: order[id(n)])
        used = {i for n in nodes for i in n.input}
        names = list(heads) + [PART_FEATURES]
        nodes += [helper.make_node("Identity", [src], [dst]) for src, dst in zip(wanted, names)]
        outputs = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, ["n", None]) for n in names]
        part = helper.make_graph(nodes, f"reader_part{k}", list(graph.input), outputs,
                                 [t for name, t in inits.items() if name in used])
        proto = helper.make_model(part, opset_imports=list(model.opset_import))
        proto.ir_version = model.ir_version
        parts.append(proto)
    return parts


def part_metadata(model, k: int, source: str) -> dict[str, str]:
    """The joined file's crop settings and part k's own training record, and the source's fingerprint."""
    meta = {p.key: p.value for p in model.metadata_props}
    out = {key: meta[key] for key in SHARED_META if key in meta}
    out.update({key[len(f"r{k}_"):]: value for key, value in meta.items() if key.startswith(f"r{k}_")})
    out.update({"part": str(k), PART_SOURCE: source})
    return out


def main(argv=None) -> int:
    import onnx

    from training.common import save_onnx

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reader", type=Path, help="a joined reader ONNX file (training.ensemble)")
    ap.add_argument("--out", type=Path, required=True, help="the folder to write the parts to")
    args = ap.parse_args(argv)
    model = onnx.load(str(args.reader))
    try:
        parts = split(model)
    except ValueError as exc:
        ap.error(f"{args.reader}: {exc}")
    source = file_fingerprint(args.reader)
    for k, part in enumerate(parts):
        path = args.out / PART_FILE.format(k)
        save_onnx(part, path, part_metadata(model, k, source))
        print(f"{path}: part {k} of {args.reader} ({source}), {path.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
