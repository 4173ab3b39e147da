"""Checks made before any route runs, and headers added to every answer."""

from __future__ import annotations

import hmac

from flask import Flask, Response, jsonify, request

from companion.web_api import context

JOIN_COOKIE = "p10_join"
JOIN_COOKIE_DAYS = 30


def install(app: Flask) -> None:
    app.before_request(check_join_code)
    app.after_request(remember_join_code)


def check_join_code():
    """LAN mode: a request must carry the join code (query ?code=, cookie, or X-Join-Code)."""
    code = context.settings().join_code
    if not code:
        return None
    offered = request.args.get("code") or request.cookies.get(JOIN_COOKIE) or request.headers.get("X-Join-Code")
    if offered and hmac.compare_digest(offered.encode(), code.encode()):
        return None
    message = "This scorepad needs its join code: scan the QR code or open the URL the server printed."
    if request.path.startswith("/api/"):
        return jsonify({"error": message}), 403
    return Response(message + "\n", status=403, mimetype="text/plain")


def remember_join_code(response: Response) -> Response:
    code = context.settings().join_code
    if code and request.args.get("code") == code and request.cookies.get(JOIN_COOKIE) != code:
        response.set_cookie(JOIN_COOKIE, code, max_age=JOIN_COOKIE_DAYS * 86400, httponly=True, samesite="Strict")
    return response
