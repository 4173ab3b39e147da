"""Train the top-face detector and export it to ONNX.

    .venv/bin/python -m training.detector --data data/train --val data/val --steps 12000 --seed 0 \
        --threads 1 --out models/detector.onnx [--resume]

Each epoch shows every training photo once, shrunk to the detector's 448-px input, then
rescaled (x0.6..1.6), turned by a multiple of 90 degrees, maybe mirrored, cut to a 256-px
square, and jittered in light, contrast, blur and noise. A checkpoint is written after every
epoch (runs/detector/last.pt) so that --resume carries on after an interruption. The
exported model is the last epoch's: the validation set is only reported, never chosen on.
With --hard (a list made by training.hard_photos), that share of each batch is drawn from the
photos the shipped detector gets wrong, the rest from all photos as before.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import cv2
import numpy as np

from training.common import (
    DET_LONG_SIDE, DET_STRIDE, Cache, build_detector, count_params, export_onnx, init_weights, load_checkpoint, make_plan, run_record, save_checkpoint, start_run, training_parser,
)
from training.faults import random_fault

THRESHOLD = 0.3  # heatmap peak threshold used at run time (written into the ONNX metadata)


# ---------------------------------------------------------------- augmentation and targets

def _rot90(img: np.ndarray, boxes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Turn the image by k x 90 degrees counter-clockwise and the boxes with it."""
    for _ in range(k % 4):
        h, w = img.shape[:2]
        img = np.ascontiguousarray(np.rot90(img))
        x0, y0, x1, y1 = boxes[:, 0].copy(), boxes[:, 1].copy(), boxes[:, 2].copy(), boxes[:, 3].copy()
        boxes = boxes.copy()
        boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3] = y0, w - x1, y1, w - x0
    return img, boxes


