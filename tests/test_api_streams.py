"""A live stream's place is free the moment its client has gone (a page reloading reconnects
at once, and must not be told "busy" by its own closed stream)."""

from __future__ import annotations

import json

import pytest
from test_api_hardening import Served

from companion.web_api.broadcast import Broadcaster, Busy


def test_a_stream_whose_client_left_gives_its_place_to_the_next_at_once():
    events = Broadcaster(keepalive_s=30, max_streams=2, poll_s=30)
    left = {"a": False, "b": False}
    a = events.stream("game", lambda: ("state", {}), lambda: left["a"])
    b = events.stream("game", lambda: ("state", {}), lambda: left["b"])
    with pytest.raises(Busy):
        events.stream("game", lambda: ("state", {}))
    left["a"] = True  # the client of `a` closed its connection; `a` polls again only in 30 s
    c = events.stream("game", lambda: ("state", {}))
    assert next(c) == b"retry: 2000\n\n"
    assert list(a) != [] and list(a) == []  # `a` was told to end: it has nothing more to send
    events.publish("game", "state", {"seq": 1})
    assert b'"seq":1' in next(c) + next(c)
    for stream in (a, b, c):
        stream.close()


def test_fifty_quick_reconnects_at_the_cap_are_never_told_busy(db_path):
    with Served(db_path, threads=2, max_streams=5, keepalive_s=30.0) as served:
        _, _, body = served.call("POST", "/api/games", {"players": ["Ann"]})
        game_id = json.loads(body)["id"]
        streams = [served.open_stream(game_id) for _ in range(5)]
        busy = 0
        for _ in range(50):
            conn, response = streams.pop(0)
            response.close()
            conn.close()
            conn, response = served.open_stream(game_id)
            busy += response.status != 200
            streams.append((conn, response))
        assert busy == 0
        for conn, response in streams:
            response.close()
            conn.close()
