"""The missed-top check (stage3_one_per_cube._missed_tops) looks for a cube's missed top face only where no
box the detector found lies: a box found beyond the surest ones the reader reads is still a box,
not a missed face (real ONNX models, a regenerated tilted photo)."""

from dataclasses import replace
from pathlib import Path

import pytest

from companion.dice import MAX_DICE
from companion.vision import pipeline, stage3_one_per_cube
from companion.vision.stage1_find_faces import find_faces
from companion.vision.image_io import load_work_image
from companion.vision.models import load_models, models_present
from companion.vision.settings import ReadSettings

PHOTO = Path(__file__).resolve().parent / "photos" / "tilt_calib_000070.jpg"
pytestmark = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
READ = 4  # boxes the reader reads in this test: the others found stay unread


def test_boxes_found_beyond_those_read_are_no_missed_top_faces(monkeypatch):
    shipped, settings = load_models(), ReadSettings()
    tuning = shipped.tuning  # boxes read beyond the set's dice: READ in all
    models = replace(shipped, tuning=replace(tuning, read=replace(tuning.read, extra_candidates=READ - MAX_DICE)))
    work = load_work_image(PHOTO)
    faces = find_faces(work, models, settings)
    _, found = faces.image, faces.boxes
    assert len(found) > READ
    looked_past: list[int] = []
    real_candidates = stage3_one_per_cube.candidates

    def candidates(heat, stride, kept, others, nearer, levels, overlap):
        looked_past.append(len(others))
        return real_candidates(heat, stride, kept, others, nearer, levels, overlap)

    monkeypatch.setattr(stage3_one_per_cube, "candidates", candidates)
    kept = pipeline.kept_boxes(work, models, settings, embeddings=False)
    assert kept is not None and len(kept.detections) == READ
    assert looked_past == [len(found)]  # every box found marks its peak, read or not
