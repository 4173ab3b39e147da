"""A turn the player can trust, in real Chromium at phone size (390x844): no result the
player did not see, no Confirm with a die missing or a doubt that matters, a reload that loses
nothing, what was learnt shown at once, exports, and targets a thumb can hit."""

from __future__ import annotations

import colorsys
import csv
import io
import json
import re
import subprocess
import sys

import pytest
from playwright.sync_api import Page, expect

from browser_helpers import PHONE, add_dice, add_die, answer_checks, create_game, in_viewport, pick, take_photo
from conftest import REPO, models_ready
from companion.dice import DiceError, parse_faces, standard_set
from companion.store import Store

pytestmark = pytest.mark.browser
SAMPLES = REPO / "sample_images"
needs_models = pytest.mark.skipif(not models_ready(), reason="reading a photo needs models/*.onnx")
PHASE_1_MADE = ["7b", "7r", "7g", "3o", "3r", "Wb"]
PHASE_1_MISSED = ["7b", "7r", "3o", "1g", "9r", "10o"]
TEN_POSSIBLE = ["Wb", "1b", "10r", "Wb", "10b", "10g", "6o", "5b", "2o", "10o"]  # as s00_white_10 shows


def recorded(page: Page) -> int:
    return len(page.evaluate("(id) => fetch('/api/games/' + id).then(r => r.json())", game_of(page))["attempts"])


def game_of(page: Page) -> str:
    found = re.search(r"#/game/([\w-]+)", page.url)
    assert found, page.url
    return found.group(1)


def tap_twice(page: Page, selector: str, gap_ms: int, taps: int = 2) -> None:
    """Taps at the centre of `selector` as a thumb would: the same spot, `gap_ms` apart. A
    machine too busy to tap at that pace (the page saw taps further apart than a double tap)
    cannot judge the guard: the test is skipped then, never passed."""
    box = page.locator(selector).bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.evaluate("() => { window.tapTimes = []; document.addEventListener('pointerdown', "
                  "(e) => window.tapTimes.push(e.timeStamp), { capture: true }); }")
    for i in range(taps):
        if i:
            page.wait_for_timeout(gap_ms)
        page.mouse.click(x, y)
    times = page.evaluate("() => window.tapTimes")
    gaps = [b - a for a, b in zip(times, times[1:])]
    if len(times) != taps or max(gaps) > gap_ms + 150:
        pytest.skip(f"taps arrived {[round(g) for g in gaps]} ms apart, not {gap_ms}: the machine is too busy")


