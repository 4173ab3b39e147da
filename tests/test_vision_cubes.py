"""A die read twice is never silent: where the cube model keeps a cube's side face beside its
top face (it cannot tell it, by its box alone, from a neighbouring die's top face), the
reading of the box that is no top face is flagged. Real ONNX models, real pipeline, photos of
the calibration sets rendered again from their seeds."""

from dataclasses import replace

import numpy as np
import pytest

from companion.vision import ReadSettings, read_image
from companion.vision.image_io import load_work_image
from companion.vision.models import load_models, models_present
from photo_helpers import PHOTOS, on_no_die
from training.evaluate import IOU_MIN, box_iou, count_read_twice
from training.synth.dataset import encode_jpeg, render_indexed
from training.synth.scene import SceneOptions
from companion.vision.tuning import shipped_tuning

LEVELS = shipped_tuning().doubts


def _tuned(models, **cube_levels):
    """The models with these levels of the cube rules (tuning.CubeLevels) in place of their tuning's."""
    tuning = models.tuning
    return replace(models, tuning=replace(tuning, cubes=replace(tuning.cubes, **cube_levels)))

needs_models = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
# The boxes of the first search: where a photo with no sharper copy is searched again in its own
# pixels (ReadSettings.zoom_within_work), its boxes change, and some of these photos then box no
# side face at all; the drops and flags are tested on the side faces the first search boxes.
# (Photo 28 of the larger cold set is then read twice, both boxes flagged: the model card counts it.)
FIRST_SEARCH = ReadSettings(zoom_within_work=False)


def _second_readings(reading, photo) -> list:
    """As training.evaluate counts a die read twice: the readings on no top face whose centre
    lies in the outline of a cube whose top face is read."""
    tops = [d["box"] for d in photo.dice]
    matched = {j for r in reading.dice for j, t in enumerate(tops) if box_iou(r.box, t) >= IOU_MIN}
    cubes = [np.asarray(photo.dice[j]["cube"]) for j in matched]
    return [r for r in reading.dice
            if all(box_iou(r.box, t) < IOU_MIN for t in tops) and count_read_twice([r.box], cubes)]


@needs_models
@pytest.mark.parametrize("seed, index, options, die", [
    # 27-40 degrees off vertical (photo 99 of the tilted calibration set): the side face of
    # H3 (6b on top), a 5o, is boxed half a box from its top face
    (2601, 99, SceneOptions(tilt_range=(27.0, 40.0)), "H3"),
    # black bodies (photo 107 of the dark calibration set): the side face of L2 (3g on top),
    # a 4o, is larger in the photo than its top face
    (2501, 107, SceneOptions(dark_body=True), "L2"),
    # a warm lamp (photo 34 of the warm calibration set): the side face of L2 (4o on top), a
    # 3g, is as sure a box as its top face
    (2301, 34, SceneOptions(light="warm"), "L2"),
])
def test_a_side_face_kept_beside_its_top_face_is_flagged(seed, index, options, die):
    photo = render_indexed(seed, "calib", index, options)
    reading = read_image(encode_jpeg(photo.image, photo.conditions["jpeg_quality"]), load_models())
    top = next(d["box"] for d in photo.dice if d["die"] == die)
    assert any(box_iou(r.box, top) >= IOU_MIN for r in reading.dice)  # the cube's top face is read
    # its side face, where it is read too, is never a silent die
    assert all(r.uncertain for r in _second_readings(reading, photo))


@needs_models
@pytest.mark.parametrize("seed, index, dice", [
    # photo 143 of the tilted calibration set: a box over the "1" of H1's green 10, covered
    # by H1's box for half its area, reads a green 1 (the same face boxed again)
    (2601, 143, ("H1",)),
    # photo 126 of the larger tilted choosing set: the same over H5's green 10
    (8401, 126, ("H5",)),
    # photo 17 of that set: a box a fifth of a box from a surer box reading the same 5r
    (8401, 17, ("H1",)),
])
def test_a_die_is_read_once_when_its_second_box_is_sure(seed, index, dice):
    photo = render_indexed(seed, "calib", index, SceneOptions(tilt_range=(27.0, 40.0)))
    reading = read_image(encode_jpeg(photo.image, photo.conditions["jpeg_quality"]), load_models())
    for die in dice:
        labelled = next(d for d in photo.dice if d["die"] == die)
        assert any(box_iou(r.box, labelled["box"]) >= IOU_MIN for r in reading.dice)  # its top face is read
        # and read once: one reading has its centre in the cube's outline
        cube = [np.asarray(labelled["cube"])]
        assert sum(count_read_twice([r.box], cube) for r in reading.dice) == 1


