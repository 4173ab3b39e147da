"""The table look of training.synth.games: one body, table, light and phone per game, a felt's
colour bounced onto the dice and taken in part for the light's by the phone; the other looks'
games drawn as before."""

import numpy as np

from training.synth.games import LOOKS, _bounce, game_setting, render_game_photo, tone_curve


def test_a_table_game_keeps_its_body_table_light_and_phone_in_every_photo():
    assert repr(game_setting(5201, 3, "table")) == repr(game_setting(5201, 3, "table"))  # seeded
    photos = [render_game_photo(5201, 3, photo, "table") for photo in range(3)]
    kept = ("body", "table", "light_kind", "bounce", "tone", "wb_correction", "table_balance", "jpeg_quality")
    for key in kept:
        assert len({str(p.conditions[key]) for p in photos}) == 1, key
    first = photos[0].conditions
    assert first["body"] in LOOKS["table"].bodies and first["table"] in LOOKS["table"].tables
    assert 72 <= first["jpeg_quality"] <= 92 and first["body_on_table"] == f"{first['body']} on {first['table']}"
    assert not np.array_equal(photos[0].image, photos[1].image)


def test_the_table_looks_draw_their_ranges_over_many_games():
    drawn = [game_setting(5201, game, "table") for game in range(40)]
    assert {s.table for s in drawn} == set(LOOKS["table"].tables)
    assert {s.look.body_name for s in drawn} == set(LOOKS["table"].bodies)
    assert all(2200 <= s.light.kelvin <= 7000 and 0.3 <= s.wb_correction <= 0.8 for s in drawn)
    assert all(0.1 <= s.bounce <= 0.35 and 0.15 <= s.table_balance <= 0.5 for s in drawn)
    warm = [game_setting(5401, game, "table-warm") for game in range(20)]
    assert all(s.light.kelvin <= 3500 and s.table in ("felt-green", "felt-blue") for s in warm)


def test_the_other_looks_draw_no_bounce_tone_or_table_balance():
    for look in ("games", "far"):
        setting = game_setting(7001, 8, look)
        assert (setting.bounce, setting.tone, setting.table_balance, setting.jpeg_quality) == (0.0, 0.0, 0.0, None)
        assert "bounce" not in render_game_photo(7001, 8, 0, look).conditions


def test_a_green_felts_bounce_tints_the_dice_green_and_keeps_their_brightness():
    canvas = np.full((4, 4, 3), 0.8, np.float32)
    dice = np.zeros((4, 4), bool)
    dice[:2] = True
    felt = np.tile(np.array([0.1, 0.5, 0.2], np.float32), (8, 8, 1))
    _bounce(canvas, dice, felt, 0.3)
    die, table = canvas[0, 0], canvas[3, 3]
    assert die[1] > die[0] and die[1] > die[2]
    assert np.isclose(die.mean(), 0.8, atol=0.01) and np.allclose(table, 0.8)


def test_the_phone_tone_curve_lifts_the_shadows_and_keeps_black_and_white():
    curve = tone_curve(0.6)
    assert curve[0] == 0 and curve[255] == 255
    assert curve[64] > 64 and np.all(np.diff(curve.astype(int)) >= 0)
    assert np.array_equal(tone_curve(0.0), np.arange(256))
