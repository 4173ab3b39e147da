"""Benchmark reading 12 MP phone-sized JPEGs: time per photo, cold start, peak memory.

    .venv/bin/python benchmarks/bench_read.py [--photos 8] [--repeat 5] [--source sample_images]

Makes 4000 x 3000 JPEGs (quality 92, like a phone's) by enlarging labelled photos (the
sample images, or any dataset folder given) and adding sensor-like grain so that the files
are as large as a phone's (3-5 MB), then reports

- warm: the median and 95th percentile of read_image() per photo in one process, end to end
  (file read, JPEG decode at reduced size, detector, reader, decoding), and its parts;
- the same photos' bare JPEG decode at 1/4 scale (Pillow's draft, no model), timed in the
  same run, and the ratio of the warm median to it: a figure that holds on a slower machine;
- cold: the wall time from starting a fresh Python process to its first result;
- peak resident memory of the warm process and of the cold one.

Targets: median <= 150 ms per 12 MP photo and at most 2.5 times the bare decode; cold start <= 2 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COLD = """
import sys, time, json, resource
t0 = time.perf_counter()
from companion.vision import read_image
r = read_image(sys.argv[1])
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"dice": len(r.dice), "inner_ms": (time.perf_counter() - t0) * 1000, "maxrss_mb": hwm / 1024}))
"""


def make_photos(source: Path, count: int, out: Path) -> list[Path]:
    labels = source / "labels.jsonl"
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("dice")][:count] or rows[:count]
    paths = []
    for i, row in enumerate(rows):
        img = Image.open(source / row["image"]).convert("RGB")
        # 12 MP in the photo's own orientation
        size = (4000, 3000) if img.width >= img.height else (3000, 4000)
        big = np.asarray(img.resize(size, Image.Resampling.BICUBIC), dtype=np.int16)
        # sensor-like grain: an enlarged photo alone compresses far better than a real one,
        # and the JPEG's entropy decoding time grows with its size
        grain = np.random.default_rng(i).normal(0, 4, big.shape).astype(np.int16)
        path = out / f"photo{i:02d}.jpg"
        Image.fromarray(np.clip(big + grain, 0, 255).astype(np.uint8)).save(path, quality=92)
        paths.append(path)
    return paths


def _peak_rss_mb() -> float:
    """VmHWM: the peak resident memory of this process (ru_maxrss would include the parent's)."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) / 1024


def warm_times(paths: list[Path], repeat: int) -> dict:
    from companion.vision import read_image
    from companion.vision.image_io import load_work_image
    from companion.vision.models import load_models
    from companion.vision.pipeline import read_work_image

    models = load_models()  # loaded once, as a server does
    read_image(paths[0], models)
    totals, loads, rest, bare = [], [], [], []
    for _ in range(repeat):
        for p in paths:
            t0 = time.perf_counter()
            read_image(p, models)
            totals.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            work = load_work_image(p)
            t1 = time.perf_counter()
            read_work_image(work, models)
            t2 = time.perf_counter()
            loads.append((t1 - t0) * 1000)
            rest.append((t2 - t1) * 1000)
            bare.append(_bare_decode_ms(p))
    return {
        "median_ms": statistics.median(totals),
        "p95_ms": float(np.percentile(totals, 95)),
        "load_decode_median_ms": statistics.median(loads),
        "models_and_decoding_median_ms": statistics.median(rest),
        "bare_decode_median_ms": statistics.median(bare),
        "n": len(totals),
        "peak_rss_mb": _peak_rss_mb(),
    }


def _bare_decode_ms(path: Path) -> float:
    """Reading the file and decoding it at 1/4 scale with libjpeg's DCT scaling, nothing else."""
    t0 = time.perf_counter()
    with Image.open(path) as img:
        img.draft("RGB", (img.width // 4, img.height // 4))
        img.load()
    return (time.perf_counter() - t0) * 1000


def cold_start(path: Path, runs: int) -> dict:
    walls, inner, rss = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", COLD, str(path)], capture_output=True, text=True, cwd=ROOT,
                             check=True)
        walls.append((time.perf_counter() - t0) * 1000)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        inner.append(row["inner_ms"])
        rss.append(row["maxrss_mb"])
    return {"median_wall_ms": statistics.median(walls), "max_wall_ms": max(walls),
            "median_import_to_result_ms": statistics.median(inner), "peak_rss_mb": max(rss)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", default=str(ROOT / "sample_images"), help="labelled folder to enlarge photos from")
    ap.add_argument("--photos", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--make-only", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.make_only:
        make_photos(Path(args.source), args.photos, Path(args.make_only))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        # made in a child process, so that this process's peak memory is the reading's alone
        subprocess.run([sys.executable, __file__, "--source", args.source, "--photos", str(args.photos),
                        "--make-only", tmp], check=True)
        paths = sorted(Path(tmp).glob("photo*.jpg"))
        size_mb = np.mean([p.stat().st_size for p in paths]) / 2**20
        print(f"{len(paths)} photos of 12 MP (4000x3000 JPEG, q92, {size_mb:.1f} MB each on average)")
        cold = cold_start(paths[0], args.cold_runs)
        print(f"cold start (process start -> first result): median {cold['median_wall_ms']:.0f} ms, "
              f"max {cold['max_wall_ms']:.0f} ms (imports -> result {cold['median_import_to_result_ms']:.0f} ms), "
              f"peak RSS {cold['peak_rss_mb']:.0f} MB")
        warm = warm_times(paths, args.repeat)
        print(f"warm, per photo ({warm['n']} reads): median {warm['median_ms']:.1f} ms, p95 {warm['p95_ms']:.1f} ms "
              f"(load + decode {warm['load_decode_median_ms']:.1f} ms, models + decoding "
              f"{warm['models_and_decoding_median_ms']:.1f} ms); peak RSS {warm['peak_rss_mb']:.0f} MB")
        print(f"bare JPEG decode at 1/4 scale, same photos, same run: median {warm['bare_decode_median_ms']:.1f} ms; "
              f"reading takes {warm['median_ms'] / warm['bare_decode_median_ms']:.2f} times as long")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