def _lone_readings(reading, photo) -> list:
    """The readings on no top face whose centre lies in the outline of a cube whose top face
    is not read: a side face read as a die of its own."""
    tops = [d["box"] for d in photo.dice]
    matched = {j for r in reading.dice for j, t in enumerate(tops) if box_iou(r.box, t) >= IOU_MIN}
    unread = [np.asarray(d["cube"]) for j, d in enumerate(photo.dice) if j not in matched]
    return [r for r in reading.dice
            if all(box_iou(r.box, t) < IOU_MIN for t in tops) and count_read_twice([r.box], unread)]


@needs_models
def test_a_side_face_whose_top_face_was_missed_is_flagged():
    # photo 2 of the 27-40 degree choosing set (seed 8451): the detector boxes the blue W on a
    # side of die L3, whose top face (1o) it misses, and the reader reads that box as a sure Wb;
    # the 1o leaves a weak peak beyond it, away from the camera, that the face head is sure of
    photo = render_indexed(8451, "calib", 2, SceneOptions(tilt_range=(27.0, 40.0)))
    reading = read_image(encode_jpeg(photo.image, photo.conditions["jpeg_quality"]), load_models())
    lone = _lone_readings(reading, photo)
    assert [(r.value, r.color.value) for r in lone] == [(None, "blue")]  # the side face is read
    assert all(r.uncertain and r.doubt == "die" for r in lone)  # and flagged: is it a die?


def _centre_in(box, outer) -> bool:
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return outer[0] <= x <= outer[2] and outer[1] <= y <= outer[3]


@needs_models
def test_where_the_missed_top_face_is_strong_in_one_view_alone_it_is_read_in_place_of_its_side_face():
    # photo 379 of the 27-40 degree choosing set (seed 8401): the detector boxes the red 2 on a
    # side of die L3, whose top face (Wg) it misses, and the reader reads that box as a sure 2r;
    # the Wg leaves a peak beyond it, away from the camera, of 0.45 in the upright view (over
    # the detector's threshold, which the mirror views took it under), and the face head passes
    # a box there. Read as a faint face (stage1_find_faces.faint_faces) the Wg is no longer missed: the
    # check is seen with those faces left unread
    photo = render_indexed(8401, "calib", 379, SceneOptions(tilt_range=(27.0, 40.0)))
    jpeg = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    detector = load_models().detector
    work = load_work_image(jpeg)
    upright = detector.heatmap(work.rgb)
    k = work.rgb.shape[1] / work.full_width
    top = [v * k for v in next(d["box"] for d in photo.dice if d["die"] == "L3")]
    assert any(_centre_in(d.box, top) for d in detector.detections(upright))  # over the threshold upright
    assert not any(_centre_in(d.box, top) for d in detector.detections(detector.all_views(upright)))  # not in all views
    unread = ReadSettings(faint_face_threshold=None)
    lone = _lone_readings(read_image(jpeg, load_models(), unread), photo)
    assert [(r.value, r.color.value, r.confidence >= 0.99) for r in lone] == [(2, "red", True)]  # the side face is read
    shipped = read_image(jpeg, load_models())
    assert _lone_readings(shipped, photo) == []  # the Wg is read, flagged, and the side face beside it flagged
    assert all(r.uncertain for r in shipped.dice if all(box_iou(r.box, d["box"]) < IOU_MIN for d in photo.dice))


@needs_models
@pytest.mark.parametrize("seed, index, options, die", [
    # photo 28 of the larger cold choosing set: a box on a side of H5 (8o on top, read 4o) reads 7r
    (8601, 28, SceneOptions(light="cold"), "H5"),
    # photo 37 of the larger dark choosing set: a box on a side of L1 (Wo on top, read 6o) reads Wr
    (8501, 37, SceneOptions(dark_body=True), "L1"),
])
def test_the_pair_model_drops_a_side_face_beside_its_top_face(seed, index, options, die):
    photo = render_indexed(seed, "calib", index, options)
    reading = read_image(encode_jpeg(photo.image, photo.conditions["jpeg_quality"]), load_models(), FIRST_SEARCH)
    labelled = next(d for d in photo.dice if d["die"] == die)
    assert any(box_iou(r.box, labelled["box"]) >= IOU_MIN for r in reading.dice)  # its top face is read
    # and read once: one reading has its centre in the cube's outline
    assert sum(count_read_twice([r.box], [np.asarray(labelled["cube"])]) for r in reading.dice) == 1


