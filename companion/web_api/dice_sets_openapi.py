"""The OpenAPI description of the dice-set routes (companion/web_api/routes/dice_sets.py)."""

from __future__ import annotations

from typing import Any, Callable

from companion.store import MAX_SET_NAME

DICE_SET_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["id", "name", "dice", "photos", "in_use", "damaged"],
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string", "minLength": 1, "maxLength": MAX_SET_NAME},
        "dice": {"type": "integer", "minimum": 0, "description": "dice learnt from confirmed photos"},
        "photos": {"type": "integer", "minimum": 0},
        "in_use": {"type": "boolean", "description": "what was learnt changes readings (the guard lets it)"},
        "damaged": {"type": "integer", "minimum": 0,
                    "description": "photos whose stored learning is damaged: not counted in dice or photos, not used"},
    },
}


def dice_set_paths(json: Callable, err: Callable, body: Callable, game_id: dict) -> dict[str, Any]:
    one = {"$ref": "#/components/schemas/DiceSet"}
    name = body({"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": MAX_SET_NAME}}})
    set_id = {"name": "set_id", "in": "path", "required": True, "schema": {"type": "integer"}}
    return {
        "/api/dice-sets": {
            "get": {"summary": "The scorepad's dice sets and what each learnt",
                    "responses": {"200": json({"type": "object", "properties": {
                        "sets": {"type": "array", "items": one}}}, "the sets")}},
            "post": {"summary": "Add a dice set", "requestBody": name,
                     "responses": {"201": json(one, "the new set"), "400": err("bad name"),
                                   "409": err("a set of that name exists")}}},
        "/api/dice-sets/{set_id}": {
            "parameters": [set_id],
            "patch": {"summary": "Rename a dice set", "requestBody": name,
                      "responses": {"200": json(one, "the set"), "400": err("bad name"), "404": err("no such set"),
                                    "409": err("a set of that name exists")}}},
        "/api/dice-sets/{set_id}/learnt": {
            "parameters": [set_id],
            "delete": {"summary": "Forget everything a set learnt from the confirmed photos",
                       "responses": {"200": json({"type": "object", "properties": {
                           "forgotten": {"type": "integer"}, "set": one}}, "reset"), "404": err("no such set")}}},
        "/api/games/{game_id}/dice-set": {
            "parameters": [game_id],
            "get": {"summary": "The dice set a game is played with, and what it learnt",
                    "responses": {"200": json(one, "the set"), "404": err("no such game")}}},
    }
