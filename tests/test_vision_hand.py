"""A hand in the live view (companion/vision/hand.py): a hand held still beside the dice is seen;
the sample photos' tables, coins and papers are not hands."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest
from live_sequences import SAMPLE, SIZE, sequence

from companion.vision.hand import hand_in_view

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def labelled_boxes(name: str) -> tuple[list[list[float]], int]:
    for line in (SAMPLES / "labels.jsonl").read_text("utf-8").splitlines():
        label = json.loads(line)
        if label["image"] == name:
            return [d["box"] for d in label["dice"]], label["width"]
    raise KeyError(name)


def test_a_hand_held_still_beside_the_dice_is_seen_and_the_dice_alone_are_not():
    boxes, width = labelled_boxes(SAMPLE)
    scale = width / SIZE[0]  # the labels' pixels, the frame at SIZE
    assert hand_in_view(sequence("still_hand", frames=1)[0], boxes, scale)
    assert not hand_in_view(sequence("still", frames=1)[0], boxes, scale)


@pytest.mark.parametrize("name", sorted(json.loads(line)["image"] for line in
                                        (SAMPLES / "labels.jsonl").read_text("utf-8").splitlines()))
def test_no_sample_photo_shows_a_hand(name):
    boxes, width = labelled_boxes(name)
    image = cv2.imread(str(SAMPLES / name), cv2.IMREAD_COLOR)
    if image is None:  # WebP and PNG: OpenCV reads them too; a file it cannot read is no photo here
        pytest.skip(f"OpenCV cannot read {name}")
    assert not hand_in_view(image, boxes, width / image.shape[1])


def test_the_hand_levels_are_the_models():
    import dataclasses

    from companion.vision.tuning import shipped_tuning

    boxes, width = labelled_boxes(SAMPLE)
    frame = sequence("still_hand", frames=1)[0]
    never = dataclasses.replace(shipped_tuning().hand, hand_least_share=0.9)  # no hand covers this much
    assert hand_in_view(frame, boxes, width / SIZE[0], shipped_tuning().hand)
    assert not hand_in_view(frame, boxes, width / SIZE[0], never)
