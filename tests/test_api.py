"""The JSON API through Flask's test client, against a real SQLite file."""

from __future__ import annotations

import io
import re
import sqlite3

import pytest
from PIL import Image

from companion.dice import COLORS, HIGH_VALUES, MAX_DICE, parse_faces, standard_set
from companion.game import MAX_NAME_LENGTH, Game
from companion.rules import evaluate
from companion.rules.phases import MAX_ROLLS_LEFT, PHASE_COUNT
from companion.server import MAX_UPLOAD, create_app
from test_game import BEST

PHASE1_MADE = ["7b", "7r", "7g", "3o", "3r", "Wb"]  # 7+7+7+3+3 = 27
PHASE1_MISSED = ["1r", "2o", "3o", "4b", "5r", "6o"]


def new_game(client, players=("Ann", "Bob"), mode="standard", rules=None) -> dict:
    response = client.post("/api/games", json={"players": list(players), "mode": mode, "rules": rules or {}})
    assert response.status_code == 201, response.json
    return response.json


def record(client, game: dict, dice, player=None, **extra):
    body = {"player": player or game["next"], "seq": game["seq"], "dice": list(dice), **extra}
    return client.post(f"/api/games/{game['id']}/attempts", json=body)


def png_bytes(size=(64, 48)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 190, 170)).save(out, "PNG")
    return out.getvalue()


def test_a_new_game_starts_with_the_first_player_on_phase_1(client):
    game = new_game(client, ["Ann", "Bob", "Cy"])
    assert (game["next"], game["phase"], game["seq"], game["over"]) == ("Ann", 1, 0, False)
    assert [p["name"] for p in game["scorepad"]["players"]] == ["Ann", "Bob", "Cy"]
    assert all(p["phases"] == [None] * 10 and p["total"] == 0 for p in game["scorepad"]["players"])


@pytest.mark.parametrize(
    "body, words",
    [
        ({"players": []}, "at least 1 player"),
        ({"players": ["Ann", "ann"]}, "twice"),
        ({"players": ["Ann", "Bob"], "mode": "solitaire"}, "solitaire"),
        ({"players": ["Ann"], "mode": "poker"}, "standard or solitaire"),
        ({"players": ["Ann"], "rules": {"no_such_rule": True}}, "unknown house rule"),
        ({"players": ["x" * 31]}, "1 to 30 characters"),
        ({"players": "Ann"}, "list of names"),
    ],
)
def test_bad_new_games_are_refused_with_a_reason(client, body, words):
    response = client.post("/api/games", json=body)
    assert response.status_code == 400
    assert words in response.json["error"].lower()
    assert client.get("/api/games").json["games"] == []


def test_evaluate_answers_what_the_rules_engine_answers(client):
    dice = ["5r", "6o", "7b", "Wg", "9o", "10g", "2b"]
    for phase in (2, 4, 8):
        response = client.post("/api/evaluate", json={"phase": phase, "dice": dice})
        assert response.status_code == 200
        verdict = evaluate(phase, parse_faces(dice)).to_json()
        assert {k: response.json[k] for k in verdict} == verdict


def test_evaluate_applies_house_rules(client):
    dice = ["Wr", "Wo", "Wg", "Wb", "Wr", "Wo"]  # only wilds: every group would be all-wild
    default = client.post("/api/evaluate", json={"phase": 1, "dice": dice}).json
    strict = client.post("/api/evaluate", json={"phase": 1, "dice": dice, "rules": {"natural_in_every_group": True}}).json
    assert default["complete"] and not strict["complete"]


@pytest.mark.parametrize(
    "body, words",
    [
        ({"phase": 1, "dice": ["7x"]}, "7x"),
        ({"phase": 11, "dice": ["7b"]}, "1..10"),
        ({"phase": 1, "dice": "7b 7r"}, "list of tokens"),
        ({"phase": 1, "dice": ["1r"] * 11}, "1 to 10"),
    ],
)
def test_evaluate_refuses_bad_input_clearly(client, body, words):
    response = client.post("/api/evaluate", json=body)
    assert response.status_code == 400
    assert words in response.json["error"]


