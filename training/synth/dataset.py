"""Writing a dataset directory (docs/dataset_format.md): resumable, seeded per image.

Image i of a split is made from its own generator, seeded by (seed, split, i), so any image
can be remade alone and a stopped run can go on where it stopped: the images already in
labels.jsonl are skipped, a half-written last line is dropped, and only this process appends.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from training.synth.scene import Photo, SceneOptions, render_scene

SPLIT_CODES = {"train": 0, "val": 1, "calib": 2}


PAGE_JPEG_QUALITY = 90  # the page's JPEG_QUALITY (web/static/js/photo.js), in percent


@dataclass(frozen=True)
class PageCopy:
    """What the page uploads instead of the camera's file (web/static/js/photo.js): the photo
    decoded, scaled to `long_side` with smoothing and encoded again as JPEG at `quality`."""

    long_side: int
    quality: int


@dataclass(frozen=True)
class Job:
    out: str
    split: str
    seed: int
    index: int
    opts: SceneOptions = SceneOptions()
    page: PageCopy | None = None


def image_rng(seed: int, split: str, index: int) -> np.random.Generator:
    return np.random.default_rng([seed, SPLIT_CODES[split], index])


def render_indexed(seed: int, split: str, index: int, opts: SceneOptions = SceneOptions()) -> Photo:
    photo = render_scene(image_rng(seed, split, index), split, opts)
    photo.conditions["seed"] = seed
    photo.conditions["index"] = index
    return photo


def encode_jpeg(image_rgb: np.ndarray, quality: int) -> bytes:
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(image_rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes()


def page_copy(photo: Photo, page: PageCopy) -> tuple[bytes, Photo]:
    """The page's upload of `photo` and the photo's labels in its pixels. The camera's own JPEG
    comes first (its blocks and lost detail are in what the browser scales), then the browser's
    smoothed downscale (area averaging) and its JPEG."""
    original = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    k = page.long_side / max(photo.width, photo.height)
    if k >= 1.0:  # the page sends a photo no larger than that as it was chosen
        return original, photo
    camera = cv2.imdecode(np.frombuffer(original, np.uint8), cv2.IMREAD_COLOR)
    size = (round(photo.width * k), round(photo.height * k))
    small = cv2.cvtColor(cv2.resize(camera, size, interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2RGB)
    sx, sy = size[0] / photo.width, size[1] / photo.height
    dice = [_scaled_label(d, sx, sy) for d in photo.dice]
    conditions = {**photo.conditions, "page": {"long_side": page.long_side, "jpeg_quality": page.quality,
                                                "camera_size": [photo.width, photo.height]},
                  "face_px": round(photo.conditions["face_px"] * k, 1), "focal_px": round(photo.conditions["focal_px"] * k, 1)}
    return encode_jpeg(small, page.quality), Photo(small, dice, conditions)


def _scaled_label(die: dict, sx: float, sy: float) -> dict:
    def pts(points: list, digits: int) -> list:
        return [[round(x * sx, digits), round(y * sy, digits)] for x, y in points]

    x0, y0, x1, y1 = die["box"]
    return {**die, "polygon": pts(die["polygon"], 2), "cube": pts(die["cube"], 1),
            "box": [round(x0 * sx, 2), round(y0 * sy, 2), round(x1 * sx, 2), round(y1 * sy, 2)]}


def label_record(photo: Photo, rel_path: str) -> dict:
    return {"image": rel_path, "width": photo.width, "height": photo.height, "dice": photo.dice, "conditions": photo.conditions}


def _make_one(job: Job) -> str:
    cv2.setNumThreads(1)  # one core per worker: the machine is shared
    photo = render_indexed(job.seed, job.split, job.index, job.opts)
    rel = f"images/{job.index:06d}.jpg"
    path = Path(job.out) / rel
    tmp = path.with_suffix(".tmp")
    if job.page is not None:
        data, photo = page_copy(photo, job.page)
    else:
        data = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    tmp.write_bytes(data)
    os.replace(tmp, path)  # never leave a half-written image under its real name
    return json.dumps(label_record(photo, rel), separators=(",", ":"))


def done_indices(labels: Path) -> set[int]:
    """Indices already labelled; cuts off a half-written last line from a killed run."""
    if not labels.exists():
        return set()
    data = labels.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        labels.write_bytes(data)
    done = set()
    for line in data.decode("utf-8").splitlines():
        if line.strip():
            done.add(int(json.loads(line)["conditions"]["index"]))
    return done


def write_dataset(out: Path, count: int, seed: int, split: str, workers: int = 1, log_every: int = 500,
                  opts: SceneOptions = SceneOptions(), page: PageCopy | None = None) -> int:
    """Make images 0..count-1 that are not there yet; returns how many were made now."""
    (out / "images").mkdir(parents=True, exist_ok=True)
    labels = out / "labels.jsonl"
    done = done_indices(labels)
    jobs = [Job(str(out), split, seed, i, opts, page) for i in range(count) if i not in done]
    start = time.time()
    made = 0
    with labels.open("a", encoding="utf-8") as sink:
        if workers <= 1:
            results = map(_make_one, jobs)
            pool = None
        else:
            pool = mp.get_context("fork").Pool(workers)
            results = pool.imap(_make_one, jobs, chunksize=8)
        try:
            for line in results:
                sink.write(line + "\n")
                sink.flush()
                made += 1
                if made % log_every == 0:
                    rate = made / (time.time() - start)
                    print(f"{out}: {len(done) + made}/{count} images, {rate:.1f} images/s", file=sys.stderr, flush=True)
        finally:
            if pool is not None:
                pool.terminate()
    return made
