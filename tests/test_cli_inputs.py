"""The command line's file arguments: nothing it is given blocks it or exhausts the machine."""

from __future__ import annotations

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
