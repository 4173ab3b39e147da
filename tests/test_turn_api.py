"""The turn's server side: which doubts are worth asking (the rules engine decides), whether
the set can show the dice at once, the turn kept across a reload, which dice the player
checked, and the scorepad exported as CSV and as a game file `companion replay` reads."""

from __future__ import annotations

import csv
import io
import json

import pytest

from companion.cli import main as companion
from companion.dice import parse_face, parse_faces
from companion.rules import evaluate
from companion.rules.doubts import Doubt, doubts_that_matter
from companion.store import Store
from test_api_photos import stored_photo

PHASE1 = ["7b", "7r", "7g", "3o", "3r", "Wb"]
S00 = parse_faces("Wb 1b 10r Wb 10b 10g 6o 5b 2o 10o".split())  # Phase 1: 10r 10b 10g + Wb Wb 10o = 40


# --- which doubts matter: the core ------------------------------------------------------------

@pytest.mark.parametrize("doubt, matters", [
    (Doubt(4, "color", parse_face("10g")), False),  # a colour outside the colour phase: 10 in any colour
    (Doubt(6, "die", None, 1.0), False),  # sure of 6o, unsure it is a die: without it, the same 40
    (Doubt(6, "die", None, 0.9), True),  # a side face maybe: its die could show a 10, two sets of 10s
    (Doubt(8, "value", parse_face("3o")), False),  # 2o's die prints no other orange face; the others' are taken
    (Doubt(7, "value", parse_face("3b")), True),  # runner-up 3b is unused, but 5b as 6b makes 6 6 W: 42
    (Doubt(2, "value", parse_face("9r")), True),  # 10r or 9r: 40 or 39
    (Doubt(2, "value", None), True),  # no runner-up: every red face is tried
    (Doubt(2, "die", None, 1.0), True),  # without 10r: 10b 10g 10o + ... scores otherwise
    (Doubt(6, None, None), True),  # kind not said: 6o as a 10 would give a better set
])
def test_a_doubt_matters_when_a_plausible_other_reading_changes_the_outcome_or_score(doubt, matters):
    assert doubts_that_matter(1, S00, [doubt]) == [matters]


def play_checks(phase: int, read: list[str], truth: list[str], doubts: list[Doubt]) -> tuple[list[int], list[str]]:
    """The page's way through the checks: ask the first die that matters, the player puts it
    right (the true face), weigh the rest again. The dice asked and the dice confirmed."""
    dice, asked = list(read), []
    while True:
        open_doubts = [d for d in doubts if d.index not in asked]
        ask = [d.index for d, m in zip(open_doubts, doubts_that_matter(phase, parse_faces(dice), open_doubts)) if m]
        if not ask:
            return asked, dice
        asked.append(ask[0])
        dice[ask[0]] = truth[ask[0]]


def test_several_dice_read_wrong_at_once_are_asked_until_the_turn_scores_as_the_true_dice():
    # A generated photo (training.synth, seed 9201, photo 78) played as Phase 4, a run of 7: the
    # reader doubts six dice, three of them wrong (10o is 5o, 7g is 4g, 3o is 6o), and none of
    # their runner-ups is the true face: read as it is, the run is missed; truly it is made.
    read = "3b 9b 7o 1o 1r 8o 10o 7g 3o".split()
    truth = "3b 9b 7o 1o 1r 8o 5o 4g 6o".split()
    doubts = [Doubt(2, "value", parse_face("Wo"), 0.26), Doubt(4, "value", parse_face("7r"), 0.5486),
              Doubt(5, "value", parse_face("Wo"), 0.1917), Doubt(6, "value", parse_face("7o"), 0.2788),
              Doubt(7, "value", parse_face("3g"), 0.0936), Doubt(8, "die", parse_face("2o"), 0.2403)]
    asked, confirmed = play_checks(4, read, truth, doubts)
    assert {6, 7, 8} <= set(asked)
    assert evaluate(4, parse_faces(confirmed)) == evaluate(4, parse_faces(truth))
    assert not evaluate(4, parse_faces(read)).complete


