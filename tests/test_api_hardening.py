"""A table of phones, a careless user and a hostile page in another tab cannot freeze,
exhaust or fool the scorepad server (Flask's test client on real SQLite; the real server where
threads and sockets matter)."""

from __future__ import annotations

import http.client
import io
import json
import sqlite3
import struct
import threading
import time
import urllib.request
import zlib

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


@pytest.mark.parametrize("path, body, most", [
    ("/api/evaluate", {"phase": 1, "dice": ["7b"] * 5000}, 10),  # a roll's own bound: the set's dice
    ("/api/advise", {"phase": 1, "dice": ["7b"] * 5000, "rolls_left": 1}, 10),
    ("/api/first-player", {"players": ["A"] * 5000, "rolls": [6]}, 64),
    ("/api/games", {"players": ["A"] * 5000}, 64),
])
def test_long_lists_are_refused_before_their_items_are_read(client, path, body, most):
    response = client.post(path, json=body)
    assert response.status_code == 400
    assert "5000 items" in response.json["error"] and f"at most {most}" in response.json["error"]


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


# --- what one photo may cost --------------------------------------------------------------------

def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def one_bit_png(width: int, height: int) -> bytes:
    """A black 1-bit PNG: a few KB on the wire, width x height pixels once decoded."""
    row = b"\0" * (1 + (width + 7) // 8)
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", zlib.compress(row * height, 9))
            + png_chunk(b"IEND", b""))


BOMB = one_bit_png(9999, 9999)  # 12 KB; decoded whole it took 3.5 s and over a gigabyte


def test_a_small_png_of_100_megapixels_is_refused_from_its_header():
    from companion.vision.image_io import MAX_FULL_DECODE_PIXELS, load_work_image
    from companion.vision.reading import ImageError

    assert len(BOMB) < 20_000 and 9999 * 9999 > MAX_FULL_DECODE_PIXELS
    with pytest.raises(ImageError, match=r"9999x9999 \(100 MP\), too large to decode safely: a PNG image may have"):
        load_work_image(BOMB)


