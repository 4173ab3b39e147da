"""`companion serve --models DIR`: the server reads and learns with the one reader of DIR, made at
start (companion/runtime.py), through a confirmed photo and the next photo read with what it
taught. DIR's reader differs from the shipped one (another file, so another fingerprint)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from conftest import models_ready

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def other_reader(folder: Path) -> Path:
    """The shipped models with a single reader file instead of the parts: the same network joined
    into one file (training.reader_join), another file, so its fingerprint differs. The colour
    heads learnt on the shipped reader's embeddings are left out, as they would not fit."""
    from companion.vision.models import default_models_dir
    from training.reader_join import join_folder

    shutil.copytree(default_models_dir(), folder,
                    ignore=shutil.ignore_patterns("*.md", "*.py", "light_colour.json", "reader_part*.onnx"))
    join_folder(default_models_dir(), folder / "reader.onnx")
    return folder


def upload(client, game_id: str, name: str):
    return client.post(f"/api/games/{game_id}/photos", data={"photo": (io.BytesIO((SAMPLES / name).read_bytes()), name)},
                       content_type="multipart/form-data")


@pytest.mark.skipif(not models_ready(), reason="models/ has no ONNX files yet")
def test_serve_with_another_models_folder_learns_and_reads_with_its_reader(db_path, tmp_path):
    from companion.runtime import Runtime
    from companion.server import create_app
    from companion.vision.dice_reader import DiceReader

    runtime = Runtime.start({}, models_dir=other_reader(tmp_path / "models"))  # as `serve --models DIR` does
    assert runtime.reader is not None
    assert runtime.reader.fingerprint != DiceReader.load().fingerprint
    app = create_app(db_path, runtime=runtime)
    client = app.test_client()
    game = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json
    first = upload(client, game["id"], "s08_webp.webp")
    assert first.status_code == 201
    dice = [d["token"] for d in first.json["reading"]["dice"]]
    confirm = client.post(f"/api/games/{game['id']}/attempts", json={
        "player": "Ann", "seq": 0, "dice": dice, "photo_id": first.json["photo_id"],
        "sources": list(range(len(dice)))})
    assert confirm.status_code == 201
    assert client.get(f"/api/games/{game['id']}/dice-set").json["dice"] == len(dice)
    profiles = app.extensions["companion"].profiles
    learnt = profiles.profile(profiles.store.game_dice_set(game["id"]))
    assert learnt is not None and learnt.reader == runtime.reader.fingerprint
    # the next photo of the game is read with that profile, by the same reader
    second = upload(client, game["id"], "s07_png.png")
    assert second.status_code == 201, second.json
    assert len(second.json["reading"]["dice"]) > 0