def test_a_miss_that_only_several_misread_dice_could_make_asks_the_dice_of_such_a_group():
    # Phase 4, a run of 7: read 3 9 7 1 1 8 10 7 3; three dice read otherwise make 3..9 (1r, 10o
    # and 7g, say); 8o is in no such smallest group: the run has its 8 already.
    faces = parse_faces("3b 9b 7o 1o 1r 8o 10o 7g 3o".split())
    doubts = [Doubt(i, None, None) for i in (2, 4, 5, 6, 7, 8)]
    assert doubts_that_matter(4, faces, doubts) == [True, True, False, True, True, True]
    # dice the reader is sure of (0.95 each): all three wrong at once is too unlikely to ask
    sure = [Doubt(i, "value", parse_face("1g"), 0.95) for i in (6, 7, 8)]
    assert doubts_that_matter(4, faces, sure) == [False] * 3
    assert doubts_that_matter(4, faces, [Doubt(i, "value", parse_face("1g"), 0.6) for i in (6, 7, 8)]) == [True] * 3


def test_a_miss_no_doubted_die_can_turn_asks_nothing():
    # Phase 8 needs seven of one colour; S00 has five blue: one die read otherwise cannot make it,
    assert doubts_that_matter(8, S00, [Doubt(6, None, None)]) == [False]
    assert doubts_that_matter(8, S00, [Doubt(0, "color", None)]) == [False]
    # but two non-blue dice that are blue could.
    assert doubts_that_matter(8, S00, [Doubt(6, None, None), Doubt(8, None, None)]) == [True, True]


def test_a_colour_doubt_matters_in_the_colour_phase():
    faces = parse_faces("1r 2r 3r 4r 5r 6r 7r 8b 9g 10o".split())  # seven red: phase 8 made
    assert doubts_that_matter(8, faces, [Doubt(0, "color", parse_face("1o"))]) == [True]
    assert doubts_that_matter(1, faces, [Doubt(0, "color", parse_face("1o"))]) == [False]


def test_a_doubt_about_a_die_not_sent_is_refused():
    with pytest.raises(ValueError):
        doubts_that_matter(1, S00, [Doubt(10, "value", None)])
    with pytest.raises(ValueError):
        Doubt(0, "shape", None)
    with pytest.raises(ValueError):
        Doubt(0, "value", None, 1.5)


# --- /api/evaluate: ask and roll ----------------------------------------------------------------

def test_evaluate_says_which_doubts_to_ask_and_whether_the_roll_can_be_shown(client):
    dice = [f.token for f in S00]
    doubts = [{"index": 4, "doubt": "color", "runner_up": {"value": 10, "color": "green"}},
              {"index": 2, "doubt": "value", "runner_up": {"value": 9, "color": "red"}},
              {"index": 6, "doubt": None, "runner_up": None}]  # no kind, no runner-up: every other reading
    answer = client.post("/api/evaluate", json={"phase": 1, "dice": dice, "doubts": doubts}).json
    assert (answer["score"], answer["ask"]) == (40, [2, 6])
    # the reader's confidence goes with the doubt: sure of the face 6o, only whether it is a die
    doubts[2] = {"index": 6, "doubt": "die", "runner_up": None, "confidence": 1}
    assert client.post("/api/evaluate", json={"phase": 1, "dice": dice, "doubts": doubts}).json["ask"] == [2]
    doubts[2]["confidence"] = 0.9
    assert client.post("/api/evaluate", json={"phase": 1, "dice": dice, "doubts": doubts}).json["ask"] == [2, 6]
    assert answer["roll"] == {"possible": True, "reason": None}
    five_wilds = client.post("/api/evaluate", json={"phase": 1, "dice": ["Wr", "Wo", "Wg", "Wb", "Wr"]}).json
    assert five_wilds["roll"]["possible"] is False and "cannot all be showing" in five_wilds["roll"]["reason"]


