"""The command line's file arguments: nothing it is given blocks it or exhausts the machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_replay_refuses_a_fifo_with_no_writer_at_once(tmp_path):
    fifo = tmp_path / "game.json"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "companion", "replay", str(fifo)], capture_output=True, text=True,
                          timeout=60)  # it used to wait for a writer until killed
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == f"companion replay: {fifo}: cannot read: it is a FIFO, not a file"


def test_replay_refuses_a_folder_with_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "companion", "replay", str(tmp_path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.strip() == f"companion replay: {tmp_path}: cannot read: it is a folder, not a file"


# --- companion learn: caps checked before any photo is read ---------------------------------------

BOX = {"value": 7, "color": "red", "box": [10, 10, 60, 60]}


def learn(tmp_path, capsys, text: str) -> tuple[int, list[str]]:
    from companion.cli import main

    labels = tmp_path / "labels.jsonl"
    labels.write_text(text, "utf-8")
    status = main(["learn", str(tmp_path / "set.profile"), str(labels)])
    err = capsys.readouterr().err.strip().splitlines()
    assert not (tmp_path / "set.profile").exists()  # nothing learnt, nothing written
    return status, err


def test_learn_refuses_a_photo_of_more_dice_than_the_set_has(tmp_path, capsys):
    from companion.dice import MAX_DICE

    good = json.dumps({"image": "a.jpg", "dice": [BOX]})
    huge = json.dumps({"image": "b.jpg", "dice": [BOX] * 5000})  # took 96 s and 18 GB
    status, err = learn(tmp_path, capsys, f"{good}\n{huge}\n")
    assert status == 2 and len(err) == 1
    assert "line 2: 5000 dice" in err[0] and f"at most {MAX_DICE}" in err[0]


def test_learn_refuses_more_photos_than_one_file_teaches(tmp_path, capsys):
    from companion.cli.learn import MAX_PHOTOS

    lines = [json.dumps({"image": f"{k}.jpg", "dice": [BOX]}) for k in range(MAX_PHOTOS + 1)]
    status, err = learn(tmp_path, capsys, "\n".join(lines) + "\n")
    assert status == 2 and len(err) == 1 and f"line {MAX_PHOTOS + 1}: more than {MAX_PHOTOS} photos" in err[0]


@pytest.mark.parametrize("line, reason", [
    ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    ('{"image": "a.jpg", "dice": [], "n": ' + "7" * 5001 + "}", "digits"),
])
def test_learn_names_the_line_it_cannot_read(tmp_path, capsys, line, reason):
    status, err = learn(tmp_path, capsys, json.dumps({"image": "a.jpg", "dice": [BOX]}) + "\n" + line + "\n")
    assert status == 2 and len(err) == 1 and "labels.jsonl line 2: " in err[0] and reason in err[0]
