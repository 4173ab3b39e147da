"""What the pipeline knows about the scene: one die per cube, one light for all dice, and a
flag on what the set cannot produce. Real ONNX models, real pipeline, generated or sample photos."""

import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from companion.dice import Color, DiceSet, parse_face, standard_set
from companion.vision import ReadSettings, read_image
from companion.vision.cubes import CubeModel, decide, same_die, second_boxes, tied_boxes
from companion.vision.decoder import COLOR_CLASSES, VALUE_CLASSES, color_index, value_index
from companion.vision.detector import Detection
from companion.vision.image_io import load_work_image
from companion.vision.inks import dark_bodies, light_cast, light_reference, measure_inks
from companion.vision.joint_colour import joint_colours
from companion.vision.models import load_models, models_present
from companion.vision.pipeline import analyse
from companion.vision.tuning import shipped_tuning
from companion.vision.white_balance import BALANCE_CAST, BALANCE_SHARE, TRAINING_BODY, balance, light_correction
from training.evaluate import IOU_MIN, box_iou, count_read_twice
from training.synth.dataset import encode_jpeg, render_indexed
from training.synth.scene import SceneOptions

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"
CUBES = shipped_tuning().cubes
DECODING = shipped_tuning().pipeline.decoding
needs_models = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")


def _tokens(reading) -> list[str]:
    return sorted(d.face.token for d in reading.dice)


def _read_twice(reading, photo) -> int:
    """As training.evaluate counts it: readings on no top face whose centre lies in the
    outline of a cube whose top face is read."""
    tops = [d["box"] for d in photo.dice]
    matched = {j for r in reading.dice for j, t in enumerate(tops) if box_iou(r.box, t) >= IOU_MIN}
    extras = [r.box for r in reading.dice if all(box_iou(r.box, t) < IOU_MIN for t in tops)]
    return count_read_twice(extras, [np.asarray(photo.dice[j]["cube"]) for j in matched])


@needs_models
def test_a_die_read_twice_is_read_once():
    # 39 degrees off vertical (calib split, seed 2001, photo 141 of data/calib): a black die's
    # side face is boxed next to its top face, and without the cube model the photo reads nine
    # dice for eight (a second 5b) and the 10o as 9o
    photo = render_indexed(2001, "calib", 141, SceneOptions())
    data = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    truth = sorted(f"{d['value']}{d['color'][0]}" for d in photo.dice)
    models = load_models()
    assert _tokens(read_image(data, models)) == truth
    # the boxes of the first search (the photo's second search in its own pixels boxes no side face)
    first = ReadSettings(zoom_within_work=False)
    once = read_image(data, models, first)
    assert _tokens(once) == truth  # the side face is dropped: the die is read once
    kept = read_image(data, models, dataclasses.replace(first, one_per_cube=False))  # flagged, not dropped
    assert len(kept.dice) == len(truth) + 1  # kept, the side face is a die too many...
    assert sum(d.uncertain for d in kept.dice) > sum(d.uncertain for d in once.dice)  # ...flagged


@needs_models
def test_a_side_face_the_model_is_less_sure_of_is_dropped_when_it_shows_a_face_of_the_same_die():
    # 26 degrees off vertical (calib split, seed 2001, photo 106 of data/calib): the L4 die's
    # side face, whose Wr the reader sees, is boxed beside its 3b top face; the cube model
    # gives it 0.4
    photo = render_indexed(2001, "calib", 106, SceneOptions())
    data = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    truth = sorted(f"{d['value']}{d['color'][0]}" for d in photo.dice if not d["truncated"])  # two are cut by the frame
    models = load_models()
    kept = read_image(data, models, ReadSettings(one_per_cube=False))
    assert _read_twice(kept, photo) == 1 and len(kept.dice) == len(truth) + 1
    once = read_image(data, models)
    assert _read_twice(once, photo) == 0 and _tokens(once) == truth


