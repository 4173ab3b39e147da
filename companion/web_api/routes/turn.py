"""Tools for a turn that change no game: evaluate dice, advise a roll, who starts, read a photo."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.dice import parse_faces, parse_token
from companion.game import house_rules_from_json
from companion.rules import evaluate
from companion.seating import SeatingError, first_player
from companion.web_api import context
from companion.web_api.bodies import AdviseBody, ApiError, EvaluateBody, FirstPlayerBody, parse, sentence
from companion.web_api.games import reading_json
from companion.web_api.guards import takes_photo
from companion.web_api.photos import uploaded_photo

bp = Blueprint("turn", __name__, url_prefix="/api")


@bp.post("/evaluate")
def evaluate_dice():
    body = parse(EvaluateBody)
    return jsonify(evaluate(body.phase, parse_faces(body.dice), house_rules_from_json(body.rules)).to_json())


@bp.post("/advise")
def advise_roll():
    """The roll advisor's keeps and odds for the dice showing (companion.advisor decides)."""
    from companion.advisor import advise

    body = parse(AdviseBody)
    dice = [parse_token(t) for t in body.dice]
    try:
        advice = advise(body.phase, dice, body.rolls_left, house_rules_from_json(body.rules))
    except ValueError as exc:  # DiceError included: the advisor's own reason, e.g. too few dice
        raise ApiError(400, sentence(str(exc))) from None
    return jsonify(advice.to_json())


@bp.post("/first-player")
def decide_first_player():
    body = parse(FirstPlayerBody)
    try:
        return jsonify(first_player(body.players, body.rolls).to_json())
    except SeatingError as exc:
        raise ApiError(400, sentence(str(exc))) from None


@bp.post("/read")
@takes_photo
def read_only():
    """Read dice without keeping the photo (the starter roll before a game exists)."""
    data, _mime = uploaded_photo()
    return jsonify({"reading": reading_json(context.photos()(data))})

