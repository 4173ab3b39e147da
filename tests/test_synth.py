"""The synthetic photo generator: deterministic, labels that match what is drawn, resumable."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.dice import Color, Face, standard_set
from training.synth import fonts as synth_fonts
from training.synth.appearance import BODIES_TRAIN, BODIES_VAL, sample_appearance
from training.synth.dataset import PAGE_JPEG_QUALITY, PageCopy, done_indices, page_copy, render_indexed, write_dataset
from training.synth.scene import SceneOptions, render_scene
from training.synth.textures import TABLES_TRAIN, TABLES_VAL

SMALL = SceneOptions(size=(480, 360))


def test_same_seed_same_photo_and_labels():
    a = render_indexed(7, "train", 3, SMALL)
    b = render_indexed(7, "train", 3, SMALL)
    assert np.array_equal(a.image, b.image)
    assert a.dice == b.dice and a.conditions == b.conditions
    c = render_indexed(7, "train", 4, SMALL)
    assert not np.array_equal(a.image, c.image)


def _check_labels(photo) -> None:
    dice_set = standard_set()
    ids = [d["die"] for d in photo.dice]
    assert len(ids) == len(set(ids)), "a die appears twice"
    assert len(photo.dice) <= photo.conditions["n_dice"] <= 10
    for d in photo.dice:
        value = None if d["value"] == "W" else d["value"]
        assert dice_set.die(d["die"]).has_face(Face(value, Color(d["color"])))
        poly = np.array(d["polygon"], float)
        assert poly.shape == (4, 2)
        assert abs(cv2.contourArea(poly.astype(np.float32))) > 20, "a top face with no area"
        assert cv2.isContourConvex(np.round(poly * 16).astype(np.int32))
        outside = (poly < 0).any() or (poly[:, 0] > photo.width).any() or (poly[:, 1] > photo.height).any()
        assert d["truncated"] == bool(outside)
        x0, y0, x1, y1 = d["box"]
        assert 0 <= x0 < x1 <= photo.width and 0 <= y0 < y1 <= photo.height
        assert x0 == pytest.approx(max(0.0, poly[:, 0].min()), abs=0.02)
        assert y1 == pytest.approx(min(photo.height, poly[:, 1].max()), abs=0.02)
        assert 0 < d["visible"] <= 1 and (d["visible"] < 1) == d["truncated"] or d["visible"] > 0.99


@pytest.mark.parametrize("split", ["train", "val", "calib"])
def test_labels_are_consistent(split):
    n_truncated = 0
    for index in range(12):
        photo = render_indexed(11, split, index, SMALL)
        _check_labels(photo)
        n_truncated += sum(d["truncated"] for d in photo.dice)
    assert photo.conditions["split"] == split


def test_some_dice_are_cut_by_the_frame_and_labelled_so():
    photos = [render_indexed(3, "train", i, SceneOptions(size=(480, 360), out_of_frame=True, n_dice=10)) for i in range(4)]
    assert any(d["truncated"] for p in photos for d in p.dice)


def _ink_hue_class(photo, label) -> Color:
    """The colour whose printed hue is nearest to the saturated pixels in the face's middle."""
    poly = np.array(label["polygon"], np.float32)
    centre = poly.mean(axis=0)
    inner = centre + (poly - centre) * 0.7
    mask = np.zeros(photo.image.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.round(inner).astype(np.int32)], 1)
    hsv = cv2.cvtColor(photo.image, cv2.COLOR_RGB2HSV_FULL)[mask > 0].astype(float)
    ink = hsv[hsv[:, 1] > 110]  # saturation > 0.43: the white body has none, the inks plenty
    assert len(ink) >= 10, "no ink near the face centre"
    angle = ink[:, 0] / 256.0 * 2 * np.pi
    hue = np.degrees(np.arctan2(np.sin(angle).mean(), np.cos(angle).mean())) % 360
    bases = {Color.RED: 356.0, Color.ORANGE: 27.0, Color.GREEN: 140.0, Color.BLUE: 225.0}
    return min(bases, key=lambda c: min(abs(hue - bases[c]), 360 - abs(hue - bases[c])))


