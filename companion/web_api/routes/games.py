"""Games: create, list, read, delete, record and undo attempts, upload photos, live updates."""

from __future__ import annotations

import json

from flask import Blueprint, Response, jsonify, request

from companion.dice import parse_faces
from companion.game import GameError
from companion.store import NotFound
from companion.web_api import context
from companion.web_api.bodies import ApiError, AttemptBody, CreateGameBody, TurnBody, parse, sentence
from companion.web_api.broadcast import CLIENT_GONE, Busy, busy_stream
from companion.web_api.export import file_name, scorepad_csv
from companion.web_api.games import game_config, game_state, game_summary, photo_labels, reading_json
from companion.web_api.guards import takes_photo
from companion.web_api.photos import check_frame_size, frame_shows_hand, uploaded_photo
from companion.web_api.routes.dice_sets import learn_confirmed, profile_for_game
from companion.web_api.settings import MAX_FRAME_BYTES, MAX_HELD_BYTES
from companion.web_api.turns import turn_state, turn_view

bp = Blueprint("games", __name__, url_prefix="/api/games")
STREAM_RETRY_S = 5  # a refused live stream: when to try again


def _load(game_id: str):
    record, attempts = context.store().game_and_attempts(game_id)
    return record, attempts, context.cache().game(record, attempts)


def _state(game_id: str) -> dict:
    return game_state(*_load(game_id))


def _announce(game_id: str) -> dict:
    current = _state(game_id)
    context.events().publish(game_id, "state", current)
    return current


@bp.get("")
def list_games():
    out = []
    for record in context.store().list_games():
        try:
            out.append(game_summary(*_load(record.id)))
        except NotFound:  # deleted meanwhile
            continue
    return jsonify({"games": out})


@bp.post("")
def create_game():
    body = parse(CreateGameBody)
    record = context.store().create_game(game_config(body), body.dice_set)
    return jsonify(_state(record.id)), 201


@bp.get("/<game_id>")
def get_game(game_id: str):
    """The game; with ?download=1 as a file (`companion replay` reads it back). The turn being
    played comes with it, as a page left it: its photo, roll and dice."""
    state = _state(game_id)
    if request.args.get("download"):
        record, _attempts, game = _load(game_id)
        return _download(json.dumps(state, indent=1), "application/json", file_name(game, record.created_at, "json"))
    kept = context.store().turn(game_id, state["seq"])
    state["turn"] = turn_view(kept, context.store()) if kept else None
    return jsonify(state)


@bp.get("/<game_id>/scorepad.csv")
def scorepad_file(game_id: str):
    record, _attempts, game = _load(game_id)
    return _download(scorepad_csv(game), "text/csv", file_name(game, record.created_at, "csv"))


def _download(text: str, mime: str, name: str) -> Response:
    response = Response(text, mimetype=mime)
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@bp.put("/<game_id>/turn")
def keep_turn(game_id: str):
    """Keep the turn being played (its photo, roll and dice) until it is confirmed."""
    body = parse(TurnBody)
    store = context.store()
    # the photo's size, for a die pointed at on it (a photo of no game of this one: 404 below)
    pointed = any(d.box is not None for d in body.dice)
    reading = store.get_photo(body.photo_id).reading if body.photo_id is not None and pointed else None
    store.save_turn(game_id, body.seq, turn_state(body, reading))
    return jsonify({"kept": body.seq})


@bp.delete("/<game_id>")
def delete_game(game_id: str):
    context.store().delete_game(game_id)
    context.events().publish(game_id, "deleted", {"id": game_id})
    return jsonify({"deleted": game_id})


@bp.get("/<game_id>/events")
def game_events(game_id: str):
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    try:
        # The state is read after subscribing, so no change falls between the two; no game: 404.
        stream = context.events().stream(game_id, lambda: ("state", _state(game_id)),
                                         request.environ.get(CLIENT_GONE))
    except Busy as exc:
        message = (f"The scorepad is busy: {exc}. Live updates resume when a page closes; "
                   f"try again in {STREAM_RETRY_S} s.")
        if request.accept_mimetypes.best == "text/event-stream":
            # A browser's EventSource gives up on an error status, but reconnects by itself
            # after a stream that ends: so it gets one that says when.
            return Response(busy_stream(message, STREAM_RETRY_S), mimetype="text/event-stream", headers=headers)
        raise ApiError(503, message, {"Retry-After": str(STREAM_RETRY_S)}) from None
    return Response(stream, mimetype="text/event-stream", headers=headers)


