"""Quantise a model to 8 bits: onnxruntime's static QDQ quantisation, its activation ranges
measured on what the shipped pipeline feeds it in training-split photos.

    python -m training.quantise --model reader --data data/cubes_train/tilt data/cubes_train/dark --limit 100 --out runs/quant/reader.onnx
    python -m training.quantise --model detector --data ... --out runs/quant/detector.onnx

The photos must come from the training split (never a calibration or validation set: the
quantised model is then chosen on the calibration sets like any other). Each photo is read as
the pipeline reads it. The reader's ranges come from the crops of the detector's first
MAX_DICE + the tuning's extra_candidates boxes, corrected for the photo's light, each at its four quarter
turns as the reader's vote reads them; the detector's from each working image's input. Weights
are quantised per output channel, activations to uint8 per tensor; the layers that give the
outputs (the reader's heads, the detector's heat and size) stay 32-bit.

What it saves depends on the processor. On a 2-core AVX2 machine without VNNI the 8-bit reader
takes about two thirds of the 32-bit one's CPU time per batch of crops, the 8-bit detector about
85 %; 8-bit weights (uint8, which do not overflow) are no faster than 32-bit arithmetic there. With
AVX-512 VNNI (2 cores, 2 threads, the median of 30 runs) full-range weights (--full-range: VNNI adds
the products in 32 bits, nothing overflows) take a reader part 4.3 ms for 12 crops against 11.1,
and the detector 4.4 ms for a 448 x 352 input against 9.1.

An 8-bit model reads otherwise than the 32-bit one: evaluate the folder that holds it
(training.evaluate --models) on the calibration sets before it replaces the shipped model. The
shipped models are 32-bit. With full-range weights, ranges from 210 training-split photos (`training.synth
--split train`: 60 plain, seed 9101; 40 each --light warm, --dark-bodies, --tilt 27 40, seeds 9102-9104;
30 --light cold, seed 9105), on data/calib (first 250) and its four stress sets:
- the 8-bit reader (all three files; light_colour.json's colour head kept as learnt on the 32-bit
  reader's embedding) read one die more wrong on the dark, tilted and warm sets and
  let one photo of data/calib through with an unflagged error (none with the 32-bit reader);
- the 8-bit detector read 4 dice fewer wrong on data/calib, but let 2 photos of the cold set, 1 of
  the dark and 1 more of the warm set through with unflagged errors, and read one die twice more.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from companion.dice import MAX_DICE
from companion.vision.image_io import load_work_image
from companion.vision.models import DETECTOR_FILE, READER_FILE, Models, default_models_dir, load_models
from training.reader_join import join_folder
from companion.vision.stage2_read import reader_crops
from companion.vision.stage1_find_faces import find_faces
from training.common import read_dataset, save_onnx

BATCH = 32  # crops per calibration batch
FILES = {"reader": READER_FILE, "detector": DETECTOR_FILE}
INPUTS = {"reader": "crops", "detector": "image"}
# The nodes left 32-bit: each output's own layer and what follows it (a reader's logits and
# their mean, its embedding's normalising, the detector's heat and box sizes): walking back
# from the outputs, up to and with a layer of STOP_AT, up to and without one of STOP_BEFORE.
STOP_AT = ("Conv", "Gemm")
STOP_BEFORE = ("Flatten", "GlobalAveragePool")


def pipeline_crops(folders: list[Path], limit: int, models: Models) -> np.ndarray:
    """(n, size, size, 3) uint8: the reader's crops of the first `limit` photos of each folder."""
    crops = []
    for folder in folders:
        for image in read_dataset(folder, limit):
            found = find_faces(load_work_image(image.path), models)
            work, detections = found.image, found.boxes
            detections = detections[:MAX_DICE + models.tuning.read.extra_candidates]
            if not detections:
                continue
            crops.append(reader_crops(work, detections, models))
    if not crops:
        raise SystemExit("no boxes found in the photos given: nothing to measure the activations on")
    return np.concatenate(crops)


def turned_batches(crops: np.ndarray) -> list[np.ndarray]:
    """NCHW float32 batches of every crop at each quarter turn, in a fixed shuffled order."""
    turned = np.concatenate([np.rot90(crops, k, axes=(1, 2)) for k in range(4)])
    turned = turned[np.random.default_rng(0).permutation(len(turned))]
    batch = np.ascontiguousarray(turned.transpose(0, 3, 1, 2), dtype=np.float32)
    return [batch[i:i + BATCH] for i in range(0, len(batch), BATCH)]