def test_top_face_shows_ink_of_the_labelled_colour():
    checked = 0
    for index in range(8):
        opts = SceneOptions(size=(640, 480), clean=True, n_dice=4, face_px=70.0, clutter=0, body="white")
        photo = render_scene(np.random.default_rng([99, index]), "train", opts)
        for label in photo.dice:
            if not label["truncated"]:
                assert _ink_hue_class(photo, label).value == label["color"], label
                checked += 1
    assert checked >= 20


def test_validation_holds_out_looks_that_training_never_sees():
    val_only_bodies = set(BODIES_VAL) - set(BODIES_TRAIN)
    val_only_fonts = {f.name for f in synth_fonts.fonts_for_split("val")}
    assert val_only_bodies and set(TABLES_VAL) - set(TABLES_TRAIN)
    for i in range(200):
        app = sample_appearance(np.random.default_rng([5, i]), "train")
        assert app.body_name not in val_only_bodies
        assert app.font.name not in val_only_fonts and app.wild_font.name not in val_only_fonts
    seen = [render_indexed(5, "train", i, SMALL).conditions["table"] for i in range(10)]
    assert not set(seen) & (set(TABLES_VAL) - set(TABLES_TRAIN))


def test_works_with_no_system_fonts(monkeypatch):
    """CI machines may have no fonts installed: OpenCV's and Pillow's own fonts must do."""
    monkeypatch.setattr(synth_fonts, "FONT_DIRS", ())
    for cached in (synth_fonts.available_fonts, synth_fonts.fonts_for_split, synth_fonts.families):
        cached.cache_clear()
    try:
        fonts = synth_fonts.available_fonts()
        assert fonts and all(f.kind in ("hershey", "pil") for f in fonts)
        for split in ("train", "val"):
            photo = render_indexed(2, split, 0, SMALL)
            _check_labels(photo)
            assert photo.conditions["font"] in {f.name for f in fonts}
    finally:
        for cached in (synth_fonts.available_fonts, synth_fonts.fonts_for_split, synth_fonts.families):
            cached.cache_clear()


def test_dataset_is_written_in_the_format_and_resumes(tmp_path):
    out = tmp_path / "ds"
    assert write_dataset(out, 3, seed=4, split="val", log_every=10**9) == 3
    lines = (out / "labels.jsonl").read_text().splitlines()
    assert len(lines) == 3
    for line in lines:
        record = json.loads(line)
        image = cv2.imread(str(out / record["image"]))
        assert image is not None and image.shape[:2] == (record["height"], record["width"])
        assert record["conditions"]["split"] == "val"
    # A run killed while writing a line leaves half a line: it is dropped and remade.
    with (out / "labels.jsonl").open("a") as f:
        f.write('{"image": "images/0000')
    assert write_dataset(out, 5, seed=4, split="val", log_every=10**9) == 2
    assert done_indices(out / "labels.jsonl") == {0, 1, 2, 3, 4}
    assert len((out / "labels.jsonl").read_text().splitlines()) == 5
    assert write_dataset(out, 5, seed=4, split="val", log_every=10**9) == 0


def test_stats_summarise_counts_what_the_labels_hold():
    from training.synth.stats import summarise

    photos = [render_indexed(8, "val", i, SMALL) for i in range(3)]
    records = [{"dice": p.dice, "conditions": p.conditions} for p in photos]
    lines = summarise(records)
    n_dice = sum(len(p.dice) for p in photos)
    assert lines[0].startswith(f"images: 3, labelled top faces: {n_dice} ")
    colours = lines[4].removeprefix("colours: ").split()
    assert sum(int(c.split(":")[1]) for c in colours) == n_dice