def test_recording_an_attempt_updates_the_scorepad_as_the_game_says(client):
    game = new_game(client)
    response = record(client, game, PHASE1_MADE)
    assert response.status_code == 201
    body = response.json
    assert body["attempt"]["made"] and body["attempt"]["score"] == 27 and body["attempt"]["seq"] == 0
    expected = Game.new(["Ann", "Bob"])
    expected.record("Ann", parse_faces(PHASE1_MADE))
    assert body["game"]["scorepad"] == expected.scorepad().to_json()
    assert (body["game"]["next"], body["game"]["phase"], body["game"]["seq"]) == ("Bob", 1, 1)

    missed = record(client, body["game"], PHASE1_MISSED).json
    assert missed["attempt"]["made"] is False and missed["attempt"]["score"] is None
    assert missed["game"]["scorepad"]["players"][1]["phases"][0] is None


def test_an_attempt_for_the_wrong_player_is_refused_and_changes_nothing(client):
    game = new_game(client)
    response = record(client, game, PHASE1_MADE, player="Bob")
    assert response.status_code == 409
    assert "Ann's turn" in response.json["error"]
    unknown = record(client, game, PHASE1_MADE, player="Zed")
    assert unknown.status_code == 409 and "unknown player" in unknown.json["error"].lower()
    assert client.get(f"/api/games/{game['id']}").json["seq"] == 0


def test_the_same_attempt_confirmed_twice_is_recorded_once(client):
    game = new_game(client)
    first = record(client, game, PHASE1_MADE)
    second = record(client, game, PHASE1_MADE)  # same seq: the other phone's confirm
    assert first.status_code == 201
    assert second.status_code == 409
    assert "already recorded" in second.json["error"]
    state = client.get(f"/api/games/{game['id']}").json
    assert state["seq"] == 1 and len(state["attempts"]) == 1


def test_bad_dice_in_an_attempt_are_refused(client):
    game = new_game(client)
    for dice in (["7b", "12r"], [], "7b"):
        response = record(client, game, dice)
        assert response.status_code == 400, dice
    assert client.get(f"/api/games/{game['id']}").json["seq"] == 0


def test_undo_takes_back_the_last_attempt_once(client):
    game = new_game(client)
    after_ann = record(client, game, PHASE1_MADE).json["game"]
    record(client, after_ann, PHASE1_MISSED)
    undone = client.delete(f"/api/games/{game['id']}/attempts/1")
    assert undone.status_code == 200
    assert undone.json["undone"]["player"] == "Bob"
    assert undone.json["game"]["scorepad"] == after_ann["scorepad"]
    again = client.delete(f"/api/games/{game['id']}/attempts/1")
    assert again.status_code == 409
    assert client.get(f"/api/games/{game['id']}").json["seq"] == 1


def test_a_finished_game_refuses_more_attempts(client):
    game = new_game(client, ["Solo"], mode="solitaire")
    for phase in range(1, 11):
        response = record(client, game, [f.token for f in BEST[phase]])
        assert response.status_code == 201
        game = response.json["game"]
    assert game["over"] and game["winners"] == ["Solo"] and game["next"] is None
    refused = record(client, game, PHASE1_MADE, player="Solo")
    assert refused.status_code == 409 and "over" in refused.json["error"]


def test_games_persist_across_a_server_restart(db_path):
    first = create_app(db_path).test_client()
    game = new_game(first)
    record(first, game, PHASE1_MADE)
    before = first.get(f"/api/games/{game['id']}").json
    restarted = create_app(db_path).test_client()
    after = restarted.get(f"/api/games/{game['id']}").json
    assert after == before
    assert [g["id"] for g in restarted.get("/api/games").json["games"]] == [game["id"]]


