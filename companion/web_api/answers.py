"""The API's answers, declared as typed models (pydantic) for the OpenAPI document: the core
and the routes make them (`to_json()`); tests/test_api_schema.py checks every answer the
server gives against the document made from these.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from companion import rules
from companion.dice import WILD_TEXT, Color
from companion.game import Mode, Stage
from companion.game.model import FINISHED
from companion.rules.phases import COLOR_PHASE, MAX_ROLLS_LEFT, PHASE_COUNT, PHASES
from companion.store import MAX_SET_NAME
from companion.web_api.bodies import Token

GroupKind = Annotated[str, WithJsonSchema({"enum": list(dict.fromkeys(g.kind for p in PHASES for g in p.groups))})]
FaceValue = Annotated[int | str, WithJsonSchema({"oneOf": [{"type": "integer"}, {"const": WILD_TEXT}]})]


class Answer(BaseModel):
    model_config = ConfigDict(extra="allow")  # an answer may carry more than the document names


class Error(Answer):
    error: str = Field(description="one sentence for the player")


# The core's house rules, each a true/false switch (companion.game.house_rules_from_json)
_SWITCHES: dict[str, Any] = {f.name: (bool, f.default) for f in dataclasses.fields(rules.HouseRules)}
HouseRules = create_model("HouseRules", __config__=ConfigDict(extra="forbid"), **_SWITCHES)


class Group(Answer):
    kind: GroupKind
    dice: list[int] = Field(description="indices into the dice sent")
    stands_for: list[int | None]


class Roll(Answer):
    possible: bool = Field(description="the set's dice can show these faces at once")
    reason: str | None = Field(description="why not, as a sentence")


class Evaluation(Answer):
    phase: int
    complete: bool
    score: int | None
    groups: list[Group]
    roll: Roll | None = Field(default=None, description="POST /api/evaluate: whether the set can show the dice "
                                                        "at once (roll advice is given only then)")
    ask: list[int] | None = Field(default=None, description="POST /api/evaluate: the doubted dice (indices into the "
                                                            "dice sent) whose other reading could change the "
                                                            "phase's outcome or score: the ones to ask about")


class KeepOption(Answer):
    keep: list[int] = Field(description="indices into the dice sent: keep these, reroll the rest")
    p_complete: float = Field(description="chance of making the phase by the end of the turn")
    expected_score: float = Field(description="expected phase score (a miss counts 0)")
    expected_score_upper: float | None = Field(
        default=None, description=f"only Phase {COLOR_PHASE}, {MAX_ROLLS_LEFT} rolls left: expected_score is then a bound")


class Advice(Answer):
    best: KeepOption = Field(description="the best chance of making the phase")
    best_score: KeepOption = Field(description="the best expected score")
    keep_all: KeepOption = Field(description="stop now with the dice as they are")


class FirstPlayer(Answer):
    order: list[str] | None = Field(description="the turn order, or null while players are tied")
    tied: list[str] = Field(description="must roll again")


class PlayerScore(Answer):
    name: str
    phase: int = Field(description=f"current phase; {FINISHED} when all are made")
    phases: list[int | None] = Field(min_length=PHASE_COUNT, max_length=PHASE_COUNT)
    five_phase_bonus: int
    first_finish_bonus: int
    failures: int
    penalty: int
    total: int


class Scorepad(Answer):
    players: list[PlayerScore]
    over: bool
    winners: list[str]
    next: str | None


class Attempt(Answer):
    seq: int
    player: str
    phase: int
    dice: list[Token]
    made: bool
    score: int | None
    five_phase_bonus: int
    first_finish_bonus: int
    penalty: int
    last_chance: bool
    evaluation: Evaluation
    photo_id: int | None = None


class Game(Answer):
    id: str
    players: list[str]
    mode: Mode
    rules: HouseRules  # type: ignore[valid-type]
    seq: int = Field(description="the number of attempts so far: the seq the next attempt must carry")
    stage: Stage
    next: str | None
    phase: int | None = Field(description="the next player's phase")
    in_last_chances: bool
    over: bool
    winners: list[str]
    scorepad: Scorepad
    attempts: list[Attempt]
    created_at: float
    updated_at: float


class TurnPhoto(Answer):
    id: int
    url: str
    reading: dict


class Turn(Answer):
    roll: int
    photo_id: int | None
    photo: TurnPhoto | None
    dice: list[dict] = Field(description="{token, source, checked} per die")
    set_aside: bool


class KeptGame(Game):
    turn: Turn | None = Field(description="the turn being played, as a page left it, or null")


class Kept(Answer):
    kept: int = Field(description="the attempt whose turn is kept")


class GameSummary(Answer):
    id: str
    players: list[str]
    mode: Mode
    attempts: int
    next: str | None
    over: bool
    winners: list[str]
    totals: dict[str, int]
    created_at: float
    updated_at: float


class Games(Answer):
    games: list[GameSummary] = Field(description="most recently played first")


class RunnerUp(Answer):
    value: FaceValue
    color: Color


class ReadDie(Answer):
    value: FaceValue
    color: Color
    token: Token
    confidence: float
    uncertain: bool
    die: str | None
    doubt: Literal["value", "color", "die"] | None = Field(
        default=None, description="null unless uncertain: what to ask (an uncertain die without it: ask the value)")
    runner_up: RunnerUp | None = Field(default=None, description="null unless uncertain: the next likeliest face")
    box: list[float] = Field(description="x0, y0, x1, y1 in upright image pixels")
    polygon: list[list[float]]


class Reading(Answer):
    width: int
    height: int
    ms: float
    dice: list[ReadDie]


class ReadOnly(Answer):
    reading: Reading


class FrameRead(Answer):
    reading: Reading
    hand: bool = Field(description="a hand is in view beside the dice: the page takes no photo")


class HeldRead(FrameRead):
    held: str = Field(description="the token that keeps this photo (POST .../held-photos/{token})")


class PhotoKept(Answer):
    photo_id: int
    url: str
    reading: Reading


class LearntItem(Answer):
    kind: Literal["ink", "value"]
    name: str = Field(description="the ink (red, orange, green, blue) or the value (1..10, W)")
    dice: int = Field(ge=0, description="learnt dice of this ink or value")
    checked: int = Field(ge=0, description="of them, checked by a player")
    in_use: bool = Field(description="the guard lets what was learnt change readings to it")


class DiceSet(Answer):
    id: int
    name: str = Field(min_length=1, max_length=MAX_SET_NAME)
    dice: int = Field(ge=0, description="dice learnt from confirmed photos")
    photos: int = Field(ge=0)
    in_use: bool = Field(description="what was learnt changes readings (the guard lets it)")
    damaged: int = Field(ge=0, description="photos whose stored learning is damaged: not counted in dice or "
                                           "photos, not used")
    learnt: list[LearntItem] = Field(description="per ink, then per value: what the set learnt")


class DiceSets(Answer):
    sets: list[DiceSet]


class Forgotten(Answer):
    forgotten: int
    set: DiceSet


class Recorded(Answer):
    attempt: Attempt
    game: Game
    dice_set: DiceSet | None = Field(description="what the game's set learnt, once the photo is learnt")


class Undone(Answer):
    undone: dict
    game: Game


class Deleted(Answer):
    deleted: str


# every answer model, so the document's components hold each once
ANSWERS: tuple[type[BaseModel], ...] = (
    Error, HouseRules, Evaluation, Advice, FirstPlayer, Game, KeptGame, Kept, Games, ReadOnly, FrameRead, HeldRead, PhotoKept, DiceSet,
    DiceSets, Forgotten, Recorded, Undone, Deleted)
