"""A table of phones, a careless user and a hostile page in another tab cannot freeze,
exhaust or fool the scorepad server (Flask's test client on real SQLite; waitress where
threads and sockets matter)."""

from __future__ import annotations

import io
import json

import pytest

from companion.server import create_app

PHASE1_MADE = ["7b", "7r", "7g", "3o", "3r", "Wb"]


def photo_form(data: bytes) -> dict:
    return {"photo": (io.BytesIO(data), "photo.png")}


# --- hosts and origins (DNS rebinding, cross-site requests) ------------------------------------

@pytest.mark.parametrize("host", ["rebind.attacker.example", "rebind.attacker.example:8010", "10.0.0.9:8010"])
def test_a_foreign_host_name_is_refused(client, host):
    client.post("/api/games", json={"players": ["Ann"]})
    response = client.get("/api/games", headers={"Host": host})
    assert response.status_code == 400
    assert "127.0.0.1" in response.json["error"] and "games" not in response.json
    assert client.get("/", headers={"Host": host}).status_code == 400


@pytest.mark.parametrize("host", ["127.0.0.1:8010", "localhost:8010", "[::1]:8010", "localhost", "LOCALHOST"])
def test_the_loopback_names_are_served(client, host):
    assert client.get("/api/games", headers={"Host": host}).status_code == 200


def test_lan_mode_serves_its_lan_addresses_too(db_path):
    client = create_app(db_path, join_code="s3cret", lan_hosts=["192.168.1.20"]).test_client()
    headers = {"X-Join-Code": "s3cret"}
    assert client.get("/api/games", headers={**headers, "Host": "192.168.1.20:8010"}).status_code == 200
    assert client.get("/api/games", headers={**headers, "Host": "192.168.1.21:8010"}).status_code == 400


@pytest.mark.parametrize("origin", ["http://attacker.example", "http://127.0.0.1:9999", "null"])
def test_a_state_change_from_another_site_is_refused(client, origin):
    headers = {"Host": "127.0.0.1:8010", "Origin": origin}
    created = client.post("/api/games", json={"players": ["Ann"]}, headers=headers)
    assert created.status_code == 403 and "may not change" in created.json["error"]
    read = client.post("/api/read", data=photo_form(b"not a photo"), headers=headers)
    assert read.status_code == 403  # refused before the photo costs anything
    assert client.get("/api/games").json["games"] == []


def test_the_scorepads_own_page_and_clients_without_an_origin_may_change_it(client):
    own = {"Host": "127.0.0.1:8010", "Origin": "http://127.0.0.1:8010"}
    game = client.post("/api/games", json={"players": ["Ann", "Bob"]}, headers=own)
    assert game.status_code == 201
    attempt = {"player": "Ann", "seq": 0, "dice": PHASE1_MADE}
    assert client.post(f"/api/games/{game.json['id']}/attempts", json=attempt).status_code == 201  # curl
    cross = {"Sec-Fetch-Site": "cross-site"}  # a browser that sent no Origin still says where from
    assert client.delete(f"/api/games/{game.json['id']}/attempts/0", headers=cross).status_code == 403
    assert client.delete(f"/api/games/{game.json['id']}/attempts/0", headers=own).status_code == 200


# --- sizes are checked before the work ----------------------------------------------------------

def test_a_huge_evaluation_is_refused_before_it_is_parsed(client):
    body = json.dumps({"phase": 1, "dice": ["7b"] * 3_000_000}).encode()  # 17 MB
    response = client.post("/api/evaluate", data=body, content_type="application/json")
    assert response.status_code == 413
    assert "64 KB" in response.json["error"] and "photo" not in response.json["error"]


def test_json_nested_deeper_than_any_request_is_refused_with_a_reason(client):
    deep = "[" * 30_000 + "]" * 30_000
    response = client.post("/api/evaluate", data=f'{{"phase": 1, "dice": {deep}}}', content_type="application/json")
    assert response.status_code == 400 and "nested" in response.json["error"]
    deeper = "[" * 100_000 + "]" * 100_000  # over the size limit as well: refused either way, never a 500
    assert client.post("/api/evaluate", data=deeper, content_type="application/json").status_code in (400, 413)
    # Brackets inside a string are text, not nesting.
    text = client.post("/api/games", json={"players": ["[[[[[[[[[[[[[[[[Ann"]})
    assert text.status_code == 201


@pytest.mark.parametrize("path, body", [
    ("/api/evaluate", {"phase": 1, "dice": ["7b"] * 5000}),
    ("/api/advise", {"phase": 1, "dice": ["7b"] * 5000, "rolls_left": 1}),
    ("/api/first-player", {"players": ["A"] * 5000, "rolls": [6]}),
    ("/api/games", {"players": ["A"] * 5000}),
])
def test_long_lists_are_refused_before_their_items_are_read(client, path, body):
    response = client.post(path, json=body)
    assert response.status_code == 400
    assert "5000 items" in response.json["error"] and "at most 64" in response.json["error"]


# --- bad input gets a sentence, never a 500 -----------------------------------------------------

def test_photo_ids_beyond_any_stored_id_are_not_found(client):
    game = client.post("/api/games", json={"players": ["Ann"]}).json
    huge = 2**70
    response = client.get(f"/api/photos/{huge}")
    assert response.status_code == 404 and str(huge) in response.json["error"]
    body = {"player": "Ann", "seq": 0, "dice": PHASE1_MADE, "photo_id": huge}
    assert client.post(f"/api/games/{game['id']}/attempts", json=body).status_code == 404
    assert client.get(f"/api/games/{game['id']}").json["seq"] == 0


@pytest.mark.parametrize("body", [
    {"players": ["A", "B"], "rolls": 5},
    {"players": "Ann", "rolls": [6, 7, 8]},
    {"players": [1, 2], "rolls": [6, 7]},
])
def test_first_player_refuses_what_is_not_names_and_rolls(client, body):
    response = client.post("/api/first-player", json=body)
    assert response.status_code == 400 and response.json["error"]


def test_a_wrong_method_says_which_methods_the_route_takes(client):
    response = client.put("/api/evaluate", json={})
    assert response.status_code == 405
    assert set(response.headers["Allow"].split(", ")) >= {"POST"}
    assert response.json["error"]