@pytest.mark.parametrize("doubts", [
    [{"index": 6, "doubt": "value"}],  # only 6 dice
    [{"index": 0, "doubt": "shape"}],
    [{"index": 0, "doubt": "value", "runner_up": {"value": 11, "color": "red"}}],
    [{"index": 0, "doubt": "value", "runner_up": "7r"}],
    [{"index": 0, "doubt": "value", "confidence": 1.5}],
    "7r",
])
def test_bad_doubts_are_refused_with_a_reason(client, doubts):
    response = client.post("/api/evaluate", json={"phase": 1, "dice": PHASE1, "doubts": doubts})
    assert response.status_code == 400
    assert "doubt" in response.json["error"]


# --- the turn kept on the server ----------------------------------------------------------------

def test_the_turn_being_played_is_kept_until_its_attempt_is_recorded(app, client):
    game = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json
    gid = game["id"]
    assert client.get(f"/api/games/{gid}").json["turn"] is None
    photo_id = stored_photo(app, gid)
    turn = {"seq": 0, "roll": 2, "photo_id": photo_id, "set_aside": False,
            "dice": [{"token": "7b", "source": 0, "checked": False}, {"token": "7g", "source": 2, "checked": True},
                     {"token": "5r", "source": None, "checked": True}]}
    assert client.put(f"/api/games/{gid}/turn", json=turn).status_code == 200
    kept = client.get(f"/api/games/{gid}").json["turn"]
    assert (kept["roll"], kept["dice"], kept["photo"]["id"]) == (2, turn["dice"], photo_id)
    assert kept["photo"]["url"] == f"/api/photos/{photo_id}" and len(kept["photo"]["reading"]["dice"]) == 7
    client.post(f"/api/games/{gid}/attempts", json={"player": "Ann", "seq": 0, "dice": PHASE1})
    assert client.get(f"/api/games/{gid}").json["turn"] is None  # Bob's turn now
    stale = client.put(f"/api/games/{gid}/turn", json=turn)  # a page still on Ann's turn
    assert stale.status_code == 409
    assert client.get(f"/api/games/{gid}").json["turn"] is None


def test_a_die_typed_in_keeps_where_it_was_pointed_at_across_a_reload(app, client):
    gid = client.post("/api/games", json={"players": ["Ann"]}).json["id"]
    photo_id = stored_photo(app, gid)
    pointed = [120.5, 80.0, 170.5, 130.0]
    turn = {"seq": 0, "roll": 1, "photo_id": photo_id,
            "dice": [{"token": "7b", "source": 0, "checked": False, "box": None},
                     {"token": "5r", "source": None, "checked": True, "box": pointed}]}
    assert client.put(f"/api/games/{gid}/turn", json=turn).status_code == 200
    kept = client.get(f"/api/games/{gid}").json["turn"]["dice"]
    assert kept[1]["box"] == pointed and "box" not in kept[0]
    # a box for a read die, one beyond the photo, or one on no photo: refused, the kept turn stands
    width = client.get(f"/api/games/{gid}").json["turn"]["photo"]["reading"]["width"]
    for dice, photo in (([{"token": "7b", "source": 0, "box": pointed}], photo_id),
                        ([{"token": "5r", "source": None, "box": [width - 10, 0, width + 40, 50]}], photo_id),
                        ([{"token": "5r", "source": None, "box": [30, 20, 10, 40]}], photo_id),
                        ([{"token": "5r", "source": None, "box": pointed}], None)):
        bad = client.put(f"/api/games/{gid}/turn", json={"seq": 0, "roll": 1, "photo_id": photo, "dice": dice})
        assert bad.status_code == 400, bad.json
    assert client.get(f"/api/games/{gid}").json["turn"]["dice"] == kept


@pytest.mark.parametrize("change", [
    {"roll": 4}, {"roll": 0}, {"dice": [{"token": "11r", "source": None}]}, {"dice": "7b"},
    {"dice": [{"token": "7b", "source": 0}]},  # a source without a photo
    {"dice": [{"token": "7b", "source": None, "checked": "yes"}]},
    {"dice": [{"token": "7b", "source": None}] * 11},
])
def test_a_bad_turn_is_refused_and_keeps_nothing(client, change):
    gid = client.post("/api/games", json={"players": ["Ann"]}).json["id"]
    body = {"seq": 0, "roll": 1, "photo_id": None, "dice": [], **change}
    assert client.put(f"/api/games/{gid}/turn", json=body).status_code == 400
    assert client.get(f"/api/games/{gid}").json["turn"] is None


