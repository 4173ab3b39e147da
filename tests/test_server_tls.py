"""The server layer over real sockets, plain HTTP and HTTPS alike: the Host, Origin and
join-code guards, the server's own refusals as JSON errors with the security headers, and
`companion serve --lan` serving HTTPS with a certificate it keeps beside the database."""

from __future__ import annotations

import http.client
import json
import re
import socket
import ssl

import pytest
from conftest import LiveServer, stop_cli
from test_api_live import start_cli

from companion.certificate import CERT_NAME, KEY_NAME, certificate_names

CODE = "ABCD-EF23"


def unverified() -> ssl.SSLContext:
    """What a phone has after accepting the warning once: this certificate, not a verified one."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def connect(scheme: str, port: int, host: str = "127.0.0.1") -> http.client.HTTPConnection:
    if scheme == "https":
        return http.client.HTTPSConnection(host, port, timeout=10, context=unverified())
    return http.client.HTTPConnection(host, port, timeout=10)


def ask(scheme: str, port: int, method: str, path: str, headers=None, body=None):
    conn = connect(scheme, port)
    try:
        conn.request(method, path, body, headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


@pytest.fixture(params=["http", "https"])
def lan_server(request, db_path, tls_files):
    """A LAN-mode server (join code CODE), over plain HTTP and over HTTPS."""
    with LiveServer(db_path, join_code=CODE, tls=tls_files if request.param == "https" else None) as server:
        server.scheme = request.param
        yield server


def test_the_https_server_speaks_tls_and_the_plain_one_does_not(lan_server):
    status, _, _ = ask(lan_server.scheme, lan_server.port, "GET", f"/api/info?code={CODE}")
    assert status == 200
    if lan_server.scheme == "https":  # plain HTTP to the TLS port: sent to https, never served
        assert ask("http", lan_server.port, "GET", f"/api/info?code={CODE}")[0] == 307
    else:
        with pytest.raises(ssl.SSLError):
            ask("https", lan_server.port, "GET", f"/api/info?code={CODE}")


@pytest.fixture
def https_server(db_path, tls_files):
    with LiveServer(db_path, join_code=CODE, tls=tls_files) as server:
        yield server


def test_a_plain_http_link_to_the_https_port_is_sent_to_its_https_address(https_server):
    port = https_server.port
    status, headers, body = ask("http", port, "GET", f"/?code={CODE}", {"Host": f"192.168.1.20:{port}"})
    assert status == 307
    assert headers["location"] == f"https://192.168.1.20:{port}/?code={CODE}"
    assert headers["content-type"].startswith("text/plain") and b"HTTPS only" in body
    assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"
    # followed, the link is served
    assert ask("https", port, "GET", f"/api/info?code={CODE}")[0] == 200


def test_a_plain_http_request_that_changes_something_is_told_to_use_https(https_server):
    status, headers, body = ask("http", https_server.port, "POST", "/api/games",
                                {"Content-Type": "application/json", "X-Join-Code": CODE}, json.dumps({"players": ["Ann"]}))
    assert status == 400 and "location" not in headers
    assert headers["content-type"].startswith("text/plain")
    assert b"HTTPS only" in body and b"Nothing was changed" in body
    games = json.loads(ask("https", https_server.port, "GET", f"/api/games?code={CODE}")[2])
    assert games["games"] == []


def still_open(sock: socket.socket) -> bool:
    """The server neither closed nor answered this connection (yet)."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def test_a_client_that_connects_and_says_nothing_holds_up_no_other(lan_server):
    """A silent client, and one that stops halfway through its TLS hello, are waited for on
    threads of their own: the next client is served while they are still connected."""
    port = lan_server.port
    silent = socket.create_connection(("127.0.0.1", port), timeout=30)
    halfway = socket.create_connection(("127.0.0.1", port), timeout=30)
    halfway.sendall(b"\x16\x03\x01\x02\x00\x01")  # a ClientHello's record header, then nothing
    try:
        for _ in range(3):
            assert ask(lan_server.scheme, port, "GET", f"/api/info?code={CODE}")[0] == 200
        assert still_open(silent) and still_open(halfway)  # served without waiting them out
    finally:
        silent.close()
        halfway.close()


