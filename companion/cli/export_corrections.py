"""`companion export-corrections DIR`: the players' confirmed photos as a labelled dataset."""

from __future__ import annotations

import argparse
import json
import mimetypes
import sys
from pathlib import Path

from companion.store import Store, default_db_path

_EXT = {"image/jpeg": ".jpg", "image/png": ".png", "image/webp": ".webp"}


def _extension(mime: str) -> str:
    return _EXT.get(mime) or mimetypes.guess_extension(mime) or ".bin"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export-corrections",
        help="write the players' corrected photos out as a labelled dataset",
        description="Write every photo confirmed on the scorepad, with its final (corrected) dice, to DIR in the "
        "dataset format of docs/dataset_format.md (labels.jsonl + images/). Photos where a die was typed in by "
        "hand have a die without an outline, so they are left out unless --include-unboxed.",
        epilog="example:\n  companion export-corrections corrections/",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dir", type=Path, help="output directory (created; must be empty if it exists)")
    parser.add_argument("--db", type=Path, default=None, help=f"SQLite database (default {default_db_path()})")
    parser.add_argument("--include-unboxed", action="store_true",
                        help="also export photos with dice typed in by hand (their labels miss those dice)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    db = args.db or default_db_path()
    if not db.exists():
        print(f"companion export-corrections: no database at {db}", file=sys.stderr)
        return 1
    out: Path = args.dir
    if out.exists() and any(out.iterdir()):
        print(f"companion export-corrections: {out} is not empty; choose a new directory", file=sys.stderr)
        return 1
    written, skipped = export(Store(db), out, include_unboxed=args.include_unboxed)
    print(f"Wrote {written} labelled photos to {out}" + (f" ({skipped} with hand-typed dice left out)" if skipped else ""))
    return 0


def export(store: Store, out: Path, include_unboxed: bool = False) -> tuple[int, int]:
    (out / "images").mkdir(parents=True, exist_ok=True)
    written = skipped = 0
    with open(out / "labels.jsonl", "w", encoding="utf-8") as labels_file:
        for photo in store.labelled_photos():
            labels = photo.labels or {}
            if labels.get("unboxed", 0) and not include_unboxed:
                skipped += 1
                continue
            name = f"images/{written:06d}{_extension(photo.mime)}"
            (out / name).write_bytes(photo.data)
            line = {
                "image": name,
                "width": photo.reading["width"],
                "height": photo.reading["height"],
                "dice": [{k: d[k] for k in ("die", "value", "color", "polygon", "box", "truncated")}
                         for d in labels.get("dice", [])],
                "conditions": {
                    "source": "players",
                    "photo_id": photo.id,
                    "game_id": photo.game_id,
                    "corrected": sum(1 for d in labels.get("dice", []) if d.get("corrected")),
                    "removed": labels.get("removed", 0),
                    "unboxed": labels.get("unboxed", 0),
                },
            }
            labels_file.write(json.dumps(line) + "\n")
            written += 1
    return written, skipped
