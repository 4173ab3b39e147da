"""Photos: corrections are kept with the photo and exported as a labelled dataset."""

from __future__ import annotations

import io
import json
import sqlite3

import pytest
from PIL import Image

from companion.cli import main as companion
from conftest import models_ready, sample_photos

PHASE1 = ["7b", "7r", "7g", "3o", "3r", "Wb"]


def jpeg(size=(320, 240)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (210, 200, 180)).save(out, "JPEG")
    return out.getvalue()


def stored_photo(app, game_id: str) -> int:
    """A photo with a reading written by hand, as if the pipeline had read 7 dice.

    This exercises storage, corrections and export without the models; the real pipeline
    is exercised by test_upload_of_a_sample_photo_is_read_and_kept below.
    """
    tokens = ["7b", "7r", "1g", "3o", "3r", "Wb", "9o"]  # die 2 misread (1g for 7g); die 6 is no die
    dice = []
    for i, token in enumerate(tokens):
        x = 10 + 40 * i
        dice.append({
            "value": "W" if token[0] == "W" else int(token[:-1]),
            "color": {"r": "red", "o": "orange", "g": "green", "b": "blue"}[token[-1]],
            "confidence": 0.9, "box": [x, 20, x + 30, 50], "die": None, "uncertain": i == 2,
            "token": token, "polygon": [[x, 20], [x + 30, 20], [x + 30, 50], [x, 50]],
        })
    reading = {"width": 320, "height": 240, "dice": dice, "ms": 1.0}
    return app.extensions["companion"].store.add_photo(game_id, "image/jpeg", jpeg(), reading)


def test_corrected_dice_are_kept_with_the_photo_and_exported(app, client, db_path, tmp_path):
    game = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json
    photo_id = stored_photo(app, game["id"])
    # The player corrected die 2 to 7g and dropped read die 6 (a 9o that was not a die).
    dice = ["7b", "7r", "7g", "3o", "3r", "Wb"]
    sources = [0, 1, 2, 3, 4, 5]
    response = client.post(f"/api/games/{game['id']}/attempts",
                           json={"player": "Ann", "seq": 0, "dice": dice, "photo_id": photo_id, "sources": sources})
    assert response.status_code == 201
    assert response.json["game"]["attempts"][0]["photo_id"] == photo_id
    assert client.get(f"/api/photos/{photo_id}").data == jpeg()

    out = tmp_path / "corrections"
    assert companion(["export-corrections", str(out), "--db", str(db_path)]) == 0
    lines = (out / "labels.jsonl").read_text().splitlines()
    assert len(lines) == 1
    label = json.loads(lines[0])
    assert (label["width"], label["height"]) == (320, 240)
    assert (out / label["image"]).read_bytes() == jpeg()
    assert [(d["value"], d["color"]) for d in label["dice"]] == [
        (7, "blue"), (7, "red"), (7, "green"), (3, "orange"), (3, "red"), ("W", "blue")]
    assert label["dice"][2]["box"] == [90, 20, 120, 50]  # the corrected die keeps its place
    assert label["dice"][0]["die"] == "H1"  # 7b is printed on one die only
    assert label["conditions"]["corrected"] == 1 and label["conditions"]["removed"] == 1
    assert set(label["dice"][0]) == {"die", "value", "color", "polygon", "box", "truncated"}


def test_photos_with_hand_typed_dice_are_left_out_unless_asked(app, client, db_path, tmp_path):
    game = client.post("/api/games", json={"players": ["Ann"]}).json
    photo_id = stored_photo(app, game["id"])
    body = {"player": "Ann", "seq": 0, "dice": ["7b", "7r", "7g", "3o", "3r", "3g"], "photo_id": photo_id,
            "sources": [0, 1, 2, 3, 4, None]}  # the last die was typed in: it has no outline
    assert client.post(f"/api/games/{game['id']}/attempts", json=body).status_code == 201
    assert companion(["export-corrections", str(tmp_path / "a"), "--db", str(db_path)]) == 0
    assert (tmp_path / "a" / "labels.jsonl").read_text() == ""
    assert companion(["export-corrections", str(tmp_path / "b"), "--db", str(db_path), "--include-unboxed"]) == 0
    label = json.loads((tmp_path / "b" / "labels.jsonl").read_text())
    assert len(label["dice"]) == 5 and label["conditions"]["unboxed"] == 1


