"""Shared fixtures. Keep each one small and documented; add new ones below the others."""

from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


# --- scorepad: storage, API and a live server ---------------------------------------------------

@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A fresh SQLite file for one test (real SQLite, never :memory:)."""
    return tmp_path / "companion.sqlite3"


@pytest.fixture
def app(db_path: Path):
    from companion.server import create_app

    return create_app(db_path, keepalive_s=0.2)


@pytest.fixture
def client(app):
    return app.test_client()


class LiveServer:
    """The scorepad served on a free 127.0.0.1 port, in a background thread (HTTPS with `tls`)."""

    def __init__(self, db_path: Path, join_code: str | None = None, tls=None):
        from companion.server import create_app, make_server

        self.app = create_app(db_path, join_code=join_code, keepalive_s=1.0)
        self.server = make_server(self.app, "127.0.0.1", 0, threads=16, tls=tls)
        self.port = self.server.effective_port
        self.url = f"{self.server.scheme}://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.run, name="scorepad-server", daemon=True)

    def __enter__(self) -> "LiveServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        from companion.server import shutdown

        shutdown(self.app, self.server, self.thread)
        assert not self.thread.is_alive(), "the server thread did not stop"


@pytest.fixture
def live_server(db_path: Path):
    with LiveServer(db_path) as server:
        yield server


@pytest.fixture
def server_factory(db_path: Path):
    """Make (unstarted) live servers on this test's database, e.g. to stop one mid-test."""
    return lambda join_code=None: LiveServer(db_path, join_code=join_code)


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory):
    """A certificate made as `companion serve --lan` makes it, for 127.0.0.1 (one per session)."""
    from companion.certificate import ensure_certificate

    return ensure_certificate(tmp_path_factory.mktemp("tls"), ["127.0.0.1", "localhost"])


@pytest.fixture(scope="session")
def playwright():
    """Playwright's sync API, started once per test session (it may be started only once at a time)."""
    from browser_helpers import CHROMIUM

    if not CHROMIUM.exists():
        pytest.skip("browser tests need Debian's Chromium at /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as started:
        yield started


@pytest.fixture(scope="session")
def browser(playwright):
    """Debian's Chromium, headless, through Playwright (one per test session)."""
    from browser_helpers import launch_chromium

    chromium = launch_chromium(playwright)
    yield chromium
    chromium.close()


@pytest.fixture
def page(browser, live_server, request):
    """A phone-sized page on the live server; any JavaScript error on it, or any error in its
    console (a request the server refused included), fails the test. A test that provokes a
    refusal on purpose is marked `console_errors` and still fails on a JavaScript error."""
    from browser_helpers import PHONE

    context = browser.new_context(viewport=PHONE, base_url=live_server.url)
    page = context.new_page()
    errors: list[str] = []
    console: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
    yield page
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"
    if request.node.get_closest_marker("console_errors") is None:
        assert console == [], f"errors in the page's console: {console}"


def models_ready() -> bool:
    """The vision models exist (tests that read real photos skip until they do)."""
    try:
        from companion.vision.models import models_present
    except ImportError:
        return False
    return models_present()


def sample_photos() -> list[Path]:
    """The sample photos (sample_images/, made by the data generator), in name order."""
    folder = REPO / "sample_images"
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in {".jpg", ".jpeg", ".png", ".webp"})


def stop_cli(process: subprocess.Popen) -> None:
    """Stop a `companion serve` started by a test as Ctrl+C would, killing it if it hangs."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="session")
def joined_reader(tmp_path_factory) -> Path:
    """The shipped reader's parts joined back into one file (training.reader_join), alone in its folder."""
    pytest.importorskip("onnx")
    from companion.vision.models import default_models_dir
    from training.reader_join import join_folder

    return join_folder(default_models_dir(), tmp_path_factory.mktemp("joined") / "reader.onnx")
