"""The Blender training split's draws that need no Blender (training/blender/look.py): the dice's
look apart from the validation split's, the lights, and what the phone does to the light."""

import colorsys
from dataclasses import replace

import numpy as np
import pytest

from companion.dice import Color
from training.blender.look import (
    BODIES, INK_HUE_SPREAD, JPEG_QUALITY, KEY_KELVIN, Phone, estimated_light, phone_finish, sample_lights,
    sample_look, sample_phone, train_fonts,
)
from training.synth.appearance import ink_bases
from training.synth.effects import kelvin_rgb
from training.synth.fonts import FontSpec


@pytest.fixture(scope="module")
def fonts() -> tuple[FontSpec, ...]:
    return train_fonts()


def _hue_deg(rgb) -> float:
    return colorsys.rgb_to_hsv(*rgb)[0] * 360.0


def _hue_gap(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def test_looks_draw_every_body_and_wide_inks_but_no_validation_font(fonts):
    looks = [sample_look(np.random.default_rng([3, i]), fonts) for i in range(400)]
    assert {look.body_name for look in looks} == set(BODIES)
    assert not any(look.font.is_validation_only() or look.wild_font.is_validation_only() for look in looks)
    bases = {c: _hue_deg(rgb) for c, rgb in ink_bases().items()}
    widest = {c: 0.0 for c in Color}
    for look in looks:
        for colour, rgb in look.inks.items():
            off = _hue_gap(_hue_deg(rgb), bases[colour])
            assert off <= INK_HUE_SPREAD[colour] + 0.5
            widest[colour] = max(widest[colour], off)
        assert _hue_gap(_hue_deg(look.inks[Color.RED]), _hue_deg(look.inks[Color.ORANGE])) >= 10.5
    # wider than the generator's training inks (+-7 degrees) for every ink
    assert all(widest[c] > 8.0 for c in Color), widest


def test_lights_run_warm_to_cool_and_mix_contrasting_colours():
    plans = [sample_lights(np.random.default_rng([5, i])) for i in range(400)]
    keys = np.array([p.key_kelvin for p in plans])
    assert KEY_KELVIN[0] <= keys.min() < 2500 and 6700 < keys.max() <= KEY_KELVIN[1]
    mixed = [p for p in plans if p.mixed]
    assert 0.3 < len(mixed) / len(plans) < 0.6
    assert all((p.key_kelvin < 4000) != (p.fill_kelvin < 4000) for p in mixed)


def test_phone_draws_partial_white_balance_and_its_jpeg_range():
    phones = [sample_phone(np.random.default_rng([9, i]), 40.0) for i in range(300)]
    assert all(0.3 <= p.wb_correction <= 0.85 for p in phones)
    qualities = {p.jpeg_quality for p in phones}
    assert min(qualities) == JPEG_QUALITY[0] and max(qualities) == JPEG_QUALITY[1]
    assert 0.1 < np.mean([p.motion_px > 0 for p in phones]) < 0.3


def _grey_card_under(kelvin: float, correction: float) -> np.ndarray:
    """A mid-grey card lit by one light, through a phone that corrects `correction` of its cast."""
    plan = replace(sample_lights(np.random.default_rng(0)), key_kelvin=kelvin, fill_kelvin=None)
    phone = Phone(correction, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 90)
    light = kelvin_rgb(kelvin) / kelvin_rgb(kelvin).max()
    linear = np.ones((8, 8, 3), np.float32) * 0.18 * light
    out = phone_finish(linear, plan, phone, (0.5, 0.5, 0.5), np.random.default_rng(0))
    return out.reshape(-1, 3).mean(axis=0)


def test_a_full_white_balance_makes_grey_grey_and_a_partial_one_leaves_part_of_the_cast():
    full, half, none = (_grey_card_under(2700, c) for c in (1.0, 0.5, 0.0))
    assert np.ptp(full) < 3  # neutral, all three channels within 3 codes
    assert none[0] - none[2] > half[0] - half[2] > 20  # red over blue: the lamp's warmth, partly kept
    cool = _grey_card_under(7000, 0.5)
    assert cool[2] > cool[0]


def test_the_white_balance_leans_to_the_second_light_and_the_tables_colour():
    plan = replace(sample_lights(np.random.default_rng(1)), key_kelvin=2700.0, fill_kelvin=6500.0, fill_share=0.5)
    phone = Phone(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 90)
    key_only = estimated_light(plan, phone, (0.5, 0.5, 0.5))
    leaning = estimated_light(plan, replace(phone, mixed_weight=0.5), (0.5, 0.5, 0.5))
    assert np.allclose(key_only, kelvin_rgb(2700.0) / kelvin_rgb(2700.0).mean(), atol=1e-6)
    assert leaning[2] / leaning[0] > key_only[2] / key_only[0]
    green_felt = estimated_light(plan, replace(phone, table_balance=0.4), (0.05, 0.3, 0.08))
    assert green_felt[1] / green_felt[0] > key_only[1] / key_only[0]
