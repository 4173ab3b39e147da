"""Rebuild games from the store and shape them for the API. Every rule is the game's.

A stored game is its config plus its attempts; `replay` feeds them to `companion.game`, so
the scorepad, the next player and the end of the game always come from the rules engine.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
import threading
from collections import OrderedDict
from typing import Any, Sequence

from companion.dice import Color, DiceError, Face, parse_faces, standard_set
from companion.game import Game, house_rules_from_json
from companion.store import AttemptRecord, GameRecord
from companion.web_api.bodies import CreateGameBody


def game_config(body: CreateGameBody) -> dict[str, Any]:
    """Check a create-game request and return the config to store: the game's own checks
    (names, solitaire for one player...) refuse a bad one, and give the names as it keeps them."""
    rules = house_rules_from_json(body.rules)
    game = Game.new(body.players, body.mode, rules)
    return {"players": list(game.players), "mode": game.mode.value, "rules": dataclasses.asdict(rules)}


class ReplayCache:
    """Replaying a long game on every request costs evaluator time; keep recent results.

    Keyed by the game id and the exact attempts, so any change (another process included)
    misses the cache rather than serving a stale game. Readers share the cached game and
    must not change it; writers ask for a copy.
    """

    def __init__(self, size: int = 32):
        self._size = size
        self._lock = threading.Lock()
        self._games: OrderedDict[tuple, Game] = OrderedDict()

    def game(self, record: GameRecord, attempts: Sequence[AttemptRecord], for_update: bool = False) -> Game:
        """The replayed game; `for_update` hands out a private copy the caller may record on."""
        key = _key(record.id, attempts)
        with self._lock:
            cached = self._games.get(key)
            if cached is not None:
                self._games.move_to_end(key)
        if cached is None:
            cached = replay(record, attempts)
            with self._lock:
                self._games[key] = cached
                while len(self._games) > self._size:
                    self._games.popitem(last=False)
        return _copy(cached) if for_update else cached

    def put(self, game_id: str, attempts: Sequence[AttemptRecord], game: Game) -> None:
        """Remember a game just recorded on, so the next read need not replay it."""
        with self._lock:
            self._games[_key(game_id, attempts)] = game
            while len(self._games) > self._size:
                self._games.popitem(last=False)


def _key(game_id: str, attempts: Sequence[AttemptRecord]) -> tuple:
    return (game_id, tuple((a.seq, a.player, tuple(a.dice)) for a in attempts))


def replay(record: GameRecord, attempts: Sequence[AttemptRecord]) -> Game:
    config = record.config
    game = Game.new(config["players"], config["mode"], house_rules_from_json(config.get("rules")))
    for attempt in attempts:
        game.record(attempt.player, parse_faces(attempt.dice), as_recorded=True)
    return game


def _copy(game: Game) -> Game:
    # A pickle round trip copies without re-evaluating any attempt (and is several times
    # faster than copy.deepcopy on these small frozen dataclasses).
    return pickle.loads(pickle.dumps(game, protocol=pickle.HIGHEST_PROTOCOL))


def game_state(record: GameRecord, attempts: Sequence[AttemptRecord], game: Game) -> dict[str, Any]:
    """Everything the page shows for a game, in one JSON object."""
    nxt = game.next_player
    return {
        "id": record.id,
        "players": list(game.players),
        "mode": game.mode.value,
        "rules": dataclasses.asdict(game.rules),
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "seq": len(attempts),  # the seq the next attempt must carry
        "stage": game.stage.value,
        "next": nxt,
        "phase": game.current_phase(nxt) if nxt is not None else None,
        "in_last_chances": game.in_last_chances,
        "over": game.over,
        "winners": list(game.winners),
        "scorepad": game.scorepad().to_json(),
        "attempts": [
            {**a.to_json(), "seq": rec.seq, "photo_id": rec.photo_id, "created_at": rec.created_at}
            for a, rec in zip(game.attempts, attempts)
        ],
    }


def game_summary(record: GameRecord, attempts: Sequence[AttemptRecord], game: Game) -> dict[str, Any]:
    pad = game.scorepad()
    return {
        "id": record.id,
        "players": list(game.players),
        "mode": game.mode.value,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "attempts": len(attempts),
        "next": game.next_player,
        "over": game.over,
        "winners": list(game.winners),
        "totals": {p.name: p.total for p in pad.players},
    }


def reading_json(reading: Any) -> dict[str, Any]:
    """The reading as the page needs it: each die also with its token and outline polygon."""
    data = reading.to_json()
    for out, die in zip(data["dice"], reading.dice):
        out["token"] = die.face.token
        polygon = die.polygon
        if polygon is None:
            x0, y0, x1, y1 = die.box
            polygon = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
        out["polygon"] = [[round(float(x), 1), round(float(y), 1)] for x, y in polygon]
    return data


def photo_labels(reading: dict[str, Any], faces: Sequence[Face], sources: Sequence[Any] | None,
                 boxes: Sequence[Any] | None = None, checked: Sequence[bool] | None = None) -> dict[str, Any]:
    """The photo's final dice for the dataset: each read die as corrected, in the photo's place.

    `sources[i]` is the index of the read die that dice[i] came from, or None for a die typed
    in by hand. `boxes[i]`, for a die typed in, is where the player pointed at it on the photo
    ([x0, y0, x1, y1] in its pixels): it is labelled there (and teaches the dice set like a
    read die); one typed in without a place is counted in "unboxed" instead. Read dice that
    the player removed were not dice: they get no label. `checked[i]`: the player looked at
    die i and said what it shows (a corrected or pointed die is checked too), so learning can
    tell it from the reader's own guess.
    """
    read = reading.get("dice", [])
    if sources is None:
        sources = [None] * len(faces)
    if not isinstance(sources, list) or len(sources) != len(faces):
        raise DiceError("\"sources\" must give, for each die, the index of the read die it came from or null")
    if boxes is None:
        boxes = [None] * len(faces)
    if not isinstance(boxes, list) or len(boxes) != len(faces):
        raise DiceError("\"boxes\" must give, for each die, where it was pointed at ([x0, y0, x1, y1]) or null")
    if checked is None:
        checked = [False] * len(faces)
    if len(checked) != len(faces):
        raise DiceError("\"checked\" must give, for each die, whether the player checked it")
    labels, seen, unboxed = [], set(), 0
    for face, source, box, looked in zip(faces, sources, boxes, checked):
        if source is None and box is not None:
            labels.append(_pointed(face, box, reading))
            continue
        if source is None:
            unboxed += 1
            continue
        if isinstance(source, bool) or not isinstance(source, int) or not 0 <= source < len(read) or source in seen:
            raise DiceError(f"bad source {source!r}: each read die (0..{len(read) - 1}) may be used once")
        seen.add(source)
        die = read[source]
        labels.append({
            "die": _die_id(die.get("die"), face),
            "value": "W" if face.value is None else face.value,
            "color": face.color.value,
            "polygon": die["polygon"],
            "box": _clip(die["box"], reading["width"], reading["height"]),
            "truncated": False,
            "corrected": face.token != die.get("token"),
            "checked": bool(looked) or face.token != die.get("token"),
        })
    return {"dice": labels, "unboxed": unboxed, "removed": len(read) - len(seen)}


def pointed_box(box: Any, reading: dict[str, Any]) -> tuple[float, float, float, float]:
    """Where a die typed in was pointed at on the photo of `reading`: [x0, y0, x1, y1] inside
    it (DiceError, saying why, for anything else)."""
    width, height = reading.get("width"), reading.get("height")
    if not isinstance(box, list) or len(box) != 4 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in box):
        raise DiceError(f"bad box {box!r}: a die typed in is pointed at with [x0, y0, x1, y1] or null")
    x0, y0, x1, y1 = (float(v) for v in box)
    if not isinstance(width, int) or not isinstance(height, int):
        raise DiceError("the photo has no size to point at a die in")
    if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
        raise DiceError(f"bad box {box!r}: not inside the {width} x {height} photo")
    return x0, y0, x1, y1


def _pointed(face: Face, box: Any, reading: dict[str, Any]) -> dict[str, Any]:
    """The label of a die typed in by hand at the place the player pointed at."""
    x0, y0, x1, y1 = pointed_box(box, reading)
    return {
        "die": _die_id(None, face),
        "value": "W" if face.value is None else face.value,
        "color": face.color.value,
        "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]],
        "box": [x0, y0, x1, y1],
        "truncated": False,
        "corrected": False,
        "checked": True,
        "pointed": True,  # typed in and pointed at by a player: checked
    }


def _die_id(read_id: str | None, face: Face) -> str | None:
    dice = standard_set()
    if read_id is not None:
        try:
            if dice.die(read_id).has_face(face):
                return read_id
        except DiceError:
            pass
    # A face printed on only one die of the set pins the die down.
    candidates = dice.dice_with(face)
    return candidates[0].id if len(candidates) == 1 else None


def _clip(box: Sequence[float], width: int, height: int) -> list[float]:
    x0, y0, x1, y1 = box
    return [max(0.0, x0), max(0.0, y0), min(float(width), x1), min(float(height), y1)]


def color_names() -> list[str]:
    return [c.value for c in Color]