def test_a_typed_in_die_pointed_at_on_the_photo_is_labelled_there_and_checked(app, client, db_path, tmp_path):
    from companion.table_profiles import confirmed_dice

    game = client.post("/api/games", json={"players": ["Ann"]}).json
    photo_id = stored_photo(app, game["id"])
    body = {"player": "Ann", "seq": 0, "dice": ["7b", "7r", "7g", "3o", "3r", "3g"], "photo_id": photo_id,
            "sources": [0, 1, 2, 3, 4, None], "boxes": [None, None, None, None, None, [250, 100, 280, 130]]}
    assert client.post(f"/api/games/{game['id']}/attempts", json=body).status_code == 201
    labels = app.extensions["companion"].store.get_photo(photo_id).labels
    assert labels["unboxed"] == 0 and len(labels["dice"]) == 6
    typed = labels["dice"][-1]
    assert (typed["value"], typed["color"], typed["box"], typed["pointed"]) == (3, "green", [250, 100, 280, 130], True)
    learnt = confirmed_dice(labels)
    assert len(learnt) == 6 and learnt[-1].checked and learnt[-1].box == (250.0, 100.0, 280.0, 130.0)
    assert learnt[2].checked and not learnt[0].checked  # die 2 was corrected; die 0 confirmed as read
    # a photo with every die boxed is exported, the typed-in die with it
    assert companion(["export-corrections", str(tmp_path / "a"), "--db", str(db_path)]) == 0
    assert len(json.loads((tmp_path / "a" / "labels.jsonl").read_text())["dice"]) == 6


@pytest.mark.parametrize("boxes", [
    [None] * 5 + [[250, 100, 240, 130]],  # x1 < x0
    [None] * 5 + [[250, 100, 330, 130]],  # outside the 320 x 240 photo
    [None] * 5 + [[250, 100, 280]],
    [None] * 5 + ["here"],
    [None] * 4,
])
def test_a_bad_pointed_box_is_refused_and_records_nothing(app, client, boxes):
    game = client.post("/api/games", json={"players": ["Ann"]}).json
    photo_id = stored_photo(app, game["id"])
    body = {"player": "Ann", "seq": 0, "dice": ["7b", "7r", "7g", "3o", "3r", "3g"], "photo_id": photo_id,
            "sources": [0, 1, 2, 3, 4, None], "boxes": boxes}
    response = client.post(f"/api/games/{game['id']}/attempts", json=body)
    assert response.status_code == 400 and "box" in response.json["error"]
    assert client.get(f"/api/games/{game['id']}").json["seq"] == 0


def test_bad_sources_are_refused_and_record_nothing(app, client):
    game = client.post("/api/games", json={"players": ["Ann"]}).json
    photo_id = stored_photo(app, game["id"])
    for sources in ([0, 0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 99], [0, 1]):
        body = {"player": "Ann", "seq": 0, "dice": PHASE1, "photo_id": photo_id, "sources": sources}
        response = client.post(f"/api/games/{game['id']}/attempts", json=body)
        assert response.status_code == 400, sources
    other = client.post("/api/games", json={"players": ["Bob"]}).json
    foreign = {"player": "Bob", "seq": 0, "dice": PHASE1, "photo_id": photo_id, "sources": list(range(6))}
    assert client.post(f"/api/games/{other['id']}/attempts", json=foreign).status_code == 404
    assert client.get(f"/api/games/{game['id']}").json["seq"] == 0


def test_export_refuses_a_non_empty_directory(db_path, tmp_path, client):
    client.get("/api/games")  # the app created the database
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    assert companion(["export-corrections", str(tmp_path / "busy"), "--db", str(db_path)]) == 1


