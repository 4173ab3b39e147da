"""The tuned levels live in models/tuning.json, loaded with the models: a models folder may carry
its own (they change what is flagged), one without reads with the shipped file's, and a file of
another version or without a level is refused with a sentence that names it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from companion.vision import ReadSettings, read_image
from companion.vision.models import default_models_dir, load_models
from companion.vision.tuning import TUNING_FILE, Tuning, TuningError, shipped_tuning
from photo_helpers import PHOTOS, needs_models


def shipped_json() -> dict:
    return json.loads((default_models_dir() / TUNING_FILE).read_text())


def test_every_level_of_the_file_is_read_and_each_names_the_command_that_chooses_it():
    data = shipped_json()
    tuning = Tuning.from_json(data, "tuning.json")
    assert tuning == shipped_tuning()
    assert all(level["chosen_by"].startswith(("training.", "benchmarks/")) for level in data["levels"].values())
    assert tuning.doubts.cut_area == data["levels"]["cut_area"]["value"]
    assert tuning.doubt_flag_from == data["levels"]["doubt_flag_from"]["value"]
    assert tuning.cubes.same_die == data["levels"]["same_die"]["value"]
    assert tuning.pipeline.missed_top_bands == tuple(tuple(band) for band in data["levels"]["missed_top_bands"]["value"])
    assert tuning.pipeline.decoding.die_min_posterior == data["levels"]["die_min_posterior"]["value"]


def test_a_file_of_another_version_or_without_a_level_is_refused():
    with pytest.raises(TuningError, match="version 1"):
        Tuning.from_json({**shipped_json(), "version": 1}, "tuning.json")
    data = shipped_json()
    del data["levels"]["small_face_lead"]
    with pytest.raises(TuningError, match="small_face_lead"):
        Tuning.from_json(data, "tuning.json")
    data = shipped_json()
    data["levels"]["missed_candidates"]["value"] = 40.5  # a count
    with pytest.raises(TuningError, match="missed_candidates"):
        Tuning.from_json(data, "tuning.json")


def test_a_folder_without_the_file_reads_with_the_shipped_levels(tmp_path: Path):
    assert Tuning.load(tmp_path) == shipped_tuning()


@needs_models
def test_a_models_folder_with_its_own_levels_flags_by_them(tmp_path: Path):
    photo = PHOTOS / "dark_calib_8501_000238.jpg"  # five dice read wrong, each flagged
    assert sum(d.uncertain for d in read_image(photo, load_models()).dice) >= 5
    folder = tmp_path / "models"
    shutil.copytree(default_models_dir(), folder, ignore=shutil.ignore_patterns("*.md", "*.py"))
    data = shipped_json()
    data["levels"]["doubt_flag_from"]["value"] = 1.0  # no die is that surely wrong
    (folder / TUNING_FILE).write_text(json.dumps(data))
    models = load_models(folder)
    assert models.tuning.doubt_flag_from == 1.0 and models.doubt.tuning.doubt_flag_from == 1.0
    assert not any(d.uncertain for d in read_image(photo, models).dice)


def test_settings_leave_the_run_time_levels_to_the_tuning_unless_given():
    from dataclasses import replace

    tuning = shipped_tuning()
    assert ReadSettings().levels(tuning) == tuning.pipeline
    given = ReadSettings(reader_sure=1.0, dark_face_threshold=None, mirror_band=None)
    assert given.levels(tuning) == replace(tuning.pipeline, reader_sure=1.0, dark_face_threshold=None, mirror_band=None)
    other = replace(tuning, pipeline=replace(tuning.pipeline, faint_heat=0.2))
    assert ReadSettings().levels(other).faint_heat == 0.2 and given.levels(other).faint_heat == 0.2