@bp.post("/<game_id>/attempts")
def record_attempt(game_id: str):
    body = parse(AttemptBody)
    seq, player, photo_id = body.seq, body.player, body.photo_id
    dice = parse_faces(body.dice)
    store, cache = context.store(), context.cache()
    with store.appending(game_id, seq) as (record, attempts, appender):
        game = cache.game(record, attempts, for_update=True)
        try:
            attempt = game.record(player, dice)
        except GameError as exc:
            raise ApiError(409, sentence(str(exc))) from None
        labels = None
        if photo_id is not None:
            photo = store.get_photo(photo_id)
            labels = photo_labels(photo.reading, dice, body.sources, body.boxes, body.checked)
        added = appender.append(attempt.player, [f.token for f in dice], photo_id, labels)
    cache.put(game_id, [*attempts, added], game)
    # The confirmed photo teaches the game's dice set once the turn is safely recorded, and
    # before the live update, so every page shows what was learnt from it.
    learnt = learn_confirmed(game_id, photo_id) if photo_id is not None else None
    current = _announce(game_id)
    return jsonify({"attempt": {**attempt.to_json(), "seq": seq}, "game": current, "dice_set": learnt}), 201


@bp.delete("/<game_id>/attempts/<int:seq>")
def undo_attempt(game_id: str, seq: int):
    undone = context.store().undo_last(game_id, seq)
    current = _announce(game_id)
    return jsonify({"undone": {"seq": undone.seq, "player": undone.player, "dice": undone.dice},
                    "game": current})


@bp.post("/<game_id>/photos")
@takes_photo
def upload_photo(game_id: str):
    context.store().get_game(game_id)  # 404 first: an unknown game should not cost a model run
    data, mime = uploaded_photo()
    reading = reading_json(context.photos()(data, profile_for_game(game_id)))
    return _kept_photo(game_id, mime, data, reading)


@bp.post("/<game_id>/held-photos")
@takes_photo
def hold_photo(game_id: str):
    """A live view's photo, read in full as any photo and held (not kept) until the page keeps it."""
    context.store().get_game(game_id)
    data, mime = uploaded_photo(MAX_HELD_BYTES)
    read = context.photos()(data, profile_for_game(game_id))
    reading = reading_json(read)
    token = context.held().hold(game_id, data, mime, reading)
    hand = frame_shows_hand(data, read, context.photos().hand_levels())
    return jsonify({"reading": reading, "hand": hand, "held": token})


@bp.post("/<game_id>/held-photos/<token>")
def keep_held_photo(game_id: str, token: str):
    """Keep the held photo as this game's photo, read as it was: the answer of a photo upload."""
    context.store().get_game(game_id)
    held = context.held().take(game_id, token)
    if held is None:
        raise ApiError(404, "That photo is no longer held (another one replaced it, or it waited too long): "
                            "take it again. Nothing was changed.")
    return _kept_photo(game_id, held.mime, held.data, held.reading)


def _kept_photo(game_id: str, mime: str, data: bytes, reading: dict):
    """The photo kept as the game's, and the answer of its upload: its id, address and reading."""
    photo_id = context.store().add_photo(game_id, mime, data, reading)
    return jsonify({"photo_id": photo_id, "url": f"/api/photos/{photo_id}", "reading": reading}), 201


@bp.post("/<game_id>/frames")
@takes_photo
def read_frame(game_id: str):
    """A live view's frame, read by the same reader and kept nowhere."""
    context.store().get_game(game_id)
    data, _ = uploaded_photo(MAX_FRAME_BYTES)
    check_frame_size(data)
    reading = context.photos()(data, profile_for_game(game_id), frame=True)
    hand = frame_shows_hand(data, reading, context.photos().hand_levels())
    return jsonify({"reading": reading_json(reading), "hand": hand})

