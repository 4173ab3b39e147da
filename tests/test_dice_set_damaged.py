"""A damaged record of what a photo taught a dice set (flipped bytes, empty, embeddings of
another width) is reported once in the log and on the set's card, never counted as learnt,
and never stops the scorepad answering or learning (real models, real SQLite)."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import numpy as np
import pytest

from conftest import models_ready

from companion.server import create_app
from companion.vision.profile import Profile

SAMPLE = Path(__file__).resolve().parent.parent / "sample_images" / "s08_webp.webp"
pytestmark = [pytest.mark.skipif(not models_ready(), reason="models/ has no ONNX files yet"), pytest.mark.slow]


def narrower(blob: bytes) -> bytes:
    """The same learnt dice with embeddings one value shorter (another reader's width)."""
    part = Profile.from_bytes(blob)
    cut = part.embeddings[:, :-1]
    cut = cut / np.linalg.norm(cut, axis=1, keepdims=True)
    return Profile.empty(part.reader, cut.shape[1]).add(part.photos[0], cut, part.values, part.colors,
                                                        part.base_value, part.base_color, part.base_face).to_bytes()


def flipped(blob: bytes) -> bytes:
    data = bytearray(blob)
    for k in range(len(data) // 3, len(data) // 3 + 64):
        data[k] ^= 0xFF
    return bytes(data)


def test_damaged_learning_is_reported_once_never_counted_and_learning_goes_on(db_path, app, client, caplog):
    store = app.extensions["companion"].store
    game = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json
    upload = client.post(f"/api/games/{game['id']}/photos", data={"photo": (io.BytesIO(SAMPLE.read_bytes()), "d.webp")},
                         content_type="multipart/form-data").json
    dice = [d["token"] for d in upload["reading"]["dice"]]
    photos = [upload["photo_id"]] + [store.add_photo(game["id"], "image/webp", SAMPLE.read_bytes(), upload["reading"])
                                     for _ in range(4)]

    def confirm(seq: int):
        body = {"player": "Ann" if seq % 2 == 0 else "Bob", "seq": seq, "dice": dice, "photo_id": photos[seq],
                "sources": list(range(len(dice)))}
        response = client.post(f"/api/games/{game['id']}/attempts", json=body)
        assert response.status_code == 201
        return response.json["dice_set"]

    for seq in range(4):
        learnt = confirm(seq)
    assert (learnt["dice"], learnt["photos"], learnt["damaged"]) == (4 * len(dice), 4, 0)
    set_id = learnt["id"]
    blobs = dict(store.learnt_photos(set_id))
    for photo_id, damage in zip(photos, (flipped, lambda _: b"", narrower)):
        store.learn_photo(photo_id, set_id, len(dice), damage(blobs[photo_id]))
    client = create_app(db_path).test_client()  # the server started again on the damaged file

    with caplog.at_level(logging.WARNING, logger="companion.server"):
        for _ in range(2):
            listed = client.get("/api/dice-sets")
            of_game = client.get(f"/api/games/{game['id']}/dice-set")
            assert listed.status_code == of_game.status_code == 200
            assert listed.json["sets"][0] == of_game.json
            assert (of_game.json["dice"], of_game.json["photos"], of_game.json["damaged"]) == (len(dice), 1, 3)
        learnt = confirm(4)  # learning goes on beside the damaged records
    assert (learnt["dice"], learnt["photos"], learnt["damaged"]) == (2 * len(dice), 2, 3)
    reports = [r.getMessage() for r in caplog.records if "cannot be used" in r.getMessage()]
    assert sorted(reports) == sorted(set(reports)) and len(reports) == 3
    assert all(f"photo {p}" in " ".join(reports) for p in photos[:3])
    # a photo read next is read with what is still sound
    again = client.post(f"/api/games/{game['id']}/photos", data={"photo": (io.BytesIO(SAMPLE.read_bytes()), "d.webp")},
                        content_type="multipart/form-data")
    assert again.status_code == 201
