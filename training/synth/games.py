"""Games: K photos of one dice set at one table under one light (benchmarks/bench_profile.py).

    python -m training.synth.games --out data/games --games 16 --photos 8 [--seed 5001] [--look far] [--workers 1]

What learning a table's dice (companion/vision/profile.py) is measured on. Every game draws
one look of the dice from outside what the models were trained on, and one table, one light
and one phone; photo after photo only the roll (which dice, which faces), the dice's layout,
the clutter and the camera (tilt, roll, height, blur, noise, exposure) change, as in a real
game at one table.

The look is further from training than the validation split's: the font is one of the
validation-only families, the body one of BODIES_GAMES (none in training), every ink 7..12
degrees of hue off its base (training: within 7), the table one of the validation-only kinds.
The light is one of LIGHTS: a warm lamp, daylight, or a dim room.

`--look table` draws the table look the reader's colours are weakest in: white, ivory, light-
and mid-grey bodies on green or blue felt, wood or slate, the felt's colour bounced onto the
dice and taken in part for the light's by the phone's white balance, a key light of 2200-7000 K that the phone's auto white balance corrects only in part
(30-80 %), a phone's S-shaped tone curve and JPEG 72-92.

`--look far` draws from further still (LOOKS["far"]): inks 12..20 degrees of hue off, bodies
of the training set's greys and black, and a hot lamp (2200-2800 K) beside the three lights:
where the base reader makes enough mistakes for a table's profile to be tested hard.

Output: the dataset format (docs/dataset_format.md), `OUT/labels.jsonl` + `OUT/images/`,
with `conditions` naming the game (`game`, `photo` 0..K-1) and its look (`body`, `font`,
`light_kind`...). Seeded per game and per photo; resumable like training.synth: photos
already listed are skipped.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from training.synth.appearance import Appearance, ink_bases, jitter_rgb, sample_appearance
from training.synth.dataset import done_indices, encode_jpeg, label_record
from training.synth.dice_render import UP, Light
from training.synth.effects import apply_effects, kelvin_rgb, sample_effects
from training.synth.fonts import fonts_for_split
from training.synth.scene import (
    GENERATOR_VERSION, SIZES, TABLE_STEP, Photo, SceneOptions, _camera, _conditions, _draw_dice, _focus_map,
    _dice_mask, _label, _n_dice, _overlays, _shadows, _table_coords, place_clutter, place_dice, place_pip_dice,
)
from training.synth.clutter import draw_item, item_texture
from training.synth.textures import TABLES_VAL, render_table

GAMES_CODE = 3  # the splits are 0..2 (training.synth.dataset.SPLIT_CODES)
DEFAULT_SEED = 5001
# Bodies no training photo has (rgb 0..1): the validation split's own and two more.
BODIES_GAMES: dict[str, tuple[float, float, float]] = {
    "pearl": (0.97, 0.95, 0.93),
    "charcoal": (0.20, 0.20, 0.22),
    "sand": (0.88, 0.82, 0.70),
    "mint": (0.78, 0.93, 0.85),
    "lavender": (0.82, 0.78, 0.93),
    "rose": (0.95, 0.82, 0.84),
}
INK_HUE_OFF = (7.0, 12.0)  # degrees, either way
# (kelvin range, ambient range, elevation range in degrees)
LIGHTS: dict[str, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]] = {
    "warm-lamp": ((2600.0, 3200.0), (0.3, 0.5), (35.0, 80.0)),
    "daylight": ((5000.0, 7000.0), (0.45, 0.7), (40.0, 85.0)),
    "dim": ((3000.0, 4500.0), (0.2, 0.3), (25.0, 60.0)),
}



TABLES_GAMES = tuple(t for t in TABLES_VAL if t in ("marble", "tartan", "terrazzo")) or TABLES_VAL


@dataclass(frozen=True)
class GameLook:
    """Where a game's dice, table, light and phone are drawn from."""

    bodies: dict[str, tuple[float, float, float]]
    ink_hue_off: tuple[float, float]  # degrees, either way
    lights: dict[str, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]]
    tables: tuple[str, ...] = TABLES_GAMES
    wb_correction: tuple[float, float] = (0.5, 1.0)  # how much of the light's colour the phone corrects
    bounce: tuple[float, float] = (0.0, 0.0)  # the table's colour's share of the light on the dice
    tone: tuple[float, float] = (0.0, 0.0)  # how strongly the phone's S-shaped tone curve bends the codes
    jpeg: tuple[int, int] | None = None  # JPEG quality range (None: the camera effects' own)
    # how far the phone's auto white balance takes the table's colour for the light's (grey world)
    table_balance: tuple[float, float] = (0.0, 0.0)


