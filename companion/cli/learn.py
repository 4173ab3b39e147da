"""`companion learn PROFILE LABELS.jsonl`: learn a dice set's look from labelled photos."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from companion.cli.common import EXIT_USAGE, read_file
from companion.dice import MAX_DICE

# What one run may be given: a photo of the set shows at most its MAX_DICE dice, and one label
# file teaches at most MAX_PHOTOS photos (a profile keeps the dice of about 80, the newest).
MAX_PHOTOS = 100
MAX_LABELS_BYTES = 4 * 1024 * 1024  # 100 photos of 10 dice are about 200 KB
MAX_PROFILE_BYTES = 64 * 1024 * 1024  # a full profile is under 1 MB


EPILOG = f"""\
Each line of LABELS is one photo:
  {{"image": "shots/1.jpg", "dice": [{{"value": 7, "color": "red", "box": [x0, y0, x1, y1]}}, ...]}}
value 1..10 or "W", color red, orange, green or blue, box in pixels of the upright photo
around the die's top face: what `companion read --json` prints, so a corrected reading is a
label file. A relative image path is taken from the current folder, else from LABELS' folder.
A die may say "checked": false when nobody looked at it (the reader's own answer, kept as
read): it then teaches only where no checked die of the same look says otherwise. Every
other die counts as checked.

A label file holds at most {MAX_PHOTOS} photos (a profile keeps the newest dice of about 80) and a
photo at most the set's {MAX_DICE} dice; past that, nothing is learnt and one line says why.

PROFILE is created when missing. Every line is checked and learnt before PROFILE is written,
and it is written whole or not at all: bad input changes nothing. A photo learnt again
replaces what it taught before. Read with it: companion read --profile PROFILE IMAGE...

