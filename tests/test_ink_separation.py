"""training.ink_separation: a photo's inks ordered apart by hue, by darkness, or by either."""

import numpy as np

from companion.dice import Color
from companion.vision.inks import body_chroma_of, ink_offset
from training.ink_separation import hue_and_darkness, separation

RED, ORANGE = Color.RED, Color.ORANGE


def _face(ink: tuple[int, int, int], body: tuple[int, int, int] = (235, 235, 235), stroke: int = 8) -> np.ndarray:
    """A face centre: a body with a numeral-like bar of ink `stroke` pixels wide."""
    patch = np.full((32, 32, 3), body, np.uint8)
    patch[:, 12:12 + stroke] = ink
    return patch


def test_an_ink_darker_than_its_body_has_negative_darkness_and_the_coverage_divides_out():
    body = body_chroma_of([_face((190, 60, 50))])
    thin = hue_and_darkness(ink_offset(_face((190, 60, 50), stroke=4), body))
    bold = hue_and_darkness(ink_offset(_face((190, 60, 50), stroke=10), body))
    assert thin[1] < 0 and bold[1] < 0
    assert abs(thin[0] - bold[0]) < 2.0 and abs(thin[1] - bold[1]) < 2.0


def test_a_red_and_an_orange_of_one_hue_are_told_apart_by_darkness_alone():
    # the orange ink is the red's colour, lighter: one hue, another darkness
    red, orange = (150, 40, 20), (230, 120, 100)
    faces = [_face(red), _face(red, stroke=6), _face(orange), _face(orange, stroke=6)]
    body = body_chroma_of(faces)
    inks = [(c, *hue_and_darkness(ink_offset(f, body))) for c, f in zip((RED, RED, ORANGE, ORANGE), faces)]
    s = separation([inks], (RED, ORANGE))
    assert (s.photos, s.by_darkness, s.by_either) == (1, 1, 1)
    assert s.darkness_gap > 5.0


def test_photos_without_both_inks_of_the_pair_are_not_counted_and_hue_orders_usual_inks():
    body = body_chroma_of([_face((200, 40, 40))])
    red = (RED, *hue_and_darkness(ink_offset(_face((200, 40, 40)), body)))
    orange = (ORANGE, *hue_and_darkness(ink_offset(_face((240, 150, 30)), body)))
    s = separation([[red, red], [red, orange]], (RED, ORANGE))
    assert s.photos == 1 and s.by_hue == 1 and s.hue_gap > 20.0
