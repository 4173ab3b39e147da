"""The inks' sRGB-to-linear look-up gives what the curve itself gives, pixel for pixel."""

import numpy as np

from companion.vision import inks


def test_the_linear_light_table_is_the_curve_at_every_code_value_and_in_any_patch():
    codes = np.arange(256, dtype=np.uint8)
    assert np.array_equal(inks._linear(codes), inks._srgb_to_linear(codes))
    patch = np.random.default_rng(0).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    table, curve = inks._linear(patch), inks._srgb_to_linear(patch)
    assert table.dtype == curve.dtype == np.float32 and np.array_equal(table, curve)
    assert inks._linear(np.array([0, 255], np.uint8)).tolist() == [0.0, 1.0]
