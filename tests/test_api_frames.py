"""The live view's frames (POST /api/games/ID/frames): read by the photos' reader, kept nowhere,
and only small ones."""

from __future__ import annotations

import io
import sqlite3

import cv2
import numpy as np
import pytest
from conftest import models_ready
from live_sequences import sequence


def jpeg(image: np.ndarray, quality: int = 80) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return data.tobytes()


def send(client, game_id: str, data: bytes):
    return client.post(f"/api/games/{game_id}/frames", data={"photo": (io.BytesIO(data), "frame.jpg")},
                       content_type="multipart/form-data")


@pytest.fixture
def game_id(client) -> str:
    return client.post("/api/games", json={"players": ["Ann", "Bob"]}).json["id"]


@pytest.mark.skipif(not models_ready(), reason="needs the vision models (models/*.onnx)")
def test_a_frame_is_read_by_the_photo_reader_and_kept_nowhere(client, game_id, db_path):
    info = client.get("/api/info").json
    side = info["live_frame_long_side"]
    frame = cv2.resize(sequence("still", frames=1)[0], (side, side * 3 // 4), interpolation=cv2.INTER_AREA)
    answer = send(client, game_id, jpeg(frame))
    assert answer.status_code == 200
    reading = answer.json["reading"]
    assert (reading["width"], reading["height"]) == (side, side * 3 // 4)
    assert len(reading["dice"]) == 10 and all({"token", "box", "uncertain"} <= set(d) for d in reading["dice"])
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM photos").fetchone()[0] == 0


def test_a_photo_sized_image_is_not_a_frame(client, game_id):
    answer = send(client, game_id, jpeg(np.full((1500, 2000, 3), 128, np.uint8)))
    assert answer.status_code == 422 and "long side" in answer.json["error"]


def test_a_frame_over_its_byte_limit_is_refused(client, game_id):
    noise = np.random.default_rng(0).integers(0, 256, (1200, 1200, 3), dtype=np.uint8)
    data = jpeg(noise, quality=100)
    assert len(data) > 1024 * 1024
    answer = send(client, game_id, data)
    assert answer.status_code == 413 and "frame" in answer.json["error"]


def test_a_frame_for_no_game_or_of_no_image_is_refused(client, game_id):
    assert send(client, "nope", jpeg(np.zeros((48, 64, 3), np.uint8))).status_code == 404
    assert send(client, game_id, b"not an image at all").status_code == 422


def test_the_page_is_told_the_frame_size_and_rate(client):
    info = client.get("/api/info").json
    assert 0 < info["live_frame_long_side"] <= info["photo_long_side"]
    assert 0 < info["live_idle_fps"] <= info["live_max_fps"] <= 4


@pytest.mark.skipif(not models_ready(), reason="needs the vision models (models/*.onnx)")
def test_a_frame_tells_whether_a_hand_is_in_view(client, game_id):
    side = client.get("/api/info").json["live_frame_long_side"]
    for name, hand in (("still", False), ("still_hand", True)):
        frame = cv2.resize(sequence(name, frames=1)[0], (side, side * 3 // 4), interpolation=cv2.INTER_AREA)
        answer = send(client, game_id, jpeg(frame))
        assert answer.status_code == 200 and len(answer.json["reading"]["dice"]) == 10
        assert answer.json["hand"] is hand, name


def hold(client, game_id: str, data: bytes):
    return client.post(f"/api/games/{game_id}/held-photos", data={"photo": (io.BytesIO(data), "live.jpg")},
                       content_type="multipart/form-data")


def photos_kept(db_path) -> int:
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT COUNT(*) FROM photos").fetchone()[0]


@pytest.mark.skipif(not models_ready(), reason="needs the vision models (models/*.onnx)")
def test_a_held_photo_is_read_in_full_and_kept_only_when_the_page_keeps_it(client, game_id, db_path):
    data = jpeg(sequence("still", frames=1)[0], quality=92)
    held = hold(client, game_id, data)
    assert held.status_code == 200 and held.json["hand"] is False
    assert len(held.json["reading"]["dice"]) == 10 and photos_kept(db_path) == 0
    # read as the same bytes uploaded as a photo are
    uploaded = client.post(f"/api/games/{game_id}/photos", data={"photo": (io.BytesIO(data), "p.jpg")},
                           content_type="multipart/form-data").json
    assert [d["token"] for d in held.json["reading"]["dice"]] == [d["token"] for d in uploaded["reading"]["dice"]]
    kept = client.post(f"/api/games/{game_id}/held-photos/{held.json['held']}")
    assert kept.status_code == 201 and kept.json["reading"] == held.json["reading"]
    assert photos_kept(db_path) == 2
    assert client.get(kept.json["url"]).data == data
    # kept once: a second keep finds nothing held
    again = client.post(f"/api/games/{game_id}/held-photos/{held.json['held']}")
    assert again.status_code == 404 and "no longer held" in again.json["error"] and photos_kept(db_path) == 2


@pytest.mark.skipif(not models_ready(), reason="needs the vision models (models/*.onnx)")
def test_a_new_held_photo_lets_the_last_one_go(client, game_id, db_path):
    data = jpeg(cv2.resize(sequence("still", frames=1)[0], (480, 360)))
    first, second = hold(client, game_id, data).json["held"], hold(client, game_id, data).json["held"]
    assert client.post(f"/api/games/{game_id}/held-photos/{first}").status_code == 404
    assert client.post(f"/api/games/{game_id}/held-photos/{second}").status_code == 201
    assert photos_kept(db_path) == 1


def test_a_held_photo_for_no_game_or_over_its_limit_is_refused(client, game_id):
    assert hold(client, "nope", jpeg(np.zeros((48, 64, 3), np.uint8))).status_code == 404
    noise = np.random.default_rng(0).integers(0, 256, (2000, 2000, 3), dtype=np.uint8)
    data = jpeg(noise, quality=100)
    assert len(data) > 4 * 1024 * 1024
    assert hold(client, game_id, data).status_code == 413
    assert client.post(f"/api/games/{game_id}/held-photos/not-a-token").status_code == 404