def console_errors(page: Page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    return errors


# --- 1. no accidental result ------------------------------------------------------------------

@pytest.mark.parametrize("gap_ms", [50, 120, 250])
def test_a_double_tap_on_end_turn_records_nothing_the_player_did_not_see(page, gap_ms):
    create_game(page)
    add_dice(page, PHASE_1_MISSED)
    expect(page.locator("#end-turn")).to_be_visible()
    page.wait_for_timeout(600)  # the bar as the player has seen it for a while
    tap_twice(page, "#end-turn", gap_ms)
    expect(page.locator("#confirm")).to_have_text("Confirm: Phase 1 missed")  # now shown, not taken
    page.wait_for_timeout(800)
    assert recorded(page) == 0
    expect(page.locator(".history li")).to_have_count(0)
    page.click("#confirm")  # seen, then tapped: recorded
    expect(page.locator(".history li")).to_have_count(1)


@needs_models
@pytest.mark.parametrize("gap_ms", [50, 120, 250])
def test_a_triple_tap_on_a_check_confirms_nothing(page, gap_ms):
    create_game(page)
    page.check("input[name=roll][value='3']")
    take_photo(page, SAMPLES / "s12_far_phone.jpg")
    expect(page.locator("#ask-yes")).to_be_visible()
    page.wait_for_timeout(600)
    tap_twice(page, "#ask-yes", gap_ms, taps=3)
    page.wait_for_timeout(800)
    assert recorded(page) == 0


def test_the_result_of_a_confirm_covers_no_undo(page):
    create_game(page)
    add_dice(page, PHASE_1_MADE)
    page.click("#confirm")
    expect(page.locator("#current-player")).to_have_text("Bob")
    # Undo brought to where a message floats over the page (the bottom of the screen, where a
    # toast would be): nothing lies over any part of it.
    page.evaluate("""() => { const t = document.querySelector('#toast'), u = document.querySelector('#undo');
        const target = t.hidden ? innerHeight - 70 : t.getBoundingClientRect().top;
        window.scrollBy(0, u.getBoundingClientRect().top - target); }""")
    assert page.locator("#undo").evaluate("""el => { const r = el.getBoundingClientRect();
        return [[.5, .5], [.1, .15], [.9, .15], [.1, .85], [.9, .85]].every(([fx, fy]) => {
            const hit = document.elementFromPoint(r.left + fx * r.width, r.top + fy * r.height);
            return !!hit && (hit === el || el.contains(hit)); }); }""")
    expect(page.locator("#result")).to_contain_text("Ann: Phase 1 made")
    page.evaluate("window.scrollTo(0, 0)")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#undo-result")  # the result carries its own Undo
    expect(page.locator("#current-player")).to_have_text("Ann")


# --- 2. a die missing from the photo is asked for ----------------------------------------------

@needs_models
def test_a_photo_with_a_die_missing_asks_for_it_before_confirm(page):
    create_game(page)
    page.check("input[name=roll][value='3']")  # the final roll: Confirm would be the main action
    take_photo(page, SAMPLES / "s11_wide_touching.jpg")
    expect(page.locator("#dice .chip[data-index]")).to_have_count(9)
    expect(page.locator("#bar-question")).to_contain_text("9 of 10 dice")
    expect(page.locator("#confirm")).to_be_hidden()
    assert in_viewport(page, "#bar-add")
    page.click("#bar-add")
    pick(page, "5r")
    page.click("#picker [data-act=ok]")
    expect(page.locator("#dice .chip[data-index]")).to_have_count(10)
    answer_checks(page)
    expect(page.locator("#confirm")).to_be_visible()


@needs_models
def test_dice_set_aside_may_be_confirmed_without_the_missing_one(page):
    create_game(page)
    page.check("input[name=roll][value='3']")
    take_photo(page, SAMPLES / "s11_wide_touching.jpg")
    expect(page.locator("#confirm")).to_be_hidden()
    page.click("#set-aside")
    answer_checks(page)
    expect(page.locator("#confirm")).to_be_visible()


# --- 3. ask only about the doubts that could change the result; keep what was checked ----------

def possible(tokens: list[str]) -> bool:
    """The set can show these faces at once (the core's check)."""
    try:
        standard_set().check_shown(parse_faces(tokens))
    except DiceError:
        return False
    return True


def doubts_in_reading(page: Page, doubts: dict[int, dict]) -> None:
    """The photo's reading as the reader gives it with its doubts (the reading's contract:
    each die's "doubt" and "runner_up"); the photo itself is read for real."""
    def with_doubts(route):
        response = route.fetch()
        body = response.json()
        for index, doubt in doubts.items():
            body["reading"]["dice"][index].update(doubt, uncertain=True)
        route.fulfill(response=response, json=body)

    page.route("**/api/games/*/photos", with_doubts)


@needs_models
def test_only_the_doubts_that_could_change_the_result_are_asked(page):
    create_game(page)
    page.check("input[name=roll][value='3']")
    # s00 reads Wb 1b 10r Wb 10b 10g 6o 5b 2o 10o: Phase 1 made with 10r 10b 10g and Wb Wb 10o, 40.
    doubts_in_reading(page, {
        4: {"doubt": "color", "runner_up": {"value": 10, "color": "green"}},  # colour: not in phase 1
        6: {"doubt": "die", "runner_up": None, "confidence": 1.0},  # sure of 6o, unused: without it, the same 40
        8: {"doubt": "value", "runner_up": {"value": 3, "color": "orange"}},  # 2o's die prints no other orange
        7: {"doubt": "value", "runner_up": {"value": 3, "color": "blue"}},  # 3b is unused, but 6b would score 42
        2: {"doubt": "value", "runner_up": {"value": 9, "color": "red"}},  # 10r or 9r: 40 or 39
    })
    take_photo(page, SAMPLES / "s00_white_10.jpg")
    expect(page.locator("#verdict")).to_contain_text("40")
    expect(page.locator("#dice .chip.uncertain")).to_have_count(2)
    assert page.locator("#dice .chip.uncertain").evaluate_all("cs => cs.map(c => c.dataset.index)") == ["2", "7"]
    expect(page.locator("#dice .chip.doubted")).to_have_count(3)  # shown quietly
    expect(page.locator("#dice .chip.doubted .q")).to_have_count(0)
    expect(page.locator("#photo-note")).to_contain_text("10 dice read, 2 to check")
    expect(page.locator("#bar-question")).to_contain_text("Die 3: is it 10 red?")
    expect(page.locator("#confirm")).to_be_hidden()
    assert answer_checks(page) == 2
    expect(page.locator("#confirm")).to_be_visible()


@needs_models
def test_the_confirmed_photo_keeps_which_dice_the_player_checked(page, db_path):
    create_game(page)
    page.check("input[name=roll][value='3']")
    take_photo(page, SAMPLES / "s12_far_phone.jpg")
    unsure = page.locator("#dice .chip.uncertain").evaluate_all("cs => cs.map(c => Number(c.dataset.index))")
    assert unsure
    tokens = page.locator("#dice .chip[data-index]").evaluate_all("cs => cs.map(c => c.dataset.token)")
    faces = ("5r", "6o", "9g", "Wr", "2b", "10b", *sorted({f.token for d in standard_set().dice for f in d.faces}))
    fix = next(t for t in faces if t != tokens[unsure[0]] and possible(
        tokens[:unsure[0]] + [t] + tokens[unsure[0] + 1:]))
    page.click(f"#dice .chip[data-index='{unsure[0]}']")  # corrected by hand
    pick(page, fix)
    page.click("#picker [data-act=ok]")
    answered = []
    while True:  # the others the bar asks about: looked at, right as read
        page.wait_for_function("() => document.querySelector('#verdict').textContent !== 'Scoring…'"
                               " && (!document.querySelector('#ask-yes').hidden"
                               " || !document.querySelector('#confirm').hidden)")
        if not page.locator("#ask-yes").is_visible():
            break
        answered.append(int(re.match(r"Die (\d+):", page.locator("#bar-question").inner_text()).group(1)) - 1)
        page.click("#ask-yes")
        page.wait_for_function("(n) => document.querySelector('#bar-question').hidden"
                               " || !document.querySelector('#bar-question').textContent.startsWith(`Die ${n}:`)",
                               arg=answered[-1] + 1)
    page.click("#confirm")
    expect(page.locator(".history li")).to_have_count(1)
    labels = Store(db_path).get_photo(int(page.evaluate("(id) => fetch('/api/games/' + id).then(r => r.json())",
                                                        game_of(page))["attempts"][0]["photo_id"])).labels
    checked = [label["checked"] for label in labels["dice"]]
    assert answered and [i for i, c in enumerate(checked) if c] == sorted([unsure[0], *answered])
    assert labels["dice"][unsure[0]]["corrected"]


# --- 4. what was learnt shows at once on every phone -------------------------------------------

@needs_models
def test_learnt_from_counts_the_confirm_just_made_on_every_phone(browser, page, live_server):
    game_id = create_game(page)
    other = browser.new_context(viewport=PHONE, base_url=live_server.url).new_page()
    other.goto(f"/#/game/{game_id}")
    expect(other.locator("#live")).to_be_visible()
    expect(page.locator("#learnt")).to_contain_text("nothing learnt yet")
    page.check("input[name=roll][value='3']")
    take_photo(page, SAMPLES / "s00_white_10.jpg")
    page.click("#confirm")
    expect(page.locator("#learnt")).to_contain_text("Learnt from 10 dice", timeout=20_000)
    expect(other.locator("#learnt")).to_contain_text("Learnt from 10 dice", timeout=20_000)
    other.context.close()


# --- 5 and 13. full-size fields, targets of 44 px --------------------------------------------

def small_targets(page: Page) -> list[str]:
    """Every visible thing to tap that is under 44 CSS px either way (a checkbox or radio
    counts as its label, which takes its taps)."""
    return page.evaluate("""() => {
        const seen = new Set(), small = [];
        const targets = document.querySelectorAll('button, a[href], select, input, label.btn, [role=button]');
        for (let el of targets) {
            if (el.matches('input[type=checkbox], input[type=radio], input[type=file]')) el = el.closest('label');
            if (!el || seen.has(el)) continue;
            seen.add(el);
            const r = el.getBoundingClientRect();
            const style = getComputedStyle(el);
            if (!r.width || !r.height || style.visibility === 'hidden' || el.closest('dialog:not([open])')) continue;
            if (el.closest('svg')) continue;  // the photo's outlines: the chips are their targets
            if (r.width < 44 || r.height < 44) small.push(`${el.id || el.className || el.tagName}: ${Math.round(r.width)}x${Math.round(r.height)}`);
        }
        return small;
    }""")


def test_the_dice_set_picker_and_the_set_names_are_full_size(page, live_server):
    page.goto("/")
    page.evaluate("fetch('/api/dice-sets', {method: 'POST', headers: {'Content-Type': 'application/json'},"
                  " body: JSON.stringify({name: 'Grandma\\'s dice'})})")
    page.reload()
    select = page.locator("#dice-set")
    expect(select).to_be_visible()
    box = select.bounding_box()
    assert box["height"] >= 44 and box["width"] >= 200, box
    select.select_option(label="Grandma's dice")
    assert page.evaluate("""() => { const s = document.querySelector('#dice-set');
        return s.options[s.selectedIndex].text; }""").startswith("Grandma's dice")
    for field in page.locator(".dice-sets input[type=text]").all():
        assert field.bounding_box()["height"] >= 44


def test_every_tap_target_is_at_least_44_px(page, live_server):
    page.goto("/")
    page.evaluate("fetch('/api/dice-sets', {method: 'POST', headers: {'Content-Type': 'application/json'},"
                  " body: JSON.stringify({name: 'Second set'})})")
    create_game(page)
    add_dice(page, TEN_POSSIBLE)
    expect(page.locator("#advice-keep")).to_be_visible(timeout=60_000)
    assert small_targets(page) == []
    page.check("input[name=roll][value='3']")
    expect(page.locator("#confirm")).to_be_visible()
    assert small_targets(page) == []
    page.goto("/")
    expect(page.locator("#dice-set")).to_be_visible()
    assert small_targets(page) == []
    # the plan toggle shows only where the two plans differ: its buttons, as the page draws them
    height = page.evaluate("""() => { const d = document.createElement('div'); d.className = 'advice';
        d.innerHTML = '<div class="plan-toggle"><button class="btn small">Best chance</button></div>';
        document.querySelector('main').appendChild(d);
        const h = d.querySelector('button').getBoundingClientRect().height; d.remove(); return h; }""")
    assert height >= 44


def test_the_colour_letter_on_a_chip_is_large_enough_to_read(page):
    create_game(page)
    add_dice(page, ["7r", "7g"])
    sizes = page.locator("#dice .chip .l").evaluate_all("ls => ls.map(l => parseFloat(getComputedStyle(l).fontSize))")
    assert sizes and min(sizes) >= 14, sizes


# --- 6. a reload mid-turn keeps the photo and the roll -------------------------------------------

@needs_models
def test_a_reload_mid_turn_keeps_the_photo_the_roll_and_the_corrections(page):
    create_game(page)
    take_photo(page, SAMPLES / "s00_white_10.jpg")
    take_photo(page, SAMPLES / "s00_white_10.jpg")  # the second photo of the turn: roll 2
    expect(page.locator("input[name=roll][value='2']")).to_be_checked()
    page.click("#dice .chip[data-index='0']")
    pick(page, "3g")
    page.click("#picker [data-act=ok]")
    expect(page.locator("#dice .chip[data-index='0']")).to_have_attribute("data-token", "3g")
    src = page.locator("#photo-img").get_attribute("src")
    page.wait_for_timeout(800)  # the turn is kept a moment after the last change
    page.reload()
    expect(page.locator("#current-player")).to_have_text("Ann")
    expect(page.locator("#photo")).to_be_visible()
    assert page.locator("#photo-img").get_attribute("src") == src
    expect(page.locator("input[name=roll][value='2']")).to_be_checked()
    expect(page.locator("#dice .chip[data-index]")).to_have_count(10)
    expect(page.locator("#dice .chip[data-index='0']")).to_have_attribute("data-token", "3g")
    expect(page.locator("#advice-odds")).to_contain_text("chance", timeout=60_000)
    expect(page.locator("#advice .advice-head")).to_contain_text("1 roll left")


# --- 7. long names -----------------------------------------------------------------------------

def words_broken(page: Page, selector: str) -> list[str]:
    """The words of the elements' text that the layout splits over two lines."""
    return page.evaluate("""(selector) => {
        const broken = [];
        for (const el of document.querySelectorAll(selector)) {
            const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                for (const m of node.textContent.matchAll(/[^\\s-]+-?/g)) {
                    const range = document.createRange();
                    range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
                    const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                    if (tops.size > 1) broken.push(m[0]);
                }
            }
        }
        return broken;
    }""", selector)


def test_long_names_break_between_words_never_inside_one(page):
    names = ["Maximilian-Alexander", "Anna Maria Schmidt", "Bartholomew", "Wolfgang Amadeus", "Kim", "Christopherson"]
    page.goto("/")
    for i, name in enumerate(names):
        if i >= 2:
            page.click("#add-player")
        field = page.locator(f"#players li:nth-child({i + 1}) input")
        field.fill(name)
        # the whole name shows in its field while it is typed
        assert field.evaluate("f => f.scrollWidth <= f.clientWidth + 1"), name
    page.click("#start-game")
    expect(page.locator("#current-player")).to_have_text(names[0])
    assert words_broken(page, ".scorepad thead .pname") == []
    wrap = page.locator("#scorepad").bounding_box()
    heads = page.locator(".scorepad thead th.player").evaluate_all("hs => hs.map(h => h.getBoundingClientRect().right)")
    assert sum(right <= wrap["x"] + wrap["width"] for right in heads) >= 3
    titles = page.locator(".scorepad thead th.player").evaluate_all("hs => hs.map(h => h.title)")
    assert titles == names  # the whole name, where a word is cut short


# --- 8. a wrong join code --------------------------------------------------------------------

def test_a_wrong_join_code_says_so_and_keeps_what_was_typed(browser, server_factory):
    with server_factory(join_code="ABCD-EF23") as server:
        context = browser.new_context(viewport=PHONE, base_url=server.url)
        page = context.new_page()
        page.goto("/")
        expect(page.locator(".notice")).to_have_count(0)  # nothing typed yet: nothing wrong
        page.fill("input[name=code]", "abcd-ef32")
        page.click("button[type=submit]")
        expect(page.locator(".notice")).to_be_visible()
        expect(page.locator(".notice")).to_contain_text("not this scorepad's code")
        page.fill("input[name=code]", "abcd-ef23")
        page.click("button[type=submit]")
        expect(page.locator("#start-game")).to_be_visible()
        context.close()


# --- 9. advice marks -----------------------------------------------------------------------------

def hue(css: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css)[:3])
    return colorsys.rgb_to_hsv(r, g, b)[0] * 360


