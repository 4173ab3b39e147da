"""Train the face reader (value 1..10/W and ink colour from a crop) and export it to ONNX.

    .venv/bin/python -m training.reader --data data/train --val data/val --steps 3000 --seed 0 \
        --threads 1 --out models/reader.onnx [--resume]

Crops come from the labelled top faces of the training photos, cut from the same working
image the run-time uses, wider than needed (training/common.py: PRECROP_CONTEXT) so that each
batch can be turned by any angle (0..360), rescaled by 0.8..1.25 and shifted by up to 10% of
the face - the errors a detector box makes - then jittered in light, white balance, blur and
noise. Checkpoints every epoch (runs/reader/last.pt); --resume carries on. The exported model
is the last epoch's; the validation set is only reported.

With --negatives (crops mined by training/negatives.py) a third head learns to tell a top face
from anything else the detector may propose; each batch then carries one negative per
NEGATIVE_SHARE faces, cut and jittered the same way. The value and colour heads learn from the
faces only.

With --second-data DIR (for example data/blender_train, the Blender training split: make
data-blender-train) a second dataset gives --second-share of every batch's faces (default 0.25),
the first the rest (training/reader_sources.py); an epoch stays the first dataset's faces over
the batch size in steps. The exported model's metadata records both.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from companion.vision.crops import READER_CONTEXT, READER_SIZE
from training.common import (
    PRECROP_CONTEXT, READER_WIDTHS, Cache, build_reader, count_params, export_onnx, init_weights, load_checkpoint, make_plan, run_record, save_checkpoint, start_run, training_parser,
)
from training.faults import random_fault
from training.reader_sources import batch_faces, load_second, plan_epoch, share_arg

if TYPE_CHECKING:  # torch is imported where it is used (and handed down): it is an optional extra
    import torch


def random_views(torch, pre: "torch.Tensor", gen: "torch.Generator", jitter: bool = True):
    """Cut READER_SIZE crops out of the pre-crops: the run-time crop, turned, rescaled, shifted."""
    F = torch.nn.functional
    b = pre.shape[0]
    base = READER_CONTEXT / PRECROP_CONTEXT  # the run-time crop's half-extent in pre-crop units
    if jitter:
        angle = torch.rand(b, generator=gen) * 2 * math.pi
        scale = torch.exp(torch.empty(b).uniform_(math.log(0.8), math.log(1.25), generator=gen))
        aspect = torch.exp(torch.empty(b).uniform_(-0.08, 0.08, generator=gen))
        shift = (torch.rand(b, 2, generator=gen) * 2 - 1) * 0.10 * 2 / PRECROP_CONTEXT
    else:
        angle, scale, aspect, shift = torch.zeros(b), torch.ones(b), torch.ones(b), torch.zeros(b, 2)
    a = base * scale
    cos, sin = torch.cos(angle), torch.sin(angle)
    theta = torch.stack([
        torch.stack([a * aspect * cos, -a / aspect * sin, shift[:, 0]], 1),
        torch.stack([a * aspect * sin, a / aspect * cos, shift[:, 1]], 1),
    ], 1)
    grid = F.affine_grid(theta, (b, 3, READER_SIZE, READER_SIZE), align_corners=False)
    return F.grid_sample(pre, grid, mode="bilinear", padding_mode="border", align_corners=False)


def photometric(torch, x: "torch.Tensor", gen: "torch.Generator") -> "torch.Tensor":
    """Light, contrast, white balance (mild: orange must stay orange), blur and noise."""
    F = torch.nn.functional
    b = x.shape[0]
    u = lambda lo, hi, *shape: torch.empty(b, *shape).uniform_(lo, hi, generator=gen)  # noqa: E731
    x = x * u(0.55, 1.4, 1, 1, 1) + u(-25, 25, 1, 1, 1)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = (x - mean) * u(0.65, 1.3, 1, 1, 1) + mean
    x = x * u(0.88, 1.12, 3, 1, 1)
    gamma = u(0.75, 1.35, 1, 1, 1)
    x = 255.0 * (x.clamp(0, 255) / 255.0) ** gamma
    blur = torch.rand(b, generator=gen) < 0.35
    if blur.any():
        sigma = float(torch.empty(1).uniform_(0.5, 1.3, generator=gen))
        k = torch.arange(-2, 3, dtype=torch.float32)
        g = torch.exp(-k ** 2 / (2 * sigma ** 2))
        g = (g / g.sum())
        kern = (g[:, None] * g[None, :]).expand(3, 1, 5, 5)
        x[blur] = F.conv2d(F.pad(x[blur], (2, 2, 2, 2), mode="replicate"), kern, groups=3)
    noisy = (torch.rand(b, generator=gen) < 0.35).float()[:, None, None, None]
    x = x + noisy * torch.randn(x.shape, generator=gen) * u(2, 9, 1, 1, 1)
    return x.clamp(0, 255)


def with_faults(torch, x: "torch.Tensor", share: float, rng: np.random.Generator) -> "torch.Tensor":
    """Give about `share` of the crops one random camera fault (training/faults.py)."""
    hit = np.flatnonzero(rng.random(len(x)) < share)
    if len(hit) == 0:
        return x
    x = x.clone()
    for i in hit:
        rgb = x[i].permute(1, 2, 0).round().clamp(0, 255).to(torch.uint8).numpy()
        x[i] = torch.from_numpy(random_fault(np.ascontiguousarray(rgb), rng)).permute(2, 0, 1).float()
    return x


NEGATIVE_SHARE = 4  # one negative crop per this many faces in a batch


def load_negatives(folder: str | Path) -> np.ndarray:
    """The mined "not a top face" pre-crops (training/negatives.py), memory-mapped."""
    path = Path(folder) / "crops.npy"
    if not path.is_file():
        raise SystemExit(f"no negatives at {path}: run python -m training.negatives first")
    return np.load(path, mmap_mode="r")


def evaluate_crops(torch, model, cache: Cache, batch: int = 512) -> dict:
    """Accuracy on the labelled faces as the run-time would crop them from a perfect box."""
    model.eval()
    right_v = right_c = right_both = kept_faces = 0
    n = len(cache.crop_value)
    with torch.no_grad():
        for s in range(0, n, batch):
            pre = torch.from_numpy(np.array(cache.crops[s:s + batch])).permute(0, 3, 1, 2).float()
            x = random_views(torch, pre, None, jitter=False)
            out = model(x)
            v, c = out[:2]
            if len(out) > 2:
                kept_faces += int((out[2].argmax(1) == 1).sum())
            pv, pc = v.argmax(1).numpy(), c.argmax(1).numpy()
            tv, tc = cache.crop_value[s:s + batch], cache.crop_color[s:s + batch]
            right_v += int((pv == tv).sum())
            right_c += int((pc == tc).sum())
            right_both += int(((pv == tv) & (pc == tc)).sum())
    model.train()
    out = {"value_acc": right_v / max(1, n), "color_acc": right_c / max(1, n), "face_acc": right_both / max(1, n)}
    if model.face is not None:
        out["kept_as_face"] = kept_faces / max(1, n)  # top faces the face head would keep
    return out


def main(argv=None) -> int:
    ap = training_parser(__doc__, name="reader", epochs=12, batch=256)
    ap.add_argument("--widths", type=lambda v: tuple(int(x) for x in v.split(",")), default=READER_WIDTHS,
                    help="channels of the six conv layers, comma-separated (default %(default)s); "
                         "--init from a narrower reader widens it without changing what it computes")
    ap.add_argument("--negatives", help="a folder of mined non-face crops (training/negatives.py): "
                                        "also train the face head")
    ap.add_argument("--second-data", metavar="DIR",
                    help="a second dataset (for example data/blender_train) that gives --second-share of every batch")
    ap.add_argument("--second-share", type=share_arg, metavar="SHARE",
                    help="the second dataset's share of each batch's faces, between 0 and 1 (default 0.25)")
    args = ap.parse_args(argv)
    if args.second_share is not None and not args.second_data:
        ap.error("--second-share is the share of --second-data: give --second-data too")
    if args.second_data and args.batch < 2:
        ap.error("--second-data needs a --batch of at least 2")
    share = args.second_share if args.second_share is not None else 0.25

    import torch

    run_dir, log, train, val = start_run(args)
    second = load_second(args.second_data, log) if args.second_data else None
    n = len(train.crop_value)
    steps = args.epoch_steps or max(1, n // args.batch)
    negatives = load_negatives(args.negatives) if args.negatives else None
    model = build_reader(face_head=negatives is not None, widths=args.widths)
    log(f"reader: {count_params(model)} parameters, {n} training faces, {steps} steps/epoch"
        + (f", {len(negatives)} negatives ({args.negatives})" if negatives is not None else "")
        + (f", {len(second.crop_value)} faces of {args.second_data} giving {share:.0%} of each batch"
           if second is not None else ""))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=5e-4)
    plan = make_plan(args, steps)
    rng = np.random.default_rng(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    epoch, history = 0, []
    ckpt = run_dir / "last.pt"
    if (args.resume or args.export_only) and ckpt.is_file():
        epoch, history = load_checkpoint(ckpt, model, opt, plan, rng)
        gen.manual_seed(args.seed + 1000 * epoch)  # a fresh but reproducible stream after resuming
        log(f"resumed after epoch {epoch} (step {plan.step}, {plan.seconds / 60:.1f} min)")
    elif args.init:
        init_weights(args.init, model, log)
    ce = torch.nn.CrossEntropyLoss()
    while not plan.done() and not args.export_only:
        model.train()
        sources = plan_epoch(rng, train, second, args.batch, share, steps)
        t0, tot, done = time.time(), 0.0, 0
        for s in range(steps):
            if plan.done():
                break
            t_step = time.time()
            plan.apply(opt)
            pre, values, colors = batch_faces(sources, s)
            if negatives is not None:
                neg = np.sort(rng.choice(len(negatives), size=max(1, args.batch // NEGATIVE_SHARE), replace=False))
                pre = np.concatenate([pre, negatives[neg]])
            pre = torch.from_numpy(pre).permute(0, 3, 1, 2).float()
            x = photometric(torch, random_views(torch, pre, gen), gen)
            if args.faults:
                x = with_faults(torch, x, args.faults, rng)
            out = model(x)
            k = len(values)
            v, c = out[0][:k], out[1][:k]
            loss = ce(v, torch.from_numpy(values)) + ce(c, torch.from_numpy(colors))
            if negatives is not None:
                is_face = torch.zeros(len(x), dtype=torch.long)
                is_face[:k] = 1
                loss = loss + ce(out[2], is_face)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            plan.advance(time.time() - t_step)
            tot, done = tot + loss.item(), done + 1
        epoch += 1
        row = {"epoch": epoch, "step": plan.step, "lr": plan.lr(), "loss": tot / max(1, done),
               "seconds": round(time.time() - t0, 1)}
        if val is not None:
            row.update(evaluate_crops(torch, model, val))
        history.append(row)
        log(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
        save_checkpoint(ckpt, model, opt, plan, epoch, rng, history)
    last = history[-1] if history else {}
    meta = {"input_size": READER_SIZE, "context": READER_CONTEXT, **run_record(args, steps, history),
            "val_face_acc": last.get("face_acc", "")}
    outputs = ["value", "color"] + (["face"] if negatives is not None else [])
    meta["negatives"] = args.negatives or ""
    meta["widths"] = ",".join(map(str, args.widths))
    if second is not None:  # only then: a run without one keeps the metadata it always had
        meta["second_data"], meta["second_share"] = args.second_data, share
    export_onnx(model, torch.zeros(4, 3, READER_SIZE, READER_SIZE), Path(args.out), "crops", outputs,
                {"crops": {0: "n"}, **{name: {0: "n"} for name in outputs}}, meta)
    log(f"wrote {args.out} ({Path(args.out).stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
