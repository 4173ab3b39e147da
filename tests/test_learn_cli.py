"""`companion learn` and `companion read --profile` with the real ONNX models and sample photos."""

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from companion.cli import main
from companion.vision.models import models_present
from companion.vision.profile import Profile

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_images"
PHOTOS = ("s04_pearl_3.jpg", "s07_png.png", "s08_webp.webp")  # small, so the tests stay quick

pytestmark = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")


def _rows() -> dict[str, dict]:
    rows = [json.loads(line) for line in (SAMPLES / "labels.jsonl").read_text("utf-8").splitlines() if line.strip()]
    return {r["image"]: r for r in rows}


def _labels(tmp_path: Path, photos=PHOTOS, edit=None) -> Path:
    """A label file of sample photos (their own labels: value, colour, box), copied beside it."""
    rows = _rows()
    lines = []
    for name in photos:
        shutil.copy(SAMPLES / name, tmp_path / name)
        row = {"image": name, "dice": [{k: d[k] for k in ("value", "color", "box")} for d in rows[name]["dice"]]}
        if edit:
            edit(row)
        lines.append(json.dumps(row))
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def test_learn_creates_the_profile_and_adds_every_labelled_die(tmp_path, capsys):
    labels = _labels(tmp_path)
    target = tmp_path / "table.profile"
    assert main(["learn", str(target), str(labels)]) == 0
    out = capsys.readouterr().out
    n = sum(len(_rows()[p]["dice"]) for p in PHOTOS)
    assert f"learnt {n} dice from 3 photos" in out
    profile = Profile.from_bytes(target.read_bytes())
    assert len(profile) == n and profile.photos == PHOTOS
    assert profile.checked.all()  # a label file's dice were checked by whoever wrote it
    # what was learnt, per ink and per value, each line from the profile itself
    for item in profile.learnt():
        assert f"  {item.kind} {item.name}: learnt from {item.dice} dice ({item.dice} checked)" in out
    assert "checked on" in out and {i.kind for i in profile.learnt()} == {"ink", "value"}
    # learning the same photos again replaces their dice: nothing is counted twice
    assert main(["learn", str(target), str(labels)]) == 0
    assert len(Profile.from_bytes(target.read_bytes())) == n


def test_a_read_json_line_is_a_label_file_and_read_profile_prints_the_same_shape(tmp_path, capsys):
    for name in PHOTOS:
        shutil.copy(SAMPLES / name, tmp_path / name)
    images = [str(tmp_path / name) for name in PHOTOS]
    assert main(["read", "--json", *images]) == 0
    plain = capsys.readouterr().out
    labels = tmp_path / "read.jsonl"
    labels.write_text(plain, "utf-8")
    target = tmp_path / "table.profile"
    assert main(["learn", str(target), str(labels)]) == 0
    capsys.readouterr()
    assert main(["read", "--profile", str(target), "--json", *images]) == 0
    with_profile = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    without = [json.loads(line) for line in plain.splitlines()]
    assert [r["image"] for r in with_profile] == images
    for a, b in zip(with_profile, without):
        assert set(a) == set(b) and len(a["dice"]) == len(b["dice"])
        assert {(d["value"], d["color"]) for d in a["dice"]} == {(d["value"], d["color"]) for d in b["dice"]}


def test_a_die_marked_unchecked_is_learnt_as_the_readers_own_guess(tmp_path):
    target = tmp_path / "table.profile"
    assert main(["learn", str(target), str(_labels(tmp_path, PHOTOS[:1], _first_die("checked", False)))]) == 0
    checked = Profile.from_bytes(target.read_bytes()).checked
    assert not checked[0] and checked[1:].all()


def _first_die(key, value):
    def edit(row):
        row["dice"][0][key] = value
    return edit


@pytest.mark.parametrize("edit, message", [
    (_first_die("color", "purple"), "unknown colour 'purple'"),
    (_first_die("value", 11), "value 11 is not 1..10"),
    (_first_die("box", [10, 10, 99999, 20]), "outside the"),
    (_first_die("box", [50, 50, 40, 60]), "x0 < x1"),
    (_first_die("box", "here"), "is not [x0, y0, x1, y1]"),
    (_first_die("checked", "yes"), "checked 'yes' is not true or false"),
    (lambda row: row.update(image="no_such_photo.jpg"), "cannot read the file"),
])
def test_bad_labels_give_one_line_exit_2_and_leave_the_profile_as_it_was(tmp_path, capsys, edit, message):
    target = tmp_path / "table.profile"
    assert main(["learn", str(target), str(_labels(tmp_path, PHOTOS[:1]))]) == 0
    before = target.read_bytes()
    capsys.readouterr()
    bad = _labels(tmp_path, PHOTOS[1:], edit)
    assert main(["learn", str(target), str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and err.startswith("companion learn: error:")
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".table.profile")] == []