@needs_models
def test_keep_marks_are_whole_and_unlike_the_mark_of_a_die_to_check(page):
    create_game(page)
    take_photo(page, SAMPLES / "s12_far_phone.jpg")
    expect(page.locator("#advice-keep")).to_be_visible(timeout=60_000)
    expect(page.locator("#dice .chip.keep")).not_to_have_count(0)
    check = page.locator("#dice .chip.uncertain").first.evaluate("c => getComputedStyle(c).outlineColor")
    for chip in page.locator("#dice .chip.keep:not(.uncertain)").all():
        ring = chip.evaluate("c => getComputedStyle(c).outlineColor")
        assert abs(hue(ring) - hue(check)) >= 60, (ring, check)
    for chip in page.locator("#dice .chip.keep").all():
        chip.evaluate("c => c.scrollIntoView({block: 'center'})")
        c, k = chip.bounding_box(), chip.locator(".k").bounding_box()
        assert c["x"] <= k["x"] and k["x"] + k["width"] <= c["x"] + c["width"] + 0.5
        assert c["y"] <= k["y"] and k["y"] + k["height"] <= c["y"] + c["height"] + 0.5
        # nothing covers the badge: a tap on it reaches its chip
        assert chip.locator(".k").evaluate("""k => { const r = k.getBoundingClientRect();
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return !!hit && (hit === k || k.contains(hit) || hit.closest('.chip') === k.closest('.chip')); }""")


