"""The sample photos read exactly as tests/snapshots/sample_readings.jsonl says (values, colours,
confidences to 4 places, boxes, dice, flags). The snapshot changes only in a commit that says why
the readings changed (training/readings_snapshot.py; its `check` compares the generated set)."""

from __future__ import annotations

import json
from pathlib import Path

from training.readings_snapshot import ROOT, SAMPLES_SNAPSHOT, differences, load, photos, read_all, snapshot_row


def test_the_sample_photos_read_as_the_snapshot_says():
    found = differences(load(SAMPLES_SNAPSHOT), list(read_all(photos(samples=True))))
    assert not found, "the readings changed:\n" + "\n".join(found)


def test_the_snapshot_comparison_sees_a_changed_die():
    rows = load(SAMPLES_SNAPSHOT)
    changed = [dict(row) for row in rows]
    first = next(row for row in changed if row.get("dice"))
    first["dice"] = [{**first["dice"][0], "uncertain": not first["dice"][0]["uncertain"]}, *first["dice"][1:]]
    found = differences(rows, changed)
    assert len(found) == 1 and found[0].startswith(first["image"] + ":")


def test_companion_read_json_gives_the_snapshot(capsys):
    # The snapshot is `companion read --json` without the time: the command reads as read_all does.
    from companion.cli import main

    assert main(["read", "--json", *map(str, photos(samples=True))]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    got = [snapshot_row(Path(row.pop("image")).relative_to(ROOT).as_posix(), row) for row in rows]
    found = differences(load(SAMPLES_SNAPSHOT), got)
    assert not found, "companion read --json reads otherwise than the snapshot:\n" + "\n".join(found)
