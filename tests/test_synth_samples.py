"""sample_images/: the committed example photos agree with their labels and with the generator."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `training` is not an installed package

from companion.dice import Color, Face, standard_set  # noqa: E402
from training.synth.samples import EXIF_ORIENTATION, SAMPLES, SPLIT  # noqa: E402
from training.synth.scene import render_scene  # noqa: E402

ROOT = Path(__file__).resolve().parents[1] / "sample_images"


def _records() -> list[dict]:
    return [json.loads(line) for line in (ROOT / "labels.jsonl").read_text("utf-8").splitlines() if line.strip()]


def test_every_photo_opens_upright_at_its_labelled_size():
    records = _records()
    assert len(records) == len(SAMPLES) == 13
    total = 0
    for record in records:
        path = ROOT / record["image"]
        total += path.stat().st_size
        with Image.open(path) as image:
            upright = ImageOps.exif_transpose(image)
            assert upright.size == (record["width"], record["height"]), record["image"]
    assert total < 15_000_000


def test_the_set_covers_what_the_pipeline_must_handle():
    records = _records()
    suffixes = {Path(r["image"]).suffix for r in records}
    assert {".jpg", ".png", ".webp"} <= suffixes
    rotated = []
    for r in records:
        with Image.open(ROOT / r["image"]) as image:
            if image.getexif().get(EXIF_ORIENTATION, 1) != 1:
                rotated.append(r)
                assert image.size == (r["height"], r["width"]), "stored sideways"
    assert len(rotated) == 1
    assert any(not r["dice"] for r in records)
    assert any(len(r["dice"]) == 10 for r in records)
    assert any(d["truncated"] for r in records for d in r["dice"])
    assert {"white", "black"} <= {r["conditions"]["body"] for r in records}
    assert sum(max(r["width"], r["height"]) >= 4000 for r in records) >= 4
    # and a 12 MP photo from sitting height, its dice small in the working image (960 px)
    assert any(max(r["width"], r["height"]) >= 4000 and len(r["dice"]) == 10
               and all(max(d["box"][2] - d["box"][0], d["box"][3] - d["box"][1]) < 160 for d in r["dice"])
               for r in records)


def test_labels_name_real_faces_of_distinct_dice_inside_the_photo():
    dice_set = standard_set()
    for r in _records():
        ids = [d["die"] for d in r["dice"]]
        assert len(ids) == len(set(ids))
        for d in r["dice"]:
            value = None if d["value"] == "W" else d["value"]
            assert dice_set.die(d["die"]).has_face(Face(value, Color(d["color"])))
            poly = np.array(d["polygon"])
            inside = (poly >= 0).all() and (poly[:, 0] <= r["width"]).all() and (poly[:, 1] <= r["height"]).all()
            assert d["truncated"] == (not inside)


def test_labels_are_what_the_committed_generator_makes():
    """Remake one sample's scene from its recorded seed: same dice in the same places."""
    index = next(i for i, s in enumerate(SAMPLES) if s.name == "s05_single")
    record = next(r for r in _records() if r["conditions"]["sample"] == "s05_single")
    photo = render_scene(np.random.default_rng(record["conditions"]["seed"]), SPLIT, SAMPLES[index].opts)
    # the samples were labelled before the cube outlines were: compare what they hold
    assert len(photo.dice) == len(record["dice"]) and [
        {k: v for k, v in d.items() if k in r} for d, r in zip(photo.dice, record["dice"])] == record["dice"], (
        "the generator drew another scene from the same seed: are the fonts it draws from installed "
        "(SYSTEM_PACKAGES in the Makefile; make system-deps)?")
