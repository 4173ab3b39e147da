"""Write docs/screenshots/*.png: the scorepad's main screens at phone (390x844) and desktop (1280x800) size.

    .venv/bin/python -m docs.make_screenshots    # from the repository root

Serves a throw-away database on 127.0.0.1, plays a few attempts through the API, and drives
Debian's Chromium headless. The photo screen is included only when the vision models and
sample_images/ exist.
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path

from tests.browser_helpers import DESKTOP, PHONE, add_dice, launch_chromium, launch_with_camera
from tests.live_sequences import sequence, write_y4m

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs" / "screenshots"
SIZES = {"phone": PHONE, "desktop": DESKTOP}

# Attempts to play before the turn screen is shown: (dice) in turn order Ann, Bob, Cy, ...
OPENING = [
    ["7b", "7r", "7g", "3o", "3r", "Wb"],      # Ann makes Phase 1
    ["1r", "2o", "3r", "4g", "5r", "6o"],      # Bob misses
    ["9o", "9r", "9g", "10g", "10r", "10o"],   # Cy makes Phase 1
    ["4r", "4o", "Wg", "5b", "6o", "7g", "8r"],  # Ann makes Phase 2
    ["8b", "8o", "8r", "5r", "5b", "Wg"],      # Bob makes Phase 1
]
SOLITAIRE_MADE = [  # one roll of the real set (4 low + 6 high dice) that makes each phase in turn
    ["10g", "10r", "10o", "9r", "9r", "9g"],
    ["10g", "10r", "10o", "7o", "8o", "9g", "Wr"],
    ["10g", "10r", "10o", "10b", "9r", "8r", "Wr", "Wb"],
    ["10g", "9b", "8b", "7o", "6b", "5b", "4g"],
    ["10g", "9b", "8b", "7o", "6b", "5b", "4g", "3g"],
    ["10g", "9b", "8b", "7o", "6b", "5b", "4g", "3g", "2r"],
    ["10g", "10r", "10o", "10b", "9r", "9g", "Wr", "Wb"],
    ["5r", "10r", "7r", "9r", "9r", "8r", "4r"],
    ["10g", "10r", "10o", "10b", "10g", "9g", "Wr"],
    ["10g", "10r", "10o", "10b", "10g", "9g", "Wr", "Wb"],
]
TURN_DICE = ["6o", "6b", "Wr", "1g", "2b", "3r", "6r", "9r", "10g", "8r"]  # Cy, Phase 2
ADVICE_DICE = ["1b", "2b", "3r", "Wr", "5r", "6r", "7r", "8r", "9r", "10g"]  # roll 1 of Phase 1 (docs/advisor.md)


def scored(page) -> None:
    """Wait for the server's verdict on the dice shown (a shot of "Scoring…" shows nothing)."""
    page.wait_for_function("() => { const v = document.querySelector('#verdict');"
                           " return v && v.textContent.trim() && v.textContent !== 'Scoring…'; }")


def post(base: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def play(base: str, players: list[str], opening: list[list[str]], mode: str = "standard") -> dict:
    game = post(base, "/api/games", {"players": players, "mode": mode})
    for dice in opening:
        game = post(base, f"/api/games/{game['id']}/attempts",
                    {"player": game["next"], "seq": game["seq"], "dice": dice})["game"]
    return game


def main() -> int:
    from playwright.sync_api import sync_playwright

    from companion.server import create_app, make_server, shutdown

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Path(tmp) / "screens.sqlite3")
        server = make_server(app, "127.0.0.1", 0, threads=8)
        base = f"http://127.0.0.1:{server.effective_port}"
        loop = threading.Thread(target=server.run, daemon=True)
        loop.start()
        try:
            # Solitaire: two misses (-5 each), then every phase made.
            misses = [["1r", "2o", "5g", "9r", "10o", "7b"]] * 2
            solo = play(base, ["Robin"], misses + SOLITAIRE_MADE, mode="solitaire")
            game = play(base, ["Ann", "Bob", "Cy"], OPENING)
            # Ann makes every phase while Bob misses: Ann finishes first, Bob has his last chance.
            miss = ["1r", "2o", "5g", "9r", "10o", "7b"]
            race = play(base, ["Ann", "Bob"], [hand for made in SOLITAIRE_MADE for hand in (made, miss)][:-1])
            with sync_playwright() as pw:
                browser = launch_chromium(pw)
                for size_name, viewport in SIZES.items():
                    page = browser.new_page(viewport=viewport, device_scale_factor=1)
                    shoot(page, base, game, solo, race, size_name)
                    page.close()
                browser.close()
                if sample_photo() is not None:
                    shoot_live(pw, base, Path(tmp))
        finally:
            shutdown(app, server, loop)
    for path in [*OUT.glob("*-photo.png"), OUT / "phone-live.png"]:
        shrink(path)
    for path in sorted(OUT.glob("*.png")):
        print(f"{path.relative_to(REPO)}  {path.stat().st_size // 1024} KiB")
    return 0


