"""Scorepad API timings: confirm, read a game (cached and after a restart), live evaluation.

    .venv/bin/python benchmarks/bench_scorepad.py [--attempts 80]

Uses Flask's test client against a throw-away SQLite file (no network, no browser); prints
medians and maxima in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from companion.server import create_app

HAND = ["1r", "2o", "5g", "9b", "10r", "7o", "3g", "8b", "6r", "Wb"]  # ten dice, a mixed roll


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=80, help="attempts to play in a 4-player game")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite3"
        client = create_app(db).test_client()
        game = client.post("/api/games", json={"players": ["A", "B", "C", "D"]}).json
        confirms = []
        for _ in range(args.attempts):
            if game["over"]:
                break
            body = {"player": game["next"], "seq": game["seq"], "dice": HAND}
            url = f"/api/games/{game['id']}/attempts"
            confirms.append(timed(lambda: game.update(client.post(url, json=body).json["game"])))  # noqa: B023 - called at once
        url = f"/api/games/{game['id']}"
        reads = [timed(lambda: client.get(url)) for _ in range(30)]
        cold = timed(lambda: create_app(db).test_client().get(url))
        evals = [timed(lambda i=i: client.post("/api/evaluate", json={"phase": i % 10 + 1, "dice": HAND}))
                 for i in range(100)]
    print(f"confirm an attempt ({len(confirms)} in a row): median {statistics.median(confirms):.1f} ms, "
          f"max {max(confirms):.1f} ms")
    print(f"GET a game of {len(confirms)} attempts, cached: median {statistics.median(reads):.1f} ms")
    print(f"GET the same game after a restart (app start + replay): {cold:.1f} ms")
    print(f"POST /api/evaluate, 10 dice, phases 1-10: median {statistics.median(evals):.2f} ms, max {max(evals):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
