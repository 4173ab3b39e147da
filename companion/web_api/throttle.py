"""Guessing the join code: each client's wrong codes are counted, and past the limit it waits.

A client is its address (an IPv6 address by its /64 network, which one device can fill with
addresses of its own). Only a wrong code counts, once for each different wrong code in the
window: a page that repeats a stale cookie's code on every request is one wrong try, not fifty,
while every new guess counts. A client's count says nothing about another's, so the right
code is never refused because someone else guessed; a client that gives the right code
starts again from nothing.
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict
from typing import Callable


class JoinThrottle:
    def __init__(self, limit: int = 10, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic,
                 max_clients: int = 4096):
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self._max_clients = max_clients
        self._lock = threading.Lock()
        # client -> {wrong code: when it was last tried}, the least recently failing first
        self._tries: OrderedDict[str, dict[str, float]] = OrderedDict()

    def wait_s(self, address: str | None) -> int:
        """Whole seconds until this client may try a code again (0: now)."""
        client = client_key(address)
        with self._lock:
            tries = self._recent(client)
            if len(tries) < self.limit:
                return 0
            return max(1, math.ceil(min(tries.values()) + self.window_s - self.clock()))

    def failed(self, address: str | None, offered: str) -> tuple[int, bool]:
        """Count a wrong code: how many different wrong codes this client tried in the window,
        and whether this one is new among them."""
        client = client_key(address)
        code = offered[:64]  # no join code is that long: a bound on what is kept
        with self._lock:
            tries = self._recent(client)
            new = code not in tries
            tries[code] = self.clock()
            self._tries[client] = tries
            self._tries.move_to_end(client)
            while len(self._tries) > self._max_clients:
                self._tries.popitem(last=False)
            return len(tries), new

    def succeeded(self, address: str | None) -> None:
        with self._lock:
            self._tries.pop(client_key(address), None)

    def _recent(self, client: str) -> dict[str, float]:
        since = self.clock() - self.window_s
        return {code: at for code, at in self._tries.get(client, {}).items() if at > since}


def client_key(address: str | None) -> str:
    """The client a request counts for: its IPv4 address, or its IPv6 address's /64 network."""
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return address or "?"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip.ipv4_mapped or ip) if isinstance(ip, ipaddress.IPv6Address) else str(ip)
