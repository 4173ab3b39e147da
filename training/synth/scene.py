"""One synthetic photo: camera, table, clutter, shadows, dice, camera effects, and its labels."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from companion.dice import Die, standard_set
from training.synth.appearance import BODIES_TRAIN, BODIES_VAL, Appearance, sample_appearance
from training.synth.camera import Camera, look_down_camera
from training.synth.clutter import Item, draw_hand, draw_item, item_texture, random_item
from training.synth.dice_render import UP, CubeLook, Light, PlacedDie, draw_die, phase10_look, pip_mask, random_placed_die, repaint_tops
from training.synth.effects import (USUAL_CORRECTION, WEAK_CORRECTION, CameraEffects, apply_effects, kelvin_rgb,
                                    neutral_effects, sample_effects)
from training.synth.fonts import fonts_for_split
from training.synth.textures import render_table, table_kinds

SIZES = ((640, 480), (800, 600), (960, 720), (854, 480), (960, 540), (480, 640), (600, 800), (720, 960))
MIN_FACE_PX, MAX_FACE_PX = 25.0, 200.0
# 12 MP photos from sitting or standing height (python -m training.synth --phone-far): a 16 mm
# die seen by a phone's main camera (about 70 degrees across) from 35-70 cm, and camera blur
# 1.5 x a training photo's in photo pixels (0.6-3.3 px defocus, 3-10 px motion), not 4 x as
# for a phone photo framed as closely as the training photos
FAR_FACE_PX = (60.0, 140.0)
FAR_BLUR_SCALE = 1.5
GENERATOR_VERSION = 6  # recorded in every label: datasets may mix images of several versions
# Stress lights (SceneOptions.light): colour temperature range in kelvin
LIGHT_KELVIN = {"warm": (2200.0, 3000.0), "cold": (7500.0, 10000.0)}
TABLE_STEP = 2  # table texture resolution: one sample per 2x2 pixels (4x faster, camera blur hides it)


@dataclass
class Photo:
    """A rendered photo (RGB uint8, upright) with its labels in the dataset format."""

    image: np.ndarray
    dice: list[dict]
    conditions: dict = field(default_factory=dict)

    @property
    def width(self) -> int:
        return int(self.image.shape[1])

    @property
    def height(self) -> int:
        return int(self.image.shape[0])


@dataclass(frozen=True)
class SceneOptions:
    """Overrides for the random choices, used by the sample photos and the tests."""

    size: tuple[int, int] | None = None
    n_dice: int | None = None
    tilt_deg: float | None = None
    body: str | None = None
    out_of_frame: bool | None = None
    clutter: int | None = None
    table: str | None = None
    face_px: float | None = None
    face_px_range: tuple[float, float] | None = None  # drawn log-uniformly, in photo pixels
    blur_scale: float | None = None  # camera blur x this (default: in proportion to the photo's size)
    clean: bool = False  # white light, no glare, no camera effects: for checking the drawing itself
    noise_max: float | None = None  # cap on sensor noise (phone-size samples compress better)
    # Stress conditions (None: as drawn). "warm": a 2200-3000 K lamp and a weak auto white
    # balance; "cold": 7500-10000 K shade or sky light, also weakly corrected.
    light: str | None = None
    tilt_range: tuple[float, float] | None = None  # degrees off vertical, drawn uniformly
    dark_body: bool = False  # one of the split's dark bodies (black, navy, charcoal)


# ---- choosing the scene ---------------------------------------------------------------------


def _n_dice(rng: np.random.Generator) -> int:
    # A turn starts with 10 dice and keeps some aside, so every count shows up; 10 most of all.
    weights = np.array([1.0, 1.0, 1.0, 1.2, 1.2, 1.2, 1.2, 1.3, 1.3, 3.0])
    return int(rng.choice(np.arange(1, 11), p=weights / weights.sum()))


def _camera(rng: np.random.Generator, size: tuple[int, int], n: int, opts: SceneOptions) -> Camera:
    w, h = size
    scale = max(1.0, max(w, h) / 960)  # phone-size photos (the samples) show dice proportionally larger
    face_min = MIN_FACE_PX * 1.1 * scale
    face_max = min(MAX_FACE_PX * scale, math.sqrt(0.45 * w * h / n) / 2.2)
    face_max = max(face_max, face_min * 1.1)
    if opts.face_px_range:
        face_min, face_max = opts.face_px_range
    face = opts.face_px or math.exp(rng.uniform(math.log(face_min), math.log(face_max)))
    hfov = rng.uniform(50.0, 75.0)
    focal = (max(w, h) / 2) / math.tan(math.radians(hfov) / 2)
    tilt = opts.tilt_deg if opts.tilt_deg is not None else rng.uniform(*(opts.tilt_range or (0.0, 40.0)))
    return look_down_camera(w, h, hfov, focal / face, tilt, rng.uniform(0.0, 360.0))


def _light(rng: np.random.Generator) -> Light:
    elevation = math.radians(rng.uniform(25.0, 85.0))
    azimuth = rng.uniform(0, 2 * math.pi)
    direction = np.array([math.cos(elevation) * math.cos(azimuth), math.cos(elevation) * math.sin(azimuth), math.sin(elevation)])
    return Light(
        direction=direction,
        ambient=float(rng.uniform(0.25, 0.7)),
        kelvin=float(rng.choice([rng.uniform(2600, 3600), rng.uniform(3600, 7800)])),
        softness=float(rng.uniform(0.03, 0.5)),
        shadow_strength=float(rng.uniform(0.3, 0.85)),
    )


# ---- placing things -------------------------------------------------------------------------


def _penetration(a: np.ndarray, b: np.ndarray) -> float:
    """How deep two convex quads (4, 2) overlap along their best separating axis (<= 0: apart)."""
    depth = math.inf
    for quad in (a, b):
        for i in range(4):
            edge = quad[(i + 1) % 4] - quad[i]
            axis = np.array([-edge[1], edge[0]]) / (np.hypot(*edge) + 1e-12)
            pa, pb = a @ axis, b @ axis
            depth = min(depth, min(pa.max(), pb.max()) - max(pa.min(), pb.min()))
    return depth


def _fits(candidate: PlacedDie, placed: list[PlacedDie]) -> bool:
    for other in placed:
        gap = math.dist(candidate.center, other.center)
        if gap < 0.98:
            return False
        if gap < 1.45 and _penetration(candidate.footprint(), other.footprint()) > 0.02:
            return False
    return True


def _candidate(rng: np.random.Generator, cam: Camera, placed: list[PlacedDie], die: Die, out_of_frame: bool, margin: float) -> PlacedDie:
    if placed and rng.random() < 0.3:
        # Touching a die already down: same heading give or take, side by side.
        other = placed[int(rng.integers(len(placed)))]
        ex, ey = other.axes()
        axis, across = (ex, ey) if rng.random() < 0.5 else (ey, ex)
        sign = 1.0 if rng.random() < 0.5 else -1.0
        offset = sign * axis[:2] * rng.uniform(1.0, 1.06) + across[:2] * rng.uniform(-0.45, 0.45)
        yaw = other.yaw + rng.uniform(-0.05, 0.05)
        centre = (other.center[0] + offset[0], other.center[1] + offset[1])
    else:
        pad = -0.6 * margin if out_of_frame and rng.random() < 0.5 else margin
        u = rng.uniform(pad, cam.width - pad)
        v = rng.uniform(pad, cam.height - pad)
        centre = tuple(cam.backproject_to_table(np.array([[u, v]]))[0])
        yaw = rng.uniform(0, 2 * math.pi)
    return random_placed_die(rng, die, (float(centre[0]), float(centre[1])), float(yaw))


def place_dice(rng: np.random.Generator, cam: Camera, n: int, out_of_frame: bool) -> list[PlacedDie]:
    dice = list(standard_set().dice)
    chosen = [dice[i] for i in rng.permutation(len(dice))[:n]]
    centre_px = float(cam.px_per_unit_at(np.zeros((1, 2)))[0])
    placed: list[PlacedDie] = []
    for die in chosen:
        for _ in range(60):
            candidate = _candidate(rng, cam, placed, die, out_of_frame, 0.9 * centre_px)
            if _fits(candidate, placed):
                placed.append(candidate)
                break
    return placed


PIP_DIE = Die("PIP", "pip", standard_set().dice[0].faces)  # geometry only: never labelled


def place_pip_dice(rng: np.random.Generator, cam: Camera, dice: list[PlacedDie], count: int) -> list[PlacedDie]:
    """Ordinary dotted dice among ours: the models must learn not to read them."""
    pips: list[PlacedDie] = []
    for _ in range(count * 20):
        if len(pips) >= count:
            break
        u, v = rng.uniform(0.05, 0.95) * cam.width, rng.uniform(0.05, 0.95) * cam.height
        centre = tuple(float(c) for c in cam.backproject_to_table(np.array([[u, v]]))[0])
        candidate = random_placed_die(rng, PIP_DIE, centre, float(rng.uniform(0, 2 * math.pi)), float(rng.uniform(0.75, 1.0)))  # never taller than ours: could hide a labelled top
        if all(math.dist(centre, d.center) > 1.3 * max(d.edge, candidate.edge) for d in dice + pips):
            pips.append(candidate)
    return pips


def _pip_look(rng: np.random.Generator) -> CubeLook:
    body, pip = [((0.95, 0.95, 0.93), (0.05, 0.05, 0.05)), ((0.75, 0.1, 0.1), (0.97, 0.97, 0.97)),
                 ((0.05, 0.05, 0.05), (0.97, 0.97, 0.97)), ((0.1, 0.3, 0.7), (0.97, 0.97, 0.97))][int(rng.integers(4))]
    pip_rgb = np.asarray(pip, np.float32)
    return CubeLook(body, float(rng.uniform(0.08, 0.16)), float(rng.uniform(0, 1)), lambda i, size: (pip_mask(i + 1, size), pip_rgb))


def place_clutter(rng: np.random.Generator, cam: Camera, dice: list[PlacedDie], count: int) -> list[Item]:
    items: list[Item] = []
    for _ in range(count * 8):
        if len(items) >= count:
            break
        u, v = rng.uniform(-0.1, 1.1) * cam.width, rng.uniform(-0.1, 1.1) * cam.height
        centre = tuple(float(c) for c in cam.backproject_to_table(np.array([[u, v]]))[0])
        item = random_item(rng, centre)
        clear = all(math.dist(centre, d.center) > item.radius + 0.9 * d.edge for d in dice)
        if clear and all(math.dist(centre, o.center) > item.radius + o.radius for o in items):
            items.append(item)
    return items


# ---- drawing --------------------------------------------------------------------------------


def _table_coords(cam: Camera, step: int) -> tuple[np.ndarray, np.ndarray]:
    """Table point under every `step`-th pixel (the table is rendered small, then enlarged)."""
    xs, ys = np.meshgrid(
        np.arange(0, cam.width, step, dtype=np.float32) + step / 2, np.arange(0, cam.height, step, dtype=np.float32) + step / 2
    )
    inv = np.linalg.inv(cam.table_homography()).astype(np.float32)
    px, py, pw = (inv[r, 0] * xs + inv[r, 1] * ys + inv[r, 2] for r in range(3))
    return (px / pw).astype(np.float32), (py / pw).astype(np.float32)


def _shadows(canvas: np.ndarray, cam: Camera, dice: list[PlacedDie], light: Light) -> None:
    """Soft cast shadows and darker contact shadows, drawn at half size for speed."""
    h, w = canvas.shape[:2]
    cast = np.zeros((h // 2 + 1, w // 2 + 1), np.float32)
    contact = np.zeros_like(cast)
    lz = max(light.direction[2], 0.2)
    for die in dice:
        verts = die.vertices()
        on_table = verts - (verts[:, 2:3] / lz) * light.direction[None, :]
        shadow_px = cam.project(on_table) / 2
        hull = cv2.convexHull(shadow_px.astype(np.float32)).reshape(-1, 2)
        cv2.fillPoly(cast, [np.round(hull * 4).astype(np.int32)], 1.0, cv2.LINE_AA, 2)
        foot = cam.project(np.column_stack([die.footprint(), np.zeros(4)])) / 2
        cv2.fillPoly(contact, [np.round(foot * 4).astype(np.int32)], 1.0, cv2.LINE_AA, 2)
    px = float(np.mean([cam.px_per_unit_at(np.array([d.center]))[0] for d in dice])) / 2 if dice else 10.0
    cast = cv2.GaussianBlur(cast, (0, 0), max(0.5, light.softness * px))
    contact = cv2.GaussianBlur(contact, (0, 0), max(0.5, 0.08 * px))
    dark = np.clip(light.shadow_strength * (1 - light.ambient) * cast + 0.35 * contact, 0, 0.9)
    dark = cv2.resize(dark, (w, h), interpolation=cv2.INTER_LINEAR)
    canvas *= (1.0 - dark)[:, :, None]


def share_in_frame(poly: np.ndarray, width: float, height: float) -> float:
    """The share of a convex polygon's area (image pixels) that lies inside the photo."""
    frame = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    area = abs(cv2.contourArea(poly.astype(np.float32)))
    inside, _ = cv2.intersectConvexConvex(poly.astype(np.float32), frame)
    return float(inside) / area if area > 0 else 0.0


