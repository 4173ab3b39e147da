"""Benchmark learning a table's dice: games of one unseen dice set, read with and without a profile.

    .venv/bin/python benchmarks/bench_profile.py [--data data/games_bench] [--games 16] [--seed 6001]

Makes the games if they are not there yet (python -m training.synth.games: K = 8 photos of one
dice set at one table under one light, a look the models never saw). For each game, the dice
of photos 1-4 are learnt as the players would confirm them (each die's box and face, from the
labels) into a fresh profile (companion/vision/learn.py); photos 5-8 are then read with the
base reader alone and with the profile. Errors per photo: wrong dice (value or colour) +
missed dice + extra dice, matched by box overlap (IoU >= 0.5) as training.evaluate does;
top faces mostly cut by the frame count neither way.

Prints each game, the errors summed per condition (body, light, font) and over all games,
the games the profile made worse, the time to learn one photo's dice, and the read time
with and without the profile (median of each photo read both ways, in alternating order),
plus the time the profile's own step takes per photo.

Targets (issue 25): errors on photos 5-8 at most half the base reader's, no game worse;
learning a photo <= 100 ms; reading with a profile <= 10 % slower.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from companion.dice import Face  # noqa: E402
from companion.vision.image_io import load_work_image  # noqa: E402
from companion.vision.learn import ConfirmedDie, learn_photo  # noqa: E402
from companion.vision.models import load_models  # noqa: E402
from companion.vision.pipeline import Analysis, analyse  # noqa: E402
from training.common import LabelledImage, read_dataset  # noqa: E402
from training.evaluate import IOU_MIN, box_iou  # noqa: E402
from training.synth.games import DEFAULT_SEED, write_games  # noqa: E402

LEARNT = 4  # photos 1-4 are learnt from, the rest read
PHOTOS = 8


@dataclass
class Errors:
    wrong: int = 0
    missed: int = 0
    extra: int = 0

    @property
    def total(self) -> int:
        return self.wrong + self.missed + self.extra

    def __iadd__(self, other: "Errors") -> "Errors":
        self.wrong += other.wrong
        self.missed += other.missed
        self.extra += other.extra
        return self

    def __str__(self) -> str:
        return f"{self.total:3d} ({self.wrong} wrong, {self.missed} missed, {self.extra} extra)"


@dataclass
class Game:
    number: int
    look: dict
    base: Errors = field(default_factory=Errors)
    learnt: Errors = field(default_factory=Errors)
    blend: str = ""


def errors(image: LabelledImage, analysis: Analysis) -> Errors:
    """Wrong + missed + extra dice of one reading, matched by box as training.evaluate does."""
    out = Errors()
    truths = list(image.dice)
    taken: set[int] = set()
    found: set[int] = set()
    order = sorted(range(len(analysis.dice)), key=lambda i: -analysis.detections[i].score)
    for i in order:
        reading = analysis.dice[i]
        best = max(((box_iou(reading.box, t.box), j) for j, t in enumerate(truths) if j not in taken), default=(0.0, -1))
        if best[0] < IOU_MIN:
            out.extra += 1
            continue
        taken.add(best[1])
        truth = truths[best[1]]
        if truth.ignored:
            continue
        found.add(best[1])
        out.wrong += reading.face != Face(truth.value, truth.color)
    out.missed = sum(1 for j, t in enumerate(truths) if not t.ignored and j not in found)
    return out


def confirmed(image: LabelledImage) -> list[ConfirmedDie]:
    return [ConfirmedDie(Face(d.value, d.color), d.box) for d in image.dice if not d.ignored]


def _describe(blend) -> str:
    def head(weight: float, bias) -> str:
        parts = ([f"kernel x{weight:g}"] if weight > 0 else []) + (["shift"] if bias is not None else [])
        return "+".join(parts) or "base"

    return (f"value {head(blend.value_weight, blend.value_bias)} {blend.value_errors[0]}->{blend.value_errors[1]}, "
            f"colour {head(blend.color_weight, blend.color_bias)} {blend.color_errors[0]}->{blend.color_errors[1]}"
            + (", drops unlike boxes" if blend.drop_unlike else ""))


def run_game(number: int, photos: list[LabelledImage], models, learn_ms: list[float], read_ms: dict, adjust_ms: list[float],
             decode_ms: list[float]) -> Game:
    look = photos[0].conditions
    game = Game(number, {"body": look.get("body"), "light": look.get("light_kind"), "font": look.get("font")})
    profile = None
    for k, image in enumerate(photos[:LEARNT]):
        t0 = time.perf_counter()
        work = load_work_image(image.path)
        decode_ms.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        profile = learn_photo(profile, f"photo {k + 1}", work, confirmed(image), models)
        learn_ms.append((time.perf_counter() - t0) * 1000)
    game.blend = _describe(profile.blend)
    for k, image in enumerate(photos[LEARNT:]):
        results = {}
        # alternate which goes first, so that neither always meets a warm cache
        for use in ((None, profile) if k % 2 == 0 else (profile, None)):
            t0 = time.perf_counter()
            work = load_work_image(image.path)
            results[use is not None] = analyse(work, models, profile=use)
            read_ms[use is not None].append((time.perf_counter() - t0) * 1000)
        game.base += errors(image, results[False])
        game.learnt += errors(image, results[True])
        adjust_ms.append(_adjust_ms(profile, results[False], models))
    return game


def _adjust_ms(profile, analysis: Analysis, models) -> float:
    """The profile's own step for one photo's dice (kernel, blend), timed alone."""
    n = max(1, len(analysis.dice))
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(n, profile.dim)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    pv, pc = np.full((n, 11), 1 / 11), np.full((n, 4), 0.25)
    t0 = time.perf_counter()
    for _ in range(20):
        profile.adjust(emb, pv, pc)
    return (time.perf_counter() - t0) * 1000 / 20


def report(games: list[Game], learn_ms: list[float], read_ms: dict, adjust_ms: list[float], decode_ms: list[float]) -> None:
    print(f"\n{'game':>4}  {'body':<9} {'light':<9} {'font':<26} {'base errors':<32} {'with profile':<32} guard")
    for g in games:
        flag = "  WORSE" if g.learnt.total > g.base.total else ""
        print(f"{g.number:>4}  {g.look['body']:<9} {g.look['light']:<9} {str(g.look['font'])[:26]:<26} "
              f"{str(g.base):<32} {str(g.learnt):<32} {g.blend}{flag}")
    for key in ("body", "light", "font"):
        print(f"\nby {key}:")
        groups: dict[str, list[Game]] = defaultdict(list)
        for g in games:
            groups[str(g.look[key])].append(g)
        for level, members in sorted(groups.items()):
            base, learnt = Errors(), Errors()
            for g in members:
                base += g.base
                learnt += g.learnt
            print(f"  {level:<28} {len(members):2d} games  base {base.total:3d}  with profile {learnt.total:3d}")
    base, learnt = Errors(), Errors()
    for g in games:
        base += g.base
        learnt += g.learnt
    worse = sum(g.learnt.total > g.base.total for g in games)
    better = sum(g.learnt.total < g.base.total for g in games)
    ratio = learnt.total / base.total if base.total else float("nan")
    print(f"\nphotos {LEARNT + 1}-{PHOTOS} of {len(games)} games: base reader {base}; with the profile {learnt}; "
          f"ratio {ratio:.2f} (target <= 0.5); games better {better}, worse {worse} (target 0)")
    print(f"learning one photo's dice: median {statistics.median(learn_ms):.1f} ms, max {max(learn_ms):.1f} ms "
          f"(target <= 100 ms; {len(learn_ms)} photos), after decoding the photo (median {statistics.median(decode_ms):.1f} ms)")
    without, with_ = statistics.median(read_ms[False]), statistics.median(read_ms[True])
    print(f"reading a photo: median {without:.1f} ms without the profile, {with_:.1f} ms with it "
          f"({100 * (with_ / without - 1):+.1f} %, target <= +10 %); the profile's own step "
          f"{statistics.median(adjust_ms):.2f} ms per photo")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "games_bench")
    ap.add_argument("--games", type=int, default=16)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED + 1000, help="games seed (default 6001; 5001 and 5501 are for tuning)")
    args = ap.parse_args(argv)
    made = write_games(args.data, args.games, PHOTOS, args.seed)
    if made:
        print(f"{args.data}: made {made} photos")
    models = load_models()
    by_game: dict[int, list[LabelledImage]] = defaultdict(list)
    for image in read_dataset(args.data):
        by_game[int(image.conditions["game"])].append(image)
    learn_ms: list[float] = []
    read_ms: dict[bool, list[float]] = {False: [], True: []}
    adjust_ms: list[float] = []
    decode_ms: list[float] = []
    games = []
    for number in sorted(by_game)[:args.games]:
        photos = sorted(by_game[number], key=lambda im: im.conditions["photo"])
        if len(photos) < PHOTOS:
            continue
        games.append(run_game(number, photos, models, learn_ms, read_ms, adjust_ms, decode_ms))
        print(f"game {number}: base {games[-1].base.total}, with profile {games[-1].learnt.total}", flush=True)
    report(games, learn_ms, read_ms, adjust_ms, decode_ms)
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores while it ran)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
