"""Input no game can be bricked by: names as a person reads them, JSON in any encoding or depth,
dice the set cannot show (Flask's test client on real SQLite)."""

from __future__ import annotations

import json
import re

import pytest

from companion.dice import DiceError, parse_faces, parse_tokens, standard_set
from companion.game import Game, GameError, player_names

PHASE1_MADE = ["7b", "7r", "7g", "3o", "3r", "Wb"]
TEN_WILDS = ["Wr"] * 10  # the set has 8 wild faces on 4 dice: at most 4 show at once


def post_raw(client, path: str, text: str, encoding: str = "utf-8"):
    return client.post(path, data=text.encode(encoding, "surrogatepass"), content_type="application/json")


# --- names --------------------------------------------------------------------------------------

@pytest.mark.parametrize("players, reason", [
    (["Ann", "Ann\u200b"], "reads the same as 'Ann'"),  # a zero-width space
    (["Ann", "\uff21nn"], "reads the same as 'Ann'"),  # fullwidth A
    (["Ann", "\u202eAnn"], "reads the same as 'Ann'"),  # right-to-left override
    (["Ann Lee", "ann  lee"], "reads the same as 'Ann Lee'"),
    (["Ann", "\u202e"], "non-empty"),
    (["Ann", "\u200b\u200b"], "non-empty"),
    (["Ann", "B\x00b"], "control character (U+0000)"),
    (["Ann", "Bo\nb"], "control character (U+000A)"),
    (["Ann", "Bob\u2028"], "control character (U+2028)"),
    (["Ann", "\ud800"], "lone surrogate (U+D800)"),
])
def test_names_a_person_cannot_tell_apart_or_read_are_refused(players, reason):
    with pytest.raises(GameError, match=re.escape(reason)):
        player_names(players)


def test_names_keep_how_they_were_written():
    assert player_names(["Ann", "Zoë", "李", "👩\u200d👩\u200d👧"]) == ("Ann", "Zoë", "李", "👩\u200d👩\u200d👧")


@pytest.mark.parametrize("name", ["\ud800", "B\udfff"])
def test_a_lone_surrogate_in_a_name_is_refused_with_a_sentence_and_bricks_nothing(client, name):
    response = post_raw(client, "/api/games", json.dumps({"players": [name, "B"]}))
    assert response.status_code == 400 and "surrogate" in response.json["error"]
    assert client.get("/api/games").json["games"] == []


def test_a_lone_surrogate_anywhere_in_a_request_is_a_400_not_a_500(client):
    game = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json
    body = json.dumps({"player": "\udc00", "seq": 0, "dice": PHASE1_MADE})
    response = post_raw(client, f"/api/games/{game['id']}/attempts", body)
    assert response.status_code == 400 and "surrogate" in response.json["error"]
    assert client.post(f"/api/games/{game['id']}/attempts",
                       json={"player": "Ann", "seq": 0, "dice": PHASE1_MADE}).status_code == 201


@pytest.mark.parametrize("players", [["Ann", "Ann\u200b"], ["Ann", "\uff21nn"], ["Ann", "\u202e"], ["A\x00", "B"]])
def test_the_server_refuses_what_the_names_check_refuses(client, players):
    for path, body in (("/api/games", {"players": players}), ("/api/first-player", {"players": players,
                                                                                      "rolls": [5, 6]})):
        response = client.post(path, json=body)
        assert response.status_code == 400 and response.json["error"], path
    assert client.get("/api/games").json["games"] == []


# --- JSON in another encoding, or nested deep ---------------------------------------------------

@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_deep_body_in_utf_16_is_refused_not_a_500(client, encoding):
    # U+0122's UTF-16 code units hold a '"' byte: a scan of the raw bytes took the brackets for text
    text = '{"phase": 1, "x": "\u0122", "dice": ' + "[" * 1200 + "]" * 1200 + "}"
    response = post_raw(client, "/api/evaluate", text, encoding)
    assert response.status_code == 400 and "UTF-8" in response.json["error"]


def test_a_body_deeper_than_the_parser_goes_is_refused_with_a_reason(client):
    text = '{"phase": 1, "dice": "\\"", "x": ' + "[" * 20_000 + "]" * 20_000 + "}"
    response = post_raw(client, "/api/evaluate", text)
    assert response.status_code == 400 and "nested" in response.json["error"]