def test_a_foreign_host_is_refused(lan_server):
    status, _, body = ask(lan_server.scheme, lan_server.port, "GET", f"/api/games?code={CODE}",
                          {"Host": f"rebind.example:{lan_server.port}"})
    assert status == 400 and "does not answer at" in json.loads(body)["error"]


def test_the_join_code_is_needed_and_enough(lan_server):
    assert ask(lan_server.scheme, lan_server.port, "GET", "/api/games")[0] == 403
    assert ask(lan_server.scheme, lan_server.port, "GET", "/api/games", {"X-Join-Code": "abcd-ef24"})[0] == 403
    assert ask(lan_server.scheme, lan_server.port, "GET", "/api/games", {"X-Join-Code": "abcdef23"})[0] == 200


def test_join_code_guessing_is_throttled_per_client(lan_server):
    from companion.web_api.settings import JOIN_TRIES

    scheme, port = lan_server.scheme, lan_server.port
    for n in range(JOIN_TRIES):
        assert ask(scheme, port, "GET", "/api/games", {"X-Join-Code": f"WRONG-{n:04d}"})[0] == 403
    status, headers, body = ask(scheme, port, "GET", "/api/games", {"X-Join-Code": CODE})
    assert status == 429 and int(headers["retry-after"]) > 0 and json.loads(body)["error"]


def test_a_state_change_from_another_site_is_refused_and_from_the_scorepad_taken(lan_server):
    body = json.dumps({"players": ["Ann"]})
    headers = {"Content-Type": "application/json", "X-Join-Code": CODE}
    scheme, port = lan_server.scheme, lan_server.port
    refused = ask(scheme, port, "POST", "/api/games", {**headers, "Origin": "https://evil.example"}, body)
    assert refused[0] == 403 and "may not change" in json.loads(refused[2])["error"]
    # The other scheme at the same address is another origin too.
    other = "http" if scheme == "https" else "https"
    assert ask(scheme, port, "POST", "/api/games", {**headers, "Origin": f"{other}://127.0.0.1:{port}"}, body)[0] == 403
    assert ask(scheme, port, "POST", "/api/games", {**headers, "Origin": f"{scheme}://127.0.0.1:{port}"}, body)[0] == 201


def test_a_body_over_the_servers_limit_gets_a_json_error_with_the_security_headers(lan_server):
    conn = connect(lan_server.scheme, lan_server.port)
    try:
        conn.putrequest("POST", "/api/evaluate")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(200 * 1024 * 1024))
        conn.endheaders()
        response = conn.getresponse()
        assert response.status == 413
        assert response.getheader("Content-Type") == "application/json"
        assert "larger than" in json.loads(response.read())["error"]
        assert_security_headers(response)
    finally:
        conn.close()


