"""The OpenAPI 3.1 description of the scorepad API, served at /api/openapi.json.

Every number a rule defines (phases, dice, rolls, names, the high dice) comes from the core.
"""

from __future__ import annotations

from typing import Any

from companion.dice import COLORS, FACE_VALUES, HIGH_VALUES, MAX_DICE, WILD_TEXT
from companion.game import MAX_NAME_LENGTH, Mode, Stage
from companion.game.model import FINISHED
from companion.rules.phases import COLOR_PHASE, MAX_ROLLS_LEFT, PHASE_COUNT, PHASES
from companion.web_api.dice_sets_openapi import DICE_SET_SCHEMA, dice_set_paths
from companion.web_api.settings import MAX_LIST_ITEMS, MAX_PHOTO_BYTES

_ERROR = {"$ref": "#/components/schemas/Error"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _err(description: str) -> dict[str, Any]:
    return _json(_ERROR, description)


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


_VALUES = FACE_VALUES
_LETTERS = "".join(c.letter for c in COLORS)
# the longest value first ("10" before "1"), so the pattern never stops half-way in one
_TOKEN_PATTERN = "^({})[{}]$".format("|".join(sorted(map(str, _VALUES), key=len, reverse=True) + [WILD_TEXT]),
                                     _LETTERS)
_PHOTO_MB = f"{MAX_PHOTO_BYTES // (1024 * 1024)} MB"
_PHASE = {"type": "integer", "minimum": 1, "maximum": PHASE_COUNT}

_PHOTO_BODY = {
    "required": True,
    "content": {"multipart/form-data": {"schema": {
        "type": "object", "required": ["photo"],
        "properties": {"photo": {"type": "string", "format": "binary", "description": f"JPEG, PNG or WebP, at most {_PHOTO_MB}"}},
    }}},
}

_RULES_IN = {"anyOf": [{"$ref": "#/components/schemas/HouseRules"}, {"type": "null"}],
             "description": "absent or null: no house rules"}

_GAME_ID = {"name": "game_id", "in": "path", "required": True, "schema": {"type": "string"}}

_SCHEMAS: dict[str, Any] = {
    "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
    "Token": {"type": "string", "description": f"VALUE+COLOUR: 7b, 10g, Wr (value {_VALUES[0]}..{_VALUES[-1]} or "
                                              f"{WILD_TEXT}; colour {'/'.join(_LETTERS)})",
              "pattern": _TOKEN_PATTERN,
              "examples": ["7b", "Wr"]},
    "HouseRules": {"type": "object", "properties": {"natural_in_every_group": {"type": "boolean", "default": False}},
                   "additionalProperties": False},
    "Evaluation": {"type": "object", "properties": {
        "phase": {"type": "integer"}, "complete": {"type": "boolean"}, "score": {"type": ["integer", "null"]},
        "groups": {"type": "array", "items": {"type": "object", "properties": {
            "kind": {"enum": list(dict.fromkeys(g.kind for p in PHASES for g in p.groups))},
            "dice": {"type": "array", "items": {"type": "integer"}, "description": "indices into the dice sent"},
            "stands_for": {"type": "array", "items": {"type": ["integer", "null"]}}}}}}},
    "KeepOption": {"type": "object", "required": ["keep", "p_complete", "expected_score"], "properties": {
        "keep": {"type": "array", "items": {"type": "integer"}, "description": "indices into the dice sent: keep these, reroll the rest"},
        "p_complete": {"type": "number", "description": "chance of making the phase by the end of the turn"},
        "expected_score": {"type": "number", "description": "expected phase score (a miss counts 0)"},
        "expected_score_upper": {"type": "number", "description": f"only Phase {COLOR_PHASE}, {MAX_ROLLS_LEFT} rolls left: "
                                                                  "expected_score is then a bound"}}},
    "Advice": {"type": "object", "required": ["best", "best_score", "keep_all"], "properties": {
        "best": {"$ref": "#/components/schemas/KeepOption", "description": "the best chance of making the phase"},
        "best_score": {"$ref": "#/components/schemas/KeepOption", "description": "the best expected score"},
        "keep_all": {"$ref": "#/components/schemas/KeepOption", "description": "stop now with the dice as they are"}}},
    "PlayerScore": {"type": "object", "properties": {
        "name": {"type": "string"}, "phase": {"type": "integer", "description": f"current phase; {FINISHED} when all are made"},
        "phases": {"type": "array", "items": {"type": ["integer", "null"]}, "minItems": PHASE_COUNT,
                   "maxItems": PHASE_COUNT},
        "five_phase_bonus": {"type": "integer"}, "first_finish_bonus": {"type": "integer"},
        "failures": {"type": "integer"}, "penalty": {"type": "integer"}, "total": {"type": "integer"}}},
    "Attempt": {"type": "object", "properties": {
        "seq": {"type": "integer"}, "player": {"type": "string"}, "phase": {"type": "integer"},
        "dice": {"type": "array", "items": {"$ref": "#/components/schemas/Token"}},
        "made": {"type": "boolean"}, "score": {"type": ["integer", "null"]},
        "five_phase_bonus": {"type": "integer"}, "first_finish_bonus": {"type": "integer"},
        "penalty": {"type": "integer"}, "last_chance": {"type": "boolean"},
        "evaluation": {"$ref": "#/components/schemas/Evaluation"}, "photo_id": {"type": ["integer", "null"]}}},
    "Game": {"type": "object", "properties": {
        "id": {"type": "string"}, "players": {"type": "array", "items": {"type": "string"}},
        "mode": {"enum": [m.value for m in Mode]}, "rules": {"$ref": "#/components/schemas/HouseRules"},
        "seq": {"type": "integer", "description": "the number of attempts so far: the seq the next attempt must carry"},
        "stage": {"enum": [s.value for s in Stage]},
        "next": {"type": ["string", "null"]}, "phase": {"type": ["integer", "null"], "description": "the next player's phase"},
        "in_last_chances": {"type": "boolean"}, "over": {"type": "boolean"},
        "winners": {"type": "array", "items": {"type": "string"}},
        "scorepad": {"type": "object", "properties": {
            "players": {"type": "array", "items": {"$ref": "#/components/schemas/PlayerScore"}},
            "over": {"type": "boolean"}, "winners": {"type": "array", "items": {"type": "string"}},
            "next": {"type": ["string", "null"]}}},
        "attempts": {"type": "array", "items": {"$ref": "#/components/schemas/Attempt"}},
        "created_at": {"type": "number"}, "updated_at": {"type": "number"}}},
    "Reading": {"type": "object", "properties": {
        "width": {"type": "integer"}, "height": {"type": "integer"}, "ms": {"type": "number"},
        "dice": {"type": "array", "items": {"type": "object", "properties": {
            "value": {"oneOf": [{"type": "integer"}, {"const": "W"}]}, "color": {"enum": [c.value for c in COLORS]},
            "token": {"$ref": "#/components/schemas/Token"}, "confidence": {"type": "number"},
            "uncertain": {"type": "boolean"}, "die": {"type": ["string", "null"]},
            "box": {"type": "array", "items": {"type": "number"}, "description": "x0, y0, x1, y1 in upright image pixels"},
            "polygon": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}}}}}},
}