def _label(cam: Camera, die: PlacedDie) -> dict | None:
    poly = np.round(cam.project(die.top_corners()), 2)  # flags below must agree with the rounded label
    visible = share_in_frame(poly, cam.width, cam.height)
    if visible <= 0.0:
        return None
    x0, y0 = np.clip(poly.min(axis=0), 0, [cam.width, cam.height])
    x1, y1 = np.clip(poly.max(axis=0), 0, [cam.width, cam.height])
    truncated = bool((poly < 0).any() or (poly[:, 0] > cam.width).any() or (poly[:, 1] > cam.height).any())
    face = die.top_face
    return {
        "die": die.die.id,
        "value": "W" if face.is_wild else face.value,
        "color": face.color.value,
        "polygon": [[float(x), float(y)] for x, y in poly],
        "box": [round(float(v), 2) for v in (x0, y0, x1, y1)],
        "truncated": truncated,
        "visible": round(min(1.0, visible), 3),
        # the whole cube's outline (top and side faces), for telling a side face read as a die
        "cube": [[round(float(x), 1), round(float(y), 1)] for x, y in _outline(cam, die)],
    }


def _outline(cam: Camera, die: PlacedDie) -> np.ndarray:
    return cv2.convexHull(cam.project(die.vertices()).astype(np.float32)).reshape(-1, 2)


