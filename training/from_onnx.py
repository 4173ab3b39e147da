"""Turn a shipped ONNX model back into a PyTorch checkpoint that `--init` can start from.

    .venv/bin/python -m training.from_onnx models/detector.onnx --data data/train --out runs/shipped/detector.pt
    .venv/bin/python -m training.from_onnx runs/joined/reader.onnx --part r0 --data data/train --out runs/shipped/reader_r0.pt

Training checkpoints live in runs/, which is not committed, so a fresh machine has only the
ONNX files: without this, every later stage would start from scratch. The export folded each
batch norm into the convolution before it, so the file holds W' = W * g / s and one bias per
channel. The batch norms are rebuilt so that the model computes exactly what the file does in
eval mode, and so that training mode, which normalises by each batch's statistics, starts
close to it too: each layer's running mean and variance are measured on training photos
(`--data`), and the scale and shift are set to give back the file's output at those
statistics. A reader ensemble (`training/ensemble.py`) holds several readers; `--part r0`
takes the first (models/ ships its parts: `training.reader_join models/ --out runs/joined/reader.onnx`).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

from companion.vision.crops import box_crop
from companion.vision.image_io import load_work_image
from companion.vision.detector import DetectorModel
from training.common import READER_WIDTHS, build_detector, build_reader, read_dataset

_CONV_NODE = re.compile(r"^/(?:.+/)?(?P<module>[^/]+)/Conv$")
_GEMM_NODE = re.compile(r"^/(?P<module>[^/]+)/Gemm$")


def onnx_weights(path: Path, part: str = "") -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """{torch module name: weight}, {module name + '.bias': bias} as the file holds them, and its metadata.

    Module names come from the exporter's node names (`/c4/c4.0/Conv` is module `c4.0`);
    `part` is an ensemble member's prefix (`r0`), empty for a single model.
    """
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    prefix = f"{part}_" if part else ""
    tensors = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    weights: dict[str, np.ndarray] = {}
    for node in model.graph.node:
        if not node.name.startswith(prefix) or (part == "" and re.match(r"^r\d+_", node.name)):
            continue
        name = node.name[len(prefix):]
        match = _CONV_NODE.match(name) or _GEMM_NODE.match(name)
        if not match:
            continue
        module = match.group("module")
        weights[f"{module}.weight"] = tensors[node.input[1]]
        if len(node.input) > 2:
            weights[f"{module}.bias"] = tensors[node.input[2]]
    if not weights:
        raise ValueError(f"{path}: no convolutions found" + (f" under the prefix {part!r}" if part else ""))
    meta = {p.key: p.value for p in model.metadata_props}
    return weights, meta


def rebuilt_model(kind: str, weights: dict[str, np.ndarray], meta: dict[str, str], part: str = ""):
    """The PyTorch model with the file's weights; each batch norm after a folded convolution
    first passes the convolution's output through plus the folded bias (exact in eval mode)."""
    import torch

    if kind == "detector":
        model = build_detector()
    else:
        widths = meta.get(f"{part}_widths" if part else "widths")
        model = build_reader(face_head="face.weight" in weights,
                             widths=tuple(int(w) for w in widths.split(",")) if widths else READER_WIDTHS)
    modules = dict(model.named_modules())
    state = model.state_dict()
    for name, array in weights.items():
        module_name = name.rsplit(".", 1)[0]
        if name.endswith(".bias") and name not in state:  # a folded conv's bias goes to its batch norm
            bn = _batch_norm_after(modules, module_name)
            state[f"{bn}.weight"] = torch.ones(array.shape)
            state[f"{bn}.bias"] = torch.from_numpy(array.copy())
            state[f"{bn}.running_mean"] = torch.zeros(array.shape)
            state[f"{bn}.running_var"] = torch.full(array.shape, 1.0 - modules[bn].eps)
            continue
        if tuple(state[name].shape) != array.shape:
            raise ValueError(f"{name}: the file has {array.shape}, the model {tuple(state[name].shape)}")
        state[name] = torch.from_numpy(array.copy())
    model.load_state_dict(state)
    return model.eval()


