"""The OpenAPI 3.1 description of the scorepad API, served at /api/openapi.json.

Every request body and answer schema is made from the typed models the server parses and
answers with (companion/web_api/bodies.py, answers.py); this module lists the routes, their
status codes and the links between them. Every number a rule defines comes from the core.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from companion.dice import MAX_DICE
from companion.web_api import answers, bodies
from companion.web_api.settings import MAX_PHOTO_BYTES

BODIES: tuple[type[BaseModel], ...] = (bodies.EvaluateBody, bodies.AdviseBody, bodies.FirstPlayerBody,
                                       bodies.CreateGameBody, bodies.AttemptBody, bodies.DiceSetBody, bodies.TurnBody)
_PHOTO_MB = f"{MAX_PHOTO_BYTES // (1024 * 1024)} MB"
_PHOTO_BODY = {
    "required": True,
    "content": {"multipart/form-data": {"schema": {
        "type": "object", "required": ["photo"],
        "properties": {"photo": {"type": "string", "format": "binary", "description": f"JPEG, PNG or WebP, at most {_PHOTO_MB}"}},
    }}},
}
_GAME_ID = {"name": "game_id", "in": "path", "required": True, "schema": {"type": "string"}}
_SET_ID = {"name": "set_id", "in": "path", "required": True, "schema": {"type": "integer"}}
_SEQ = {"name": "seq", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 0}}
_PHOTO_ID = {"name": "photo_id", "in": "path", "required": True, "schema": {"type": "integer"}}


@lru_cache(maxsize=1)
def _schemas() -> dict[str, Any]:
    """Every model's JSON schema, by name, its references into components/schemas."""
    _, top = models_json_schema([(m, "validation") for m in (*BODIES, *answers.ANSWERS)],
                                ref_template="#/components/schemas/{model}")
    return {**top["$defs"], "Token": bodies.TOKEN_SCHEMA}


def _json(model: type[BaseModel], description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}


def _err(description: str) -> dict[str, Any]:
    return _json(answers.Error, description)


def _body(model: type[BaseModel]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _schemas()[model.__name__]}}}