def render_scene(rng: np.random.Generator, split: str, opts: SceneOptions = SceneOptions()) -> Photo:
    """Draw one photo. The order of the random draws is part of each seed's meaning: keep it."""
    size = opts.size or SIZES[int(rng.integers(len(SIZES)))]
    n = opts.n_dice if opts.n_dice is not None else _n_dice(rng)
    app = sample_appearance(rng, split)
    if opts.body is not None:
        app = _with_body(app, opts.body)
    elif opts.dark_body:
        app = _with_body(app, _dark_body(rng, split))
    cam = _camera(rng, size, max(n, 1), opts)
    out_of_frame = opts.out_of_frame if opts.out_of_frame is not None else bool(rng.random() < 0.3)
    dice = place_dice(rng, cam, n, out_of_frame)
    light = _light(rng)
    if opts.clean:
        light = replace(light, kelvin=6500.0)
    elif opts.light in LIGHT_KELVIN:
        light = replace(light, kelvin=float(rng.uniform(*LIGHT_KELVIN[opts.light])))
    kind = opts.table or str(rng.choice(table_kinds(split)))
    canvas, pips, items = _table_scene(rng, split, cam, kind, dice, light, opts)
    _draw_dice(rng, canvas, cam, app, dice, pips, light, opts)
    extras = _overlays(rng, canvas, cam, dice, light, opts)
    light_rgb = kelvin_rgb(light.kelvin)
    canvas *= light_rgb.astype(np.float32)
    correction = WEAK_CORRECTION if opts.light in LIGHT_KELVIN else USUAL_CORRECTION
    fx = neutral_effects() if opts.clean else sample_effects(rng, light_rgb, correction)
    if opts.noise_max is not None:
        fx = replace(fx, noise=min(fx.noise, opts.noise_max))
    depth = _focus_map(rng, cam, dice) if fx.blur_kind == "defocus" and cam.tilt_deg > 12 and rng.random() < 0.5 else None
    image = apply_effects(rng, canvas, fx, depth, opts.blur_scale)
    labels = [lab for lab in (_label(cam, d) for d in dice) if lab is not None]
    conditions = _conditions(split, app, cam, light, kind, fx, dice, items, out_of_frame)
    conditions.update({"pip_dice": len(pips), **extras, "depth_of_field": depth is not None, "generator": GENERATOR_VERSION})
    if opts.light in LIGHT_KELVIN:
        conditions["light"]["kind"] = opts.light
    return Photo(image, labels, conditions)


