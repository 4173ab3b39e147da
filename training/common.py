"""Shared by the training scripts: the dataset reader, the caches, the two networks, export.

Training needs PyTorch (the optional extra `train`); the run-time never imports this module.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from companion.dice import Color
from companion.vision.crops import crop_square
from companion.vision.decoder import COLOR_CLASSES, VALUE_CLASSES
from companion.vision.image_io import load_work_image

DET_LONG_SIDE = 448  # the detector's input: the working image shrunk to this long side
DET_STRIDE = 4
# Reader pre-crops: a wider square than the run-time crop, so that rotation, scale and shift
# can be applied on the fly and still find real pixels (see ReaderAugment).
PRECROP_CONTEXT = 2.4  # x the box's longer side
PRECROP_SIZE = 128
# A top face cut by the frame still counts as a die to find and read when at least this
# share of it is visible (the numeral sits in the middle); below, it is ignored: neither a
# miss when not found nor a false detection when found.
VISIBLE_MIN = 0.75
# `--first-search` of the commands that make the cube models and the colour head
FIRST_SEARCH_HELP = ("collect with the first search's boxes only (ReadSettings.zoom_within_work off: no second "
                     "search of a small photo in its own pixels), the boxes the shipped files were made from")


# ---------------------------------------------------------------- dataset

@dataclass(frozen=True)
class LabelledDie:
    value: int | None
    color: Color
    die: str | None
    box: tuple[float, float, float, float]
    polygon: np.ndarray | None
    truncated: bool
    visible: float = 1.0
    cube: np.ndarray | None = None  # the whole cube's outline (top and side faces), when labelled
    reader_crop: bool = True  # false where a small frame does not hold the square the reader is cut from

    @property
    def ignored(self) -> bool:
        return self.truncated and self.visible < VISIBLE_MIN

    @property
    def reader_face(self) -> bool:
        """A face the reader's training cuts a crop for."""
        return not self.ignored and self.reader_crop


@dataclass(frozen=True)
class LabelledImage:
    path: Path
    width: int
    height: int
    dice: tuple[LabelledDie, ...]
    conditions: dict = field(default_factory=dict)


def _die(d: dict) -> LabelledDie:
    value = None if d["value"] in ("W", "w", None) else int(d["value"])
    poly = np.asarray(d["polygon"], dtype=np.float64) if d.get("polygon") else None
    box = tuple(float(v) for v in d["box"]) if d.get("box") else tuple(
        float(v) for v in (*poly.min(axis=0), *poly.max(axis=0)))
    truncated = bool(d.get("truncated", False))
    visible = float(d.get("visible", 0.0 if truncated else 1.0))
    cube = np.asarray(d["cube"], dtype=np.float64) if d.get("cube") else None
    return LabelledDie(value, Color.parse(d["color"]), d.get("die"), box, poly, truncated, visible, cube,
                       bool(d.get("reader_crop", True)))


