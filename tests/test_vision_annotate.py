"""The annotated copy: every label stays whole inside the photo, wherever its die lies."""

import numpy as np
import pytest
from PIL import Image

from companion.dice import Color
from companion.vision.annotate import draw_reading
from companion.vision.reading import DieReading, Reading

SIZE = (300, 200)


def _label_extent(box) -> tuple[int, int, tuple[int, int]]:
    """Width, height and top-left of the white label drawn for one die on a black photo."""
    die = DieReading(10, Color.BLUE, 0.42, box, die="H5", uncertain=True)
    out = draw_reading(Image.new("RGB", SIZE), Reading(*SIZE, [die]))
    white = np.asarray(out).min(axis=2) == 255
    rows, cols = np.where(white.any(axis=1))[0], np.where(white.any(axis=0))[0]
    return cols.max() - cols.min() + 1, rows.max() - rows.min() + 1, (cols.min(), rows.min())


@pytest.mark.parametrize("box", [(260, 80, 300, 120), (10, 0, 50, 40), (260, 0, 300, 40)])
def test_a_label_at_the_edge_is_not_cut(box):
    width, height, _ = _label_extent((120, 100, 160, 140))
    assert _label_extent(box)[:2] == (width, height)


def test_a_label_sits_above_its_box_when_there_is_room():
    _, height, (x, y) = _label_extent((120, 100, 160, 140))
    assert x == 120 and y + height <= 100
