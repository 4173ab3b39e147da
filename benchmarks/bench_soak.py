"""Soak: a table of phones against `companion serve` on 127.0.0.1 for a minute.

    .venv/bin/python benchmarks/bench_soak.py [--seconds 60] [--phones 8] [--streams 100] [--photos 30]

Starts the real server (a subprocess on a free loopback port, a throw-away database) and
for --seconds lets --phones phones poll the game, evaluate dice, ask for advice, race each
other to confirm and undo attempts and upload --photos photos (the sample photos, and
every tenth a 12 KB PNG of 9999x9999 px that must be refused), while --streams live-update
clients stay connected, a third of them reloading every second or two. Bounded in time
and requests, it stops by itself and prints p50/p95 per route, errors (any answer other
than the ones the route may give), live updates missed by a connected client, and the
server's resident memory at start, peak and end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from struct import pack

from companion.dice import standard_set

REPO = Path(__file__).resolve().parent.parent
MAX_REQUESTS = 50_000  # a bound whatever the machine's speed
DELIVERY_S = 1.0  # a live update must have reached every connected client within this


def bomb_png(width: int = 9999, height: int = 9999) -> bytes:
    """The 12 KB 1-bit PNG that decoded whole costs over a gigabyte."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return pack(">I", len(data)) + kind + data + pack(">I", zlib.crc32(kind + data))

    row = b"\0" * (1 + (width + 7) // 8)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(row * height, 9)) + chunk(b"IEND", b""))


def roll() -> list[str]:
    """Ten dice as the standard set can show them."""
    return [random.choice(die.faces).token for die in standard_set().dice]


@dataclass
class Figures:
    lock: threading.Lock = field(default_factory=threading.Lock)
    times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    requests: int = 0
    confirms: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    undos: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    photos: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    changes: list[tuple[float, float, float]] = field(default_factory=list)  # (sent, done, updated_at)
    refused_streams: int = 0
    streams_open: int = 0
    open_samples: list[int] = field(default_factory=list)

    def note(self, route: str, ms: float) -> None:
        with self.lock:
            self.times[route].append(ms)
            self.requests += 1

    def error(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)


class Phone:
    """One phone: a kept-alive connection, the game it plays, the answers it may get."""

    def __init__(self, port: int, game_id: str, figures: Figures):
        self.port, self.game_id, self.figures = port, game_id, figures
        self.conn: http.client.HTTPConnection | None = None

    def call(self, method: str, path: str, route: str, ok: tuple[int, ...], body: bytes | None = None,
             content_type: str = "application/json") -> tuple[int, dict | None]:
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            start = time.perf_counter()
            try:
                self.conn.request(method, path, body, {"Content-Type": content_type} if body is not None else {})
                response = self.conn.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                self.conn.close()
                self.conn = None
                if attempt == 1:  # the server closed an idle kept-alive connection: once more
                    continue
                self.figures.error(f"{route}: {type(exc).__name__}")
                return 0, None
            except OSError as exc:
                self.conn.close()
                self.conn = None
                self.figures.error(f"{route}: {type(exc).__name__} {exc}")
                return 0, None
            self.figures.note(route, (time.perf_counter() - start) * 1000)
            if response.status not in ok:
                self.figures.error(f"{route}: {response.status} {data[:120]!r}")
            try:
                return response.status, json.loads(data) if data else None
            except ValueError:
                return response.status, None
        return 0, None

    def json(self, method: str, path: str, route: str, ok: tuple[int, ...], body=None):
        return self.call(method, path, route, ok, None if body is None else json.dumps(body).encode())


def phone_loop(phone: Phone, deadline: float, photos: "PhotoQueue", rng: random.Random) -> None:
    figures, gid = phone.figures, phone.game_id
    while time.monotonic() < deadline and figures.requests < MAX_REQUESTS:
        _, state = phone.json("GET", f"/api/games/{gid}", "GET /api/games/{id}", (200,))
        if state is None:
            time.sleep(0.2)
            continue
        body = {"phase": state["phase"] or 1, "dice": roll()}
        phone.json("POST", "/api/evaluate", "POST /api/evaluate", (200,), body)
        if rng.random() < 0.3:
            phone.json("GET", "/api/info", "GET /api/info", (200,))
        if rng.random() < 0.1:
            body = {"phase": state["phase"] or 1, "dice": roll(), "rolls_left": rng.choice((1, 2))}
            phone.json("POST", "/api/advise", "POST /api/advise", (200,), body)
        if rng.random() < 0.25 and not state["over"]:
            # Every phone at the table may confirm the turn it sees: the first wins, the rest get 409.
            sent = time.monotonic()
            status, answer = phone.json("POST", f"/api/games/{gid}/attempts", "POST /api/games/{id}/attempts",
                                        (201, 409), {"player": state["next"], "seq": state["seq"], "dice": roll()})
            with figures.lock:
                figures.confirms[status] += 1
                if status == 201:
                    figures.changes.append((sent, time.monotonic(), answer["game"]["updated_at"]))
        if rng.random() < 0.12 and state["seq"] > 0:
            sent = time.monotonic()
            status, answer = phone.json("DELETE", f"/api/games/{gid}/attempts/{state['seq'] - 1}",
                                        "DELETE /api/games/{id}/attempts/{seq}", (200, 409))
            with figures.lock:
                figures.undos[status] += 1
                if status == 200:
                    figures.changes.append((sent, time.monotonic(), answer["game"]["updated_at"]))
        item = photos.take()
        if item is not None:
            name, data, ok = item
            status, _ = phone.call("POST", f"/api/games/{gid}/photos", "POST /api/games/{id}/photos", ok,
                                   *multipart(name, data))
            with figures.lock:
                figures.photos[status] += 1
        time.sleep(rng.uniform(0.1, 0.3))  # a phone is a person: they look, then tap


def multipart(name: str, data: bytes) -> tuple[bytes, str]:
    boundary = "soakboundary7d91"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"{name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


class PhotoQueue:
    """`count` uploads spread evenly over the run; every tenth is the PNG bomb (must get 422)."""

    def __init__(self, count: int, seconds: float, start: float):
        samples = sorted(p for p in (REPO / "sample_images").iterdir() if p.suffix.lower() in {".jpg", ".png", ".webp"})
        self.items = []
        for i in range(count):
            if i % 10 == 4:
                self.items.append(("bomb.png", bomb_png(), (422,)))
            else:
                path = samples[i % len(samples)]
                self.items.append((path.name, path.read_bytes(), (201,)))
        self.interval = seconds / max(1, count)
        self.start = start
        self.lock = threading.Lock()
        self.taken = 0

    def take(self):
        with self.lock:
            if self.taken >= len(self.items) or time.monotonic() < self.start + self.taken * self.interval:
                return None
            self.taken += 1
            return self.items[self.taken - 1]


class StreamClient:
    """One page's live updates over HTTP/1.1 (chunked), reconnecting now and then like a page reload."""

    def __init__(self, port: int, game_id: str, figures: Figures, reloads: bool, rng: random.Random):
        self.port, self.game_id, self.figures, self.reloads, self.rng = port, game_id, figures, reloads, rng
        self.sessions: list[tuple[float, float, set[float]]] = []  # (first event, closed, updated_at seen)
        self.first_event_ms: list[float] = []

    def run(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            lifetime = self.rng.uniform(0.5, 2.0) if self.reloads else self.rng.uniform(10, 40)
            self.session(min(deadline, time.monotonic() + lifetime))

    def session(self, until: float) -> None:
        start = time.perf_counter()
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        except OSError as exc:
            self.figures.error(f"stream connect: {exc}")
            time.sleep(1)
            return
        seen: set[float] = set()
        first = None
        try:
            sock.sendall(f"GET /api/games/{self.game_id}/events HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                         "Accept: text/event-stream\r\n\r\n".encode())
            reader = ChunkedReader(sock)
            status, headers = reader.head()
            if status == 503:
                with self.figures.lock:
                    self.figures.refused_streams += 1
                time.sleep(float(headers.get("retry-after", "1")))
                return
            if status != 200:
                self.figures.error(f"stream: {status}")
                return
            sock.settimeout(0.25)
            while time.monotonic() < until:
                event = reader.event()
                if event is None:
                    continue
                kind, data = event
                if kind == "busy":  # as many streams open as the server holds: as a browser does
                    with self.figures.lock:
                        self.figures.refused_streams += 1
                    time.sleep(data["retry_after"])
                    return
                if kind == "state":
                    if first is None:
                        first = time.monotonic()
                        self.first_event_ms.append((time.perf_counter() - start) * 1000)
                        with self.figures.lock:
                            self.figures.streams_open += 1
                    seen.add(data["updated_at"])
        except (OSError, ValueError) as exc:
            self.figures.error(f"stream: {type(exc).__name__} {exc}")
        finally:
            sock.close()
            if first is not None:
                with self.figures.lock:
                    self.figures.streams_open -= 1
                self.sessions.append((first, time.monotonic(), seen))


class ChunkedReader:
    """Just enough HTTP/1.1 to read a chunked SSE answer from a socket."""

    def __init__(self, sock: socket.socket):
        self.sock, self.raw, self.text = sock, b"", ""
        self.chunked = False

    def _recv(self) -> bool:
        try:
            data = self.sock.recv(65536)
        except TimeoutError:
            return False
        if not data:
            raise ValueError("the server closed the stream")
        self.raw += data
        return True

    def head(self) -> tuple[int, dict[str, str]]:
        while b"\r\n\r\n" not in self.raw:
            self._recv()
        head, self.raw = self.raw.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}
        self.chunked = headers.get("transfer-encoding", "").lower() == "chunked"
        return status, headers

    def _decode(self) -> None:
        while True:
            if not self.chunked:
                self.text, self.raw = self.text + self.raw.decode(), b""
                return
            if b"\r\n" not in self.raw:
                return
            size_line, rest = self.raw.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            if len(rest) < size + 2:
                return
            self.text += rest[:size].decode()
            self.raw = rest[size + 2:]

    def event(self) -> tuple[str, dict] | None:
        """The next event (kind, data); None when none arrived in the socket's timeout."""
        while "\n\n" not in self.text:
            if not self._recv():
                return None
            self._decode()
        block, self.text = self.text.split("\n\n", 1)
        kind, data = None, None
        for line in block.split("\n"):
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        return (kind, data) if kind else None


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def start_server(db: Path) -> tuple[subprocess.Popen, int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "companion", "serve", "--port", str(port), "--db", str(db)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    for line in process.stdout:
        if "Ctrl+C" in line:
            break
    else:
        raise SystemExit("the server did not start")
    threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()  # keep the pipe drained
    return process, port


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def missed_updates(clients: list[StreamClient], changes: list[tuple[float, float, float]]) -> tuple[int, int]:
    """(missed, owed): each change made while a client was connected, from before it was sent
    until DELIVERY_S after it was answered, must have reached that client."""
    missed = owed = 0
    for client in clients:
        for first, closed, seen in client.sessions:
            for sent, done, updated_at in changes:
                if first < sent and done + DELIVERY_S < closed:
                    owed += 1
                    missed += updated_at not in seen
    return missed, owed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--phones", type=int, default=8)
    parser.add_argument("--streams", type=int, default=100, help="live-update clients")
    parser.add_argument("--photos", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    random.seed(args.seed)
    figures = Figures()
    with tempfile.TemporaryDirectory() as tmp:
        process, port = start_server(Path(tmp) / "soak.sqlite3")
        try:
            setup = Phone(port, "", figures)
            players = {"players": ["Ann", "Bob", "Cy", "Di"]}
            _, game = setup.json("POST", "/api/games", "POST /api/games", (201,), players)
            gid = game["id"]
            rss = [rss_mb(process.pid)]
            rss_start = rss[0]
            clients = [StreamClient(port, gid, figures, reloads=i % 3 == 0, rng=random.Random(args.seed * 1000 + i))
                       for i in range(args.streams)]
            warm_until = time.monotonic() + 3.0  # the streams open first
            threads = [threading.Thread(target=c.run, args=(warm_until + args.seconds,), daemon=True) for c in clients]
            for t in threads:
                t.start()
            while time.monotonic() < warm_until:
                time.sleep(0.1)
            deadline = time.monotonic() + args.seconds
            photos = PhotoQueue(args.photos, args.seconds * 0.9, time.monotonic())
            phones = [threading.Thread(target=phone_loop, daemon=True,
                                       args=(Phone(port, gid, figures), deadline, photos, random.Random(args.seed + i)))
                      for i in range(args.phones)]
            for t in phones:
                t.start()
            while any(t.is_alive() for t in phones):
                rss.append(rss_mb(process.pid))
                figures.open_samples.append(figures.streams_open)
                time.sleep(0.2)
            for t in threads:
                t.join(timeout=15)
            time.sleep(2.0)  # idle: what the server gives back
            rss_end = rss_mb(process.pid)
            _, final = setup.json("GET", f"/api/games/{gid}", "GET /api/games/{id}", (200,))
        finally:
            process.send_signal(2)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
    report(args, figures, clients, final, rss_start, max(rss), rss_end)
    return 0


def report(args, figures: Figures, clients: list[StreamClient], final: dict, rss_start: float, rss_peak: float,
           rss_end: float) -> None:
    print(f"soak: {args.phones} phones for {args.seconds:.0f} s, {args.streams} live-update clients, "
          f"{sum(figures.photos.values())} photo uploads; {figures.requests} requests")
    print(f"{'route':42} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for route, times in sorted(figures.times.items()):
        print(f"{route:42} {len(times):6d} {statistics.median(times):8.1f} {percentile(times, 0.95):8.1f} "
              f"{max(times):8.1f}")
    first = [ms for c in clients for ms in c.first_event_ms]
    if first:
        print(f"{'GET /api/games/{id}/events (first event)':42} {len(first):6d} {statistics.median(first):8.1f} "
              f"{percentile(first, 0.95):8.1f} {max(first):8.1f}")
    opened = figures.open_samples or [0]
    print(f"live streams open during the run: min {min(opened)}, median {statistics.median(opened):.0f}, "
          f"max {max(opened)}; sessions {sum(len(c.sessions) for c in clients)}, refused (busy, retried) "
          f"{figures.refused_streams}")
    missed, owed = missed_updates(clients, figures.changes)
    print(f"live updates: {missed} missed of {owed} owed to connected clients")
    won, undone = figures.confirms.get(201, 0), figures.undos.get(200, 0)
    print(f"confirms: {won} recorded, {figures.confirms.get(409, 0)} lost the race (409); undos: {undone} done, "
          f"{figures.undos.get(409, 0)} refused (409); attempts now {final['seq']} = {won} - {undone}: "
          f"{'yes' if final['seq'] == won - undone else 'NO'}")
    print(f"photos: {dict(sorted(figures.photos.items()))} (status: count; the PNG bomb must get 422)")
    print(f"errors: {len(figures.errors)}")
    for text in figures.errors[:10]:
        print(f"  {text}")
    print(f"server RSS: start {rss_start:.0f} MB, peak {rss_peak:.0f} MB, end {rss_end:.0f} MB")


if __name__ == "__main__":
    sys.exit(main())