def read_dataset(folder: str | Path, limit: int = 0) -> list[LabelledImage]:
    """The labelled photos of a dataset folder (the first `limit` only, when given).

    A generator may still be appending to labels.jsonl: a last line without its newline is
    not complete yet and is left out.
    """
    folder = Path(folder)
    out = []
    with open(folder / "labels.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if not line.endswith("\n") or not line.strip():
                continue
            if limit and len(out) >= limit:
                break
            row = json.loads(line)
            dice = tuple(_die(d) for d in row.get("dice", []))
            out.append(LabelledImage(folder / row["image"], int(row["width"]), int(row["height"]), dice,
                                     row.get("conditions") or {}))
    return out


# ---------------------------------------------------------------- caches

def per_photo(folder: str | Path, images: list[LabelledImage], done: dict, compute, save, every: int = 100) -> list:
    """Each image's `compute(image)` in the order of `images`, taken from `done` (file name ->
    result) where a run before already made it; `save(done)` every `every` photos and at the
    end, so that a long run stopped halfway resumes where it was."""
    for n, image in enumerate(images):
        if image.path.name not in done:
            done[image.path.name] = compute(image)
        if (n + 1) % every == 0 or n + 1 == len(images):
            save(done)
            print(f"{folder}: {n + 1}/{len(images)} photos", flush=True)
    return [done[image.path.name] for image in images]


def _det_input(rgb: np.ndarray) -> tuple[np.ndarray, float]:
    import cv2

    h, w = rgb.shape[:2]
    k = DET_LONG_SIDE / max(h, w)
    small = cv2.resize(rgb, (max(1, round(w * k)), max(1, round(h * k))), interpolation=cv2.INTER_AREA)
    return small, k


@dataclass
class Cache:
    """Detector inputs (padded to a square) and reader pre-crops for one split, as arrays."""

    det_images: np.ndarray  # (n, S, S, 3) uint8, S = DET_LONG_SIDE, image at top-left
    det_sizes: np.ndarray  # (n, 2) real width, height inside the square
    det_boxes: list[np.ndarray]  # per image (k, 5): x0 y0 x1 y1 ignored, detector-input pixels
    crops: np.ndarray  # (m, PRECROP_SIZE, PRECROP_SIZE, 3) uint8
    crop_value: np.ndarray  # (m,) value class
    crop_color: np.ndarray  # (m,) colour class
    crop_image: np.ndarray  # (m,) which image


def build_cache(folder: str | Path, cache_dir: str | Path, log=print, limit: int = 0) -> Cache:
    """Decode every photo once (as the run-time does) and keep what the two trainings need.

    The cache is kept while the photos it was made from are the same (the first `limit`, or
    all when 0) and the crop settings have not changed.
    """
    import fcntl

    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    # two trainings started together must not write the same cache at once
    with open(cache_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_cache_locked(folder, cache_dir, log, limit)


def _build_cache_locked(folder: str | Path, cache_dir: Path, log, limit: int) -> Cache:
    marker = cache_dir / "done.json"
    images = read_dataset(folder, limit)
    stamp = {"images": len(images), "last": str(images[-1].path) if images else "",
             "dice": sum(len(im.dice) for im in images),
             "det": DET_LONG_SIDE, "precrop": [PRECROP_CONTEXT, PRECROP_SIZE], "visible_min": VISIBLE_MIN}
    if marker.is_file() and json.loads(marker.read_text()) == stamp:
        return load_cache(cache_dir)
    if marker.is_file():
        marker.unlink()
    cache_dir.mkdir(parents=True, exist_ok=True)
    n = len(images)
    n_crops = sum(1 for im in images for d in im.dice if d.reader_face)
    det_images = np.lib.format.open_memmap(cache_dir / "det_images.npy", "w+", np.uint8,
                                           (n, DET_LONG_SIDE, DET_LONG_SIDE, 3))
    crops = np.lib.format.open_memmap(cache_dir / "crops.npy", "w+", np.uint8,
                                      (n_crops, PRECROP_SIZE, PRECROP_SIZE, 3))
    det_sizes = np.zeros((n, 2), np.int32)
    det_boxes, values, colors, owners = [], [], [], []
    t0, j = time.time(), 0
    for i, im in enumerate(images):
        work = load_work_image(im.path)
        kx, ky = work.rgb.shape[1] / work.full_width, work.rgb.shape[0] / work.full_height
        small, k = _det_input(work.rgb)
        det_images[i] = 0
        det_images[i, : small.shape[0], : small.shape[1]] = small
        det_sizes[i] = (small.shape[1], small.shape[0])
        rows = []
        for d in im.dice:
            x0, y0, x1, y1 = d.box[0] * kx, d.box[1] * ky, d.box[2] * kx, d.box[3] * ky
            rows.append((x0 * k, y0 * k, x1 * k, y1 * k, float(d.ignored)))
            if not d.reader_face:
                continue
            side = max(x1 - x0, y1 - y0) * PRECROP_CONTEXT
            crops[j] = crop_square(work.rgb, (x0 + x1) / 2, (y0 + y1) / 2, side, PRECROP_SIZE)
            values.append(VALUE_CLASSES.index(d.value))
            colors.append(COLOR_CLASSES.index(d.color))
            owners.append(i)
            j += 1
        det_boxes.append(np.asarray(rows, np.float32).reshape(-1, 5))
        if (i + 1) % 200 == 0:
            log(f"cache {folder}: {i + 1}/{n} images, {time.time() - t0:.0f}s")
    det_images.flush()
    crops.flush()
    np.save(cache_dir / "det_sizes.npy", det_sizes)
    np.save(cache_dir / "crop_labels.npy", np.stack([values, colors, owners], axis=1).astype(np.int64).reshape(-1, 3))
    with open(cache_dir / "det_boxes.json", "w") as fh:
        json.dump([b.tolist() for b in det_boxes], fh)
    marker.write_text(json.dumps(stamp))
    return load_cache(cache_dir)


def load_cache(cache_dir: Path) -> Cache:
    labels = np.load(cache_dir / "crop_labels.npy")
    with open(cache_dir / "det_boxes.json") as fh:
        boxes = [np.asarray(b, np.float32).reshape(-1, 5) for b in json.load(fh)]
    return Cache(
        np.load(cache_dir / "det_images.npy", mmap_mode="r"),
        np.load(cache_dir / "det_sizes.npy"),
        boxes,
        np.load(cache_dir / "crops.npy", mmap_mode="r"),
        labels[:, 0], labels[:, 1], labels[:, 2],
    )


def cache_dir_for(data: str | Path, limit: int = 0) -> Path:
    data = Path(data).resolve()
    return data.parent / "cache" / (data.name + (f"-{limit}" if limit else ""))


# ---------------------------------------------------------------- networks (torch)

def _torch():
    import torch

    return torch


def build_detector():
    torch = _torch()
    nn, F = torch.nn, torch.nn.functional

    def cbr(i, o, s=1, k=3):
        return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    class Detector(nn.Module):
        """CenterNet-style: a stride-4 heatmap of top-face centres and (dx, dy, log w, log h).

        A small encoder down to stride 16 (a receptive field of well over one die, so that a
        side face can be told from a top face by what surrounds it) and a two-step top-down
        path back to stride 4. Input: RGB 0..255, any size that is a multiple of 32.
        """

        def __init__(self, w=(16, 24, 48, 80)):
            super().__init__()
            self.c2 = cbr(3, w[0], 2)
            self.c4 = nn.Sequential(cbr(w[0], w[1], 2), cbr(w[1], w[1]))
            self.c8 = nn.Sequential(cbr(w[1], w[2], 2), cbr(w[2], w[2]))
            self.c16 = nn.Sequential(cbr(w[2], w[3], 2), cbr(w[3], w[3]), cbr(w[3], w[3]))
            self.lat16 = cbr(w[3], w[2], 1, 1)
            self.m8 = cbr(w[2], w[2])
            self.lat8 = cbr(w[2], w[1], 1, 1)
            self.m4 = cbr(w[1], 32)
            self.head = cbr(32, 32)
            self.heat = nn.Conv2d(32, 1, 1)
            self.size = nn.Conv2d(32, 4, 1)
            nn.init.constant_(self.heat.bias, -2.19)  # start near p = 0.1 (CenterNet's prior)

        def forward(self, x):
            x = (x - 127.5) / 64.0
            c4 = self.c4(self.c2(x))
            c8 = self.c8(c4)
            c16 = self.c16(c8)
            p8 = self.m8(c8 + F.interpolate(self.lat16(c16), scale_factor=2.0, mode="nearest"))
            p4 = self.m4(c4 + F.interpolate(self.lat8(p8), scale_factor=2.0, mode="nearest"))
            h = self.head(p4)
            return torch.sigmoid(self.heat(h)), self.size(h)

    return Detector()


READER_WIDTHS = (16, 32, 48, 48, 96, 96)  # the first version's; --widths trains a wider one


def build_reader(face_head: bool = False, widths: tuple[int, ...] = READER_WIDTHS):
    torch = _torch()
    nn = torch.nn

    def cbr(i, o, s=1, k=3):
        return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    class Reader(nn.Module):
        """A small VGG-like CNN on a 64x64 crop; global pooling, then a value and a colour head.

        With face_head, a third head says whether the crop is a die's top face at all (logits
        for: not a top face, a top face), so the pipeline can drop the detector's false boxes.
        """

        def __init__(self):
            super().__init__()
            w = widths
            self.features = nn.Sequential(
                cbr(3, w[0]), nn.MaxPool2d(2),
                cbr(w[0], w[1]), nn.MaxPool2d(2),
                cbr(w[1], w[2]), cbr(w[2], w[3]), nn.MaxPool2d(2),
                cbr(w[3], w[4]), cbr(w[4], w[5]),
                nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1),
            )
            self.value = nn.Linear(w[5], len(VALUE_CLASSES))
            self.color = nn.Linear(w[5], len(COLOR_CLASSES))
            self.face = nn.Linear(w[5], 2) if face_head else None

        def forward(self, x):
            h = self.features((x - 127.5) / 64.0)
            if self.face is None:
                return self.value(h), self.color(h)
            return self.value(h), self.color(h), self.face(h)

    return Reader()


def count_params(model) -> int:
    return sum(p.numel() for p in model.parameters())


# ---------------------------------------------------------------- training plumbing

def seed_everything(seed: int) -> None:
    torch = _torch()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def set_threads(threads: int) -> None:
    torch = _torch()
    torch.set_num_threads(threads)


def make_deterministic() -> None:
    """Refuse any operation without a deterministic kernel, so that a seed, a step count and a
    thread count fix the weights (the thread count too: a CPU reduction splits its work by it,
    and another split can round differently)."""
    _torch().use_deterministic_algorithms(True)


@dataclass
class LrPlan:
    """Warm-up then cosine decay of the learning rate, over steps or over a time budget.

    On 2 shared CPU cores the speed of a step varies several-fold with the other work on the
    machine, so a training can be given minutes instead of epochs: the decay then follows the
    training time spent, and the run ends, fully annealed, when the budget is used. The number
    of steps made is logged and written into the model's metadata.

    A time budget does not replay: the learning rate of step k follows the seconds the steps
    before it took. Over steps (--steps N) step k gets the rate a budgeted run of N steps gives
    it when every step takes as long: progress k / N in place of seconds / budget.
    """

    base_lr: float
    total_steps: int = 0  # used when minutes == 0
    minutes: float = 0.0
    warmup: float = 0.05
    step: int = 0
    seconds: float = 0.0  # training time spent so far (kept across --resume)

    def progress(self) -> float:
        if self.minutes > 0:
            return min(1.0, self.seconds / (self.minutes * 60))
        return min(1.0, self.step / max(1, self.total_steps))

    def lr(self) -> float:
        f = self.progress()
        if f < self.warmup:
            return self.base_lr * (0.05 + 0.95 * f / self.warmup)
        return self.base_lr * (0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * (f - self.warmup) / (1 - self.warmup))))

    def done(self) -> bool:
        return self.progress() >= 1.0

    def apply(self, opt) -> None:
        for group in opt.param_groups:
            group["lr"] = self.lr()

    def advance(self, seconds: float) -> None:
        self.step += 1
        self.seconds += seconds

    def state(self) -> dict:
        return {"step": self.step, "seconds": self.seconds}

    def load(self, state: dict) -> None:
        self.step, self.seconds = int(state["step"]), float(state["seconds"])


