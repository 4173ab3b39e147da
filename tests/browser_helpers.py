"""Driving the scorepad page in real Chromium: shared by the browser tests,
docs/make_screenshots.py and benchmarks/bench_turn.py (which import it as
``tests.browser_helpers``): plain functions, not fixtures, so each test reads as the player's
taps, and one Chromium launch (its flags) for all of them.

Debian's Chromium through Playwright (Playwright's own browser download cannot work offline),
headless, with a fresh profile per launch.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Sequence

from playwright.sync_api import Browser, Page, Playwright, expect

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
COLOUR_NAMES = {"r": "red", "o": "orange", "g": "green", "b": "blue"}
READ_TIMEOUT_MS = 30_000  # a photo read on a busy CPU


def launch_chromium(playwright: Playwright, extra_args: Sequence[str] = ()) -> Browser:
    """Debian's Chromium, headless, from the object `sync_playwright()` gives."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=[*CHROMIUM_ARGS, *extra_args], headless=True)


def launch_with_camera(playwright: Playwright, video: Path) -> Browser:
    """Chromium whose camera plays `video` (a .y4m file, looped), allowed without asking."""
    return launch_chromium(playwright, ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                                        f"--use-file-for-fake-video-capture={video}"])


def pick(page: Page, token: str) -> None:
    """In the open die picker, choose the value and the colour of a token such as ``7b`` or ``Wr``."""
    page.click(f"#picker .pick-value[data-value='{token[:-1]}']")
    page.click(f"#picker .pick-colour[data-colour='{COLOUR_NAMES[token[-1]]}']")


def add_die(page: Page, token: str) -> None:
    """Add one die by hand on the turn screen: open the picker, pick, confirm."""
    page.click("#add-die")
    pick(page, token)
    page.click("#picker [data-act=ok]")


def add_dice(page: Page, tokens: Iterable[str]) -> None:
    for token in tokens:
        add_die(page, token)


def create_game(page: Page, players: Sequence[str] = ("Ann", "Bob")) -> str:
    """Start a game from the start screen (on the page's base URL); returns its id."""
    page.goto("/")
    for i, name in enumerate(players):
        if i >= 2:
            page.click("#add-player")
        page.fill(f"#players li:nth-child({i + 1}) input", name)
    page.click("#start-game")
    expect(page.locator("#current-player")).to_have_text(players[0])
    found = re.search(r"#/game/([\w-]+)", page.url)
    assert found, page.url
    return found.group(1)


def take_photo(page: Page, path: Path) -> None:
    """Choose a photo as the turn screen's camera button would, and wait for its reading."""
    before = page.locator("#photo-img").get_attribute("src")
    page.set_input_files("#photo-input", str(path))
    # Each photo is stored under a new URL: wait until this one is drawn, and scored.
    page.wait_for_function("""(before) => {
        const img = document.querySelector('#photo-img');
        return img.getAttribute('src') && img.getAttribute('src') !== before && document.querySelector('#busy').hidden;
    }""", arg=before, timeout=READ_TIMEOUT_MS)
    expect(page.locator("#photo")).to_be_visible()
    expect(page.locator("#verdict")).not_to_have_text("Scoring…")


def answer_checks(page: Page) -> int:
    """Say "right" to each die the bar asks about (the reader's doubts that could change the
    result), as a player who looked at them would; returns how many were asked."""
    asked = 0
    while True:
        # the dice as scored: a question, or the turn's actions with nothing to ask
        page.wait_for_function("""() => document.querySelector('#verdict').textContent !== 'Scoring…'
            && (!document.querySelector('#ask-yes').hidden || !document.querySelector('#confirm').hidden
                || !document.querySelector('#next-roll').hidden || !document.querySelector('#bar-add').hidden)""")
        if not page.locator("#ask-yes").is_visible():
            return asked
        question = page.locator("#bar-question").inner_text()
        page.click("#ask-yes")
        asked += 1
        page.wait_for_function("(q) => document.querySelector('#bar-question').hidden"
                               " || document.querySelector('#bar-question').textContent !== q", arg=question)


def in_viewport(page: Page, selector: str) -> bool:
    """The element is wholly on screen and is what a tap at its centre hits (nothing covers it)."""
    return page.evaluate("""(selector) => {
        const el = document.querySelector(selector);
        if (!el) return false;
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) return false;
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return !!hit && (hit === el || el.contains(hit));
    }""", selector)