def test_an_outer_die_never_paints_over_an_inner_die_top():
    """Looking straight down at two touching dice off-centre, both are at the same depth; the
    outer die's inner side face lies behind the inner die's top and must not cover it."""
    from companion.dice import Die
    from training.synth.camera import look_down_camera
    from training.synth.dice_render import CubeLook, Light, PlacedDie, draw_die, repaint_tops
    from training.synth.scene import paint_order

    cam = look_down_camera(640, 480, 70.0, 12.0, 0.0, 0.0)
    die = standard_set().dice[0]
    no_ink = lambda i, size: (np.zeros((size, size), np.float32), np.zeros(3, np.float32))  # noqa: E731
    inner = PlacedDie(die, 0, (1, 2, 3, 4), (0, 0, 0, 0), (5.0, 0.0), 0.0)
    outer = PlacedDie(Die("X", "low", die.faces), 0, (1, 2, 3, 4), (0, 0, 0, 0), (6.0, 0.0), 0.0)
    looks = {"L1": CubeLook((0.1, 0.2, 0.9), 0.1, 0.0, no_ink), "X": CubeLook((0.9, 0.1, 0.1), 0.1, 0.0, no_ink)}
    light = Light(np.array([0.0, 0.0, 1.0]), 0.5, 6500.0, 0.1, 0.5)
    assert [d.die.id for d in paint_order(cam, [inner, outer])] == ["X", "L1"]
    assert [d.die.id for d in paint_order(cam, [outer, inner])] == ["X", "L1"]
    # Painted in the wrong order, the repainted tops still win.
    for order, repaint in (([outer, inner], False), ([inner, outer], True)):
        canvas = np.zeros((480, 640, 3), np.float32)
        tops = [draw_die(canvas, cam, placed, looks[placed.die.id], light, 0.0, np.random.default_rng(0)) for placed in order]
        if repaint:
            repaint_tops(canvas, tops)
        top = cam.project(inner.top_corners())
        centre = top.mean(axis=0)
        mask = np.zeros((480, 640), np.uint8)
        cv2.fillPoly(mask, [np.round(centre + (top - centre) * 0.85).astype(np.int32)], 1)
        pixels = canvas[mask > 0]
        assert len(pixels) > 100 and (pixels[:, 2] > pixels[:, 0]).all(), "the outer die's red side covers the top"


def test_polygon_starts_at_the_numerals_top_left():
    """Warped upright with its polygon (TL, TR, BR, BL), a top face matches its numeral's own
    ink mask better than any quarter turn of it does: the order tells 6 from 9."""
    from training.synth.dice_render import face_ink_mask

    fonts = {f.name: f for f in synth_fonts.available_fonts()}
    square = np.float32([[0, 0], [64, 0], [64, 64], [0, 64]])
    checked = 0
    for index in range(10):
        opts = SceneOptions(size=(640, 480), clean=True, n_dice=4, face_px=110.0, clutter=0, body="white")
        photo = render_scene(np.random.default_rng([55, index]), "train", opts)
        c = photo.conditions
        saturation = cv2.cvtColor(photo.image, cv2.COLOR_RGB2HSV)[:, :, 1].astype(np.float32) / 255
        for d in photo.dice:
            text = str(d["value"])
            if d["truncated"] or text == "8":  # 8 looks the same upside down in many fonts
                continue
            font = fonts[c["wild_font"] if text == "W" else c["font"]]
            expected = cv2.GaussianBlur(face_ink_mask(font, text, c["bold"], c["marker_6_9"], c["wild_style"], 54, 64), (0, 0), 2)
            matrix = cv2.getPerspectiveTransform(np.float32(d["polygon"]), square)
            seen = cv2.GaussianBlur(cv2.warpPerspective(saturation, matrix, (64, 64)), (0, 0), 2)
            scores = [np.corrcoef(np.rot90(seen, k).ravel(), expected.ravel())[0, 1] for k in range(4)]
            assert int(np.argmax(scores)) == 0, (text, c["font"], scores)
            checked += 1
    assert checked >= 12