def test_without_models_a_real_photo_gets_a_clear_503_and_the_server_keeps_serving(db_path, tmp_path):
    from companion.runtime import Runtime
    from companion.server import create_app

    runtime = Runtime.start({"COMPANION_MODELS": str(tmp_path / "no-models-here")})
    assert runtime.reader is None
    client = create_app(db_path, runtime=runtime).test_client()
    game = client.post("/api/games", json={"players": ["Ann"]}).json
    response = client.post(f"/api/games/{game['id']}/photos", data={"photo": (io.BytesIO(jpeg()), "dice.jpg")},
                           content_type="multipart/form-data")
    assert response.status_code == 503
    assert "by hand" in response.json["error"]
    assert client.get(f"/api/games/{game['id']}").status_code == 200


def test_the_app_reads_photos_with_the_models_folder_it_is_given(db_path, tmp_path):
    from companion.runtime import Runtime
    from companion.server import create_app

    runtime = Runtime.start({}, models_dir=tmp_path / "elsewhere")
    client = create_app(db_path, runtime=runtime).test_client()
    game = client.post("/api/games", json={"players": ["Ann"]}).json
    response = client.post(f"/api/games/{game['id']}/photos", data={"photo": (io.BytesIO(jpeg()), "dice.jpg")},
                           content_type="multipart/form-data")
    assert response.status_code == 503
    assert str(tmp_path / "elsewhere") in response.json["error"]


@pytest.mark.skipif(not models_ready(), reason="needs models/*.onnx (trained by the vision task)")
@pytest.mark.skipif(not sample_photos(), reason="needs sample_images/ (made by the data generator)")
def test_upload_of_a_sample_photo_is_read_and_kept(client):
    game = client.post("/api/games", json={"players": ["Ann"]}).json
    path = sample_photos()[0]
    response = client.post(f"/api/games/{game['id']}/photos",
                           data={"photo": (io.BytesIO(path.read_bytes()), path.name)}, content_type="multipart/form-data")
    assert response.status_code == 201, response.json
    reading = response.json["reading"]
    assert reading["dice"], "the sample photo has dice"
    for die in reading["dice"]:
        assert len(die["polygon"]) >= 4 and die["token"][-1] in "rogb"
    assert client.get(response.json["url"]).data == path.read_bytes()


@pytest.mark.skipif(not models_ready(), reason="needs models/*.onnx (trained by the vision task)")
@pytest.mark.skipif(not sample_photos(), reason="needs sample_images/ (made by the data generator)")
def test_a_read_photo_corrected_and_confirmed_is_exported_with_the_correction(client, db_path, tmp_path):
    game = client.post("/api/games", json={"players": ["Ann"]}).json
    path = sample_photos()[0]
    uploaded = client.post(f"/api/games/{game['id']}/photos",
                           data={"photo": (io.BytesIO(path.read_bytes()), path.name)}, content_type="multipart/form-data").json
    read = uploaded["reading"]["dice"]
    assert read, "the sample photo has dice"
    dice = [d["token"] for d in read]
    dice[0] = "Wg" if dice[0] != "Wg" else "Wr"  # the player corrects the first die
    body = {"player": "Ann", "seq": 0, "dice": dice, "photo_id": uploaded["photo_id"], "sources": list(range(len(dice)))}
    assert client.post(f"/api/games/{game['id']}/attempts", json=body).status_code == 201
    out = tmp_path / "export"
    assert companion(["export-corrections", str(out), "--db", str(db_path)]) == 0
    label = json.loads((out / "labels.jsonl").read_text())
    assert label["dice"][0]["value"] == "W" and label["dice"][0]["color"] == {"Wg": "green", "Wr": "red"}[dice[0]]
    assert label["dice"][0]["box"] == read[0]["box"]
    assert (out / label["image"]).read_bytes() == path.read_bytes()


@pytest.mark.skipif(not models_ready(), reason="needs models/*.onnx (trained by the vision task)")
@pytest.mark.skipif(not sample_photos(), reason="needs sample_images/ (made by the data generator)")
def test_reading_without_keeping_stores_no_photo(client, app):
    path = sample_photos()[0]
    response = client.post("/api/read", data={"photo": (io.BytesIO(path.read_bytes()), path.name)},
                           content_type="multipart/form-data")
    assert response.status_code == 200 and response.json["reading"]["dice"]
    with sqlite3.connect(app.extensions["companion"].store.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM photos").fetchone()[0] == 0
