"""The API over real HTTP (the real server on 127.0.0.1): live updates, racing phones, the CLI server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from conftest import stop_cli

PHASE1_MADE = ["7b", "7r", "7g", "3o", "3r", "Wb"]


def call(base: str, method: str, path: str, body=None, headers=None, context=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


class EventReader:
    """Reads one SSE stream in a thread and keeps its events."""

    def __init__(self, url: str):
        self.events: list[tuple[str, dict]] = []
        self.comments = 0
        self.ended = threading.Event()
        self._response = urllib.request.urlopen(url, timeout=10)
        assert self._response.headers["Content-Type"].startswith("text/event-stream")
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        event, data = None, None
        try:
            for raw in self._response:
                line = raw.decode().rstrip("\n")
                if line.startswith(":"):
                    self.comments += 1
                elif line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
                elif line == "" and event:
                    self.events.append((event, data))
                    event, data = None, None
        except Exception:  # noqa: BLE001 - the server closing the stream ends the reader
            pass
        self.ended.set()

    def wait_for(self, count: int, timeout: float = 5.0) -> list[tuple[str, dict]]:
        deadline = time.monotonic() + timeout
        while len(self.events) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.events


def test_every_open_stream_receives_each_recorded_attempt(live_server):
    base = live_server.url
    _, game = call(base, "POST", "/api/games", {"players": ["Ann", "Bob"]})
    readers = [EventReader(f"{base}/api/games/{game['id']}/events") for _ in range(2)]
    for reader in readers:
        assert reader.wait_for(1)[0][0] == "state"  # the current state at once
    status, _ = call(base, "POST", f"/api/games/{game['id']}/attempts",
                     {"player": "Ann", "seq": 0, "dice": PHASE1_MADE})
    assert status == 201
    for reader in readers:
        event, state = reader.wait_for(2)[1]
        assert event == "state"
        assert state["seq"] == 1 and state["next"] == "Bob"
        assert state["scorepad"]["players"][0]["phases"][0] == 27
    call(base, "DELETE", f"/api/games/{game['id']}/attempts/0")
    assert readers[0].wait_for(3)[2][1]["seq"] == 0


def test_streams_send_keepalives_and_end_on_shutdown(server_factory):
    server = server_factory().__enter__()
    _, game = call(server.url, "POST", "/api/games", {"players": ["Ann"]})
    reader = EventReader(f"{server.url}/api/games/{game['id']}/events")
    deadline = time.monotonic() + 5
    while reader.comments == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert reader.comments >= 1  # keep-alive comment (keepalive_s=1 in the fixture)
    server.__exit__(None, None, None)
    assert reader.ended.wait(5), "the stream did not end when the server shut down"


def test_deleting_a_game_tells_its_open_pages(live_server):
    base = live_server.url
    _, game = call(base, "POST", "/api/games", {"players": ["Ann"]})
    reader = EventReader(f"{base}/api/games/{game['id']}/events")
    reader.wait_for(1)
    call(base, "DELETE", f"/api/games/{game['id']}")
    assert reader.wait_for(2)[1] == ("deleted", {"id": game["id"]})


def test_two_phones_confirming_at_once_record_the_attempt_once(live_server):
    base = live_server.url
    _, game = call(base, "POST", "/api/games", {"players": ["Ann", "Bob"]})
    body = {"player": "Ann", "seq": 0, "dice": PHASE1_MADE}
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda _: call(base, "POST", f"/api/games/{game['id']}/attempts", body), range(6)))
    statuses = sorted(status for status, _ in results)
    assert statuses == [201] + [409] * 5
    assert all("already recorded" in answer["error"] for status, answer in results if status == 409)
    _, state = call(base, "GET", f"/api/games/{game['id']}")
    assert state["seq"] == 1 and state["scorepad"]["players"][0]["total"] == 27


def test_companion_serve_prints_its_url_and_serves(tmp_path):
    process, url = start_cli(tmp_path, [])
    try:
        assert url.startswith("http://127.0.0.1:")
        status, body = call(url.rstrip("/"), "GET", "/api/games")
        assert status == 200 and body == {"games": []}
    finally:
        stop_cli(process)
    assert (tmp_path / "db.sqlite3").exists()


def test_companion_serve_reads_photos_with_the_models_folder_it_is_given(tmp_path):
    import io

    from PIL import Image

    process, url = start_cli(tmp_path, ["--models", str(tmp_path / "elsewhere")])
    try:
        base = url.rstrip("/")
        game = call(base, "POST", "/api/games", {"players": ["Ann"]})[1]
        photo = io.BytesIO()
        Image.new("RGB", (64, 48), (200, 190, 170)).save(photo, "JPEG")
        boundary = "companion-test-boundary"
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"dice.jpg\"\r\n"
                "Content-Type: image/jpeg\r\n\r\n").encode() + photo.getvalue() + f"\r\n--{boundary}--\r\n".encode()
        request = urllib.request.Request(f"{base}/api/games/{game['id']}/photos", data=body, method="POST",
                                         headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        try:
            urllib.request.urlopen(request, timeout=30)
            raise AssertionError("a photo was read without models")
        except urllib.error.HTTPError as err:
            assert err.code == 503
            assert str(tmp_path / "elsewhere") in json.loads(err.read())["error"]
    finally:
        stop_cli(process)


def test_companion_serve_lan_prints_a_join_url_with_a_qr_code_and_refuses_strangers(tmp_path):
    import ssl

    process, url = start_cli(tmp_path, ["--lan"], lan=True)
    try:
        code = re.search(r"\?code=([\w-]+)", url).group(1)
        port = re.search(r":(\d+)/", url).group(1)
        local = f"https://127.0.0.1:{port}"  # tests never leave this machine
        accepted = ssl._create_unverified_context()  # the certificate is this machine's own
        assert call(local, "GET", "/api/games", context=accepted)[0] == 403
        assert call(local, "GET", f"/api/games?code={code}", context=accepted)[0] == 200
        assert "\u2580" in process.banner or "\u2584" in process.banner  # the QR code's half blocks
    finally:
        stop_cli(process)


def start_cli(tmp_path, extra: list[str], lan: bool = False):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--port", str(port), "--db", str(tmp_path / "db.sqlite3"), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    lines = []
    url = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        found = re.search(r"(https?://\S+)", line)
        if found and url is None:
            url = found.group(1)
        if "Ctrl+C" in line:
            break
    process.banner = "".join(lines)
    assert url, process.banner
    return process, url
