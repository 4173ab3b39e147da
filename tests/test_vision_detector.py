"""The shipped detector (real ONNX model): its mirror views, and the second look at small dice."""

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from companion.vision.detector import DetectorModel, local_peaks
from companion.vision.image_io import NEAR_DETAIL, WORK_LONG_SIDE, load_work_image
from companion.vision.models import CALIBRATION_FILE, DETECTOR_FILE, load_models, models_present
from companion.vision.reader import PART_FILE
from companion.vision.stage1_find_faces import MAX_ZOOM, find_faces
from companion.vision.tuning import shipped_tuning
from companion.vision.regions import merge_touching
from companion.vision.settings import ReadSettings

MODELS = Path(__file__).resolve().parents[1] / "models"
SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"
pytestmark = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")


def _scores(detector: DetectorModel, rgb: np.ndarray, views: int) -> list[float]:
    return sorted(d.score for d in detector.detect(rgb, views=views))


def test_views_that_include_the_mirror_give_the_mirror_image_the_same_scores():
    detector = DetectorModel.load(MODELS / DETECTOR_FILE, shipped_tuning().read.peak_overlap, threshold=0.2)
    # a 4:3 landscape photo fills the 448-px input's width exactly: no padding to mirror
    rgb = load_work_image(SAMPLES / "s00_white_10.jpg").rgb
    assert rgb.shape[1] > rgb.shape[0]
    mirror = np.ascontiguousarray(rgb[:, ::-1])
    plain, plain_mirror = _scores(detector, rgb, 1), _scores(detector, mirror, 1)
    assert len(plain) >= 10
    # one view is not mirror-blind (so the check below can fail)...
    assert len(plain) != len(plain_mirror) or not np.allclose(plain, plain_mirror, atol=1e-4)
    for views in (2, 4):
        # ...while the averaged heatmap is the same for a photo and its mirror image
        assert np.allclose(_scores(detector, rgb, views), _scores(detector, mirror, views), atol=1e-4)


def test_the_calibration_sets_the_detector_views(tmp_path):
    for name in (DETECTOR_FILE, PART_FILE.format(0), PART_FILE.format(1)):
        shutil.copy(MODELS / name, tmp_path / name)
    calibration = json.loads((MODELS / CALIBRATION_FILE).read_text())
    calibration["detector_views"] = 2
    (tmp_path / CALIBRATION_FILE).write_text(json.dumps(calibration))
    assert load_models(tmp_path).detector.views == 2



def _label(name: str) -> dict:
    rows = [json.loads(line) for line in (SAMPLES / "labels.jsonl").read_text().splitlines() if line.strip()]
    return next(r for r in rows if r["image"] == name)


def _iou(a, b) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union


def _found(row: dict, image, detections) -> int:
    boxes = [image.to_full(d.box) for d in detections]
    return sum(any(_iou(d["box"], b) >= 0.5 for b in boxes) for d in row["dice"])


def test_small_dice_are_searched_again_in_a_sharper_copy():
    models = load_models()
    row = _label("s12_far_phone.jpg")  # a 12 MP photo from sitting height: faces of 50-140 px
    work = load_work_image(SAMPLES / row["image"])
    faces = find_faces(work, models)
    sharper, detections = faces.image, faces.boxes
    # (its half-scale decode as it is: at most NEAR_DETAIL times the zoomed size)
    assert work.long_side == WORK_LONG_SIDE and WORK_LONG_SIDE * 1.5 < sharper.long_side <= WORK_LONG_SIDE * MAX_ZOOM * NEAR_DETAIL
    assert (sharper.full_width, sharper.full_height) == (row["width"], row["height"])
    assert _found(row, sharper, detections) >= 8
    # the same pixels with no sharper copy to be had: searched once, as they are
    flat = replace(work, detail=None)
    faces = find_faces(flat, models)
    same, _ = faces.image, faces.boxes
    assert same is flat


def test_a_sharper_copy_is_searched_with_its_own_mirror_views_and_a_photos_own_pixels_with_the_first_searchs(
    monkeypatch,
):
    models = load_models()
    views_used: list[int] = []
    search = DetectorModel.detect_in_windows

    def counted(self, rgb, windows, long_side=None, views=None):
        views_used.append(views or self.views)
        return search(self, rgb, windows, long_side, views)

    monkeypatch.setattr(DetectorModel, "detect_in_windows", counted)
    work = load_work_image(SAMPLES / "s12_far_phone.jpg")
    faces = find_faces(work, models)
    sharper, _ = faces.image, faces.boxes
    assert sharper is not work and views_used == [shipped_tuning().pipeline.zoomed_views] == [2]
    # with no sharper copy the small faces are searched again in the photo's own pixels, at
    # the views the detector's threshold was chosen with
    views_used.clear()
    flat = replace(work, detail=None)
    faces = find_faces(flat, models)
    same, _ = faces.image, faces.boxes
    assert same is flat and views_used == [models.detector.views] and models.detector.views != 2


def test_closely_framed_dice_are_not_searched_again():
    models = load_models()
    work = load_work_image(SAMPLES / "s00_white_10.jpg")
    faces = find_faces(work, models)
    same, detections = faces.image, faces.boxes
    assert same is work and _found(_label("s00_white_10.jpg"), work, detections) == 10


