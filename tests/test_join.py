"""Joining from a phone: `companion serve` says how, and a LAN visitor without the code gets a
page that says what to do and takes the code however it is typed."""

from __future__ import annotations

import re

from conftest import stop_cli
from test_api_live import start_cli

from companion.server import create_app, new_join_code


def test_serving_locally_says_how_phones_on_the_wifi_join(tmp_path):
    process, _url = start_cli(tmp_path, [])
    try:
        assert "--lan" in process.banner and "QR code" in process.banner
    finally:
        stop_cli(process)


def test_a_join_code_is_easy_to_type():
    for _ in range(20):
        assert re.fullmatch(r"[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}", new_join_code())


def test_the_code_is_accepted_in_any_case_with_or_without_its_dash(db_path):
    client = create_app(db_path, join_code="ABCD-EF23").test_client()
    for typed in ("ABCD-EF23", "abcd-ef23", "abcdef23", "AbCdEf23", " abcd ef23 "):
        assert client.get("/api/games", query_string={"code": typed}).status_code == 200, typed
    assert client.get("/api/games", query_string={"code": "ABCD-EF24"}).status_code == 403
    joined = create_app(db_path, join_code="ABCD-EF23").test_client().get("/?code=abcdef23")
    assert joined.status_code == 200 and "p10_join=ABCD-EF23" in joined.headers["Set-Cookie"]


def test_a_visitor_without_the_code_gets_a_page_with_a_field_for_it(db_path):
    client = create_app(db_path, join_code="ABCD-EF23").test_client()
    refused = client.get("/")
    assert refused.status_code == 403 and refused.mimetype == "text/html"
    page = refused.get_data(as_text=True)
    assert 'name="code"' in page and "QR code" in page and "viewport" in page
    assert "certificate" in page  # the browser's one-time warning about the LAN server's own certificate
    assert client.get("/api/games").is_json  # the API still answers in JSON