def _table_scene(rng, split: str, cam: Camera, kind: str, dice: list[PlacedDie], light: Light, opts: SceneOptions):
    """The lit table with its clutter, pip dice placed (not drawn yet) and shadows cast."""
    table = render_table(rng, kind, *_table_coords(cam, TABLE_STEP)) * np.float32(light.lambert(UP))
    canvas = cv2.resize(table, (cam.width, cam.height), interpolation=cv2.INTER_LINEAR)
    n_clutter = opts.clutter if opts.clutter is not None else int(rng.choice([0, 0, 1, 2, 3, 5]))
    n_pips = 0 if opts.clutter == 0 else int(rng.choice([0, 0, 0, 0, 1, 2]))
    pips = place_pip_dice(rng, cam, dice, n_pips)
    items = place_clutter(rng, cam, dice + pips, n_clutter)
    fonts = fonts_for_split(split)
    for item in items:
        draw_item(canvas, cam, item, item_texture(rng, item, fonts) * np.float32([light.lambert(UP)] * 3 + [1.0]))
    if rng.random() < 0.3:
        _table_hotspot(rng, canvas)
    _shadows(canvas, cam, dice + pips, light)
    return canvas, pips, items


def _draw_dice(rng, canvas, cam: Camera, app: Appearance, dice: list[PlacedDie], pips: list[PlacedDie], light: Light, opts: SceneOptions) -> None:
    glare_gain = 0.0 if opts.clean else float(rng.uniform(0.0, 1.2))
    pip_look = _pip_look(rng)
    tops = []
    for die in paint_order(cam, dice + pips):
        look = pip_look if die.die is PIP_DIE else phase10_look(app, die.die)
        tops.append(draw_die(canvas, cam, die, look, light, glare_gain, rng))
    repaint_tops(canvas, tops)