def _paths() -> dict[str, Any]:
    game, dice_set = answers.Game, answers.DiceSet
    photo_refusals = {"413": _err(f"over {_PHOTO_MB}"), "422": _err("not an image, a broken one, or unreadable"),
                      "503": _err("dice reader unavailable")}
    return {
        "/api/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI"}}}},
        "/api/info": {"get": {"summary": "Phases, colours and limits the page needs",
                              "responses": {"200": {"description": "info"}}}},
        "/api/evaluate": {"post": {
            "summary": "Evaluate dice for a phase (live evaluation on the turn screen): any faces, even ones the "
                       "set cannot show at once",
            "requestBody": _body(bodies.EvaluateBody),
            "responses": {"200": _json(answers.Evaluation, "the best arrangement, whether the set can show "
                                                           "the dice at once, and the doubts worth asking"),
                          "400": _err("bad phase, dice token or doubt")}}},
        "/api/advise": {"post": {
            "summary": "The roll advisor: which dice to keep after roll 1 or 2, with the odds",
            "requestBody": _body(bodies.AdviseBody),
            "responses": {"200": _json(answers.Advice, "the three plans"),
                          "400": _err(f"bad phase, dice token, rolls_left, not {MAX_DICE} dice, "
                                      "or faces the dice set cannot show at once")}}},
        "/api/first-player": {"post": {
            "summary": "Decide who starts from one high-die roll per player (seating order)",
            "requestBody": _body(bodies.FirstPlayerBody),
            "responses": {"200": _json(answers.FirstPlayer, "the turn order, or who is tied"),
                          "400": _err("bad rolls, or names no game takes")}}},
        "/api/read": {"post": {
            "summary": "Read the dice in a photo without keeping it (the starter roll)",
            "requestBody": _PHOTO_BODY,
            "responses": {"200": _json(answers.ReadOnly, "the reading"), "400": _err("no photo field"),
                          **photo_refusals}}},
        "/api/games": {
            "get": {"summary": "List games, most recently played first",
                    "responses": {"200": _json(answers.Games, "games")}},
            "post": {"summary": "Create a game; players are given in turn order",
                     "requestBody": _body(bodies.CreateGameBody),
                     "responses": {"201": _json(game, "the new game"), "400": _err("bad players, mode or rules"),
                                   "404": _err("no such dice set")}}},
        "/api/games/{game_id}": {
            "parameters": [_GAME_ID],
            "get": {"summary": "A game: scorepad, next player and phase, attempts, the turn being played; "
                               "with download=1 as a file (`companion replay` reads it)",
                    "parameters": [{"name": "download", "in": "query", "schema": {"type": "string"}}],
                    "responses": {"200": _json(answers.KeptGame, "the game"), "404": _err("no such game")}},
            "delete": {"summary": "Delete a game with its attempts",
                       "responses": {"200": _json(answers.Deleted, "deleted"), "404": _err("no such game")}}},
        "/api/games/{game_id}/events": {
            "parameters": [_GAME_ID],
            "get": {"summary": "Server-sent events: `state` (the Game, at once and after every change), "
                               "`deleted`; comment lines keep the stream alive. When as many streams are "
                               "open as the server holds, a client that accepts text/event-stream gets a "
                               "stream of one `busy` event ({error, retry_after}) with a `retry:` hint, "
                               "which a browser's EventSource follows; any other client gets 503",
                    "responses": {"200": {"description": "text/event-stream",
                                          "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                                  "404": _err("no such game"),
                                  "503": {**_err("as many streams are open as the server holds; try again "
                                                 "after Retry-After seconds"),
                                          "headers": {"Retry-After": {"schema": {"type": "integer"}}}}}}},
        "/api/games/{game_id}/scorepad.csv": {
            "parameters": [_GAME_ID],
            "get": {"summary": "The scorepad as CSV: a column per player, a row per phase and bonus, the total",
                    "responses": {"200": {"description": "text/csv", "content": {"text/csv": {}}},
                                  "404": _err("no such game")}}},
        "/api/games/{game_id}/turn": {
            "parameters": [_GAME_ID],
            "put": {"summary": "Keep the turn being played (photo, roll, dice) until it is confirmed",
                    "requestBody": _body(bodies.TurnBody),
                    "responses": {"200": _json(answers.Kept, "kept"), "400": _err("bad roll or dice"),
                                  "404": _err("no such game or photo"),
                                  "409": _err("that attempt was recorded already")}}},
        "/api/games/{game_id}/attempts": {
            "parameters": [_GAME_ID],
            "post": {"summary": "Confirm an attempt: the player's final dice for their current phase",
                     "requestBody": _body(bodies.AttemptBody),
                     "responses": {"201": _json(answers.Recorded, "recorded"),
                                   "400": _err("bad dice, or faces the dice set cannot show at once"),
                                   "404": _err("no such game or photo"),
                                   "409": _err("already recorded, or not this player's turn, or the game is over")}}},
        "/api/games/{game_id}/attempts/{seq}": {
            "parameters": [_GAME_ID, _SEQ],
            "delete": {"summary": "Undo the last attempt (only if `seq` is still the last)",
                       "responses": {"200": _json(answers.Undone, "undone"), "404": _err("no such game"),
                                     "409": _err("not the last attempt any more")}}},
        "/api/games/{game_id}/photos": {
            "parameters": [_GAME_ID],
            "post": {"summary": "Upload a photo of the dice: it is read and kept with the game",
                     "requestBody": _PHOTO_BODY,
                     "responses": {"201": _json(answers.PhotoKept, "the reading"), "400": _err("no photo field"),
                                   "404": _err("no such game"), **photo_refusals}}},
        "/api/games/{game_id}/held-photos": {
            "parameters": [_GAME_ID],
            "post": {"summary": "Read a live view's photo in full, as a photo upload is, and hold it (not kept) "
                                "until the page keeps it",
                     "requestBody": _PHOTO_BODY,
                     "responses": {"200": _json(answers.HeldRead, "the reading, a hand in view, the token"),
                                   "400": _err("no photo field"), "404": _err("no such game"), **photo_refusals}}},
        "/api/games/{game_id}/held-photos/{token}": {
            "parameters": [_GAME_ID, {"name": "token", "in": "path", "required": True, "schema": {"type": "string"}}],
            "post": {"summary": "Keep the held photo as the game's photo, read as it was",
                     "responses": {"201": _json(answers.PhotoKept, "the reading"),
                                   "404": _err("no such game, or the photo is no longer held")}}},
        "/api/games/{game_id}/frames": {
            "parameters": [_GAME_ID],
            "post": {"summary": "Read a live view's frame (at most twice /api/info's live_frame_long_side); "
                                "nothing is kept",
                     "requestBody": _PHOTO_BODY,
                     "responses": {"200": _json(answers.FrameRead, "the reading, and whether a hand is in view"), "400": _err("no photo field"),
                                   "404": _err("no such game"), **photo_refusals}}},
        "/api/dice-sets": {
            "get": {"summary": "The scorepad's dice sets and what each learnt",
                    "responses": {"200": _json(answers.DiceSets, "the sets")}},
            "post": {"summary": "Add a dice set", "requestBody": _body(bodies.DiceSetBody),
                     "responses": {"201": _json(dice_set, "the new set"), "400": _err("bad name"),
                                   "409": _err("a set of that name exists")}}},
        "/api/dice-sets/{set_id}": {
            "parameters": [_SET_ID],
            "patch": {"summary": "Rename a dice set", "requestBody": _body(bodies.DiceSetBody),
                      "responses": {"200": _json(dice_set, "the set"), "400": _err("bad name"),
                                    "404": _err("no such set"), "409": _err("a set of that name exists")}}},
        "/api/dice-sets/{set_id}/learnt": {
            "parameters": [_SET_ID],
            "delete": {"summary": "Forget everything a set learnt from the confirmed photos",
                       "responses": {"200": _json(answers.Forgotten, "reset"), "404": _err("no such set")}}},
        "/api/games/{game_id}/dice-set": {
            "parameters": [_GAME_ID],
            "get": {"summary": "The dice set a game is played with, and what it learnt",
                    "responses": {"200": _json(dice_set, "the set"), "404": _err("no such game")}}},
        "/api/photos/{photo_id}": {
            "parameters": [_PHOTO_ID],
            "get": {"summary": "A stored photo, as uploaded", "responses": {
                "200": {"description": "the image", "content": {"image/*": {}}}, "404": _err("no such photo")}}},
    }


