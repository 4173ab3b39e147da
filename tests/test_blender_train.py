"""The Blender training split (training/blender/crops.py): small frames around a die and its
neighbours whose labels match what is drawn, in the dataset format the reader's training reads.

The renders run only where the Blender environment is installed (`make .venv-blender/.installed`):
bpy is a 500 MB optional download that the product and CI never need.
"""

import json
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from companion.dice import Color, Face, standard_set
from companion.vision.crops import READER_CONTEXT
from training.blender.look import BODIES, JPEG_QUALITY, KEY_KELVIN, sample_look, train_fonts
from training.common import build_cache, read_dataset
from training.synth.dataset import image_rng
from training.synth.dice_render import numeral_ink

REPO = Path(__file__).resolve().parent.parent
BLENDER_PYTHON = REPO / ".venv-blender" / "bin" / "python"
BLENDER_FONTS = REPO / ".venv-blender" / "lib" / "python3.11" / "site-packages" / "bpy" / "4.2" / "datafiles" / "fonts"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not BLENDER_PYTHON.exists(), reason="no Blender environment (make .venv-blender/.installed)")]
SEED, COUNT = 7, 8
VIEW_FACES = 12.0  # training/blender/crops.py (it imports bpy)


def _render(out: Path, count: int) -> list[dict]:
    subprocess.run([str(BLENDER_PYTHON), "-m", "training.blender", "--split", "train", "--out", str(out),
                    "--count", str(count), "--samples", "2", "--seed", str(SEED)],
                   cwd=REPO, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    return [json.loads(line) for line in (out / "labels.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> tuple[Path, list[dict]]:
    out = tmp_path_factory.mktemp("blender_train") / "crops"
    return out, _render(out, COUNT)


def test_each_frame_holds_its_subject_whole_with_true_faces(rendered):
    out, rows = rendered
    dice = {die.id: die for die in standard_set().dice}
    assert len(rows) == COUNT
    for row in rows:
        cond = row["conditions"]
        with Image.open(out / row["image"]) as image:
            assert image.size == (row["width"], row["height"])
        for d in row["dice"]:
            assert dice[d["die"]].has_face(Face(None if d["value"] == "W" else d["value"], Color.parse(d["color"])))
        subject = [d for d in row["dice"] if d["die"] == cond["subject"]]
        assert len(subject) == 1 and not subject[0]["truncated"] and subject[0]["reader_crop"]
        side = np.sqrt(cv2.contourArea(np.float32(subject[0]["polygon"])))
        assert 0.5 * cond["face_px"] < side < 1.6 * cond["face_px"]  # the size the camera was set for
        # the frame is a region around the dice it cuts, far smaller than the camera's whole view
        assert max(row["width"], row["height"]) < 0.7 * VIEW_FACES * cond["face_px"]
        assert cond["split"] == "train" and cond["body"] in BODIES
        assert KEY_KELVIN[0] <= cond["light"]["key_kelvin"] <= KEY_KELVIN[1]
        assert JPEG_QUALITY[0] <= cond["jpeg_quality"] <= JPEG_QUALITY[1]


def _upright(rgb: np.ndarray, polygon, size: int = 48) -> np.ndarray:
    """The top face warped upright by its label's corners (top-left, top-right, bottom-right, bottom-left)."""
    square = np.float32([[0, 0], [size, 0], [size, size], [0, size]])
    matrix = cv2.getPerspectiveTransform(np.float32(polygon), square)
    return cv2.warpPerspective(rgb.astype(np.float32), matrix, (size, size), flags=cv2.INTER_AREA)


def _ncc(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-9))


def test_the_polygon_starts_at_the_numerals_top_left(rendered):
    """A top face warped upright with its polygon matches its numeral's ink better than its mirror
    image or a quarter turn does (the corner order docs/synthetic_data.md gives)."""
    out, rows = rendered
    fonts = train_fonts((BLENDER_FONTS,))
    scores = []
    for row in rows:
        look = sample_look(image_rng(SEED, "train", row["conditions"]["index"]), fonts)
        assert look.conditions()["font"] == row["conditions"]["font"]  # the same draw as the render's
        rgb = np.asarray(Image.open(out / row["image"]).convert("RGB"))
        for d in row["dice"]:
            if d["truncated"] or np.sqrt(cv2.contourArea(np.float32(d["polygon"]))) < 20:
                continue
            face = Face(None if d["value"] == "W" else d["value"], Color.parse(d["color"]))
            mask, _ = numeral_ink(look, face, 48)
            warped = _upright(rgb, d["polygon"])
            ink = np.abs(warped - np.median(warped.reshape(-1, 3), axis=0)).sum(axis=2)
            inner = (slice(6, 42), slice(6, 42))  # away from the bevel's shading
            others = [np.flipud(mask), np.fliplr(mask), np.rot90(mask, 1), np.rot90(mask, 3)]
            scores.append((_ncc(ink[inner], mask[inner]), max(_ncc(ink[inner], m[inner]) for m in others)))
    assert len(scores) >= 4
    right = np.array(scores)
    assert (right[:, 0] > right[:, 1]).mean() >= 0.75, scores
    assert right[:, 0].mean() > right[:, 1].mean() + 0.1, scores


def test_the_reader_cache_cuts_a_crop_for_each_face_whose_views_the_frame_holds(rendered, tmp_path):
    out, rows = rendered
    cache = build_cache(out, tmp_path / "cache", log=lambda _: None)
    images = read_dataset(out)
    kept = [(im, d) for im in images for d in im.dice if d.reader_face]
    assert len(cache.crop_value) == len(kept) >= COUNT  # every subject at least
    assert cache.crops.shape[1:] == (128, 128, 3)
    for im, d in kept:  # the reader's widest view (scaled 1.25, turned 45 degrees, shifted 0.1) stays inside
        half = (np.sqrt(2) * READER_CONTEXT / 2 * 1.25 + 0.1) * max(d.box[2] - d.box[0], d.box[3] - d.box[1])
        cx, cy = (d.box[0] + d.box[2]) / 2, (d.box[1] + d.box[3]) / 2
        assert half <= cx <= im.width - half and half <= cy <= im.height - half
    # dice the frame cuts close are labelled, but give no crop; the others give one each
    assert sum(len(im.dice) for im in images) > len(kept) > len(images)


def test_a_stopped_run_goes_on_with_the_same_frames(rendered, tmp_path):
    _, rows = rendered
    first = _render(tmp_path, 2)
    lines = (tmp_path / "labels.jsonl").read_text().splitlines()
    (tmp_path / "labels.jsonl").write_text(lines[0] + "\n" + lines[1][:40])  # killed mid-line
    again = _render(tmp_path, 3)
    assert first[0] == rows[0] and again == rows[:3]
