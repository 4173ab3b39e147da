"""`companion score`: single rolls, the --jsonl stream, and bad input."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from companion.cli import main
from companion.cli.score import score_stream
from companion.dice import parse_faces
from companion.rules import HouseRules, evaluate


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(["score", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_single_roll_prints_the_rules_example(capsys):
    status, out, err = run_cli(capsys, "--phase", "1", "8r", "8b", "8g", "10o", "Wr", "Wg")
    assert status == 0 and err == ""
    assert out.count("\n") == 1
    assert json.loads(out) == {
        "phase": 1,
        "complete": True,
        "score": 34,
        "groups": [
            {"kind": "set", "dice": [0, 1, 2], "stands_for": [8, 8, 8]},
            {"kind": "set", "dice": [3, 4, 5], "stands_for": [10, 10, 10]},
        ],
    }


def test_colour_group_prints_null_for_wilds(capsys):
    status, out, _ = run_cli(capsys, "--phase", "8", "2o", "4o", "Wo", "5o", "8o", "9o", "10o")
    assert status == 0
    assert json.loads(out)["groups"] == [
        {"kind": "color", "dice": [0, 1, 2, 3, 4, 5, 6], "stands_for": [2, 4, None, 5, 8, 9, 10]}
    ]


def test_missed_phase_prints_null_score(capsys):
    status, out, _ = run_cli(capsys, "--phase", "6", "1r", "2r")
    assert status == 0
    assert json.loads(out) == {"phase": 6, "complete": False, "score": None, "groups": []}


def test_die_prefixes_and_colour_names_are_accepted(capsys):
    status, out, _ = run_cli(capsys, "--phase", "2", "H1:5r", "H2:6r", "L1:Wred", "3blue", "4g", "5G", "5b")
    assert status == 0
    assert json.loads(out)["score"] == 15 + 3 + 4 + 6


def test_house_rule_flag(capsys):
    roll = ["5r", "Wb", "Wg", "Wo", "Wr", "Wg"]
    assert json.loads(run_cli(capsys, "--phase", "1", *roll)[1])["score"] == 5
    status, out, _ = run_cli(capsys, "--phase", "1", "--natural-in-every-group", *roll)
    assert status == 0 and json.loads(out)["complete"] is False


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--phase", "11", "5r"], "phase must be a whole number 1..10, got 11"),
        (["--phase", "x", "5r"], "got 'x'"),
        (["--phase", "1", "5x"], "bad dice token '5x'"),
        (["--phase", "1", "H3:7b"], "die H3 has no face 7b"),
        (["--phase", "1", "H1:5r", "H1:6o"], "die H1 is named more than once"),
        (["--phase", "1"], "a roll has 1 to 10 dice, got 0"),
        (["--phase", "1", *["5r"] * 11], "a roll has 1 to 10 dice, got 11"),
        (["5r", "6r"], "give --phase N"),
        (["--jsonl", "--phase", "1"], "--jsonl reads the phase and dice from stdin"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_status_2(capsys, argv, message):
    status, out, err = run_cli(capsys, *argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def stream(text: str | bytes, rules: HouseRules = HouseRules()) -> list[dict]:
    out = io.StringIO()
    lines = io.BytesIO(text).readlines() if isinstance(text, bytes) else io.StringIO(text).readlines()
    score_stream(lines, out, rules)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_jsonl_answers_each_line_in_order_and_skips_blank_lines():
    rolls = [(1, "8r 8b 8g 10o Wr Wg"), (8, "2o 4o Wr 5o 8o 9o 10o"), (4, "1r 2b 3g 4o 5r 6o Wb")]
    text = "\n".join(json.dumps({"phase": p, "dice": r.split()}) for p, r in rolls)
    results = stream(text.replace("\n", "\n\n   \n", 1) + "\n")
    expected = [evaluate(p, parse_faces(r.split())).to_json() for p, r in rolls]
    assert results == expected
    assert [r["score"] for r in results] == [34, None, 21]


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "line 1: not JSON"),
        ("[1, 2]", "line 1: expected an object"),
        ('{"dice": ["5r"]}', "line 1: missing 'phase'"),
        ('{"phase": 1}', "line 1: missing 'dice'"),
        ('{"phase": 0, "dice": ["5r"]}', "line 1: phase must be a whole number 1..10, got 0"),
        ('{"phase": true, "dice": ["5r"]}', "line 1: phase must be a whole number 1..10, got True"),
        ('{"phase": "1", "dice": ["5r"]}', "line 1: phase must be a whole number 1..10, got '1'"),
        ('{"phase": 1, "dice": "5r 6r"}', "line 1: dice must be a list of token strings"),
        ('{"phase": 1, "dice": [5]}', "line 1: dice must be a list of token strings"),
        ('{"phase": 1, "dice": ["5r", "Wz"]}', "line 1: bad dice token 'Wz'"),
        ('{"phase": 1, "dice": []}', "line 1: a roll has 1 to 10 dice, got 0"),
        ('{"phase": 1, "dice": ["5r"], "phse": 2}', "line 1: unknown key 'phse'"),
        ('{"phase": 1, "dice": ["5r"], "natural_in_every_group": 1}', "natural_in_every_group must be true or false"),
        ("[" * 100000, "line 1: not JSON"),
    ],
)
def test_jsonl_bad_line_gives_an_error_object_and_the_stream_goes_on(line, message):
    good = json.dumps({"phase": 9, "dice": ["7r", "7b", "7g", "Wr", "7o", "3b", "3r"]})
    results = stream(f"{line}\n{good}\n")
    assert len(results) == 2
    assert list(results[0]) == ["error"] and message in results[0]["error"]
    assert results[1]["score"] == 4 * 7 + 2 * 3


def test_jsonl_line_that_is_not_utf8():
    results = stream(b'\xff\xfe\n{"phase": 1, "dice": ["5r"]}\n')
    assert results == [{"error": "line 1: not UTF-8 text"}, {"phase": 1, "complete": False, "score": None, "groups": []}]


def test_jsonl_house_rule_per_line_and_from_the_flag():
    wilds = {"phase": 8, "dice": ["Wr"] * 7}
    strict_line = dict(wilds, natural_in_every_group=True)
    text = f"{json.dumps(wilds)}\n{json.dumps(strict_line)}\n"
    assert [r["complete"] for r in stream(text)] == [True, False]
    assert [r["complete"] for r in stream(text, HouseRules(natural_in_every_group=True))] == [False, False]


def test_real_process_reads_stdin_and_exits_with_status():
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "score", "--jsonl"],
        input='{"phase": 1, "dice": ["6r", "Wb", "6g", "7o", "7r", "7g"]}\nbad\n',
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert json.loads(lines[0])["score"] == 33 and "error" in json.loads(lines[1])
    bad = subprocess.run(
        [sys.executable, "-m", "companion", "score", "--phase", "3", "7q"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.count("\n") == 1


def test_help_shows_examples(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["score", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "companion score --phase 1 8r 8b 8g 10o Wr Wg" in text and "--jsonl" in text
