"""The second renderer (training/blender): path-traced photos whose labels match what is drawn.

Runs only where the Blender environment is installed (`make data-blender`): bpy is a 500 MB
optional download that the product and CI never need.
"""

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from companion.dice import Color, Face, standard_set

REPO = Path(__file__).resolve().parent.parent
BLENDER_PYTHON = REPO / ".venv-blender" / "bin" / "python"
pytestmark = pytest.mark.skipif(not BLENDER_PYTHON.exists(), reason="no Blender environment (make data-blender)")


def _render(out: Path, count: int) -> list[dict]:
    subprocess.run([str(BLENDER_PYTHON), "-m", "training.blender", "--out", str(out), "--count", str(count),
                    "--samples", "1", "--long-side", "320", "--seed", "7"],
                   cwd=REPO, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    return [json.loads(line) for line in (out / "labels.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> tuple[Path, list[dict]]:
    out = tmp_path_factory.mktemp("blender")
    return out, _render(out, 3)


def _area(polygon) -> float:
    a = np.asarray(polygon, float)
    return float(abs(np.dot(a[:, 0], np.roll(a[:, 1], -1)) - np.dot(a[:, 1], np.roll(a[:, 0], -1))) / 2)


def test_every_label_is_a_face_of_its_die_inside_the_photo(rendered):
    out, rows = rendered
    dice = {die.id: die for die in standard_set().dice}
    assert len(rows) == 3 and sum(len(row["dice"]) for row in rows) >= 3
    for row in rows:
        with Image.open(out / row["image"]) as image:
            assert image.size == (row["width"], row["height"]) and max(image.size) == 320
        for d in row["dice"]:
            face = Face(None if d["value"] == "W" else d["value"], Color.parse(d["color"]))
            assert dice[d["die"]].has_face(face)
            x0, y0, x1, y1 = d["box"]
            assert 0 <= x0 < x1 <= row["width"] and 0 <= y0 < y1 <= row["height"]


def test_a_whole_top_face_has_the_size_the_camera_was_set_for(rendered):
    _, rows = rendered
    whole = [(d, row["conditions"]) for row in rows for d in row["dice"] if not d["truncated"]]
    assert whole
    for d, cond in whole:
        # face_px: a face's side at the camera's aim point; nearer or farther dice, and the
        # tilt's foreshortening, change it by far less than half
        side = math.sqrt(_area(d["polygon"]))
        assert 0.5 * cond["face_px"] < side < 1.6 * cond["face_px"], (side, cond)


def test_a_stopped_run_goes_on_with_the_same_photos(rendered, tmp_path):
    _, rows = rendered
    first = _render(tmp_path, 2)
    lines = (tmp_path / "labels.jsonl").read_text().splitlines()
    (tmp_path / "labels.jsonl").write_text(lines[0] + "\n" + lines[1][:40])  # killed mid-line
    again = _render(tmp_path, 3)
    assert first[0] == rows[0] and again == rows