def test_a_utf_8_body_is_still_taken(client):
    response = post_raw(client, "/api/games", json.dumps({"players": ["Zoë", "Ĳssel"]}, ensure_ascii=False))
    assert response.status_code == 201 and response.json["players"] == ["Zoë", "Ĳssel"]


# --- what the set can show: one check for confirm and advice ------------------------------------

def test_the_set_check_is_one_for_every_way_in(client):
    with pytest.raises(DiceError, match="cannot all be showing at once"):
        standard_set().check_shown(parse_tokens(TEN_WILDS))
    standard_set().check_shown(parse_faces(["1b", "1r", "1o", "1g", "5r", "5g", "5o", "5r", "5b", "5b"]))
    with pytest.raises(DiceError, match="cannot all be showing at once"):  # three 5b, on two dice
        standard_set().check_shown(parse_faces(["5b", "5b", "5b"]))
    with pytest.raises(DiceError, match="cannot all be showing at once"):
        Game.new(["Solo"], "solitaire").record("Solo", parse_faces(TEN_WILDS))


def test_a_confirm_refuses_the_dice_the_advisor_refuses(client):
    game = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json
    advised = client.post("/api/advise", json={"phase": 1, "dice": TEN_WILDS, "rolls_left": 2})
    confirmed = client.post(f"/api/games/{game['id']}/attempts", json={"player": "Ann", "seq": 0, "dice": TEN_WILDS})
    assert advised.status_code == confirmed.status_code == 400
    assert advised.json["error"] == confirmed.json["error"]
    assert "cannot all be showing at once" in confirmed.json["error"]
    assert client.get(f"/api/games/{game['id']}").json["seq"] == 0


def test_an_attempt_stored_before_the_check_still_replays(app, client):
    game = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json
    store = app.extensions["companion"].store
    with store.appending(game["id"], 0) as (_record, _attempts, appender):
        appender.append("Ann", TEN_WILDS)
    state = client.get(f"/api/games/{game['id']}")
    assert state.status_code == 200 and state.json["seq"] == 1 and state.json["next"] == "Bob"


# --- what a refusal tells a rebinding page ------------------------------------------------------

def test_in_lan_mode_a_foreign_host_learns_no_address_of_the_machine(db_path):
    from companion.server import create_app

    client = create_app(db_path, join_code="s3cret", lan_hosts=["192.168.1.20", "fd00::20"]).test_client()
    for path in ("/api/games", "/"):
        response = client.get(path, headers={"Host": "rebind.attacker.example", "X-Join-Code": "s3cret"})
        text = response.get_data(as_text=True)
        assert response.status_code == 400 and "rebind.attacker.example" in text
        assert "192.168" not in text and "fd00" not in text and "127.0.0.1" not in text


# --- one model parses a request and describes it in the document -----------------------------------

@pytest.mark.parametrize("extra, field", [
    ({"sources": "all of them"}, "sources"),  # it was read only with a photo: any value passed without one
    ({"sources": [0] * 11}, "sources"),
    ({"photo_id": "7"}, "photo_id"),
    ({"seq": 0.5}, "seq"),
])
def test_a_confirm_field_that_is_not_what_the_document_says_is_refused(client, extra, field):
    game = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json
    response = client.post(f"/api/games/{game['id']}/attempts",
                           json={"player": "Ann", "seq": 0, "dice": PHASE1_MADE, **extra})
    assert response.status_code == 400 and response.json["error"].startswith(f'"{field}" ')
    assert client.get(f"/api/games/{game['id']}").json["seq"] == 0
    schema = client.get("/api/openapi.json").json["paths"]["/api/games/{game_id}/attempts"]["post"]
    assert field in schema["requestBody"]["content"]["application/json"]["schema"]["properties"]


def test_a_refusal_names_the_field_and_says_what_it_must_be(client):
    response = client.post("/api/advise", json={"phase": 1, "dice": ["7b"] * 10, "rolls_left": "2"})
    assert response.json["error"] == '"rolls_left" must be the rolls left in this turn: 2 after the first roll, ' \
                                     '1 less after each'
    missing = client.post("/api/evaluate", json={"dice": ["7b"]})
    assert missing.status_code == 400 and missing.json["error"] == '"phase" is missing: it must be a phase number 1..10'
