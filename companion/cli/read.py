"""`companion read IMAGE... [--json] [--annotate OUT]`: read the dice in photos."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from companion.cli.common import add_reader_flags, reader_flags

EXIT_BAD_IMAGE = 2
EXIT_NO_MODELS = 1

EPILOG = """\
examples:
  companion read photo.jpg
  companion read shots/*.jpg --json > readings.jsonl
  companion read photo.jpg --annotate photo.annotated.jpg
  companion read a.jpg b.png --annotate annotated/     (a folder: one copy per photo)
  companion read --profile table.profile photo.jpg     (with what `companion learn` learnt)

With --json each photo gives one line: {"image": path, "width": w, "height": h,
"dice": [{"value": 1..10 or "W", "color": "red", "confidence": 0..1, "box": [x0, y0, x1, y1],
"die": "H3" or null, "uncertain": bool, "doubt": null or "value", "color", "die" (what to check),
"runner_up": null or {"value", "color"} (the next likeliest face)}], "ms": float}; boxes are pixels
of the upright photo.
A file that cannot be read is reported on stderr, the others are still read, and the exit
status is 2 at the end.
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "read",
        help="read the dice (value and colour) in photos",
        description="Read every die's top face in photos (JPEG, PNG, WebP): value 1..10 or W, ink colour, "
        "the physical die when the set pins it down, and a calibrated confidence.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("images", nargs="+", metavar="IMAGE", help="photo files")
    p.add_argument("--json", action="store_true", help="one JSON object per photo per line")
    p.add_argument("--annotate", metavar="OUT",
                   help="write a copy of the photo with boxes and readings (a folder when several photos)")
    add_reader_flags(p)
    p.add_argument("--profile", metavar="PROFILE",
                   help="read with what this dice set's profile learnt (made by `companion learn`)")
    p.set_defaults(func=run)


def _annotate_path(out: str, image: str, several: bool) -> Path:
    target = Path(out)
    if several or target.is_dir() or out.endswith(("/", "\\")):
        return target / f"{Path(image).stem}.annotated.jpg"
    return target


def _human(image: str, reading) -> str:
    n = len(reading.dice)
    lines = [f"{image}: {n} {'die' if n == 1 else 'dice'} ({reading.ms:.0f} ms)"]
    for d in reading.dice:
        flag = "  check this die" if d.uncertain else ""
        lines.append(f"  {d.face.token:<4} {d.die or '-':<3} {d.confidence:5.2f}{flag}")
    if n:
        lines.append("  dice: " + " ".join(d.face.token for d in reading.dice))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from companion.runtime import Runtime, SettingsError
    from companion.vision import ImageError
    from companion.vision.profile import ProfileError

    try:
        runtime = Runtime.start(**reader_flags(args))
    except SettingsError as exc:
        print(f"companion read: {exc}", file=sys.stderr)
        return EXIT_NO_MODELS
    if runtime.reader is None:
        print(f"companion read: {runtime.reader_problem}", file=sys.stderr)
        return EXIT_NO_MODELS
    # Read, never learnt from: no features kept (the server's reader keeps them, to learn a confirm).
    reader = dataclasses.replace(runtime.reader, learns=False)
    profile = None
    if args.profile:
        from companion.cli.learn import load_profile

        try:
            profile = load_profile(Path(args.profile))
        except ProfileError as exc:
            print(f"companion read: error: {exc}", file=sys.stderr)
            return EXIT_BAD_IMAGE
        if profile is None:
            print(f"companion read: error: there is no profile {args.profile} (make it with companion learn)", file=sys.stderr)
            return EXIT_BAD_IMAGE
    status = 0
    several = len(args.images) > 1
    for image in args.images:
        try:
            reading = reader.read(image, profile)
        except ImageError as exc:
            print(f"companion read: {exc}", file=sys.stderr)
            status = EXIT_BAD_IMAGE
            continue
        except ProfileError as exc:  # learnt with another reader
            print(f"companion read: error: {args.profile}: {exc}", file=sys.stderr)
            return EXIT_BAD_IMAGE
        if args.json:
            row = {"image": image, **reading.to_json()}
            print(json.dumps(row), flush=True)
        else:
            print(_human(image, reading), flush=True)
        if args.annotate:
            from companion.vision.annotate import write_annotated

            try:
                written = write_annotated(image, reading, _annotate_path(args.annotate, image, several))
            except (ImageError, OSError) as exc:
                print(f"companion read: cannot write the annotated copy of {image}: {exc}", file=sys.stderr)
                status = EXIT_BAD_IMAGE
                continue
            if not args.json:
                print(f"  annotated: {written}")
    return status