@needs_models
def test_a_top_face_beside_another_die_is_kept_when_their_faces_share_no_die():
    # under a warm lamp (calib split, seed 2301, photo 61 of a --light warm set, 38 degrees
    # off vertical): the H4 die's side face (10b) is boxed beside its 9r top face, and the
    # 5b top face of H5, half a box from the Wg of a low die, looks to the cube model as
    # much like a side face (0.49); no die carries both 5b and Wg, so it stays
    photo = render_indexed(2301, "calib", 61, SceneOptions(light="warm"))
    data = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    models = load_models()
    kept = read_image(data, models, ReadSettings(one_per_cube=False))
    assert _read_twice(kept, photo) == 1 and "10b" in _tokens(kept)
    once = read_image(data, models)
    assert _read_twice(once, photo) == 0 and "10b" not in _tokens(once)
    assert {"5b", "9r", "Wg"} <= set(_tokens(once))


@needs_models
def test_a_die_where_a_side_face_would_be_is_read_when_its_face_is_one_of_the_other_dies():
    # 28 degrees off vertical (calib split, seed 2401, photo 77, camera tilted 27-40 degrees): the
    # 10o die lies next to another die, where a side face of that die's cube would show, and one
    # die of the set can carry both readings; both are dice. A cube model that drops a second box
    # from a lower likelihood of being a side face (0.2 instead of cubes.json's level) drops it.
    photo = render_indexed(2401, "calib", 77, SceneOptions(tilt_range=(27.0, 40.0)))
    data = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    models = load_models()
    once = read_image(data, models)
    assert "10o" in _tokens(once) and len(once.dice) == len(photo.dice)
    assert models.cubes is not None and models.cubes.drop > 0.2
    looser = dataclasses.replace(models, cubes=dataclasses.replace(models.cubes, drop=0.2))
    assert "10o" not in _tokens(read_image(data, looser))


def test_two_faces_share_a_die_only_when_one_die_of_the_set_carries_both():
    dice = standard_set()

    def probs(*tokens: str) -> tuple[np.ndarray, np.ndarray]:
        faces = [parse_face(t) for t in tokens]
        value = np.full((len(faces), len(VALUE_CLASSES)), 1e-6)
        colour = np.full((len(faces), len(COLOR_CLASSES)), 1e-6)
        for k, f in enumerate(faces):
            value[k, value_index(f.value)] = colour[k, color_index(f.color)] = 1.0
        return value, colour

    together = same_die(*probs("9r", "10b", "5b", "Wg", "10g"), dice)
    assert together[0, 1] > 0.99  # H4 carries 9r and 10b
    assert together[2, 3] < 0.01  # 5b is a high die's face, Wg a low die's
    assert together[4, 4] < 0.01  # a die's side face is another face than its top face
    assert np.allclose(together, together.T)


@needs_models
def test_a_side_face_beside_its_top_face_is_dropped_or_flagged_where_kept():
    # 35 degrees off vertical (calib split, seed 2971, photo 38 of a --tilt 27 40 set): the
    # right side face of the 4r die, showing a green W, is boxed as a seventh top face
    photo = render_indexed(2971, "calib", 38, SceneOptions(tilt_range=(27.0, 40.0)))
    data = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    truth = sorted(f"{d['value']}{d['color'][0]}" for d in photo.dice)
    models = load_models()
    once = read_image(data, models)
    assert _tokens(once) == truth
    kept = read_image(data, models, ReadSettings(one_per_cube=False))
    second = [d for d in kept.dice if d.face.token not in truth]
    assert len(kept.dice) == len(truth) + 1 and len(second) == 1 and second[0].uncertain  # kept: flagged


def test_without_a_cube_model_the_distance_rule_flags_and_drops_nothing(tmp_path):
    top = Detection((100.0, 100.0, 160.0, 170.0), 0.9)
    side = Detection((150.0, 120.0, 205.0, 172.0), 0.5)
    rgb = np.zeros((300, 300, 3), np.uint8)
    plain = decide(rgb, [top, side], [1.0, 0.8], None, CUBES)
    assert plain.check.tolist() == [False, True] and not plain.drop.any()
    stale = tmp_path / "cubes.json"
    stale.write_text('{"features": ["sure"], "mean": [0], "scale": [1], "weights": [1], "bias": 0, '
                     '"drop": 0.8, "flag": 0.2}')
    with pytest.raises(ValueError, match="other box features"):
        CubeModel.load(stale)
    assert CubeModel.load(tmp_path / "none.json") is None


