"""companion.vision.ink_look: how a face's ink looks against its body, as a direction."""

import numpy as np

from companion.vision.ink_look import ink_looks


def _faces(inks: list[tuple[int, int, int]], body=(235, 228, 215), stroke: int = 14) -> tuple[np.ndarray, list]:
    """A photo of light-bodied faces side by side, each with a bar of its ink across its centre."""
    rgb = np.zeros((100, 100 * len(inks), 3), np.uint8)
    boxes = []
    for i, ink in enumerate(inks):
        x = 100 * i
        rgb[10:90, x + 10:x + 90] = body
        rgb[50 - stroke // 2:50 + stroke // 2, x + 30:x + 70] = ink
        boxes.append((x + 10.0, 10.0, x + 90.0, 90.0))
    return rgb, boxes


def test_an_ink_of_one_hue_but_lighter_looks_otherwise_and_its_coverage_drops_out():
    red, orange = (200, 40, 20), (245, 120, 60)
    rgb, boxes = _faces([red, orange, red])
    thin, thin_boxes = _faces([red, orange, red], stroke=6)
    looks = ink_looks(rgb, boxes, light=True)
    np.testing.assert_allclose(np.linalg.norm(looks, axis=1), 1.0, atol=1e-5)
    assert looks[0] @ looks[2] > 0.999  # the same ink on two dice
    assert looks[0] @ looks[1] < 0.99  # red and orange apart
    # a thinner numeral of the same ink: less ink in the centre, the same direction
    assert ink_looks(thin, thin_boxes, light=True)[0] @ looks[0] > 0.99


def test_a_face_too_small_to_measure_has_no_look():
    rgb, boxes = _faces([(200, 40, 20), (245, 120, 60)])
    looks = ink_looks(rgb, boxes + [(5.0, 5.0, 6.0, 6.0)], light=True)
    assert np.isfinite(looks[:2]).all() and np.isnan(looks[2]).all()
