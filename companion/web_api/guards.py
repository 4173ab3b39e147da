"""Checks made before any route runs, and headers added to every answer."""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import re

from flask import Flask, Response, current_app, jsonify, request

from companion.web_api import context
from companion.web_api.settings import MAX_JSON_BYTES, MAX_PHOTO_BYTES

log = logging.getLogger("companion.server")

# Room above the photo limit for the multipart framing; the photo itself is checked exactly.
MULTIPART_SLACK = 1024 * 1024

JOIN_COOKIE = "p10_join"
JOIN_COOKIE_DAYS = 30
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# The page is one module script and its own style sheet, photos and the camera: no inline
# script or style element (a die's crop is a style attribute, which cannot run code),
# nothing from elsewhere, never in a frame.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; "
    "img-src 'self' blob: data:; "
    "media-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
# On every answer, the server's own refusals included (companion.http_server).
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


def install(app: Flask) -> None:
    # The Host first: a DNS-rebinding page must learn nothing, not even that a code is needed.
    app.before_request(check_host)
    app.before_request(check_origin)
    app.before_request(check_join_code)
    app.before_request(limit_body)
    app.after_request(remember_join_code)
    app.after_request(security_headers)


def security_headers(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def takes_photo(view):
    """Mark a route that takes a photo upload: its body may be a photo's size, not a JSON's."""
    view.takes_photo = True
    return view


def route_takes_photo() -> bool:
    view = current_app.view_functions.get(request.endpoint or "")
    return bool(getattr(view, "takes_photo", False))


def limit_body():
    """The most a request body may be, by route: refused (413) before any of it is parsed."""
    if route_takes_photo():
        request.max_content_length = MAX_PHOTO_BYTES + MULTIPART_SLACK
        request.max_form_parts = 8  # the photo, and room for what a browser adds
    else:
        request.max_content_length = MAX_JSON_BYTES


def check_host():
    """Serve only the names the server is reached by: a page that rebinds its own name to
    127.0.0.1 sends that name as the Host, and is refused."""
    offered = request.headers.get("Host")
    if offered is None:  # HTTP/1.0 without a Host: no browser sends that
        return None
    settings = context.settings()
    if host_name(offered) in settings.hosts:
        return None
    if settings.lan:
        # A rebinding page can read this answer: it must not learn the machine's LAN addresses.
        return _refuse(400, f"This scorepad does not answer at {offered[:100]!r}; open the address "
                            "the server printed, or scan its QR code.")
    served = ", ".join(f"[{h}]" if ":" in h else h for h in settings.hosts)
    return _refuse(400, f"This scorepad answers only at {served}, not at {offered[:100]!r}.")


def check_origin():
    """Refuse a state-changing request sent by another site's page (a form or fetch in another
    tab needs no CORS preflight for a multipart POST): its Origin is not this server."""
    if request.method not in STATE_CHANGING:
        return None
    origin = request.headers.get("Origin")
    if origin is None:
        # Browsers send Origin on every cross-site POST; a client without one (curl, a script)
        # is not a page in a browser. Sec-Fetch-Site still tells on old browsers.
        if request.headers.get("Sec-Fetch-Site", "same-origin") in ("same-origin", "none"):
            return None
    elif origin.lower() == f"{request.scheme}://{request.host}".lower():
        return None
    return _refuse(403, f"A page from {(origin or 'another site')[:100]} may not change this scorepad; "
                        "open the scorepad itself.")


def same_code(offered: str, code: str) -> bool:
    """A join code as a person types it: any letter case, with or without its dash or spaces."""
    return hmac.compare_digest(_plain(offered), _plain(code))


def _plain(text: str) -> bytes:
    return "".join(text.split()).replace("-", "").upper().encode(errors="replace")


def host_name(host: str) -> str:
    """The name in a Host header, without the port or IPv6 brackets: "[::1]:8010" -> "::1"."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def _refuse(status: int, message: str):
    if request.path.startswith("/api/"):
        return jsonify({"error": message}), status
    return Response(message + "\n", status=status, mimetype="text/plain")


def check_join_code():
    """LAN mode: a request must carry the join code (query ?code=, cookie, or X-Join-Code).
    A client that tried too many wrong codes waits (429), whatever it sends meanwhile."""
    code = context.settings().join_code
    if not code:
        return None
    throttle = context.join_throttle()
    client = request.remote_addr
    wait = throttle.wait_s(client)
    if wait:
        return _too_many_tries(wait)
    offered = request.args.get("code") or request.cookies.get(JOIN_COOKIE) or request.headers.get("X-Join-Code")
    if offered and same_code(offered, code):
        throttle.succeeded(client)
        return None
    notice = ""
    if offered:
        tried, new = throttle.failed(client, _plain(offered).decode(errors="replace"))
        if new:  # a stale cookie sent with every request is logged once, as it is counted once
            log.warning("wrong join code from %s (%d different in the last %.0f s; the limit is %d)",
                        client, tried, throttle.window_s, throttle.limit)
        if new and tried >= throttle.limit:  # its next tries get 429 until the oldest leaves the window
            log.warning("join code tries from %s are refused for %d s", client, throttle.wait_s(client))
        notice = "That is not this scorepad's code."
    message = "This scorepad needs its join code: scan the QR code or open the URL the server printed."
    if request.path.startswith("/api/"):
        return jsonify({"error": message}), 403
    return _join_page(notice, 403)


def _too_many_tries(wait: int):
    # not logged: the try that reached the limit was, and a guesser must not fill the log
    message = f"Too many wrong join codes from this device. Try again in {wait} s."
    headers = {"Retry-After": str(wait)}
    if request.path.startswith("/api/"):
        return jsonify({"error": message}), 429, headers
    response = _join_page(message, 429)
    response.headers.update(headers)
    return response


def _join_page(notice: str, status: int) -> Response:
    """A person at the door: a page that says what to do, with a field for the code."""
    page = (current_app.config["WEB_DIR"] / "templates" / "join.html").read_text("utf-8")
    if notice:  # the server's own sentences: no input of the client's goes into the page
        page = page.replace("<!-- notice -->", f'<p class="notice" role="alert">{notice}</p>')
    response = Response(page, status=status, mimetype="text/html")
    # its one inline style block, allowed by its hash (the policy allows no other inline style)
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY.replace(
        "style-src 'self'", f"style-src 'self' {_style_hashes(page)}")
    return response


def _style_hashes(page: str) -> str:
    blocks = re.findall(r"<style>(.*?)</style>", page, re.S)
    return " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(b.encode()).digest()).decode()}'" for b in blocks)


def remember_join_code(response: Response) -> Response:
    code = context.settings().join_code
    offered = request.args.get("code")
    if code and offered and same_code(offered, code) and request.cookies.get(JOIN_COOKIE) != code:
        response.set_cookie(JOIN_COOKIE, code, max_age=JOIN_COOKIE_DAYS * 86400, httponly=True, samesite="Strict")
    return response
