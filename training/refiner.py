"""Train the box refiner (where exactly is the top face around a detected box?) and export it.

    .venv/bin/python -m training.refiner --data data/train --limit 12000 --val data/val \
        --minutes 40 --seed 0 --out models/refiner.onnx [--resume]

At strong tilts the detector's box slides from the top face toward the die's body or onto a
side face, and a box that overlaps the face by less than half is a missed die with a crop the
reader cannot read. The refiner looks at a wider square around a box (REFINER_CONTEXT x its
longer side) and gives the top face's box in that square.

Training crops: every labelled top face not cut by the frame is kept once, wide
(PRE_CONTEXT x its box's longer side), with its polygon. Each batch turns and mirrors them at
random, computes the face's box from the turned polygon, then moves and resizes that box the
way a detector errs (REFINER_SHIFT, REFINER_SCALE; one in five only slightly, so that a good
box stays good) and cuts the refiner's crop around the moved box; the target is the true box.
Light, blur, noise and camera faults as for the reader. The validation set is only reported:
the mean IoU of the moved boxes with the truth, before and after refining.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.vision.crops import crop_square
from companion.vision.image_io import load_work_image
from companion.vision.refine import REFINER_CONTEXT, REFINER_SIZE
from training.common import (
    LrPlan, count_params, export_onnx, load_checkpoint, log_to, read_dataset, save_checkpoint, seed_everything,
    set_threads, training_parser,
)
from training.reader import photometric, with_faults

PRE_SIZE = 192  # pre-crop side in pixels
PRE_CONTEXT = 6.0  # x the face box's longer side: room for any turn, shift and scale below
REFINER_SHIFT = 0.45  # the moved box's centre: up to this x the true box's longer side away
REFINER_SCALE = 0.4  # its width and height: the true ones x exp(+-this)
SLIGHT_SHARE = 0.2  # share of boxes moved only slightly (a good detection)


@dataclass
class RefinerCache:
    crops: np.ndarray  # (m, PRE_SIZE, PRE_SIZE, 3) uint8, a face at the centre
    polygons: np.ndarray  # (m, 4, 2) float32: the face's corners, pre-crop pixels from its centre


def build_cache(folder: str | Path, cache_dir: Path, limit: int, log) -> RefinerCache:
    """Cut the pre-crops once (from the working image, as the run-time sees it); kept while the
    photos and settings are the same."""
    images = read_dataset(folder, limit)
    stamp = {"images": len(images), "last": str(images[-1].path) if images else "",
             "pre": [PRE_SIZE, PRE_CONTEXT]}
    marker = cache_dir / "done.json"
    if marker.is_file() and json.loads(marker.read_text()) == stamp:
        return load_cache(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    faces = [(i, d) for i, im in enumerate(images) for d in im.dice if not d.truncated and d.polygon is not None]
    crops = np.lib.format.open_memmap(cache_dir / "crops.npy", "w+", np.uint8, (len(faces), PRE_SIZE, PRE_SIZE, 3))
    polygons = np.zeros((len(faces), 4, 2), np.float32)
    t0, j, current = time.time(), 0, -1
    work = None
    for i, d in faces:
        if i != current:
            work, current = load_work_image(images[i].path), i
            kx, ky = work.rgb.shape[1] / work.full_width, work.rgb.shape[0] / work.full_height
            if i % 500 == 0:
                log(f"refiner cache {folder}: {i}/{len(images)} photos, {time.time() - t0:.0f}s")
        poly = d.polygon * (kx, ky)
        (x0, y0), (x1, y1) = poly.min(axis=0), poly.max(axis=0)
        cx, cy, side = (x0 + x1) / 2, (y0 + y1) / 2, max(x1 - x0, y1 - y0) * PRE_CONTEXT
        crops[j] = crop_square(work.rgb, cx, cy, side, PRE_SIZE)
        polygons[j] = (poly - (cx, cy)) * (PRE_SIZE / side)
        j += 1
    crops.flush()
    np.save(cache_dir / "polygons.npy", polygons)
    marker.write_text(json.dumps(stamp))
    return load_cache(cache_dir)


def load_cache(cache_dir: Path) -> RefinerCache:
    return RefinerCache(np.load(cache_dir / "crops.npy", mmap_mode="r"), np.load(cache_dir / "polygons.npy"))


def build_refiner(widths: tuple[int, ...] = (24, 48, 64, 96)):
    import torch

    nn = torch.nn

    def cbr(i, o, s=1):
        return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    class Refiner(nn.Module):
        """A small CNN over the crop that keeps where things are (no global pooling): 64 -> 4x4
        cells, then two linear layers to (dx, dy, log w, log h) of the face's box, in crop sides
        from the crop's centre."""

        def __init__(self):
            super().__init__()
            w = widths
            self.features = nn.Sequential(
                cbr(3, w[0]), nn.MaxPool2d(2),
                cbr(w[0], w[1]), nn.MaxPool2d(2),
                cbr(w[1], w[2]), cbr(w[2], w[2]), nn.MaxPool2d(2),
                cbr(w[2], w[3]), cbr(w[3], w[3], 2),
                nn.Flatten(),
            )
            self.box = nn.Sequential(nn.Linear(w[3] * (REFINER_SIZE // 16) ** 2, 128), nn.ReLU(inplace=True),
                                     nn.Linear(128, 4))

        def forward(self, x):
            return self.box(self.features((x - 127.5) / 64.0))

    return Refiner()


def moved_boxes(polygons: np.ndarray, rng: np.random.Generator, jitter: bool = True):
    """Turn and mirror each face at random, and move its box as a detector might.

    Returns the 2x2 turns (pre-crop -> turned), the true boxes and the moved boxes, both as
    (cx, cy, w, h) in turned pre-crop pixels from the centre.
    """
    b = len(polygons)
    angle = rng.uniform(0, 2 * math.pi, b) if jitter else np.zeros(b)
    mirror = np.where(rng.random(b) < 0.5, -1.0, 1.0) if jitter else np.ones(b)
    cos, sin = np.cos(angle), np.sin(angle)
    turn = np.stack([np.stack([cos * mirror, -sin], 1), np.stack([sin * mirror, cos], 1)], 1)  # (b, 2, 2)
    q = np.einsum("bij,bkj->bki", turn, polygons)
    lo, hi = q.min(axis=1), q.max(axis=1)
    truth = np.concatenate([(lo + hi) / 2, hi - lo], axis=1)
    longer = truth[:, 2:].max(axis=1, keepdims=True)
    moved = truth.copy()
    if not jitter:
        return turn, truth, moved
    slight = rng.random((b, 1)) < SLIGHT_SHARE
    reach = np.where(slight, 0.05, REFINER_SHIFT)
    spread = np.where(slight, 0.08, REFINER_SCALE)
    moved[:, :2] += rng.uniform(-1, 1, (b, 2)) * reach * longer
    moved[:, 2:] *= np.exp(rng.uniform(-1, 1, (b, 2)) * spread)
    return turn, truth, moved


def refiner_batch(torch, pre: np.ndarray, polygons: np.ndarray, rng: np.random.Generator, jitter: bool = True):
    """The refiner's crops around the moved boxes, and their targets."""
    F = torch.nn.functional
    turn, truth, moved = moved_boxes(polygons, rng, jitter)
    side = REFINER_CONTEXT * moved[:, 2:].max(axis=1)  # crop side, pre-crop pixels
    # affine_grid maps the crop's [-1, 1] square to the pre-crop's: a point u of the crop is the
    # turned point c + u side/2, that is the pre-crop point turn^T (c + u side/2)
    back = np.transpose(turn, (0, 2, 1))
    half = PRE_SIZE / 2
    theta = np.concatenate([back * (side / 2 / half)[:, None, None],
                            np.einsum("bij,bj->bi", back, moved[:, :2])[:, :, None] / half], axis=2)
    x = torch.from_numpy(np.ascontiguousarray(pre)).permute(0, 3, 1, 2).float()
    grid = F.affine_grid(torch.from_numpy(theta).float(), (len(pre), 3, REFINER_SIZE, REFINER_SIZE),
                         align_corners=False)
    crops = F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
    target = np.concatenate([(truth[:, :2] - moved[:, :2]) / side[:, None], np.log(truth[:, 2:] / side[:, None])], 1)
    return crops, torch.from_numpy(target).float(), truth, moved, side


def decode_boxes(out: np.ndarray, centre: np.ndarray, side: np.ndarray) -> np.ndarray:
    """The refiner's outputs -> (cx, cy, w, h) in the pixels `centre` and `side` are in."""
    return np.concatenate([centre + out[:, :2] * side[:, None], np.exp(out[:, 2:]) * side[:, None]], 1)


def iou_cxcywh(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    lo = np.maximum(a[:, :2] - a[:, 2:] / 2, b[:, :2] - b[:, 2:] / 2)
    hi = np.minimum(a[:, :2] + a[:, 2:] / 2, b[:, :2] + b[:, 2:] / 2)
    inter = np.prod(np.clip(hi - lo, 0, None), axis=1)
    return inter / np.maximum(np.prod(a[:, 2:], 1) + np.prod(b[:, 2:], 1) - inter, 1e-9)


def evaluate_boxes(torch, model, cache: RefinerCache, seed: int = 7, batch: int = 512) -> dict:
    """IoU with the truth of the moved boxes and of the refined ones (the same moves every time)."""
    model.eval()
    rng = np.random.default_rng(seed)
    before, after = [], []
    with torch.no_grad():
        for s in range(0, len(cache.polygons), batch):
            x, _, truth, moved, side = refiner_batch(torch, np.array(cache.crops[s:s + batch]),
                                                     cache.polygons[s:s + batch], rng)
            refined = decode_boxes(model(x).numpy(), moved[:, :2], side)
            before.append(iou_cxcywh(moved, truth))
            after.append(iou_cxcywh(refined, truth))
    model.train()
    before, after = np.concatenate(before), np.concatenate(after)
    return {"iou_before": float(before.mean()), "iou_after": float(after.mean()),
            "over_half_before": float((before >= 0.5).mean()), "over_half_after": float((after >= 0.5).mean()),
            "over_0.75_after": float((after >= 0.75).mean())}


def main(argv=None) -> int:
    ap = training_parser(__doc__, name="refiner", epochs=10, batch=128)
    ap.set_defaults(lr=2e-3)
    args = ap.parse_args(argv)

    import torch

    set_threads()
    seed_everything(args.seed)
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    log = log_to(run_dir / "train.log")
    train = build_cache(args.data, _cache_dir(args.data, args.limit), args.limit, log)
    val = build_cache(args.val, _cache_dir(args.val, 300), 300, log) if args.val else None
    n = len(train.polygons)
    steps = args.epoch_steps or max(1, n // args.batch)
    model = build_refiner()
    log(f"refiner: {count_params(model)} parameters, {n} training faces, {steps} steps/epoch")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    plan = LrPlan(args.lr, total_steps=args.epochs * steps, minutes=args.minutes)
    rng = np.random.default_rng(args.seed)
    epoch, history = 0, []
    ckpt = run_dir / "last.pt"
    if (args.resume or args.export_only) and ckpt.is_file():
        epoch, history = load_checkpoint(ckpt, model, opt, plan, rng)
        log(f"resumed after epoch {epoch} (step {plan.step}, {plan.seconds / 60:.1f} min)")
    # the centre matters more than the size for which face the box lands on
    weight = torch.tensor([2.0, 2.0, 1.0, 1.0])
    while not plan.done() and not args.export_only:
        model.train()
        order = np.concatenate([rng.permutation(n) for _ in range(-(-steps * args.batch // n))])
        t0, tot, done = time.time(), 0.0, 0
        for s in range(steps):
            if plan.done():
                break
            t_step = time.time()
            plan.apply(opt)
            idx = np.sort(order[s * args.batch:(s + 1) * args.batch])
            x, target, *_ = refiner_batch(torch, np.array(train.crops[idx]), train.polygons[idx], rng)
            x = photometric(torch, x, torch.Generator().manual_seed(int(rng.integers(1 << 62))))
            if args.faults:
                x = with_faults(torch, x, args.faults, rng)
            loss = (torch.nn.functional.smooth_l1_loss(model(x), target, reduction="none", beta=0.02) * weight).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            plan.advance(time.time() - t_step)
            tot, done = tot + loss.item(), done + 1
        epoch += 1
        row = {"epoch": epoch, "step": plan.step, "lr": plan.lr(), "loss": tot / max(1, done),
               "seconds": round(time.time() - t0, 1)}
        if val is not None:
            row.update(evaluate_boxes(torch, model, val))
        history.append(row)
        log(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
        save_checkpoint(ckpt, model, opt, plan, epoch, rng, history)
    last = history[-1] if history else {}
    meta = {"input_size": REFINER_SIZE, "context": REFINER_CONTEXT, "seed": args.seed, "epochs": last.get("epoch", 0),
            "steps": last.get("step", 0), "data": args.data, "limit": args.limit, "minutes": args.minutes,
            "faults": args.faults, "shift": REFINER_SHIFT, "scale": REFINER_SCALE,
            "val_iou_after": last.get("iou_after", "")}
    export_onnx(model, torch.zeros(4, 3, REFINER_SIZE, REFINER_SIZE), Path(args.out), "crops", ["box"],
                {"crops": {0: "n"}, "box": {0: "n"}}, meta)
    log(f"wrote {args.out} ({Path(args.out).stat().st_size / 1024:.0f} KB)")
    return 0


def _cache_dir(data: str | Path, limit: int) -> Path:
    data = Path(data).resolve()
    return data.parent / "cache" / (f"refiner-{data.name}" + (f"-{limit}" if limit else ""))


if __name__ == "__main__":
    raise SystemExit(main())
