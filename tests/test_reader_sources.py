"""The reader's training from two sources (training/reader_sources.py, training.reader --second-data):
each batch takes its share from the second dataset, every crop with its own labels.

The datasets are small frames made here in the dataset format the Blender training split writes
(one die in the middle of each frame), so the data path is tested without Blender.
"""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.dice import standard_set
from companion.vision.decoder import VALUE_CLASSES
from training.common import PRECROP_SIZE, build_cache, cache_dir_for
from training.reader_sources import batch_faces, face_order, load_second, plan_epoch, second_per_batch, share_arg

FRAME, FACE = 120, 40
FIRST_TABLE, SECOND_TABLE = (40, 160, 40), (200, 40, 200)  # each source's table colour tells its crops apart


def _frames(folder: Path, count: int, table: tuple[int, int, int], visible: float = 1.0,
            reader_crop: bool | None = None) -> Path:
    """`count` frames, each one die face in the middle whose grey level is 20 x its value class."""
    faces = [(die.id, face) for die in standard_set().dice for face in die.faces]
    (folder / "images").mkdir(parents=True)
    with open(folder / "labels.jsonl", "w") as sink:
        for i in range(count):
            die, face = faces[(7 * i) % len(faces)]
            value = "W" if face.is_wild else face.value
            grey = 20 * VALUE_CLASSES.index(None if face.is_wild else face.value) + 20
            image = np.full((FRAME, FRAME, 3), table, np.uint8)
            a, b = (FRAME - FACE) // 2, (FRAME + FACE) // 2
            image[a:b, a:b] = grey
            cv2.imwrite(str(folder / f"images/{i:06d}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 95])
            corners = [[a, a], [b, a], [b, b], [a, b]]
            label = {"die": die, "value": value, "color": face.color.value, "polygon": corners,
                     "box": [a, a, b, b], "truncated": visible < 1.0, "visible": visible}
            if reader_crop is not None:
                label["reader_crop"] = reader_crop
            row = {"image": f"images/{i:06d}.jpg", "width": FRAME, "height": FRAME, "dice": [label],
                   "conditions": {"split": "train", "kind": "crop", "index": i}}
            sink.write(json.dumps(row) + "\n")
    return folder


@pytest.fixture(scope="module")
def caches(tmp_path_factory):
    root = tmp_path_factory.mktemp("sources")
    first, second = _frames(root / "first", 12, FIRST_TABLE), _frames(root / "second", 5, SECOND_TABLE)
    return (build_cache(first, cache_dir_for(first), log=lambda _: None),
            load_second(second, log=lambda _: None))


def _table_of(crop: np.ndarray) -> tuple[int, int, int]:
    return tuple(int(round(v)) for v in crop[:8, :8].reshape(-1, 3).mean(axis=0))


def _near(a, b) -> bool:
    return max(abs(x - y) for x, y in zip(a, b)) < 12


def test_every_batch_takes_its_share_from_the_second_source_each_crop_with_its_labels(caches):
    first, second = caches
    batch, steps = 8, 6
    sources = plan_epoch(np.random.default_rng(0), first, second, batch, 0.25, steps)
    seen = np.zeros(len(second.crop_value), int)
    for step in range(steps):
        pre, values, colors = batch_faces(sources, step)
        assert pre.shape == (batch, PRECROP_SIZE, PRECROP_SIZE, 3) and len(values) == len(colors) == batch
        tables = [_table_of(crop) for crop in pre]
        assert all(_near(t, FIRST_TABLE) for t in tables[:6]) and all(_near(t, SECOND_TABLE) for t in tables[6:])
        for crop, value in zip(pre, values):  # the die's grey level names its value class
            centre = crop[PRECROP_SIZE // 2 - 4:PRECROP_SIZE // 2 + 4, PRECROP_SIZE // 2 - 4:PRECROP_SIZE // 2 + 4]
            assert abs(float(centre.mean()) - (20 * value + 20)) < 8
        for cache, idx, got in ((first, sources[0].take(step), colors[:6]), (second, sources[1].take(step), colors[6:])):
            assert np.array_equal(cache.crop_color[idx], got)
        seen[sources[1].take(step)] += 1
    assert seen.sum() == 2 * steps and seen.min() >= 2  # the small second source, pass after pass


def test_one_source_draws_the_batches_a_run_before_second_sources_drew(caches):
    first, _ = caches
    n, batch, steps = len(first.crop_value), 4, 7
    old_rng, new_rng = np.random.default_rng(5), np.random.default_rng(5)
    old = np.concatenate([old_rng.permutation(n) for _ in range(-(-steps * batch // n))])  # reader.py's order before
    sources = plan_epoch(new_rng, first, None, batch, 0.25, steps)
    assert len(sources) == 1
    for step in range(steps):
        assert np.array_equal(sources[0].take(step), np.sort(old[step * batch:(step + 1) * batch]))
    assert old_rng.bit_generator.state == new_rng.bit_generator.state
    assert len(face_order(np.random.default_rng(0), 5, 2, 6)) >= 12


def test_the_share_is_a_number_of_faces_in_every_batch():
    assert second_per_batch(128, 0.25) == 32
    assert second_per_batch(8, 0.01) == 1 and second_per_batch(8, 0.99) == 7
    with pytest.raises(ValueError):
        second_per_batch(1, 0.5)
    assert share_arg("0.3") == 0.3
    for bad in ("0", "1", "-0.2", "a quarter"):
        with pytest.raises(Exception, match="between 0 and 1"):
            share_arg(bad)


def test_a_second_source_without_faces_is_refused_with_a_sentence(tmp_path):
    with pytest.raises(SystemExit, match="no dataset at"):
        load_second(tmp_path / "missing", log=lambda _: None)
    cut = _frames(tmp_path / "cut", 2, SECOND_TABLE, visible=0.5)  # every face mostly out of its frame
    with pytest.raises(SystemExit, match="no face the reader's training can cut"):
        load_second(cut, log=lambda _: None)
    context = _frames(tmp_path / "context", 2, SECOND_TABLE, reader_crop=False)  # labelled, no crop
    with pytest.raises(SystemExit, match="no face the reader's training can cut"):
        load_second(context, log=lambda _: None)


def test_a_face_marked_without_a_reader_crop_is_labelled_but_not_cut(tmp_path):
    marked = _frames(tmp_path / "marked", 3, SECOND_TABLE, reader_crop=True)
    with open(marked / "labels.jsonl", "a") as sink:
        sink.write((_frames(tmp_path / "context", 2, SECOND_TABLE, reader_crop=False) / "labels.jsonl").read_text()
                   .replace("images/", "../context/images/"))
    cache = build_cache(marked, cache_dir_for(marked), log=lambda _: None)
    assert len(cache.crop_value) == 3 and len(cache.det_boxes) == 5
    assert all(len(boxes) == 1 and boxes[0, 4] == 0 for boxes in cache.det_boxes)  # the detector still sees each


def test_a_second_share_without_a_second_source_is_refused():
    from training.reader import main

    with pytest.raises(SystemExit):
        main(["--data", "d", "--second-share", "0.3"])


@pytest.mark.slow
def test_a_reader_trained_on_two_sources_records_them(caches, tmp_path):
    pytest.importorskip("torch")
    onnx = pytest.importorskip("onnx")
    from training.reader import main

    root = Path(caches[0].crops.filename).parents[2]
    out = tmp_path / "reader.onnx"
    assert main(["--data", str(root / "first"), "--second-data", str(root / "second"), "--second-share", "0.375",
                 "--steps", "2", "--batch", "8", "--threads", "1", "--out", str(out), "--run-dir", str(tmp_path)]) == 0
    meta = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    assert meta["second_data"] == str(root / "second") and float(meta["second_share"]) == 0.375
    assert "5 faces of" in (tmp_path / "train.log").read_text()


def test_the_render_stats_count_the_crops_the_reader_keeps(tmp_path, capsys):
    from training.blender.stats import main

    whole, cut = _frames(tmp_path / "whole", 3, SECOND_TABLE), _frames(tmp_path / "cut", 2, SECOND_TABLE, visible=0.5)
    with open(whole / "labels.jsonl", "a") as sink:  # frames with faces mostly out of frame add no crop
        sink.write((cut / "labels.jsonl").read_text().replace("images/", "../cut/images/"))
    assert main([str(whole)]) == 0
    assert "5 frames, 3 crops for the reader" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="no dataset"):
        main([str(tmp_path / "none")])
