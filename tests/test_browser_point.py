"""A die the reader missed, added by hand and pointed at on the photo (web/static/js/point.js),
in real Chromium at phone size: it is stored with a box where the player tapped, checked, and
the dice set learns it with the read dice; the turn screen says per ink and per value what the
set learnt (web/static/js/profile.js)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from browser_helpers import answer_checks, create_game, pick, take_photo
from conftest import REPO, models_ready
from companion.store import Store

pytestmark = pytest.mark.browser
SAMPLES = REPO / "sample_images"
needs_models = pytest.mark.skipif(not models_ready(), reason="reading a photo needs models/*.onnx")


def _game(page: Page) -> dict:
    found = re.search(r"#/game/([\w-]+)", page.url)
    assert found, page.url
    return page.evaluate("(id) => fetch('/api/games/' + id).then(r => r.json())", found.group(1))


def _add_missing(page: Page, token: str) -> None:
    page.click("#bar-add")
    pick(page, token)
    page.click("#picker [data-act=ok]")


@needs_models
def test_a_missed_die_pointed_at_on_the_photo_is_stored_there_and_learnt(page, db_path):
    create_game(page)
    page.check("input[name=roll][value='3']")
    take_photo(page, SAMPLES / "s11_wide_touching.jpg")  # 9 of its 10 dice read
    expect(page.locator("#dice .chip[data-index]")).to_have_count(9)
    _add_missing(page, "5r")
    expect(page.locator("#point-note")).to_be_visible()
    # one tap where the die lies: the middle of the photo (the tap is no tap on an outline)
    shown = page.locator("#overlay").bounding_box()
    page.locator("#overlay").click(position={"x": shown["width"] / 2, "y": shown["height"] / 2})
    expect(page.locator("#point-note")).to_be_hidden()
    expect(page.locator("#overlay .die-outline.pointed")).to_have_count(1)
    expect(page.locator("#picker")).to_be_hidden()  # the tap edited no read die
    answer_checks(page)
    page.click("#confirm")
    expect(page.locator(".history li")).to_have_count(1)
    expect(page.locator("#learnt")).to_contain_text("Learnt from 10 dice", timeout=20_000)
    photo = Store(db_path).get_photo(int(_game(page)["attempts"][0]["photo_id"]))
    labels = photo.labels
    assert labels["unboxed"] == 0 and len(labels["dice"]) == 10
    pointed = [d for d in labels["dice"] if d.get("pointed")]
    assert len(pointed) == 1 and pointed[0]["checked"] and (pointed[0]["value"], pointed[0]["color"]) == (5, "red")
    x0, y0, x1, y1 = pointed[0]["box"]
    width, height = photo.reading["width"], photo.reading["height"]
    near = 2 * width / shown["width"]  # two CSS pixels of the tap, in the photo's pixels
    assert abs((x0 + x1) / 2 - width / 2) < near and abs((y0 + y1) / 2 - height / 2) < near
    sides = sorted(max(d["box"][2] - d["box"][0], d["box"][3] - d["box"][1]) for d in photo.reading["dice"])
    assert x1 - x0 == pytest.approx(sides[len(sides) // 2], abs=0.2)  # a die's size: the read dice's median


@needs_models
def test_a_pointed_die_keeps_its_place_across_a_reload(page, db_path):
    create_game(page)
    page.check("input[name=roll][value='3']")
    take_photo(page, SAMPLES / "s11_wide_touching.jpg")
    expect(page.locator("#dice .chip[data-index]")).to_have_count(9)
    _add_missing(page, "5r")
    shown = page.locator("#overlay").bounding_box()
    page.locator("#overlay").click(position={"x": shown["width"] / 2, "y": shown["height"] / 2})
    expect(page.locator("#overlay .die-outline.pointed")).to_have_count(1)
    # the page keeps the turn on the server a moment after the tap
    for _ in range(50):
        if any(d.get("box") for d in (_game(page)["turn"] or {"dice": []})["dice"]):
            break
        page.wait_for_timeout(100)
    page.reload()
    expect(page.locator("#dice .chip[data-index]")).to_have_count(10)
    expect(page.locator("#overlay .die-outline.pointed")).to_have_count(1)
    answer_checks(page)
    page.click("#confirm")
    expect(page.locator(".history li")).to_have_count(1)
    labels = Store(db_path).get_photo(int(_game(page)["attempts"][0]["photo_id"])).labels
    pointed = [d for d in labels["dice"] if d.get("pointed")]
    assert labels["unboxed"] == 0 and len(pointed) == 1 and (pointed[0]["value"], pointed[0]["color"]) == (5, "red")


def test_skip_leaves_the_added_die_without_a_place(page, db_path):
    create_game(page)
    page.check("input[name=roll][value='3']")
    take_photo(page, SAMPLES / "s11_wide_touching.jpg")
    _add_missing(page, "5r")
    page.click("#point-skip")
    expect(page.locator("#point-note")).to_be_hidden()
    # a tap on the photo now points at nothing
    page.locator("#overlay").click(position={"x": 3, "y": 3})
    expect(page.locator("#overlay .die-outline.pointed")).to_have_count(0)
    answer_checks(page)
    page.click("#confirm")
    expect(page.locator(".history li")).to_have_count(1)
    labels = Store(db_path).get_photo(int(_game(page)["attempts"][0]["photo_id"])).labels
    assert labels["unboxed"] == 1 and not any(d.get("pointed") for d in labels["dice"])


@needs_models
def test_the_turn_screen_says_per_ink_and_per_value_what_the_set_learnt(page):
    create_game(page)
    page.check("input[name=roll][value='3']")
    take_photo(page, SAMPLES / "s00_white_10.jpg")
    tokens = page.locator("#dice .chip[data-index]").evaluate_all("cs => cs.map(c => c.dataset.token)")
    answer_checks(page)
    page.click("#confirm")
    expect(page.locator("#learnt")).to_contain_text("Learnt from 10 dice", timeout=20_000)
    page.click("#learnt-detail summary")
    inks = {"r": "red", "o": "orange", "g": "green", "b": "blue"}
    for token in tokens:  # each ink and each value of the dice confirmed, with its count
        value, ink = token[:-1], inks[token[-1]]
        shown = page.locator(f"#learnt-detail li[data-kind=ink][data-name={ink}]")
        expect(shown).to_contain_text(f"{ink} ink: learnt from {sum(t[-1] == token[-1] for t in tokens)}")
        expect(page.locator(f"#learnt-detail li[data-kind=value][data-name='{value}']")).to_contain_text(
            f"learnt from {sum(t[:-1] == value for t in tokens)}")
    expect(page.locator("#learnt-detail li")).to_have_count(len({t[-1] for t in tokens}) + len({t[:-1] for t in tokens}))
