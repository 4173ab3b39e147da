"""Whole games through the real evaluator: turns, bonuses, last chances, ties, undo, JSON."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.dice import Face, parse_faces, standard_set
from companion.game import Attempt, Game, GameError, Mode, PlayerScore, Scorepad
from companion.rules import HouseRules, evaluate
from companion.seating import SeatingError, first_player

# --- rolls the physical set can show ---------------------------------------------------------


def physical(values: str) -> tuple[Face, ...]:
    """A roll of the standard set from numbers alone ("10 9 W ..."): each number goes to the
    first free die carrying it, and shows that die's face (so the colours are real)."""
    free = list(standard_set().dice)
    faces = []
    for text in values.split():
        value = None if text == "W" else int(text)
        die = next((d for d in free if any(f.value == value for f in d.faces)), None)
        assert die is not None, f"the set cannot show {values!r}"
        free.remove(die)
        faces.append(next(f for f in die.faces if f.value == value))
    return tuple(faces)


def fits_standard_set(faces) -> bool:
    """Whether each face can be shown by a different die of the set (bipartite matching)."""
    dice = standard_set().dice
    owner: dict[int, int] = {}  # die index -> face index

    def place(i: int, seen: set[int]) -> bool:
        for d, die in enumerate(dice):
            if d in seen or not die.has_face(faces[i]):
                continue
            seen.add(d)
            if d not in owner or place(owner[d], seen):
                owner[d] = i
                return True
        return False

    return len(faces) <= len(dice) and all(place(i, set()) for i in range(len(faces)))


# The best roll of each phase: 60+57+59+49+52+54+60+56+60+62 = 569 points.
BEST = {
    1: physical("10 10 10 10 10 10 W W W W"),
    2: physical("10 10 10 10 9 8 W W W W"),
    3: physical("10 10 10 10 10 9 W W W W"),
    4: physical("10 9 8 7 6 5 4 W W W"),
    5: physical("10 9 8 7 6 5 4 3 W W"),
    6: physical("10 9 8 7 6 5 4 3 2 W"),
    7: physical("10 10 10 10 10 10 W W W W"),
    8: tuple(parse_faces("9o 8o 10o 7o 8o 10o 4o Wr Wg Wr".split())),  # H1..H6, then L2 L1 L3 L4
    9: physical("10 10 10 10 10 10 W W W W"),
    10: physical("10 10 10 10 10 5 4 4 4 W"),  # a set of 5 tens and a set of 3 fours
}
# Misses every phase: no three alike, no four in a row, at most 4 of a colour.
MISS = tuple(parse_faces("1b 1r 3r 3b 5o 5r 7b 7g 9r 9g".split()))


def best(phase: int) -> tuple[Face, ...]:
    return BEST[phase]


def play(game: Game, plan: str) -> list[Attempt]:
    """Play the next attempts: "m" makes the phase with its best roll, "x" misses it."""
    attempts = []
    for step in plan.replace(" ", ""):
        player = game.next_player
        assert player is not None, "the game ended before the plan did"
        faces = best(game.current_phase(player)) if step == "m" else MISS
        attempts.append(game.record(player, faces))
    return attempts


def line(game: Game, name: str) -> PlayerScore:
    return game.scorepad().player(name)


def test_the_fixed_rolls_are_physical_and_the_miss_misses():
    for phase, faces in BEST.items():
        assert fits_standard_set(faces), phase
        assert evaluate(phase, faces).complete
    assert fits_standard_set(MISS)
    assert not any(evaluate(p, MISS).complete for p in range(1, 11))
    assert not fits_standard_set(parse_faces("10r 10r".split()))  # only H2 shows 10r


# --- new games ----------------------------------------------------------------------------------


def test_new_game_starts_everyone_on_phase_1_with_the_first_seat_to_play():
    game = Game.new(["Ann", "Bob"])
    assert game.mode is Mode.STANDARD and Mode("solitaire") is Mode.SOLITAIRE
    assert game.next_player == "Ann"
    assert [game.current_phase(p) for p in game.players] == [1, 1]
    assert not game.over and not game.in_last_chances and game.winners == []
    pad = game.scorepad().to_json()
    assert pad["next"] == "Ann" and pad["over"] is False and pad["winners"] == []
    assert pad["players"][0] == {
        "name": "Ann", "phase": 1, "phases": [None] * 10, "five_phase_bonus": 0,
        "first_finish_bonus": 0, "failures": 0, "penalty": 0, "total": 0,
    }