def _overlays(rng, canvas, cam: Camera, dice: list[PlacedDie], light: Light, opts: SceneOptions) -> dict:
    """What comes between the dice and the lens: a hand, the photographer's shadow."""
    hand = False
    if opts.clutter != 0 and rng.random() < 0.12:
        hand = draw_hand(rng, canvas, _dice_mask(cam, dice))
    body_shadow = not opts.clean and rng.random() < 0.12
    if body_shadow:
        _photographer_shadow(rng, canvas, light)
    return {"hand": hand, "photographer_shadow": body_shadow}


def paint_order(cam: Camera, dice: list[PlacedDie]) -> list[PlacedDie]:
    """Far to near for cubes standing on the table: by distance from the point under the camera.

    Depth along the optical axis is not enough: looking straight down, two touching dice
    off-centre have equal depth, yet the outer one's inner side face hides behind the inner
    one's top face, and painting it last would cover a labelled top face.
    """
    nadir = cam.position[:2]
    return sorted(dice, key=lambda d: -math.dist(d.center, nadir))


def _dice_mask(cam: Camera, dice: list[PlacedDie]) -> np.ndarray:
    """Pixels covered by our dice, which a hand must not hide (their labels would lie)."""
    mask = np.zeros((cam.height, cam.width), np.uint8)
    for die in dice:
        hull = cv2.convexHull(cam.project(die.vertices()).astype(np.float32)).reshape(-1, 2)
        cv2.fillPoly(mask, [np.round(hull).astype(np.int32)], 1)
    return cv2.dilate(mask, np.ones((9, 9), np.uint8)) > 0


