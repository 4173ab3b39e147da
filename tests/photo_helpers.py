"""The photos kept in tests/photos, each with its label row (PHOTO.json: the generator's dice),
and the pipeline's readings on their labelled dice, matched as training.evaluate matches them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.vision import read_image
from companion.vision.models import load_models, models_present
from training.evaluate import IOU_MIN, box_iou

PHOTOS = Path(__file__).parent / "photos"
needs_models = pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")


def labelled_dice(photo: Path) -> list[dict]:
    return json.loads(photo.with_suffix(".json").read_text("utf-8"))["dice"]


def die_on(reading, photo: Path, token: str):
    """The one reading on the photo's labelled die `token` (e.g. "10o"; its box, IoU >= IOU_MIN)."""
    (box,) = [d["box"] for d in labelled_dice(photo) if f"{d['value']}{d['color'][0]}" == token]
    (die,) = [d for d in reading.dice if box_iou(d.box, box) >= IOU_MIN]
    return die


def silent_then_flagged(photo: Path, off, token: str, misread: str):
    """The photo read with `off` (ReadSettings with one flag switched off) and as shipped: its die
    `token` is read `misread` at 0.99 or more without a flag with `off`, and flagged as shipped
    (both asserted). Returns (without, shipped)."""
    models = load_models()
    without = read_image(photo, models, off)
    die = die_on(without, photo, token)
    assert die.face.token == misread and die.confidence >= 0.99 and not die.uncertain  # silent without the flag
    shipped = read_image(photo, models)
    assert die_on(shipped, photo, token).uncertain
    return without, shipped


def gained_flags(without, shipped) -> list[str]:
    """The dice flagged as shipped and not in `without` (the same boxes, in the same order)."""
    assert len(without.dice) == len(shipped.dice)
    return [b.face.token for b, a in zip(without.dice, shipped.dice) if a.uncertain and not b.uncertain]


def on_no_die(reading, photo: Path) -> list:
    """The readings whose box matches none of the photo's labelled dice."""
    truth = [d["box"] for d in labelled_dice(photo)]
    return [d for d in reading.dice if all(box_iou(d.box, box) < IOU_MIN for box in truth)]


def read_as(reading, dice: list[dict]) -> dict[str, object | None]:
    """Each labelled top face the frame does not cut ("die:face", e.g. "H6:10o") -> the reading on its
    box (IoU >= IOU_MIN), or None: `dice` as the label rows or a rendered photo's `dice` give them."""
    out: dict[str, object | None] = {}
    for die in dice:
        if die.get("truncated"):
            continue
        hits = [r for r in reading.dice if box_iou(r.box, die["box"]) >= IOU_MIN]
        out[f"{die['die']}:{die['value']}{die['color'][0]}"] = hits[0] if hits else None
    return out


def tokens_read(reading, dice: list[dict]) -> dict[str, str]:
    """read_as with each reading's face token ("-" for a die with no reading on its box)."""
    return {label: r.face.token if r is not None else "-" for label, r in read_as(reading, dice).items()}