# The table look: a key light anywhere from a candle-warm lamp to shade, named by its warmth.
TABLE_LIGHTS: dict[str, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]] = {
    "warm-key": ((2200.0, 3500.0), (0.25, 0.5), (35.0, 85.0)),
    "neutral-key": ((3500.0, 5500.0), (0.3, 0.6), (35.0, 85.0)),
    "cool-key": ((5500.0, 7000.0), (0.4, 0.7), (35.0, 85.0)),
}
LOOKS: dict[str, GameLook] = {
    "games": GameLook(BODIES_GAMES, INK_HUE_OFF, LIGHTS),
    "far": GameLook({"light-grey": (0.80, 0.80, 0.80), "grey": (0.55, 0.56, 0.58), "black": (0.07, 0.07, 0.08),
                     "lavender": BODIES_GAMES["lavender"]}, (12.0, 20.0),
                    {**LIGHTS, "hot-lamp": ((2200.0, 2800.0), (0.25, 0.45), (45.0, 85.0))}),
    "table": GameLook({"white": (0.95, 0.95, 0.95), "ivory": (0.93, 0.90, 0.80), "light-grey": (0.80, 0.80, 0.80),
                       "grey": (0.55, 0.56, 0.58)}, (0.0, 10.0), TABLE_LIGHTS,
                      ("felt-green", "felt-blue", "wood", "slate"), (0.3, 0.8), (0.1, 0.35), (0.3, 0.8), (72, 92),
                      (0.15, 0.5)),
    # the table look at its hardest for colour: light-grey, mid-grey and ivory bodies on felt under a
    # warm key light the phone corrects little, much of the felt's colour bounced onto the dice
    "table-warm": GameLook({"ivory": (0.93, 0.90, 0.80), "light-grey": (0.80, 0.80, 0.80), "grey": (0.55, 0.56, 0.58)},
                           (0.0, 10.0), {"warm-key": TABLE_LIGHTS["warm-key"]}, ("felt-green", "felt-blue"),
                           (0.2, 0.6), (0.25, 0.5), (0.3, 0.8), (72, 92), (0.0, 0.2)),
}


@dataclass(frozen=True)
class GameSetting:
    """What stays the same for a whole game."""

    look: Appearance
    light: Light
    light_kind: str
    table: str
    table_seed: int
    size: tuple[int, int]
    wb_correction: float  # how much of the light's colour the phone corrects
    bounce: float = 0.0  # the table's colour's share of the light on the dice
    tone: float = 0.0  # the phone's tone curve's strength (0: none)
    jpeg_quality: int | None = None  # the phone's JPEG quality (None: each photo's own)
    table_balance: float = 0.0  # how far the phone's white balance takes the table's colour for the light's


def game_rng(seed: int, game: int, photo: int | None = None) -> np.random.Generator:
    return np.random.default_rng([seed, GAMES_CODE, game] + ([] if photo is None else [photo]))


def _look(rng: np.random.Generator, kind: GameLook) -> Appearance:
    """A validation-split look, then a body and inks no training photo has."""
    base = sample_appearance(rng, "val")
    body_name = str(rng.choice(sorted(kind.bodies)))
    body = jitter_rgb(rng, kind.bodies[body_name], rng.uniform(-4, 4), (0.8, 1.2), (0.95, 1.03))
    dark = float(np.mean(body)) < 0.35
    shared = rng.uniform(0.95, 1.25) if dark else rng.uniform(0.75, 1.1)
    inks = {}
    for color, rgb in ink_bases().items():
        hue = float(rng.choice([-1, 1]) * rng.uniform(*kind.ink_hue_off))
        ink = jitter_rgb(rng, rgb, hue, (0.7, 1.1), (0.9, 1.1))
        inks[color] = tuple(float(np.clip(c * shared, 0, 1)) for c in ink)
    return replace(base, split="games", body_name=body_name, body_rgb=tuple(float(c) for c in body), inks=inks)


