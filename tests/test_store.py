"""The SQLite store: schema, persistence, and the one-attempt-per-seq guarantee."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from companion.store import SCHEMA_VERSION, Conflict, NotFound, Store, StoreError, default_db_path

CONFIG = {"players": ["Ann", "Bob"], "mode": "standard", "rules": {"natural_in_every_group": False}}


def test_new_database_is_versioned_and_in_wal_mode(db_path):
    store = Store(db_path)
    assert store.schema_version() == SCHEMA_VERSION
    assert store.journal_mode() == "wal"


def test_refuses_a_database_from_a_newer_schema(db_path):
    Store(db_path)
    with sqlite3.connect(db_path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer"):
        Store(db_path)


def test_games_and_attempts_survive_reopening(db_path):
    store = Store(db_path)
    game = store.create_game(CONFIG)
    with store.appending(game.id, 0) as (_, attempts, appender):
        assert attempts == []
        appender.append("Ann", ["7b", "7r", "7g", "3o", "3r", "Wb"])
    reopened = Store(db_path)
    record, attempts = reopened.game_and_attempts(game.id)
    assert record.config == CONFIG
    assert [(a.seq, a.player, a.dice) for a in attempts] == [(0, "Ann", ["7b", "7r", "7g", "3o", "3r", "Wb"])]


def test_stale_seq_is_a_conflict_and_records_nothing(db_path):
    store = Store(db_path)
    game = store.create_game(CONFIG)
    with store.appending(game.id, 0) as (_, _, appender):
        appender.append("Ann", ["1r"])
    with pytest.raises(Conflict, match="already recorded"):
        with store.appending(game.id, 0) as (_, _, appender):
            appender.append("Ann", ["2r"])
    with pytest.raises(Conflict, match="ahead"):
        with store.appending(game.id, 5):
            pass
    assert [a.dice for a in store.attempts(game.id)] == [["1r"]]


def test_an_error_inside_appending_rolls_back(db_path):
    store = Store(db_path)
    game = store.create_game(CONFIG)
    with pytest.raises(RuntimeError):
        with store.appending(game.id, 0) as (_, _, appender):
            appender.append("Ann", ["1r"])
            raise RuntimeError("the game refused it")
    assert store.attempts(game.id) == []


def test_racing_writers_record_one_attempt(db_path):
    """Eight threads confirm attempt 0 at once: exactly one wins, the others get Conflict."""
    store = Store(db_path)
    game = store.create_game(CONFIG)
    start = threading.Barrier(8)
    outcomes: list[str] = []

    def confirm(i: int) -> None:
        own = Store(db_path)  # a separate connection per thread, like request threads
        start.wait()
        try:
            with own.appending(game.id, 0) as (_, _, appender):
                appender.append("Ann", [f"{i + 1}r"])
            outcomes.append("recorded")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=confirm, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict"] * 7 + ["recorded"]
    assert len(store.attempts(game.id)) == 1


def test_unique_seq_holds_in_the_schema_itself(db_path):
    store = Store(db_path)
    game = store.create_game(CONFIG)
    with sqlite3.connect(db_path) as conn:
        conn.execute("INSERT INTO attempts (game_id, seq, player, dice, created_at) VALUES (?, 0, 'Ann', '[]', 0)", (game.id,))
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("INSERT INTO attempts (game_id, seq, player, dice, created_at) VALUES (?, 0, 'Bob', '[]', 0)", (game.id,))


def test_undo_removes_only_the_named_last_attempt(db_path):
    store = Store(db_path)
    game = store.create_game(CONFIG)
    for seq, player in enumerate(["Ann", "Bob"]):
        with store.appending(game.id, seq) as (_, _, appender):
            appender.append(player, ["1r"])
    with pytest.raises(Conflict, match="not the last"):
        store.undo_last(game.id, 0)
    assert store.undo_last(game.id, 1).player == "Bob"
    with pytest.raises(Conflict):
        store.undo_last(game.id, 1)  # a second tap on undo changes nothing more
    assert [a.player for a in store.attempts(game.id)] == ["Ann"]


def test_photos_keep_bytes_reading_and_confirmed_labels(db_path):
    store = Store(db_path)
    game = store.create_game(CONFIG)
    data = b"\xff\xd8\xff fake jpeg bytes \x00\x01"
    photo_id = store.add_photo(game.id, "image/jpeg", data, {"width": 4, "height": 3, "dice": []})
    assert list(store.labelled_photos()) == []  # not confirmed yet: nothing to export
    with store.appending(game.id, 0) as (_, _, appender):
        appender.append("Ann", ["7b"], photo_id, {"dice": [{"value": 7}], "unboxed": 0})
    photo = Store(db_path).get_photo(photo_id)
    assert photo.data == data and photo.mime == "image/jpeg"
    assert photo.labels == {"dice": [{"value": 7}], "unboxed": 0}
    assert [p.id for p in store.labelled_photos()] == [photo_id]
    assert store.attempts(game.id)[0].photo_id == photo_id


def test_a_photo_attached_without_labels_exports_as_a_photo_with_no_labelled_dice(db_path, tmp_path):
    from companion.cli.export_corrections import export

    store = Store(db_path)
    game = store.create_game(CONFIG)
    photo_id = store.add_photo(game.id, "image/jpeg", b"\xff\xd8", {"width": 4, "height": 3, "dice": []})
    with store.appending(game.id, 0) as (_, _, appender):
        appender.append("Ann", ["7b"], photo_id)
    assert store.get_photo(photo_id).labels == {}
    assert export(store, tmp_path / "out") == (1, 0)


def test_a_photo_from_another_game_cannot_be_attached(db_path):
    store = Store(db_path)
    one, other = store.create_game(CONFIG), store.create_game(CONFIG)
    photo_id = store.add_photo(other.id, "image/png", b"x", {"width": 1, "height": 1, "dice": []})
    with pytest.raises(NotFound):
        with store.appending(one.id, 0) as (_, _, appender):
            appender.append("Ann", ["7b"], photo_id, {"dice": []})
    assert store.attempts(one.id) == []


def test_deleting_a_game_deletes_its_attempts(db_path):
    store = Store(db_path)
    game = store.create_game(CONFIG)
    with store.appending(game.id, 0) as (_, _, appender):
        appender.append("Ann", ["1r"])
    store.delete_game(game.id)
    with pytest.raises(NotFound):
        store.get_game(game.id)
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 0
    with pytest.raises(NotFound):
        store.delete_game(game.id)


def test_games_are_listed_most_recently_played_first(db_path):
    store = Store(db_path)
    first, second = store.create_game(CONFIG), store.create_game(CONFIG)
    with store.appending(first.id, 0) as (_, _, appender):
        appender.append("Ann", ["1r"])
    assert [g.id for g in store.list_games()] == [first.id, second.id]


def test_default_path_follows_xdg_data_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_db_path() == tmp_path / "phase10-companion" / "companion.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_db_path() == tmp_path / ".local" / "share" / "phase10-companion" / "companion.sqlite3"