@pytest.mark.parametrize(
    "players, mode, message",
    [
        ([], "standard", "at least 1 player"),
        (["Ann", ""], "standard", "non-empty"),
        (["Ann", "  "], "standard", "non-empty"),
        (["Ann", "ann"], "standard", "given twice"),
        (["Ann", "B" * 31], "standard", "longer than 30 characters"),
        ("Ann", "standard", "list of names"),
        (["Ann", "Bob"], "solitaire", "exactly 1 player"),
        (["Ann"], "duel", "unknown mode 'duel'"),
    ],
)
def test_bad_games_are_refused_with_a_reason(players, mode, message):
    with pytest.raises(GameError, match=message):
        Game.new(players, mode)


def test_a_name_of_30_characters_fits_and_a_replayed_log_keeps_the_limit():
    assert Game.new([" " + "A" * 30 + " "]).players == ("A" * 30,)  # counted after the trim
    with pytest.raises(GameError, match="longer than 30 characters"):
        Game.from_json({"players": ["A" * 31]})


@pytest.mark.parametrize("players, message", [
    (["Ann", " ann "], "player name 'ann' is given twice"),
    (["Ann", "B" * 31], "longer than 30 characters"),
    (["Ann", " "], "non-empty"),
])
def test_the_starter_roll_refuses_the_names_a_game_refuses(players, message):
    with pytest.raises(GameError, match=message):
        Game.new(players)
    with pytest.raises(SeatingError, match=message):
        first_player(players, [6, 9])


def test_the_starter_roll_gives_the_names_as_the_game_keeps_them():
    assert first_player([" Ann", "Bob "], [9, 6]).order == ("Ann", "Bob")


# --- turns ------------------------------------------------------------------------------------


def test_turns_go_round_the_table_and_a_miss_keeps_the_phase():
    game = Game.new(["Ann", "Bob", "Cid"])
    made = game.record("Ann", best(1))
    assert made.made and made.phase == 1 and made.score == 60 and game.current_phase("Ann") == 2
    missed = game.record("Bob", MISS)
    assert not missed.made and missed.score is None and game.current_phase("Bob") == 1
    assert game.next_player == "Cid"
    play(game, "m m")  # Cid makes 1, Ann makes 2
    assert game.next_player == "Bob"
    assert line(game, "Ann").phases[:3] == (60, 57, None)
    assert line(game, "Bob").failures == 1 and line(game, "Bob").phases == (None,) * 10
    assert line(game, "Ann").total == 117 and line(game, "Bob").penalty == 0  # no penalty in standard


def test_out_of_turn_unknown_player_and_bad_dice_are_refused_and_change_nothing():
    game = Game.new(["Ann", "Bob"])
    before = game.scorepad()
    with pytest.raises(GameError, match="^it is Ann's turn, not Bob's$"):
        game.record("Bob", best(1))
    with pytest.raises(GameError, match="^unknown player 'Zed'$"):
        game.record("Zed", best(1))
    with pytest.raises(GameError, match="1 to 10 dice"):
        game.record("Ann", ())
    with pytest.raises(GameError, match="not a die face"):
        game.record("Ann", ["10g"])
    assert game.scorepad() == before and game.attempts == ()


# --- Five Phase Bonus --------------------------------------------------------------------------

# Phase 1-5 scores 33 + 57 + 30 + 49 + 52 = 221; the 32-point Phase 1 makes it 220.
THRESHOLD_ROLLS = [
    physical("5 5 5 6 6 6 1 2 3 4"),
    physical("10 10 10 10 9 8 W 1 2 3"),
    physical("5 5 5 5 6 7 1 2 3 4"),
    physical("10 9 8 7 6 5 4 W W W"),
    physical("10 9 8 7 6 5 4 3 W W"),
]