def shoot(page, base: str, game: dict, solo: dict, race: dict, size: str) -> None:
    page.goto(base + "/")
    page.wait_for_selector(".game-row")
    page.fill("#players li:nth-child(1) input", "Ann")
    page.fill("#players li:nth-child(2) input", "Bob")
    page.screenshot(path=OUT / f"{size}-home.png")

    page.goto(f"{base}/#/game/{game['id']}")
    page.wait_for_selector("#current-player")
    page.check("input[name=roll][value='3']")  # the final dice: no roll advice on this screen
    add_dice(page, TURN_DICE)
    scored(page)
    page.click("#dice .chip[data-index='9']")  # the picker, correcting the last die
    page.wait_for_selector("#picker[open]")
    page.screenshot(path=OUT / f"{size}-picker.png")
    page.click("#picker [data-act=cancel]")
    scored(page)
    page.screenshot(path=OUT / f"{size}-turn.png")
    if size == "phone":
        page.evaluate("window.scrollTo(0, document.querySelector('.pad').offsetTop - 60)")
        page.screenshot(path=OUT / f"{size}-scorepad.png")
        shoot_advice(page, base)

    photo = sample_photo()
    if photo is not None:
        page.goto(f"{base}/#/game/{game['id']}")
        page.wait_for_selector("#current-player")
        page.set_input_files("#photo-input", str(photo))
        page.wait_for_selector("#photo:not([hidden]) #overlay .die-outline", timeout=60_000)
        page.wait_for_function("() => !/Scoring/.test(document.querySelector('#verdict').textContent)")
        page.wait_for_timeout(300)  # the crops and outlines drawn at the loaded photo's scale
        # As the player sees it after the photo, unscrolled: the chips with their crops, and
        # the verdict with the main action in the bar at the bottom.
        page.screenshot(path=OUT / f"{size}-photo.png")
        if size == "phone":  # further down: the photo with its numbered outlines
            page.evaluate("window.scrollTo(0, document.querySelector('#photo').offsetTop - 70)")
            page.screenshot(path=OUT / f"{size}-photo-outlines.png")
        page.click("#clear")

    page.goto(f"{base}/#/game/{race['id']}")
    page.wait_for_selector(".banner.last")
    page.screenshot(path=OUT / f"{size}-last-chance.png")

    page.goto(f"{base}/#/game/{solo['id']}")
    page.wait_for_selector(".banner.over")
    page.screenshot(path=OUT / f"{size}-solitaire-over.png", full_page=True)


def shoot_advice(page, base: str) -> None:
    """Roll advice after roll 1: the dice to keep ringed, the odds below them (phone only)."""
    game = play(base, ["Ann", "Bob"], [])
    page.goto(f"{base}/#/game/{game['id']}")
    page.wait_for_selector("#current-player")
    add_dice(page, ADVICE_DICE)
    page.wait_for_selector("#advice-odds")
    page.evaluate("window.scrollTo(0, document.querySelector('#roll-bar').getBoundingClientRect().top + scrollY - 60)")
    page.screenshot(path=OUT / "phone-advice.png")


def shoot_live(pw, base: str, tmp: Path) -> None:
    """The live view (phone): the camera, each die the reader sees boxed and read, and the line
    to the player. Its camera plays the sequence with a die cut by the frame's edge, so the
    view says what to do instead of taking the photo."""
    browser = launch_with_camera(pw, write_y4m(tmp / "cut.y4m", sequence("cut", frames=4)))
    page = browser.new_page(viewport=PHONE, device_scale_factor=1)
    game = play(base, ["Ann", "Bob"], [])
    page.goto(f"{base}/#/game/{game['id']}")
    page.wait_for_selector("#current-player")
    page.click("#camera-open")
    page.wait_for_function("() => Number(document.querySelector('#camera').dataset.frames) >= 2", timeout=60_000)
    page.evaluate("window.scrollTo(0, document.querySelector('#camera').getBoundingClientRect().top + scrollY - 60)")
    page.screenshot(path=OUT / "phone-live.png")
    browser.close()


def shrink(path: Path) -> None:
    """Photos make big PNGs; 256 colours keep them readable at a third of the size."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


def sample_photo() -> Path | None:
    """The first sample photo, when the models exist to read it."""
    from companion.vision.models import models_present

    photos = sorted(p for p in (REPO / "sample_images").glob("*") if p.suffix.lower() in {".jpg", ".jpeg", ".png", ".webp"})
    return photos[0] if photos and models_present() else None


if __name__ == "__main__":
    sys.exit(main())