def test_games_are_listed_and_deleted(client):
    one = new_game(client, ["Ann", "Bob"])
    two = new_game(client, ["Cy"], mode="solitaire")
    record(client, one, PHASE1_MADE)
    games = client.get("/api/games").json["games"]
    assert [g["id"] for g in games] == [one["id"], two["id"]]
    assert games[0]["totals"] == {"Ann": 27, "Bob": 0} and games[0]["next"] == "Bob"
    assert client.delete(f"/api/games/{one['id']}").status_code == 200
    assert client.get(f"/api/games/{one['id']}").status_code == 404
    assert client.delete(f"/api/games/{one['id']}").status_code == 404
    assert [g["id"] for g in client.get("/api/games").json["games"]] == [two["id"]]


def test_unknown_games_and_routes_answer_json_404(client):
    assert client.get("/api/games/nope").status_code == 404
    assert "nope" in client.get("/api/games/nope").json["error"]
    assert client.post("/api/games/nope/attempts", json={"player": "A", "seq": 0, "dice": ["1r"]}).status_code == 404
    assert client.get("/api/nothing-here").json["error"]


def test_first_player_is_the_highest_roll_and_ties_roll_again(client):
    decided = client.post("/api/first-player", json={"players": ["Ann", "Bob", "Cy"], "rolls": [6, 9, 7]}).json
    assert decided == {"order": ["Bob", "Cy", "Ann"], "tied": []}
    tie = client.post("/api/first-player", json={"players": ["Ann", "Bob", "Cy"], "rolls": [9, 5, 9]}).json
    assert tie == {"order": None, "tied": ["Ann", "Cy"]}
    bad = client.post("/api/first-player", json={"players": ["Ann", "Bob"], "rolls": [4, 9]})
    assert bad.status_code == 400 and "5..10" in bad.json["error"]


def test_first_player_refuses_a_name_given_twice_as_the_game_would(client):
    twice = {"players": ["Ann", " ann"], "rolls": [6, 9]}
    refused = client.post("/api/first-player", json=twice)
    assert refused.status_code == 400
    assert refused.json["error"] == "Player name 'ann' is given twice."
    assert client.post("/api/games", json={"players": twice["players"]}).json == refused.json


def test_openapi_documents_every_api_route(app, client):
    doc = client.get("/api/openapi.json").json
    assert doc["openapi"].startswith("3.")
    documented = {(path, method) for path, item in doc["paths"].items() for method in item if method != "parameters"}
    served = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/"):
            continue
        path = rule.rule.replace("<int:", "<").replace("<", "{").replace(">", "}")
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            served.add((path, method.lower()))
    assert served == documented


def _request_fields(doc: dict, path: str) -> dict:
    return doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]


def test_openapi_takes_the_numbers_of_the_rules_from_the_core(client):
    doc = client.get("/api/openapi.json").json
    scored, advised = _request_fields(doc, "/api/evaluate"), _request_fields(doc, "/api/advise")
    assert scored["phase"]["maximum"] == advised["phase"]["maximum"] == PHASE_COUNT
    assert scored["dice"]["maxItems"] == advised["dice"]["minItems"] == advised["dice"]["maxItems"] == MAX_DICE
    assert advised["rolls_left"]["maximum"] == MAX_ROLLS_LEFT
    rolls = _request_fields(doc, "/api/first-player")["rolls"]["items"]
    assert (rolls["minimum"], rolls["maximum"]) == (min(HIGH_VALUES), max(HIGH_VALUES))
    names = _request_fields(doc, "/api/games")["players"]["items"]
    assert names["maxLength"] == MAX_NAME_LENGTH
    pad = doc["components"]["schemas"]["PlayerScore"]["properties"]["phases"]
    assert pad["minItems"] == pad["maxItems"] == PHASE_COUNT
    # the token pattern takes every face of the set, and nothing else
    pattern = re.compile(doc["components"]["schemas"]["Token"]["pattern"])
    faces = {f.token for d in standard_set().dice for f in d.faces}
    assert all(pattern.fullmatch(t) for t in faces)
    values = {t[:-1] for t in faces}
    assert all(pattern.fullmatch(f"{v}{c.letter}") for v in values for c in COLORS)
    assert not any(pattern.fullmatch(t) for t in ["0r", "11b", "Wx", "7", "W", "107g"])


