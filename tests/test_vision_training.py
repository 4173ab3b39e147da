"""Training helpers that must agree with the run-time: crops, targets, box transforms, peaks."""

import math
from pathlib import Path

import numpy as np
import pytest

from companion.vision.crops import READER_SIZE, box_crop, crop_square
from companion.vision.detector import peaks_to_detections
from training.common import PRECROP_CONTEXT, PRECROP_SIZE, LrPlan
from training.detector import _rot90, make_targets, match_counts


def _scene(rng) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    img = rng.integers(0, 255, (300, 400, 3), dtype=np.uint8)
    img = np.repeat(np.repeat(img[::10, ::10], 10, axis=0), 10, axis=1)[:300, :400].copy()
    img[120:170, 200:250] = (250, 240, 220)
    img[135:155, 215:235] = (30, 60, 200)
    return img, (200.0, 120.0, 250.0, 170.0)


def test_training_crops_match_the_run_time_crop():
    torch = pytest.importorskip("torch")
    from training.reader import random_views

    img, box = _scene(np.random.default_rng(0))
    x0, y0, x1, y1 = box
    side = max(x1 - x0, y1 - y0) * PRECROP_CONTEXT
    pre = crop_square(img, (x0 + x1) / 2, (y0 + y1) / 2, side, PRECROP_SIZE)
    view = random_views(torch, torch.from_numpy(pre[None].astype(np.float32)).permute(0, 3, 1, 2), None, jitter=False)
    trained_on = view[0].permute(1, 2, 0).numpy()
    run_time = box_crop(img, box).astype(np.float32)
    assert trained_on.shape == run_time.shape == (READER_SIZE, READER_SIZE, 3)
    # two resamplings instead of one blur edges a little; the content must be the same
    assert np.abs(trained_on - run_time).mean() < 12
    centre = slice(READER_SIZE // 2 - 4, READER_SIZE // 2 + 4)
    assert np.abs(trained_on[centre, centre] - run_time[centre, centre]).max() < 20


def test_rot90_moves_boxes_with_the_pixels():
    img = np.zeros((60, 100, 3), np.uint8)
    img[10:20, 70:90] = 255
    boxes = np.array([[70, 10, 90, 20, 0]], np.float32)
    for k in range(4):
        turned, tb = _rot90(img, boxes, k)
        x0, y0, x1, y1 = (int(round(v)) for v in tb[0, :4])
        assert turned[y0:y1, x0:x1].min() == 255, k
        assert turned.sum() == img.sum()


def test_targets_put_a_peak_at_each_centre_and_ignore_cut_faces():
    boxes = np.array([[40, 60, 80, 100, 0], [0, 0, 30, 30, 1]], np.float32)
    heat, ignore, reg, mask = make_targets(boxes, 128)
    assert heat[20, 15] == 1.0 and mask[20, 15] == 1.0  # centre (60, 80) at stride 4
    assert reg[2, 20, 15] == pytest.approx(math.log(40))
    assert mask.sum() == 1
    assert ignore[0:7, 0:7].max() == 0.0 and ignore[20, 15] == 1.0


def test_peaks_become_boxes_in_image_pixels():
    heat = np.zeros((32, 32), np.float32)
    size = np.zeros((4, 32, 32), np.float32)
    heat[10, 20] = 0.9
    size[:, 10, 20] = (0.5, 0.25, math.log(24), math.log(16))
    heat[11, 20] = 0.5  # a shoulder of the same peak, not a second face
    dets = peaks_to_detections(heat, size, stride=4, scale=0.5, threshold=0.3, max_det=10, image_wh=(400, 300),
                               overlap=0.6)
    assert len(dets) == 1
    cx, cy = (20.5 * 4) / 0.5, (10.25 * 4) / 0.5
    assert dets[0].box == pytest.approx((cx - 24, cy - 16, cx + 24, cy + 16))
    assert dets[0].score == pytest.approx(0.9)


def test_matching_counts_hits_misses_and_extras():
    gt = np.array([[0, 0, 10, 10, 0], [20, 20, 30, 30, 0], [50, 50, 60, 60, 1]], np.float32)
    pred = np.array([[1, 1, 10, 10], [50, 50, 60, 60], [80, 80, 90, 90]], np.float32)
    assert match_counts(pred, gt) == (1, 1, 1)  # the ignored face's detection counts neither way


def test_learning_rate_plan_warms_up_decays_and_ends():
    plan = LrPlan(1.0, total_steps=100)
    first = plan.lr()
    for _ in range(5):
        plan.advance(0.1)
    assert plan.lr() == pytest.approx(1.0, rel=1e-6) and first < 0.1
    for _ in range(95):
        plan.advance(0.1)
    assert plan.done() and plan.lr() == pytest.approx(0.01)
    timed = LrPlan(1.0, minutes=1.0)
    timed.advance(30.0)
    assert not timed.done() and 0.4 < timed.lr() < 0.6
    timed.advance(30.0)
    assert timed.done()


def _outcome(dice, tp, fp):
    from training.calibrate import PhotoOutcome

    tp, fp = np.array(tp, float).reshape(-1, 2), np.array(fp, float).reshape(-1, 2)
    return PhotoOutcome(dice, tp[:, 0], tp[:, 1], fp[:, 0], fp[:, 1])


def test_calibration_uses_the_face_head_to_drop_false_boxes():
    from training.calibrate import choose_thresholds

    # strong false boxes (detector score 0.7) that the face head rates 0.1; true ones rate 0.9
    outcomes = [_outcome(2, [(0.6, 0.9), (0.5, 0.95)], [(0.7, 0.1)]) for _ in range(5)]
    outcomes += [_outcome(1, [(0.4, 0.9)], []) for _ in range(5)]
    det, face, table = choose_thresholds(outcomes, (0.0, 0.2, 0.5))
    assert face == 0.2 and det <= 0.4  # the lowest face threshold that drops them, every die kept
    assert table[(det, face)]["photos_exact"] == 1.0
    det_only, _, _ = choose_thresholds(outcomes)
    assert table[(det_only, 0.0)]["photos_exact"] < 1.0


def test_calibration_keeps_recall_before_photos_exact():
    from training.calibrate import choose_thresholds

    # a face threshold of 0.5 would make 8 of 10 photos exact but miss a die in the other two:
    # 2 of 12 dice is more recall than the slack allows, so the face head is not used
    outcomes = [_outcome(1, [(0.6, 0.9)], [(0.6, 0.4)]) for _ in range(8)]
    outcomes += [_outcome(2, [(0.6, 0.9), (0.6, 0.3)], []) for _ in range(2)]
    det, face, table = choose_thresholds(outcomes, (0.0, 0.35, 0.5))
    assert table[(det, 0.5)]["photos_exact"] == 0.8 and table[(det, 0.5)]["recall"] < 0.9
    assert face == 0.0 and table[(det, face)]["recall"] == 1.0


def test_reader_with_negatives_trains_a_face_head_and_exports_it(tmp_path):
    pytest.importorskip("torch")
    onnx = pytest.importorskip("onnx")
    from training.reader import main as train_reader

    import shutil

    data = tmp_path / "photos"  # a copy: the trainer keeps its cache beside the data folder
    shutil.copytree(Path(__file__).resolve().parents[1] / "sample_images", data)
    rng = np.random.default_rng(0)
    neg = tmp_path / "negatives"
    neg.mkdir()
    np.save(neg / "crops.npy", rng.integers(0, 255, (16, PRECROP_SIZE, PRECROP_SIZE, 3), dtype=np.uint8))
    out = tmp_path / "reader.onnx"
    code = train_reader(["--data", str(data), "--epochs", "1", "--epoch-steps", "2", "--batch", "8",
                         "--negatives", str(neg), "--out", str(out), "--run-dir", str(tmp_path / "run")])
    assert code == 0
    outputs = [o.name for o in onnx.load(str(out)).graph.output]
    assert outputs == ["value", "color", "face"]


def test_widening_a_trained_reader_keeps_its_answers():
    torch = pytest.importorskip("torch")
    from training.common import build_reader, widen_state

    torch.manual_seed(0)
    narrow = build_reader(face_head=True)
    for p in narrow.parameters():  # not a fresh model: zero-initialised parts would hide mistakes
        torch.nn.init.normal_(p, std=0.2)
    wide = build_reader(face_head=True, widths=(24, 40, 56, 64, 112, 128))
    state = dict(narrow.state_dict())
    widened = widen_state(wide.state_dict(), state)
    wide.load_state_dict(state)
    narrow.eval()
    wide.eval()
    x = torch.rand(6, 3, READER_SIZE, READER_SIZE) * 255
    with torch.no_grad():
        for a, b in zip(narrow(x), wide(x)):
            assert torch.allclose(a, b, atol=1e-4)
    assert "value.weight" in widened and "features.0.0.weight" in widened
    with pytest.raises(ValueError, match="cannot grow"):
        widen_state(build_reader(face_head=True).state_dict(), dict(wide.state_dict()))


def test_hard_photos_count_misses_and_boxes_on_nothing():
    from training.hard_photos import photo_errors

    truths = np.array([[0, 0, 10, 10, 0], [50, 50, 60, 60, 0], [90, 0, 100, 8, 1]], np.float32)
    # the first face found, the second missed, the cut one (ignored) neither needed nor an extra
    # when boxed; a box half on the second face is not "on nothing"; one far from all is
    boxes = [(0, 0, 10, 10), (90, 0, 100, 8), (55, 50, 65, 60), (200, 200, 210, 210)]
    assert photo_errors(boxes, truths) == (1, 1)
    assert photo_errors([], truths[2:]) == (0, 0)


def test_hard_photos_take_about_their_share_of_an_epoch():
    from training.detector import with_hard

    rng = np.random.default_rng(0)
    order = rng.permutation(10_000)
    hard = np.array([3, 7, 11])
    mixed = with_hard(order, hard, 0.3, rng)
    assert len(mixed) == len(order) and set(mixed) <= set(order)
    changed = mixed != order
    assert 0.27 < changed.mean() < 0.33
    assert set(mixed[changed]) <= set(hard)
    assert np.array_equal(with_hard(order, hard, 0.0, rng), order)