def _document() -> dict[str, Any]:
    game = {"$ref": "#/components/schemas/Game"}
    tokens = {"type": "array", "items": {"$ref": "#/components/schemas/Token"}, "minItems": 1, "maxItems": MAX_DICE}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Phase 10 Dice Companion scorepad API", "version": "1",
                 "description": "Every rule decision is the server's rules engine. In LAN mode every request "
                                "needs the join code (query ?code=, the cookie set after the first visit, "
                                "or the X-Join-Code header), else 403."},
        "paths": {
            "/api/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI"}}}},
            "/api/info": {"get": {"summary": "Phases, colours and limits the page needs",
                                  "responses": {"200": {"description": "info"}}}},
            "/api/evaluate": {"post": {
                "summary": "Evaluate dice for a phase (live evaluation on the turn screen)",
                "requestBody": _body({"type": "object", "required": ["phase", "dice"], "properties": {
                    "phase": _PHASE, "dice": tokens,
                    "rules": _RULES_IN}}),
                "responses": {"200": _json({"$ref": "#/components/schemas/Evaluation"}, "the best arrangement"),
                              "400": _err("bad phase or dice token")}}},
            "/api/advise": {"post": {
                "summary": "The roll advisor: which dice to keep after roll 1 or 2, with the odds",
                "requestBody": _body({"type": "object", "required": ["phase", "dice", "rolls_left"], "properties": {
                    "phase": _PHASE,
                    "dice": {**tokens, "minItems": MAX_DICE, "maxItems": MAX_DICE,
                             "description": f"the {MAX_DICE} dice showing"},
                    "rolls_left": {"type": "integer", "minimum": 0, "maximum": MAX_ROLLS_LEFT,
                                   "description": f"{MAX_ROLLS_LEFT} after the first roll, 1 less after each"},
                    "rules": _RULES_IN}}),
                "responses": {"200": _json({"$ref": "#/components/schemas/Advice"}, "the three plans"),
                              "400": _err(f"bad phase, dice token, rolls_left, not {MAX_DICE} dice, "
                                          "or faces the dice set cannot show at once")}}},
            "/api/first-player": {"post": {
                "summary": "Decide who starts from one high-die roll per player (seating order)",
                "requestBody": _body({"type": "object", "required": ["players", "rolls"], "properties": {
                    "players": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1,
                                "maxItems": MAX_LIST_ITEMS},
                    "rolls": {"type": "array", "items": {"type": "integer", "minimum": min(HIGH_VALUES),
                                                         "maximum": max(HIGH_VALUES)},
                              "minItems": 1, "maxItems": MAX_LIST_ITEMS, "description": "one per player, in order"}}}),
                "responses": {"200": _json({"type": "object", "properties": {
                    "order": {"type": ["array", "null"], "items": {"type": "string"}},
                    "tied": {"type": "array", "items": {"type": "string"}, "description": "must roll again"}}},
                    "the turn order, or who is tied"), "400": _err("bad rolls, or names no game takes")}}},
            "/api/read": {"post": {
                "summary": "Read the dice in a photo without keeping it (the starter roll)",
                "requestBody": _PHOTO_BODY,
                "responses": {"200": _json({"type": "object", "properties": {"reading": {"$ref": "#/components/schemas/Reading"}}}, "the reading"),
                              "400": _err("no photo field"), "413": _err(f"over {_PHOTO_MB}"),
                              "422": _err("not an image or unreadable"), "503": _err("dice reader unavailable")}}},
            "/api/games": {
                "get": {"summary": "List games, most recently played first",
                        "responses": {"200": _json({"type": "object", "properties": {"games": {"type": "array"}}}, "games")}},
                "post": {"summary": "Create a game; players are given in turn order",
                         "requestBody": _body({"type": "object", "required": ["players"], "properties": {
                             "players": {"type": "array", "minItems": 1, "maxItems": MAX_LIST_ITEMS, "items": {
                                 "type": "string", "minLength": 1, "maxLength": MAX_NAME_LENGTH, "pattern": "\\S",
                                 "description": "names differ ignoring case; solitaire is for 1 player"}},
                             "mode": {"enum": [m.value for m in Mode], "default": Mode.STANDARD.value},
                             "rules": _RULES_IN,
                             "dice_set": {"type": ["integer", "null"], "description": "the dice set played with "
                                          "(GET /api/dice-sets); default: the scorepad's first"}}}),
                         "responses": {"201": _json(game, "the new game"), "400": _err("bad players, mode or rules"),
                                       "404": _err("no such dice set")}}},
            "/api/games/{game_id}": {
                "parameters": [_GAME_ID],
                "get": {"summary": "A game: scorepad, next player and phase, attempts",
                        "responses": {"200": _json(game, "the game"), "404": _err("no such game")}},
                "delete": {"summary": "Delete a game with its attempts",
                           "responses": {"200": {"description": "deleted"}, "404": _err("no such game")}}},
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
            "/api/games/{game_id}/attempts": {
                "parameters": [_GAME_ID],
                "post": {"summary": "Confirm an attempt: the player's final dice for their current phase",
                         "requestBody": _body({"type": "object", "required": ["player", "seq", "dice"], "properties": {
                             "player": {"type": "string"},
                             "seq": {"type": "integer", "minimum": 0, "description": "the game's seq as the page saw it; a second "
                                                                        "device confirming the same turn gets 409"},
                             "dice": tokens,
                             "photo_id": {"type": ["integer", "null"]},
                             "sources": {"type": "array", "items": {"type": ["integer", "null"]},
                                         "description": "per die, the index of the read die it came from (null: typed in)"}}}),
                         "responses": {"201": _json({"type": "object", "properties": {
                             "attempt": {"$ref": "#/components/schemas/Attempt"}, "game": game,
                             "dice_set": {"oneOf": [{"$ref": "#/components/schemas/DiceSet"}, {"type": "null"}],
                                          "description": "what the game's set learnt, once the photo is learnt"}}},
                             "recorded"),
                             "400": _err("bad dice"), "404": _err("no such game or photo"),
                             "409": _err("already recorded, or not this player's turn, or the game is over")}}},
            "/api/games/{game_id}/attempts/{seq}": {
                "parameters": [_GAME_ID, {"name": "seq", "in": "path", "required": True,
                                          "schema": {"type": "integer", "minimum": 0}}],
                "delete": {"summary": "Undo the last attempt (only if `seq` is still the last)",
                           "responses": {"200": _json({"type": "object", "properties": {"game": game}}, "undone"),
                                         "404": _err("no such game"),
                                         "409": _err("not the last attempt any more")}}},
            "/api/games/{game_id}/photos": {
                "parameters": [_GAME_ID],
                "post": {"summary": "Upload a photo of the dice: it is read and kept with the game",
                         "requestBody": _PHOTO_BODY,
                         "responses": {"201": _json({"type": "object", "properties": {
                             "photo_id": {"type": "integer"}, "url": {"type": "string"},
                             "reading": {"$ref": "#/components/schemas/Reading"}}}, "the reading"),
                             "400": _err("no photo field"), "404": _err("no such game"), "413": _err(f"over {_PHOTO_MB}"),
                             "422": _err("not an image or unreadable"), "503": _err("dice reader unavailable")}}},
            **dice_set_paths(_json, _err, _body, _GAME_ID),
            "/api/photos/{photo_id}": {
                "parameters": [{"name": "photo_id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "get": {"summary": "A stored photo, as uploaded", "responses": {
                    "200": {"description": "the image", "content": {"image/*": {}}}, "404": _err("no such photo")}}},
        },
        "components": {"schemas": {**_SCHEMAS, "DiceSet": DICE_SET_SCHEMA}},
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