# --- 10. advice only for a possible roll ---------------------------------------------------------

def test_advice_is_asked_only_for_dice_the_set_can_show(page):
    errors = console_errors(page)
    advised = []
    page.on("request", lambda r: advised.append(r.url) if r.url.endswith("/api/advise") else None)
    create_game(page)
    add_dice(page, TEN_POSSIBLE[:9])
    add_die(page, "Wr")  # a fifth low die: the set has four
    expect(page.locator("#advice")).to_contain_text("cannot all be showing at once")
    page.wait_for_timeout(500)
    assert advised == [] and errors == []
    page.click("#dice .chip[data-index='9']")  # corrected to a possible roll: advice now
    pick(page, TEN_POSSIBLE[9])
    page.click("#picker [data-act=ok]")
    expect(page.locator("#advice-keep")).to_be_visible(timeout=60_000)
    assert len(advised) == 1 and errors == []


# --- 11. the scorepad to take home ---------------------------------------------------------------

def test_the_scorepad_prints_and_exports_as_csv_and_a_game_file_replay_reads(page, tmp_path):
    create_game(page)
    add_dice(page, PHASE_1_MADE)
    page.click("#confirm")
    expect(page.locator("#current-player")).to_have_text("Bob")
    add_dice(page, PHASE_1_MISSED)
    page.check("input[name=roll][value='3']")
    page.click("#confirm")
    expect(page.locator(".history li")).to_have_count(2)
    state = page.evaluate("(id) => fetch('/api/games/' + id).then(r => r.json())", game_of(page))
    with page.expect_download() as download:
        page.click("#export-csv")
    rows = list(csv.reader(io.StringIO(download.value.path().read_text("utf-8"))))
    assert rows[0] == ["", "Ann", "Bob"]
    assert rows[1] == ["Phase 1", "27", ""]
    assert rows[-1] == ["Total", *(str(p["total"]) for p in state["scorepad"]["players"])]
    with page.expect_download() as download:
        page.click("#export-json")
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.suffix == ".json"
    replay = subprocess.run([sys.executable, "-m", "companion", "replay", str(saved)],
                            capture_output=True, text=True, check=True)
    assert json.loads(replay.stdout) == state["scorepad"]
    page.emulate_media(media="print")
    expect(page.locator(".scorepad")).to_be_visible()
    for hidden in ("header.bar", "#turn-controls", "#export-csv", "#undo"):
        expect(page.locator(hidden)).to_be_hidden()


# --- 12. the start screen ------------------------------------------------------------------------

def test_start_game_is_on_screen_with_saved_games(page):
    page.goto("/")
    for names in (["Ann", "Bob"], ["Cy", "Di"], ["Ed", "Flo"]):
        page.evaluate("(players) => fetch('/api/games', {method: 'POST', headers: {'Content-Type': 'application/json'},"
                      " body: JSON.stringify({players})})", names)
    page.goto("/")
    expect(page.locator(".game-row")).to_have_count(3)
    assert in_viewport(page, "#start-game")
    expect(page.locator(".game-row").first).to_be_visible()
