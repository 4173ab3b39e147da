"""Dice sets on the page (real Chromium): add and name a set, a new game picks it, the turn
screen says what the game's set learnt, and the settings reset it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_a_new_set_is_picked_for_a_game_and_the_turn_screen_says_what_it_learnt(page):
    page.goto("/")
    expect(page.locator(".dice-sets .set-row")).to_have_count(1)
    expect(page.locator("#dice-set")).to_be_hidden()  # one set: nothing to choose
    page.fill("#new-set-name", "Travel set")
    page.click("#new-set button[type=submit]")
    expect(page.locator(".dice-sets .set-row")).to_have_count(2)
    page.goto("/")  # the picker lists the sets it found when the form was drawn
    expect(page.locator("#dice-set")).to_be_visible()
    page.select_option("#dice-set", label="Travel set")
    page.fill("#players li:nth-child(1) input", "Ann")
    page.fill("#players li:nth-child(2) input", "Bob")
    page.click("#start-game")
    expect(page.locator("#current-player")).to_have_text("Ann")
    assert re.search(r"#/game/[\w-]+", page.url)
    expect(page.locator("#learnt")).to_contain_text("Travel set: nothing learnt yet")
    page.goto("/")
    expect(page.locator(".dice-sets [data-reset]").first).to_be_disabled()  # nothing to reset yet
