"""SQLite storage for the scorepad: games as config + attempts, and the players' photos.

The attempts are the source of truth: a game's state is rebuilt by replaying them through
`companion.game`, so nothing here knows a rule. `UNIQUE(game_id, seq)` makes two devices
confirming the same attempt record it once, whatever the timing.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

SCHEMA_VERSION = 1
APP_DIR_NAME = "phase10-companion"
DB_FILE_NAME = "companion.sqlite3"

_SCHEMA = """
CREATE TABLE games (
    id          TEXT PRIMARY KEY,
    config      TEXT NOT NULL,          -- JSON: players (in turn order), mode, rules
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL
);
CREATE TABLE attempts (
    game_id     TEXT NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,       -- 0, 1, 2, ... in the order played
    player      TEXT NOT NULL,
    dice        TEXT NOT NULL,          -- JSON list of face tokens, e.g. ["7b", "Wr"]
    photo_id    INTEGER REFERENCES photos(id) ON DELETE SET NULL,
    created_at  REAL NOT NULL,
    UNIQUE (game_id, seq)
);
CREATE TABLE photos (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id     TEXT REFERENCES games(id) ON DELETE SET NULL,
    mime        TEXT NOT NULL,
    data        BLOB NOT NULL,
    reading     TEXT NOT NULL,          -- JSON: what the vision pipeline read
    labels      TEXT,                   -- JSON: the final, corrected dice (null until confirmed)
    created_at  REAL NOT NULL
);
CREATE INDEX photos_by_game ON photos(game_id);
"""


class StoreError(Exception):
    """A request the store cannot honour (unknown game, stale sequence number...)."""


class NotFound(StoreError):
    pass


class Conflict(StoreError):
    """Someone else changed the game first (another device confirmed or undid)."""


@dataclass(frozen=True, slots=True)
class GameRecord:
    id: str
    config: dict[str, Any]
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    seq: int
    player: str
    dice: list[str]
    photo_id: int | None
    created_at: float


@dataclass(frozen=True, slots=True)
class PhotoRecord:
    id: int
    game_id: str | None
    mime: str
    data: bytes
    reading: dict[str, Any]
    labels: dict[str, Any] | None  # {"dice": [...], "unboxed": n, "removed": n} once confirmed
    created_at: float


def default_db_path() -> Path:
    """$XDG_DATA_HOME/phase10-companion/companion.sqlite3, or under ~/.local/share."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / APP_DIR_NAME / DB_FILE_NAME


