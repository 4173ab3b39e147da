"""Guessing the join code: each client gets at most 10 wrong codes a minute, then 429 with
Retry-After, logged; the page says how long to wait; nobody else is refused for it (a clock
the test moves by hand, Flask's test client on real SQLite)."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from companion.server import create_app
from companion.web_api.settings import JOIN_TRIES, JOIN_WINDOW_S
from companion.web_api.throttle import JoinThrottle, client_key

CODE = "ABCD-EF23"
GUESSER, FRIEND = "192.168.1.66", "192.168.1.30"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def lan(db_path):
    app = create_app(db_path, join_code=CODE)
    clock = Clock()
    app.extensions["companion"] = dataclasses.replace(app.extensions["companion"],
                                                      join_throttle=JoinThrottle(JOIN_TRIES, JOIN_WINDOW_S, clock))
    return app.test_client(), clock


def get(client, address: str, code: str | None, path: str = "/api/games"):
    return client.get(path, headers={"X-Join-Code": code} if code else {}, environ_base={"REMOTE_ADDR": address})


def guess(client, count: int, start: int = 0) -> list[int]:
    return [get(client, GUESSER, f"ZZZZ-{k:04d}").status_code for k in range(start, start + count)]


def test_ten_wrong_codes_a_minute_then_429_with_retry_after_even_for_the_right_code(lan, caplog):
    client, clock = lan
    with caplog.at_level(logging.WARNING, logger="companion.server"):
        assert guess(client, JOIN_TRIES) == [403] * JOIN_TRIES
    refused = get(client, GUESSER, CODE)  # a guesser that finds the code learns nothing by it
    assert refused.status_code == 429 and refused.headers["Retry-After"] == str(round(JOIN_WINDOW_S))
    assert f"Try again in {round(JOIN_WINDOW_S)} s" in refused.json["error"]
    assert refused.headers["X-Content-Type-Options"] == "nosniff"
    wrong = [r.getMessage() for r in caplog.records if r.getMessage().startswith("wrong join code from")]
    assert len(wrong) == JOIN_TRIES and all(GUESSER in m for m in wrong)
    assert any(f"refused for {round(JOIN_WINDOW_S)} s" in r.getMessage() for r in caplog.records)
    clock.now += 25
    assert get(client, GUESSER, "ZZZZ-9999").headers["Retry-After"] == str(round(JOIN_WINDOW_S) - 25)
    clock.now += JOIN_WINDOW_S - 25
    assert get(client, GUESSER, CODE).status_code == 200  # the window has passed


def test_the_right_code_is_never_refused_for_someone_elses_guessing(lan):
    client, _ = lan
    guess(client, JOIN_TRIES + 5)
    assert get(client, GUESSER, CODE).status_code == 429
    assert get(client, FRIEND, CODE).status_code == 200
    assert get(client, FRIEND, "ZZZZ-0001").status_code == 403  # a typo of the friend's is the friend's own


def test_the_window_slides_so_the_rate_stays_at_ten_a_minute(lan):
    client, clock = lan
    for minute in range(3):
        assert guess(client, JOIN_TRIES, start=minute * 100) == [403] * JOIN_TRIES
        assert guess(client, 1, start=minute * 100 + 50) == [429]
        clock.now += JOIN_WINDOW_S


def test_a_stale_code_sent_again_and_again_counts_once(lan, caplog):
    client, _ = lan
    with caplog.at_level(logging.WARNING, logger="companion.server"):
        statuses = {get(client, FRIEND, "OLDC-ODE1", path).status_code for path in ["/", "/api/games"] * 30}
    assert statuses == {403}
    assert len([r for r in caplog.records if "wrong join code" in r.getMessage()]) == 1
    assert get(client, FRIEND, CODE).status_code == 200


def test_the_join_page_says_how_long_to_wait(lan):
    client, clock = lan
    wrong = get(client, GUESSER, "ZZZZ-ZZZZ", "/")
    assert wrong.status_code == 403 and "not this scorepad's code" in wrong.get_data(as_text=True)
    guess(client, JOIN_TRIES)
    clock.now += 18
    page = client.get("/?code=ABCD-EF23", environ_base={"REMOTE_ADDR": GUESSER})
    assert page.status_code == 429 and page.mimetype == "text/html"
    text = page.get_data(as_text=True)
    assert f"Try again in {round(JOIN_WINDOW_S) - 18} s" in text and 'name="code"' in text
    assert page.headers["Retry-After"] == str(round(JOIN_WINDOW_S) - 18)
    assert "style-src 'self' 'sha256-" in page.headers["Content-Security-Policy"]


def test_one_device_is_its_ipv4_address_or_its_ipv6_network():
    assert client_key("fd00::1") == client_key("fd00::ffff:1234") != client_key("fd00:0:0:1::1")
    assert client_key("192.168.1.5") != client_key("192.168.1.6")
    assert client_key("::ffff:192.168.1.5") == client_key("192.168.1.5")
