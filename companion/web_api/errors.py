"""Every error as JSON with one sentence (`{"error": ...}`) under /api/."""

from __future__ import annotations

import logging

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from companion.dice import DiceError
from companion.game import GameError
from companion.store import Conflict, NotFound
from companion.web_api import guards
from companion.web_api.bodies import ApiError, sentence
from companion.web_api.settings import MAX_JSON_BYTES, MAX_PHOTO_BYTES

log = logging.getLogger("companion.server")


def install(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def api_error(exc: ApiError):
        return jsonify({"error": exc.message}), exc.status, exc.headers

    @app.errorhandler(NotFound)
    def not_found(exc: NotFound):
        return jsonify({"error": sentence(str(exc))}), 404

    @app.errorhandler(Conflict)
    def conflict(exc: Conflict):
        return jsonify({"error": sentence(str(exc))}), 409

    @app.errorhandler(GameError)
    def game_error(exc: GameError):
        return jsonify({"error": sentence(str(exc))}), 400

    @app.errorhandler(DiceError)
    def dice_error(exc: DiceError):
        return jsonify({"error": sentence(str(exc))}), 400

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(exc):
        if guards.route_takes_photo():
            limit = MAX_PHOTO_BYTES // (1024 * 1024)
            return jsonify({"error": f"The photo is larger than {limit} MB. Nothing was changed; "
                                     "take a smaller photo or lower the camera resolution."}), 413
        return jsonify({"error": f"The request is larger than {MAX_JSON_BYTES // 1024} KB, more than any "
                                 "request of this API needs. Nothing was changed."}), 413

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        if request.path.startswith("/api/"):
            # the exception's own headers too: a 405's Allow, a 503's Retry-After
            headers = [(k, v) for k, v in exc.get_headers() if k.lower() != "content-type"]
            return jsonify({"error": exc.description}), exc.code, headers
        return exc

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):
        log.exception("unexpected error on %s %s", request.method, request.path)
        return jsonify({"error": f"The server hit an unexpected error ({type(exc).__name__}); nothing was changed."}), 500