class Store:
    """Opens a fresh connection per call, so every request thread gets its own."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = self._connect()
        try:
            self._migrate(conn)
        finally:
            conn.close()

    # -- connections -------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN ourselves, so a write can take the lock first.
        conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 10000")
        # In WAL mode NORMAL never corrupts the database; a power cut may lose the last commit.
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        conn = self._connect()
        try:
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE: the read-check-insert of a write cannot interleave with another."""
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

    def _migrate(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA journal_mode = WAL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer companion (schema {version}, this one knows {SCHEMA_VERSION})"
            )
        if version == 0:
            # One script, one transaction: a half-made schema is never left behind.
            conn.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}PRAGMA user_version = {SCHEMA_VERSION};COMMIT;")

    def schema_version(self) -> int:
        with self._read() as conn:
            return conn.execute("PRAGMA user_version").fetchone()[0]

    def journal_mode(self) -> str:
        with self._read() as conn:
            return conn.execute("PRAGMA journal_mode").fetchone()[0]

    # -- games ---------------------------------------------------------------------------

    def create_game(self, config: dict[str, Any]) -> GameRecord:
        now = time.time()
        game_id = secrets.token_urlsafe(6)
        with self._write() as conn:
            conn.execute(
                "INSERT INTO games (id, config, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (game_id, json.dumps(config), now, now),
            )
        return GameRecord(game_id, config, now, now)

    def get_game(self, game_id: str) -> GameRecord:
        with self._read() as conn:
            row = conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
        if row is None:
            raise NotFound(f"no game {game_id!r}")
        return _game(row)

    def list_games(self) -> list[GameRecord]:
        with self._read() as conn:
            rows = conn.execute("SELECT * FROM games ORDER BY updated_at DESC").fetchall()
        return [_game(r) for r in rows]

    def delete_game(self, game_id: str) -> None:
        with self._write() as conn:
            if conn.execute("DELETE FROM games WHERE id = ?", (game_id,)).rowcount == 0:
                raise NotFound(f"no game {game_id!r}")

    # -- attempts ------------------------------------------------------------------------

    def attempts(self, game_id: str) -> list[AttemptRecord]:
        with self._read() as conn:
            return _attempts(conn, game_id)

    def game_and_attempts(self, game_id: str) -> tuple[GameRecord, list[AttemptRecord]]:
        """One consistent snapshot of a game (a single read transaction)."""
        with self._read() as conn:
            conn.execute("BEGIN")
            row = conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
            if row is None:
                conn.execute("ROLLBACK")
                raise NotFound(f"no game {game_id!r}")
            attempts = _attempts(conn, game_id)
            conn.execute("ROLLBACK")
        return _game(row), attempts

    @contextmanager
    def appending(self, game_id: str, seq: int) -> Iterator[tuple[GameRecord, list[AttemptRecord], "_Appender"]]:
        """Hold the write lock while the caller replays the game and decides; then append.

        Raises Conflict when `seq` is not the next sequence number: another device got there first.
        """
        with self._write() as conn:
            row = conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
            if row is None:
                raise NotFound(f"no game {game_id!r}")
            attempts = _attempts(conn, game_id)
            if seq != len(attempts):
                raise Conflict(
                    f"this turn was already recorded from another device (attempt {seq + 1} exists); "
                    "the scorepad has been refreshed"
                    if seq < len(attempts)
                    else f"attempt {seq + 1} is ahead of the game ({len(attempts)} recorded); refresh the page"
                )
            yield _game(row), attempts, _Appender(conn, game_id, seq)

    def undo_last(self, game_id: str, seq: int) -> AttemptRecord:
        """Delete attempt `seq` if it is still the last one (so a double tap undoes once)."""
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone() is None:
                raise NotFound(f"no game {game_id!r}")
            attempts = _attempts(conn, game_id)
            if not attempts:
                raise Conflict("there is no attempt to undo")
            last = attempts[-1]
            if last.seq != seq:
                raise Conflict(
                    f"attempt {seq + 1} is not the last one any more (the last is {last.seq + 1}); "
                    "the scorepad has been refreshed"
                )
            conn.execute("DELETE FROM attempts WHERE game_id = ? AND seq = ?", (game_id, seq))
            conn.execute("UPDATE games SET updated_at = ? WHERE id = ?", (time.time(), game_id))
        return last

    # -- photos --------------------------------------------------------------------------

    def add_photo(self, game_id: str | None, mime: str, data: bytes, reading: dict[str, Any]) -> int:
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO photos (game_id, mime, data, reading, created_at) VALUES (?, ?, ?, ?, ?)",
                (game_id, mime, data, json.dumps(reading), time.time()),
            )
            assert cur.lastrowid is not None, "an INSERT sets lastrowid"
            return cur.lastrowid

    def get_photo(self, photo_id: int) -> PhotoRecord:
        with self._read() as conn:
            row = conn.execute("SELECT * FROM photos WHERE id = ?", (photo_id,)).fetchone()
        if row is None:
            raise NotFound(f"no photo {photo_id}")
        return _photo(row)

    def labelled_photos(self) -> Iterator[PhotoRecord]:
        """Every photo whose dice were confirmed, oldest first (for export-corrections)."""
        with self._read() as conn:
            ids = [r[0] for r in conn.execute("SELECT id FROM photos WHERE labels IS NOT NULL ORDER BY id")]
        for photo_id in ids:  # one at a time: photos can be large
            yield self.get_photo(photo_id)


class _Appender:
    """Handed out by Store.appending: inserts the one attempt inside the held transaction."""

    def __init__(self, conn: sqlite3.Connection, game_id: str, seq: int):
        self._conn, self._game_id, self._seq = conn, game_id, seq

    def append(self, player: str, dice: list[str], photo_id: int | None = None,
               labels: dict[str, Any] | None = None) -> AttemptRecord:
        now = time.time()
        conn = self._conn
        if photo_id is not None:
            row = conn.execute("SELECT game_id FROM photos WHERE id = ?", (photo_id,)).fetchone()
            if row is None or row["game_id"] != self._game_id:
                raise NotFound(f"no photo {photo_id} in this game")
            conn.execute("UPDATE photos SET labels = ? WHERE id = ?", (json.dumps(labels or {}), photo_id))
        try:
            conn.execute(
                "INSERT INTO attempts (game_id, seq, player, dice, photo_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (self._game_id, self._seq, player, json.dumps(dice), photo_id, now),
            )
        except sqlite3.IntegrityError:  # belt and braces: the lock already made this impossible
            raise Conflict("this turn was already recorded from another device") from None
        conn.execute("UPDATE games SET updated_at = ? WHERE id = ?", (now, self._game_id))
        return AttemptRecord(self._seq, player, dice, photo_id, now)


def _game(row: sqlite3.Row) -> GameRecord:
    return GameRecord(row["id"], json.loads(row["config"]), row["created_at"], row["updated_at"])


def _attempts(conn: sqlite3.Connection, game_id: str) -> list[AttemptRecord]:
    rows = conn.execute(
        "SELECT seq, player, dice, photo_id, created_at FROM attempts WHERE game_id = ? ORDER BY seq", (game_id,)
    ).fetchall()
    return [AttemptRecord(r["seq"], r["player"], json.loads(r["dice"]), r["photo_id"], r["created_at"]) for r in rows]


def _photo(row: sqlite3.Row) -> PhotoRecord:
    labels = json.loads(row["labels"]) if row["labels"] is not None else None
    return PhotoRecord(row["id"], row["game_id"], row["mime"], bytes(row["data"]), json.loads(row["reading"]),
                       labels, row["created_at"])
