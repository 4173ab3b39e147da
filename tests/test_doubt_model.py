"""The doubts as scores (doubts.FEATURES and their margins to the doubts' own levels, measured by the
real pipeline on the shipped models) and the doubt model fitted on them (training/doubt_model.py):
its file, its fit and its threshold."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from companion.vision.doubts import ALL_FEATURES, FEATURES, doubt_margins
from companion.vision.image_io import load_work_image
from companion.vision.models import load_models
from companion.vision.pipeline import analyse
from companion.vision.tuning import shipped_tuning
from photo_helpers import PHOTOS, needs_models
from companion.vision.doubt_model import NO_SPLIT, DoubtModel, DoubtModelError
from training.doubt_model import fit_trees, right_flagged_at, threshold_for
from training.evaluate import IOU_MIN, box_iou

NAMES = list(FEATURES)
MARGINS = list(ALL_FEATURES)
TUNING = shipped_tuning()


def _stumps(splits: list[tuple[str, float, float, float]], flag_from: float = 0.5, typical: float = 0.0) -> DoubtModel:
    """Trees that split once: (feature, threshold, added under it, added from it), flagging from `flag_from`."""
    return DoubtModel(-3.0, np.array([[NAMES.index(f), 0, 0] for f, _, _, _ in splits]).reshape(-1, 3),
                      np.array([[t, NO_SPLIT, NO_SPLIT] for _, t, _, _ in splits]).reshape(-1, 3),
                      np.array([[b, 0.0, a, 0.0] for _, _, b, a in splits]).reshape(-1, 4),
                      np.full(len(NAMES), typical), replace(TUNING, doubt_flag_from=flag_from))


def test_a_die_is_flagged_where_its_steps_make_it_likely_wrong():
    model = _stumps([("confidence", 2.0, 5.0, 0.0)])
    scores = np.zeros((2, len(NAMES)))
    scores[:, NAMES.index("confidence")] = [1.0, 3.0]
    assert model.probability(scores) == pytest.approx([1 / (1 + np.exp(-2.0)), 1 / (1 + np.exp(3.0))])
    assert model.flags(scores).tolist() == [True, False]


def test_a_flagged_die_asks_about_the_kind_whose_features_raise_its_doubt():
    model = _stumps([("colour_lead", 1.0, 2.0, 0.0), ("face", 0.0, 4.0, 0.0)], typical=5.0)
    scores = np.full(len(NAMES), 5.0)
    scores[NAMES.index("colour_lead")] = 0.5
    assert model.kind(scores, 0.9, 0.6) == "color"
    scores[NAMES.index("face")] = -1.0
    assert model.kind(scores, 0.9, 0.6) == "die"  # 4 beats 2
    assert model.kind(np.full(len(NAMES), 5.0), 0.6, 0.9) == "value"  # no kind raised: the less sure


def test_the_model_file_round_trips_and_other_features_are_refused(tmp_path):
    model = _stumps([("value_lead", 1.5, 3.0, -0.5)], flag_from=0.2)
    path = tmp_path / "doubt_model.json"
    path.write_text(json.dumps(model.to_json()))
    assert DoubtModel.load(path, TUNING).to_json() == model.to_json()
    data = model.to_json()
    path.write_text(json.dumps({**data, "features": data["features"][:-1]}))
    with pytest.raises(DoubtModelError, match="other features"):
        DoubtModel.load(path, TUNING)
    path.write_text(json.dumps({**data, "version": 99}))
    with pytest.raises(DoubtModelError):
        DoubtModel.load(path, TUNING)


def test_boosted_stumps_find_where_the_wrong_dice_are():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, len(NAMES)))
    lead = NAMES.index("value_lead")
    y = (x[:, lead] < -1.5).astype(np.float64)  # only a small lead is wrong
    model = fit_trees(x, y, 60, depth=1)
    on_lead = model.feature[:, 0] == lead
    assert on_lead[0] and on_lead.mean() > 0.8  # the noise features gain little
    assert np.all(np.abs(model.threshold[on_lead, 0] - -1.5) < 0.3)  # within a quantile bin
    prob = model.probability(x)
    assert right_flagged_at(prob, y > 0) < 0.02  # the right dice within its quantile bin


def test_two_level_trees_find_wrong_dice_where_two_scores_meet():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6000, len(NAMES)))
    lead, side = NAMES.index("value_lead"), NAMES.index("shorter_side")
    y = ((x[:, lead] < -0.5) & (x[:, side] < -0.5)).astype(np.float64)  # a small face with a small lead
    one, two = fit_trees(x, y, 80, depth=1), fit_trees(x, y, 80, depth=2)
    assert right_flagged_at(two.probability(x), y > 0) < 0.01
    assert right_flagged_at(one.probability(x), y > 0) > right_flagged_at(two.probability(x), y > 0)


def test_the_threshold_flags_at_least_the_share_of_wrong_dice_asked():
    prob = np.array([0.9, 0.8, 0.7, 0.1, 0.05, 0.6, 0.2, 0.01])
    wrong = np.array([True, True, True, True, False, False, False, False])
    level = threshold_for(prob, wrong, 0.75)
    assert level == 0.7 and (prob[wrong] >= level).mean() >= 0.75
    assert right_flagged_at(prob, wrong, 0.75) == 0.0
    assert right_flagged_at(prob, wrong, 1.0) == 0.5  # the 0.1 wrong die costs the 0.6 and 0.2 right ones


def _margins(name: str) -> tuple[list, np.ndarray]:
    """The photo's dice read (boxes in full-size pixels) and their scores with the margins."""
    photo = PHOTOS / name
    analysis = analyse(load_work_image(photo), load_models(), scores=True)
    assert analysis.scores is not None and analysis.scores.shape == (len(analysis.dice), len(FEATURES))
    return analysis.dice, doubt_margins(analysis.scores, TUNING)


def _on_no_die(dice: list, name: str) -> np.ndarray:
    truth = [d["box"] for d in json.loads((PHOTOS / name).with_suffix(".json").read_text())["dice"]]
    return np.array([all(box_iou(d.box, b) < IOU_MIN for b in truth) for d in dice])


@needs_models
@pytest.mark.parametrize(("name", "margin", "token"), [
    ("dark_calib_8501_000243.jpg", "cut_margin", "1b"),  # a side face cut by the frame
    ("far_calib_000051.jpg", "flat_print_margin", "4g"),  # a card's "+"
    ("page_far_calib_000070.jpg", "oversized_margin", "2g"),  # a note
])
def test_a_doubts_margin_is_over_its_level_on_the_box_it_flags_and_under_it_on_the_dice(name, margin, token):
    dice, x = _margins(name)
    over = x[:, MARGINS.index(margin)] > 0.0
    the_box = _on_no_die(dice, name) & np.array([d.face.token == token for d in dice])
    assert the_box.sum() == 1 and over.tolist() == the_box.tolist()


@needs_models
def test_the_scores_of_a_photo_of_right_dice_lie_under_every_doubts_level():
    dice, x = _margins("calib_000038.jpg")
    sure = [i for i, d in enumerate(dice) if not d.uncertain]
    assert sure  # dice read without a doubt: under every level that the margins measure exactly
    for margin in ("small_face_margin", "oversized_margin", "flat_print_margin", "cut_margin", "turns_margin"):
        assert (x[sure, MARGINS.index(margin)] < 0.0).all(), margin
