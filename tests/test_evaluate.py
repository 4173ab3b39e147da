"""The evaluation script: its matching and its figures, on the samples with the real models."""

import json
from pathlib import Path

import cv2
import pytest

from companion.dice import parse_face
from companion.rules import best_score
from training.common import LabelledImage
from training.evaluate import (CARD_HEADER, SWAP_HEADER, ImageResult, Match, card_row, colour_swapped, main, summarise,
                               swap_rows)

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"


def _match(truth: str, pred: str | None, uncertain: bool = False) -> Match:
    return Match(parse_face(truth), None, parse_face(pred) if pred else None, None,
                 0.5 if uncertain else 0.99, uncertain)


@pytest.mark.parametrize("matches, false_positives, all_right, nothing_silent", [
    ([_match("3r", "3r"), _match("Wb", "Wb")], 0, True, True),
    ([_match("3r", "3r"), _match("6b", "9b", uncertain=True)], 0, False, True),
    ([_match("3r", "3r"), _match("6b", "9b")], 0, False, False),
    ([_match("3r", "3r"), _match("6b", None)], 0, False, False),
    ([_match("3r", "3r")], 1, False, False),
])
def test_a_photo_is_silently_wrong_only_when_an_error_is_not_flagged(matches, false_positives, all_right,
                                                                     nothing_silent):
    result = ImageResult(image=None, matches=matches, false_positives=false_positives)
    assert result.all_right is all_right
    assert result.nothing_silently_wrong is nothing_silent


@pytest.mark.parametrize("matches, extras, flagged_extras, sure, silent, wrong", [
    ([_match("3r", "3r"), _match("6b", "9b", uncertain=True)], 0, 0, 10, False, (1, 1)),
    ([_match("3r", "3r"), _match("6b", "9b")], 0, 0, 10, True, (1, 0)),
    # a missed die is flagged when fewer than 10 sure dice are read (the page asks for the rest)
    ([_match("3r", "3r"), _match("6b", None)], 0, 0, 9, False, (1, 1)),
    ([_match("3r", "3r"), _match("6b", None)], 1, 0, 10, True, (2, 0)),
    ([_match("3r", "3r")], 1, 1, 9, False, (1, 1)),
    ([_match("3r", "3r")], 2, 1, 9, True, (2, 1)),
])
def test_a_silent_error_is_a_wrong_missed_or_extra_die_without_a_flag(matches, extras, flagged_extras, sure,
                                                                      silent, wrong):
    result = ImageResult(None, matches, false_positives=extras, extras_flagged=flagged_extras, sure_dice=sure)
    assert result.silent_error is silent
    assert result.wrong() == wrong


def test_colour_swaps_are_the_inks_that_look_alike():
    assert colour_swapped(_match("3r", "3o")) and colour_swapped(_match("Wb", "Wg"))
    assert not colour_swapped(_match("3r", "3g")) and not colour_swapped(_match("3r", "4r"))
    assert not colour_swapped(_match("3r", None))


def test_the_phase_outcome_compares_the_dice_read_with_the_true_dice():
    truth = ["3r", "3o", "3g", "5b", "5r", "5g", "7b", "8b", "9o", "10g"]
    same = ImageResult(None, [_match(t, t) for t in truth])
    assert same.phase_outcomes() == [True] * 10
    one_off = ImageResult(None, [_match(t, t) for t in truth[:-1]] + [_match("10g", "5o")])
    got = one_off.phase_outcomes()
    want = [best_score(p, [parse_face(t) for t in truth]) == best_score(p, [parse_face(t) for t in truth[:-1] + ["5o"]])
            for p in range(1, 11)]
    assert got == want and not all(got)
    # an extra die read is part of what the scorepad gets
    extra = ImageResult(None, [_match(t, t) for t in truth[:-1]], false_positives=1, extra_faces=(parse_face("10g"),))
    assert extra.read_faces()[-1] == parse_face("10g")


def test_summary_counts_misses_against_recall_and_extras_against_precision():
    results = [ImageResult(None, [_match("3r", "3r"), _match("5g", None)], false_positives=1),
               ImageResult(None, [_match("7b", "1b", uncertain=True), _match("Wo", "Wo")])]
    s = summarise(results)
    assert s["dice"] == 4
    assert s["recall"] == pytest.approx(3 / 4)
    assert s["precision"] == pytest.approx(3 / 4)
    assert s["face_acc"] == pytest.approx(2 / 3)
    assert s["dice_right"] == pytest.approx(2 / 4)
    assert s["photos_all_right"] == 0.0
    assert s["photos_nothing_silently_wrong"] == 0.5
    assert s["acc_unflagged"] == 1.0