def test_a_weak_box_half_a_face_from_a_sure_one_is_a_second_box_on_that_cube():
    top = Detection((100.0, 100.0, 160.0, 170.0), 0.9)
    side = Detection((150.0, 120.0, 205.0, 172.0), 0.5)  # centre 46 px away: 0.7 face sizes
    apart = Detection((100.0, 175.0, 160.0, 245.0), 0.5)  # a face's height below: another die
    assert second_boxes([top, side, apart], [1.0, 0.8, 0.8], CUBES) == [1]
    assert second_boxes([top, Detection(side.box, 0.9)], [1.0, 1.0], CUBES) == []  # a sure top face is never dropped
    # two unsure boxes as sure as each other (within the tuning's sure_tie) whose readings can be one die's two
    # faces: either may be the top face, both are flagged
    one_die = np.array([[0.0, 0.9], [0.9, 0.0]])
    tied = Detection(top.box, 0.5 + CUBES.sure_tie / 2)
    assert tied_boxes([tied, side], [1.0, 1.0], one_die, CUBES).tolist() == [True, True]
    assert not tied_boxes([tied, side], [1.0, 1.0], one_die * 0, CUBES).any()  # two dice's faces
    assert not tied_boxes([Detection(top.box, 0.5 + 2 * CUBES.sure_tie), side], [1.0, 1.0], one_die, CUBES).any()
    assert not tied_boxes([tied, apart], [1.0, 1.0], one_die, CUBES).any()  # another die, a face's height away


RED_INK, ORANGE_INK = (0.58, 0.02, 0.03), (0.87, 0.20, 0.01)  # linear RGB
IVORY, NAVY = (0.85, 0.80, 0.66), (0.05, 0.05, 0.06)  # a light body and a dark one
LAMP = (1.0, 0.62, 0.32)  # about 2500 K, nothing corrected


def _faces(inks, body=IVORY, light=(1.0, 1.0, 1.0)) -> tuple[np.ndarray, list[tuple[float, float, float, float]]]:
    """One photo of 60-px faces side by side, one per ink (each a little lighter or darker, as
    the dice of one photo are shaded), under one light; sRGB uint8 and the faces' boxes."""
    faces = [_face_image(body, ink, light, shade=1.0 - 0.04 * (k % 3)) for k, ink in enumerate(inks)]
    return np.hstack(faces), [(60.0 * k, 0.0, 60.0 * k + 60.0, 60.0) for k in range(len(inks))]


def _reader(says: list[int], sure: float) -> np.ndarray:
    probs = np.full((len(says), 4), (1.0 - sure) / 3)
    probs[np.arange(len(says)), says] = sure
    return probs


def test_the_photo_tells_red_from_orange_when_the_reader_alone_does_not():
    # under a warm lamp five red dice and three orange: the reader, unsure, calls three of the
    # reds orange; measured against the photo's own body, their inks look like its other reds
    red, orange = color_index(Color.RED), color_index(Color.ORANGE)
    rgb, boxes = _faces([RED_INK] * 5 + [ORANGE_INK] * 3, light=LAMP)
    inks = measure_inks(rgb, boxes)
    probs = _reader([orange, orange, orange, red, red, orange, orange, orange], 0.7)
    joint = joint_colours(probs, inks)
    assert [int(p.argmax()) for p in joint.probs] == [red] * 5 + [orange] * 3
    assert joint.moved.tolist() == [True] * 3 + [False] * 5
    # one ink only (every die red, read orange by three): the photo says they all look alike
    alike = joint_colours(_reader([orange] * 3 + [red] * 5, 0.7), measure_inks(*_faces([RED_INK] * 8, light=LAMP)))
    assert [int(p.argmax()) for p in alike.probs] == [red] * 8
    # the same inks read right: nothing moves
    right = joint_colours(_reader([red] * 5 + [orange] * 3, 0.7), inks)
    assert not right.moved.any()
    # a reader sure beyond what a few dice's inks can say keeps its colours (and the pipeline
    # flags nothing it did not move)
    sure = joint_colours(_reader([orange, red, red, red, red, orange, orange, orange], 0.9999), inks)
    assert not sure.moved.any()