def augment(img: np.ndarray, boxes: np.ndarray, rng: np.random.Generator, crop: int,
            fault_share: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    s = math.exp(rng.uniform(math.log(0.6), math.log(1.6)))
    h, w = img.shape[:2]
    img = cv2.resize(img, (max(8, round(w * s)), max(8, round(h * s))),
                     interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
    boxes = boxes.copy()
    boxes[:, :4] *= s
    img, boxes = _rot90(img, boxes, int(rng.integers(4)))
    if rng.random() < 0.5:
        w = img.shape[1]
        img = np.ascontiguousarray(img[:, ::-1])
        boxes[:, [0, 2]] = w - boxes[:, [2, 0]]
    h, w = img.shape[:2]
    # a crop x crop window anywhere the image reaches (outside is zero, as the run-time pads)
    ox = int(rng.integers(min(0, w - crop), max(0, w - crop) + 1))
    oy = int(rng.integers(min(0, h - crop), max(0, h - crop) + 1))
    out = np.zeros((crop, crop, 3), np.uint8)
    sx0, sy0 = max(0, ox), max(0, oy)
    sx1, sy1 = min(w, ox + crop), min(h, oy + crop)
    out[sy0 - oy: sy1 - oy, sx0 - ox: sx1 - ox] = img[sy0:sy1, sx0:sx1]
    boxes[:, [0, 2]] -= ox
    boxes[:, [1, 3]] -= oy
    out = _photometric(out, rng)
    if fault_share and rng.random() < fault_share:
        out = random_fault(out, rng)
    return out, boxes


def _photometric(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    x = img.astype(np.float32)
    x = x * rng.uniform(0.6, 1.4) + rng.uniform(-25, 25)
    x = (x - x.mean()) * rng.uniform(0.7, 1.3) + x.mean()
    x *= rng.uniform(0.85, 1.15, size=3)[None, None, :]
    if rng.random() < 0.3:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.4, 1.4))
    if rng.random() < 0.3:
        x += rng.normal(0, rng.uniform(2, 8), x.shape).astype(np.float32)
    return np.clip(x, 0, 255).astype(np.uint8)


def make_targets(boxes: np.ndarray, size: int) -> tuple[np.ndarray, ...]:
    """Heatmap (gaussian per centre), regression targets and masks at stride 4.

    Faces mostly cut by the frame (common.VISIBLE_MIN) are neither positives nor negatives:
    the loss ignores the cells of their box.
    """
    out = size // DET_STRIDE
    heat = np.zeros((out, out), np.float32)
    ignore = np.ones((out, out), np.float32)
    reg = np.zeros((4, out, out), np.float32)
    reg_mask = np.zeros((out, out), np.float32)
    yy, xx = np.mgrid[0:out, 0:out].astype(np.float32)
    for x0, y0, x1, y1, trunc in boxes:
        bw, bh = x1 - x0, y1 - y0
        if bw < 2 or bh < 2:
            continue
        cx, cy = (x0 + x1) / 2 / DET_STRIDE, (y0 + y1) / 2 / DET_STRIDE
        if trunc > 0.5 or not (0 <= cx < out and 0 <= cy < out):
            gx0, gy0 = int(max(0, x0 // DET_STRIDE)), int(max(0, y0 // DET_STRIDE))
            gx1, gy1 = int(min(out, x1 // DET_STRIDE + 1)), int(min(out, y1 // DET_STRIDE + 1))
            ignore[gy0:gy1, gx0:gx1] = 0
            continue
        sigma = max(0.7, (bw + bh) / 2 / DET_STRIDE / 6)
        ix, iy = int(cx), int(cy)
        g = np.exp(-((xx - ix) ** 2 + (yy - iy) ** 2) / (2 * sigma ** 2))
        heat = np.maximum(heat, g)
        heat[iy, ix] = 1.0
        reg[:, iy, ix] = (cx - ix, cy - iy, math.log(bw), math.log(bh))
        reg_mask[iy, ix] = 1.0
    return heat, ignore, reg, reg_mask


def make_batch(cache: Cache, idx: np.ndarray, rng: np.random.Generator, crop: int, fault_share: float = 0.0):
    imgs, heats, ignores, regs, masks = [], [], [], [], []
    for i in idx:
        w, h = cache.det_sizes[i]
        img, boxes = augment(np.asarray(cache.det_images[i, :h, :w]), cache.det_boxes[i], rng, crop, fault_share)
        heat, ignore, reg, mask = make_targets(boxes, crop)
        imgs.append(img.transpose(2, 0, 1))
        heats.append(heat)
        ignores.append(ignore)
        regs.append(reg)
        masks.append(mask)
    return (np.stack(imgs).astype(np.float32), np.stack(heats)[:, None], np.stack(ignores)[:, None],
            np.stack(regs), np.stack(masks)[:, None])


# ---------------------------------------------------------------- loss

def detector_loss(torch, heat_pred, size_pred, heat, ignore, reg, reg_mask):
    """CenterNet focal loss on the heatmap + L1 on offsets and log sizes at the centres."""
    p = heat_pred.clamp(1e-4, 1 - 1e-4)
    pos = (heat >= 1.0).float()
    n_pos = pos.sum().clamp(min=1.0)
    pos_loss = -(torch.log(p) * (1 - p) ** 2 * pos).sum()
    neg_loss = -(torch.log(1 - p) * p ** 2 * (1 - heat) ** 4 * (1 - pos) * ignore).sum()
    focal = (pos_loss + neg_loss) / n_pos
    reg_l1 = ((size_pred - reg).abs() * reg_mask).sum() / n_pos
    return focal + reg_l1, focal.item(), reg_l1.item()


# ---------------------------------------------------------------- validation

def pairwise_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box in a (n, 4) with every box in b (m, 4): an (n, m) array."""
    x0 = np.maximum(a[:, None, 0], b[None, :, 0])
    y0 = np.maximum(a[:, None, 1], b[None, :, 1])
    x1 = np.minimum(a[:, None, 2], b[None, :, 2])
    y1 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / np.maximum(area_a[:, None] + area_b[None, :] - inter, 1e-9)


def validate(torch, model, cache: Cache, limit: int = 120) -> dict:
    """Recall and precision at IoU 0.5 on whole (unaugmented) validation inputs."""
    from companion.vision.detector import peaks_to_detections
    from companion.vision.tuning import shipped_tuning

    model.eval()
    tp = fn = fp = 0
    with torch.no_grad():
        for i in range(min(limit, len(cache.det_sizes))):
            w, h = (int(v) for v in cache.det_sizes[i])
            ph, pw = -(-h // 32) * 32, -(-w // 32) * 32
            x = np.zeros((1, 3, ph, pw), np.float32)
            x[0, :, :h, :w] = np.asarray(cache.det_images[i, :h, :w]).transpose(2, 0, 1)
            heat, size = model(torch.from_numpy(x))
            dets = peaks_to_detections(heat[0, 0].numpy(), size[0].numpy(), DET_STRIDE, 1.0, THRESHOLD, 24, (w, h),
                                       shipped_tuning().read.peak_overlap)
            gt = cache.det_boxes[i]
            pred = np.array([d.box for d in dets], np.float32).reshape(-1, 4)
            t, f_n, f_p = match_counts(pred, gt)
            tp, fn, fp = tp + t, fn + f_n, fp + f_p
    model.train()
    return {"recall": tp / max(1, tp + fn), "precision": tp / max(1, tp + fp), "tp": tp, "fn": fn, "fp": fp}


def match_counts(pred: np.ndarray, gt: np.ndarray, iou_min: float = 0.5) -> tuple[int, int, int]:
    """Greedy one-to-one matching; predictions on ignored (mostly cut) faces count neither way."""
    if len(gt) == 0:
        return 0, 0, len(pred)
    iou = pairwise_iou(pred, gt[:, :4]) if len(pred) else np.zeros((0, len(gt)))
    used_gt: set[int] = set()
    tp = fp = 0
    for p in range(len(pred)):
        order = np.argsort(-iou[p])
        hit = next((g for g in order if iou[p, g] >= iou_min and g not in used_gt), None)
        if hit is None:
            fp += 1
        else:
            used_gt.add(int(hit))
            tp += 0 if gt[hit, 4] > 0.5 else 1
    fn = sum(1 for g in range(len(gt)) if g not in used_gt and gt[g, 4] < 0.5)
    return tp, fn, fp


# ---------------------------------------------------------------- hard photos

def load_hard(path: str, n: int, log) -> np.ndarray:
    """The hard photos' indices; refused when they were listed for another set of photos."""
    listed = json.loads(Path(path).read_text())
    if listed["photos"] != n:
        raise SystemExit(f"{path} lists hard photos among {listed['photos']} photos, but training has {n}")
    log(f"hard photos: {listed['hard']} of {n} ({listed['missed']} faces missed, {listed['extra']} boxes on nothing)")
    return np.asarray(listed["indices"], dtype=np.int64)


def with_hard(order: np.ndarray, hard: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    """The epoch's photo order with about `share` of its places given to random hard photos."""
    if len(hard) == 0 or share <= 0:
        return order
    order = order.copy()
    places = rng.random(len(order)) < share
    order[places] = rng.choice(hard, int(places.sum()))
    return order


# ---------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = training_parser(__doc__, name="detector", epochs=20, batch=16)
    ap.add_argument("--crop", type=int, default=256)
    ap.add_argument("--hard", metavar="JSON", help="hard photos listed by training.hard_photos (same --data, --limit)")
    ap.add_argument("--hard-share", type=float, default=0.3, help="share of each batch drawn from --hard (default 0.3)")
    args = ap.parse_args(argv)

    import torch

    run_dir, log, train, val = start_run(args)
    n = len(train.det_sizes)
    steps = args.epoch_steps or max(1, n // args.batch)
    model = build_detector()
    log(f"detector: {count_params(model)} parameters, {n} training photos, {steps} steps/epoch")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    plan = make_plan(args, steps)
    rng = np.random.default_rng(args.seed)
    hard = load_hard(args.hard, n, log) if args.hard else None
    epoch, history = 0, []
    ckpt = run_dir / "last.pt"
    if (args.resume or args.export_only) and ckpt.is_file():
        epoch, history = load_checkpoint(ckpt, model, opt, plan, rng)
        log(f"resumed after epoch {epoch} (step {plan.step}, {plan.seconds / 60:.1f} min)")
    elif args.init:
        init_weights(args.init, model, log)
    while not plan.done() and not args.export_only:
        model.train()
        order = np.concatenate([rng.permutation(n) for _ in range(-(-steps * args.batch // n))])
        if hard is not None:
            order = with_hard(order, hard, args.hard_share, rng)
        t0, tot, tot_f, tot_r, done = time.time(), 0.0, 0.0, 0.0, 0
        for s in range(steps):
            if plan.done():
                break
            t_step = time.time()
            plan.apply(opt)
            x, heat, ignore, reg, mask = make_batch(train, order[s * args.batch:(s + 1) * args.batch], rng, args.crop,
                                                 args.faults)
            hp, sp = model(torch.from_numpy(x))
            loss, f, r = detector_loss(torch, hp, sp, *(torch.from_numpy(a) for a in (heat, ignore, reg, mask)))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            plan.advance(time.time() - t_step)
            tot, tot_f, tot_r, done = tot + loss.item(), tot_f + f, tot_r + r, done + 1
        epoch += 1
        row = {"epoch": epoch, "step": plan.step, "lr": plan.lr(), "loss": tot / max(1, done),
               "focal": tot_f / max(1, done), "reg": tot_r / max(1, done), "seconds": round(time.time() - t0, 1)}
        if val is not None:
            row.update(validate(torch, model, val))
        history.append(row)
        log(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
        save_checkpoint(ckpt, model, opt, plan, epoch, rng, history)
    export(torch, model, Path(args.out), args, steps, history)
    log(f"wrote {args.out} ({Path(args.out).stat().st_size / 1024:.0f} KB)")
    return 0


def export(torch, model, out: Path, args, epoch_steps: int, history: list) -> None:
    example = torch.zeros(1, 3, DET_LONG_SIDE * 3 // 4 // 32 * 32, DET_LONG_SIDE)
    last = history[-1] if history else {}
    meta = {"input_long_side": DET_LONG_SIDE, "stride": DET_STRIDE, "threshold": THRESHOLD,
            **run_record(args, epoch_steps, history),
            "hard": args.hard or "", "hard_share": args.hard_share if args.hard else 0.0,
            "val_recall": last.get("recall", ""), "val_precision": last.get("precision", "")}
    export_onnx(model, example, out, "image", ["heat", "size"],
                {"image": {2: "height", 3: "width"}, "heat": {2: "h4", 3: "w4"}, "size": {2: "h4", 3: "w4"}},
                meta)


if __name__ == "__main__":
    raise SystemExit(main())