def _document() -> dict[str, Any]:
    schemas = {name: schema for name, schema in _schemas().items() if name not in {m.__name__ for m in BODIES}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Phase 10 Dice Companion scorepad API", "version": "1",
                 "description": "Every rule decision is the server's rules engine. In LAN mode every request "
                                "needs the join code (query ?code=, the cookie set after the first visit, "
                                "or the X-Join-Code header), else 403; a device that tried too many wrong "
                                "codes gets 429 with Retry-After."},
        "paths": _paths(),
        "components": {"schemas": schemas},
    }


# Each operation's id: its method and path, read as words ("post_api_games_game_id_attempts").
def _operation_id(method: str, path: str) -> str:
    words = path.replace("{", "").replace("}", "").replace(".", "_").strip("/").replace("/", "_").replace("-", "_")
    return f"{method}_{words}"


# What a response gives the requests that may follow it (OpenAPI links): the game a create
# made, the attempt a confirm recorded, the photo an upload kept.
_LINKS = {
    ("/api/games", "post", "201"): {
        f"{name}": {"operationId": _operation_id(method, path), "parameters": {"game_id": "$response.body#/id"}}
        for name, method, path in (
            ("GetGame", "get", "/api/games/{game_id}"), ("DeleteGame", "delete", "/api/games/{game_id}"),
            ("UploadPhoto", "post", "/api/games/{game_id}/photos"))
    } | {
        # the first player's turn: whatever dice are rolled, this confirm is recorded
        "RecordAttempt": {"operationId": _operation_id("post", "/api/games/{game_id}/attempts"),
                          "parameters": {"game_id": "$response.body#/id"},
                          "requestBody": {"player": "$response.body#/next", "seq": "$response.body#/seq",
                                          "dice": ["7b", "7r", "7g", "3o", "3r", "Wb"]}},
    },
    ("/api/games/{game_id}/attempts", "post", "201"): {
        "UndoAttempt": {"operationId": _operation_id("delete", "/api/games/{game_id}/attempts/{seq}"),
                        "parameters": {"game_id": "$request.path.game_id", "seq": "$response.body#/attempt/seq"}},
        "GetGame": {"operationId": _operation_id("get", "/api/games/{game_id}"),
                    "parameters": {"game_id": "$request.path.game_id"}},
    },
    ("/api/games/{game_id}/photos", "post", "201"): {
        "GetPhoto": {"operationId": _operation_id("get", "/api/photos/{photo_id}"),
                     "parameters": {"photo_id": "$response.body#/photo_id"}},
    },
}


def openapi_document() -> dict[str, Any]:
    doc = _document()
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method != "parameters":
                operation["operationId"] = _operation_id(method, path)
    for (path, method, status), links in _LINKS.items():
        doc["paths"][path][method]["responses"][status]["links"] = links
    return doc