def _light(rng: np.random.Generator, lights: dict) -> tuple[str, Light]:
    kind = str(rng.choice(sorted(lights)))
    kelvin, ambient, elevation = lights[kind]
    el, az = np.radians(rng.uniform(*elevation)), rng.uniform(0, 2 * np.pi)
    direction = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
    light = Light(direction, float(rng.uniform(*ambient)), float(rng.uniform(*kelvin)),
                  float(rng.uniform(0.03, 0.5)), float(rng.uniform(0.3, 0.85)))
    return kind, light


def game_setting(seed: int, game: int, look_name: str = "games") -> GameSetting:
    rng = game_rng(seed, game)
    kind = LOOKS[look_name]
    look = _look(rng, kind)
    light_kind, light = _light(rng, kind.lights)
    table = str(rng.choice(kind.tables))
    size = SIZES[int(rng.integers(len(SIZES)))]
    setting = GameSetting(look, light, light_kind, table, int(rng.integers(2**31)), size,
                          float(rng.uniform(*kind.wb_correction)))
    # drawn after the rest, so the other looks' games stay as they were
    bounce, tone = float(rng.uniform(*kind.bounce)), float(rng.uniform(*kind.tone))
    quality = None if kind.jpeg is None else int(rng.integers(kind.jpeg[0], kind.jpeg[1] + 1))
    return replace(setting, bounce=bounce, tone=tone, jpeg_quality=quality,
                   table_balance=float(rng.uniform(*kind.table_balance)))


def render_game_photo(seed: int, game: int, photo: int, look_name: str = "games") -> Photo:
    """Photo `photo` of game `game`: the game's look, table and light; its own roll and camera."""
    setting = game_setting(seed, game, look_name)
    rng = game_rng(seed, game, photo)
    opts = SceneOptions()
    n = _n_dice(rng)
    cam = _camera(rng, setting.size, n, opts)
    out_of_frame = bool(rng.random() < 0.3)
    dice = place_dice(rng, cam, n, out_of_frame)
    light = setting.light
    # the same table texture in every photo: its random draws come from the game's own seed
    table = render_table(np.random.default_rng(setting.table_seed), setting.table, *_table_coords(cam, TABLE_STEP))
    canvas = cv2.resize(table * np.float32(light.lambert(UP)), (cam.width, cam.height), interpolation=cv2.INTER_LINEAR)
    pips = place_pip_dice(rng, cam, dice, int(rng.choice([0, 0, 0, 1])))
    items = place_clutter(rng, cam, dice + pips, int(rng.choice([0, 1, 2, 3])))
    fonts = fonts_for_split("val")
    for item in items:
        draw_item(canvas, cam, item, item_texture(rng, item, fonts) * np.float32([light.lambert(UP)] * 3 + [1.0]))
    _shadows(canvas, cam, dice + pips, light)
    _draw_dice(rng, canvas, cam, setting.look, dice, pips, light, opts)
    if setting.bounce > 0:
        _bounce(canvas, _dice_mask(cam, dice + pips), table, setting.bounce)
    extras = _overlays(rng, canvas, cam, dice, light, opts)
    light_rgb = kelvin_rgb(light.kelvin)
    canvas *= light_rgb.astype(np.float32)
    fx = sample_effects(rng, light_rgb)
    # one phone under one light: the colour cast it leaves is the game's, not the photo's
    wb = (1.0 / light_rgb) ** setting.wb_correction
    if setting.table_balance > 0:  # a grey-world balance, misled by a coloured table that fills the frame
        colour = table.reshape(-1, 3).mean(axis=0)
        wb = wb * (colour / max(float(colour.mean()), 1e-3)) ** -setting.table_balance
    fx = replace(fx, wb_gain=tuple(float(g) for g in wb), tint=(1.0, 1.0, 1.0))
    if setting.jpeg_quality is not None:
        fx = replace(fx, jpeg_quality=setting.jpeg_quality)
    depth = _focus_map(rng, cam, dice) if fx.blur_kind == "defocus" and cam.tilt_deg > 12 and rng.random() < 0.5 else None
    image = apply_effects(rng, canvas, fx, depth, None)
    if setting.tone > 0:
        image = cv2.LUT(image, tone_curve(setting.tone))
    labels = [lab for lab in (_label(cam, d) for d in dice) if lab is not None]
    conditions = _conditions("games", setting.look, cam, light, setting.table, fx, dice, items, out_of_frame)
    conditions.update({"pip_dice": len(pips), **extras, "depth_of_field": depth is not None,
                       "generator": GENERATOR_VERSION, "seed": seed, "game": game, "photo": photo,
                       "light_kind": setting.light_kind, "look": look_name})
    if look_name.startswith("table"):
        conditions.update({"bounce": round(setting.bounce, 2), "tone": round(setting.tone, 2),
                           "wb_correction": round(setting.wb_correction, 2),
                           "table_balance": round(setting.table_balance, 2),
                           "body_on_table": f"{setting.look.body_name} on {setting.table}"})
    return Photo(image, labels, conditions)