def test_a_line_that_is_not_json_names_its_line(tmp_path, capsys):
    labels = _labels(tmp_path, PHOTOS[:1])
    labels.write_text(labels.read_text("utf-8") + "{not json\n", "utf-8")
    target = tmp_path / "table.profile"
    assert main(["learn", str(target), str(labels)]) == 2
    assert "line 2: not JSON" in capsys.readouterr().err
    assert not target.exists()  # nothing learnt is written when any line is bad


def test_a_corrupt_profile_is_refused_by_learn_and_read_and_kept(tmp_path, capsys):
    target = tmp_path / "table.profile"
    target.write_bytes(b"PK\x03\x04 certainly not a profile")
    image = tmp_path / PHOTOS[0]
    shutil.copy(SAMPLES / PHOTOS[0], image)
    assert main(["learn", str(target), str(_labels(tmp_path, PHOTOS[:1]))]) == 2
    assert "is not a dice profile" in capsys.readouterr().err
    assert main(["read", "--profile", str(target), str(image)]) == 2
    err = capsys.readouterr().err.strip()
    assert "is not a dice profile" in err and "\n" not in err
    assert target.read_bytes() == b"PK\x03\x04 certainly not a profile"
    assert main(["read", "--profile", str(tmp_path / "missing.profile"), str(image)]) == 2
    assert "no profile" in capsys.readouterr().err


def test_a_profile_of_another_reader_is_refused_when_reading(tmp_path, capsys):
    target = tmp_path / "table.profile"
    assert main(["learn", str(target), str(_labels(tmp_path, PHOTOS[:2]))]) == 0
    profile = Profile.from_bytes(target.read_bytes())
    other = dataclasses.replace(profile, reader="0123456789abcdef")
    target.write_bytes(other.to_bytes())
    capsys.readouterr()
    assert main(["read", "--profile", str(target), str(tmp_path / PHOTOS[0])]) == 2
    assert "another reader" in capsys.readouterr().err


def test_read_image_hands_the_profiles_probabilities_to_the_decoder(tmp_path):
    """A profile that learnt this set's orange ink to look as the colour head's red: read with
    it, the sample's red die comes out orange where the guard backs red -> orange (the set's
    constraint then settles the other dice), and stays red, flagged, where it does not."""
    import numpy as np

    from companion.vision import read_image
    from companion.vision.models import load_models
    from companion.vision.profile import _DEFAULT_INKS, Blend, Check, Inks, N_COLORS

    target = tmp_path / "table.profile"
    assert main(["learn", str(target), str(_labels(tmp_path, PHOTOS[:2]))]) == 0
    learnt = Profile.from_bytes(target.read_bytes())
    means = _DEFAULT_INKS.copy()
    means[1], means[0] = _DEFAULT_INKS[0], -10 * _DEFAULT_INKS[0]  # orange looks as red did; red like nothing
    # the colour head's learnt inks alone (no looks against the bodies)
    model = dataclasses.replace(learnt.blend.model, inks=Inks(means, 1.0), value_weight=0.0, looks=None)
    backed = np.zeros((N_COLORS, N_COLORS), bool)
    backed[0, 1] = True
    zeros = np.zeros((N_COLORS, N_COLORS), np.int64)
    forced = dataclasses.replace(learnt, blend=Blend(model, color=Check(zeros, zeros, backed)))
    unbacked = dataclasses.replace(learnt, blend=Blend(model))
    image = SAMPLES / "s08_webp.webp"
    plain = read_image(image, load_models())
    shifted = read_image(image, load_models(), profile=forced)
    flagged = read_image(image, load_models(), profile=unbacked)
    reds = [i for i, d in enumerate(plain.dice) if d.color.value == "red"]
    assert reds
    at = {d.box: d for d in shifted.dice}
    assert all(at[plain.dice[i].box].color.value == "orange" for i in reds)
    assert [d.color for d in flagged.dice] == [d.color for d in plain.dice]
    assert all(flagged.dice[i].uncertain for i in reds)
    assert [d.box for d in plain.dice] == [d.box for d in shifted.dice]