def save_checkpoint(path: Path, model, opt, plan: LrPlan, epoch: int, rng: np.random.Generator, history: list) -> None:
    torch = _torch()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "plan": plan.state(),
                "epoch": epoch, "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                "history": history}, tmp)
    os.replace(tmp, path)  # never leave a half-written checkpoint behind


def load_checkpoint(path: Path, model, opt, plan: LrPlan, rng: np.random.Generator) -> tuple[int, list]:
    torch = _torch()
    state = torch.load(path, map_location="cpu", weights_only=False)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    plan.load(state["plan"])
    rng.bit_generator.state = state["rng"]
    torch.set_rng_state(state["torch_rng"])
    return int(state["epoch"]), list(state.get("history", []))


def init_weights(path: str | Path, model, log) -> None:
    """Start a new run from an earlier run's weights; its optimiser and plan are not carried over."""
    torch = _torch()
    state = torch.load(path, map_location="cpu", weights_only=False)
    widened = widen_state(model.state_dict(), state["model"])
    # a head the earlier model did not have (the reader's face head) starts fresh
    missing, unexpected = model.load_state_dict(state["model"], strict=False)
    if unexpected:
        raise ValueError(f"{path} does not fit this model: unexpected {unexpected}")
    log(f"initialised from {path} (its run made {state['plan']['step']} steps)"
        + (f"; new: {', '.join(missing)}" if missing else "")
        + (f"; widened: {len(widened)} tensors" if widened else ""))


