"""The page takes the numbers the core defines from /api/info: given other ones, it follows them."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from browser_helpers import add_die, create_game
from companion.game import FIVE_PHASE_BONUS_PHASE, MAX_NAME_LENGTH
from companion.rules.phases import PHASE_COUNT

pytestmark = pytest.mark.browser


def serve_info_with(page: Page, **changes) -> None:
    """The server's own /api/info, with `changes` as if the core defined them."""
    def fulfil(route):
        response = route.fetch()
        route.fulfill(response=response, json={**response.json(), **changes})

    page.route("**/api/info", fulfil)


def row_labels(page: Page) -> list[str]:
    return page.locator(".scorepad tbody th").all_text_contents()


def test_a_name_is_as_long_as_the_game_allows(page):
    page.goto("/")
    name = page.locator("#players li:nth-child(1) input")
    expect(name).to_have_attribute("maxlength", str(MAX_NAME_LENGTH))
    serve_info_with(page, max_name_length=12)
    page.reload()
    expect(name).to_have_attribute("maxlength", "12")
    name.press_sequentially("Bartholomew the Second")
    expect(name).to_have_value("Bartholomew ")


def test_the_scorepad_rows_follow_the_phases_and_the_five_phase_bonus(page):
    create_game(page)
    phases = [f"Phase {n}" for n in range(1, PHASE_COUNT + 1)]
    at = FIVE_PHASE_BONUS_PHASE
    assert row_labels(page) == [*phases[:at], "Five Phase Bonus", *phases[at:], "First Finish Bonus", "Total"]
    serve_info_with(page, five_phase_bonus_phase=3)
    page.reload()
    expect(page.locator(".scorepad tbody th").nth(3)).to_have_text("Five Phase Bonus")
    assert row_labels(page) == [*phases[:3], "Five Phase Bonus", *phases[3:], "First Finish Bonus", "Total"]


def test_the_turn_takes_the_rolls_the_dice_and_their_values_from_the_game(page):
    serve_info_with(page, rolls_per_turn=2, dice_count=3, face_values=[1, 2, 3])
    create_game(page)
    expect(page.locator(".roll-picker .roll-option")).to_have_text(["Roll 1", "Roll 2 (final)"])
    page.click("#add-die")
    expect(page.locator("#picker .pick-value")).to_have_text(["1", "2", "3", "W"])
    page.click("#picker [data-act=cancel]")
    for token in ["1r", "2b", "Wg"]:
        add_die(page, token)
    expect(page.locator("#dice .chip")).to_have_count(3)
    expect(page.locator("#add-die")).to_be_disabled()