def test_a_turn_with_another_games_photo_is_refused(app, client):
    ann = client.post("/api/games", json={"players": ["Ann"]}).json["id"]
    bob = client.post("/api/games", json={"players": ["Bob"]}).json["id"]
    photo_id = stored_photo(app, bob)
    body = {"seq": 0, "roll": 1, "photo_id": photo_id, "dice": [{"token": "7b", "source": 0}]}
    assert client.put(f"/api/games/{ann}/turn", json=body).status_code == 404


def test_a_database_of_schema_2_gains_the_turns_table(db_path):
    import sqlite3

    from companion.store import _SCHEMA, _SCHEMA_2

    conn = sqlite3.connect(db_path)
    conn.executescript(f"{_SCHEMA}{_SCHEMA_2}PRAGMA user_version = 2;")
    conn.close()
    store = Store(db_path)
    assert store.schema_version() == 3
    game = store.create_game({"players": ["Ann"], "mode": "solitaire", "rules": {}})
    store.save_turn(game.id, 0, {"roll": 1, "photo_id": None, "dice": [], "set_aside": False})
    assert store.turn(game.id, 0)["roll"] == 1 and store.turn(game.id, 1) is None


# --- which dice the player checked --------------------------------------------------------------

def test_the_confirmed_photo_keeps_which_dice_were_checked_or_corrected(app, client, db_path):
    gid = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json["id"]
    photo_id = stored_photo(app, gid)  # read 7b 7r 1g 3o 3r Wb 9o
    body = {"player": "Ann", "seq": 0, "dice": PHASE1, "photo_id": photo_id, "sources": [0, 1, 2, 3, 4, 5],
            "checked": [False, True, False, False, False, False]}  # 7r looked at; 1g corrected to 7g
    assert client.post(f"/api/games/{gid}/attempts", json=body).status_code == 201
    labels = Store(db_path).get_photo(photo_id).labels["dice"]
    assert [d["checked"] for d in labels] == [False, True, True, False, False, False]
    assert [d["corrected"] for d in labels] == [False, False, True, False, False, False]
    bad = {**body, "seq": 1, "player": "Bob", "checked": [True]}
    assert client.post(f"/api/games/{gid}/attempts", json=bad).status_code == 400


# --- the scorepad to take home ------------------------------------------------------------------

def test_the_scorepad_exports_as_csv_in_the_pads_rows(client):
    gid = client.post("/api/games", json={"players": ["Ann", "=Bob"]}).json["id"]
    client.post(f"/api/games/{gid}/attempts", json={"player": "Ann", "seq": 0, "dice": PHASE1})
    response = client.get(f"/api/games/{gid}/scorepad.csv")
    assert response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"].startswith('attachment; filename="phase10-Ann-Bob-')
    rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert rows[0] == ["", "Ann", "'=Bob"]  # a name a spreadsheet would run is written as text
    assert [r[0] for r in rows[1:]] == [*(f"Phase {n}" for n in range(1, 6)), "Five Phase Bonus",
                                        *(f"Phase {n}" for n in range(6, 11)), "First Finish Bonus", "Total"]
    assert rows[1] == ["Phase 1", "27", ""] and rows[-1] == ["Total", "27", "0"]


def test_replay_reads_the_game_file_the_scorepad_gives(client, tmp_path, capsys):
    gid = client.post("/api/games", json={"players": ["Ann", "Bob"], "mode": "standard"}).json["id"]
    client.post(f"/api/games/{gid}/attempts", json={"player": "Ann", "seq": 0, "dice": PHASE1})
    client.post(f"/api/games/{gid}/attempts", json={"player": "Bob", "seq": 1, "dice": ["1r", "2o"]})
    response = client.get(f"/api/games/{gid}?download=1")
    assert response.headers["Content-Disposition"].endswith('.json"')
    path = tmp_path / "game.json"
    path.write_bytes(response.data)
    assert companion(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == json.loads(response.data)["scorepad"]
    assert json.loads(out)["players"][0]["total"] == 27
