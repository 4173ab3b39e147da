"""The shipped reader's face head (real ONNX model): top faces pass, bare table does not."""

import json
from pathlib import Path

import numpy as np
import pytest

from companion.vision.image_io import load_work_image
from companion.vision.detector import Detection
from companion.vision.models import load_models, models_present
from companion.vision.stage2_read import read_boxes

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"
pytestmark = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")


def _rows():
    return [json.loads(line) for line in (SAMPLES / "labels.jsonl").read_text().splitlines() if line.strip()]


def _work_boxes(work, boxes):
    return [Detection(work.to_work(tuple(b)), 1.0) for b in boxes]


def _overlaps(box, others) -> bool:
    return any(box[0] < o[2] and o[0] < box[2] and box[1] < o[3] and o[1] < box[3] for o in others)


@pytest.mark.slow
def test_face_head_keeps_top_faces_and_turns_down_bare_table():
    models = load_models()
    if not models.reader.has_face_head:
        pytest.skip("this reader has no face head")
    threshold = models.calibration.face_threshold
    rng = np.random.default_rng(0)
    kept_faces, kept_table = [], []
    for row in _rows():
        dice = [d for d in row["dice"] if not d.get("truncated")]
        if not dice:
            continue
        work = load_work_image(SAMPLES / row["image"])
        faces = read_boxes(work, _work_boxes(work, [d["box"] for d in dice]), models).face_probability()
        kept_faces += list(faces >= threshold)
        side = float(np.median([d["box"][2] - d["box"][0] for d in dice]))
        table = []
        # die-sized boxes on bare table: at least a die's width away from every die
        around = [(d["box"][0] - side, d["box"][1] - side, d["box"][2] + side, d["box"][3] + side) for d in row["dice"]]
        for _ in range(200):
            x, y = rng.uniform(0, row["width"] - side), rng.uniform(0, row["height"] - side)
            box = (x, y, x + side, y + side)
            if not _overlaps(box, around):
                table.append(box)
            if len(table) == 4:
                break
        if table:
            probs = read_boxes(work, _work_boxes(work, table), models).face_probability()
            kept_table += list(probs >= threshold)
    assert len(kept_faces) > 40 and len(kept_table) >= 8
    assert np.mean(kept_faces) >= 0.95
    assert np.mean(kept_table) <= 0.2
