"""The turn screen as a player at the table uses it, in real Chromium at phone size (390x844):
no false alarm after the page's own Confirm, the verdict and Confirm within reach, the roll
that moves on, each die's crop with its chip, counts that say what to check."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageOps
from playwright.sync_api import Page, expect

from browser_helpers import PHONE, add_dice, add_die, answer_checks, create_game, in_viewport, take_photo
from conftest import REPO, models_ready
from companion.game import MAX_NAME_LENGTH

pytestmark = pytest.mark.browser
SAMPLES = REPO / "sample_images"
needs_models = pytest.mark.skipif(not models_ready(), reason="reading a photo needs models/*.onnx")
PHASE_1_MADE = ["7b", "7r", "7g", "3o", "3r", "Wb"]
PHASE_1_MISSED = ["7b", "7r", "3o", "1g", "9r", "10o"]


def second_page(browser, live_server, game_id: str) -> Page:
    page = browser.new_context(viewport=PHONE, base_url=live_server.url).new_page()
    page.goto(f"/#/game/{game_id}")
    expect(page.locator("#live")).to_be_visible()
    return page


# --- 1. the page knows its own changes ----------------------------------------------------------

def test_the_pages_own_confirm_seen_live_before_its_reply_raises_no_alarm(page):
    create_game(page)
    expect(page.locator("#live")).to_be_visible()
    add_dice(page, PHASE_1_MADE)
    expect(page.locator("#verdict")).to_contain_text("complete")
    staged = []

    def reply_after_the_live_update(route):
        response = route.fetch()  # the server records the attempt and sends the live update now
        # Hold the reply until the page has drawn the live update of its own attempt.
        page.wait_for_function("() => document.querySelector('#current-player').textContent === 'Bob'")
        staged.append(True)
        route.fulfill(response=response)

    page.route("**/attempts", reply_after_the_live_update)
    page.click("#confirm")
    expect(page.locator(".history li")).to_have_count(1)
    page.wait_for_timeout(300)  # the reply is drawn too
    assert staged == [True]
    expect(page.locator("#turn-error")).to_be_hidden()
    expect(page.locator("#current-player")).to_have_text("Bob")


def test_the_pages_own_undo_seen_live_before_its_reply_raises_no_alarm(page):
    create_game(page)
    expect(page.locator("#live")).to_be_visible()
    add_dice(page, PHASE_1_MADE)
    page.click("#confirm")
    expect(page.locator("#current-player")).to_have_text("Bob")
    add_die(page, "5r")  # Bob's dice being entered when Ann's attempt is undone here
    staged = []

    def reply_after_the_live_update(route):
        if route.request.method != "DELETE":
            return route.continue_()
        response = route.fetch()
        page.wait_for_function("() => document.querySelector('#current-player').textContent === 'Ann'")
        staged.append(True)
        route.fulfill(response=response)

    page.route("**/attempts/*", reply_after_the_live_update)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#undo")
    expect(page.locator(".history li")).to_have_count(0)
    page.wait_for_timeout(300)
    assert staged == [True]
    expect(page.locator("#turn-error")).to_be_hidden()


# The page keeps its turn on the server a moment after each change; when the other device's
# confirm lands first, that keep is refused (409) and the page drops it, as it should.
@pytest.mark.console_errors
def test_a_change_from_another_device_warns_until_it_no_longer_applies(browser, page, live_server):
    game_id = create_game(page)
    other = second_page(browser, live_server, game_id)
    expect(page.locator("#live")).to_be_visible()
    add_die(page, "5r")
    add_dice(other, PHASE_1_MADE)
    other.click("#confirm")
    expect(page.locator("#turn-error")).to_contain_text("changed on another device")
    expect(page.locator("#turn-error")).to_contain_text("It is now Bob's turn")
    # The other device undoes it: "It is now Bob's turn" is no longer true, so the notice goes.
    other.once("dialog", lambda dialog: dialog.accept())
    other.click("#undo")
    expect(page.locator("#current-player")).to_have_text("Ann")
    expect(page.locator("#turn-error")).to_be_hidden()
    other.context.close()


# --- 2 and 4. Confirm within reach; the roll moves on; a miss is a deliberate step ---------------

@needs_models
def test_after_a_photo_the_verdict_and_confirm_are_on_screen_and_then_the_next_player(page):
    create_game(page)
    page.check("input[name=roll][value='3']")  # the final roll: Confirm is the main action
    take_photo(page, SAMPLES / "s12_far_phone.jpg")
    assert page.evaluate("scrollY") == 0
    assert in_viewport(page, "#verdict")
    assert answer_checks(page) > 0  # the reader doubts dice that could change this miss
    assert in_viewport(page, "#confirm")
    page.click("#confirm")
    expect(page.locator(".history li")).to_have_count(1)
    expect(page.locator("#current-player")).to_have_text("Bob")
    assert page.evaluate("scrollY") == 0
    assert in_viewport(page, "#current-player")


@needs_models
def test_a_turn_whose_phase_is_made_takes_two_taps_and_no_scroll(page):
    create_game(page)
    take_photo(page, SAMPLES / "s00_white_10.jpg")  # tap 1: the photo (read sure, Phase 1 made)
    expect(page.locator("#verdict")).to_contain_text("Phase 1 complete")
    assert in_viewport(page, "#confirm")
    page.click("#confirm", no_wait_after=True)  # tap 2
    expect(page.locator("#current-player")).to_have_text("Bob")
    assert page.evaluate("scrollY") == 0


@needs_models
def test_each_photo_of_a_turn_moves_the_roll_on_and_a_confirm_starts_again_at_roll_1(page):
    create_game(page)
    photo = SAMPLES / "s00_white_10.jpg"
    for roll in ("1", "2", "3"):
        take_photo(page, photo)
        expect(page.locator(f"input[name=roll][value='{roll}']")).to_be_checked()
    take_photo(page, photo)  # a fourth photo still shows the final roll
    expect(page.locator("input[name=roll][value='3']")).to_be_checked()
    page.click("#confirm")
    expect(page.locator("#current-player")).to_have_text("Bob")
    expect(page.locator("input[name=roll][value='1']")).to_be_checked()
    take_photo(page, photo)
    expect(page.locator("input[name=roll][value='1']")).to_be_checked()


@needs_models
def test_a_photo_after_dice_typed_in_is_the_next_roll(page):
    create_game(page)
    add_dice(page, PHASE_1_MISSED)
    expect(page.locator("#next-roll")).to_have_text("Photo of roll 2")
    take_photo(page, SAMPLES / "s00_white_10.jpg")
    expect(page.locator("input[name=roll][value='2']")).to_be_checked()


def test_with_rolls_left_the_main_action_is_the_next_roll_and_a_miss_takes_a_second_step(page):
    create_game(page)
    add_dice(page, PHASE_1_MISSED)
    expect(page.locator("#verdict")).to_contain_text("not complete")
    expect(page.locator("#next-roll")).to_be_visible()
    expect(page.locator("#next-roll")).to_have_class("btn primary big")
    expect(page.locator("#next-roll")).to_have_text("Photo of roll 2")
    expect(page.locator("#confirm")).to_be_hidden()  # one tap cannot end the turn as a miss
    page.click("#end-turn")
    expect(page.locator("#confirm")).to_be_visible()
    expect(page.locator("#confirm")).to_have_text("Confirm: Phase 1 missed")
    page.click("#end-back")
    expect(page.locator("#confirm")).to_be_hidden()
    page.check("input[name=roll][value='3']")  # the final roll: a miss is the turn's end
    expect(page.locator("#confirm")).to_be_visible()
    page.click("#confirm")
    expect(page.locator(".history li")).to_contain_text("missed")


# --- 3. hidden controls are hidden; errors are sentences ----------------------------------------

def test_live_camera_is_not_offered_where_the_browser_has_no_camera_api(browser, live_server):
    context = browser.new_context(viewport=PHONE, base_url=live_server.url)
    # As on a phone over plain HTTP on the LAN: no navigator.mediaDevices at all.
    context.add_init_script("Object.defineProperty(Navigator.prototype, 'mediaDevices', { get: () => undefined });")
    page = context.new_page()
    create_game(page)
    expect(page.locator("#camera-open")).to_be_hidden()
    context.close()


def test_a_camera_that_cannot_open_is_told_in_a_sentence(browser, live_server):
    context = browser.new_context(viewport=PHONE, base_url=live_server.url)
    context.add_init_script("""navigator.mediaDevices.getUserMedia = () =>
        Promise.reject(new DOMException("Permission denied", "NotAllowedError"));""")
    page = context.new_page()
    create_game(page)
    page.click("#camera-open")
    expect(page.locator("#turn-error")).to_have_text("The camera was not allowed for this page. Use “Take photo” instead.")
    context.close()


def test_the_add_die_picker_offers_no_remove(page):
    create_game(page)
    page.click("#add-die")
    expect(page.locator("#picker")).to_be_visible()
    expect(page.locator("#picker [data-act=remove]")).to_be_hidden()
    page.click("#picker [data-act=cancel]")
    add_die(page, "7b")
    page.click("#dice .chip[data-index='0']")
    expect(page.locator("#picker [data-act=remove]")).to_be_visible()  # correcting a die can


# --- 5 and 6. crops with the chips, labels off the dice, counts that say what to check ----------

def chip_crops(page: Page) -> list[dict]:
    return page.evaluate("""() => [...document.querySelectorAll('#dice .chip[data-index]')].map((chip) => {
        const crop = chip.querySelector('.crop');
        if (!crop) return null;
        const style = getComputedStyle(crop);
        const [sw] = style.backgroundSize.split(' ').map(parseFloat);
        const [px, py] = style.backgroundPosition.split(' ').map(parseFloat);
        return { image: style.backgroundImage, visible: crop.getBoundingClientRect().width > 40,
                 sw, px, py, w: crop.clientWidth, h: crop.clientHeight };
    })""")


@needs_models
def test_each_chip_shows_its_dies_crop_of_the_photo_and_shares_its_number(page):
    create_game(page)
    take_photo(page, SAMPLES / "s12_far_phone.jpg")
    reading = page.evaluate("""async () => {
        const url = document.querySelector('#photo-img').getAttribute('src');
        return { url, width: document.querySelector('#photo-img').naturalWidth };
    }""")
    boxes = page.evaluate("""() => [...document.querySelectorAll('#overlay .die-outline')].map((g) => {
        const r = g.querySelector('polygon').getBBox(); return [r.x, r.y, r.x + r.width, r.y + r.height]; })""")
    crops = chip_crops(page)
    assert len(crops) == 10 and all(crops)
    for i, crop in enumerate(crops):
        assert reading["url"] in crop["image"] and crop["visible"]
        # The centre of the crop, in photo pixels, lies on the die's own face.
        k = crop["sw"] / reading["width"]
        cx = (crop["w"] / 2 - crop["px"]) / k
        cy = (crop["h"] / 2 - crop["py"]) / k
        x0, y0, x1, y1 = boxes[i]
        assert x0 <= cx <= x1 and y0 <= cy <= y1, (i, cx, cy, boxes[i])
    chip_numbers = page.locator("#dice .chip .n").all_text_contents()
    outline_numbers = page.locator("#overlay .die-outline .num text").all_text_contents()
    assert chip_numbers == outline_numbers == [str(n) for n in range(1, 11)]


@needs_models
@pytest.mark.parametrize("photo", ["s11_wide_touching.jpg", "s12_far_phone.jpg", "s00_white_10.jpg"])
def test_the_numbers_on_the_photo_cover_no_die_and_no_other_number(page, photo):
    create_game(page)
    take_photo(page, SAMPLES / photo)
    page.wait_for_timeout(300)  # the outlines are drawn again at the loaded photo's scale
    labels = page.locator("#overlay .die-outline text").evaluate_all("rs => rs.map(r => { const b = r.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; })")
    dice = page.locator("#overlay polygon").evaluate_all("ps => ps.map(p => { const b = p.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; })")
    assert labels

    def overlap(a, b):
        return min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5

    for i, a in enumerate(labels):
        assert not any(overlap(a, b) for b in labels[i + 1:]), f"number {i + 1} overlaps another number"
        assert not any(overlap(a, d) for d in dice), f"number {i + 1} covers a die"


@needs_models
def test_the_count_says_how_many_to_check_and_unsure_dice_stand_out(page):
    create_game(page)
    take_photo(page, SAMPLES / "s12_far_phone.jpg")
    chips = page.locator("#dice .chip[data-index]")
    expect(chips).to_have_count(10)
    unsure = page.locator("#dice .chip.uncertain").count()
    assert unsure > 0  # this far photo has dice the reader is unsure of
    expect(page.locator("#photo-note")).to_contain_text(f"10 dice read, {unsure} to check")
    expect(page.locator("#uncertain-note")).to_contain_text(f"{unsure} dice to check")
    expect(page.locator("#count-note")).to_be_hidden()
    # The advice dims the dice to reroll, an unsure one too (its value is about to change);
    # an unsure die it keeps stays undimmed and boldly ringed.
    expect(page.locator("#advice-keep")).to_be_visible(timeout=60_000)
    marks = page.locator("#dice .chip[data-index]").evaluate_all(
        "cs => cs.map(c => [c.className, Number(getComputedStyle(c).opacity), getComputedStyle(c).outlineWidth])")
    for classes, opacity, outline in marks:
        if "uncertain" in classes:
            assert float(outline.rstrip("px")) >= 4, (classes, outline)
            assert (opacity < 1) == ("reroll" in classes), (classes, opacity)
    assert any(opacity < 1 for classes, opacity, _ in marks if "reroll" in classes and "uncertain" not in classes)


@needs_models
def test_fewer_than_ten_dice_keep_the_add_hint(page):
    create_game(page)
    take_photo(page, SAMPLES / "s11_wide_touching.jpg")
    n = page.locator("#dice .chip[data-index]").count()
    assert n < 10
    expect(page.locator("#count-note")).to_contain_text(f"{n} of 10 dice: if one was missed")
    expect(page.locator("#photo-note")).to_contain_text(f"{n} dice read")


# --- 7. the photo travels downscaled, upright; what the browser cannot decode goes as it is -----

def sent_photos(page: Page) -> list[bytes]:
    """The multipart heads of the photo uploads (Playwright leaves the file's bytes out)."""
    sent: list[bytes] = []

    def keep(route):
        sent.append(route.request.post_data_buffer or b"")
        route.continue_()

    page.route("**/photos", keep)
    return sent


@needs_models
def test_a_12_mp_photo_is_downscaled_upright_before_upload(page):
    create_game(page)
    info = page.evaluate("() => fetch('/api/info').then(r => r.json())")
    sent = sent_photos(page)
    original = SAMPLES / "s03_busy_exif.jpg"  # stored sideways, EXIF orientation 6
    take_photo(page, original)
    assert len(sent) == 1 and b'filename="s03_busy_exif.jpg"' in sent[0]
    url = page.locator("#photo-img").get_attribute("src")
    stored = page.evaluate("(url) => fetch(url).then(r => r.arrayBuffer()).then(b => Array.from(new Uint8Array(b)))", url)
    with Image.open(io.BytesIO(bytes(stored))) as image:
        assert image.format == "JPEG"
        assert max(image.size) == info["photo_long_side"]
        assert image.getexif().get(0x0112) in (None, 1)  # upright pixels, no turn left to do
        with Image.open(original) as source:
            upright = ImageOps.exif_transpose(source).size
        assert (image.width > image.height) == (upright[0] > upright[1])


@pytest.mark.console_errors  # the server's refusal, on purpose
def test_a_photo_the_browser_cannot_decode_is_sent_as_it_was(page, tmp_path):
    create_game(page)
    heic = tmp_path / "IMG_0001.HEIC"
    heic.write_bytes(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(64))
    sent = sent_photos(page)
    page.set_input_files("#photo-input", str(heic))
    # The server names HEIC from the file's own first bytes: the original arrived untouched.
    expect(page.locator("#turn-error")).to_contain_text("HEIC")
    assert len(sent) == 1 and b'filename="IMG_0001.HEIC"' in sent[0]


# --- 8. the smaller things ------------------------------------------------------------------

def words_per_line(page: Page, selector: str) -> list[int]:
    """How many words each line of the element's text holds, as laid out."""
    return page.evaluate("""(selector) => {
        const el = document.querySelector(selector);
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        const tops = [];
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const m of node.textContent.matchAll(/\\S+/g)) {
                const range = document.createRange();
                range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
                tops.push(Math.round(range.getClientRects()[0].top));
            }
        }
        const lines = new Map();
        tops.forEach((t) => lines.set(t, (lines.get(t) || 0) + 1));
        return [...lines.values()];
    }""", selector)


def solitaire(page: Page, name="Ann") -> None:
    page.goto("/")
    page.check("input[name=mode][value=solitaire]")
    page.fill("#players li:nth-child(1) input", name)
    page.click("#start-game")
    expect(page.locator("#current-player")).to_have_text(name)


def test_the_phase_name_leaves_no_word_alone_on_a_line(page):
    solitaire(page)
    add_dice(page, PHASE_1_MADE)
    page.click("#confirm")
    expect(page.locator("#current-phase")).to_have_text("Phase 2")
    lines = words_per_line(page, ".phase-name")
    assert len(lines) == 1 or min(lines) > 1, lines


def test_a_wild_shows_what_it_stands_for_under_it_not_as_an_equation(page):
    create_game(page)
    add_dice(page, PHASE_1_MADE)  # the blue wild stands for a 3
    expect(page.locator("#verdict")).to_contain_text("complete")
    groups = page.locator("#evaluation .groups")
    assert "=" not in groups.inner_text()
    wild = groups.locator(".wild-as")
    expect(wild).to_have_count(1)
    expect(wild.locator(".as")).to_have_text("as 3")
    chip, caption = wild.locator(".chip").bounding_box(), wild.locator(".as").bounding_box()
    assert caption["y"] >= chip["y"] + chip["height"] - 1  # under the chip, not between two chips


def test_in_small_chips_the_colour_letter_does_not_cover_the_digit(page):
    create_game(page)
    add_dice(page, ["10r", "10b", "10o", "9o", "9r", "9g"])
    expect(page.locator("#verdict")).to_contain_text("complete")
    small = page.locator("#evaluation .chip.small")
    expect(small).to_have_count(6)
    for i in range(6):
        digit = small.nth(i).locator(".v").bounding_box()
        letter = small.nth(i).locator(".l").bounding_box()
        assert letter["x"] >= digit["x"] + digit["width"] - 0.5, (i, digit, letter)


def test_six_long_names_scroll_sideways_with_the_row_labels_fixed_and_a_sign_of_more(page):
    names = [f"{n} " + "abcdefghij" * 3 for n in "ABCDEF"]
    create_game(page, [name[:MAX_NAME_LENGTH] for name in names])
    pad = page.locator("#scorepad")
    pad.scroll_into_view_if_needed()
    expect(page.locator("#pad-hint")).to_be_visible()
    expect(page.locator("#pad-hint")).to_contain_text("6 players")
    wrap = pad.bounding_box()
    heads = page.locator(".scorepad thead th.player").evaluate_all("hs => hs.map(h => h.getBoundingClientRect().right)")
    assert sum(right <= wrap["x"] + wrap["width"] for right in heads) >= 3  # more than two columns show
    label = page.locator(".scorepad tbody th").first
    before = label.bounding_box()["x"]
    pad.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    page.wait_for_timeout(200)
    assert abs(label.bounding_box()["x"] - before) < 1  # "Phase 1" stays where it was
    expect(page.locator("#pad-scroll")).to_have_class("pad-scroll more-left")


def test_blank_names_take_the_placeholders_they_show(page):
    page.goto("/")
    page.click("#start-game")
    expect(page.locator("#current-player")).to_have_text("Player 1")
    expect(page.locator(".scorepad thead")).to_contain_text("Player 2")


def test_one_name_in_a_standard_game_asks_whether_solitaire_was_meant(page):
    page.goto("/")
    page.fill("#players li:nth-child(1) input", "Ann")
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.click("#start-game")
    expect(page.locator("#current-player")).to_have_text("Ann")
    assert asked and "solitaire" in asked[0]
    expect(page.locator("#who .label")).to_contain_text("solitaire")


def test_a_lan_visitor_without_the_code_gets_a_readable_page_and_may_type_it(browser, server_factory):
    with server_factory(join_code="ABCD-EF23") as server:
        context = browser.new_context(viewport=PHONE, base_url=server.url)
        page = context.new_page()
        assert page.goto("/").status == 403
        field = page.locator("input[name=code]")
        expect(field).to_be_visible()
        size = page.locator("main p").first.evaluate("p => parseFloat(getComputedStyle(p).fontSize)")
        assert size >= 16
        field.fill("abcdef23")  # as typed on a phone: lower case, no dash
        page.click("button[type=submit]")
        expect(page.locator("#start-game")).to_be_visible()
        context.close()
