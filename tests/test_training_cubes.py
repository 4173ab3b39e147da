"""The cube model's training (training/cubes.py): labels from the generator's cube outlines, the fit."""

import numpy as np

from companion.dice import Color
from companion.vision.cubes import INPUTS
from training.common import LabelledDie, LabelledImage
from companion.vision.models import default_models_dir, load_models
from photo_helpers import PHOTOS, needs_models
from training.cubes import _boxes_models, _labels, fit


def test_a_box_inside_a_cube_outline_but_on_no_top_face_is_a_side_face(tmp_path):
    top = np.array([[100, 100], [160, 100], [160, 150], [100, 150]], float)
    cube = np.array([[100, 100], [160, 100], [160, 190], [100, 190]], float)  # the front face below the top
    die = LabelledDie(5, Color.RED, "H1", (100.0, 100.0, 160.0, 150.0), top, False, 1.0, cube)
    image = LabelledImage(tmp_path / "x.jpg", 400, 300, (die,))
    boxes = [(101.0, 101.0, 159.0, 149.0), (102.0, 150.0, 158.0, 188.0), (300.0, 200.0, 350.0, 250.0)]
    assert _labels(image, boxes, [0.9, 0.6, 0.5]).tolist() == [0.0, 1.0, -1.0]  # top, side face, neither


def test_the_fit_separates_what_the_features_separate():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, len(INPUTS)))
    y = (x[:, 0] > 0.5).astype(float)
    model = fit(x, y, steps=400, l2=1e-3)
    assert np.argmax(np.abs(model["weights"])) == 0 and model["weights"][0] > 0
    z = (x - np.array(model["mean"])) / np.array(model["scale"])
    p = 1 / (1 + np.exp(-(z @ np.array(model["weights"]) + model["bias"])))
    assert ((p > 0.5) == (y > 0)).mean() > 0.97


def test_boxes_can_be_collected_below_the_calibrated_detector_threshold():
    shipped = load_models(None).detector.threshold
    assert _boxes_models(default_models_dir()).detector.threshold == shipped
    assert _boxes_models(default_models_dir(), 0.2).detector.threshold == 0.2 < shipped


def test_the_pair_model_learns_from_the_labelled_pairs_only(tmp_path):
    import json

    from companion.vision.cubes import PAIR_FEATURES, PairModel
    from training.cube_pair_model import load_pairs, main

    row = [0.5] * len(PAIR_FEATURES)
    photos = tmp_path / "pairs.jsonl"
    # a side face beside its top face, a top face, and a box on no die (left out)
    photos.write_text(json.dumps({"pairs": [[0, 1, 1], [1, 0, 0], [2, 0, -1]],
                                  "pair_rows": [row, [0.9] * len(PAIR_FEATURES), row]}) + "\n")
    x, y = load_pairs([photos])
    assert x.shape == (2, len(PAIR_FEATURES)) and y.tolist() == [1.0, 0.0]
    cube_file = tmp_path / "cubes.json"
    cube_file.write_text(json.dumps({"features": ["kept"]}))
    assert main(["--photos", str(photos), "--steps", "50", "--drop", "0.6", "--models", str(cube_file)]) == 0
    data = json.loads(cube_file.read_text())
    assert data["features"] == ["kept"]  # the cube model itself is left as it was
    model = PairModel.from_json(data["pairs"])
    assert model.drop == 0.6 and model.probability(x)[0] > model.probability(x)[1]


@needs_models
def test_the_pair_rows_record_a_faint_face_dropped_on_its_cubes_side(tmp_path, monkeypatch):
    # training.cube_pairs reads photos through the shipped pipeline, whose cube decision it wraps:
    # more warm calib photo 190 (tests/photos), where the upright view alone boxes a cube's side
    import json
    import shutil

    import companion.vision.stage3_one_per_cube as one_per_cube
    import training.evaluate as evaluate
    from training.cube_pairs import main

    for module, name in ((one_per_cube, "decide"), (evaluate, "analyse")):  # main wraps both: put back after
        monkeypatch.setattr(module, name, getattr(module, name))
    photo = PHOTOS / "warm_calib_8301_000190.jpg"
    (tmp_path / "set" / "images").mkdir(parents=True)
    shutil.copy(photo, tmp_path / "set" / "images" / "000000.jpg")
    row = json.loads(photo.with_suffix(".json").read_text("utf-8")) | {"image": "images/000000.jpg"}
    (tmp_path / "set" / "labels.jsonl").write_text(json.dumps(row) + "\n", "utf-8")
    rows, photos = tmp_path / "rows.jsonl", tmp_path / "photos.jsonl"
    main(["--data", str(tmp_path / "set"), "--models", str(default_models_dir()), "--out", str(rows),
          "--photos", str(photos)])
    (kept,) = [json.loads(line) for line in photos.read_text("utf-8").splitlines()]
    faint = [i for i, f in enumerate(kept["faint"]) if f]
    assert faint and all(kept["drop"][i] and kept["truth"][i] == "twice" for i in faint)


@needs_models
def test_the_pair_rows_command_run_again_writes_the_same_files(tmp_path, monkeypatch):
    # the model card's command remakes the pair model's data: a second run must not add its rows
    # to the first's (one tilted photo with a side face boxed beside its top face)
    import json
    import shutil

    import companion.vision.stage3_one_per_cube as one_per_cube
    import training.evaluate as evaluate
    from training.cube_pairs import main as cube_pairs

    # the command records through wrappers it installs: put the originals back afterwards
    monkeypatch.setattr(one_per_cube, "decide", one_per_cube.decide)
    monkeypatch.setattr(evaluate, "analyse", evaluate.analyse)

    data = tmp_path / "set"
    (data / "images").mkdir(parents=True)
    shutil.copy(PHOTOS / "tilt_calib_2601_000075.jpg", data / "images" / "000075.jpg")
    row = json.loads((PHOTOS / "tilt_calib_2601_000075.json").read_text("utf-8"))
    (data / "labels.jsonl").write_text(json.dumps({**row, "image": "images/000075.jpg"}) + "\n", "utf-8")
    out, photos = tmp_path / "rows.jsonl", tmp_path / "photos.jsonl"
    args = ["--data", str(data), "--out", str(out), "--photos", str(photos)]
    cube_pairs(args)
    first = out.read_text("utf-8"), photos.read_text("utf-8")
    assert first[0] and first[1]  # the photo gives pair rows
    cube_pairs(args)
    assert (out.read_text("utf-8"), photos.read_text("utf-8")) == first


@needs_models
def test_the_first_search_switch_collects_the_boxes_before_a_small_photos_second_search():
    """`--first-search` (training.cubes FIRST_SEARCH) collects the boxes the shipped cube models
    and colour head were made from: on tilt calib photo 1 (tests/photos) the first search alone
    gives the green 7 no box, the second search in the photo's own pixels boxes it."""
    import json

    from training.common import _die
    from training.cubes import FIRST_SEARCH, photo_boxes

    row = json.loads((PHOTOS / "tilt_calib_000001.json").read_text())
    image = LabelledImage(PHOTOS / "tilt_calib_000001.jpg", row["width"], row["height"],
                          tuple(_die(d) for d in row["dice"]))
    models = _boxes_models(default_models_dir())
    _, first = photo_boxes(image, models, FIRST_SEARCH)
    _, found = photo_boxes(image, models)
    assert int((found == 0).sum()) == len(image.dice)  # every top face boxed
    assert int((first == 0).sum()) == len(image.dice) - 1  # the green 7 missed
