"""Join a reader's parts (training.reader_parts) back into the one joined ONNX file they were cut from.

    python -m training.reader_join models/ --out runs/joined/reader.onnx

models/ ships the reader as its parts only (each weight once). The commands that work on the
joined graph (training.from_onnx --part, training.quantise) read this file: the same nodes and
weights as the parts, each head the mean of the parts' log-softmax and the `embedding` made as
training.reader_embedding makes it. The run time reads the parts themselves
(companion/vision/reader.py) and gives what this file gives (tests/test_vision_reader_cascade.py).
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

from companion.vision.reader import ENSEMBLE_META, PART_FEATURES, PART_FILE, PART_SOURCE
from training.ensemble import SHARED_META
from training.reader_embedding import add_embedding, embedding_metadata, feature_tensors, feature_widths


def part_files(folder: Path) -> list[Path]:
    """The parts in `folder`, PART_FILE from 0 on, as many as follow one another."""
    return list(itertools.takewhile(Path.is_file, (folder / PART_FILE.format(k) for k in itertools.count())))


def join(parts: list) -> tuple:
    """The joined reader of the part ModelProtos `parts` (in their order), and its metadata."""
    import onnx
    from onnx import helper

    if len(parts) < 2:
        raise ValueError("a joined reader needs two parts or more")
    first = parts[0].graph
    heads = [o.name for o in first.output if o.name != PART_FEATURES]
    nodes, inits = [], []
    for part in parts:
        graph = part.graph
        renamed = {o.name for o in graph.output}  # the part's outputs: Identity nodes over its own tensors
        nodes += [n for n in graph.node if not (n.op_type == "Identity" and n.output[0] in renamed)]
        inits += list(graph.initializer)
    for head in heads:
        logs = [f"r{k}_{head}_log" for k in range(len(parts))]
        nodes += [helper.make_node("LogSoftmax", [f"r{k}_{head}"], [log], axis=-1) for k, log in enumerate(logs)]
        nodes.append(helper.make_node("Mean", logs, [head]))
    outputs = [helper.make_tensor_value_info(h, onnx.TensorProto.FLOAT, ["n", None]) for h in heads]
    graph = helper.make_graph(nodes, "reader_ensemble", list(first.input), outputs, inits)
    model = helper.make_model(graph, opset_imports=list(parts[0].opset_import))
    model.ir_version = parts[0].ir_version
    model, count = add_embedding(model, feature_widths(model, feature_tensors(model.graph)) or None)
    return model, _metadata(parts) | embedding_metadata(count)


def _metadata(parts: list) -> dict[str, str]:
    """The shared crop settings, the parts' files, and each part's own record under its prefix
    (as training.ensemble writes them)."""
    metas = [{p.key: p.value for p in part.metadata_props} for part in parts]
    meta = {key: metas[0][key] for key in SHARED_META if key in metas[0]}
    meta[ENSEMBLE_META] = " ".join(PART_FILE.format(k) for k in range(len(parts)))
    own = set(SHARED_META) | {"part", PART_SOURCE}
    for k, part in enumerate(metas):
        meta.update({f"r{k}_{key}": value for key, value in part.items() if key not in own})
    return meta


def join_folder(folder: Path, out: Path) -> Path:
    """Write the joined reader of `folder`'s parts to `out`."""
    import onnx

    from training.common import save_onnx

    model, meta = join([onnx.load(str(f)) for f in part_files(folder)])
    save_onnx(model, out, meta)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path, help="the folder holding reader_part0.onnx, reader_part1.onnx, ...")
    ap.add_argument("--out", type=Path, required=True, help="the joined reader's ONNX file")
    args = ap.parse_args(argv)
    try:
        join_folder(args.folder, args.out)
    except ValueError as exc:
        ap.error(f"{args.folder}: {exc}")
    print(f"{args.out}: {len(part_files(args.folder))} parts joined, {args.out.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