@needs_models
def test_a_photo_whose_kept_dice_show_a_warm_light_is_read_under_that_light():
    # photo 128 of the warm calibration set (data/stress_warm_calib/images/000128.jpg; calib split,
    # seed 2301, --light warm): told by every box read, its light is within the training look's and
    # the crops are left as they are; told by the dice kept it is beyond (cast 2.19), so the joint
    # colours judge it so, and the reader, from crops never corrected, called its blue 7 green
    photo = render_indexed(2301, "calib", 128, SceneOptions(light="warm"))
    reading = read_image(encode_jpeg(photo.image, photo.conditions["jpeg_quality"]), load_models())
    hits = [r.face.token for r in reading.dice for die in photo.dice
            if die["die"] == "H1" and box_iou(r.box, die["box"]) >= IOU_MIN]
    assert [die["value"] for die in photo.dice if die["die"] == "H1"] == [7] and hits == ["7b"]


@needs_models
def test_a_reading_the_set_cannot_produce_is_flagged():
    # the single die shows 5o, which only H3 carries: read against a set without H3, the
    # decoder must call it something else, and the player has to be told
    full = standard_set()
    without_h3 = DiceSet("the standard set without H3", tuple(d for d in full.dice if d.id != "H3"))
    work = load_work_image(SAMPLES / "s05_single.jpg")
    models = load_models()
    (plain,) = analyse(work, models, ReadSettings(), full).dice
    assert plain.face.token == "5o" and not plain.uncertain
    (forced,) = analyse(work, models, ReadSettings(), without_h3).dice
    assert forced.face.token != "5o" and forced.uncertain
    # with the reader's own colour head (light_colour.py's heads off) too
    (reader_forced,) = analyse(work, models, ReadSettings(light_colour_head=False), without_h3).dice
    assert reader_forced.face.token != "5o" and reader_forced.uncertain


def _warm_photo(index: int):
    """A 2200-3000 K lamp, weak white balance (calib split, seed 2301, photo `index` of a
    --light warm set): the photo's JPEG and its true faces."""
    photo = render_indexed(2301, "calib", index, SceneOptions(light="warm"))
    return encode_jpeg(photo.image, photo.conditions["jpeg_quality"]), sorted(f"{d['value']}{d['color'][0]}" for d in photo.dice)


@needs_models
def test_under_a_warm_lamp_the_photos_own_inks_tell_its_reds_from_its_oranges():
    # yellow dice under a 2210 K lamp: judged alone, the orange 5 is read red. Measured as the
    # mean of each face's centre against its body, its ink (36 degrees) is one with the photo's
    # orange 4 and 6 (39) and far from its reds (310-327)
    # (with the reader's own colour head: the colour head for corrected crops, light_colour.py,
    # reads this photo's 4o and a Wr wrong when judged alone, and right with the inks)
    data, truth = _warm_photo(47)
    models = load_models()
    alone = read_image(data, models, ReadSettings(joint_colour=False, light_colour_head=False))
    assert _tokens(alone) == sorted({"5o": "5r"}.get(t, t) for t in truth)
    joint = read_image(data, models, ReadSettings(light_colour_head=False))  # the photo's colours decided together
    assert _tokens(joint) == truth
    assert next(d for d in joint.dice if d.face.token == "5o").uncertain  # moved: flagged
    assert _tokens(read_image(data, models)) == truth  # the shipped settings, the head's colours with the inks


@needs_models
def test_under_a_warm_lamp_an_ink_that_disputes_a_sure_colour_is_flagged():
    # navy dice, no white reference: alone, the reader's own colour head calls the blue 10 and 8
    # green, the 10 at 0.999. The photo's inks fix the unsure 8; the 10's ink
    # looks like the photo's blues, but the reader is too sure to be moved: it is flagged instead
    # (a colour head for dark bodies, light_colour.py, where the models have one, could read the
    # 8 blue already: left out here). The faint face the upright view alone finds on the 10's side is
    # left out too: dropped as that cube's side face, it flags the 10 it is dropped for (cubes.py)
    data, truth = _warm_photo(11)
    models = load_models()
    alone = read_image(data, models, ReadSettings(joint_colour=False, light_colour_head=False,
                                                  faint_face_threshold=None))
    assert "10g" in _tokens(alone) and "8g" in _tokens(alone)
    joint = read_image(data, models, ReadSettings(light_colour_head=False))
    assert "8b" in _tokens(joint) and "8g" not in _tokens(joint)
    assert next(d for d in joint.dice if d.face.token == "10g").uncertain
    shipped = read_image(data, models)  # as shipped: the 8 blue, the sure 10 still flagged
    assert "8b" in _tokens(shipped) and next(d for d in shipped.dice if d.face.token == "10g").uncertain


