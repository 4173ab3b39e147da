"""The scorepad's dice sets over HTTP: naming, a game's set, learning from a confirmed photo
(real models, a sample photo), undo and reset."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import models_ready

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def test_a_scorepad_starts_with_one_set_and_sets_can_be_named(client):
    sets = client.get("/api/dice-sets").json["sets"]
    assert [(s["name"], s["dice"], s["in_use"]) for s in sets] == [("Our dice", 0, False)]
    made = client.post("/api/dice-sets", json={"name": "Travel set"})
    assert made.status_code == 201 and made.json["name"] == "Travel set"
    again = client.post("/api/dice-sets", json={"name": "Travel set"})
    assert again.status_code == 409 and "already" in again.json["error"]
    blank = client.post("/api/dice-sets", json={"name": "  "})
    assert blank.status_code == 400 and "name" in blank.json["error"]
    renamed = client.patch(f"/api/dice-sets/{sets[0]['id']}", json={"name": "Grandma's dice"})
    assert renamed.json["name"] == "Grandma's dice"
    assert client.patch("/api/dice-sets/999", json={"name": "x"}).status_code == 404


def test_a_new_game_picks_its_set(client):
    travel = client.post("/api/dice-sets", json={"name": "Travel set"}).json
    game = client.post("/api/games", json={"players": ["Ann", "Bob"], "dice_set": travel["id"]}).json
    assert client.get(f"/api/games/{game['id']}/dice-set").json["name"] == "Travel set"
    plain = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json
    assert client.get(f"/api/games/{plain['id']}/dice-set").json["name"] == "Our dice"
    unknown = client.post("/api/games", json={"players": ["Ann", "Bob"], "dice_set": 999})
    assert unknown.status_code == 404


@pytest.mark.parametrize("set_id", [2**63, 2**70, -(2**70)])
def test_an_id_beyond_sqlites_range_names_no_set(client, set_id):
    """SQLite's ids are 64-bit: a larger number is a set that does not exist, not a server error."""
    game = client.post("/api/games", json={"players": ["Ann", "Bob"], "dice_set": set_id})
    assert game.status_code == 404 and "no dice set" in game.json["error"].lower()
    if set_id > 0:  # the path's int converter takes no sign
        assert client.patch(f"/api/dice-sets/{set_id}", json={"name": "x"}).status_code == 404
        assert client.delete(f"/api/dice-sets/{set_id}/learnt").status_code == 404
    assert [s["name"] for s in client.get("/api/dice-sets").json["sets"]] == ["Our dice"]


@pytest.mark.skipif(not models_ready(), reason="models/ has no ONNX files yet")
def test_a_confirmed_photo_teaches_the_games_set_undo_forgets_it_and_reset_clears(client):
    game = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json
    photo = (SAMPLES / "s08_webp.webp").read_bytes()
    upload = client.post(f"/api/games/{game['id']}/photos",
                         data={"photo": (__import__("io").BytesIO(photo), "dice.webp")},
                         content_type="multipart/form-data")
    assert upload.status_code == 201
    reading = upload.json["reading"]
    dice = [d["token"] for d in reading["dice"]]
    confirm = client.post(f"/api/games/{game['id']}/attempts", json={
        "player": "Ann", "seq": 0, "dice": dice, "photo_id": upload.json["photo_id"],
        "sources": list(range(len(dice)))})
    assert confirm.status_code == 201
    learnt = client.get(f"/api/games/{game['id']}/dice-set").json
    assert learnt["dice"] == len(dice) and learnt["photos"] == 1
    # what was learnt, per ink and per value: every die confirmed as read, so none checked
    inks = [item for item in learnt["learnt"] if item["kind"] == "ink"]
    assert sum(item["dice"] for item in inks) == len(dice) and all(item["checked"] == 0 for item in inks)
    assert not any(item["in_use"] for item in learnt["learnt"])  # one photo: nothing checked yet
    # the next photo of the game is read with the set's profile: the same answer shape
    second = client.post(f"/api/games/{game['id']}/photos",
                         data={"photo": (__import__("io").BytesIO(photo), "dice.webp")},
                         content_type="multipart/form-data")
    assert second.status_code == 201 and len(second.json["reading"]["dice"]) == len(dice)
    assert client.delete(f"/api/games/{game['id']}/attempts/0").status_code == 200
    assert client.get(f"/api/games/{game['id']}/dice-set").json["dice"] == 0
    # learnt again, then reset from the settings
    client.post(f"/api/games/{game['id']}/attempts", json={
        "player": "Ann", "seq": 0, "dice": dice, "photo_id": upload.json["photo_id"],
        "sources": list(range(len(dice)))})
    set_id = learnt["id"]
    assert client.get("/api/dice-sets").json["sets"][0]["dice"] == len(dice)
    reset = client.delete(f"/api/dice-sets/{set_id}/learnt")
    assert reset.json["forgotten"] == len(dice) and reset.json["set"]["dice"] == 0
    assert client.delete("/api/dice-sets/999/learnt").status_code == 404