@needs_models
def test_a_side_face_the_pair_model_rates_under_its_drop_level_is_flagged():
    # photo 75 of the second 27-40 degree choosing set: a box on a side of L2 (3g on top, read Wg)
    # reads Wo at 0.998, 0.90 likely a side face by the cube model and 0.82 by the pair model, under
    # its drop level (0.9); its top face's box reads no face of its die (a same-die share of 0.09),
    # so the cube model's drop does not take it either: it is kept, flagged
    # (its colour as the reader reads it: the photo's inks take this faint side face for red)
    photo = render_indexed(8451, "calib", 75, SceneOptions(tilt_range=(27.0, 40.0)))
    jpeg = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    second = _second_readings(read_image(jpeg, load_models(), replace(FIRST_SEARCH, usual_light_joint=False)), photo)
    assert [(r.face.token, r.confidence >= 0.99, r.uncertain) for r in second] == [("Wo", True, True)]
    # searched again in its own pixels, as shipped, the side face gets no box
    assert _second_readings(read_image(jpeg, load_models()), photo) == []


@needs_models
@pytest.mark.parametrize("seed, index, options, die", [
    # photo 336 of the larger choosing set: a box on a side of H5 (9r on top) reads 5b, a face of
    # H5 too; the face head rates it 0.95, the cube model 0.29 a side face, the pair model 0.84 one
    # of H5's cube. Read as a tenth die, it left the photo's 7b out.
    (8001, 336, SceneOptions(), "H5"),
    # photo 79 of the larger dark choosing set, 31 degrees off vertical: a box on a side of H5
    # (9r on top) reads 6b (face 0.91, side face 0.30, of H5's cube 0.64)
    (8501, 79, SceneOptions(dark_body=True), "H5"),
])
def test_a_box_the_face_head_is_unsure_of_on_a_read_cubes_side_is_dropped(seed, index, options, die):
    photo = render_indexed(seed, "calib", index, options)
    data = encode_jpeg(photo.image, photo.conditions["jpeg_quality"])
    labelled = next(d for d in photo.dice if d["die"] == die)
    cube = [np.asarray(labelled["cube"])]

    def on_cube(reading) -> int:
        return sum(count_read_twice([r.box], cube) for r in reading.dice)

    models = load_models()
    for settings in (ReadSettings(), FIRST_SEARCH):
        reading = read_image(data, models, settings)
        assert any(box_iou(r.box, labelled["box"]) >= IOU_MIN for r in reading.dice)  # its top face is read
        assert on_cube(reading) == 1  # and read once
        assert _second_readings(reading, photo) == []
    # no box is that unsure: the side face is read too
    assert on_cube(read_image(data, _tuned(models, unsure_face=0.0), FIRST_SEARCH)) == 2


@needs_models
@pytest.mark.parametrize("photo", [
    # a side face showing the W of the die whose top face beside it is read (the cube model rates
    # it 0.004 a side face, the pair model 0.03 one of that die's cube; the face head 1.00)
    "v1_calib_000019.jpg",
    # a side face reading 5b beside its cube's top face (0.015 and 0.13)
    "v1_calib_000142.jpg",
    # a dark die's side face reading 9o beside its top face (0.03 by the cube model, under 0.03 by the pair model)
    "v1_calib_000096.jpg",
])
def test_a_side_face_of_a_look_the_cube_models_never_learnt_is_flagged(photo):
    # photos of the generator's first version (data/v1_calib: `make data-v1`), whose side faces
    # the cube and pair models rate far under the levels they drop or flag a box from
    path = PHOTOS / photo
    models = load_models()
    extra = on_no_die(read_image(path.read_bytes(), models), path)
    assert extra and all(r.uncertain for r in extra)  # a side face is read as a die, flagged