examples:
  companion read shots/*.jpg --json > labels.jsonl     (then correct the wrong dice)
  companion learn table.profile labels.jsonl
  companion read --profile table.profile next.jpg
"""


class LabelsError(ValueError):
    """A line of the label file that cannot be learnt from."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "learn",
        help="learn a dice set's look from labelled photos (a profile for `read --profile`)",
        description="Add the labelled dice of photos to a dice-set profile, so that reading with it "
        "reads this set better (docs/vision.md, \"Learning a table's dice\").",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("profile", metavar="PROFILE", help="the profile file (created when missing)")
    p.add_argument("labels", metavar="LABELS.jsonl", help="one labelled photo per line")
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    print(f"companion learn: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def parse_labels(path: Path) -> list[tuple[int, str, Path, list]]:
    """(line number, image as written, its path, its confirmed dice) for each photo line."""
    from companion.dice import FACE_VALUES, WILD_TEXT, Color, DiceError, Face
    from companion.vision.learn import ConfirmedDie

    try:
        raw = read_file(path, MAX_LABELS_BYTES)
        if len(raw) > MAX_LABELS_BYTES:
            raise LabelsError(f"{path} is larger than {MAX_LABELS_BYTES // 2**20} MiB; "
                              f"a label file holds at most {MAX_PHOTOS} photos")
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelsError(f"cannot read {path}: {exc.strerror if isinstance(exc, OSError) else 'not UTF-8 text'}") from None
    photos: list[tuple[int, str, Path, list]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        if len(photos) == MAX_PHOTOS:
            raise LabelsError(f"{where}: more than {MAX_PHOTOS} photos in one file; learn them in several runs")
        row = _json_line(line, where)
        if not isinstance(row, dict) or not isinstance(row.get("image"), str) or not isinstance(row.get("dice"), list):
            raise LabelsError(f'{where}: wants {{"image": path, "dice": [...]}}')
        if len(row["dice"]) > MAX_DICE:
            raise LabelsError(f"{where}: {len(row['dice'])} dice; a photo of the set shows at most {MAX_DICE}")
        dice = []
        for k, die in enumerate(row["dice"], 1):
            if not isinstance(die, dict):
                raise LabelsError(f"{where}, die {k}: not an object")
            value = die.get("value")
            if value in (WILD_TEXT, WILD_TEXT.lower()):
                value = None
            elif isinstance(value, bool) or not isinstance(value, int) or value not in FACE_VALUES:
                raise LabelsError(f'{where}, die {k}: value {die.get("value")!r} is not '
                                  f'{FACE_VALUES[0]}..{FACE_VALUES[-1]} or "{WILD_TEXT}"')
            color_text = die.get("color")
            try:
                color = Color.parse(color_text) if isinstance(color_text, str) else None
            except DiceError:
                color = None
            if color is None:
                raise LabelsError(f"{where}, die {k}: unknown colour {die.get('color')!r} (red, orange, green or blue)")
            box = die.get("box")
            if not isinstance(box, list) or len(box) != 4 or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in box):
                raise LabelsError(f"{where}, die {k}: box {box!r} is not [x0, y0, x1, y1]")
            x0, y0, x1, y1 = (float(v) for v in box)
            checked = die.get("checked", True)
            if not isinstance(checked, bool):
                raise LabelsError(f"{where}, die {k}: checked {checked!r} is not true or false")
            dice.append(ConfirmedDie(Face(value, color), (x0, y0, x1, y1), checked))
        photos.append((number, row["image"], _image_path(row["image"], path), dice))
    if not photos:
        raise LabelsError(f"{path} has no labelled photo")
    return photos


def _json_line(line: str, where: str):
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise LabelsError(f"{where}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise LabelsError(f"{where}: not a label (JSON nested too deep)") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise LabelsError(f"{where}: not a label ({str(exc).split(':')[0].lower()})") from None


def _image_path(image: str, labels: Path) -> Path:
    given = Path(image)
    if given.is_absolute() or given.exists():
        return given
    beside = labels.parent / given
    return beside if beside.exists() else given


def load_profile(path: Path):
    """The profile in `path` (ProfileError when it is not one), None when there is no file."""
    from companion.vision.profile import Profile, ProfileError

    if not path.exists():
        return None
    try:
        data = read_file(path, MAX_PROFILE_BYTES)
    except OSError as exc:
        raise ProfileError(f"cannot read {path}: {exc.strerror}") from None
    if len(data) > MAX_PROFILE_BYTES:
        raise ProfileError(f"{path} is larger than {MAX_PROFILE_BYTES // 2**20} MiB: not a dice profile")
    return Profile.from_bytes(data, str(path))


def write_atomically(path: Path, data: bytes) -> None:
    """Write the whole file or leave the old one: a temporary file beside it, then a rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> int:
    from companion.runtime import Runtime
    from companion.vision import ImageError
    from companion.vision.learn import LabelError
    from companion.vision.profile import ProfileError

    target = Path(args.profile)
    try:
        runtime = Runtime.start()
        photos = parse_labels(Path(args.labels))
        profile = load_profile(target)
    except (LabelsError, ProfileError, ValueError) as exc:
        return _fail(str(exc))
    if runtime.reader is None:
        print(f"companion learn: {runtime.reader_problem}", file=sys.stderr)
        return 1
    reader = runtime.reader
    before = len(profile) if profile is not None else 0
    for number, image, path, dice in photos:
        try:
            profile = reader.learn(profile, image, path, dice)
        except (ImageError, LabelError) as exc:
            return _fail(f"{args.labels} line {number} ({image}): {exc}")
        except ProfileError as exc:
            return _fail(f"{target}: {exc}")
    try:
        write_atomically(target, profile.to_bytes())
    except OSError as exc:
        return _fail(f"cannot write {target}: {exc.strerror}")
    print(f"{target}: learnt {sum(len(d) for *_, d in photos)} dice from {len(photos)} photos "
          f"({len(profile)} dice of {len(profile.photos)} photos in all, {before} before)")
    for line in summary_lines(profile):
        print(f"  {line}")
    return 0


def summary_lines(profile) -> list[str]:
    """What the profile changes, per ink and per value, and what its guard saw."""
    blend = profile.blend
    if blend.checked == 0:
        return ["nothing checked yet (it takes two photos): the base reader reads alone"]
    lines = [f"checked on {blend.checked} dice of the later photos, each read with the photos before it: "
             f"colour changes backed fixed {blend.color_errors[0]} and broke {blend.color_errors[1]}, "
             f"value changes backed fixed {blend.value_errors[0]} and broke {blend.value_errors[1]}"]
    lines += [item.sentence() for item in profile.learnt()]
    if blend.drop_unlike:
        lines.append("boxes the reader doubts that look like none of the set's dice are dropped")
    return lines
