"""Trainers stopped by a step count: exactly that many steps, recorded, and the same weights again."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from training.common import PRECROP_SIZE, LrPlan, make_plan, training_parser

pytestmark = pytest.mark.slow

THREADS = "1"
SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> Path:
    """The sample photos in a folder of their own: a trainer keeps its cache beside the data."""
    data = tmp_path_factory.mktemp("steps") / "photos"
    shutil.copytree(SAMPLES, data)
    return data


@pytest.fixture(scope="module")
def negatives(photos: Path) -> Path:
    folder = photos.parent / "negatives"
    folder.mkdir()
    rng = np.random.default_rng(0)
    np.save(folder / "crops.npy", rng.integers(0, 255, (16, PRECROP_SIZE, PRECROP_SIZE, 3), dtype=np.uint8))
    return folder


def _metadata(path: Path) -> dict[str, str]:
    onnx = pytest.importorskip("onnx")
    return {p.key: p.value for p in onnx.load(str(path)).metadata_props}


def _weights(path: Path) -> list[np.ndarray]:
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    return [numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer]


def _train_detector(photos: Path, run: Path, *extra: str) -> Path:
    pytest.importorskip("torch")
    from training.detector import main

    out = run / "detector.onnx"
    # 2 steps an epoch: a 3-step stop falls inside the second epoch, not at an epoch's end
    assert main(["--data", str(photos), "--epoch-steps", "2", "--batch", "2", "--crop", "64", "--threads", THREADS,
                 "--out", str(out), "--run-dir", str(run), *extra]) == 0
    return out


def _train_reader(photos: Path, negatives: Path, run: Path, *extra: str) -> Path:
    pytest.importorskip("torch")
    from training.reader import main

    out = run / "reader.onnx"
    assert main(["--data", str(photos), "--negatives", str(negatives), "--epoch-steps", "2", "--batch", "8",
                 "--faults", "0.5", "--threads", THREADS, "--out", str(out), "--run-dir", str(run), *extra]) == 0
    return out


def test_steps_plan_the_learning_rate_over_them_and_exclude_a_time_budget():
    ap = training_parser(None, name="x", epochs=20, batch=16)
    plan = make_plan(ap.parse_args(["--data", "d", "--steps", "40", "--epochs", "3"]), epoch_steps=7)
    assert (plan.total_steps, plan.minutes) == (40, 0.0)
    assert make_plan(ap.parse_args(["--data", "d", "--epochs", "3"]), epoch_steps=7).total_steps == 21
    for bad in (["--steps", "40", "--minutes", "5"], ["--steps", "0"], ["--steps", "many"]):
        with pytest.raises(SystemExit):
            ap.parse_args(["--data", "d", *bad])


def test_a_step_plan_gives_a_budgeted_run_of_evenly_timed_steps_the_same_rates():
    stepped, timed = LrPlan(1e-3, total_steps=240), LrPlan(1e-3, minutes=1.0)
    rates = []
    while not timed.done():
        rates.append((stepped.lr(), timed.lr()))
        stepped.advance(0.25)
        timed.advance(0.25)
    assert stepped.done() and stepped.step == timed.step == 240
    assert np.allclose(*zip(*rates), rtol=1e-9)


def test_detector_stops_after_exactly_the_steps_and_records_them(photos, tmp_path):
    out = _train_detector(photos, tmp_path / "run", "--steps", "3")
    meta = _metadata(out)
    assert (meta["steps"], meta["epochs"], meta["minutes"]) == ("3", "2", "0")
    assert (meta["epoch_steps"], meta["threads"], meta["seed"]) == ("2", THREADS, "0")
    torch = pytest.importorskip("torch")
    assert torch.load(tmp_path / "run" / "last.pt", weights_only=False)["plan"]["step"] == 3


def test_reader_stops_after_exactly_the_steps_and_records_them(photos, negatives, tmp_path):
    out = _train_reader(photos, negatives, tmp_path / "run", "--steps", "3")
    meta = _metadata(out)
    assert (meta["steps"], meta["epochs"], meta["minutes"], meta["faults"]) == ("3", "2", "0", "0.5")


def test_detector_runs_with_one_seed_give_the_same_weights(photos, tmp_path):
    first, again, other = (_train_detector(photos, tmp_path / name, "--steps", "3", "--seed", seed)
                           for name, seed in (("a", "5"), ("b", "5"), ("c", "6")))
    a, b, c = _weights(first), _weights(again), _weights(other)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, z) for x, z in zip(a, c, strict=True))


def test_reader_runs_with_one_seed_give_the_same_weights(photos, negatives, tmp_path):
    first, again, other = (_train_reader(photos, negatives, tmp_path / name, "--steps", "3", "--seed", seed)
                           for name, seed in (("a", "5"), ("b", "5"), ("c", "6")))
    a, b, c = _weights(first), _weights(again), _weights(other)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, z) for x, z in zip(a, c, strict=True))