def detector_inputs(folders: list[Path], limit: int, models: Models) -> list[np.ndarray]:
    """The detector's input (1, 3, h, w) for the working image of each photo."""
    return [models.detector.prepare(load_work_image(image.path).rgb)[0]
            for folder in folders for image in read_dataset(folder, limit)]


def name_nodes(proto) -> None:
    """Give every unnamed node a name: the quantiser leaves nodes out by name."""
    for i, node in enumerate(proto.graph.node):
        node.name = node.name or f"{node.op_type}_{i}"


def kept_float(proto) -> list[str]:
    """The names of the nodes left 32-bit (see STOP_AT); every node must have a name (name_nodes)."""
    makers = {out: node for node in proto.graph.node for out in node.output}
    kept: set[str] = set()
    todo = [o.name for o in proto.graph.output]
    while todo:
        node = makers.get(todo.pop())
        if node is None or node.name in kept or node.op_type in STOP_BEFORE:
            continue
        if not node.name:
            raise ValueError(f"a {node.op_type} node without a name: name the nodes first (name_nodes)")
        kept.add(node.name)
        if node.op_type not in STOP_AT:
            todo += list(node.input)
    return sorted(kept)


def quantise(source: Path, out: Path, kind: str, batches: list[np.ndarray], reduce_range: bool = True) -> None:
    """Write `source` quantised, its activation ranges the extremes seen in `batches`.

    reduce_range: 7-bit weights. Without VNNI, onnxruntime's 8-bit convolutions on x86 add pairs
    of 8-bit products in 16 bits, which full-range weights overflow: on the calibration photos'
    crops 8-bit weights changed one reader value in twenty and lost one face in four, 7-bit
    ones none."""
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Inputs(CalibrationDataReader):
        """The batches, in the ranges the calibrator asks for (CalibStridedMinMax: one batch at a
        time, its extremes merged into the ranges so far, so that memory stays that of a batch)."""

        def __init__(self) -> None:
            self._todo = iter(batches)

        def __len__(self) -> int:
            return len(batches)

        def set_range(self, start_index: int, end_index: int) -> None:
            self._todo = iter(batches[start_index:end_index])

        def get_next(self):
            batch = next(self._todo, None)
            return None if batch is None else {INPUTS[kind]: batch}

    meta = {p.key: p.value for p in onnx.load(str(source)).metadata_props}
    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(source), str(pre), skip_symbolic_shape=True)
        model = onnx.load(str(pre))
        name_nodes(model)
        onnx.save(model, str(pre))
        quantised = Path(tmp) / "quantised.onnx"
        quantize_static(str(pre), str(quantised), Inputs(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True,
                        nodes_to_exclude=kept_float(model), reduce_range=reduce_range,
                        extra_options={"CalibStridedMinMax": 1})
        proto = onnx.load(str(quantised))
    del proto.metadata_props[:]
    save_onnx(proto, out, meta | {"quantised": f"QDQ: uint8 activations (min-max ranges), {7 if reduce_range else 8}-bit "
                                               f"weights per channel, output layers 32-bit"})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=sorted(FILES), required=True, help="which model to quantise")
    ap.add_argument("--data", required=True, nargs="+", help="training-split dataset folders")
    ap.add_argument("--limit", type=int, default=0, help="only the first N photos of each folder")
    ap.add_argument("--models", help="the models folder: the model quantised, and the pipeline that feeds it "
                                     "(default: the package's)")
    ap.add_argument("--full-range", action="store_true", help="8-bit weights (default 7: see quantise)")
    ap.add_argument("--out", required=True, help="the quantised model's ONNX file")
    args = ap.parse_args(argv)
    folder = Path(args.models) if args.models else default_models_dir()
    models = load_models(folder)
    folders = [Path(d) for d in args.data]
    if args.model == "reader":
        crops = pipeline_crops(folders, args.limit, models)
        batches = turned_batches(crops)
        print(f"{len(crops)} crops at 4 turns, {len(batches)} batches")
    else:
        batches = detector_inputs(folders, args.limit, models)
        print(f"{len(batches)} working images")
    source = folder / FILES[args.model]
    with tempfile.TemporaryDirectory() as tmp:
        if args.model == "reader" and not source.is_file():  # the folder ships the reader's parts alone
            source = join_folder(folder, Path(tmp) / READER_FILE)
        quantise(source, Path(args.out), args.model, batches, not args.full_range)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
