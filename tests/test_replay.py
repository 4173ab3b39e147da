"""`companion replay`: logs in, one scorepad per line out; illegal logs exit 2 naming the turn."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from companion.cli import main

BEST = {
    1: "10g 10r 10o 10b 10g 10o Wr Wb Wg Wr",
    2: "10g 10r 10o 10b 9r 8r Wr Wb Wg Wr",
    3: "10g 10r 10o 10b 10g 9g Wr Wb Wg Wr",
    4: "10g 9b 8b 7o 6b 5b 4g Wb Wg Wr",
    5: "10g 9b 8b 7o 6b 5b 4g 3g Wg Wr",
    6: "10g 9b 8b 7o 6b 5b 4g 3g 2r Wr",
    7: "10g 10r 10o 10b 10g 10o Wr Wb Wg Wr",
    8: "9o 8o 10o 7o 8o 10o 4o Wr Wg Wr",
    9: "10g 10r 10o 10b 10g 10o Wr Wb Wg Wr",
    10: "10g 10r 10o 10b 10g 5b 4g 4o 4b Wr",
}
SCORES = [60, 57, 59, 49, 52, 54, 60, 56, 60, 62]
MISS = "1b 1r 3r 3b 5o 5r 7b 7g 9r 9g"


def turn(player: str, dice: str) -> dict:
    return {"player": player, "dice": dice.split()}


def duel_log() -> dict:
    """Ann makes every phase, Bob misses every normal turn, then chains two phases and misses."""
    turns = []
    for phase in range(1, 11):
        turns.append(turn("Ann", BEST[phase]))
        if phase < 10:
            turns.append(turn("Bob", MISS))
    turns += [turn("Bob", BEST[1]), turn("Bob", BEST[2]), turn("Bob", MISS)]
    return {"players": ["Ann", "Bob"], "mode": "standard", "turns": turns}


DUEL_PAD = {
    "players": [
        {"name": "Ann", "phase": 11, "phases": SCORES, "five_phase_bonus": 40, "first_finish_bonus": 40,
         "failures": 0, "penalty": 0, "total": 649},
        {"name": "Bob", "phase": 3, "phases": [60, 57] + [None] * 8, "five_phase_bonus": 0,
         "first_finish_bonus": 0, "failures": 10, "penalty": 0, "total": 117},
    ],
    "over": True,
    "winners": ["Ann"],
    "next": None,
}


def write(tmp_path, name: str, data) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def replay(capsys, *paths: str) -> tuple[int, list[dict], list[str]]:
    status = main(["replay", *paths])
    out, err = capsys.readouterr()
    return status, [json.loads(line) for line in out.splitlines()], err.splitlines()


def test_a_finished_game_prints_its_scorepad(tmp_path, capsys):
    status, pads, err = replay(capsys, write(tmp_path, "duel.json", duel_log()))
    assert (status, err) == (0, [])
    assert pads == [DUEL_PAD]


def test_one_line_per_log_in_order_including_unfinished_and_solitaire_games(tmp_path, capsys):
    solo = {"players": ["Sol"], "mode": "solitaire", "turns": [turn("Sol", MISS), turn("Sol", BEST[1])]}
    opening = {"players": ["Ann", "Bob"], "turns": [turn("Ann", BEST[1])]}
    status, pads, _ = replay(capsys, write(tmp_path, "a.json", solo), write(tmp_path, "b.json", opening),
                             write(tmp_path, "c.json", duel_log()))
    assert status == 0 and len(pads) == 3
    sol = pads[0]["players"][0]
    assert (sol["phase"], sol["failures"], sol["penalty"], sol["total"]) == (2, 1, -5, 55)
    assert pads[0]["over"] is False and pads[0]["next"] == "Sol" and pads[0]["winners"] == []
    assert pads[1]["next"] == "Bob" and pads[1]["players"][0]["phases"][0] == 60
    assert pads[2] == DUEL_PAD


def test_the_best_solitaire_game_replays_to_649(tmp_path, capsys):
    log = {"players": ["Sol"], "mode": "solitaire", "turns": [turn("Sol", BEST[p]) for p in range(1, 11)]}
    _, pads, _ = replay(capsys, write(tmp_path, "best.json", log))
    assert pads[0]["players"][0]["total"] == 649 and pads[0]["over"] is True


def illegal_logs() -> list[tuple[str, object, str]]:
    duel = duel_log()
    after_end = dict(duel, turns=duel["turns"] + [turn("Ann", BEST[1])])
    out_of_turn = dict(duel, turns=[turn("Ann", BEST[1]), turn("Ann", BEST[2])])
    unknown = dict(duel, turns=[turn("Ann", BEST[1]), turn("Zed", MISS)])
    bad_token = dict(duel, turns=[turn("Ann", BEST[1]), turn("Bob", "1b 1r 3r 3b 5o 5r 7b 7g 9r 9x")])
    return [
        ("over", after_end, "turns[22]: the game is over"),
        ("order", out_of_turn, "turns[1]: it is Bob's turn, not Ann's"),
        ("unknown", unknown, "turns[1]: unknown player 'Zed'"),
        ("token", bad_token, "turns[1]: bad dice token '9x'"),
        ("json", '{"players": ["Ann"], "turns": [', "not valid JSON"),
        ("players", {"players": [], "turns": []}, "at least 1 player"),
        ("twice", {"players": ["Ann", " ann"], "turns": []}, "player name 'ann' is given twice"),
    ]


@pytest.mark.parametrize("name, log, message", illegal_logs(), ids=[c[0] for c in illegal_logs()])
def test_an_illegal_log_exits_2_with_one_line_naming_file_and_turn(tmp_path, capsys, name, log, message):
    good = write(tmp_path, "good.json", duel_log())
    bad = write(tmp_path, f"{name}.json", log)
    later = write(tmp_path, "later.json", duel_log())
    status, pads, err = replay(capsys, good, bad, later)
    assert status == 2
    assert pads == [DUEL_PAD]  # the logs before the bad one are printed, the replay stops there
    assert len(err) == 1 and err[0].startswith(f"companion replay: {bad}: ") and message in err[0]


def test_unreadable_files_exit_2(tmp_path, capsys):
    missing = str(tmp_path / "missing.json")
    status, _, err = replay(capsys, missing)
    assert status == 2 and len(err) == 1 and err[0].startswith(f"companion replay: {missing}: cannot read")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"players": ["Ren\xe9"]}')
    status, _, err = replay(capsys, str(latin))
    assert status == 2 and err == [f"companion replay: {latin}: not UTF-8 text"]


def test_the_command_reads_stdin_and_shows_examples():
    log = json.dumps(duel_log())
    done = subprocess.run([sys.executable, "-m", "companion", "replay", "-"], input=log,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout) == DUEL_PAD
    helped = subprocess.run([sys.executable, "-m", "companion", "replay", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "companion replay game.json" in helped.stdout


def test_a_log_with_a_number_too_long_to_read_exits_2_with_one_line(tmp_path, capsys):
    path = write(tmp_path, "long.json", '{"players": ["Ann"], "turns": [], "seed": ' + "7" * 5001 + "}")
    status, pads, err = replay(capsys, path)
    assert status == 2 and pads == [] and len(err) == 1
    assert err[0].startswith(f"companion replay: {path}: not a game log") and "digits" in err[0]
