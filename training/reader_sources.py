"""Where the reader's training faces come from: one dataset, or two with a chosen share each.

A second source (for example the Blender training split, data/blender_train: a second renderer's
look) gives `share` of every batch's faces; the first gives the rest. Each source's faces are
taken in their own shuffled order, a new permutation each time one runs out, so a small second
source is seen again and again while the first is seen as often as without it. With one source
the faces and the random draws are exactly those of a run made before second sources existed.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from training.common import Cache, build_cache, cache_dir_for


@dataclass(frozen=True)
class FaceSource:
    cache: Cache
    per_batch: int  # faces this source gives each batch
    order: np.ndarray  # its faces' indices in the order the epoch's steps take them

    def take(self, step: int) -> np.ndarray:
        return np.sort(self.order[step * self.per_batch:(step + 1) * self.per_batch])  # sorted: friendlier to the memmap


def share_arg(text: str) -> float:
    """An argparse type: a share strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a share between 0 and 1 (exclusive), not {text}")
    return value


def second_per_batch(batch: int, share: float) -> int:
    """The second source's faces in a batch of `batch`: `share` of it, at least one, leaving one."""
    if batch < 2:
        raise ValueError("a batch shared by two sources needs at least 2 faces")
    return min(batch - 1, max(1, round(batch * share)))


def face_order(rng: np.random.Generator, n: int, per_batch: int, steps: int) -> np.ndarray:
    """Enough shuffled passes over n faces for `steps` batches of `per_batch`."""
    return np.concatenate([rng.permutation(n) for _ in range(-(-steps * per_batch // n))])


def plan_epoch(rng: np.random.Generator, first: Cache, second: Cache | None, batch: int, share: float,
               steps: int) -> list[FaceSource]:
    """The sources of one epoch's batches: the first's order is drawn first, as with one source."""
    k = second_per_batch(batch, share) if second is not None else 0
    sources = [FaceSource(first, batch - k, face_order(rng, len(first.crop_value), batch - k, steps))]
    if second is not None:
        sources.append(FaceSource(second, k, face_order(rng, len(second.crop_value), k, steps)))
    return sources


def batch_faces(sources: list[FaceSource], step: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step `step`'s pre-crops (n, S, S, 3 uint8), value classes and colour classes: the first
    source's faces, then the second's."""
    taken = [(s.cache, s.take(step)) for s in sources]
    pre = np.concatenate([np.array(cache.crops[idx]) for cache, idx in taken])
    values = np.concatenate([cache.crop_value[idx] for cache, idx in taken])
    colors = np.concatenate([cache.crop_color[idx] for cache, idx in taken])
    return pre, values, colors


def load_second(folder: str | Path, log) -> Cache:
    """The second source's cached pre-crops (made or brought up to date from its labels), or a
    clear stop when the folder holds no labelled faces."""
    folder = Path(folder)
    if not (folder / "labels.jsonl").is_file():
        raise SystemExit(f"--second-data: no dataset at {folder} (no labels.jsonl); the Blender training "
                         "split is made by `make data-blender-train`")
    cache = build_cache(folder, cache_dir_for(folder), log)
    if len(cache.crop_value) == 0:
        raise SystemExit(f"--second-data: {folder} holds no face the reader's training can cut a crop for")
    return cache