def test_a_request_that_is_not_http_gets_a_json_error_with_the_security_headers(lan_server):
    raw = socket.create_connection(("127.0.0.1", lan_server.port), timeout=10)
    sock = unverified().wrap_socket(raw) if lan_server.scheme == "https" else raw
    try:
        sock.sendall(b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Broken header\r\n\r\n")
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    finally:
        sock.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    assert status_line.split(" ")[1] == "400"
    assert headers["Content-Type"] == "application/json"
    assert "could not read this request" in json.loads(body)["error"]
    assert_security_headers(headers)


def assert_security_headers(headers) -> None:
    get = headers.getheader if hasattr(headers, "getheader") else headers.get
    assert get("X-Content-Type-Options") == "nosniff"
    assert "frame-ancestors 'none'" in get("Content-Security-Policy")
    assert get("X-Frame-Options") == "DENY" and get("Referrer-Policy") == "same-origin"


def test_a_closed_stream_is_noticed_over_https_too(db_path, tls_files):
    from companion.server import create_app, make_server, shutdown

    app = create_app(db_path, keepalive_s=30.0, max_streams=1)
    server = make_server(app, "127.0.0.1", 0, threads=2, tls=tls_files)
    import threading
    import time

    loop = threading.Thread(target=server.run, daemon=True)
    loop.start()
    port = server.effective_port
    try:
        game = json.loads(ask("https", port, "POST", "/api/games", {"Content-Type": "application/json"},
                              json.dumps({"players": ["Ann"]}))[2])
        for _ in range(3):  # the one place, taken and freed again
            conn = connect("https", port)
            conn.request("GET", f"/api/games/{game['id']}/events")
            response = conn.getresponse()
            assert response.status == 200 and response.readline() == b"retry: 2000\n"
            response.close()
            conn.close()
            deadline = time.monotonic() + 4
            status = 503
            while status != 200 and time.monotonic() < deadline:
                probe = connect("https", port)
                probe.request("GET", f"/api/games/{game['id']}/events")
                status = probe.getresponse().status
                probe.close()
                time.sleep(0.2)
            assert status == 200, "the closed stream still holds its place"
            time.sleep(1.5)  # the probe's place too
    finally:
        shutdown(app, server, loop)


# --- companion serve --lan ----------------------------------------------------------------------

def test_serve_lan_prints_an_https_link_and_keeps_its_certificate_beside_the_database(tmp_path):
    process, url = start_cli(tmp_path, ["--lan"], lan=True)
    try:
        assert url.startswith("https://")
        assert "warning" in process.banner  # what the first visit shows, said once
        code = re.search(r"\?code=([\w-]+)", url).group(1)
        port = int(re.search(r":(\d+)/", url).group(1))
        assert ask("https", port, "GET", f"/api/games?code={code}")[0] == 200
    finally:
        stop_cli(process)
    cert, key = tmp_path / CERT_NAME, tmp_path / KEY_NAME  # beside db.sqlite3
    assert (key.stat().st_mode & 0o777) == 0o600
    assert "127.0.0.1" in certificate_names(cert)
    made = cert.read_bytes()
    process, url = start_cli(tmp_path, ["--lan"], lan=True)
    stop_cli(process)
    assert cert.read_bytes() == made  # reused: a phone that accepted it is not asked again


def test_serve_lan_host_listens_on_that_interface_only(tmp_path):
    process, url = start_cli(tmp_path, ["--lan", "--host", "127.0.0.1"], lan=True)
    try:
        assert url.startswith("https://127.0.0.1:")
        port = int(re.search(r":(\d+)/", url).group(1))
        assert ask("https", port, "GET", "/api/info")[0] == 403  # reached; the code is asked for
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.2", port), timeout=5).close()  # another address: nobody listens
    finally:
        stop_cli(process)


def test_serve_refuses_a_network_host_without_the_join_code(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "companion", "serve", "--host", "0.0.0.0", "--db",
                           str(tmp_path / "db.sqlite3")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--lan" in done.stderr
    assert not (tmp_path / "db.sqlite3").exists()


def test_the_app_sees_each_clients_own_address(db_path, tls_files):
    """The join-code throttle counts per client: the server passes the client's own address and port."""
    from flask import jsonify, request

    server = LiveServer(db_path, tls=tls_files)
    server.app.add_url_rule("/probe-address", "probe_address",
                            lambda: jsonify([request.remote_addr, request.environ["REMOTE_PORT"]]))
    with server:
        conn = connect("https", server.port)
        try:
            conn.request("GET", "/probe-address")
            seen = json.loads(conn.getresponse().read())
            assert seen == [conn.sock.getsockname()[0], str(conn.sock.getsockname()[1])]
        finally:
            conn.close()
