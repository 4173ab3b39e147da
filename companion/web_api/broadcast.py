"""An in-process broadcaster for server-sent events: one queue per open stream."""

from __future__ import annotations

import json
import queue
import threading
from typing import Any, Iterator

_CLOSE = object()  # put on every queue at shutdown so each stream ends cleanly


class Broadcaster:
    def __init__(self, keepalive_s: float = 15.0):
        self.keepalive_s = keepalive_s
        self._lock = threading.Lock()
        self._subscribers: dict[str, set[queue.Queue]] = {}
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

    def stream(self, topic: str, first: tuple[str, Any] | None = None) -> Iterator[str]:
        """SSE text for one client: `first` at once, then every publish, with keep-alive comments.

        The subscription is made before the generator is returned, so nothing published
        between the caller's snapshot and the first read is lost.
        """
        q: queue.Queue = queue.Queue()
        with self._lock:
            self._subscribers.setdefault(topic, set()).add(q)
        return self._drain(topic, q, first)

    def _drain(self, topic: str, q: queue.Queue, first: tuple[str, Any] | None) -> Iterator[str]:
        try:
            # The retry hint makes browsers reconnect quickly after a server restart.
            yield "retry: 2000\n\n"
            if first is not None:
                yield _frame(*first)
            while not self._closed.is_set():
                try:
                    message = q.get(timeout=self.keepalive_s)
                except queue.Empty:
                    # A comment line keeps proxies from timing out and lets the server notice
                    # a client that went away (the write fails).
                    yield ": keep-alive\n\n"
                    continue
                if message is _CLOSE:
                    return
                yield message
        finally:
            with self._lock:
                subs = self._subscribers.get(topic)
                if subs is not None:
                    subs.discard(q)
                    if not subs:
                        del self._subscribers[topic]


def _frame(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
