"""Dice sets: name them, see and reset what each learnt from the confirmed photos.

What a set learns comes from the games' routes: a confirmed attempt with a photo teaches the
game's set (learn_confirmed), undoing it forgets that photo (Store.undo_last), and photos of
a game are read with its set's profile (profile_for_game). companion/table_profiles.py does
the work; this module only speaks HTTP.
"""

from __future__ import annotations

import logging

from flask import Blueprint, jsonify

from companion.store import StoreError
from companion.vision.profile import Profile
from companion.web_api import context
from companion.web_api.bodies import ApiError, DiceSetBody, parse, sentence

log = logging.getLogger("companion.server")
bp = Blueprint("dice_sets", __name__, url_prefix="/api")
profiles = context.profiles


def profile_for_game(game_id: str) -> Profile | None:
    """The profile to read the game's photos with (None: nothing learnt, or it cannot be built)."""
    try:
        table = profiles()
        return table.profile(table.store.game_dice_set(game_id))
    except Exception:  # noqa: BLE001 - reading without what was learnt beats not reading
        log.exception("the dice set profile of game %s cannot be used", game_id)
        return None


def learn_confirmed(game_id: str, photo_id: int) -> dict | None:
    """Teach the game's set the confirmed photo's dice; the set's summary, or None when
    learning failed (the attempt stands: learning is a bonus, never a reason to lose a turn)."""
    try:
        table = profiles()
        set_id = table.store.game_dice_set(game_id)
        table.learn(photo_id, set_id)
        return table.summary(set_id).to_json()
    except Exception:  # noqa: BLE001
        log.exception("learning from photo %s failed", photo_id)
        return None


def _name() -> str:
    return parse(DiceSetBody).name


def _store_call(fn, *args):
    try:
        return fn(*args)
    except StoreError as exc:
        if type(exc) is StoreError:  # a bad name; NotFound and Conflict have their own answers
            raise ApiError(400, sentence(str(exc))) from None
        raise


@bp.get("/dice-sets")
def list_sets():
    table = profiles()
    return jsonify({"sets": [table.summary(s.id).to_json() for s in context.store().dice_sets()]})


@bp.post("/dice-sets")
def create_set():
    record = _store_call(context.store().create_dice_set, _name())
    return jsonify(profiles().summary(record.id).to_json()), 201


@bp.patch("/dice-sets/<int:set_id>")
def rename_set(set_id: int):
    record = _store_call(context.store().rename_dice_set, set_id, _name())
    return jsonify(profiles().summary(record.id).to_json())


@bp.delete("/dice-sets/<int:set_id>/learnt")
def reset_set(set_id: int):
    forgotten = context.store().reset_profile(set_id)
    return jsonify({"forgotten": forgotten, "set": profiles().summary(set_id).to_json()})


@bp.get("/games/<game_id>/dice-set")
def game_set(game_id: str):
    return jsonify(profiles().summary(context.store().game_dice_set(game_id)).to_json())