def test_stress_options_make_warm_or_cold_light_dark_bodies_and_strong_tilts_and_leave_the_rest():
    plain = render_indexed(2001, "calib", 5, SMALL)
    for index in range(4):
        warm = render_indexed(2001, "calib", index, SceneOptions(size=(480, 360), light="warm"))
        assert 2200 <= warm.conditions["light"]["kelvin"] <= 3000 and warm.conditions["light"]["kind"] == "warm"
        # a weak white balance leaves most of the lamp's colour: blue gained little over red
        gains = warm.conditions["wb_gain"]
        assert gains[2] / gains[0] < 1.9
        cold = render_indexed(2001, "calib", index, SceneOptions(size=(480, 360), light="cold"))
        assert 7500 <= cold.conditions["light"]["kelvin"] <= 10000
        dark = render_indexed(2001, "calib", index, SceneOptions(size=(480, 360), dark_body=True))
        assert np.mean(BODIES_TRAIN[dark.conditions["body"]][0]) < 0.35
        tilted = render_indexed(2001, "calib", index, SceneOptions(size=(480, 360), tilt_range=(27.0, 40.0)))
        assert 27.0 <= tilted.conditions["tilt_deg"] <= 40.0
    assert "kind" not in plain.conditions["light"]  # without the options, the photo as before
    assert np.array_equal(plain.image, render_indexed(2001, "calib", 5, SMALL).image)


def test_every_die_carries_its_cube_outline_around_its_top_face():
    photo = render_indexed(2001, "calib", 3, SceneOptions(size=(480, 360), tilt_range=(30.0, 40.0)))
    for d in photo.dice:
        cube = np.asarray(d["cube"], np.float32)
        top = np.asarray(d["polygon"], np.float32)
        assert all(cv2.pointPolygonTest(cube, (float(x), float(y)), True) >= -0.5 for x, y in top)
        assert cv2.contourArea(cube) > 1.2 * cv2.contourArea(top)  # the side faces show at this tilt


def test_page_copy_is_the_photo_scaled_as_the_page_uploads_it_with_its_labels():
    photo = render_indexed(8701, "calib", 0, SceneOptions(size=(960, 720), n_dice=6))
    data, small = page_copy(photo, PageCopy(long_side=480, quality=90))
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape[:2] == (360, 480) and (small.width, small.height) == (480, 360)
    assert small.conditions["page"] == {"long_side": 480, "jpeg_quality": 90, "camera_size": [960, 720]}
    # the camera's sizes in pixels are the scaled photo's too
    assert small.conditions["focal_px"] == pytest.approx(photo.conditions["focal_px"] / 2, abs=0.1)
    assert small.conditions["face_px"] == pytest.approx(photo.conditions["face_px"] / 2, abs=0.1)
    for big, d in zip(photo.dice, small.dice):
        assert np.allclose(np.asarray(d["polygon"]) * 2, big["polygon"], atol=0.02)
        assert np.allclose(np.asarray(d["cube"]) * 2, big["cube"], atol=0.2)
        assert np.allclose(np.asarray(d["box"]) * 2, big["box"], atol=0.02)
        assert d["value"] == big["value"] and d["color"] == big["color"]
    # the scaled photo shows what the full one does where its labels say (the ink of the first die)
    x0, y0, x1, y1 = (round(v) for v in small.dice[0]["box"])
    X0, Y0, X1, Y1 = (round(v) for v in photo.dice[0]["box"])
    assert abs(image[y0:y1, x0:x1].mean() - cv2.cvtColor(photo.image, cv2.COLOR_RGB2BGR)[Y0:Y1, X0:X1].mean()) < 12
    # a photo no larger than the long side goes as it was
    _, same = page_copy(photo, PageCopy(long_side=960, quality=90))
    assert same is photo and "page" not in same.conditions


def test_the_page_copy_options_refuse_sizes_and_qualities_that_make_no_sense(tmp_path, capsys):
    from training.synth.__main__ import main

    for args, said in ((["--long-side", "10"], "--long-side wants"), (["--long-side", "1920", "--jpeg-quality", "0"], "--jpeg-quality wants"),
                       (["--jpeg-quality", "80"], "give --long-side too"), (["--phone", "--phone-far"], "give one")):
        with pytest.raises(SystemExit):
            main(["--out", str(tmp_path / "ds"), "--count", "0", *args])
        assert said in capsys.readouterr().err


def test_the_page_copys_default_quality_is_the_pages():
    said = (Path(__file__).resolve().parents[1] / "web/static/js/photo.js").read_text()
    assert f"JPEG_QUALITY = {PAGE_JPEG_QUALITY / 100}" in said
