"""`companion serve`: the scorepad web page on this machine, or on the LAN with a join code."""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import socket
import sys
from pathlib import Path

from companion.cli.common import add_reader_flags, reader_flags
from companion.store import default_db_path
from companion.web_api.settings import LOOPBACK_HOSTS, MAX_STREAMS

DEFAULT_PORT = 8010


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the scorepad web page",
        description="Serve the scorepad on http://127.0.0.1:PORT. With --lan, serve HTTPS on the local network "
        "(phones' browsers open the camera only on a secure page) with a certificate made on this machine "
        "and kept beside the database: the printed URL (and its QR code) carries a join code, and requests "
        "without it are refused.",
        epilog="examples:\n  companion serve\n  companion serve --port 8080 --db games.sqlite3\n  companion serve --lan\n"
        "  companion serve --lan --host 192.168.1.20",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    parser.add_argument("--db", type=Path, default=None,
                        help=f"SQLite database (default {default_db_path()})")
    parser.add_argument("--lan", action="store_true", help="serve on the local network with a join code and QR code")
    parser.add_argument("--host", metavar="ADDR", default=None,
                        help="with --lan, the one interface to listen on (default: all of them, 0.0.0.0); "
                        "without --lan only a loopback address")
    add_reader_flags(parser)
    parser.add_argument("--threads", type=int, default=16,
                        help="worker threads for requests (default 16); live updates have their own")
    parser.add_argument("--max-streams", type=int, default=MAX_STREAMS,
                        help="open pages getting live updates at once; more are asked to retry "
                        f"(default {MAX_STREAMS})")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from companion.runtime import Runtime, SettingsError
    from companion.server import create_app, make_server, new_join_code, shutdown

    host = args.host or ("0.0.0.0" if args.lan else "127.0.0.1")
    if not args.lan and host_name_of(host) not in LOOPBACK_HOSTS:
        print(f"companion serve: --host {host} would serve the network without a join code; add --lan",
              file=sys.stderr)
        return 2
    limit_malloc_arenas()
    try:
        runtime = Runtime.start(**reader_flags(args))  # the models load now, not on the first photo
    except SettingsError as exc:
        print(f"companion serve: {exc}", file=sys.stderr)
        return 1
    db = args.db or default_db_path()
    code = new_join_code() if args.lan else None
    served = (lan_addresses() if host in ANY_HOST else [host]) if args.lan else []
    try:
        tls = certificate(db, served) if args.lan else None
    except OSError as exc:
        print(f"companion serve: cannot keep the TLS certificate beside {db}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    app = create_app(db, join_code=code, lan_hosts=served, max_streams=args.max_streams, warm_advisor=True,
                     runtime=runtime)
    try:
        server = make_server(app, host, args.port, threads=args.threads, tls=tls)
    except OSError as exc:
        print(f"companion serve: cannot listen on {host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"Scorepad database: {db}")
    if runtime.reader is None:
        print(f"The dice reader is not available ({runtime.reader_problem}): dice are entered by hand.")
    if code and tls:
        print_join(url_host(served[0]), args.port, code, tls.cert)
    else:
        print(f"Scorepad: http://{url_host(host)}:{args.port}/ (this computer only)")
        print("Phones on the same Wi-Fi: serve with --lan instead (`make run LAN=1` or "
              "`companion serve --lan`); it prints a QR code to scan.")
    print("Press Ctrl+C to stop.", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        shutdown(app, server)
    return 0


def certificate(db: Path, served: list[str]):
    """The LAN server's certificate, kept beside the database (made at the first start)."""
    from companion.certificate import ensure_certificate

    return ensure_certificate(db.parent, [*served, *LOOPBACK_HOSTS])


def print_join(host: str, port: int, code: str, cert: Path) -> None:
    url = f"https://{host}:{port}/?code={code}"
    print(f"Scorepad on the local network: {url}")
    print("Scan to join (phones on the same Wi-Fi):")
    print(qr_text(url))
    print(f"or open https://{host}:{port}/ and type the join code {code}")
    print(f"The first visit shows the browser's warning about this machine's own certificate ({cert}): "
          "accept it once to go on.")


ANY_HOST = ("0.0.0.0", "::")


def host_name_of(host: str) -> str:
    return host.strip("[]").lower()


def url_host(host: str) -> str:
    """A host as a URL writes it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


# glibc's mallopt parameter for the number of allocator arenas (malloc.h's M_ARENA_MAX).
_M_ARENA_MAX = -8
MALLOC_ARENAS = 2


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> None:
    """Keep glibc to a few allocator arenas, before the server starts its threads.

    By default glibc gives threads that allocate at once arenas of their own (up to 8 per
    core) and hands little of them back, so photos decoded on many worker threads leave
    the server gigabytes larger; with two arenas their memory is reused. Elsewhere than
    glibc this does nothing."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(_M_ARENA_MAX, arenas)
    except (OSError, AttributeError):  # not glibc: its allocator has no such setting
        pass


def lan_address() -> str:
    """This machine's address on the LAN: the source address of a route, no packet is sent."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # UDP connect only picks a route
            return probe.getsockname()[0]
        except OSError:
            return socket.gethostbyname(socket.gethostname())


def lan_addresses() -> list[str]:
    """Every address of this machine a phone on the LAN may reach it by (the Host it sends)."""
    found = [lan_address()]
    try:
        found += socket.gethostbyname_ex(socket.gethostname())[2]
    except OSError:  # the host name does not resolve: the route's address is enough
        pass
    return list(dict.fromkeys(found))


def qr_text(data: str) -> str:
    """A QR code in half-block characters: two modules per character cell, dark on light."""
    import qrcode

    qr = qrcode.QRCode(border=2, error_correction=qrcode.constants.ERROR_CORRECT_M)
    qr.add_data(data)
    qr.make(fit=True)
    matrix = qr.get_matrix()
    if len(matrix) % 2:
        matrix.append([False] * len(matrix[0]))
    # Light background cells are drawn with block characters so the code scans on dark terminals too.
    glyph = {(False, False): "\u2588", (True, False): "\u2584", (False, True): "\u2580", (True, True): " "}
    rows = []
    for top, bottom in zip(matrix[::2], matrix[1::2]):
        rows.append("".join(glyph[(t, b)] for t, b in zip(top, bottom)))
    return "\n".join(rows)
