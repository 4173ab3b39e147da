"""The roll advice on the turn screen, in real Chromium: keep marks, odds, the setting."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from browser_helpers import add_dice, create_game
from companion.advisor import advise
from companion.dice import parse_tokens

pytestmark = pytest.mark.browser
ROLL = ["3o", "Wb", "3r", "1g", "7b", "7g", "7r", "5r", "9r", "10o"]  # one face of each die, L1..H6


def start_game(page: Page) -> None:
    create_game(page, ("Ann", "Bob"))
    expect(page.locator("#current-phase")).to_have_text("Phase 1")


def kept(page: Page) -> list[int]:
    return [int(i) for i in page.locator("#dice .chip.keep").evaluate_all("cs => cs.map(c => c.dataset.index)")]


def test_roll_advice_marks_the_dice_to_keep_and_gives_the_odds(page):
    start_game(page)
    expect(page.locator("input[name=roll][value='1']")).to_be_checked()  # a new turn is on roll 1
    add_dice(page, ROLL[:9])
    expect(page.locator("#advice")).to_contain_text("needs all 10 dice")
    add_dice(page, ROLL[9:])

    after_roll_1 = advise(1, parse_tokens(ROLL), rolls_left=2)
    expect(page.locator("#advice-odds")).to_contain_text("chance to make Phase 1")
    expect(page.locator("#advice-odds")).to_contain_text(f"{after_roll_1.best.expected_score:.1f}")
    assert kept(page) == list(after_roll_1.best.keep)
    rerolled = 10 - len(after_roll_1.best.keep)
    expect(page.locator("#dice .chip.reroll")).to_have_count(rerolled)
    expect(page.locator("#dice .chip.keep .k")).to_have_count(len(after_roll_1.best.keep))
    expect(page.locator("#advice-keep")).to_contain_text(f"reroll the other {rerolled}")
    stop = after_roll_1.keep_all
    expect(page.locator("#advice-stop")).to_contain_text(f"{stop.expected_score:.1f} points")

    # Roll 2: one roll left, the advisor's answer for that.
    page.check("input[name=roll][value='2']")
    after_roll_2 = advise(1, parse_tokens(ROLL), rolls_left=1)
    expect(page.locator("#advice")).to_contain_text("1 roll left")
    expect(page.locator("#advice-odds")).to_contain_text(f"{after_roll_2.best.expected_score:.1f}")
    assert kept(page) == list(after_roll_2.best.keep)

    # The final roll gets no advice: the dice stand.
    page.check("input[name=roll][value='3']")
    expect(page.locator("#advice")).to_be_hidden()
    expect(page.locator("#dice .chip.keep, #dice .chip.reroll")).to_have_count(0)

    # Confirming the attempt starts the next turn on roll 1.
    page.click("#confirm")
    expect(page.locator("#current-player")).to_have_text("Bob")
    expect(page.locator("input[name=roll][value='1']")).to_be_checked()


def test_the_plans_can_be_switched_when_they_differ(page):
    start_game(page)
    # The advisor docs' example: best chance keeps (W, 10), best score also the 9.
    dice = ["1b", "2b", "3r", "Wr", "5r", "6r", "7r", "8r", "9r", "10g"]
    advice = advise(1, parse_tokens(dice), rolls_left=2)
    assert advice.best.keep != advice.best_score.keep
    add_dice(page, dice)
    expect(page.locator("#advice [data-plan=best]")).to_have_attribute("aria-pressed", "true")
    assert kept(page) == list(advice.best.keep)
    page.click("#advice [data-plan=best_score]")
    expect(page.locator("#advice [data-plan=best_score]")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#advice-odds")).to_contain_text(f"{advice.best_score.expected_score:.1f}")
    assert kept(page) == list(advice.best_score.keep)


def test_the_setting_hides_the_advice_and_is_remembered_on_this_device(page):
    start_game(page)
    add_dice(page, ROLL)
    expect(page.locator("#advice-odds")).to_be_visible()
    page.uncheck("#advice-on")
    expect(page.locator("#advice")).to_be_hidden()
    expect(page.locator(".roll-picker")).to_be_visible()  # the roll is the turn's, advice or not
    expect(page.locator("#dice .chip.keep, #dice .chip.reroll")).to_have_count(0)

    page.wait_for_timeout(500)  # the turn is kept on the server a moment after the last change
    page.reload()
    expect(page.locator("#current-player")).to_have_text("Ann")
    expect(page.locator("#advice-on")).not_to_be_checked()
    expect(page.locator("#dice .chip")).to_have_count(10)  # the turn, kept across the reload
    expect(page.locator("#verdict")).to_be_visible()  # the page has answered: still no advice
    expect(page.locator("#advice")).to_be_hidden()

    page.check("#advice-on")
    expect(page.locator("#advice-odds")).to_be_visible()
