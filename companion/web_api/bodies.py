"""The API's request bodies, declared once as typed models (pydantic): they parse the JSON,
bound it and refuse it with a sentence, and the OpenAPI document is made from them
(companion/web_api/openapi.py). Every bound is the core's; the core still decides what
the values mean (a token's face, a name's rules, a house rule), with its own sentences.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from flask import request
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, WithJsonSchema

from companion.dice import COLORS, FACE_VALUES, HIGH_VALUES, MAX_DICE, WILD_TEXT
from companion.game import MAX_NAME_LENGTH, Mode
from companion.rules.doubts import DOUBT_KINDS
from companion.rules.phases import MAX_ROLLS_LEFT, PHASE_COUNT, ROLLS_PER_TURN
from companion.store import MAX_SET_NAME
from companion.web_api.settings import MAX_LIST_ITEMS

M = TypeVar("M", bound=BaseModel)


class ApiError(Exception):
    """An answer other than 2xx, with the sentence the page shows."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def sentence(text: str) -> str:
    """An error of the core ("not Ann's turn") as the sentence the page shows."""
    return text[:1].upper() + text[1:] + "."


def _whole(value: Any) -> Any:
    """JSON has one kind of number: 7.0 is the integer 7 (as JSON Schema says), 7.5 is not."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value


_WHOLE = BeforeValidator(_whole)  # after a type's bounds, so that the document shows them
Whole = Annotated[int, _WHOLE]
PointedBox = Annotated[list[float], Field(min_length=4, max_length=4)]  # a box: [x0, y0, x1, y1]
_LETTERS = "".join(c.letter for c in COLORS)
# the longest value first ("10" before "1"), so the pattern never stops half-way in one
_TOKEN_PATTERN = "^({})[{}]$".format("|".join(sorted(map(str, FACE_VALUES), key=len, reverse=True) + [WILD_TEXT]),
                                     _LETTERS)
TOKEN_SCHEMA = {"type": "string", "pattern": _TOKEN_PATTERN, "examples": ["7b", "Wr"],
                "description": f"VALUE+COLOUR: 7b, 10g, Wr (value {FACE_VALUES[0]}..{FACE_VALUES[-1]} or "
                               f"{WILD_TEXT}; colour {'/'.join(_LETTERS)})"}
# The server takes what the core's token parser takes ("7blue", "H3:7b" too); the document
# offers the plain form.
Token = Annotated[str, WithJsonSchema(TOKEN_SCHEMA)]
# The house rules are read by the core's one parser (the API and a game log alike), so they
# pass through as JSON; the document describes them.
Rules = Annotated[Any, WithJsonSchema({"anyOf": [{"$ref": "#/components/schemas/HouseRules"}, {"type": "null"}],
                                       "description": "absent or null: no house rules"})]
Phase = Annotated[int, Field(ge=1, le=PHASE_COUNT, description=f"a phase number 1..{PHASE_COUNT}"), _WHOLE]
_TOKENS = "a list of tokens such as \"7b\", \"10g\", \"Wr\""


class Body(BaseModel):
    # strict: no "7" for 7, no true for 1; fields the API does not know are ignored
    model_config = ConfigDict(strict=True, extra="ignore")


class RunnerUp(Body):
    """The next-best reading of a doubted die."""

    value: Annotated[int, Field(ge=FACE_VALUES[0], le=FACE_VALUES[-1]), _WHOLE] | Literal["W"]
    color: Literal[tuple(c.value for c in COLORS)]  # type: ignore[valid-type]


class Doubt(Body):
    """What the reader doubted about one of the dice sent."""

    index: Annotated[int, Field(ge=0, lt=MAX_DICE), _WHOLE] = Field(description="which of the dice sent")
    doubt: Literal[DOUBT_KINDS] | None = Field(  # type: ignore[valid-type]
        default=None, description="what the reader doubts most; null: not said (any other reading, or no die)")
    runner_up: RunnerUp | None = Field(default=None, description="the next-best reading; null: not said "
                                                                 "(every face the set prints is tried)")
    confidence: Annotated[float, Field(ge=0, le=1)] | None = Field(
        default=None, description="the reading's confidence in the face read (its `confidence`); null: not said")


class EvaluateBody(Body):
    phase: Phase
    dice: list[Token] = Field(min_length=1, max_length=MAX_DICE, description=f"{_TOKENS}: 1 to {MAX_DICE} dice")
    rules: Rules = None
    doubts: list[Doubt] | None = Field(
        default=None, max_length=MAX_DICE,
        description="the reader's doubts about the dice sent: {index, doubt, runner_up, confidence}, each index one of the dice")


class AdviseBody(Body):
    phase: Phase
    dice: list[Token] = Field(min_length=MAX_DICE, max_length=MAX_DICE,
                              description=f"{_TOKENS}: all {MAX_DICE} dice showing")
    rolls_left: Annotated[int, Field(ge=0, le=MAX_ROLLS_LEFT), _WHOLE] = Field(
        description=f"the rolls left in this turn: {MAX_ROLLS_LEFT} after the first roll, 1 less after each")
    rules: Rules = None


HighRoll = Annotated[int, Field(ge=min(HIGH_VALUES), le=max(HIGH_VALUES)), _WHOLE]


class FirstPlayerBody(Body):
    players: list[Annotated[str, Field(min_length=1)]] = Field(
        min_length=1, max_length=MAX_LIST_ITEMS, description="a list of names, in seating order")
    rolls: list[HighRoll] = Field(
        min_length=1, max_length=MAX_LIST_ITEMS,
        description=f"a list of high-die rolls ({min(HIGH_VALUES)}..{max(HIGH_VALUES)}), one per player, in order")


Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_LENGTH, pattern=r"\S")]


class CreateGameBody(Body):
    players: list[Name] = Field(
        min_length=1, max_length=MAX_LIST_ITEMS,
        description=f"a list of names in turn order (at least 1 player; each name 1 to {MAX_NAME_LENGTH} "
                    "characters, no two that read alike; solitaire is for 1 player)")
    mode: Mode = Field(default=Mode.STANDARD, description=f"{' or '.join(m.value for m in Mode)}")
    rules: Rules = None
    dice_set: Whole | None = Field(default=None, description="the id of one of the scorepad's dice sets "
                                                             "(GET /api/dice-sets), or null: the scorepad's first")


class AttemptBody(Body):
    player: str = Field(description="the name of the player whose attempt this is")
    seq: Annotated[int, Field(ge=0), _WHOLE] = Field(
        description="the attempt number the page shows (the game's \"seq\"); a second device confirming the same "
                    "turn gets 409")
    dice: list[Token] = Field(min_length=1, max_length=MAX_DICE, description=f"{_TOKENS}: 1 to {MAX_DICE} dice")
    photo_id: Whole | None = Field(default=None, description="the id the photo upload returned, or null")
    sources: list[Whole | None] | None = Field(
        default=None, max_length=MAX_DICE,
        description="per die, the index of the read die it came from, or null for a die typed in")
    boxes: list[PointedBox | None] | None = Field(
        default=None, max_length=MAX_DICE,
        description="per die typed in by hand, where the player pointed at it on the photo ([x0, y0, x1, y1] in "
                    "its pixels), else null: such a die is labelled there and teaches the dice set")
    checked: list[bool] | None = Field(
        default=None, max_length=MAX_DICE,
        description="per die, whether the player checked or corrected it (learning tells it from a guess)")


class TurnDie(Body):
    token: Token
    source: Annotated[int, Field(ge=0), _WHOLE] | None = Field(
        default=None, description="the index of the read die it came from, or null for a die typed in")
    checked: bool = Field(default=False, description="the player checked or corrected it")
    box: PointedBox | None = Field(
        default=None, description="for a die typed in, where the player pointed at it on the turn's photo "
                                  "([x0, y0, x1, y1] in its pixels), else null")


class TurnBody(Body):
    seq: Annotated[int, Field(ge=0), _WHOLE] = Field(
        description="the attempt this turn will be (the game's \"seq\"); 409 once it is recorded")
    roll: Annotated[int, Field(ge=1, le=ROLLS_PER_TURN), _WHOLE] = Field(
        description=f"the roll the dice show, 1..{ROLLS_PER_TURN}")
    photo_id: Whole | None = Field(default=None, description="the turn's photo (the id its upload returned), or null")
    dice: list[TurnDie] = Field(max_length=MAX_DICE, description="the dice as the page shows them: "
                                                                  "{token, source, checked, box}")
    set_aside: bool = Field(default=False, description="the dice missing from the photo are set aside")


class DiceSetBody(Body):
    name: str = Field(min_length=1, max_length=MAX_SET_NAME,
                      description=f"the set's name (1 to {MAX_SET_NAME} characters)")


def parse(model: type[M]) -> M:
    """The request's JSON body as `model`, or a 400 with one sentence saying what is wrong."""
    raw = request.get_data(cache=True)
    if not request.is_json or not raw:
        raise ApiError(400, "send a JSON object (Content-Type: application/json)")
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise ApiError(400, refusal(model, exc.errors()[0])) from None


def refusal(model: type[BaseModel], error: Any) -> str:
    """One of pydantic's errors as a sentence for the player."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "json_invalid":
        reason = str(ctx.get("error", ""))
        if "recursion limit" in reason:
            return "The JSON is nested deeper than any request of this API; send a flat JSON object"
        if "surrogate" in reason or "hex escape" in reason:
            return ("The JSON holds a lone surrogate (half of a UTF-16 pair, a \\uD800-\\uDFFF escape alone): no "
                    "character; send the text as it is typed")
        return f"Send a JSON object, as UTF-8 text (Content-Type: application/json): {reason}"
    if not error["loc"]:  # the body itself is not an object (a nested one is named below)
        return "Send a JSON object (Content-Type: application/json)"
    name = str(error["loc"][0])
    info = model.model_fields.get(name)
    what = (info.description if info is not None else None) or "as the API describes it"
    if kind == "missing":
        return f"\"{name}\" is missing: it must be {what}"
    if kind == "too_long" and len(error["loc"]) == 1:
        return f"\"{name}\" has {ctx.get('actual_length')} items; it holds at most {ctx.get('max_length')}: {what}"
    return f"\"{name}\" must be {what}"
