"""Tools for a turn that change no game: evaluate dice, advise a roll, who starts, read a photo."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.dice import DiceError, parse_face, parse_faces, parse_token, parse_tokens, standard_set
from companion.game import house_rules_from_json
from companion.rules import evaluate
from companion.rules.doubts import Doubt, doubts_that_matter
from companion.seating import SeatingError, first_player
from companion.web_api import context
from companion.web_api.bodies import AdviseBody, ApiError, EvaluateBody, FirstPlayerBody, parse, sentence
from companion.web_api.games import reading_json
from companion.web_api.guards import takes_photo
from companion.web_api.photos import uploaded_photo

bp = Blueprint("turn", __name__, url_prefix="/api")


@bp.post("/evaluate")
def evaluate_dice():
    """The rules engine's verdict; also whether the set can show these dice at once (the page
    asks for advice only then) and, of the dice the reader doubted, those worth asking about."""
    body = parse(EvaluateBody)
    dice, rules = parse_faces(body.dice), house_rules_from_json(body.rules)
    doubts = [_doubt(d, len(dice)) for d in body.doubts or ()]
    out = evaluate(body.phase, dice, rules).to_json()
    out["roll"] = _roll(body.dice)
    out["ask"] = [d.index for d, ask in zip(doubts, doubts_that_matter(body.phase, dice, doubts, rules)) if ask]
    return jsonify(out)


def _doubt(doubt, count: int) -> Doubt:
    if doubt.index >= count:
        raise ApiError(400, f"\"doubts\" name die {doubt.index}, but {count} dice were sent (0..{count - 1})")
    runner = doubt.runner_up
    return Doubt(doubt.index, doubt.doubt, None if runner is None else parse_face(f"{runner.value}{runner.color}"),
                 doubt.confidence)


def _roll(tokens: list[str]) -> dict:
    """Whether the set's dice can show these faces at once (the core's one check of a roll)."""
    try:
        standard_set().check_shown(parse_tokens(tokens))
    except DiceError as exc:
        return {"possible": False, "reason": sentence(str(exc))}
    return {"possible": True, "reason": None}


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

