"""The live view in real Chromium, over HTTPS on the LAN: the camera is a .y4m file made from a
sample photo (tests/live_sequences.py) that Chromium plays as its camera. Still dice are taken
and read with no tap; dice rolling, a hand passing or held still beside them, or a die cut by the
frame's edge are never taken; the view stays open from one turn to the next."""

from __future__ import annotations

import pytest
from browser_helpers import PHONE, READ_TIMEOUT_MS, answer_checks, create_game, launch_with_camera
from conftest import LiveServer, models_ready
from live_sequences import sequence, write_y4m
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not models_ready(), reason="needs the vision models (models/*.onnx)")]

CODE = "ABCD-EF23"
FRAMES_WATCHED = 5  # frames read with nothing taken: while the view changes, about one a second
HELD = r"/held-photos$"  # a photo sent to be read in full and held
KEPT = r"/held-photos/[^/]+$"  # a held photo kept as the roll's
UPLOADED = r"/photos$"  # a photo uploaded and read as any photo


@pytest.fixture
def lan_https(db_path, tls_files):
    with LiveServer(db_path, join_code=CODE, tls=tls_files) as server:
        yield server


@pytest.fixture
def camera_page(playwright, lan_https, tmp_path):
    """Open a phone page joined to the LAN server over HTTPS, its camera playing a sequence."""
    opened = []

    def open_page(name: str):
        video = write_y4m(tmp_path / f"{name}.y4m", sequence(name))
        browser = launch_with_camera(playwright, video)
        # the certificate is this machine's own: the player accepted the browser's warning once
        context = browser.new_context(viewport=PHONE, base_url=lan_https.url, ignore_https_errors=True)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        opened.append((browser, errors))
        page.goto(f"/?code={CODE.lower()}")  # the QR code's link: joins, and the cookie keeps it
        create_game(page, ("Ann", "Bob"))
        expect(page.locator("#camera-open")).to_be_visible()  # HTTPS: the camera is offered
        page.click("#camera-open")
        expect(page.locator("#live-status")).to_be_visible()
        return page

    yield open_page
    for browser, errors in opened:
        browser.close()
        assert errors == [], f"JavaScript errors on the page: {errors}"


def frames_read(page) -> int:
    return int(page.locator("#camera").get_attribute("data-frames") or 0)


def fetched(page, path: str) -> int:
    """The requests the page's scripts sent to an API path matching `path` (a regular expression), as
    the browser's Resource Timing lists them."""
    return page.evaluate("""(path) => performance.getEntriesByType('resource').filter((e) =>
        e.initiatorType === 'fetch' && new RegExp(path).test(new URL(e.name).pathname)).length""", path)


def wait_for_frames(page, count: int) -> None:
    page.wait_for_function("(n) => Number(document.querySelector('#camera').dataset.frames) >= n",
                           arg=count, timeout=READ_TIMEOUT_MS)


def test_still_dice_are_taken_and_read_with_no_tap_and_the_view_stays_for_the_next_turn(camera_page):
    page = camera_page("still")
    # no tap: the chips of the photo it took itself
    expect(page.locator("#dice .chip")).to_have_count(10, timeout=READ_TIMEOUT_MS)
    expect(page.locator("#photo")).to_be_visible()
    assert page.locator("#camera").get_attribute("data-last-capture") == "steady"
    assert page.locator("#camera").get_attribute("data-captures") == "1"
    # the photo read in full while the next frame showed the dice lay still, kept: not read again
    assert page.locator("#camera").get_attribute("data-source") == "held photo"
    assert (fetched(page, HELD), fetched(page, KEPT), fetched(page, UPLOADED)) == (1, 1, 0)  # one photo, sent once
    expect(page.locator("#live-overlay .live-die")).to_have_count(10)  # what it sees, drawn over it
    # The dice lie as they were: the same roll is not taken again.
    wait_for_frames(page, frames_read(page) + 3)
    assert page.locator("#camera").get_attribute("data-captures") == "1"
    # Confirm (the phase is missed with these dice: End turn, then Confirm); the view stays open
    # and follows whose turn it is.
    answer_checks(page)  # the dice as scored, and what they ask before a roll's end
    if page.locator("#end-turn").is_visible():
        page.click("#end-turn")
    answer_checks(page)  # a miss is confirmed only for dice the player looked at
    page.click("#confirm")
    expect(page.locator("#current-player")).to_have_text("Bob")
    expect(page.locator("#live-view")).to_be_visible()
    wait_for_frames(page, frames_read(page) + 1)
    expect(page.locator("#live-status")).to_contain_text("Bob's turn")


