"""The scorepad web app: a JSON API under /api/, the page in web/, live updates by SSE.

A thin adapter: games are stored as config + attempts (`companion.store`) and every answer
about the game comes from replaying them through `companion.game`; `/api/evaluate` asks the
rules engine. Nothing here decides a rule. The routes are blueprints in
`companion.web_api.routes`, over the store and event stream this module makes.
"""

from __future__ import annotations

import logging
import secrets
import threading
from pathlib import Path
from typing import Sequence

from flask import Flask

from companion.assets import web_dir
from companion.certificate import TlsFiles
from companion.http_server import HttpServer
from companion.runtime import Runtime
from companion.store import Store
from companion.table_profiles import TableProfiles
from companion.web_api import context, errors, guards
from companion.web_api.broadcast import Broadcaster
from companion.web_api.context import AppState
from companion.web_api.games import ReplayCache
from companion.web_api.held import HeldPhotos
from companion.web_api.photos import PhotoReader
from companion.web_api.routes import BLUEPRINTS
from companion.web_api.settings import LOOPBACK_HOSTS, MAX_PHOTO_BYTES, MAX_STREAMS, ServerSettings
from companion.web_api.throttle import JoinThrottle

log = logging.getLogger("companion.server")

WEB_DIR = web_dir()
MAX_UPLOAD = MAX_PHOTO_BYTES


def create_app(db_path: str | Path, *, join_code: str | None = None, lan_hosts: Sequence[str] = (),
               keepalive_s: float = 15.0, max_streams: int = MAX_STREAMS,
               warm_advisor: bool = False, runtime: Runtime | None = None) -> Flask:
    """The app; `join_code` turns on LAN mode (every request must carry the code), and
    `lan_hosts` are the addresses it is then reached by (besides this machine's loopback).
    `max_streams` live-update streams may be open at once (make_server gives them threads).
    `runtime` holds the one dice reader every photo is read and learnt with (companion/runtime.py;
    None: the shipped settings and models, loaded now).

    `warm_advisor` builds the roll advisor's tables in a background thread (`companion serve`
    does; tests do not, so they stay fast) so that no player waits for a first advice."""
    hosts = (*LOOPBACK_HOSTS, *(h.lower() for h in lan_hosts if h.lower() not in LOOPBACK_HOSTS))
    settings = ServerSettings(join_code=join_code, hosts=hosts, keepalive_s=keepalive_s, max_streams=max_streams)
    app = Flask(__name__, static_folder=str(WEB_DIR / "static"), static_url_path="/static")
    # The most any body may be; each route then allows its own (guards.limit_body).
    app.config["MAX_CONTENT_LENGTH"] = MAX_PHOTO_BYTES + guards.MULTIPART_SLACK
    app.config["WEB_DIR"] = WEB_DIR
    app.json.sort_keys = False  # type: ignore[attr-defined]
    runtime = runtime or Runtime.shipped()
    store = Store(db_path)
    app.extensions[context.EXTENSION] = AppState(
        settings=settings, store=store, cache=ReplayCache(),
        events=Broadcaster(settings.keepalive_s, settings.max_streams, settings.disconnect_poll_s),
        photos=PhotoReader(settings.photo_reads, runtime), profiles=TableProfiles(store, runtime.reader),
        join_throttle=JoinThrottle(settings.join_tries, settings.join_window_s), held=HeldPhotos())
    guards.install(app)
    errors.install(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    if warm_advisor:
        _warm_advisor_in_background()
    return app


def _warm_advisor_in_background() -> threading.Thread:
    """Build every phase's advisor tables (~10 s, ~120 MB) without delaying the start."""

    def warm() -> None:
        try:
            from companion.advisor import warm_up

            held = warm_up()
            log.info("roll advisor ready (%.0f MB of tables)", held / 2**20)
        except Exception:  # noqa: BLE001 - advice then builds its tables on first use
            log.exception("warming the roll advisor failed")

    thread = threading.Thread(target=warm, name="advisor-warm-up", daemon=True)
    thread.start()
    return thread


JOIN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I to confuse when typed


def new_join_code() -> str:
    """Eight letters and digits as XXXX-XXXX (40 bits), easy to read out and type."""
    chars = "".join(secrets.choice(JOIN_ALPHABET) for _ in range(8))
    return f"{chars[:4]}-{chars[4:]}"


def make_server(app: Flask, host: str, port: int, threads: int = 16, tls: TlsFiles | None = None) -> HttpServer:
    """The server (bound, not started) with `threads` workers for requests; HTTPS with `tls`.

    Each open live stream holds a worker while it waits, so the app's max_streams workers
    are added for them: requests always have `threads` of their own. A stream notices a
    client that left within a second (the server looks at its connection)."""
    settings = context.state(app).settings
    return HttpServer(app, host, port, threads + settings.max_streams, tls=tls,
                      # the server refuses a larger body itself, before any of it is read
                      body_limit=MAX_PHOTO_BYTES + guards.MULTIPART_SLACK,
                      idle_connections=settings.max_streams + 100)


def shutdown(app: Flask, server: HttpServer, loop_thread: threading.Thread | None = None) -> None:
    """End the live streams first, then stop the server (its workers finish, every socket
    closes); `loop_thread`, where `server.run()` loops, then ends."""
    context.state(app).events.close()
    server.stop()
    if loop_thread is not None:
        loop_thread.join(timeout=10)
