"""The two ONNX models, loaded once per process, and the calibration that goes with them.

Models live in ``<repo>/models/`` (next to the ``companion`` package), or in the folder
named by the environment variable COMPANION_MODELS.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

DETECTOR_FILE = "detector.onnx"
READER_FILE = "reader.onnx"
CALIBRATION_FILE = "calibration.json"
EMBEDDING_OUTPUT = "embedding"  # the reader's optional output for learning a table's dice
# How many quarter turns of each crop the reader votes over (1 = no vote); see ReaderModel.
READER_TURNS = int(os.environ.get("COMPANION_READER_TURNS", "4"))
# The vote starts with FIRST_TURNS turns of every crop; only a crop they leave unsure (its most
# likely value, colour or face/not-face not above READER_SURE) is read at the other turns too.
# COMPANION_READER_SURE=1 reads every crop at every turn, for comparisons.
FIRST_TURNS = 2
READER_SURE = float(os.environ.get("COMPANION_READER_SURE", "0.99"))
# How many mirror images of the photo the detector's heatmap is averaged over (1, 2 or 4;
# see DetectorModel._mirrored_heat). The calibration says how many its threshold was chosen
# with; the environment variable COMPANION_DETECTOR_VIEWS overrides it, for experiments.
MAX_DETECTOR_VIEWS = 4
# (flip up-down, flip left-right) for each view, in the order they are added
_MIRRORS = ((False, False), (False, True), (True, False), (True, True))


class ModelsMissing(RuntimeError):
    """The ONNX files are not where they should be."""


def models_dir() -> Path:
    env = os.environ.get("COMPANION_MODELS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent.parent / "models"


def _session(path: Path):
    import onnxruntime as ort  # imported here: only reading photos needs it

    if not path.is_file():
        raise ModelsMissing(f"model file {path} is missing (train it: see docs/vision.md)")
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.inter_op_num_threads = 1
    opts.intra_op_num_threads = min(4, os.cpu_count() or 1)
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])


def _meta(session) -> dict[str, str]:
    return dict(session.get_modelmeta().custom_metadata_map)


@dataclass(frozen=True, slots=True)
class Detection:
    box: tuple[float, float, float, float]  # in the working image's pixels
    score: float


@dataclass
class DetectorModel:
    """CenterNet-style detector: a heatmap of top-face centres plus each face's box size."""

    session: object
    input_long_side: int
    stride: int
    threshold: float = 0.3
    max_detections: int = 24
    views: int = 1

    @classmethod
    def load(cls, path: Path) -> "DetectorModel":
        session = _session(path)
        meta = _meta(session)
        return cls(session, int(meta.get("input_long_side", 448)), int(meta.get("stride", 4)),
                   float(meta.get("threshold", 0.3)))

    def prepare(self, rgb: np.ndarray, long_side: int | None = None) -> tuple[np.ndarray, float]:
        """Shrink to the input size, pad to a multiple of 32; return NCHW float and the scale."""
        h, w = rgb.shape[:2]
        k = (long_side or self.input_long_side) / max(h, w)
        nw, nh = max(1, round(w * k)), max(1, round(h * k))
        small = cv2.resize(rgb, (nw, nh), interpolation=cv2.INTER_AREA) if k != 1 else rgb
        ph, pw = -(-nh // 32) * 32, -(-nw // 32) * 32
        batch = np.zeros((1, 3, ph, pw), dtype=np.float32)
        batch[0, :, :nh, :nw] = small.transpose(2, 0, 1)
        return batch, k

    def detect(self, rgb: np.ndarray, long_side: int | None = None, views: int | None = None) -> list[Detection]:
        """Top faces in `rgb`, shrunk to the model's input size (or to `long_side`: the network
        is fully convolutional, so a larger input finds smaller faces), over `views` mirror
        views (default: the detector's own number)."""
        return self.detections(self.all_views(self.heatmap(rgb, long_side), views))

    def detect_in_windows(
        self, rgb: np.ndarray, windows: list[tuple[int, int, int, int]], long_side: int | None = None,
        views: int | None = None,
    ) -> list[Detection]:
        """detect(), looking only inside `windows`: boxes (x0, y0, x1, y1) of the network's
        input, in whole 32-pixel blocks (see companion/vision/regions.py), that do not overlap.

        Each window is cut from the whole image's input, so its pixels, and how they line up
        with the network's strides, are those the whole search would see: a face well inside
        scores the same.
        """
        batch, k = self.prepare(rgb, long_side)
        out: list[Detection] = []
        for x0, y0, x1, y1 in windows:
            x1, y1 = min(x1, batch.shape[3]), min(y1, batch.shape[2])
            if x1 <= x0 or y1 <= y0:
                continue
            part = np.ascontiguousarray(batch[:, :, y0:y1, x0:x1])
            heat, size = self.session.run(None, {"image": part})
            wh = (min(rgb.shape[1], x1 / k) - x0 / k, min(rgb.shape[0], y1 / k) - y0 / k)
            window = self.all_views(Heatmap(part, heat[0, 0], size[0], k, wh), views)
            dx, dy = x0 / k, y0 / k
            out += [Detection((d.box[0] + dx, d.box[1] + dy, d.box[2] + dx, d.box[3] + dy), d.score)
                    for d in self.detections(window)]
        return out

    def heatmap(self, rgb: np.ndarray, long_side: int | None = None) -> Heatmap:
        """The upright view's heatmap alone: enough to tell how large the faces are."""
        batch, k = self.prepare(rgb, long_side)
        heat, size = self.session.run(None, {"image": batch})
        return Heatmap(batch, heat[0, 0], size[0], k, (rgb.shape[1], rgb.shape[0]))

    def all_views(self, heatmap: Heatmap, views: int | None = None) -> Heatmap:
        """The heatmap summed over mirror images of the input too (each mirrored back).

        A die is a die in a mirror, but a false peak on a side face or a pattern rarely
        survives all views, and a weak true peak gains: on the calibration photos this gives
        fewer false boxes at the same recall. The box sizes come from the upright view. The
        input is padded to a multiple of 32, so a mirrored cell maps exactly onto a cell.
        """
        views = max(1, min(views or self.views, MAX_DETECTOR_VIEWS))
        total = heatmap.total.copy()
        for up_down, left_right in _MIRRORS[heatmap.views:views]:
            axes = tuple(a for a, flip in ((2, up_down), (3, left_right)) if flip)
            mirrored, _ = self.session.run(None, {"image": np.ascontiguousarray(np.flip(heatmap.batch, axes))})
            total += np.flip(mirrored[0, 0], tuple(a - 2 for a in axes))
        return replace(heatmap, total=total, views=max(views, heatmap.views))

    def detections(self, heatmap: Heatmap) -> list[Detection]:
        return peaks_to_detections(heatmap.total / heatmap.views, heatmap.size, self.stride, heatmap.scale,
                                   self.threshold, self.max_detections, heatmap.image_wh)


@dataclass(frozen=True)
class Heatmap:
    """The detector's face-centre heatmap for one image, summed over the views taken so far."""

    batch: np.ndarray  # the input it was computed from (1, 3, h, w)
    total: np.ndarray  # the sum of the views' heatmaps
    size: np.ndarray  # the upright view's box sizes (4, h', w')
    scale: float  # input pixels per image pixel
    image_wh: tuple[int, int]
    views: int = 1


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    x0 = np.maximum(a[0], b[:, 0])
    y0 = np.maximum(a[1], b[:, 1])
    x1 = np.minimum(a[2], b[:, 2])
    y1 = np.minimum(a[3], b[:, 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area = lambda r: (r[..., 2] - r[..., 0]) * (r[..., 3] - r[..., 1])  # noqa: E731
    return inter / np.maximum(area(a) + area(b) - inter, 1e-9)


def peaks_to_detections(
    heat: np.ndarray, size: np.ndarray, stride: int, scale: float, threshold: float, max_det: int,
    image_wh: tuple[int, int], overlap: float = 0.6,
) -> list[Detection]:
    """Local maxima of the heatmap above threshold -> boxes in working-image pixels.

    size holds, per cell, (dx, dy, log w, log h): the centre's sub-cell offset and the box size
    in input pixels. A final overlap check drops a weaker peak on the same face.
    """
    peaks = heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))
    ys, xs = np.nonzero(peaks & (heat >= threshold))
    if len(ys) == 0:
        return []
    scores = heat[ys, xs]
    order = np.argsort(-scores)[: max_det * 2]
    ys, xs, scores = ys[order], xs[order], scores[order]
    cx = (xs + size[0, ys, xs]) * stride / scale
    cy = (ys + size[1, ys, xs]) * stride / scale
    bw = np.exp(np.clip(size[2, ys, xs], -3, 8)) / scale
    bh = np.exp(np.clip(size[3, ys, xs], -3, 8)) / scale
    w, h = image_wh
    boxes = np.stack([np.clip(cx - bw / 2, 0, w), np.clip(cy - bh / 2, 0, h),
                      np.clip(cx + bw / 2, 0, w), np.clip(cy + bh / 2, 0, h)], axis=1)
    kept: list[int] = []
    for i in range(len(boxes)):
        if kept and _iou(boxes[i], boxes[kept]).max() > overlap:
            continue
        kept.append(i)
        if len(kept) == max_det:
            break
    return [Detection(tuple(float(v) for v in boxes[i]), float(scores[i])) for i in kept]


@dataclass
class ReaderModel:
    """Classifies a face crop: value (1..10, W) and ink colour, at any rotation."""

    session: object
    size: int
    turns: int = READER_TURNS
    has_face_head: bool = False
    has_embedding: bool = False  # the file's `embedding` output (training/reader_embedding.py)

    @classmethod
    def load(cls, path: Path) -> "ReaderModel":
        session = _session(path)
        outputs = [o.name for o in session.get_outputs()]
        return cls(session, int(_meta(session).get("input_size", 64)), has_face_head="face" in outputs,
                   has_embedding=EMBEDDING_OUTPUT in outputs)

    @property
    def heads(self) -> list[str]:
        return ["value", "color"] + (["face"] if self.has_face_head else [])

    def logits(self, crops: np.ndarray) -> ReaderLogits:
        """crops: (n, size, size, 3) uint8 -> value (n, 11), colour (n, 4) and face (n, 2) logits.

        With turns > 1 each crop is also read turned by 90, 180 (and 270) degrees and the
        log-probabilities are averaged: a cheap vote that steadies hard faces. Most faces are
        plain after the first two turns, so only the unsure ones pay for the rest.
        """
        first = min(self.turns, FIRST_TURNS)
        heads, embedding = self._vote(crops, range(first))
        unsure = ~_sure(heads, READER_SURE) if self.turns > first else np.zeros(len(crops), dtype=bool)
        if unsure.any():
            more, more_embedding = self._vote(crops[unsure], range(first, self.turns))
            share = first / self.turns
            for head, rest in zip(heads, more):
                head[unsure] = share * head[unsure] + (1 - share) * rest
            if embedding is not None:
                embedding[unsure] = share * embedding[unsure] + (1 - share) * more_embedding
        if embedding is not None:
            embedding /= np.maximum(np.linalg.norm(embedding, axis=1, keepdims=True), 1e-12)
        return ReaderLogits(heads[0], heads[1], heads[2] if self.has_face_head else None, embedding)

    def _vote(self, crops: np.ndarray, turns: range) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Each head's log-probabilities averaged over the crops turned by each of `turns` quarter
        turns, and the mean of their embeddings (None without that output)."""
        n = len(crops)
        views = [np.rot90(crops, k, axes=(1, 2)) for k in turns]
        batch = np.ascontiguousarray(np.concatenate(views).transpose(0, 3, 1, 2), dtype=np.float32)
        names = self.heads + ([EMBEDDING_OUTPUT] if self.has_embedding else [])
        outputs = self.session.run(names, {"crops": batch})
        heads = [_log_softmax(h).reshape(len(turns), n, -1).mean(axis=0) for h in outputs[:len(self.heads)]]
        embedding = outputs[-1].reshape(len(turns), n, -1).mean(axis=0) if self.has_embedding else None
        return heads, embedding


def _sure(heads: list[np.ndarray], level: float) -> np.ndarray:
    """Per crop: is every head's most likely class more than `level` likely?"""
    sure = np.ones(len(heads[0]), dtype=bool)
    for head in heads:
        sure &= softmax(head).max(axis=1) > level
    return sure


@dataclass(frozen=True, slots=True)
class ReaderLogits:
    """The reader's answer for a batch of crops; `face` is None for a reader without that head."""

    value: np.ndarray  # (n, 11): 1..10, W
    color: np.ndarray  # (n, 4)
    face: np.ndarray | None = None  # (n, 2): not a top face, a top face
    # (n, d), each row of length 1: what the heads read, averaged over the turns read; None for
    # a reader without that output. Learning a table's dice compares these (profile.py).
    embedding: np.ndarray | None = None

    def face_probability(self) -> np.ndarray | None:
        return None if self.face is None else softmax(self.face)[:, 1]


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


@dataclass(frozen=True, slots=True)
class Calibration:
    """Temperatures for the reader's two heads and the detector's threshold, set on the calibration set."""

    value_temperature: float = 1.0
    color_temperature: float = 1.0
    detector_threshold: float | None = None  # chosen on the calibration set; None: the model's own
    face_threshold: float = 0.0  # a box whose crop the reader's face head rates lower is dropped
    detector_views: int = 1  # the detector views the thresholds were chosen with

    @classmethod
    def load(cls, path: Path) -> "Calibration":
        if not path.is_file():
            return cls()
        data = json.loads(path.read_text("utf-8"))
        threshold = data.get("detector_threshold")
        return cls(float(data.get("value_temperature", 1.0)), float(data.get("color_temperature", 1.0)),
                   float(threshold) if threshold is not None else None, float(data.get("face_threshold", 0.0)),
                   int(data.get("detector_views", 1)))


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


@dataclass
class Models:
    detector: DetectorModel
    reader: ReaderModel
    calibration: Calibration


_cache: dict[Path, Models] = {}
_lock = threading.Lock()


def load_models(folder: Path | None = None) -> Models:
    """Both models and the calibration, loaded once per folder and kept for the process."""
    folder = (folder or models_dir()).resolve()
    with _lock:
        if folder not in _cache:
            calibration = Calibration.load(folder / CALIBRATION_FILE)
            detector = DetectorModel.load(folder / DETECTOR_FILE)
            if calibration.detector_threshold is not None:
                detector.threshold = calibration.detector_threshold
            detector.views = int(os.environ.get("COMPANION_DETECTOR_VIEWS") or calibration.detector_views)
            _cache[folder] = Models(detector, ReaderModel.load(folder / READER_FILE), calibration)
        return _cache[folder]


def models_present(folder: Path | None = None) -> bool:
    folder = folder or models_dir()
    return (folder / DETECTOR_FILE).is_file() and (folder / READER_FILE).is_file()
