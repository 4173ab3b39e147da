"""What `companion learn` costs at its caps: one label file of the most photos it takes, each
of the most dice a photo shows, every photo a 12 MP sample JPEG (sample_images/s00_white_10.jpg).

    .venv/bin/python benchmarks/bench_learn_caps.py [--photos N]

Runs `companion learn` in a child process on a fresh profile and prints its wall time and
peak resident memory (the child's ru_maxrss). Target (issue 55): any single file under 30 s
and 1 GB, or refused with one line.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from companion.cli.learn import MAX_PHOTOS  # noqa: E402
from companion.dice import MAX_DICE  # noqa: E402

SAMPLE = "s00_white_10.jpg"  # 4032 x 3024, ten dice


def label_file(folder: Path, photos: int) -> Path:
    rows = [json.loads(line) for line in (ROOT / "sample_images" / "labels.jsonl").read_text("utf-8").splitlines()
            if line.strip()]
    dice = [{k: d[k] for k in ("value", "color", "box")} for d in next(r for r in rows if r["image"] == SAMPLE)["dice"]]
    lines = []
    for k in range(photos):
        shutil.copy(ROOT / "sample_images" / SAMPLE, folder / f"{k}.jpg")
        lines.append(json.dumps({"image": f"{k}.jpg", "dice": dice[:MAX_DICE]}))
    path = folder / "labels.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--photos", type=int, default=MAX_PHOTOS)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-learn-") as tmp:
        labels = label_file(Path(tmp), args.photos)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "companion", "learn", str(Path(tmp) / "set.profile"), str(labels)],
                              capture_output=True, text=True)
        seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print((done.stdout or done.stderr).strip())
    print(f"{args.photos} photos of up to {MAX_DICE} dice: exit {done.returncode}, {seconds:.1f} s, "
          f"peak {peak_mb:.0f} MB resident")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
