"""A hand in the live view (companion/vision/hand.py): a hand held still beside the dice is seen;
the sample photos' tables, coins and papers are not hands, nor is the skin-toned colour of a
striped cloth."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from live_sequences import SAMPLE, SIZE, hand_resting_in, sequence

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


def striped_cloth(width: int = 120) -> tuple[np.ndarray, list[list[float]]]:
    """A cloth (SIZE) of pink and sage stripes `width` px wide, the pink's chroma a skin tone's,
    with five white dice lying on it beside its left part."""
    pink, sage = np.array((188, 190, 254), np.float32), np.array((128, 159, 150), np.float32)  # BGR
    first = (np.arange(SIZE[0]) // width) % 2 == 0
    frame = np.broadcast_to(np.where(first[:, None], pink, sage), (SIZE[1], SIZE[0], 3)).copy()
    frame = np.clip(frame + np.random.default_rng(0).normal(0, 2, frame.shape), 0, 255).astype(np.uint8)
    boxes = [[300, 250, 350, 300], [420, 300, 470, 350], [520, 260, 570, 310], [380, 420, 430, 470], [600, 400, 650, 450]]
    for x0, y0, x1, y1 in boxes:
        frame[y0:y1, x0:x1] = 235
    return frame, [[float(v) for v in box] for box in boxes]


def test_a_striped_cloth_of_a_skin_tone_is_no_hand_and_a_hand_on_it_is_seen():
    cloth, boxes = striped_cloth()
    # around the dice the cloth shows both its colours: each is the table's, neither a hand
    assert not hand_in_view(cloth, boxes)
    assert hand_in_view(hand_resting_in(cloth), boxes)