def _batch_norm_after(modules: dict, conv_name: str) -> str:
    """`c4.0` -> `c4.1`: in every conv-BN-ReLU block the batch norm follows its convolution."""
    head, index = conv_name.rsplit(".", 1)
    bn = f"{head}.{int(index) + 1}"
    if type(modules.get(bn)).__name__ != "BatchNorm2d":
        raise ValueError(f"{conv_name} has no batch norm after it")
    return bn


def restore_batch_statistics(model, batches) -> int:
    """Measure each batch norm's input on `batches` and set its statistics, scale and shift so
    that eval mode computes exactly what it did and training mode starts close to it."""
    import torch

    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    sums = {id(m): [0.0, 0.0, 0] for m in norms}

    def record(module, inputs, _output):
        x = inputs[0].detach().double()
        acc = sums[id(module)]
        acc[0] = acc[0] + x.sum(dim=(0, 2, 3))
        acc[1] = acc[1] + (x * x).sum(dim=(0, 2, 3))
        acc[2] += x.shape[0] * x.shape[2] * x.shape[3]

    hooks = [m.register_forward_hook(record) for m in norms]
    try:
        with torch.no_grad():
            for batch in batches:
                model(batch)
    finally:
        for h in hooks:
            h.remove()
    for m in norms:
        total, squares, count = sums[id(m)]
        mean = total / count
        var = torch.clamp(squares / count - mean * mean, min=0.0)
        # eval mode computes x * a + c now; keep that with the measured mean and variance
        a = m.weight.detach().double() / torch.sqrt(m.running_var.double() + m.eps)
        c = m.bias.detach().double() - a * m.running_mean.double()
        m.running_mean.copy_(mean)
        m.running_var.copy_(var)
        m.weight.data.copy_(a * torch.sqrt(var + m.eps))
        m.bias.data.copy_(c + a * mean)
    return len(norms)


def _detector_batches(data: str, limit: int, long_side: int):
    """Each photo as the run-time feeds it to the detector (shrunk to long_side, padded to 32)."""
    import torch

    shrink = DetectorModel(session=None, input_long_side=long_side, stride=4, threshold=1.0, overlap=1.0)  # only prepare()
    for image in read_dataset(data, limit):
        yield torch.from_numpy(shrink.prepare(load_work_image(image.path).rgb)[0])


def _reader_batches(data: str, limit: int, batch: int, size: int):
    """The labelled faces' crops as the run-time cuts them."""
    import torch

    crops = []
    for image in read_dataset(data, limit):
        work = load_work_image(image.path)
        crops += [box_crop(work.rgb, work.to_work(d.box), size) for d in image.dice if not d.ignored]
    arr = np.stack(crops).transpose(0, 3, 1, 2).astype(np.float32)
    for start in range(0, len(arr), batch):
        yield torch.from_numpy(arr[start:start + batch])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("onnx", help="a detector or reader ONNX file made by training/")
    ap.add_argument("--part", default="", help="an ensemble member's prefix, e.g. r0 (reader ensembles only)")
    ap.add_argument("--data", required=True, help="training photos whose statistics the batch norms get back")
    ap.add_argument("--limit", type=int, default=300, help="photos to measure on (default %(default)s)")
    ap.add_argument("--out", required=True, help="checkpoint to write (for --init)")
    args = ap.parse_args(argv)
    import torch

    weights, meta = onnx_weights(Path(args.onnx), args.part)
    kind = "detector" if "heat.weight" in weights else "reader"
    model = rebuilt_model(kind, weights, meta, args.part)
    if kind == "detector":
        batches = _detector_batches(args.data, args.limit, int(meta.get("input_long_side", 448)))
    else:
        batches = _reader_batches(args.data, args.limit, 256, int(meta.get("input_size", 64)))
    norms = restore_batch_statistics(model, batches)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    source = {k: v for k, v in meta.items() if not args.part or k.startswith(f"{args.part}_")}
    steps = int(source.get(f"{args.part}_steps" if args.part else "steps", 0) or 0)
    torch.save({"model": model.state_dict(), "plan": {"step": steps}, "from_onnx": str(args.onnx), "meta": source}, out)
    print(f"{args.onnx}{' part ' + args.part if args.part else ''}: {kind}, {norms} batch norms restored -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