@needs_models
@pytest.mark.parametrize("index, swapped", [(52, {"10r": "10o", "7r": "7o"}), (93, {"9b": "9g"})])
def test_under_a_warm_lamp_the_crops_seen_in_the_training_light_read_the_right_inks(index, swapped):
    # a 2200-3000 K lamp, weak white balance, ivory dice (calib split, seed 2301, photos 52 and
    # 93 of a --light warm set): read as they are, red dice look orange (a blue looks green)
    photo = render_indexed(2301, "calib", index, SceneOptions(light="warm"))
    data = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    truth = sorted(f"{d['value']}{d['color'][0]}" for d in photo.dice)
    models = load_models()
    raw = _tokens(read_image(data, models, ReadSettings(balance_light=False, joint_colour=False)))
    assert raw == sorted(swapped.get(t, t) for t in truth)
    corrected = read_image(data, models, ReadSettings(joint_colour=False))
    assert _tokens(corrected) == truth
    # the photo's colours decided together (the shipped reading) keep the corrected crops' right inks
    assert _tokens(read_image(data, models)) == truth


def _face_image(body, ink, light=(1.0, 1.0, 1.0), shade: float = 1.0) -> np.ndarray:
    """A 60-px die face (a body with a bar of ink across its middle) under a light, sRGB uint8."""
    lin = np.ones((60, 60, 3)) * np.asarray(body)
    lin[26:34, 12:48] = ink
    return _srgb(np.clip(lin * np.asarray(light) * shade, 0, 1))


def _srgb(lin: np.ndarray) -> np.ndarray:
    """Linear RGB in 0..1 coded as sRGB uint8."""
    return (255 * np.where(lin <= 0.0031308, lin * 12.92, 1.055 * lin ** (1 / 2.4) - 0.055) + 0.5).astype(np.uint8)


def test_an_ink_is_measured_against_its_body_and_the_light_against_the_bodies():
    box = (0.0, 0.0, 60.0, 60.0)
    for light in ((1.0, 1.0, 1.0), LAMP):
        rgb, boxes = _faces([RED_INK, ORANGE_INK], light=light)
        r, o = measure_inks(rgb, boxes)
        assert r.referenced and o.referenced and r.hue + 10 < o.hue  # red stays below orange
        # against its body the light divides out: the same ink measures alike under either light
        assert abs(r.hue - measure_inks(*_faces([RED_INK, ORANGE_INK]))[0].hue) < 3
    plain = light_cast(_face_image(IVORY, RED_INK), [box])
    warm = light_cast(_face_image(IVORY, RED_INK, LAMP), [box])
    assert plain is not None and warm is not None and plain < BALANCE_CAST < warm
    assert light_cast(_face_image(NAVY, RED_INK, LAMP), [box]) is None  # a dark body: no reference


def test_dark_bodies_are_told_on_the_face_not_on_a_bold_numeral_filling_its_centre():
    # a 24-px numeral fills four fifths of a 60-px face's centre but under half of its disc
    box = (0.0, 0.0, 60.0, 60.0)

    def bold(body, ink) -> np.ndarray:
        lin = np.ones((60, 60, 3)) * np.asarray(body)
        lin[18:42, 18:42] = ink
        return _srgb(lin)

    bright_on_navy, dark_on_ivory = bold(NAVY, (0.25, 0.45, 0.95)), bold(IVORY, (0.02, 0.03, 0.15))
    assert dark_bodies(bright_on_navy, [box])
    assert light_reference(bright_on_navy, [box]) is not None  # the centre alone takes the ink for the body
    assert not dark_bodies(dark_on_ivory, [box]) and not dark_bodies(bright_on_navy, [])
    # most bodies decide; half and half is not dark
    pair = np.hstack([bright_on_navy, dark_on_ivory])
    assert not dark_bodies(pair, [box, (60.0, 0.0, 120.0, 60.0)])
    assert dark_bodies(np.hstack([pair, bright_on_navy]), [box, (60.0, 0.0, 120.0, 60.0), (120.0, 0.0, 180.0, 60.0)])


