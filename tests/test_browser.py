"""The scorepad page in real Chromium: a game from creation to a live update on a second page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from browser_helpers import DESKTOP, PHONE, add_die, create_game, pick
from conftest import models_ready, sample_photos

pytestmark = pytest.mark.browser


def test_a_turn_by_hand_is_scored_recorded_persisted_and_seen_live(browser, page, live_server):
    game_id = create_game(page)
    expect(page.locator("#current-phase")).to_have_text("Phase 1")

    # A second device opens the same game.
    other = browser.new_context(viewport=DESKTOP, base_url=live_server.url).new_page()
    other.goto(f"/#/game/{game_id}")
    expect(other.locator("#current-player")).to_have_text("Ann")
    expect(other.locator("#live")).to_be_visible()

    for token in ["7b", "7r", "7g", "3o", "3r", "1r"]:
        add_die(page, token)
    expect(page.locator("#verdict")).to_contain_text("not complete")
    expect(page.locator("#confirm")).to_have_text("Confirm: Phase 1 missed")

    # Tap the last chip and correct it: the evaluation follows at once.
    page.click("#dice .chip[data-index='5']")
    pick(page, "Wb")
    page.click("#picker [data-act=ok]")
    expect(page.locator("#dice .chip[data-index='5']")).to_have_attribute("data-token", "Wb")
    expect(page.locator("#verdict")).to_contain_text("Phase 1 complete")
    expect(page.locator("#verdict")).to_contain_text("27")

    page.click("#confirm")
    expect(page.locator("#current-player")).to_have_text("Bob")
    pad = page.locator(".scorepad")
    expect(pad.locator("tbody tr").nth(0).locator("td").nth(0)).to_have_text("27")
    expect(pad.locator("tr.total td").nth(0)).to_have_text("27")

    # The other device updated by itself.
    expect(other.locator("#current-player")).to_have_text("Bob")
    expect(other.locator(".scorepad tr.total td").nth(0)).to_have_text("27")

    # A reload finds it persisted.
    page.reload()
    expect(page.locator("#current-player")).to_have_text("Bob")
    expect(page.locator(".scorepad tr.total td").nth(0)).to_have_text("27")

    # Undo, seen live too.
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#undo")
    expect(page.locator("#current-player")).to_have_text("Ann")
    expect(other.locator("#current-player")).to_have_text("Ann")
    expect(other.locator(".scorepad tr.total td").nth(0)).to_have_text("0")
    other.context.close()


def test_a_stale_confirm_from_a_second_device_is_refused_with_a_message(browser, page, live_server):
    game_id = create_game(page)
    other = browser.new_context(viewport=PHONE, base_url=live_server.url).new_page()
    other.route("**/events", lambda route: route.abort())  # a phone that misses the live update
    other.goto(f"/#/game/{game_id}")
    expect(other.locator("#current-player")).to_have_text("Ann")
    for p in (page, other):
        for token in ["7b", "7r", "7g", "3o", "3r", "Wb"]:
            add_die(p, token)
        expect(p.locator("#verdict")).to_contain_text("complete")
    page.click("#confirm")
    expect(page.locator("#current-player")).to_have_text("Bob")
    other.click("#confirm")
    expect(other.locator("#turn-error")).to_contain_text("already recorded")
    expect(other.locator("#current-player")).to_have_text("Bob")  # refreshed from the server
    expect(other.locator(".history li")).to_have_count(1)
    other.context.close()


def test_a_draft_is_cleared_with_a_notice_when_another_device_records(browser, page, live_server):
    game_id = create_game(page)
    other = browser.new_context(viewport=PHONE, base_url=live_server.url).new_page()
    other.goto(f"/#/game/{game_id}")
    expect(other.locator("#live")).to_be_visible()
    add_die(other, "5r")
    for token in ["7b", "7r", "7g", "3o", "3r", "Wb"]:
        add_die(page, token)
    page.click("#confirm")
    expect(other.locator("#turn-error")).to_contain_text("changed on another device")
    expect(other.locator("#dice .chip")).to_have_count(0)
    other.context.close()


@pytest.mark.console_errors  # the server's refusal, on purpose
def test_a_file_that_is_not_a_photo_gets_a_clear_message_and_changes_nothing(page, tmp_path):
    create_game(page)
    # The picker offers only what the reader decodes (a Mac's Safari then sends HEIC as JPEG).
    expect(page.locator("#photo-input")).to_have_attribute("accept", "image/jpeg,image/png,image/webp")
    add_die(page, "7b")
    bogus = tmp_path / "notes.txt"
    bogus.write_text("this is not a photo")
    page.set_input_files("#photo-input", str(bogus))
    expect(page.locator("#turn-error")).to_contain_text("not a photo")
    expect(page.locator("#dice .chip")).to_have_count(1)  # the dice entered so far are kept
    expect(page.locator("#current-player")).to_have_text("Ann")


def _starter_roll_for(page, first: str, second: str) -> None:
    """The start screen with two players named, deciding the starter by a high die each."""
    page.goto("/")
    page.fill("#players li:nth-child(1) input", first)
    page.fill("#players li:nth-child(2) input", second)
    page.check("input[name=start][value=roll]")


def test_the_starter_is_decided_by_a_high_die_each(page):
    _starter_roll_for(page, "Ann", "Bob")
    page.select_option("#rolls select >> nth=0", "9")
    page.select_option("#rolls select >> nth=1", "9")
    expect(page.locator("#roll-result")).to_contain_text("Tie between Ann and Bob")
    page.select_option("#rolls select >> nth=0", "6")
    page.select_option("#rolls select >> nth=1", "8")
    expect(page.locator("#roll-result")).to_contain_text("Bob starts")
    page.click("#start-game")
    expect(page.locator("#current-player")).to_have_text("Bob")


@pytest.mark.console_errors  # the server's refusal, on purpose
def test_a_name_given_twice_is_refused_with_the_games_sentence(page):
    _starter_roll_for(page, "Ann", "ann")
    page.select_option("#rolls select >> nth=0", "6")
    page.select_option("#rolls select >> nth=1", "9")
    expect(page.locator("#roll-result")).to_have_text("Player name 'ann' is given twice.")
    page.check("input[name=start][value=order]")
    page.click("#start-game")
    expect(page.locator("#new-error")).to_have_text("Player name 'ann' is given twice.")
    expect(page.locator("#start-game")).to_be_visible()  # still on the start screen, names kept
    expect(page.locator("#players li:nth-child(2) input")).to_have_value("ann")


@pytest.mark.skipif(not models_ready(), reason="the photo part needs models/*.onnx (trained by the vision task)")
@pytest.mark.skipif(not sample_photos(), reason="the photo part needs sample_images/ (made by the data generator)")
def test_a_photo_is_read_outlined_and_corrected_by_tapping(page):
    create_game(page, ["Ann"])
    page.set_input_files("#photo-input", str(sample_photos()[0]))
    expect(page.locator("#photo")).to_be_visible(timeout=30_000)
    chips = page.locator("#dice .chip")
    expect(chips.first).to_be_visible()
    count = chips.count()
    expect(page.locator("#overlay .die-outline")).to_have_count(count)
    assert count == 10  # the first sample shows the whole set
    expect(page.locator("#count-note")).to_be_hidden()
    chips.last.click()
    page.click("#picker [data-act=remove]")
    expect(chips).to_have_count(9)
    expect(page.locator("#count-note")).to_contain_text("9 of 10 dice: if one was missed")
    first = chips.first.get_attribute("data-token")
    new = "Wg" if first != "Wg" else "Wr"
    chips.first.click()
    pick(page, new)
    page.click("#picker [data-act=ok]")
    expect(chips.first).to_have_attribute("data-token", new)
    expect(page.locator("#verdict")).to_be_visible()
    page.check("input[name=roll][value='3']")  # the final dice: Confirm, made or missed
    expect(page.locator("#confirm")).to_be_hidden()  # a die short of the set: asked for first
    page.click("#set-aside")
    page.click("#confirm")
    expect(page.locator(".history li")).to_have_count(1)
    expect(page.locator(".history li")).to_contain_text(new)


def test_lan_mode_page_works_after_joining_with_the_code(browser, server_factory):
    with server_factory(join_code="join-me") as server:
        context = browser.new_context(viewport=PHONE, base_url=server.url)
        page = context.new_page()
        refused = page.goto("/")
        assert refused.status == 403 and "join code" in page.content()
        page.goto("/?code=join-me")
        page.fill("#players li:nth-child(1) input", "Ann")
        page.fill("#players li:nth-child(2) input", "Bob")
        page.click("#start-game")
        expect(page.locator("#current-player")).to_have_text("Ann")
        expect(page.locator("#live")).to_be_visible()  # the event stream got in with the cookie too
        context.close()


def test_an_answer_for_dice_since_changed_is_dropped(page):
    """The server's verdict for the old dice must not be drawn over the new ones."""
    page.clock.install()  # time runs as usual until paused below
    create_game(page)
    for token in ["7b", "7r", "3o", "7g"]:
        add_die(page, token)
    expect(page.locator("#verdict")).to_be_visible()
    held = []
    page.route("**/api/evaluate", lambda route: route.continue_() if held else held.append(route))
    add_die(page, "3r")  # its evaluation is held back; its set of 7s uses the 4th die
    # wait for the route handler itself: the page's request event comes before it runs
    for _ in range(50):
        if held:
            break
        page.wait_for_timeout(100)
    assert len(held) == 1
    page.clock.pause_at(page.evaluate("Date.now()") + 60_000)  # the next evaluation waits
    page.locator("#dice .chip").nth(3).click()  # remove the 7g
    page.click("#picker [data-act=remove]")
    expect(page.locator("#dice .chip")).to_have_count(4)
    held[0].continue_()  # the old answer arrives before the new one is asked
    page.wait_for_timeout(500)
    expect(page.locator("#evaluation")).to_have_class("evaluation pending")
    page.clock.resume()
    expect(page.locator("#verdict")).to_contain_text("not complete")


def test_leaving_the_start_screen_before_its_game_list_arrives_is_no_error(page):
    """The list of saved games answers after the player has already started a game: the
    start screen it was for is gone, and nothing on the game screen may break (the page
    fixture fails the test on any JavaScript error)."""
    held = []
    page.route("**/api/games", lambda route: held.append(route) if route.request.method == "GET" else route.continue_())
    create_game(page)
    for _ in range(50):  # the start screen's request, held back
        if held:
            break
        page.wait_for_timeout(100)
    assert held
    for route in held:
        route.continue_()
    page.wait_for_timeout(500)  # the late answer is handled
    expect(page.locator("#current-player")).to_have_text("Ann")
