"""A dice-set profile on a generated game (training.synth.games), with the real ONNX models:
the correct labels of photos 1-4 learnt in one batch make no die of photos 5-8 worse, and how
the inks look against their bodies puts right a die more than the colour head's look alone.

Game 8 of `python -m training.synth.games --seed 7001 --look far` (grey bodies, a warm lamp):
a profile that let the learnt dice's neighbours and one shift for all inks move the colours
read a right red 3 of photo 6 as orange there (8 wrong dice -> 9).
"""

from __future__ import annotations

import pytest

from companion.dice import Face
from companion.vision.image_io import load_work_image
from companion.vision.learn import ConfirmedDie, learn_photo
from companion.vision.models import load_models
from companion.vision.pipeline import analyse
from conftest import models_ready
from training.common import read_dataset
from training.evaluate import IOU_MIN, box_iou
from training.synth.games import write_games

SEED, GAME, PHOTOS = 7001, 8, 8


def _right_dice(image, analysis) -> set[int]:
    """The true dice (their index) read right, matched by box."""
    right = set()
    for die in analysis.dice:
        best = max(((box_iou(die.box, t.box), j) for j, t in enumerate(image.dice)), default=(0.0, -1))
        truth = image.dice[best[1]] if best[0] >= IOU_MIN else None
        if truth is not None and not truth.ignored and die.face == Face(truth.value, truth.color):
            right.add(best[1])
    return right


@pytest.mark.slow
@pytest.mark.skipif(not models_ready(), reason="models/ has no ONNX files yet")
def test_correct_labels_of_four_photos_make_no_die_of_the_next_four_worse(tmp_path):
    write_games(tmp_path, GAME + 1, PHOTOS, SEED, look="far", first_game=GAME)
    photos = sorted((im for im in read_dataset(tmp_path) if im.conditions["game"] == GAME),
                    key=lambda im: im.conditions["photo"])
    assert len(photos) == PHOTOS
    models = load_models()
    profile = None
    for k, image in enumerate(photos[:4]):
        dice = [ConfirmedDie(Face(d.value, d.color), d.box) for d in image.dice if not d.ignored]
        profile = learn_photo(profile, f"photo {k + 1}", image.path, dice, models)
    assert len(profile) > 20
    for image in photos[4:]:
        work = load_work_image(image.path)
        base = _right_dice(image, analyse(work, models))
        learnt = _right_dice(image, analyse(work, models, profile=profile))
        assert base <= learnt, f"photo {image.conditions['photo'] + 1}: dice {sorted(base - learnt)} made wrong"


@pytest.mark.slow
@pytest.mark.skipif(not models_ready(), reason="models/ has no ONNX files yet")
def test_the_inks_looks_against_their_bodies_put_right_a_die_the_colour_heads_look_alone_does_not(tmp_path):
    # game 16 of the same sequences: lavender bodies in daylight. After the correct labels of
    # photos 1-4, the profile puts 5 wrong dice of photos 5-8 right and makes none wrong; with the
    # colour head's look of each ink alone (no looks against the bodies) it puts 4 right.
    game = 16
    write_games(tmp_path, game + 1, PHOTOS, SEED, look="far", first_game=game)
    photos = sorted((im for im in read_dataset(tmp_path) if im.conditions["game"] == game),
                    key=lambda im: im.conditions["photo"])
    models = load_models()
    profile = None
    for k, image in enumerate(photos[:4]):  # learnt from each photo's reading, as the server learns
        dice = [ConfirmedDie(Face(d.value, d.color), d.box) for d in image.dice if not d.ignored]
        work = load_work_image(image.path)
        seen = analyse(work, models, learnable=True).features
        profile = learn_photo(profile, f"photo {k + 1}", work, dice, models, seen=seen)
    assert profile.uses_inks
    fixed = broken = 0
    for image in photos[4:]:
        work = load_work_image(image.path)
        base = _right_dice(image, analyse(work, models))
        learnt = _right_dice(image, analyse(work, models, profile=profile))
        fixed += len(learnt - base)
        broken += len(base - learnt)
    assert fixed >= 5 and broken == 0
