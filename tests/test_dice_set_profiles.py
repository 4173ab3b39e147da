"""Dice sets in the scorepad's database: the migration, naming, a game's set, and what a set
learns from confirmed photos (learning, undo, reset) with the real ONNX reader."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from companion.store import _SCHEMA, DEFAULT_DICE_SET, SCHEMA_VERSION, Conflict, NotFound, Store, StoreError
from companion.table_profiles import TableProfiles, confirmed_dice
from companion.vision.dice_reader import DiceReader
from companion.vision.models import models_present

CONFIG = {"players": ["Ann", "Bob"], "mode": "standard", "rules": {"natural_in_every_group": False}}
SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def test_a_schema_1_scorepad_is_migrated_and_keeps_its_games(db_path):
    with sqlite3.connect(db_path) as conn:
        conn.executescript(f"{_SCHEMA}PRAGMA user_version = 1;")
        conn.execute("INSERT INTO games (id, config, created_at, updated_at) VALUES ('old', ?, 1.0, 1.0)",
                     (json.dumps(CONFIG),))
    store = Store(db_path)
    assert store.schema_version() == SCHEMA_VERSION == 3
    (first,) = store.dice_sets()
    assert first.name == DEFAULT_DICE_SET and first.dice == 0
    assert store.get_game("old").config == CONFIG
    assert store.game_dice_set("old") == first.id  # a game from before plays with the first set
    Store(db_path)  # opening again migrates nothing twice
    assert len(store.dice_sets()) == 1


def test_sets_can_be_named_and_a_new_game_picks_its_set(db_path):
    store = Store(db_path)
    first = store.dice_sets()[0]
    travel = store.create_dice_set("  Travel   set ")
    assert travel.name == "Travel set"
    with pytest.raises(Conflict, match="already"):
        store.create_dice_set("Travel set")
    with pytest.raises(StoreError, match="name"):
        store.create_dice_set("   ")
    assert store.rename_dice_set(first.id, "Grandma's dice").name == "Grandma's dice"
    with pytest.raises(NotFound):
        store.rename_dice_set(999, "x")
    game = store.create_game(CONFIG, travel.id)
    assert store.game_dice_set(game.id) == travel.id and store.get_game(game.id).dice_set_id == travel.id
    assert store.game_dice_set(store.create_game(CONFIG).id) == first.id
    with pytest.raises(NotFound, match="dice set"):
        store.create_game(CONFIG, 999)


def _confirmed_photo(store: Store, game_id: str, seq: int, sample: str) -> int:
    """A photo uploaded to the game and confirmed with an attempt, as the server does."""
    row = next(json.loads(line) for line in (SAMPLES / "labels.jsonl").read_text().splitlines() if sample in line)
    photo_id = store.add_photo(game_id, "image/jpeg", (SAMPLES / sample).read_bytes(), {"dice": []})
    labels = {"dice": [{"value": d["value"], "color": d["color"], "box": d["box"]} for d in row["dice"]],
              "unboxed": 0, "removed": 0}
    with store.appending(game_id, seq) as (_, _, appender):
        appender.append("Ann" if seq % 2 == 0 else "Bob", [], photo_id, labels)
    return photo_id


def test_learnt_photos_are_counted_undone_with_their_attempt_and_reset(db_path):
    store = Store(db_path)
    set_id = store.dice_sets()[0].id
    game = store.create_game(CONFIG)
    first = _photo_only(store, game.id, 0)
    second = _photo_only(store, game.id, 1)
    store.learn_photo(first, set_id, 7, b"one")
    store.learn_photo(second, set_id, 3, b"two")
    assert (store.dice_set(set_id).dice, store.dice_set(set_id).photos) == (10, 2)
    assert store.learnt_photo_ids(set_id) == (first, second)
    store.undo_last(game.id, 1)
    assert store.learnt_photos(set_id) == [(first, b"one")]
    store.learn_photo(second, set_id, 3, b"two")  # its attempt is gone: it teaches nothing now
    assert store.dice_set(set_id).dice == 7
    assert store.reset_profile(set_id) == 7
    assert store.dice_set(set_id).dice == 0 and store.learnt_photos(set_id) == []
    with pytest.raises(NotFound):
        store.reset_profile(999)


def _photo_only(store: Store, game_id: str, seq: int) -> int:
    photo_id = store.add_photo(game_id, "image/jpeg", b"jpeg", {"dice": []})
    with store.appending(game_id, seq) as (_, _, appender):
        appender.append("Ann" if seq % 2 == 0 else "Bob", ["1r"], photo_id, {"dice": []})
    return photo_id


def test_only_boxed_confirmed_dice_are_learnt():
    labels = {"dice": [{"value": "W", "color": "blue", "box": [1, 2, 30, 40]},
                       {"value": 7, "color": "red", "box": [50, 2, 80, 40]}], "unboxed": 1}
    dice = confirmed_dice(labels)
    assert [(d.face.token, d.box) for d in dice] == [("Wb", (1.0, 2.0, 30.0, 40.0)), ("7r", (50.0, 2.0, 80.0, 40.0))]
    assert confirmed_dice(None) == []


@pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
def test_a_set_learns_from_confirmed_photos_forgets_an_undone_one_and_resets(db_path):
    store = Store(db_path)
    profiles = TableProfiles(store, DiceReader.load())
    set_id = store.dice_sets()[0].id
    game = store.create_game(CONFIG)
    photos = []
    for seq, sample in enumerate(("s04_pearl_3.jpg", "s07_png.png", "s08_webp.webp")):
        photos.append(_confirmed_photo(store, game.id, seq, sample))
        assert profiles.learn(photos[-1], store.game_dice_set(game.id)) > 0
    summary = profiles.summary(set_id)
    assert (summary.dice, summary.photos) == (3 + 5 + 8, 3)
    profile = profiles.profile(set_id)
    assert len(profile) == 16 and profile.photos == tuple(f"photo {p}" for p in photos)
    assert profiles.profile(set_id) is profile  # kept while the learnt photos stay the same
    store.undo_last(game.id, 2)
    assert len(profiles.profile(set_id)) == 8 and profiles.summary(set_id).dice == 8
    store.reset_profile(set_id)
    assert profiles.profile(set_id) is None and profiles.summary(set_id).dice == 0
