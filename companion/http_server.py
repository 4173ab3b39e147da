"""The HTTP server under the scorepad app: cheroot, over plain HTTP or TLS.

cheroot (CherryPy's server, kept on its own) speaks TLS through Python's ssl module, gives
the app the client's own address (the join-code throttle counts per client), holds idle
keep-alive connections in a selector rather than a thread, and has its body and header limits.
What it lacks is added here: its own refusals (413, 400) are JSON errors with the security
headers every other answer has; a live stream can ask whether its client has left; each TLS
handshake runs on a thread of its own, not on the one that accepts (a client that connects
and says nothing would hold up every other one); and a plain http:// request to the HTTPS
port is sent to its https:// address rather than answered with bytes a browser cannot read.
"""

from __future__ import annotations

import json
import logging
import re
import select
import socket
import ssl
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, Callable

from cheroot import connections as cheroot_connections
from cheroot import errors as cheroot_errors
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
HANDSHAKE_THREADS = 8  # TLS handshakes under way at once; more wait for a thread
TLS_RECORD = 0x16  # the first byte of every TLS handshake (a ClientHello); HTTP starts with a letter
PLAIN_HEAD_BYTES = 8192  # of a plain request to the HTTPS port, only the request line and Host are read
HOST_HEADER = re.compile(r"^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$")
TARGET = re.compile(r"^/[\x21-\x7e]*$")


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


class _HandshakingConnections(cheroot_connections.ConnectionManager):
    """cheroot's connection manager, with each new TLS connection's handshake (or plain-HTTP
    answer) on a handshake thread: the accepting thread only accepts."""

    def __init__(self, server):
        super().__init__(server)
        self._handshakes = ThreadPoolExecutor(HANDSHAKE_THREADS, thread_name_prefix="tls-handshake")
        self._pending: set[socket.socket] = set()  # sockets whose handshake is under way, woken at close

    def _from_server_socket(self, server_socket):
        if self.server.ssl_adapter is None:
            return super()._from_server_socket(server_socket)  # type: ignore[misc]  # not in cheroot's stubs
        try:
            sock, addr = server_socket.accept()
        except OSError:  # the client left before it was accepted, or the server is stopping
            return None
        cheroot_connections.prevent_socket_inheritance(sock)
        sock.settimeout(self.server.timeout)
        try:
            self._handshakes.submit(self._handshake, sock, addr)
        except RuntimeError:  # stopping: no more handshakes
            sock.close()
        return None

    def _handshake(self, sock: socket.socket, addr: Any) -> None:
        server = self.server
        self._pending.add(sock)
        try:
            first = sock.recv(1, socket.MSG_PEEK)
            if first != bytes([TLS_RECORD]):
                if first:
                    answer_plain_http(sock, server.protocol)
                sock.close()
                return
            tls, ssl_env = server.ssl_adapter.wrap(sock)
        except (OSError, cheroot_errors.FatalSSLAlert, cheroot_errors.NoSSLError) as exc:
            server.error_log(f"Client {addr!s}: no TLS connection ({exc!s})")
            sock.close()
            return
        finally:
            self._pending.discard(sock)
        tls.settimeout(server.timeout)
        conn = server.ConnectionClass(server, tls, server.ssl_adapter.makefile)
        conn.remote_addr, conn.remote_port = addr[0], addr[1]
        conn.ssl_env = ssl_env
        if server.ready:
            server.process_conn(conn)
        else:
            conn.close()

    def close(self):
        self._handshakes.shutdown(wait=False, cancel_futures=True)
        for sock in list(self._pending):  # a silent client's handshake ends now, not at its timeout
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        super().close()


def answer_plain_http(sock: socket.socket, protocol: str) -> None:
    """Answer a plain HTTP request sent to the HTTPS port: a GET or HEAD is redirected to the
    same address over https:// (temporary: the same port may serve plain HTTP another day);
    anything else is told in plain text, and nothing is done."""
    head = b""
    while b"\r\n\r\n" not in head and len(head) < PLAIN_HEAD_BYTES:
        chunk = sock.recv(PLAIN_HEAD_BYTES - len(head))
        if not chunk:
            break
        head += chunk
    lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    method, _, rest = lines[0].partition(" ")
    target = rest.rpartition(" ")[0]
    host = next((line.split(":", 1)[1].strip() for line in lines[1:] if line.lower().startswith("host:")), "")
    if method in {"GET", "HEAD"} and HOST_HEADER.match(host) and TARGET.match(target):
        location = f"https://{host}{target}"
        status, extra = "307 Temporary Redirect", [f"Location: {location}"]
        text = f"This scorepad speaks HTTPS only: open {location}\n"
    else:
        status, extra = "400 Bad Request", []
        text = ("This scorepad speaks HTTPS only: open its address with https:// (the link or QR code "
                "the server printed). Nothing was changed.\n")
    body = b"" if method == "HEAD" else text.encode()
    headers = [f"{protocol} {status}", "Content-Type: text/plain; charset=utf-8",
               f"Content-Length: {len(text.encode())}", "Connection: close", *extra,
               *(f"{k}: {v}" for k, v in SECURITY_HEADERS.items())]
    sock.sendall(("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + body)


class _Server(wsgi.Server):
    ConnectionClass = _Connection

    def prepare(self):
        super().prepare()
        # the manager cheroot made, replaced before it ever selects: the new one takes its place
        made: Any = getattr(self, "_connections")  # noqa: B009 - cheroot's stubs do not type it
        made._selector.close()
        setattr(self, "_connections", _HandshakingConnections(self))  # noqa: B010

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