@pytest.mark.parametrize("phase1, total, bonus", [("5 5 5 6 6 6 1 2 3 4", 221, 40), ("6 6 6 7 7 5 W 1 2 3", 220, 0)])
def test_five_phase_bonus_needs_221_from_phases_1_to_5(phase1, total, bonus):
    game = Game.new(["Ann"], "solitaire")
    rolls = [physical(phase1)] + THRESHOLD_ROLLS[1:]
    attempts = [game.record("Ann", faces) for faces in rolls]
    ann = line(game, "Ann")
    assert sum(ann.phases[:5]) == total and ann.phase == 6
    assert ann.five_phase_bonus == bonus == attempts[-1].five_phase_bonus
    assert all(a.five_phase_bonus == 0 for a in attempts[:-1])
    assert ann.total == total + bonus


def test_five_phase_bonus_counts_only_phases_1_to_5():
    game = Game.new(["Ann"], "solitaire")
    for faces in [physical("6 6 6 7 7 5 W 1 2 3")] + THRESHOLD_ROLLS[1:]:
        game.record("Ann", faces)
    play(game, "m")  # Phase 6 scores 54 but comes too late for the bonus
    ann = line(game, "Ann")
    assert ann.five_phase_bonus == 0 and ann.total == 220 + 54


# --- solitaire ------------------------------------------------------------------------------------


def test_the_best_possible_solitaire_game_totals_649():
    game = Game.new(["Solo"], Mode.SOLITAIRE)
    attempts = play(game, "m" * 10)
    solo = line(game, "Solo")
    assert solo.phases == (60, 57, 59, 49, 52, 54, 60, 56, 60, 62)
    assert (solo.five_phase_bonus, solo.first_finish_bonus, solo.penalty, solo.failures) == (40, 40, 0, 0)
    assert solo.total == 649 and solo.phase == 11
    assert game.over and game.winners == ["Solo"] and game.next_player is None
    assert [a.five_phase_bonus for a in attempts].index(40) == 4
    assert attempts[-1].first_finish_bonus == 40


def test_solitaire_misses_cost_5_and_a_missed_phase_10_loses_the_finish_bonus():
    game = Game.new(["Solo"], "solitaire")
    play(game, "m x m m m m m m m m")  # one miss on Phase 2
    assert not game.over
    missed = play(game, "x x")
    assert [a.penalty for a in missed] == [-5, -5]
    play(game, "m")
    solo = line(game, "Solo")
    assert game.over and solo.failures == 3 and solo.penalty == -15
    assert solo.first_finish_bonus == 0 and solo.five_phase_bonus == 40
    assert solo.total == 569 + 40 - 15
    with pytest.raises(GameError, match="^the game is over$"):
        game.record("Solo", best(10))


def test_solitaire_finish_bonus_after_misses_on_earlier_phases_only():
    game = Game.new(["Solo"], "solitaire")
    play(game, "x m m m m m m m m m x x m")  # misses before Phase 10 do not cost the bonus
    solo = line(game, "Solo")
    assert solo.first_finish_bonus == 0  # two misses on Phase 10 do
    game2 = Game.new(["Solo"], "solitaire")
    play(game2, "x m m m m m m m m m m")
    assert line(game2, "Solo").first_finish_bonus == 40 and line(game2, "Solo").penalty == -5


# --- the end of normal play and last chances ---------------------------------------------------


def test_standard_single_player_ends_on_phase_10_without_penalties():
    game = Game.new(["Ann"])
    play(game, "x m m m m m m m m m m")
    ann = line(game, "Ann")
    assert game.over and ann.penalty == 0 and ann.failures == 1 and ann.first_finish_bonus == 40
    assert ann.total == 569 + 80


def test_first_finisher_ends_normal_play_and_later_player_on_phase_10_earns_40_too():
    game = Game.new(["Ann", "Bob"])
    # Nine rounds of made phases: both on Phase 10. Ann finishes first; Bob, seated after
    # her and already on Phase 10, makes it in his last chance: same total, both win.
    play(game, "mm" * 9)
    first = play(game, "m")[0]
    assert first.first_finish_bonus == 40 and not first.last_chance
    assert game.in_last_chances and game.next_player == "Bob" and not game.over
    last = play(game, "m")[0]
    assert last.last_chance and last.first_finish_bonus == 40
    assert last.to_json() | {"evaluation": None} == {
        "player": "Bob", "phase": 10, "dice": [f.token for f in best(10)], "made": True, "score": 62,
        "five_phase_bonus": 0, "first_finish_bonus": 40, "penalty": 0, "last_chance": True, "evaluation": None,
    }
    assert last.to_json()["evaluation"] == evaluate(10, best(10)).to_json()
    assert game.over and not game.in_last_chances and game.next_player is None
    assert line(game, "Ann").total == line(game, "Bob").total == 649
    assert game.winners == ["Ann", "Bob"] and game.scorepad().to_json()["winners"] == ["Ann", "Bob"]