def widen_state(fresh: dict, old: dict) -> list[str]:
    """Fit a narrower model's weights into a wider one (in place in `old`) without changing its output.

    Each old tensor fills the leading slice of the fresh one. The weights from a new input
    channel to an old output are zeroed, so every old channel computes exactly what it did
    and the heads, which read the new features with zero weights, give the old answers; the
    new channels keep their random start and learn from there. Warm-starting this way keeps
    what hours of training taught the narrow model. Returns the names of the widened tensors.
    """
    widened = []
    for name, old_t in list(old.items()):
        new_t = fresh.get(name)
        if new_t is None or new_t.shape == old_t.shape:
            continue
        if new_t.dim() != old_t.dim() or any(n < o for n, o in zip(new_t.shape, old_t.shape)):
            raise ValueError(f"{name}: {tuple(old_t.shape)} cannot grow into {tuple(new_t.shape)}")
        out = new_t.clone()
        if out.dim() >= 2:  # conv (out, in, k, k) or linear (out, in): old outputs ignore new inputs
            out[: old_t.shape[0], old_t.shape[1]:] = 0
        out[tuple(slice(0, n) for n in old_t.shape)] = old_t
        old[name] = out
        widened.append(name)
    return widened


def export_onnx(model, example, path: Path, input_name: str, output_names: list[str], dynamic: dict,
                metadata: dict) -> None:
    """Export with opset 17 (TorchScript exporter), then write the metadata the run-time reads."""
    torch = _torch()
    import onnx

    model.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.onnx")
    with torch.no_grad():
        torch.onnx.export(model, example, str(tmp), input_names=[input_name], output_names=output_names,
                          dynamic_axes=dynamic, opset_version=17, do_constant_folding=True, dynamo=False)
    save_onnx(onnx.load(str(tmp)), path, metadata)


