"""The reading settings: one frozen object, read from the environment only when asked."""

import dataclasses
from pathlib import Path

import pytest

from companion.vision import ReadSettings, read_image
from companion.vision.image_io import load_work_image
from companion.vision.models import load_models, models_present
from companion.vision.stage1_find_faces import find_faces

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"


def test_the_environment_is_read_when_asked_and_unset_variables_keep_the_defaults():
    assert ReadSettings.from_env({}) == ReadSettings()
    got = ReadSettings.from_env({"COMPANION_MODELS": "/opt/m", "COMPANION_READER_TURNS": "1",
                                 "COMPANION_READER_SURE": "1", "COMPANION_DETECTOR_VIEWS": "2",
                                 "COMPANION_ZOOM": "0", "COMPANION_ZOOM_WORK": "0", "COMPANION_ZOOMED_VIEWS": "0",
                                 "COMPANION_FAINT_HEAT": "0", "COMPANION_BALANCE_LIGHT": "0",
                                 "COMPANION_READER_SURE_ONE": "0.9", "COMPANION_MIRROR_BAND": "0.2, 0.8",
                                 "COMPANION_JOINT_COLOUR": "0", "COMPANION_LIGHT_COLOUR": "0",
                                 "COMPANION_READER_CASCADE": "1", "COMPANION_MISSED_TOP_BANDS": "0.1,0.9; 0.2,0.8"})
    assert got == ReadSettings(models_dir=Path("/opt/m"), reader_turns=1, reader_sure=1.0, detector_views=2,
                               zoom_small_faces=False, zoom_within_work=False, zoomed_views=None, faint_heat=0.0, balance_light=False,
                               reader_sure_one=0.9, mirror_band=(0.2, 0.8), joint_colour=False,
                               light_colour_head=False, reader_cascade=1.0, missed_top_bands=((0.1, 0.9), (0.2, 0.8)))


@pytest.mark.parametrize("name, value, words", [
    ("COMPANION_READER_TURNS", "four", "COMPANION_READER_TURNS must be a whole number"),
    ("COMPANION_READER_TURNS", "9", "1 to 4 turns"),
    ("COMPANION_DETECTOR_VIEWS", "5", "1 to 4 mirror views"),
    ("COMPANION_READER_SURE", "1.5", "probability"),
    ("COMPANION_READER_SURE_ONE", "-0.1", "reader_sure_one is a probability"),
    ("COMPANION_READER_CASCADE", "2", "reader_cascade is a probability"),
    ("COMPANION_MIRROR_BAND", "0.3", "two numbers"),
    ("COMPANION_MIRROR_BAND", "0.3,1.2", "low <= high <= 1"),
    ("COMPANION_MIRROR_BAND", "0.7,0.3", "low <= high"),
    ("COMPANION_MISSED_TOP_BANDS", "0.1,0.9;0.9,0.1", "missed_top_bands holds \\(low, high\\)"),
    ("COMPANION_MISSED_TOP_BANDS", "0.1,0.9;0.2", "COMPANION_MISSED_TOP_BANDS must be two numbers"),
    ("COMPANION_DARK_FACE", "1.5", "dark_face_threshold is a probability"),
    ("COMPANION_DARK_FACE", "low", "COMPANION_DARK_FACE must be a number"),
    ("COMPANION_FAINT_FACE", "-1", "faint_face_threshold is a probability"),
])
def test_a_value_not_understood_is_named_in_a_sentence(name, value, words):
    with pytest.raises(ValueError, match=words):
        ReadSettings.from_env({name: value})


def test_the_mirror_band_all_takes_the_views_of_the_whole_image():
    assert ReadSettings.from_env({"COMPANION_MIRROR_BAND": "all"}).mirror_band is None


def test_the_missed_top_bands_all_read_every_peak_at_every_turn():
    assert ReadSettings.from_env({"COMPANION_MISSED_TOP_BANDS": "all"}).missed_top_bands == ()


