"""Join trained readers into one ONNX reader that averages their log-probabilities.

    python -m training.ensemble runs/reader_s9/reader.onnx runs/reader_s10/reader.onnx --out runs/joined/reader.onnx

Readers trained apart make partly different mistakes on hard faces (blurred, dark, steeply
tilted); averaging their log-probabilities per head (value, colour, face) corrects some of
them. The joined file takes the same input and gives the same outputs as each reader, and the
calibration is fitted on it as on any reader; models/ ships it as its parts, cut apart again
by training.reader_parts, and the run time reads through them. The readers must agree on the crop they read (input_size, context).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from companion.vision.reader import ENSEMBLE_META
from training.common import save_onnx

# The crop each reader reads: readers that disagree on these cannot share one input.
SHARED_META = ("input_size", "context")


def join(paths: list[Path]):
    """One ModelProto running every reader on the same crops, each head the mean log-softmax,
    and the metadata to write with it."""
    import onnx
    from onnx import compose, helper

    readers = [onnx.load(str(p)) for p in paths]
    metas = [{p.key: p.value for p in r.metadata_props} for r in readers]
    _check_alike(paths, readers, metas)
    first = readers[0]
    inputs = [i.name for i in first.graph.input]
    parts = [compose.add_prefix(r, f"r{k}_").graph for k, r in enumerate(readers)]
    # every part reads the shared input under its own prefixed name
    nodes = [helper.make_node("Identity", [name], [f"r{k}_{name}"]) for k in range(len(parts)) for name in inputs]
    for part in parts:
        nodes += part.node
    for name in (o.name for o in first.graph.output):
        logs = [f"r{k}_{name}_log" for k in range(len(parts))]
        nodes += [helper.make_node("LogSoftmax", [f"r{k}_{name}"], [log], axis=-1) for k, log in enumerate(logs)]
        nodes.append(helper.make_node("Mean", logs, [name]))
    graph = helper.make_graph(nodes, "reader_ensemble", list(first.graph.input), list(first.graph.output),
                              [t for part in parts for t in part.initializer])
    model = helper.make_model(graph, opset_imports=list(first.opset_import))
    model.ir_version = first.ir_version
    return model, _metadata(paths, metas)


def _check_alike(paths: list[Path], readers, metas: list[dict[str, str]]) -> None:
    """Refuse readers that do not take the same input, give the same outputs and read the same crop."""
    names = lambda r: ([i.name for i in r.graph.input], [o.name for o in r.graph.output])  # noqa: E731
    for path, reader, meta in zip(paths, readers, metas):
        if names(reader) != names(readers[0]):
            raise ValueError(f"{path}: its inputs or outputs differ from {paths[0]}'s")
        for key in SHARED_META:
            if meta.get(key) != metas[0].get(key):
                raise ValueError(f"{path}: {key} is {meta.get(key)!r}, {paths[0]} has {metas[0].get(key)!r}")


def _metadata(paths: list[Path], metas: list[dict[str, str]]) -> dict[str, str]:
    """The shared crop settings, the parts' files, and each part's own training record (seed,
    steps, data...) under its prefix, so the joined file still says how each reader was made."""
    meta = {key: metas[0][key] for key in SHARED_META if key in metas[0]}
    meta[ENSEMBLE_META] = " ".join(str(p) for p in paths)  # the run time counts its parts by it
    for k, part in enumerate(metas):
        meta.update({f"r{k}_{key}": value for key, value in part.items() if key not in SHARED_META})
    return meta


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("readers", nargs="+", type=Path, help="reader ONNX files made by training.reader")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if len(args.readers) < 2:
        ap.error("an ensemble needs at least two readers")
    model, metadata = join(args.readers)
    save_onnx(model, args.out, metadata)
    print(f"{args.out}: {len(args.readers)} readers, {args.out.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
