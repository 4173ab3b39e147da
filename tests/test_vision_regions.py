"""The second search's regions: around the first search's faint responses, in whole blocks."""

from pathlib import Path

import numpy as np
import pytest

from companion.vision.detector import Detection, Heatmap, box_ious
from companion.vision.image_io import NEAR_DETAIL, load_work_image
from companion.vision.models import load_models, models_present
from companion.vision.pipeline import analyse
from companion.vision.stage1_find_faces import MAX_ZOOM, _typical_face, _zoom, find_faces, zoom_for_faces
from companion.vision.tuning import shipped_tuning
from companion.vision.regions import faint_regions, input_windows, merge_if_cheaper, merge_touching
from companion.vision.settings import ReadSettings

SEARCH = shipped_tuning().search
AROUND = shipped_tuning().regions

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"
STRIDE = 4
HEAT = shipped_tuning().pipeline.faint_heat
REGIONS, WHOLE = ReadSettings(faint_heat=0.05), ReadSettings(faint_heat=0.0)  # 0: the whole photo


def _heatmap(heat: np.ndarray, scale: float = 0.5) -> Heatmap:
    """A first-search heatmap of a working image of heat's size x stride / scale pixels."""
    h, w = heat.shape
    return Heatmap(np.zeros((1, 3, h * STRIDE, w * STRIDE), np.float32), heat, np.zeros((4, h, w)), scale,
                   (int(w * STRIDE / scale), int(h * STRIDE / scale)))


def test_two_far_apart_faint_spots_give_two_small_regions_around_them():
    heat = np.zeros((60, 80))
    heat[10, 10] = 0.2  # a weak die, top left (working pixels 80, 80)
    heat[50, 70] = 0.9  # a sure one, bottom right (560, 400)
    boxes = faint_regions(_heatmap(heat), STRIDE, 20.0, HEAT, AROUND)
    assert len(boxes) == 2
    for x, y in ((80, 80), (560, 400)):
        assert sum(b[0] + 40 <= x <= b[2] - 40 and b[1] + 40 <= y <= b[3] - 40 for b in boxes) == 1
    assert sum((b[2] - b[0]) * (b[3] - b[1]) for b in boxes) < 0.1 * 640 * 480


def test_near_spots_share_one_region_and_scattered_ones_mean_the_whole_photo():
    heat = np.zeros((60, 80))
    heat[10, 10] = heat[10, 16] = 0.3
    assert len(faint_regions(_heatmap(heat), STRIDE, 20.0, HEAT, AROUND)) == 1
    heat[::12, ::12] = 0.3
    assert faint_regions(_heatmap(heat), STRIDE, 20.0, HEAT, AROUND) == [(0, 0, 640, 480)]


def test_nothing_faint_or_no_face_found_means_the_whole_photo():
    assert faint_regions(_heatmap(np.zeros((60, 80))), STRIDE, 20.0, HEAT, AROUND) == [(0, 0, 640, 480)]
    heat = np.zeros((60, 80))
    heat[10, 10] = 0.9
    assert len(faint_regions(_heatmap(heat), STRIDE, 20.0, HEAT, AROUND)) == 1
    assert faint_regions(_heatmap(heat), STRIDE, None, HEAT, AROUND) == [(0, 0, 640, 480)]
    assert faint_regions(_heatmap(heat), STRIDE, 20.0, 0.0, AROUND) == [(0, 0, 640, 480)]  # switched off: always the whole photo


def test_windows_are_whole_blocks_and_never_overlap():
    windows = input_windows([(10, 10, 50, 50), (60, 10, 100, 50), (300, 300, 340, 330)], k=0.9)
    assert windows == [(0, 0, 96, 64), (256, 256, 320, 320)]  # the first two met in one block
    assert all(v % 32 == 0 for w in windows for v in w)


@pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
def test_searching_the_regions_finds_what_searching_the_whole_sharper_copy_finds():
    models = load_models()
    detector = models.detector
    work = load_work_image(SAMPLES / "s12_far_phone.jpg")  # small dice: searched again
    faces = find_faces(work, models, REGIONS)
    sharper, found = faces.image, faces.boxes
    # (the half-scale decode as it is: at most NEAR_DETAIL times the zoomed size)
    assert work.long_side * 1.5 < sharper.long_side <= work.long_side * MAX_ZOOM * NEAR_DETAIL and len(found) >= 8
    # the regions the pipeline searched (its own face size) are a real saving on this photo,
    # so the comparison below is not the whole search against itself
    upright = detector.heatmap(work.rgb)
    boxes = faint_regions(upright, detector.stride, _typical_face(detector.detections(upright)), HEAT,
                          AROUND)
    area = sum((b[2] - b[0]) * (b[3] - b[1]) for b in boxes)
    assert area < AROUND.whole_share * work.rgb.shape[0] * work.rgb.shape[1]
    faces = find_faces(work, models, WHOLE)
    _, everywhere = faces.image, faces.boxes
    # the same faces, scored about as the whole search scores them: a face near a window's
    # edge sees padding where the whole search sees ground, which can move its box by a few
    # pixels (2.6 px of a 40-px face here with the stage-6 detector)
    assert len(found) == len(everywhere)
    for d in everywhere:
        iou = box_ious(np.asarray(d.box), np.asarray([f.box for f in found]))
        twin = found[int(iou.argmax())]
        assert iou.max() > 0.8 and abs(twin.score - d.score) < 0.05
    # and the photo reads the same both ways: the same faces and dice, about equally sure (an
    # uncertain die's confidence follows its box: a 1-px shift moved one from 0.46 to 0.475
    # with the stage-8 models)
    by_regions = _readings(work, models, REGIONS)
    whole = _readings(work, models, WHOLE)
    assert [r[:2] for r in by_regions] == [r[:2] for r in whole]
    assert np.allclose([r[2] for r in by_regions], [r[2] for r in whole], atol=0.02)


def _readings(work, models, settings: ReadSettings) -> list:
    return sorted((str(d.face), d.die, d.confidence) for d in analyse(work, models, settings).dice)


def test_boxes_are_merged_only_where_one_run_over_their_bounding_box_costs_less():
    # two boxes that overlap much: one run over both
    assert merge_if_cheaper([(0, 0, 192, 192), (32, 32, 224, 224)], 0) == [(0, 0, 224, 224)]
    # diagonal neighbours that touch: their bounding box is twice their area, so apart
    diagonal = [(0, 0, 192, 192), (160, 160, 352, 352)]
    assert merge_touching(diagonal) == [(0, 0, 352, 352)]
    assert merge_if_cheaper(diagonal, 0) == diagonal
    # ... unless a run costs more than the pixels they would save
    assert merge_if_cheaper(diagonal, 352 * 352) == [(0, 0, 352, 352)]
    # far apart boxes stay apart, and one box is left as it is
    assert merge_if_cheaper([(0, 0, 64, 64), (320, 320, 384, 384)], 4096) == [(0, 0, 64, 64), (320, 320, 384, 384)]
    assert merge_if_cheaper([(0, 0, 64, 64)], 4096) == [(0, 0, 64, 64)]


def test_boxes_that_together_cost_more_than_their_bounding_box_become_it():
    # a cross and the four corners it leaves: no two boxes' bounding box saves, all six
    # together cost more than the square's one run
    cross = [(0, 128, 448, 320), (128, 0, 320, 448)]
    corners = [(0, 0, 128, 128), (320, 0, 448, 128), (0, 320, 128, 448), (320, 320, 448, 448)]
    assert merge_if_cheaper(cross + corners, 0) == [(0, 0, 448, 448)]
    assert merge_if_cheaper(cross + corners[:1], 0) == cross + corners[:1]  # these cost less than it


def test_a_photo_whose_far_dice_are_small_is_searched_again_though_its_near_dice_are_large():
    # a tilted photo from sitting height: five near dice at the usual size, three far ones
    # boxed at under SEARCH.small_face_px, too few to bring the median down
    sides = [45.0, 50.0, 53.0, 60.0, 40.0, 24.0, 26.0, 28.0]
    detections = [Detection((0.0, 0.0, s, s * 0.8), 0.9) for s in sides]
    assert float(np.median(sides)) >= SEARCH.small_face_px
    # zoomed by what the median face asks: the near dice do not grow past what the models know
    zoom = zoom_for_faces(sides, SEARCH)
    assert _zoom(detections, SEARCH) == zoom == pytest.approx(SEARCH.usual_face_px / float(np.median(sides))) and zoom > 1.0
    # all dice at the usual size: no second search; none found at all: the sharpest copy
    assert zoom_for_faces([45.0, 50.0, 40.0, 38.0], SEARCH) == 1.0
    assert zoom_for_faces([], SEARCH) == MAX_ZOOM


def test_box_ious_of_a_column_of_boxes_against_a_row_is_every_pairs():
    rng = np.random.default_rng(3)
    corner = rng.uniform(0, 100, (30, 2))
    boxes = np.concatenate([corner, corner + rng.uniform(1, 40, (30, 2))], axis=1)
    pairs = box_ious(boxes[:, None], boxes[None])
    assert pairs.shape == (30, 30) and (pairs > 0).sum() > 30  # some pairs overlap
    for i in range(30):  # the very values of each box against the others, one at a time
        np.testing.assert_array_equal(pairs[i], box_ious(boxes[i], boxes))