def test_needless_flags_are_the_right_dice_flagged_and_the_card_row_shows_each_column():
    results = [ImageResult(None, [_match("3r", "3r", uncertain=True), _match("5g", "5g"), _match("7b", "1b", uncertain=True),
                                  _match("Wo", None)]),
               ImageResult(None, [_match("2o", "2o"), _match("9g", "9g", uncertain=True)], false_positives=1)]
    s = summarise(results)
    assert s["right_flagged"] == pytest.approx(2 / 4)  # of 3r, 5g, 2o and 9g: 3r and 9g; the misread 1b is no needless flag
    row = card_row("data/stress_dark_calib", s).split(" | ")
    assert len(row) == CARD_HEADER.splitlines()[0].count("|") - 1
    assert row[1:4] == ["choose", "2", "0.000"] and row[-2] == "50.0%"
    assert card_row("data/val", summarise([ImageResult(None, [_match("3r", "3r")])])).split(" | ")[7:9] == ["-", "0.0%"]


def _photo(body: str, table: str, matches: list[Match]) -> ImageResult:
    return ImageResult(LabelledImage(Path("x.jpg"), 960, 540, (), {"body": body, "table": table, "seed": 1}), matches)


def test_swaps_are_counted_per_body_and_table_flagged_or_not():
    results = [_photo("light-grey", "felt-green", [_match("3r", "3o"), _match("5g", "5b", uncertain=True), _match("7b", "7b")]),
               _photo("light-grey", "wood", [_match("2o", "2o"), _match("9g", None)]),
               _photo("white", "felt-green", [_match("4r", "4r"), _match("6o", "6g")])]
    rows = [r.split(" | ") for r in swap_rows("data/table/report", results)]
    assert all(len(r) == SWAP_HEADER.splitlines()[0].count("|") - 1 for r in rows)
    by_name = {r[1]: r[2:] for r in rows}
    # a swap is red/orange or green/blue, flagged or not, among the dice found (not 6o read 6g, not the missed 9g)
    assert by_name["all"] == ["6", "2 (33.33%)", "1 |"]
    assert by_name["body light-grey"] == ["4", "2 (50.00%)", "1 |"]
    assert by_name["body white"] == ["2", "0 (0.00%)", "0 |"]
    assert by_name["table felt-green"] == ["5", "2 (40.00%)", "1 |"]
    assert by_name["table wood"][:2] == ["1", "0 (0.00%)"]
    assert not any(name.startswith("light_kind") for name in by_name)  # a condition the set does not vary in


def _labelled_copy(tmp_path: Path, n: int, wrong_label: bool) -> Path:
    """The first n samples' labels (pointing at the sample photos), one value changed if asked."""
    rows = [json.loads(line) for line in (SAMPLES / "labels.jsonl").read_text().splitlines()[:n]]
    for row in rows:
        row["image"] = str(SAMPLES / row["image"])
    if wrong_label:
        die = rows[0]["dice"][1]
        die["value"] = 7 if die["value"] != 7 else 8
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


@pytest.mark.parametrize("wrong_label", [False, True])
def test_evaluate_script_on_the_samples_with_the_real_models(tmp_path, capsys, wrong_label):
    (tmp_path / "data").mkdir()
    data = _labelled_copy(tmp_path / "data", 2, wrong_label)
    out, swaps = tmp_path / "figures.json", tmp_path / "swaps.md"
    assert main(["--data", str(data), "--json", str(out), "--swaps", str(swaps)]) == 0
    figures = json.loads(out.read_text())["overall"]
    assert swaps.read_text().splitlines()[2].startswith(f"| `{data}` | all | {figures['dice']} | 0 (0.00%) | 0 |")
    dice = sum(len(json.loads(line)["dice"]) for line in (data / "labels.jsonl").read_text().splitlines())
    assert figures["photos"] == 2 and figures["dice"] == dice
    assert figures["recall"] == 1.0
    if wrong_label:
        # the samples read right, so a changed label must show up as exactly one misreading
        assert figures["photos_all_right"] == 0.5
        assert figures["dice_right"] == pytest.approx((dice - 1) / dice)
        assert "first misreadings (1 in all)" in capsys.readouterr().out
    else:
        assert figures["photos_all_right"] == 1.0


def test_misread_faces_are_drawn_into_a_sheet(tmp_path):
    (tmp_path / "data").mkdir()
    data = _labelled_copy(tmp_path / "data", 1, wrong_label=True)
    sheet = tmp_path / "misreads.jpg"
    assert main(["--data", str(data), "--misreads", str(sheet)]) == 0
    image = cv2.imread(str(sheet))
    assert image.shape == (128, 128 * 8, 3)  # one face, one row of the sheet
    assert image[20:, :128].std() > 10 and image[:, 136:].max() < 16  # a face, then blank tiles
