"""The missed-top check (stage3_one_per_cube._missed_tops) looks for a cube's missed top face only where no
box the detector found lies: a box found beyond the surest ones the reader reads is still a box,
not a missed face (real ONNX models, a regenerated tilted photo)."""

from pathlib import Path

import pytest

from companion.dice import MAX_DICE
from companion.vision import pipeline, stage2_read, stage3_one_per_cube
from companion.vision.stage1_find_faces import find_faces
from companion.vision.image_io import load_work_image
from companion.vision.models import load_models, models_present
from companion.vision.settings import ReadSettings

PHOTO = Path(__file__).resolve().parent / "photos" / "tilt_calib_000070.jpg"
pytestmark = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
READ = 4  # boxes the reader reads in this test: the others found stay unread


def test_boxes_found_beyond_those_read_are_no_missed_top_faces(monkeypatch):
    models, settings = load_models(), ReadSettings()
    work = load_work_image(PHOTO)
    faces = find_faces(work, models, settings)
    _, found = faces.image, faces.boxes
    assert len(found) > READ
    looked_past: list[int] = []
    real_candidates = stage3_one_per_cube.candidates

    def candidates(heat, stride, kept, others, nearer):
        looked_past.append(len(others))
        return real_candidates(heat, stride, kept, others, nearer)

    monkeypatch.setattr(stage3_one_per_cube, "candidates", candidates)
    monkeypatch.setattr(stage2_read, "EXTRA_CANDIDATES", READ - MAX_DICE)
    kept = pipeline.kept_boxes(work, models, settings, embeddings=False)
    assert kept is not None and len(kept.detections) == READ
    assert looked_past == [len(found)]  # every box found marks its peak, read or not
