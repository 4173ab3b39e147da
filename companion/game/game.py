"""A game of Phase 10 Dice: who plays, what they rolled, and the scorepad that follows.

`Game` checks each request (whose turn, is the game over), asks the evaluator whether the
phase is made and what it scores, and feeds the verdict to the state machine in `table`.
Its JSON form is the replay log: the players, the mode, the house rules and every attempt's
dice, so a saved game is rebuilt by replaying it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from companion.dice import MAX_DICE, DiceError, Face, parse_tokens, standard_set
from companion.game.model import Attempt, GameError, Mode, Stage
from companion.game.names import player_names
from companion.game.scorepad import PlayerScore, Scorepad
from companion.game.table import Table
from companion.rules import Evaluation, HouseRules, evaluate


class Game:
    """A game in progress or finished. Build one with `Game.new` or `Game.from_json`."""

    def __init__(self, players: tuple[str, ...], mode: Mode, rules: HouseRules) -> None:
        self._players = players
        self._mode = mode
        self._rules = rules
        self._attempts: list[Attempt] = []
        self._table = Table.new(list(players), mode)

    @classmethod
    def new(
        cls, players: Sequence[str], mode: Mode | str = Mode.STANDARD, rules: HouseRules = HouseRules()
    ) -> "Game":
        mode = Mode.parse(mode)
        names = player_names(players)
        if mode is Mode.SOLITAIRE and len(names) != 1:
            raise GameError(f"solitaire is for exactly 1 player, got {len(names)}")
        if not isinstance(rules, HouseRules):
            raise GameError(f"rules must be HouseRules, got {type(rules).__name__}")
        return cls(names, mode, rules)

    # --- what the table looks like -------------------------------------------------------

    @property
    def players(self) -> tuple[str, ...]:
        return self._players

    @property
    def mode(self) -> Mode:
        return self._mode

    @property
    def rules(self) -> HouseRules:
        return self._rules

    @property
    def attempts(self) -> tuple[Attempt, ...]:
        return tuple(self._attempts)

    @property
    def stage(self) -> Stage:
        return self._table.stage

    @property
    def over(self) -> bool:
        return self._table.stage is Stage.OVER

    @property
    def in_last_chances(self) -> bool:
        return self._table.stage is Stage.LAST_CHANCES

    @property
    def next_player(self) -> str | None:
        seat = self._table.next_seat
        return None if seat is None else self._players[seat]

    def current_phase(self, player: str) -> int:
        return self._table.seats[self._seat(player)].phase

    @property
    def winners(self) -> list[str]:
        """The players with the highest total, all of them on a tie; empty until the game is over."""
        if not self.over:
            return []
        best = max(seat.total for seat in self._table.seats)
        return [seat.name for seat in self._table.seats if seat.total == best]

    def scorepad(self) -> Scorepad:
        return Scorepad(
            players=tuple(PlayerScore.of(seat) for seat in self._table.seats),
            over=self.over,
            winners=tuple(self.winners),
            next=self.next_player,
        )

    # --- playing ----------------------------------------------------------------------------

    def record(self, player: str, faces: Sequence[Face], *, as_recorded: bool = False) -> Attempt:
        """Score `player`'s final dice for their current phase and move the game on.

        DiceError when the set cannot show these faces at once; `as_recorded`: an attempt a
        store already holds, replayed as it was scored (it may predate that check)."""
        if self.over:
            raise GameError("the game is over")
        seat = self._seat(player)
        expected = self._table.next_seat
        assert expected is not None, "a game that is not over has a next seat"
        if seat != expected:
            raise GameError(f"it is {self._players[expected]}'s turn, not {self._players[seat]}'s")
        faces = _check_faces(faces)
        if not as_recorded:
            standard_set().check_shown(faces)
        phase = self._table.seats[seat].phase
        try:
            evaluation = evaluate(phase, faces, self._rules)
        except (DiceError, ValueError) as exc:
            raise GameError(f"cannot score these dice: {exc}") from exc
        attempt = self._apply(seat, phase, faces, evaluation)
        self._attempts.append(attempt)
        return attempt

    def _apply(self, seat: int, phase: int, faces: tuple[Face, ...], evaluation: Evaluation) -> Attempt:
        made = bool(evaluation.complete)
        outcome = self._table.apply(seat, made, evaluation.score)
        return Attempt(
            player=self._players[seat],
            phase=phase,
            faces=faces,
            evaluation=evaluation,
            made=made,
            five_phase_bonus=outcome.five_phase_bonus,
            first_finish_bonus=outcome.first_finish_bonus,
            penalty=outcome.penalty,
            last_chance=outcome.last_chance,
        )

    def _seat(self, player: str) -> int:
        name = player.strip() if isinstance(player, str) else player
        try:
            return self._players.index(name)
        except ValueError:
            raise GameError(f"unknown player {player!r}") from None

    # --- JSON ---------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The game as a replay log (plus its house rules): `Game.from_json` rebuilds it."""
        return {
            "players": list(self._players),
            "mode": self._mode.value,
            "rules": dataclasses.asdict(self._rules),
            "turns": [{"player": a.player, "dice": [f.token for f in a.faces]} for a in self._attempts],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Game":
        """Rebuild a game by replaying a log; a GameError's `turn` names the first bad turn."""
        if not isinstance(data, Mapping):
            raise GameError(f"a game log is a JSON object, got {_json_type(data)}")
        if "players" not in data:
            raise GameError("a game log needs \"players\": the names in turn order")
        # A log's "turns", or the "attempts" of the scorepad's own game JSON (GET /api/games/ID).
        key = "attempts" if "turns" not in data and "attempts" in data else "turns"
        turns = data.get(key, [])
        if not isinstance(turns, list):
            raise GameError(f"\"{key}\" must be a list, got {_json_type(turns)}")
        game = cls.new(data["players"], data.get("mode", Mode.STANDARD), house_rules_from_json(data.get("rules")))
        for index, turn in enumerate(turns):
            try:
                game.record(*_turn_from_json(turn))
            except (GameError, DiceError) as exc:
                raise GameError(f"{key}[{index}]: {exc}", turn=index) from exc
        return game


def _check_faces(faces: Sequence[Face]) -> tuple[Face, ...]:
    if isinstance(faces, (str, bytes)) or not isinstance(faces, Sequence):
        raise GameError("the dice must be a list of faces")
    faces = tuple(faces)
    if not 1 <= len(faces) <= MAX_DICE:
        raise GameError(f"a roll has 1 to {MAX_DICE} dice, got {len(faces)}")
    for face in faces:
        if not isinstance(face, Face):
            raise GameError(f"not a die face: {face!r}")
    return faces


def _turn_from_json(turn: Any) -> tuple[str, tuple[Face, ...]]:
    if not isinstance(turn, Mapping):
        raise GameError(f"a turn is an object with \"player\" and \"dice\", got {_json_type(turn)}")
    player, dice = turn.get("player"), turn.get("dice")
    if not isinstance(player, str):
        raise GameError("a turn needs \"player\": a name")
    if not isinstance(dice, list) or not all(isinstance(t, str) for t in dice):
        raise GameError("a turn needs \"dice\": a list of tokens such as \"7b\"")
    return player, tuple(p.face for p in parse_tokens(dice))


def house_rules_from_json(data: Any) -> HouseRules:
    """The house rules of a game log or an API request: an object of true/false switches.

    Absent (None, JSON null) means no house rules. The one parser for every adapter."""
    if data is None:
        return HouseRules()
    if not isinstance(data, Mapping):
        raise GameError(f"\"rules\" must be an object, got {_json_type(data)}")
    known = {f.name: f for f in dataclasses.fields(HouseRules)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise GameError(f"unknown house rule {unknown[0]!r}: known rules are {', '.join(sorted(known))}")
    for key, value in data.items():
        if not isinstance(value, bool):
            raise GameError(f"house rule {key!r} must be true or false, got {value!r}")
    return HouseRules(**data)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, (int, float)) else type(value).__name__
