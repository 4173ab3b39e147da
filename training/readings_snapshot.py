"""The readings the product gives, kept as a snapshot: a change to the vision code that is meant to
leave them as they are is checked against it.

    python -m training.readings_snapshot check             # the generated set (made first if missing)
    python -m training.readings_snapshot check --samples   # sample_images/ (tests/test_readings_snapshot.py)
    python -m training.readings_snapshot write [--samples] # only in a commit that says why readings changed

A photo's snapshot is `companion read --json` without the time: per die the value, colour,
confidence (4 places), box, die, whether it is flagged, what is doubted and the runner-up face. The generated set is
made by training.synth from the seeds below (data/ is git-ignored; synth skips photos already made).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_images"
GENERATED = ROOT / "data" / "snapshot"
SNAPSHOTS = ROOT / "tests" / "snapshots"
SAMPLES_SNAPSHOT = SNAPSHOTS / "sample_readings.jsonl"
GENERATED_SNAPSHOT = SNAPSHOTS / "generated_readings.jsonl"
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")

# One folder per condition the doubts look at: (folder, training.synth arguments).
GENERATED_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("val", ("--split", "val", "--count", "160", "--seed", "9101")),
    ("warm", ("--split", "val", "--count", "40", "--seed", "9201", "--light", "warm")),
    ("cold", ("--split", "val", "--count", "20", "--seed", "9251", "--light", "cold")),
    ("dark", ("--split", "val", "--count", "40", "--seed", "9301", "--dark-bodies")),
    ("tilt", ("--split", "val", "--count", "40", "--seed", "9401", "--tilt", "27", "40")),
    ("far", ("--split", "val", "--count", "20", "--seed", "9501", "--phone-far", "--long-side", "1920")),
)


def make_generated(out: Path = GENERATED) -> None:
    """Make (or complete) the generated set's photos."""
    for folder, arguments in GENERATED_SETS:
        subprocess.run([sys.executable, "-m", "training.synth", "--out", str(out / folder), *arguments],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def photos(samples: bool) -> list[Path]:
    if samples:
        return sorted(p for p in SAMPLES.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    return sorted(p for folder, _ in GENERATED_SETS for p in (GENERATED / folder / "images").iterdir())


def snapshot_row(name: str, reading_json: dict) -> dict:
    """A photo's reading as the snapshot keeps it (everything but the time)."""
    return {"image": name, **{k: v for k, v in reading_json.items() if k != "ms"}}


def read_all(paths: Iterable[Path]) -> Iterator[dict]:
    """Each photo's snapshot row, read as `companion read` reads it (the shipped settings)."""
    from companion.vision import read_image
    from companion.vision.reading import ImageError

    for path in paths:
        name = path.relative_to(ROOT).as_posix()
        try:
            reading = read_image(path)
        except ImageError as exc:
            yield {"image": name, "error": str(exc)}
            continue
        yield snapshot_row(name, reading.to_json())


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def differences(expected: list[dict], got: list[dict]) -> list[str]:
    """One line per photo read otherwise than the snapshot says (exactly: values are rounded)."""
    want = {row["image"]: row for row in expected}
    have = {row["image"]: row for row in got}
    out = [f"{name}: not in the snapshot" for name in sorted(set(have) - set(want))]
    out += [f"{name}: not read" for name in sorted(set(want) - set(have))]
    for name in sorted(set(want) & set(have)):
        if want[name] != have[name]:
            out.append(f"{name}:\n  snapshot {json.dumps(want[name])}\n  now      {json.dumps(have[name])}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.readings_snapshot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["check", "write"])
    parser.add_argument("--samples", action="store_true", help="sample_images/ instead of the generated set")
    args = parser.parse_args(argv)
    if not args.samples:
        make_generated()
    target = SAMPLES_SNAPSHOT if args.samples else GENERATED_SNAPSHOT
    rows = list(read_all(photos(args.samples)))
    if args.action == "write":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(json.dumps(row) + "\n" for row in rows))
        print(f"{target.relative_to(ROOT)}: {len(rows)} photos, {sum(len(r.get('dice', [])) for r in rows)} dice")
        return 0
    found = differences(load(target), rows)
    print("\n".join(found) if found else f"{len(rows)} photos read as {target.relative_to(ROOT)} says")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
