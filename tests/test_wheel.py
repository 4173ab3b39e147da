"""The wheel: built from the sources, installed in a fresh virtual environment, run from
outside the checkout, it reads a photo with the models it carries and serves the page it carries.

Offline: the wheel is built without build isolation (setuptools comes with the test extra),
installed with --no-index --no-deps, and the fresh environment borrows this one's third-party
packages through a .pth line (which adds the folder, not this checkout's editable install).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest

from conftest import REPO, models_ready, sample_photos, stop_cli

wheel_test = pytest.mark.skipif(not models_ready() or not sample_photos(), reason="needs models/*.onnx and sample_images/")

SOURCES = ["pyproject.toml", "README.md", "LICENSE", "companion", "web", "models"]
SHIPPED_MODEL_FILES = ["detector.onnx", "reader_part0.onnx", "reader_part1.onnx", "calibration.json", "cubes.json", "light_colour.json", "doubt_model.json", "README.md"]


def test_pyproject_lists_every_package():
    """setuptools is given the packages one by one (the page and the models are mapped in)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "companion").rglob("*.py")}
    on_disk |= {"companion.data", "companion.web", "companion.models"}
    assert set(config["packages"]) == on_disk
    assert config["package-dir"] == {"companion.web": "web", "companion.models": "models"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel installed; returns its folder."""
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"  # a copy, so the build writes nothing into the checkout
    src.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(REPO / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(root / "dist"), str(src)])
    (wheel,) = (root / "dist").glob("*.whl")
    check_wheel_contents(wheel)
    venv = root / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)])
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip()
    (Path(site) / "borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def check_wheel_contents(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {"companion/py.typed", "companion/data/phase10_dice.json"}
    expected |= {p.relative_to(REPO).as_posix() for p in (REPO / "companion").rglob("*.py")}
    expected |= {"companion/" + p.relative_to(REPO).as_posix() for p in (REPO / "web").rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts}
    expected |= {f"companion/models/{name}" for name in SHIPPED_MODEL_FILES}
    missing = sorted(expected - names)
    assert missing == [], f"the wheel lacks {missing} (list the package in pyproject.toml)"
    # each weight once: the reader's parts, not also the file joining them
    models = {n for n in names if n.startswith("companion/models/") and n.endswith(".onnx")}
    assert models == {f"companion/models/{n}" for n in SHIPPED_MODEL_FILES if n.endswith(".onnx")}


def run(command: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def clean_env() -> dict[str, str]:
    """No path into the checkout, no models folder but the wheel's own."""
    drop = {"PYTHONPATH", "COMPANION_MODELS", "VIRTUAL_ENV"}
    return {k: v for k, v in os.environ.items() if k not in drop} | {"PYTHONUNBUFFERED": "1"}


@pytest.mark.slow
@wheel_test
def test_the_installed_package_is_the_wheel_not_the_checkout(installed, tmp_path):
    code = "import companion, companion.assets as a; print(companion.__file__, a.web_dir(), a.models_dir())"
    paths = run([str(installed / "bin" / "python"), "-c", code], cwd=tmp_path).split()
    for path in paths:
        assert Path(path).is_relative_to(installed), paths


@pytest.mark.slow
@wheel_test
def test_the_wheel_reads_a_sample_photo_as_the_checkout_does(installed, tmp_path):
    from companion.vision import read_image

    photo = tmp_path / "photo.jpg"
    shutil.copy2(sample_photos()[0], photo)
    out = run([str(installed / "bin" / "companion"), "read", str(photo), "--json"], cwd=tmp_path)
    dice = json.loads(out)["dice"]
    assert len(dice) > 0
    expected = read_image(photo).to_json()["dice"]
    assert [(d["value"], d["color"], d["die"]) for d in dice] == [(d["value"], d["color"], d["die"]) for d in expected]


@pytest.mark.slow
@wheel_test
def test_the_wheel_serves_the_page_and_its_script(installed, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [str(installed / "bin" / "companion"), "serve", "--port", str(port), "--db", str(tmp_path / "db.sqlite3")]
    process = subprocess.Popen(command, cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        banner = wait_for_banner(process)
        base = f"http://127.0.0.1:{port}"
        page = fetch(base + "/")
        script = re.search(r'<script type="module" src="([^"]+)"', page)
        assert script, f"the page names no script module:\n{page}\n{banner}"
        served = fetch(base + script.group(1))
        assert served == (REPO / "web" / script.group(1).removeprefix("/")).read_text("utf-8")
        assert "import" in served
    finally:
        stop_cli(process)


def wait_for_banner(process: subprocess.Popen) -> str:
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "Ctrl+C" in line:
            return "".join(lines)
    raise AssertionError("companion serve did not start:\n" + "".join(lines))


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200, url
        return response.read().decode("utf-8")