def test_no_extra_bonus_for_a_player_seated_before_the_first_finisher():
    game = Game.new(["Ann", "Bob"])
    play(game, "mm" * 9)
    play(game, "x m")  # Ann misses Phase 10, then Bob finishes first
    assert game.in_last_chances and game.next_player == "Ann"
    last = play(game, "m")[0]
    assert last.last_chance and last.first_finish_bonus == 0
    assert game.over and game.winners == ["Bob"]
    assert line(game, "Bob").total - line(game, "Ann").total == 40


def test_last_chances_go_round_from_the_seat_after_the_finisher_and_chain():
    game = Game.new(["Ann", "Bob", "Cid", "Dee"])
    # Bob and Dee reach Phase 10; Ann and Cid, who each missed once, are on Phase 9.
    rounds = ["mmmm"] * 7 + ["xmmm", "mmxm"]
    play(game, "".join(rounds))
    assert [game.current_phase(p) for p in game.players] == [9, 10, 9, 10]
    play(game, "x")  # Ann misses Phase 9
    assert play(game, "m")[0].first_finish_bonus == 40  # Bob finishes first
    assert game.in_last_chances and game.next_player == "Cid"
    chain = play(game, "m m")  # Cid chains Phase 9 and Phase 10...
    assert [a.phase for a in chain] == [9, 10] and all(a.last_chance for a in chain)
    assert chain[-1].first_finish_bonus == 0  # ...but was not on Phase 10 when Bob finished
    assert game.next_player == "Dee"
    assert play(game, "m")[0].first_finish_bonus == 40  # Dee was, seated after Bob
    assert game.next_player == "Ann"
    tail = play(game, "m x")  # Ann chains Phase 9, misses Phase 10: her last chance ends
    assert [a.made for a in tail] == [True, False]
    ann = line(game, "Ann")
    assert game.over and ann.phase == 10 and ann.failures == 3
    pads = {p.name: p for p in game.scorepad().players}
    assert [pads[n].first_finish_bonus for n in game.players] == [0, 40, 0, 40]
    assert game.winners == ["Bob", "Dee"]  # equal rolls, equal bonuses


def test_a_miss_in_a_last_chance_ends_it_at_once():
    game = Game.new(["Ann", "Bob", "Cid"])
    play(game, "mxx" + "mxx" * 8 + "m")  # Ann finishes; Bob and Cid still on Phase 1
    assert game.next_player == "Bob"
    play(game, "m m x")  # Bob chains Phase 1 and 2, misses 3
    assert game.next_player == "Cid" and game.current_phase("Bob") == 3
    play(game, "x")
    assert game.over and line(game, "Cid").failures == 10 and line(game, "Bob").failures == 10
    with pytest.raises(GameError, match="^the game is over$"):
        game.record("Ann", best(1))


def test_a_last_chance_chain_can_earn_the_five_phase_bonus():
    game = Game.new(["Ann", "Bob"])
    play(game, "mx" * 9 + "m")  # Ann finishes; Bob on Phase 1
    attempts = play(game, "m" * 5 + "x")
    assert attempts[4].five_phase_bonus == 40 and game.over
    assert line(game, "Bob").total == 60 + 57 + 59 + 49 + 52 + 40


# --- undo: the game replayed without its last attempt ---------------------------------------------


def without_last(game: Game) -> Game:
    """What an undo leaves (the store deletes the last attempt, the game is replayed)."""
    log = game.to_json()
    return Game.from_json({**log, "turns": log["turns"][:-1]})