def save_onnx(proto, path: Path, metadata: dict) -> None:
    """Add the metadata the run-time reads, check the model, and write it whole or not at all."""
    import onnx

    for key, value in metadata.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = str(key), str(value)
    onnx.checker.check_model(proto)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.onnx")
    onnx.save(proto, str(tmp))
    os.replace(tmp, path)


def log_to(path: Path | None):
    def log(msg: str) -> None:
        line = f"{time.strftime('%H:%M:%S')} {msg}"
        print(line, flush=True)
        if path:
            with open(path, "a") as fh:
                fh.write(line + "\n")

    return log


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text}")
    return value


def make_plan(args: argparse.Namespace, epoch_steps: int) -> LrPlan:
    """The learning-rate plan the options ask for: over --steps, over --minutes, or over
    --epochs of epoch_steps steps."""
    if args.steps:
        return LrPlan(args.lr, total_steps=args.steps)
    return LrPlan(args.lr, total_steps=args.epochs * epoch_steps, minutes=args.minutes)


def run_record(args: argparse.Namespace, epoch_steps: int, history: list) -> dict:
    """What the exported model's metadata says about its training, enough to run it again."""
    last = history[-1] if history else {}
    return {"seed": args.seed, "epochs": last.get("epoch", 0), "steps": last.get("step", 0),
            "data": args.data, "limit": args.limit, "minutes": args.minutes, "init": args.init or "",
            "lr": args.lr, "batch": args.batch, "epoch_steps": epoch_steps, "faults": args.faults,
            "threads": args.threads}


def training_parser(doc: str | None, *, name: str, epochs: int, batch: int) -> argparse.ArgumentParser:
    """The options the detector and reader trainers share (each adds its own after)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--val")
    ap.add_argument("--limit", type=int, default=0, help="train on the first N photos of --data only")
    ap.add_argument("--epochs", type=int, default=epochs)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=batch)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--out", default=f"models/{name}.onnx")
    ap.add_argument("--run-dir", default=f"runs/{name}")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--init", metavar="CHECKPOINT",
                    help="start from this checkpoint's weights (a fine-tune: fresh optimiser and learning-rate plan)")
    ap.add_argument("--export-only", action="store_true", help="export the last checkpoint as it is, then stop")
    ap.add_argument("--epoch-steps", type=int, default=0, help="steps per epoch (default: one pass over the data)")
    stop = ap.add_mutually_exclusive_group()
    stop.add_argument("--minutes", type=float, default=0,
                      help="train for this much time instead of --epochs (the learning rate decays over it)")
    stop.add_argument("--steps", type=_positive, default=0, metavar="N",
                      help="stop after exactly N optimisation steps instead of --epochs (the learning rate "
                           "decays over them); with the same seed and --threads, the same weights")
    ap.add_argument("--threads", type=_positive, default=int(os.environ.get("TRAIN_THREADS", "2")),
                    help="PyTorch threads (default: TRAIN_THREADS or 2); part of what fixes the weights")
    ap.add_argument("--faults", type=float, default=0.0, metavar="SHARE",
                    help="give this share of the inputs one camera fault the generator does not make "
                         "(training/faults.py), at a random strength (default 0)")
    return ap


def start_run(args: argparse.Namespace):
    """Threads, seeds, the run folder and its log, and the cached training and validation data."""
    set_threads(args.threads)
    make_deterministic()
    seed_everything(args.seed)
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    log = log_to(run_dir / "train.log")
    train = build_cache(args.data, cache_dir_for(args.data, args.limit), log, args.limit)
    # Validation is only reported (on its first 300 photos), never chosen on.
    val = build_cache(args.val, cache_dir_for(args.val, 300), log, 300) if args.val else None
    return run_dir, log, train, val
