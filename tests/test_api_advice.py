"""POST /api/advise: the roll advisor through the scorepad API (real advisor, real SQLite app)."""

from __future__ import annotations

import pytest

from companion.advisor import advise
from companion.dice import parse_tokens
from companion.rules import HouseRules

ROLL = ["1b", "2b", "3r", "Wr", "5r", "6r", "7r", "8r", "9r", "10g"]  # the advisor docs' example
SET_OF_4 = ["3o", "Wb", "3r", "1g", "7b", "7g", "7r", "5r", "9r", "10o"]  # one face per die, L1..H6


@pytest.mark.parametrize("phase, dice, rolls_left", [(1, ROLL, 2), (1, SET_OF_4, 1), (4, ROLL, 1)])
def test_the_advice_is_the_advisors_for_the_same_dice(client, phase, dice, rolls_left):
    response = client.post("/api/advise", json={"phase": phase, "dice": dice, "rolls_left": rolls_left})
    assert response.status_code == 200, response.json
    expected = advise(phase, parse_tokens(dice), rolls_left).to_json()
    assert response.json == expected  # JSON floats round-trip exactly
    # The keeps are indices into the dice as sent, so the page can mark those chips.
    assert all(0 <= i < 10 for plan in response.json.values() for i in plan["keep"])


def test_house_rules_reach_the_advisor(client):
    dice = ["Wr", "Wo", "Wb", "Wg", "5r", "5g", "5b", "9o", "9r", "10o"]
    rules = {"natural_in_every_group": True}
    body = {"phase": 10, "dice": dice, "rolls_left": 1, "rules": rules}
    answer = client.post("/api/advise", json=body).json
    strict = advise(10, parse_tokens(dice), 1, HouseRules(natural_in_every_group=True)).to_json()
    assert answer == strict


@pytest.mark.parametrize(
    "body, words",
    [
        ({"phase": 1, "dice": ROLL[:9], "rolls_left": 2}, "all 10 dice"),
        ({"phase": 1, "dice": ROLL + ["4g"], "rolls_left": 2}, "all 10 dice"),
        ({"phase": 1, "dice": ROLL[:9] + ["11r"], "rolls_left": 2}, "11r"),
        ({"phase": 1, "dice": "1b 2b", "rolls_left": 2}, "list of tokens"),
        ({"phase": 11, "dice": ROLL, "rolls_left": 2}, "phase"),
        ({"phase": True, "dice": ROLL, "rolls_left": 2}, "phase"),
        ({"phase": 1, "dice": ROLL, "rolls_left": 3}, "rolls_left"),
        ({"phase": 1, "dice": ROLL}, "rolls_left"),
        ({"phase": 1, "dice": ROLL, "rolls_left": 2, "rules": {"no_such_rule": True}}, "unknown house rule"),
        # Five wilds: the standard set has only four, so no roll shows these faces.
        ({"phase": 1, "dice": ["Wr", "Wo", "Wg", "Wb", "Wr", "5r", "6r", "7r", "8r", "9r"], "rolls_left": 2}, ""),
    ],
)
def test_bad_advice_requests_are_refused_with_a_reason(client, body, words):
    response = client.post("/api/advise", json=body)
    assert response.status_code == 400
    message = response.json["error"]
    assert message and words.lower() in message.lower()


def test_a_body_that_is_not_json_is_refused(client):
    response = client.post("/api/advise", data="phase=1", content_type="text/plain")
    assert response.status_code == 400
    assert "json" in response.json["error"].lower()


def test_the_openapi_document_describes_the_advice(client):
    doc = client.get("/api/openapi.json").json
    operation = doc["paths"]["/api/advise"]["post"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    assert set(schema["required"]) == {"phase", "dice", "rolls_left"}
    assert (schema["properties"]["dice"]["minItems"], schema["properties"]["dice"]["maxItems"]) == (10, 10)
    assert {"200", "400"} <= set(operation["responses"])
    assert set(doc["components"]["schemas"]["Advice"]["required"]) == {"best", "best_score", "keep_all"}
