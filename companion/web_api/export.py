"""A game as files to take home: the scorepad as CSV (rows as on the printed pad), and the
game's own JSON (`companion replay` reads it back). Every figure is the game's scorepad."""

from __future__ import annotations

import csv
import io
import re
import time

from companion.game import FIVE_PHASE_BONUS_PHASE, Game, Mode
from companion.rules import PHASES


def scorepad_csv(game: Game) -> str:
    """One column per player; rows Phase 1..10 with the bonuses where the pad has them, and
    Total. A phase not made is an empty cell, as on the pad."""
    players = game.scorepad().players
    rows: list[list[object]] = [["", *(p.name for p in players)]]
    for phase in PHASES:
        rows.append([f"Phase {phase.number}", *("" if p.phases[phase.number - 1] is None
                                                  else p.phases[phase.number - 1] for p in players)])
        if phase.number == FIVE_PHASE_BONUS_PHASE:
            rows.append(["Five Phase Bonus", *(p.five_phase_bonus for p in players)])
    rows.append(["First Finish Bonus", *(p.first_finish_bonus for p in players)])
    if game.mode is Mode.SOLITAIRE:
        rows.append(["Failures", *(p.failures for p in players)])
        rows.append(["Penalty", *(p.penalty for p in players)])
    rows.append(["Total", *(p.total for p in players)])
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(_safe(row) for row in rows)
    return out.getvalue()


def _safe(row: list[object]) -> list[object]:
    # A name a spreadsheet would run as a formula ("=1+1") is written as text.
    return [f"'{v}" if isinstance(v, str) and v[:1] in ("=", "+", "-", "@") else v for v in row]


def file_name(game: Game, created_at: float, ext: str) -> str:
    """phase10-Ann-Bob-2026-12-07.csv: who played, and when (ASCII letters, digits and dashes)."""
    names = "-".join(re.sub(r"[^A-Za-z0-9]+", "", p) or "player" for p in game.players)[:60]
    return f"phase10-{names}-{time.strftime('%Y-%m-%d', time.localtime(created_at))}.{ext}"