def test_undo_takes_back_the_last_attempt_even_the_one_that_ended_the_game():
    game = Game.new(["Ann", "Bob"])
    play(game, "mm" * 9 + "m")
    in_last_chances = game.scorepad()
    play(game, "m")
    assert game.over and game.attempts[-1].player == "Bob" and game.attempts[-1].first_finish_bonus == 40
    game = without_last(game)
    assert not game.over and game.in_last_chances and game.scorepad() == in_last_chances
    game = without_last(game)  # back before the first finish: normal play again
    assert not game.in_last_chances and game.next_player == "Ann"
    assert line(game, "Ann").first_finish_bonus == 0 and len(game.attempts) == 18


# --- JSON ------------------------------------------------------------------------------------------


def test_json_round_trip_rebuilds_the_same_game():
    game = Game.new(["Ann", "Bob", "Cid"], rules=HouseRules(natural_in_every_group=True))
    play(game, "mmx" * 9 + "m m")
    data = game.to_json()
    assert data["players"] == ["Ann", "Bob", "Cid"] and data["mode"] == "standard"
    assert data["rules"] == {"natural_in_every_group": True}
    assert data["turns"][0] == {"player": "Ann", "dice": [f.token for f in best(1)]}
    again = Game.from_json(data)
    assert again.scorepad() == game.scorepad() and again.attempts == game.attempts
    assert again.rules == game.rules and again.to_json() == data


@pytest.mark.parametrize(
    "turns, index, message",
    [
        ([{"player": "Bob", "dice": ["10g"]}], 0, "it is Ann's turn, not Bob's"),
        ([{"player": "Ann", "dice": ["1r"]}, {"player": "Zed", "dice": ["1r"]}], 1, "unknown player 'Zed'"),
        ([{"player": "Ann", "dice": ["1r", "11q"]}], 0, "bad dice token '11q'"),
        ([{"player": "Ann"}], 0, "\"dice\""),
        (["Ann"], 0, "a turn is an object"),
    ],
)
def test_from_json_names_the_first_bad_turn(turns, index, message):
    with pytest.raises(GameError) as err:
        Game.from_json({"players": ["Ann", "Bob"], "turns": turns})
    assert err.value.turn == index
    assert str(err.value).startswith(f"turns[{index}]: ") and message in str(err.value)


def test_from_json_refuses_turns_after_the_end_and_bad_headers():
    done = Game.new(["Solo"], "solitaire")
    play(done, "m" * 10)
    data = done.to_json()
    data["turns"].append(data["turns"][0])
    with pytest.raises(GameError, match=r"^turns\[10\]: the game is over$"):
        Game.from_json(data)
    for bad, message in [
        ([], "JSON object"),
        ({"turns": []}, "players"),
        ({"players": ["A"], "turns": {}}, "must be a list"),
        ({"players": ["A"], "rules": {"no_wilds": True}}, "unknown house rule 'no_wilds'"),
        ({"players": ["A"], "mode": "duel"}, "unknown mode"),
    ]:
        with pytest.raises(GameError, match=message):
            Game.from_json(bad)


# --- properties: undo and replay agree with playing forward ---------------------------------


@settings(max_examples=40, deadline=None)
@given(
    players=st.integers(min_value=1, max_value=4),
    solitaire=st.booleans(),
    plan=st.lists(st.sampled_from("mmmx"), min_size=1, max_size=60),
)
def test_undo_and_replay_agree_with_playing_forward(players, solitaire, plan):
    names = ["Ann", "Bob", "Cid", "Dee"][: 1 if solitaire else players]
    game = Game.new(names, "solitaire" if solitaire else "standard")
    for step in plan:
        if game.over:
            break
        before = game.scorepad()
        attempt = play(game, step)[0]
        pad = game.scorepad()
        # Undo restores the exact scorepad; redoing gives the same attempt back.
        undone = without_last(game)
        assert undone.scorepad() == before
        assert undone.record(attempt.player, attempt.faces) == attempt and undone.scorepad() == pad
        totals = [p.total for p in pad.players]
        assert pad.winners == (tuple(n for n, t in zip(names, totals) if t == max(totals)) if pad.over else ())
    assert Game.from_json(game.to_json()).scorepad() == game.scorepad()
    assert isinstance(game.scorepad(), Scorepad)
