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

SCHEMA_VERSION = 3
DEFAULT_DICE_SET = "Our dice"  # the set a scorepad starts with
MAX_SET_NAME = 40
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

# Schema 2: dice sets and what each learnt from its confirmed photos (companion/profile_api.py).
_SCHEMA_2 = """
CREATE TABLE dice_sets (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    created_at  REAL NOT NULL
);
ALTER TABLE games ADD COLUMN dice_set_id INTEGER REFERENCES dice_sets(id) ON DELETE SET NULL;
CREATE TABLE profile_photos (
    photo_id    INTEGER PRIMARY KEY REFERENCES photos(id) ON DELETE CASCADE,
    set_id      INTEGER NOT NULL REFERENCES dice_sets(id) ON DELETE CASCADE,
    dice        INTEGER NOT NULL,       -- how many dice the photo taught
    learnt      BLOB NOT NULL,          -- those dice, a one-photo profile (companion/vision/profile.py)
    created_at  REAL NOT NULL
);
CREATE INDEX profile_photos_by_set ON profile_photos(set_id);
"""


# Schema 3: the turn being played, as one page left it (its photo, roll and dice), so that a
# reload or another phone picks it up where it was.
_SCHEMA_3 = """
CREATE TABLE turns (
    game_id     TEXT PRIMARY KEY REFERENCES games(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,       -- the attempt it will be: stale once another is recorded
    state       TEXT NOT NULL,          -- JSON: roll, photo_id, dice (token, source, checked)
    updated_at  REAL NOT NULL
);
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
    dice_set_id: int | None = None  # the dice set the game is played with (None: the first set)


@dataclass(frozen=True, slots=True)
class DiceSetRecord:
    id: int
    name: str
    dice: int  # dice learnt from confirmed photos
    photos: int  # photos they came from
    created_at: float


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
            conn.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}PRAGMA user_version = 1;COMMIT;")
            version = 1
        if version == 1:
            name = DEFAULT_DICE_SET.replace("'", "''")
            conn.executescript(f"BEGIN IMMEDIATE;{_SCHEMA_2}INSERT INTO dice_sets (name, created_at) "
                               f"VALUES ('{name}', {time.time()!r});PRAGMA user_version = 2;COMMIT;")
            version = 2
        if version == 2:
            conn.executescript(f"BEGIN IMMEDIATE;{_SCHEMA_3}PRAGMA user_version = 3;COMMIT;")

    def schema_version(self) -> int:
        with self._read() as conn:
            return conn.execute("PRAGMA user_version").fetchone()[0]

    def journal_mode(self) -> str:
        with self._read() as conn:
            return conn.execute("PRAGMA journal_mode").fetchone()[0]

    # -- games ---------------------------------------------------------------------------

    def create_game(self, config: dict[str, Any], dice_set_id: int | None = None) -> GameRecord:
        """A new game, played with dice set `dice_set_id` (None: the scorepad's first set)."""
        now = time.time()
        game_id = secrets.token_urlsafe(6)
        with self._write() as conn:
            set_id = _dice_set_id(conn, dice_set_id)
            conn.execute(
                "INSERT INTO games (id, config, created_at, updated_at, dice_set_id) VALUES (?, ?, ?, ?, ?)",
                (game_id, json.dumps(config), now, now, set_id),
            )
        return GameRecord(game_id, config, now, now, set_id)

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
            if last.photo_id is not None:  # what its photo taught the dice set goes with it
                conn.execute("DELETE FROM profile_photos WHERE photo_id = ?", (last.photo_id,))
            conn.execute("UPDATE games SET updated_at = ? WHERE id = ?", (time.time(), game_id))
        return last

    # -- the turn being played -------------------------------------------------------------

    def save_turn(self, game_id: str, seq: int, state: dict[str, Any]) -> None:
        """Keep the unconfirmed turn `seq` of a game (Conflict once that attempt is recorded)."""
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone() is None:
                raise NotFound(f"no game {game_id!r}")
            recorded = len(_attempts(conn, game_id))
            if seq != recorded:
                raise Conflict(f"attempt {seq + 1} is not the one being played (the next is {recorded + 1}); "
                               "the scorepad has been refreshed")
            photo_id = state.get("photo_id")
            if photo_id is not None:
                row = conn.execute("SELECT game_id FROM photos WHERE id = ?", (photo_id,)).fetchone()
                if row is None or row["game_id"] != game_id:
                    raise NotFound(f"no photo {photo_id} in this game")
            conn.execute("INSERT OR REPLACE INTO turns (game_id, seq, state, updated_at) VALUES (?, ?, ?, ?)",
                         (game_id, seq, json.dumps(state), time.time()))

    def turn(self, game_id: str, seq: int) -> dict[str, Any] | None:
        """The kept state of turn `seq`, or None (none kept, or kept for another attempt)."""
        with self._read() as conn:
            row = conn.execute("SELECT seq, state FROM turns WHERE game_id = ?", (game_id,)).fetchone()
        if row is None or row["seq"] != seq:
            return None
        return json.loads(row["state"])

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
        if not _can_be_id(photo_id):
            raise NotFound(f"no photo {photo_id}")
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


    # -- dice sets and what they learnt --------------------------------------------------

    def dice_sets(self) -> list[DiceSetRecord]:
        with self._read() as conn:
            rows = conn.execute(_SETS + " GROUP BY s.id ORDER BY s.id").fetchall()
        return [_dice_set(r) for r in rows]

    def dice_set(self, set_id: int | None) -> DiceSetRecord:
        """The set (None: the scorepad's first)."""
        with self._read() as conn:
            set_id = _dice_set_id(conn, set_id)
            row = conn.execute(_SETS + " WHERE s.id = ? GROUP BY s.id", (set_id,)).fetchone()
        return _dice_set(row)

    def create_dice_set(self, name: str) -> DiceSetRecord:
        name = _set_name(name)
        now = time.time()
        with self._write() as conn:
            try:
                cur = conn.execute("INSERT INTO dice_sets (name, created_at) VALUES (?, ?)", (name, now))
            except sqlite3.IntegrityError:
                raise Conflict(f"there is already a dice set called {name!r}") from None
        return DiceSetRecord(_row_id(cur), name, 0, 0, now)

    def rename_dice_set(self, set_id: int, name: str) -> DiceSetRecord:
        name = _set_name(name)
        if not _can_be_id(set_id):
            raise NotFound(f"no dice set {set_id}")
        with self._write() as conn:
            try:
                if conn.execute("UPDATE dice_sets SET name = ? WHERE id = ?", (name, set_id)).rowcount == 0:
                    raise NotFound(f"no dice set {set_id}")
            except sqlite3.IntegrityError:
                raise Conflict(f"there is already a dice set called {name!r}") from None
        return self.dice_set(set_id)

    def game_dice_set(self, game_id: str) -> int:
        """The id of the dice set a game is played with."""
        with self._read() as conn:
            row = conn.execute("SELECT dice_set_id FROM games WHERE id = ?", (game_id,)).fetchone()
            if row is None:
                raise NotFound(f"no game {game_id!r}")
            return _dice_set_id(conn, row["dice_set_id"], missing_ok=True)

    def learn_photo(self, photo_id: int, set_id: int, dice: int, learnt: bytes) -> None:
        """Record what a confirmed photo taught a set (replacing what it taught before), if the
        photo's attempt still stands: an attempt undone meanwhile teaches nothing."""
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM attempts WHERE photo_id = ?", (photo_id,)).fetchone() is None:
                return
            _dice_set_id(conn, set_id)
            conn.execute("INSERT OR REPLACE INTO profile_photos (photo_id, set_id, dice, learnt, created_at) "
                         "VALUES (?, ?, ?, ?, ?)", (photo_id, set_id, dice, learnt, time.time()))

    def learnt_photos(self, set_id: int) -> list[tuple[int, bytes]]:
        """(photo id, what it taught) for each photo a set learnt from, oldest first."""
        with self._read() as conn:
            rows = conn.execute("SELECT photo_id, learnt FROM profile_photos WHERE set_id = ? ORDER BY created_at, "
                                "photo_id", (set_id,)).fetchall()
        return [(int(r["photo_id"]), bytes(r["learnt"])) for r in rows]

    def learnt_photo_ids(self, set_id: int) -> tuple[int, ...]:
        """The photos a set learnt from (cheap: tells whether a cached profile is current)."""
        with self._read() as conn:
            rows = conn.execute("SELECT photo_id FROM profile_photos WHERE set_id = ? ORDER BY created_at, photo_id",
                                (set_id,)).fetchall()
        return tuple(int(r[0]) for r in rows)

    def reset_profile(self, set_id: int) -> int:
        """Forget everything a set learnt; returns how many dice were forgotten."""
        with self._write() as conn:
            _dice_set_id(conn, set_id)
            row = conn.execute("SELECT COALESCE(SUM(dice), 0) FROM profile_photos WHERE set_id = ?", (set_id,)).fetchone()
            conn.execute("DELETE FROM profile_photos WHERE set_id = ?", (set_id,))
        return int(row[0])


_SETS = ("SELECT s.id, s.name, s.created_at, COALESCE(SUM(p.dice), 0) AS dice, COUNT(p.photo_id) AS photos "
         "FROM dice_sets s LEFT JOIN profile_photos p ON p.set_id = s.id")


def _dice_set(row: sqlite3.Row) -> DiceSetRecord:
    return DiceSetRecord(int(row["id"]), row["name"], int(row["dice"]), int(row["photos"]), row["created_at"])


def _can_be_id(row_id: int) -> bool:
    """SQLite's row ids are positive 64-bit integers: a number outside that range names no row
    (and binding it would raise OverflowError rather than find nothing)."""
    return 0 < row_id < 2**63


def _dice_set_id(conn: sqlite3.Connection, set_id: int | None, missing_ok: bool = False) -> int:
    """`set_id` checked (NotFound), or the first set's for None (or a set deleted, if missing_ok)."""
    if set_id is not None:
        if _can_be_id(set_id) and conn.execute("SELECT 1 FROM dice_sets WHERE id = ?", (set_id,)).fetchone():
            return int(set_id)
        if not missing_ok:
            raise NotFound(f"no dice set {set_id}")
    row = conn.execute("SELECT MIN(id) FROM dice_sets").fetchone()
    if row[0] is None:  # every set deleted by hand: start again with the default one
        cur = conn.execute("INSERT INTO dice_sets (name, created_at) VALUES (?, ?)", (DEFAULT_DICE_SET, time.time()))
        return _row_id(cur)
    return int(row[0])


def _row_id(cur: sqlite3.Cursor) -> int:
    if cur.lastrowid is None:  # an INSERT always sets it
        raise StoreError("the database gave no id for the new row")
    return int(cur.lastrowid)


def _set_name(name: str) -> str:
    name = " ".join(str(name).split())
    if not name:
        raise StoreError("a dice set needs a name")
    if len(name) > MAX_SET_NAME:
        raise StoreError(f"a dice set's name has at most {MAX_SET_NAME} characters")
    return name


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
    return GameRecord(row["id"], json.loads(row["config"]), row["created_at"], row["updated_at"], row["dice_set_id"])


def _attempts(conn: sqlite3.Connection, game_id: str) -> list[AttemptRecord]:
    rows = conn.execute(
        "SELECT seq, player, dice, photo_id, created_at FROM attempts WHERE game_id = ? ORDER BY seq", (game_id,)
    ).fetchall()
    return [AttemptRecord(r["seq"], r["player"], json.loads(r["dice"]), r["photo_id"], r["created_at"]) for r in rows]


def _photo(row: sqlite3.Row) -> PhotoRecord:
    labels = json.loads(row["labels"]) if row["labels"] is not None else None
    return PhotoRecord(row["id"], row["game_id"], row["mime"], bytes(row["data"]), json.loads(row["reading"]),
                       labels, row["created_at"])