def test_the_mirror_views_are_taken_around_the_peaks_in_the_band_alone():
    models = load_models()
    detector = models.detector
    work = load_work_image(SAMPLES / "s00_white_10.jpg")
    upright = detector.heatmap(work.rgb)
    heat = upright.total
    peaks = local_peaks(heat) & (heat > 0.05)
    y, x = min(zip(*np.nonzero(peaks)), key=lambda c: abs(heat[c] - 0.5))  # the peak nearest 0.5
    band = (float(heat[y, x]), float(heat[y, x]))
    near = detector.views_near_peaks(upright, None, band)
    every = detector.all_views(upright)
    assert isinstance(near.views, np.ndarray) and near.views[y, x] == detector.views == 4
    assert abs(near.total[y, x] / 4 - every.total[y, x] / 4) < 0.02  # as the whole image's views
    assert abs(every.total[y, x] / 4 - heat[y, x]) > 0.02  # which differ from the upright view there
    away = near.views == 1
    assert away.mean() > 0.5  # the views were not taken of the whole image...
    np.testing.assert_array_equal(near.total[away], heat[away])  # ...and elsewhere it is the upright view
    # a band that holds no peak: the upright view alone, and find_faces reads that
    values = np.sort(heat[peaks])
    gap = int(np.argmax(np.diff(values)))
    quiet = (float(values[gap]) + 1e-3, float(values[gap + 1]) - 1e-3)
    assert detector.views_near_peaks(upright, None, quiet) is upright
    faces = find_faces(work, models, ReadSettings(mirror_band=quiet))
    _, found = faces.image, faces.boxes
    assert [d.score for d in found] == sorted((d.score for d in detector.detect(work.rgb, views=1)), reverse=True)


def _area(boxes) -> int:
    return sum((b[2] - b[0]) * (b[3] - b[1]) for b in boxes)


def test_the_mirror_windows_are_merged_only_where_that_saves_work_and_read_as_the_whole_image():
    detector = load_models().detector
    band = shipped_tuning().pipeline.mirror_band
    upright = detector.heatmap(load_work_image(SAMPLES / "s02_strong_tilt.jpg").rgb)
    windows = detector.mirror_windows(upright, band)
    image = upright.batch.shape[2] * upright.batch.shape[3]
    # its peaks' windows touch, so merging all that touch would grow them into one box of
    # most of the image (0.84); apart they cost two thirds of it
    assert len(windows) >= 2 and merge_touching(windows) != windows
    assert _area(windows) < 0.75 * image < _area(merge_touching(windows))
    near, every = detector.views_near_peaks(upright, None, band), detector.all_views(upright)
    core = near.views > 1
    assert core.mean() > 0.2
    # in the windows' cores the heat is the whole image's views', where they differ from the upright's
    gap = np.abs(near.total[core] / near.views[core] - every.total[core] / every.views)
    assert gap.max() < 0.005 and np.abs(every.total[core] / every.views - upright.total[core]).max() > 0.05
    assert [(d.box, round(d.score, 2)) for d in detector.detections(near)] == \
        [(d.box, round(d.score, 2)) for d in detector.detections(every)]


def test_in_every_sample_the_mirror_windows_cores_hold_the_whole_images_views():
    detector = load_models().detector
    band = shipped_tuning().pipeline.mirror_band
    checked = 0
    for path in sorted(SAMPLES.glob("s*.*")):
        upright = detector.heatmap(load_work_image(path).rgb)
        near = detector.views_near_peaks(upright, None, band)
        if near is upright:
            continue
        every, core = detector.all_views(upright), near.views > 1
        gap = np.abs(near.total[core] / near.views[core] - every.total[core] / every.views)
        assert gap.max() < 0.02 and np.median(gap) < 0.001, path.name
        checked += 1
    assert checked >= 8


def test_where_two_windows_cores_overlap_the_heat_there_is_still_the_whole_images_views():
    detector = load_models().detector
    upright = detector.heatmap(load_work_image(SAMPLES / "s00_white_10.jpg").rgb, long_side=640)
    # peaks in a row and in a column across it: a wide window and a tall one whose bounding
    # box would be the whole image, so they stay apart and their cores cross
    heat = np.zeros_like(upright.total)
    rows, cols = heat.shape
    heat[rows // 2, 20:cols - 20:12] = 0.5
    heat[20:rows - 20:12, cols // 2] = 0.5
    crossed = replace(upright, total=heat)
    windows = detector.mirror_windows(crossed, (0.4, 0.6))
    assert len(windows) >= 2 and any(a[0] + 128 < b[2] and b[0] + 128 < a[2] and a[1] + 128 < b[3] and b[1] + 128 < a[3]
                                     for i, a in enumerate(windows) for b in windows[i + 1:])
    near, every = detector.views_near_peaks(crossed, None, (0.4, 0.6)), detector.all_views(crossed)
    core = near.views > 1
    # the mirror views' sum: what each gives, the upright heat (here made up) set aside
    views_sum = every.total - heat
    gap = np.abs((near.total[core] - heat[core]) - views_sum[core]) / (every.views - 1)
    assert gap.max() < 0.02 and np.median(gap) < 0.001


def test_mirror_views_are_not_taken_twice_of_one_heatmap():
    detector = load_models().detector
    upright = detector.heatmap(load_work_image(SAMPLES / "s00_white_10.jpg").rgb)
    near = detector.views_near_peaks(upright, None, shipped_tuning().pipeline.mirror_band)
    assert isinstance(near.views, np.ndarray)
    with pytest.raises(ValueError, match="upright view alone"):
        detector.views_near_peaks(near, None, shipped_tuning().pipeline.mirror_band)
    with pytest.raises(ValueError, match="has them everywhere"):
        detector.all_views(near)