def test_an_upload_of_the_png_bomb_is_refused_and_stores_nothing(client, app):
    game = client.post("/api/games", json={"players": ["Ann"]}).json
    for path in ("/api/read", f"/api/games/{game['id']}/photos"):
        response = client.post(path, data=photo_form(BOMB), content_type="multipart/form-data")
        assert response.status_code == 422, path
        assert "9999x9999" in response.json["error"] and "smaller photo" in response.json["error"]
    with sqlite3.connect(app.extensions["companion"].store.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM photos").fetchone()[0] == 0


def test_a_png_too_large_for_pillow_itself_is_called_too_large_not_broken(client):
    response = client.post("/api/read", data=photo_form(png_header(30000, 30000)), content_type="multipart/form-data")
    assert response.status_code == 422
    assert "too large" in response.json["error"] and "broken" not in response.json["error"]
    assert "DecompressionBomb" not in response.json["error"] and "pixels" not in response.json["error"]


def png_header(width: int, height: int) -> bytes:
    """A PNG that claims a size in its header and holds almost no pixel data."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", zlib.compress(b"\0" * 16))
            + png_chunk(b"IEND", b""))


def test_a_large_png_within_the_budget_is_read_upright_at_working_size():
    from PIL import Image

    from companion.vision.image_io import WORK_LONG_SIDE, load_work_image

    image = Image.new("RGB", (4800, 1200), (128, 128, 128))
    image.paste((220, 20, 20), (0, 0, 1200, 300))  # red in the stored top-left corner
    exif = Image.Exif()
    exif[0x0112] = 6  # stored turned: upright, the photo is 1200 wide and 4800 tall
    out = io.BytesIO()
    image.save(out, "PNG", exif=exif.tobytes())
    work = load_work_image(out.getvalue())
    assert (work.full_width, work.full_height) == (1200, 4800)
    assert max(work.rgb.shape[:2]) == WORK_LONG_SIDE and work.rgb.shape[0] > work.rgb.shape[1]
    h, w = work.rgb.shape[:2]
    assert work.rgb[h // 16, w - 5].tolist() == [220, 20, 20]  # orientation 6: top-left goes top-right


# --- live streams cannot starve requests --------------------------------------------------------

class Served:
    """The app under the real server on a free loopback port, with few threads so limits show."""

    def __init__(self, db_path, threads: int, max_streams: int, keepalive_s: float = 30.0):
        from companion.server import make_server

        self.app = create_app(db_path, keepalive_s=keepalive_s, max_streams=max_streams)
        self.server = make_server(self.app, "127.0.0.1", 0, threads=threads)
        self.port = self.server.effective_port
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> "Served":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        from companion.server import shutdown

        shutdown(self.app, self.server, self.thread)

    def call(self, method: str, path: str, body=None, timeout: float = 5.0):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, None if body is None else json.dumps(body),
                         {"Content-Type": "application/json"})
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            conn.close()

    def open_stream(self, game_id: str, headers=None) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        conn.request("GET", f"/api/games/{game_id}/events", headers=headers or {})
        response = conn.getresponse()
        if response.status == 200 and not headers:
            assert response.readline() == b"retry: 2000\n"  # the stream has started
        return conn, response


def test_open_streams_leave_the_request_threads_free_and_past_the_cap_say_retry(db_path):
    with Served(db_path, threads=2, max_streams=6) as served:
        _, _, body = served.call("POST", "/api/games", {"players": ["Ann"]})
        game_id = json.loads(body)["id"]
        streams = [served.open_stream(game_id) for _ in range(6)]
        assert all(response.status == 200 for _, response in streams)
        for _ in range(4):  # more than the 2 request threads, one after another
            status, _, _ = served.call("GET", "/api/info", timeout=3)
            assert status == 200
        conn, refused = served.open_stream(game_id)
        assert refused.status == 503 and int(refused.getheader("Retry-After")) > 0
        assert "try again" in json.loads(refused.read())["error"]
        # A browser's EventSource stops at an error status but retries a stream that ends:
        # it gets one saying when.
        browser, busy = served.open_stream(game_id, {"Accept": "text/event-stream"})
        assert busy.status == 200
        text = busy.read().decode()  # the whole stream: it ends at once
        assert text.startswith("retry: 5000\n\n") and "event: busy\n" in text and "try again" in text
        for c, response in [*streams, (conn, refused), (browser, busy)]:
            response.close()
            c.close()


def test_a_closed_stream_frees_its_place_within_seconds_not_at_the_next_keepalive(db_path):
    with Served(db_path, threads=1, max_streams=3, keepalive_s=30.0) as served:
        _, _, body = served.call("POST", "/api/games", {"players": ["Ann"]})
        game_id = json.loads(body)["id"]
        for _ in range(3):  # three rounds of three page reloads
            streams = [served.open_stream(game_id) for _ in range(3)]
            assert [response.status for _, response in streams] == [200, 200, 200]
            for conn, response in streams:
                response.close()  # the response holds the socket open too
                conn.close()
            deadline = time.monotonic() + 4  # the server looks every second
            while time.monotonic() < deadline:
                conn, response = served.open_stream(game_id)
                response.close()
                conn.close()
                if response.status == 200:
                    break
                time.sleep(0.2)
            assert response.status == 200, "the closed streams still hold their places"
            time.sleep(1.5)  # the probe stream's place too


# --- headers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/", "/api/info", "/static/js/app.js", "/api/games/nope"])
def test_every_answer_carries_the_security_headers(client, path):
    headers = client.get(path).headers
    assert headers["X-Content-Type-Options"] == "nosniff"
    policy = headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert "unsafe-inline" not in directives["script-src"] + directives["style-src"]


def test_players_photos_are_private_to_the_browser(app, client):
    game = client.post("/api/games", json={"players": ["Ann"]}).json
    photo_id = app.extensions["companion"].store.add_photo(game["id"], "image/png", one_bit_png(8, 8), {"dice": []})
    cache = client.get(f"/api/photos/{photo_id}").headers["Cache-Control"]
    assert "private" in cache and "public" not in cache


@pytest.mark.browser
def test_the_page_runs_under_its_content_security_policy(page, live_server):
    refused: list[str] = []
    page.on("console", lambda msg: refused.append(msg.text) if "Content Security Policy" in msg.text else None)
    game = json.loads(urllib.request.urlopen(urllib.request.Request(
        f"{live_server.url}/api/games", data=json.dumps({"players": ["Ann", "Bob"]}).encode(),
        headers={"Content-Type": "application/json"})).read())
    page.goto("/")
    page.wait_for_selector("text=Ann")  # the start screen lists the game
    page.goto(f"/#/game/{game['id']}")
    page.wait_for_selector("#dice", state="attached")  # the turn screen
    page.wait_for_timeout(300)
    assert refused == []


@pytest.mark.browser
@pytest.mark.slow
def test_a_page_turned_away_at_the_stream_cap_gets_live_updates_once_a_place_is_free(browser, db_path):
    with Served(db_path, threads=2, max_streams=1) as served:
        _, _, body = served.call("POST", "/api/games", {"players": ["Ann", "Bob"]})
        game = json.loads(body)
        holder, held = served.open_stream(game["id"])  # the one place
        context = browser.new_context(base_url=f"http://127.0.0.1:{served.port}")
        page = context.new_page()
        try:
            page.goto(f"/#/game/{game['id']}")
            page.wait_for_selector("#live.off", state="attached", timeout=10_000)  # turned away
            held.close()
            holder.close()
            page.wait_for_selector("#live:not(.off):not([hidden])", timeout=15_000)  # it came back by itself
            served.call("POST", f"/api/games/{game['id']}/attempts", {"player": "Ann", "seq": 0, "dice": PHASE1_MADE})
            page.wait_for_selector("text=27", timeout=10_000)  # and the update arrived live
        finally:
            context.close()


@pytest.mark.parametrize("fmt", ["BMP", "GIF", "TIFF", "PPM"])
def test_image_formats_no_phone_sends_are_refused_before_any_decoder_runs(client, fmt):
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (32, 24), (200, 190, 170)).save(out, fmt)
    response = client.post("/api/read", data=photo_form(out.getvalue()), content_type="multipart/form-data")
    assert response.status_code == 422 and "JPEG, PNG or WebP" in response.json["error"]


def test_a_stream_that_falls_far_behind_is_ended_not_buffered_for():
    from companion.web_api.broadcast import Broadcaster

    events = Broadcaster(keepalive_s=30, backlog=3)
    stream = events.stream("game", lambda: ("state", {"seq": 0}))
    assert next(stream) == b"retry: 2000\n\n" and b'"seq":0' in next(stream)
    for seq in range(1, 6):  # the client reads nothing meanwhile
        events.publish("game", "state", {"seq": seq})
    assert list(stream) == []  # ended: its page reconnects and gets the state as it is then
    again = events.stream("game", lambda: ("state", {"seq": 5}))
    assert b'"seq":5' in [next(again), next(again)][1]  # and its place is free again
    again.close()


def test_the_join_page_may_use_its_own_style_and_nothing_else_inline(db_path):
    import base64
    import hashlib
    import re

    client = create_app(db_path, join_code="ABCD-EFGH").test_client()
    response = client.get("/")
    assert response.status_code == 403
    styles = re.findall(r"<style>(.*?)</style>", response.get_data(as_text=True), re.S)
    policy = response.headers["Content-Security-Policy"]
    for style in styles:
        assert f"'sha256-{base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()}'" in policy
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert "unsafe-inline" not in directives["script-src"] + directives["style-src"]
