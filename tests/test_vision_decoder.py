"""The set-aware decoder: one-to-one assignment to physical dice, exact posteriors."""

import itertools
import math

import numpy as np
import pytest

from companion.dice import Color, Face, parse_face, standard_set
from companion.vision.decoder import (
    COLOR_CLASSES, VALUE_CLASSES, color_index, decode, die_posteriors, face_likelihoods, value_index,
)
from companion.vision.tuning import shipped_tuning

DICE = standard_set()
DECODING = shipped_tuning().pipeline.decoding  # the shipped levels (models/tuning.json)


def probs_for(tokens, p=0.9):
    """Reader outputs that favour each token's value and colour with probability p."""
    values, colors = [], []
    for tok in tokens:
        face = parse_face(tok)
        v = np.full(len(VALUE_CLASSES), (1 - p) / (len(VALUE_CLASSES) - 1))
        v[value_index(face.value)] = p
        c = np.full(len(COLOR_CLASSES), (1 - p) / (len(COLOR_CLASSES) - 1))
        c[color_index(face.color)] = p
        values.append(v)
        colors.append(c)
    return np.array(values), np.array(colors)


def test_three_blue_fives_cannot_all_be_right():
    # only H5 and H6 carry a blue 5: the decoder keeps two and reads the third differently
    v, c = probs_for(["5b", "5b", "5b"])
    out = decode(v, c, None, DECODING)
    faces = [d.face for d in out]
    assert faces.count(Face(5, Color.BLUE)) == 2
    odd = next(d for d in out if d.face != Face(5, Color.BLUE))
    assert odd.face.value == 5 or odd.face.color == Color.BLUE  # still the nearest possible face
    assert all(d.confidence < 0.9 for d in out)


def test_a_clear_consistent_roll_is_read_as_given_and_dice_named_where_the_set_pins_them():
    roll = ["1b", "2b", "3r", "4r", "5r", "6r", "7r", "8b", "9r", "10o"]
    v, c = probs_for(roll, p=0.95)
    out = decode(v, c, None, DECODING)
    assert [d.face.token for d in out] == roll
    # 1b is only on L1, 6r only on H2
    assert out[0].die == "L1"
    assert out[5].die == "H2"
    named = [d.die for d in out if d.die]
    assert len(named) == len(set(named))
    for d in out:
        if d.die:
            assert DICE.die(d.die).has_face(d.face)


def test_a_wild_shared_by_two_dice_names_no_die_until_the_other_is_pinned():
    v, c = probs_for(["Wr"], p=0.97)
    alone = decode(v, c, None, DECODING)[0]
    assert alone.face == Face(None, Color.RED)
    assert alone.die is None  # L1 and L4 both carry a red W
    assert alone.die_posterior == pytest.approx(0.5, abs=0.02)
    # 1g is only on L4, so the red W must be L1's
    v, c = probs_for(["Wr", "1g"], p=0.97)
    out = decode(v, c, None, DECODING)
    assert [d.die for d in out] == ["L1", "L4"]


def test_impossible_combination_of_one_die_is_resolved():
    # 1b and 2g are both faces of L1 and of no other die: one die cannot show two faces
    v, c = probs_for(["1b", "2g"], p=0.9)
    out = decode(v, c, None, DECODING)
    assert {d.face.token for d in out} != {"1b", "2g"}  # both sit on L1 alone: one must give way


def test_more_detections_than_dice_is_refused():
    v, c = probs_for(["5r"] * 11)
    with pytest.raises(ValueError):
        decode(v, c, None, DECODING)


def test_no_detections_decode_to_nothing():
    assert decode(np.zeros((0, 11)), np.zeros((0, 4)), None, DECODING) == []


def _brute_force(like):
    """All one-to-one assignments (die and face per detection): best and die posteriors."""
    n, n_dice, n_faces = like.shape
    best, best_score = None, -math.inf
    post = np.zeros((n, n_dice))
    total = 0.0
    for dice in itertools.permutations(range(n_dice), n):
        w = np.prod([like[i, d].sum() for i, d in enumerate(dice)])
        total += w
        for i, d in enumerate(dice):
            post[i, d] += w
        score = sum(math.log(like[i, d].max()) for i, d in enumerate(dice))
        if score > best_score:
            best_score, best = score, dice
    return best, best_score, post / total


@pytest.mark.parametrize("seed", range(6))
def test_decoder_matches_brute_force_on_random_readers(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    v = rng.dirichlet(np.full(11, 0.3), size=n)
    c = rng.dirichlet(np.full(4, 0.5), size=n)
    like = face_likelihoods(v, c, DICE)
    best, best_score, post = _brute_force(like)
    np.testing.assert_allclose(die_posteriors(like), post, rtol=1e-6, atol=1e-9)
    out = decode(v, c, DICE, DECODING)
    assigned = [d.assigned for d in out]
    assert len(set(assigned)) == len(assigned)  # one-to-one
    ids = [d.id for d in DICE.dice]
    score = 0.0
    for d in out:
        die = DICE.die(d.assigned)
        assert die.has_face(d.face)
        score += math.log(like[d.index, ids.index(die.id), list(die.faces).index(d.face)])
        assert 0.0 <= d.confidence <= 1.0
    assert score == pytest.approx(best_score, abs=1e-9)


def test_confidence_is_the_posterior_share_of_the_decoded_face():
    # a reader split 60/40 between 7 and 1 (blue): 7b exists (H1), 1b exists (L1)
    v = np.full((1, 11), 1e-6)
    v[0, value_index(7)] = 0.6
    v[0, value_index(1)] = 0.4
    c = np.full((1, 4), 1e-6)
    c[0, color_index(Color.BLUE)] = 1.0
    d = decode(v, c, None, DECODING)[0]
    assert d.face == Face(7, Color.BLUE)
    assert d.confidence == pytest.approx(0.6, abs=1e-3)