def _photographer_shadow(rng: np.random.Generator, canvas: np.ndarray, light: Light) -> None:
    """The soft shadow of the phone and the person holding it, over part of the scene."""
    h, w = canvas.shape[:2]
    small = np.zeros((48, 64), np.float32)
    centre = (int(rng.uniform(-10, 74)), int(rng.uniform(-10, 58)))
    cv2.ellipse(small, centre, (int(rng.uniform(15, 40)), int(rng.uniform(10, 30))), rng.uniform(0, 180), 0, 360, 1.0, -1)
    shade = cv2.resize(cv2.GaussianBlur(small, (0, 0), rng.uniform(2, 6)), (w, h), interpolation=cv2.INTER_LINEAR)
    canvas *= (1.0 - rng.uniform(0.3, 0.6) * (1 - light.ambient) * shade)[:, :, None]


def _table_hotspot(rng: np.random.Generator, canvas: np.ndarray) -> None:
    """The lamp's soft reflection on a glossy table top."""
    h, w = canvas.shape[:2]
    small = np.zeros((48, 64), np.float32)
    cx, cy = rng.uniform(0, 64), rng.uniform(0, 48)
    cv2.ellipse(small, (int(cx), int(cy)), (int(rng.uniform(4, 14)), int(rng.uniform(3, 10))), rng.uniform(0, 180), 0, 360, 1.0, -1)
    spot = cv2.resize(cv2.GaussianBlur(small, (0, 0), rng.uniform(2, 5)), (w, h), interpolation=cv2.INTER_LINEAR)
    canvas += (rng.uniform(0.1, 0.5) * spot)[:, :, None]


def _focus_map(rng: np.random.Generator, cam: Camera, dice: list[PlacedDie]) -> np.ndarray:
    """0 where the table is in focus (at a die) growing to 1 far from that depth: a tilted
    phone close to the table cannot keep near and far dice sharp together."""
    h, w = cam.height, cam.width
    xs, ys = np.meshgrid(np.linspace(0, w, 32, dtype=np.float32), np.linspace(0, h, 24, dtype=np.float32))
    table = cam.backproject_to_table(np.column_stack([xs.ravel(), ys.ravel()]))
    inv_depth = 1.0 / cam.depth(np.column_stack([table, np.zeros(len(table))]))
    focus = dice[int(rng.integers(len(dice)))].center if dice else (0.0, 0.0)
    inv_focus = 1.0 / cam.depth(np.array([[focus[0], focus[1], 0.0]]))[0]
    spread = np.abs(inv_depth - inv_focus) / (inv_depth.max() - inv_depth.min() + 1e-9)
    return cv2.resize(np.clip(spread * 2.0, 0, 1).reshape(24, 32).astype(np.float32), (w, h))


def _dark_body(rng: np.random.Generator, split: str) -> str:
    pool = BODIES_VAL if split == "val" else BODIES_TRAIN
    dark = sorted(name for name, (rgb, _) in pool.items() if float(np.mean(rgb)) < 0.35)
    return dark[int(rng.integers(len(dark)))]


def _with_body(app: Appearance, body: str) -> Appearance:
    rgb = {**BODIES_TRAIN, **BODIES_VAL}[body][0]
    return replace(app, body_name=body, body_rgb=rgb)


def _conditions(split, app, cam, light, kind, fx: CameraEffects, dice, items, out_of_frame) -> dict:
    touching = sum(1 for a in dice for b in dice if a is not b and math.dist(a.center, b.center) < 1.2) // 2
    return {
        "split": split,
        **app.conditions(),
        "n_dice": len(dice),
        "tilt_deg": round(cam.tilt_deg, 1),
        "roll_deg": round(cam.roll_deg, 1),
        "focal_px": round(cam.focal_px, 1),
        "face_px": round(float(cam.px_per_unit_at(np.zeros((1, 2)))[0]), 1),
        "light": {
            "elevation_deg": round(math.degrees(math.asin(light.direction[2])), 1),
            "kelvin": round(light.kelvin),
            "ambient": round(light.ambient, 2),
            "shadow_softness": round(light.softness, 2),
        },
        "table": kind,
        "clutter": [i.kind for i in items],
        "touching_pairs": touching,
        "out_of_frame_allowed": out_of_frame,
        **fx.conditions(),
    }
