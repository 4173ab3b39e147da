"""An in-process broadcaster for server-sent events: one mailbox per open stream.

Each open stream holds a server worker thread while it waits, so the number open at once
is capped (`Busy` past it) and a stream whose client went away ends within
`poll_s`: the server says so (the WSGI environ's `CLIENT_GONE`, a function), without
waiting for a keep-alive write to fail. A new stream that finds every place taken first gives back
the places of streams whose clients have left, so a page that reconnects at once is not
told "busy" by its own closed stream. Each event is encoded once and shared by every stream; a
client that falls `backlog` events behind is ended rather than buffered for (its page
reconnects and gets the current state, which is all a state event carries).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from typing import Any, Callable, Iterator

# The WSGI environ key of a function that says whether the client has closed its connection.
CLIENT_GONE = "companion.client_gone"
_CLOSE = object()  # put in every mailbox at shutdown so each stream ends cleanly
_LAGGED = object()  # the client fell too far behind: end its stream


class Busy(Exception):
    """As many streams are open as the server has threads for them."""


class Broadcaster:
    def __init__(self, keepalive_s: float = 15.0, max_streams: int = 128, poll_s: float = 1.0,
                 backlog: int = 64):
        self.keepalive_s = keepalive_s
        self.max_streams = max_streams
        self.poll_s = min(poll_s, keepalive_s)
        self.backlog = backlog
        self._lock = threading.Lock()
        self._subscribers: dict[str, set[_Mailbox]] = {}
        self._open = 0
        self._closed = threading.Event()

    def publish(self, topic: str, event: str, data: Any) -> None:
        message = _frame(event, data)
        with self._lock:
            targets = list(self._subscribers.get(topic, ()))
        for q in targets:
            q.put(message)

    def close(self) -> None:
        """End every open stream (server shutdown)."""
        self._closed.set()
        with self._lock:
            targets = [q for qs in self._subscribers.values() for q in qs]
        for q in targets:
            q.put(_CLOSE)

    def stream(self, topic: str, snapshot: Callable[[], tuple[str, Any]] | None = None,
               gone: Callable[[], bool] | None = None) -> "Stream":
        """SSE text for one client: the event `snapshot()` makes, then every publish, with
        keep-alive comments. `gone()` says the client has left.

        `snapshot` is called after subscribing, so nothing published in between is lost (a
        change may come twice: in the snapshot and as its own event). An exception from it
        ends the subscription and propagates. Raises Busy when `max_streams` are open already.
        """
        q = _Mailbox(self.backlog, gone or (lambda: False))
        with self._lock:
            if self._open >= self.max_streams:
                self._free_gone()
            if self._open >= self.max_streams:
                raise Busy(f"{self._open} live streams are open, the most this server holds")
            self._open += 1
            self._subscribers.setdefault(topic, set()).add(q)
        try:
            first = snapshot() if snapshot is not None else None
        except BaseException:
            self._unsubscribe(topic, q)
            raise
        return Stream(self._drain(q, first, q.gone), lambda: self._unsubscribe(topic, q))

    def _free_gone(self) -> None:
        """Give back at once the places of streams whose client has left (held: `_lock`); each
        such stream is told to end, rather than noticing at its next poll."""
        for topic, subs in list(self._subscribers.items()):
            for q in [q for q in subs if q.gone()]:
                subs.discard(q)
                self._open -= 1
                q.put(_CLOSE)
            if not subs:
                del self._subscribers[topic]

    def _unsubscribe(self, topic: str, q: "_Mailbox") -> None:
        with self._lock:
            subs = self._subscribers.get(topic)
            if subs is None or q not in subs:
                return
            subs.discard(q)
            self._open -= 1
            if not subs:
                del self._subscribers[topic]

    def _drain(self, q: "_Mailbox", first: tuple[str, Any] | None, gone: Callable[[], bool]) -> Iterator[bytes]:
        # The retry hint makes browsers reconnect quickly after a server restart.
        yield b"retry: 2000\n\n"
        if first is not None:
            yield _frame(*first)
        quiet_since = time.monotonic()
        while not self._closed.is_set():
            message = q.get(timeout=self.poll_s)
            if message is None:
                if gone():
                    return
                if time.monotonic() - quiet_since >= self.keepalive_s:
                    # A comment line keeps proxies from timing out an idle stream.
                    quiet_since = time.monotonic()
                    yield b": keep-alive\n\n"
                continue
            if message is _CLOSE or message is _LAGGED or gone():
                return
            quiet_since = time.monotonic()
            yield message


class _Mailbox:
    """One stream's waiting events, at most `limit`: past that the stream is told to end."""

    def __init__(self, limit: int, gone: Callable[[], bool]):
        self.gone = gone  # the client has left
        self._items: deque = deque()
        self._ready = threading.Condition()
        self._limit = limit

    def put(self, item: Any) -> None:
        with self._ready:
            if len(self._items) >= self._limit:
                self._items.clear()  # what it missed comes with the state it gets on reconnecting
                item = _LAGGED
            self._items.append(item)
            self._ready.notify()

    def get(self, timeout: float) -> Any:
        """The next item, or None when none came within `timeout` seconds."""
        with self._ready:
            if not self._items:
                self._ready.wait(timeout)
            return self._items.popleft() if self._items else None


class Stream:
    """One client's stream: iterate it for the text; `close()` (the server calls it, even
    for a stream never started) ends the subscription."""

    def __init__(self, messages: Iterator[bytes], unsubscribe: Callable[[], None]):
        self._messages = messages
        self._unsubscribe = unsubscribe

    def __iter__(self) -> "Stream":
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._messages)
        except StopIteration:
            self.close()
            raise

    def close(self) -> None:
        self._messages.close()  # type: ignore[attr-defined]
        self._unsubscribe()


def busy_stream(message: str, retry_s: int) -> Iterator[bytes]:
    """The whole stream a client gets when no more can be open: try again in `retry_s`."""
    yield f"retry: {retry_s * 1000}\n\n".encode()
    yield _frame("busy", {"error": message, "retry_after": retry_s})


def _frame(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