def test_a_camera_that_starts_with_black_pictures_sends_one_photo_of_the_dice(camera_page):
    page = camera_page("dark_start")  # 0.4 s of black pictures, then the still dice
    expect(page.locator("#dice .chip")).to_have_count(10, timeout=READ_TIMEOUT_MS)
    assert page.locator("#camera").get_attribute("data-source") == "held photo"
    # the black pictures are not looked at: the first look is at the dice, sent once and kept
    assert (fetched(page, HELD), fetched(page, KEPT), fetched(page, UPLOADED)) == (1, 1, 0)
    wait_for_frames(page, frames_read(page) + 3)  # the file loops: its black pictures again
    assert page.locator("#camera").get_attribute("data-captures") == "1"


@pytest.mark.parametrize("name, why", [("rolling", "hold still"), ("hand", ""), ("still_hand", "a hand is in view"),
                                       ("cut", "move back a little")])
def test_nothing_is_taken_while_dice_roll_a_hand_is_in_view_or_a_die_is_cut_by_the_edge(camera_page, name, why):
    page = camera_page(name)
    wait_for_frames(page, FRAMES_WATCHED)
    assert page.locator("#camera").get_attribute("data-captures") == "0"
    expect(page.locator("#photo")).to_be_hidden()
    expect(page.locator("#dice .chip")).to_have_count(0)
    if why:
        expect(page.locator("#live-status")).to_contain_text(why)


def test_a_tap_on_the_view_takes_the_photo_at_once(camera_page):
    page = camera_page("rolling")
    wait_for_frames(page, 1)
    page.click("#live-view")
    page.wait_for_function("() => document.querySelector('#camera').dataset.captures === '1'", timeout=READ_TIMEOUT_MS)
    assert page.locator("#camera").get_attribute("data-last-capture") == "tap"
    expect(page.locator("#photo")).to_be_visible(timeout=READ_TIMEOUT_MS)


def test_the_view_sends_no_frame_while_the_page_is_hidden(camera_page):
    page = camera_page("rolling")
    wait_for_frames(page, 2)
    page.evaluate("""() => {
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
        document.dispatchEvent(new Event('visibilitychange'));
    }""")
    page.wait_for_timeout(3000)  # a frame already on its way still lands (a read takes up to a second or two on a busy CPU)
    before = frames_read(page)
    page.wait_for_timeout(2000)
    assert frames_read(page) == before
    page.evaluate("""() => {
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => false });
        document.dispatchEvent(new Event('visibilitychange'));
    }""")
    wait_for_frames(page, before + 2)


def test_with_dice_set_aside_the_dice_in_view_are_taken(camera_page):
    page = camera_page("cut")  # nine dice whole in view, the tenth out of it
    wait_for_frames(page, 2)
    assert page.locator("#camera").get_attribute("data-captures") == "0"
    page.select_option("#live-expect", "9")  # the player set one aside
    page.wait_for_function("() => document.querySelector('#camera').dataset.captures === '1'", timeout=READ_TIMEOUT_MS)
    expect(page.locator("#dice .chip")).to_have_count(9, timeout=READ_TIMEOUT_MS)
    # Two frames read it the same and no held photo was one of them: the camera's best picture
    # (here the video frame at its full size) is held and kept as the first look is, not uploaded.
    assert page.locator("#camera").get_attribute("data-source") == "held photo"
    assert page.locator("#camera").get_attribute("data-picture") == "video frame"
    assert fetched(page, KEPT) == 1 and fetched(page, UPLOADED) == 0