def test_the_dark_face_threshold_is_a_probability_or_none():
    assert ReadSettings.from_env({"COMPANION_DARK_FACE": "0.35"}).dark_face_threshold == 0.35
    assert ReadSettings.from_env({"COMPANION_DARK_FACE": "none"}).dark_face_threshold is None


def test_the_faint_face_threshold_is_a_probability_or_none():
    assert ReadSettings.from_env({"COMPANION_FAINT_FACE": "0.8"}).faint_face_threshold == 0.8
    assert ReadSettings.from_env({"COMPANION_FAINT_FACE": "none"}).faint_face_threshold is None


def test_the_settings_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ReadSettings().reader_turns = 1  # type: ignore[misc]


@pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
def test_settings_passed_down_change_the_reading_and_leave_the_cached_models_alone():
    models = load_models()
    before = (models.detector.threshold, models.detector.views)
    work = load_work_image(SAMPLES / "s12_far_phone.jpg")  # small dice: searched again when zoom is on
    faces = find_faces(work, models, ReadSettings())
    sharper, _ = faces.image, faces.boxes
    faces = find_faces(work, models, ReadSettings(zoom_small_faces=False))
    same, _ = faces.image, faces.boxes
    assert sharper is not work and same is work
    one_turn = read_image(SAMPLES / "s00_white_10.jpg", models, ReadSettings(reader_turns=1, detector_views=1))
    assert len(one_turn.dice) == 10
    assert (models.detector.threshold, models.detector.views) == before


def test_a_decision_flag_the_doubt_model_weighs_can_be_switched_off_and_on_again():
    from companion.vision.doubts import SWITCHABLE

    settings = ReadSettings(reader_turns=2, mirror_band=None)
    assert SWITCHABLE == {"colour_disputes", "set_changes", "missed_tops"}
    assert settings.without_doubts("missed_tops").disabled_doubts == {"missed_tops"}
    assert settings.without_doubts("missed_tops").with_doubts("missed_tops") == settings


def test_a_doubt_that_does_not_exist_cannot_be_switched_off():
    with pytest.raises(ValueError, match="No doubt is named cut_box"):
        ReadSettings(disabled_doubts=frozenset({"cut_box"}))


def test_the_usual_light_joint_colours_have_a_switch():
    assert ReadSettings.from_env({}).usual_light_joint
    assert not ReadSettings.from_env({"COMPANION_USUAL_LIGHT_JOINT": "0"}).usual_light_joint


def test_the_guide_lists_every_variable_the_settings_read():
    from companion.vision.settings import ENVIRONMENT, environment_table

    guide = (Path(__file__).resolve().parent.parent / "docs" / "vision.md").read_text()
    start = guide.index("<!-- environment: companion.vision.settings.environment_table() -->\n")
    block = guide[guide.index("\n", start) + 1:guide.index("\n<!-- /environment -->")]
    assert block == environment_table(), "paste environment_table() into docs/vision.md"
    fields = {f.name for f in dataclasses.fields(ReadSettings)}
    assert all(v.field in fields for v in ENVIRONMENT)
    assert len({v.name for v in ENVIRONMENT}) == len(ENVIRONMENT)


def test_every_variable_sets_its_field():
    from companion.vision.settings import ENVIRONMENT

    values = {"COMPANION_MODELS": "/opt/m", "COMPANION_DISABLED_DOUBTS": "missed_tops, set_changes",
              "COMPANION_MIRROR_BAND": "0.2,0.8", "COMPANION_MISSED_TOP_BANDS": "0.1,0.9",
              "COMPANION_DARK_FACE": "none", "COMPANION_FAINT_FACE": "0.8"}
    switches = {v.name for v in ENVIRONMENT if v.example == "0"}
    shipped = ReadSettings()
    for var in ENVIRONMENT:
        text = values.get(var.name, "0" if var.name in switches else "1")
        got = getattr(ReadSettings.from_env({var.name: text}), var.field)
        assert got != getattr(shipped, var.field), var.name
