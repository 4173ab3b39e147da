"""Tools for a turn that change no game: evaluate dice, advise a roll, who starts, read a photo."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.game import house_rules_from_json
from companion.rules import evaluate
from companion.rules.phases import MAX_ROLLS_LEFT
from companion.seating import SeatingError, first_player
from companion.web_api import context
from companion.web_api.fields import ApiError, faces, field, json_body, phase, sentence, tokens
from companion.web_api.games import reading_json
from companion.web_api.guards import takes_photo
from companion.web_api.photos import uploaded_photo

bp = Blueprint("turn", __name__, url_prefix="/api")


@bp.post("/evaluate")
def evaluate_dice():
    body = json_body()
    return jsonify(evaluate(phase(body), faces(body), house_rules_from_json(body.get("rules"))).to_json())


@bp.post("/advise")
def advise_roll():
    """The roll advisor's keeps and odds for the dice showing (companion.advisor decides)."""
    from companion.advisor import advise

    body = json_body()
    rolls_left = field(body, "rolls_left", int, f"the rolls left in this turn ({MAX_ROLLS_LEFT} after the first roll)")
    dice = tokens(body)
    try:
        advice = advise(phase(body), dice, rolls_left, house_rules_from_json(body.get("rules")))
    except ValueError as exc:  # DiceError included: the advisor's own reason, e.g. too few dice
        raise ApiError(400, sentence(str(exc))) from None
    return jsonify(advice.to_json())


@bp.post("/first-player")
def decide_first_player():
    body = json_body()
    players = field(body, "players", list, "a list of names", items=str,
                    valid=lambda names: all(name.strip() for name in names))
    rolls = field(body, "rolls", list, "a list of high-die rolls, one per player", items=int)
    try:
        return jsonify(first_player(players, rolls).to_json())
    except SeatingError as exc:
        raise ApiError(400, sentence(str(exc))) from None


@bp.post("/read")
@takes_photo
def read_only():
    """Read dice without keeping the photo (the starter roll before a game exists)."""
    data, _mime = uploaded_photo()
    return jsonify({"reading": reading_json(context.photos()(data))})