def test_the_page_and_its_assets_are_served_locally(client):
    page = client.get("/")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "http://" not in html and "https://" not in html  # no CDN
    for asset in ("/static/app.css", "/static/js/app.js", "/static/js/turn.js", "/static/icon.svg"):
        assert client.get(asset).status_code == 200, asset


# --- photos -------------------------------------------------------------------------------------

def upload(client, game_id, data: bytes, name="photo.jpg"):
    return client.post(f"/api/games/{game_id}/photos", data={"photo": (io.BytesIO(data), name)},
                       content_type="multipart/form-data")


def test_an_upload_that_is_not_an_image_is_refused_and_stores_nothing(client, app):
    game = new_game(client)
    response = upload(client, game["id"], b"%PDF-1.4 this is not a photo", "menu.pdf")
    assert response.status_code == 422
    assert "not a photo" in response.json["error"]
    broken = upload(client, game["id"], png_bytes()[:40])
    assert broken.status_code in (422, 503)  # a truncated PNG header passes; the reader then decides
    with sqlite3.connect(app.extensions["companion"].store.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM photos").fetchone()[0] == 0
    assert client.get(f"/api/games/{game['id']}").json["seq"] == 0


def test_an_heic_upload_says_how_to_send_a_jpeg_and_stores_nothing(client, app):
    game = new_game(client)
    heic = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(64)
    response = upload(client, game["id"], heic, "IMG_0001.HEIC")
    assert response.status_code == 422
    assert "HEIC" in response.json["error"] and "JPEG" in response.json["error"]
    with sqlite3.connect(app.extensions["companion"].store.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM photos").fetchone()[0] == 0


def test_an_upload_over_25_mb_gets_a_clear_413(client):
    game = new_game(client)
    response = upload(client, game["id"], b"\xff\xd8\xff" + b"\0" * (MAX_UPLOAD + 10))
    assert response.status_code == 413
    assert "25 MB" in response.json["error"]
    assert client.get(f"/api/games/{game['id']}").status_code == 200  # still serving


def test_an_upload_without_the_photo_field_is_refused(client):
    game = new_game(client)
    response = client.post(f"/api/games/{game['id']}/photos", data={}, content_type="multipart/form-data")
    assert response.status_code == 400 and "photo" in response.json["error"]
    assert upload(client, "nope", png_bytes()).status_code == 404


# --- LAN mode -----------------------------------------------------------------------------------

def test_lan_mode_refuses_requests_without_the_join_code(db_path):
    client = create_app(db_path, join_code="s3cret").test_client()
    assert client.get("/").status_code == 403
    assert client.get("/api/games").status_code == 403
    assert "join code" in client.get("/api/games").json["error"]
    assert client.get("/api/games?code=wrong").status_code == 403
    first = client.get("/?code=s3cret")
    assert first.status_code == 200
    assert "p10_join=s3cret" in first.headers["Set-Cookie"]
    # The browser now holds the cookie: later requests need no code in the URL.
    assert client.get("/api/games").status_code == 200
    assert client.post("/api/games", json={"players": ["Ann"]}).status_code == 201


def test_lan_mode_accepts_the_code_in_a_header(db_path):
    client = create_app(db_path, join_code="s3cret").test_client()
    assert client.get("/api/games", headers={"X-Join-Code": "s3cret"}).status_code == 200


# --- house rules: one parser for the API and the game log ---------------------------------------

@pytest.mark.parametrize("rules", [None, {}, {"natural_in_every_group": True}, {"natural_in_every_group": 1}, []])
def test_the_api_and_a_game_log_read_house_rules_alike(client, rules):
    log = {"players": ["Ann"], "mode": "solitaire", "rules": rules}
    try:
        from_log = Game.from_json(log).rules.natural_in_every_group
    except Exception as exc:  # noqa: BLE001 - refused: the API must refuse it too, with the same reason
        from_log = str(exc)
    response = client.post("/api/games", json=log)
    from_api = response.json["rules"]["natural_in_every_group"] if response.status_code == 201 else response.json["error"]
    if isinstance(from_log, str):
        assert response.status_code == 400 and from_log.lower() in from_api.lower()
    else:
        assert response.status_code == 201 and from_api == from_log