def _jpeg_faces(inks, light, stroke: int) -> tuple[np.ndarray, list[tuple[float, float, float, float]]]:
    """36-px ivory faces with a cross of `stroke`-px ink lines, under a light, through a
    quality-60 JPEG (its 4:2:0 chroma shares a thin line's colour with the body around it)."""
    faces = []
    for k, ink in enumerate(inks):
        lin = np.ones((36, 36, 3)) * np.asarray(IVORY)
        lo = 18 - stroke // 2
        lin[lo:lo + stroke, 8:28] = ink
        lin[8:28, lo:lo + stroke] = ink
        faces.append(_srgb(np.clip(lin * np.asarray(light) * (1.0 - 0.04 * (k % 3)), 0, 1)))
    decoded = Image.open(io.BytesIO(encode_jpeg(np.hstack(faces), 60)))
    return np.asarray(decoded.convert("RGB")), [(36.0 * k, 0.0, 36.0 * k + 36.0, 36.0) for k in range(len(inks))]


@pytest.mark.parametrize("light", [(1.0, 1.0, 1.0), LAMP])
@pytest.mark.parametrize("stroke", [2, 3, 4])
def test_a_thin_numeral_through_jpeg_keeps_its_red_apart_from_orange(light, stroke):
    # three red and three orange faces: however thin the numeral, the photo's reds and oranges
    # measure well apart (at least 25 degrees on average: 35 on wide strokes without JPEG)
    inks = measure_inks(*_jpeg_faces([RED_INK, ORANGE_INK] * 3, light, stroke))
    reds, oranges = [i.hue for i in inks[0::2]], [i.hue for i in inks[1::2]]
    assert max(reds) < min(oranges)
    assert np.mean(oranges) - np.mean(reds) > 25


def test_a_lamp_beyond_the_training_light_is_corrected_half_way_to_it():
    box = (0.0, 0.0, 60.0, 60.0)
    assert not light_correction(_face_image(IVORY, RED_INK), [box]).unusual  # the usual light: crops as they are
    assert not light_correction(_face_image(NAVY, RED_INK, LAMP), [box]).unusual  # no white reference
    warm = _face_image(IVORY, RED_INK, LAMP)
    correction = light_correction(warm, [box])
    assert correction.unusual
    before = light_reference(warm, [box])
    after = light_reference(correction.apply(warm), [box])
    # each channel's log moves BALANCE_SHARE of the way to the training look's body, brightness kept
    target = before + BALANCE_SHARE * ((TRAINING_BODY - before) - (TRAINING_BODY - before).mean())
    assert np.allclose(after, target, atol=0.03)
    assert light_cast(correction.apply(warm), [box]) < light_cast(warm, [box])
    assert np.isclose(after.mean(), before.mean(), atol=0.03)


def test_a_gain_of_one_leaves_every_level_as_it_was_and_the_gains_act_on_linear_light():
    levels = np.arange(256, dtype=np.uint8).reshape(1, 256, 1).repeat(3, axis=2)
    assert np.array_equal(balance(levels, np.ones(3)), levels)
    half = balance(levels, np.array([0.5, 1.0, 2.0]))
    lin = lambda u8: np.where(u8 / 255 <= 0.04045, u8 / 255 / 12.92, ((u8 / 255 + 0.055) / 1.055) ** 2.4)  # noqa: E731
    mid = levels[0, 100:200, 0]
    assert np.allclose(lin(half[0, 100:200, 0]), 0.5 * lin(mid), atol=4e-3)  # red halved in linear light
    assert np.array_equal(half[..., 1], levels[..., 1])
    assert (half[0, 200:, 2] == 255).all()  # blue doubled clips at white
