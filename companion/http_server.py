"""The HTTP server under the scorepad app: cheroot, over plain HTTP or TLS.

cheroot (CherryPy's server, kept on its own) speaks TLS through Python's ssl module, gives
the app the client's own address (the join-code throttle counts per client), holds idle
keep-alive connections in a selector rather than a thread, and has its body and header limits.
What it lacks is added here: its own refusals (413, 400) are JSON errors with the security
headers every other answer has, and a live stream can ask whether its client has left.
"""

from __future__ import annotations

import json
import logging
import select
import socket
import ssl
from functools import partial
from typing import Any, Callable

from cheroot import server as cheroot_server
from cheroot import wsgi
from cheroot.ssl.builtin import BuiltinSSLAdapter

from companion.certificate import TlsFiles
from companion.web_api.broadcast import CLIENT_GONE
from companion.web_api.guards import SECURITY_HEADERS

log = logging.getLogger("companion.server")

SERVER_NAME = "phase10-companion"
MAX_HEADER_BYTES = 256 * 1024
CONNECTION_TIMEOUT_S = 10  # a socket read or write, and a TLS handshake, at most this long


class JsonErrorRequest(cheroot_server.HTTPRequest):
    """A request whose refusals by the server itself (too large, not HTTP) are JSON errors
    with the security headers, as the app's own are."""

    def simple_response(self, status, msg=""):
        status = str(status)
        body = json.dumps({"error": server_error_sentence(status[:3], str(msg or ""), self.server)}).encode()
        headers = [f"{self.server.protocol} {status}", "Content-Type: application/json",
                   f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in SECURITY_HEADERS.items())]
        if status[:3] in {"413", "414"}:
            self.close_connection = True  # the rest of the body is never read
            headers.append("Connection: close")
        try:
            self.conn.wfile.write(("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + body)
        except OSError:  # the client is gone: nothing to tell it
            pass


def server_error_sentence(code: str, detail: str, server: Any) -> str:
    if code == "413":
        limit = server.max_request_body_size // (1024 * 1024)
        return f"The request is larger than {limit} MB, more than any request of this scorepad takes. Nothing was changed."
    if code in {"414", "431"}:
        return "The request's address or headers are too long. Nothing was changed."
    detail = detail.strip().rstrip(".")
    return f"The server could not read this request{f' ({detail[:200]})' if detail else ''}. Nothing was changed."


class _Connection(cheroot_server.HTTPConnection):
    RequestHandlerClass = JsonErrorRequest


class _Gateway(wsgi.Gateway_10):
    """The WSGI environ, with the scheme the socket speaks (never what a request line claims)
    and a way for a live stream to tell that its client has left."""

    def get_environ(self):
        environ = super().get_environ()
        environ["wsgi.url_scheme"] = "https" if self.req.server.ssl_adapter is not None else "http"
        environ[CLIENT_GONE] = partial(client_gone, self.req.conn.socket)
        return environ


def client_gone(sock: socket.socket) -> bool:
    """Whether the client of a connection that sent its whole request has closed it.

    A browser sends nothing more on a connection whose answer it is still reading, so anything
    readable is its close: end of stream on plain TCP, TLS's close alert on a TLS socket."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):  # closed already
        return True
    if not readable:
        return False
    if isinstance(sock, ssl.SSLSocket):
        return True
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


class _Server(wsgi.Server):
    ConnectionClass = _Connection

    def error_log(self, msg="", level=20, traceback=False):
        # A phone that has not yet accepted the certificate drops each TLS handshake: that is
        # expected, so cheroot's notes go to the log, not to the terminal.
        log.log(logging.DEBUG if level < logging.ERROR else level, "%s", msg, exc_info=traceback)


class HttpServer:
    """A server bound at once (a port in use fails here, not later) and not yet serving:
    `run()` serves until `stop()`."""

    def __init__(self, app: Callable, host: str, port: int, threads: int, *, body_limit: int,
                 idle_connections: int, tls: TlsFiles | None = None):
        self._server = _Server((host, port), app, numthreads=threads, max=threads, server_name=SERVER_NAME,
                               request_queue_size=64, timeout=CONNECTION_TIMEOUT_S, shutdown_timeout=5)
        self._server.gateway = _Gateway
        self._server.max_request_body_size = body_limit
        self._server.max_request_header_size = MAX_HEADER_BYTES
        self._server.keep_alive_conn_limit = idle_connections
        if tls is not None:
            self._server.ssl_adapter = BuiltinSSLAdapter(str(tls.cert), str(tls.key))
        self._server.prepare()

    @property
    def effective_port(self) -> int:
        return self._server.socket.getsockname()[1]

    @property
    def scheme(self) -> str:
        return "https" if self._server.ssl_adapter is not None else "http"

    def run(self) -> None:
        self._server.serve()

    def stop(self) -> None:
        """Close the listening socket and every connection, and end the worker threads."""
        self._server.stop()
