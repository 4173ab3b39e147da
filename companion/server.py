"""The scorepad web app: a JSON API under /api/, the page in web/, live updates by SSE.

A thin adapter: games are stored as config + attempts (`companion.store`) and every answer
about the game comes from replaying them through `companion.game`; `/api/evaluate` asks the
rules engine. Nothing here decides a rule.
"""

from __future__ import annotations

import hmac
import io
import logging
import secrets
import threading
from pathlib import Path
from typing import Any, Callable

from flask import Flask, Response, jsonify, request, send_file, send_from_directory
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from companion.dice import DiceError, parse_faces
from companion.game import GameError
from companion.rules import PHASES, evaluate
from companion.seating import SeatingError, first_player
from companion.store import Conflict, NotFound, Store
from companion.web_api import games as g
from companion.web_api.broadcast import Broadcaster
from companion.web_api.openapi import openapi_document

log = logging.getLogger("companion.server")

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
MAX_UPLOAD = 25 * 1024 * 1024  # the limit on one photo
JOIN_COOKIE = "p10_join"
JOIN_COOKIE_DAYS = 30

Reader = Callable[[bytes], Any]


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def create_app(db_path: str | Path, *, join_code: str | None = None, reader: Reader | None = None,
               keepalive_s: float = 15.0, warm_advisor: bool = False) -> Flask:
    """The app; `join_code` turns on LAN mode (every request must carry the code).

    `warm_advisor` builds the roll advisor's tables in a background thread (`companion serve`
    does; tests do not, so they stay fast) so that no player waits for a first advice."""
    app = Flask(__name__, static_folder=str(WEB_DIR / "static"), static_url_path="/static")
    # A little room above the photo limit for the multipart framing; the photo itself is
    # checked against MAX_UPLOAD exactly.
    app.config["MAX_CONTENT_LENGTH"] = MAX_UPLOAD + 1024 * 1024
    app.config["JOIN_CODE"] = join_code
    app.json.sort_keys = False
    store = Store(db_path)
    cache = g.ReplayCache()
    events = Broadcaster(keepalive_s=keepalive_s)
    app.extensions["companion"] = {"store": store, "events": events}
    read_photo = _Reader(reader)
    if warm_advisor:
        _warm_advisor_in_background()

    _install_guards(app)
    _install_errors(app)

    def load(game_id: str):
        record, attempts = store.game_and_attempts(game_id)
        return record, attempts, cache.game(record, attempts)

    def state(game_id: str) -> dict:
        return g.game_state(*load(game_id))

    def announce(game_id: str) -> dict:
        current = state(game_id)
        events.publish(game_id, "state", current)
        return current

    # -- page --------------------------------------------------------------------------

    @app.get("/")
    def index():
        return send_from_directory(WEB_DIR / "templates", "index.html", max_age=0)

    # -- reference ---------------------------------------------------------------------

    @app.get("/api/openapi.json")
    def openapi():
        return jsonify(openapi_document())

    @app.get("/api/info")
    def info():
        return jsonify({
            "phases": [
                {"number": p.number, "name": p.name, "groups": [{"kind": r.kind, "size": r.size} for r in p.groups]}
                for p in PHASES
            ],
            "colors": g.color_names(),
            "max_upload_bytes": MAX_UPLOAD,
            "lan": join_code is not None,
        })

    @app.post("/api/evaluate")
    def evaluate_dice():
        body = _json_body()
        phase = _phase(body)
        faces = _faces(body.get("dice"))
        rules = g.house_rules(body.get("rules"))
        return jsonify(evaluate(phase, faces, rules).to_json())

    @app.post("/api/advise")
    def advise_roll():
        """The roll advisor's keeps and odds for the 10 dice showing (companion.advisor decides)."""
        from companion.advisor import advise

        body = _json_body()
        phase = _phase(body)
        rolls_left = body.get("rolls_left")
        if isinstance(rolls_left, bool) or not isinstance(rolls_left, int) or not 0 <= rolls_left <= 2:
            raise ApiError(400, "\"rolls_left\" must be 0, 1 or 2 (2 after the first roll, 1 after the second)")
        dice = body.get("dice")
        if isinstance(dice, list) and len(dice) != 10:  # a turn always rolls every die
            raise ApiError(400, f"The advice needs all 10 dice; {len(dice)} were sent.")
        faces = _faces(dice)
        rules = g.house_rules(body.get("rules"))
        try:
            advice = advise(phase, faces, rolls_left, rules)
        except ValueError as exc:  # DiceError included: e.g. faces the set cannot show at once
            raise ApiError(400, _turn_message(str(exc))) from None
        return jsonify(advice.to_json())

    @app.post("/api/first-player")
    def decide_first_player():
        body = _json_body()
        try:
            return jsonify(first_player(body.get("players") or [], body.get("rolls") or []).to_json())
        except SeatingError as exc:
            raise ApiError(400, str(exc)) from None

    @app.post("/api/read")
    def read_only():
        """Read dice without keeping the photo (the starter roll before a game exists)."""
        data, _mime = _uploaded_photo()
        return jsonify({"reading": g.reading_json(read_photo(data))})

    # -- games -------------------------------------------------------------------------

    @app.get("/api/games")
    def list_games():
        out = []
        for record in store.list_games():
            try:
                out.append(g.game_summary(*load(record.id)))
            except NotFound:  # deleted meanwhile
                continue
        return jsonify({"games": out})

    @app.post("/api/games")
    def create_game():
        config = g.game_config(_json_body())
        record = store.create_game(config)
        return jsonify(state(record.id)), 201

    @app.get("/api/games/<game_id>")
    def get_game(game_id: str):
        return jsonify(state(game_id))

    @app.delete("/api/games/<game_id>")
    def delete_game(game_id: str):
        store.delete_game(game_id)
        events.publish(game_id, "deleted", {"id": game_id})
        return jsonify({"deleted": game_id})

    @app.get("/api/games/<game_id>/events")
    def game_events(game_id: str):
        first = ("state", state(game_id))  # 404 before the stream starts if there is no game
        stream = events.stream(game_id, first)
        return Response(stream, mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.post("/api/games/<game_id>/attempts")
    def record_attempt(game_id: str):
        body = _json_body()
        seq = body.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise ApiError(400, "\"seq\" must be the attempt number the page shows (the game's \"seq\")")
        player = body.get("player")
        if not isinstance(player, str):
            raise ApiError(400, "\"player\" must be the name of the player whose attempt this is")
        faces = _faces(body.get("dice"))
        photo_id = body.get("photo_id")
        if photo_id is not None and (isinstance(photo_id, bool) or not isinstance(photo_id, int)):
            raise ApiError(400, "\"photo_id\" must be the id the photo upload returned, or null")
        with store.appending(game_id, seq) as (record, attempts, appender):
            game = cache.game(record, attempts, for_update=True)
            try:
                attempt = game.record(player, faces)
            except GameError as exc:
                raise ApiError(409, _turn_message(str(exc))) from None
            labels = None
            if photo_id is not None:
                photo = store.get_photo(photo_id)
                labels = g.photo_labels(photo.reading, faces, body.get("sources"))
            added = appender.append(attempt.player, [f.token for f in faces], photo_id, labels)
        cache.put(game_id, [*attempts, added], game)
        current = announce(game_id)
        return jsonify({"attempt": {**attempt.to_json(), "seq": seq}, "game": current}), 201

    @app.delete("/api/games/<game_id>/attempts/<int:seq>")
    def undo_attempt(game_id: str, seq: int):
        undone = store.undo_last(game_id, seq)
        current = announce(game_id)
        return jsonify({"undone": {"seq": undone.seq, "player": undone.player, "dice": undone.dice},
                        "game": current})

    @app.post("/api/games/<game_id>/photos")
    def upload_photo(game_id: str):
        store.get_game(game_id)  # 404 first: an unknown game should not cost a model run
        data, mime = _uploaded_photo()
        reading = g.reading_json(read_photo(data))
        photo_id = store.add_photo(game_id, mime, data, reading)
        return jsonify({"photo_id": photo_id, "url": f"/api/photos/{photo_id}", "reading": reading}), 201

    @app.get("/api/photos/<int:photo_id>")
    def get_photo(photo_id: int):
        photo = store.get_photo(photo_id)
        return send_file(io.BytesIO(photo.data), mimetype=photo.mime, max_age=3600)

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


class _Reader:
    """The vision pipeline, imported on first use so the scorepad runs without it."""

    def __init__(self, reader: Reader | None):
        self._reader = reader
        self._lock = threading.Lock()

    def __call__(self, data: bytes):
        from companion.vision import ImageError  # light: the error type only

        _check_image(data)
        reader = self._reader or self._load()
        try:
            return reader(data)
        except ImageError as exc:
            raise ApiError(422, f"This photo cannot be read: {exc}. Nothing was changed.") from None
        except RuntimeError as exc:  # ModelsMissing and its kin: the reader, not the photo
            log.warning("dice reader failed: %s", exc)
            raise ApiError(503, f"The dice reader is not available ({exc}). Enter the dice by hand.") from None

    def _load(self) -> Reader:
        with self._lock:
            if self._reader is None:
                try:
                    from companion.vision import ReadSettings, read_image

                    settings = ReadSettings.from_env()  # the environment, read once
                except Exception as exc:  # the pipeline cannot be imported, or its settings are wrong
                    raise ApiError(503, f"The dice reader is not available ({exc}). Enter the dice by hand.") from None
                self._reader = lambda data: read_image(data, settings=settings)
        return self._reader


def _check_image(data: bytes) -> None:
    """Refuse what is plainly not an image before any model is loaded (reads the header only)."""
    from PIL import Image, UnidentifiedImageError

    from companion.vision.reading import HEIC_ADVICE, is_heic

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.size  # noqa: B018 - opening parsed the header; the size proves it
    except UnidentifiedImageError:
        if is_heic(data[:12]):
            raise ApiError(422, f"This is {HEIC_ADVICE}. Nothing was changed.") from None
        raise ApiError(422, "This file is not a photo (JPEG, PNG or WebP expected). Nothing was changed.") from None
    except Exception as exc:  # noqa: BLE001 - any header Pillow cannot parse is a broken image
        raise ApiError(422, f"This photo is broken and cannot be read ({exc}). Nothing was changed.") from None


def _phase(body: dict) -> int:
    phase = body.get("phase")
    if isinstance(phase, bool) or not isinstance(phase, int) or not 1 <= phase <= len(PHASES):
        raise ApiError(400, f"\"phase\" must be a number 1..{len(PHASES)}")
    return phase


def _json_body() -> dict:
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise ApiError(400, "send a JSON object (Content-Type: application/json)")
    return body


def _faces(tokens: Any):
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise ApiError(400, "\"dice\" must be a list of tokens such as \"7b\", \"10g\", \"Wr\"")
    try:
        return parse_faces(tokens)
    except DiceError as exc:
        raise ApiError(400, str(exc)) from None


def _uploaded_photo() -> tuple[bytes, str]:
    upload = request.files.get("photo")
    if upload is None:
        raise ApiError(400, "send the photo as multipart/form-data in the field \"photo\"")
    data = upload.read(MAX_UPLOAD + 1)
    if len(data) > MAX_UPLOAD:
        raise RequestEntityTooLarge()
    if not data:
        raise ApiError(422, "The photo is empty. Nothing was changed.")
    return data, _sniff_mime(data, upload.mimetype)


def _sniff_mime(data: bytes, declared: str | None) -> str:
    """The type the bytes are (Pillow's reading of the header), not what the client claimed."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            return Image.MIME.get(image.format or "", "application/octet-stream")
    except Exception:  # noqa: BLE001 - the reader refuses it later with a clear message
        return declared if declared and declared.startswith("image/") else "application/octet-stream"


def _turn_message(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def _install_guards(app: Flask) -> None:
    """LAN mode: a request must carry the join code (query ?code=, cookie, or X-Join-Code)."""

    @app.before_request
    def check_join_code():
        code = app.config.get("JOIN_CODE")
        if not code:
            return None
        offered = request.args.get("code") or request.cookies.get(JOIN_COOKIE) or request.headers.get("X-Join-Code")
        if offered and hmac.compare_digest(offered.encode(), code.encode()):
            return None
        message = "This scorepad needs its join code: scan the QR code or open the URL the server printed."
        if request.path.startswith("/api/"):
            return jsonify({"error": message}), 403
        return Response(message + "\n", status=403, mimetype="text/plain")

    @app.after_request
    def remember_join_code(response: Response):
        code = app.config.get("JOIN_CODE")
        if code and request.args.get("code") == code and request.cookies.get(JOIN_COOKIE) != code:
            response.set_cookie(JOIN_COOKIE, code, max_age=JOIN_COOKIE_DAYS * 86400, httponly=True, samesite="Strict")
        return response


def _install_errors(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def api_error(exc: ApiError):
        return jsonify({"error": exc.message}), exc.status

    @app.errorhandler(NotFound)
    def not_found(exc: NotFound):
        return jsonify({"error": str(exc)[:1].upper() + str(exc)[1:] + "."}), 404

    @app.errorhandler(Conflict)
    def conflict(exc: Conflict):
        return jsonify({"error": str(exc)[:1].upper() + str(exc)[1:] + "."}), 409

    @app.errorhandler(GameError)
    def game_error(exc: GameError):
        return jsonify({"error": _turn_message(str(exc))}), 400

    @app.errorhandler(DiceError)
    def dice_error(exc: DiceError):
        return jsonify({"error": _turn_message(str(exc))}), 400

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(exc):
        limit = MAX_UPLOAD // (1024 * 1024)
        return jsonify({"error": f"The photo is larger than {limit} MB. Nothing was changed; "
                                 "take a smaller photo or lower the camera resolution."}), 413

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        if request.path.startswith("/api/"):
            return jsonify({"error": exc.description}), exc.code
        return exc

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):
        log.exception("unexpected error on %s %s", request.method, request.path)
        return jsonify({"error": f"The server hit an unexpected error ({type(exc).__name__}); nothing was changed."}), 500


def new_join_code() -> str:
    return secrets.token_urlsafe(6)


def make_server(app: Flask, host: str, port: int, threads: int = 32):
    """A waitress server (not started). Each open live stream holds a thread, hence many."""
    from waitress.server import create_server

    return create_server(app, host=host, port=port, threads=threads, ident="phase10-companion",
                         channel_timeout=300)


def shutdown(app: Flask, server, loop_thread: threading.Thread | None = None) -> None:
    """End the live streams first, let the worker threads finish, then close every socket.

    In this order no worker writes to a closed socket. When `server.run()` is still looping in
    `loop_thread`, the sockets are closed from inside that loop (a trigger callback), so it
    never polls a closed descriptor; its map empties and `run()` returns.
    """
    from waitress import wasyncore

    app.extensions["companion"]["events"].close()
    server.task_dispatcher.shutdown(cancel_pending=True, timeout=5)
    if loop_thread is not None and loop_thread.is_alive():
        try:
            server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
        except OSError:  # the trigger is already gone: the loop is closing by itself
            pass
        loop_thread.join(timeout=10)
    if server._map:
        wasyncore.close_all(server._map)
    # A worker still busy past the timeout (a long computation) pulls the trigger when it
    # finishes; the trigger is closed now, so make that pull a no-op instead of an EBADF.
    server.pull_trigger = lambda *args, **kwargs: None