def _bounce(canvas: np.ndarray, dice: np.ndarray, table: np.ndarray, share: float) -> None:
    """The dice (mask `dice`) lit partly by light the table reflects: tinted by the table's mean
    colour, `share` of the light on them, their brightness kept."""
    colour = table.reshape(-1, 3).mean(axis=0)
    tint = (1.0 + share * colour / max(float(colour.mean()), 1e-3)) / (1.0 + share)
    canvas[dice] *= tint.astype(np.float32)


def tone_curve(strength: float) -> np.ndarray:
    """A phone's tone curve as a 256-entry look-up table: the shadows lifted and the highlights
    rolled off (an S on a brightening curve), `strength` of the way from the codes as they are."""
    x = np.arange(256) / 255.0
    lifted = x ** (1 / 1.8)
    phone = lifted + 0.35 * (lifted * lifted * (3 - 2 * lifted) - lifted)
    return np.clip(255.0 * (x + strength * (phone - x)) + 0.5, 0, 255).astype(np.uint8)


@dataclass(frozen=True)
class _Job:
    out: str
    seed: int
    photos: int
    index: int  # game * photos + photo
    look: str = "games"


def _make_one(job: _Job) -> str:
    cv2.setNumThreads(1)
    game, photo = divmod(job.index, job.photos)
    shot = render_game_photo(job.seed, game, photo, job.look)
    shot.conditions["index"] = job.index
    rel = f"images/{job.index:06d}.jpg"
    path = Path(job.out) / rel
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(encode_jpeg(shot.image, shot.conditions["jpeg_quality"]))
    os.replace(tmp, path)
    return json.dumps(label_record(shot, rel), separators=(",", ":"))


def write_games(out: Path, games: int, photos: int, seed: int = DEFAULT_SEED, workers: int = 1,
                look: str = "games", first_game: int = 0) -> int:
    """Make every photo of games first_game..games-1 not made yet; returns how many were made now."""
    (out / "images").mkdir(parents=True, exist_ok=True)
    labels = out / "labels.jsonl"
    done = done_indices(labels)
    if done:
        first = json.loads(labels.read_text("utf-8").split("\n", 1)[0])["conditions"]
        if first.get("seed") != seed or first.get("photos", photos) != photos or first.get("look", "games") != look:
            raise ValueError(f"{out} holds games of seed {first.get('seed')} and look {first.get('look', 'games')}, "
                             f"not {seed} and {look}: use another folder")
    jobs = [_Job(str(out), seed, photos, i, look) for i in range(first_game * photos, games * photos) if i not in done]
    made = 0
    with labels.open("a", encoding="utf-8") as sink:
        pool = mp.get_context("fork").Pool(workers) if workers > 1 else None
        results = pool.imap(_make_one, jobs) if pool else map(_make_one, jobs)
        try:
            for line in results:
                sink.write(line + "\n")
                sink.flush()
                made += 1
        finally:
            if pool is not None:
                pool.terminate()
    return made


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.synth.games", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--games", type=int, required=True)
    ap.add_argument("--photos", type=int, default=8, help="photos per game (default 8)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--look", choices=sorted(LOOKS), default="games", help="where looks are drawn from (default games)")
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    if args.games < 0 or args.photos < 1:
        ap.error("--games must be >= 0 and --photos >= 1")
    start = time.time()
    made = write_games(args.out, args.games, args.photos, args.seed, max(1, args.workers), args.look)
    print(f"{args.out}: made {made} photos in {time.time() - start:.1f} s ({args.games} games x {args.photos})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
