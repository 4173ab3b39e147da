"""Camera sequences for the live view, made from a sample photo and its labels: Chromium plays a
.y4m file as its camera (`--use-file-for-fake-video-capture`), looping it. Shared by the
browser tests and benchmarks/bench_live.py (which import it as ``tests.live_sequences``).

- still: the ten dice lying still (the photo, every frame);
- rolling: the dice tumbling across the table (never twice in the same place and turn);
- hand: the still dice with a hand passing over them (somewhere in view in every frame);
- still_hand: the still dice with a hand held still beside them, reaching in from the edge (every
  die whole and in view);
- cut: the still dice with the view moved so that one die is cut by the frame's edge;
- dark_start: a camera starting, as a phone's often does: black pictures (its first buffers,
  empty) before the still dice.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
SAMPLE = "s01_black_10.jpg"  # ten dice, none near the photo's edge
SIZE = (960, 720)  # the fake camera's frame: width, height
FPS = 5
SEQUENCES = ("still", "rolling", "hand", "still_hand", "cut", "dark_start")
DARK_FRAMES = 2  # dark_start: its black pictures, 0.4 s at FPS


NOISE = 1.5  # a camera's sensor noise (grey levels): no two of its frames are the same


def sequence(name: str, frames: int = 10, seed: int = 0) -> list[np.ndarray]:
    """The frames (BGR, SIZE) of one sequence, each with its own sensor noise."""
    if name == "dark_start":  # the black pictures are empty buffers: no sensor noise in them
        still = sequence("still", frames - DARK_FRAMES, seed)
        return [np.zeros_like(still[0])] * DARK_FRAMES + still
    photo, dice = _sample()
    rng = np.random.default_rng(seed)
    if name == "still":
        clean = [_fit(photo)] * frames
    elif name == "rolling":
        clean = _rolling(photo, dice, frames, rng)
    elif name == "hand":
        still = _fit(photo)
        clean = [_with_hand(still, i / max(1, frames - 1)) for i in range(frames)]
    elif name == "still_hand":
        clean = [hand_resting_in(_fit(photo))] * frames
    elif name == "cut":
        clean = [_cut_view(photo, dice)] * frames
    else:
        raise ValueError(f"no sequence {name!r}: {', '.join(SEQUENCES)}")
    return [np.clip(f + rng.normal(0, NOISE, f.shape), 0, 255).astype(np.uint8) for f in clean]


def write_y4m(path: Path, frames: list[np.ndarray], fps: int = FPS) -> Path:
    """A YUV4MPEG2 file (4:2:0) of BGR frames, as Chromium's fake camera reads it."""
    h, w = frames[0].shape[:2]
    with path.open("wb") as out:
        out.write(f"YUV4MPEG2 W{w} H{h} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for frame in frames:
            out.write(b"FRAME\n")
            out.write(cv2.cvtColor(frame, cv2.COLOR_BGR2YUV_I420).tobytes())
    return path


def _sample() -> tuple[np.ndarray, list[np.ndarray]]:
    for line in (REPO / "sample_images" / "labels.jsonl").read_text("utf-8").splitlines():
        label = json.loads(line)
        if label["image"] == SAMPLE:
            photo = cv2.imread(str(REPO / "sample_images" / SAMPLE), cv2.IMREAD_COLOR)
            return photo, [np.array(d["polygon"], dtype=np.float32) for d in label["dice"]]
    raise FileNotFoundError(SAMPLE)


def _fit(image: np.ndarray) -> np.ndarray:
    return cv2.resize(image, SIZE, interpolation=cv2.INTER_AREA)


def _rolling(photo: np.ndarray, dice: list[np.ndarray], frames: int, rng) -> list[np.ndarray]:
    """The table without its dice, and each die's patch moved and turned every frame."""
    k = SIZE[0] / photo.shape[1]
    table = _fit(photo)
    mask = np.zeros(table.shape[:2], np.uint8)
    patches = []
    for polygon in dice:
        pts = polygon * k
        cv2.fillConvexPoly(mask, pts.astype(np.int32), 255)
        x0, y0 = np.floor(pts.min(0)).astype(int) - 6
        x1, y1 = np.ceil(pts.max(0)).astype(int) + 6
        patches.append(table[max(0, y0):y1, max(0, x0):x1].copy())
    table = cv2.inpaint(table, cv2.dilate(mask, np.ones((15, 15), np.uint8)), 7, cv2.INPAINT_TELEA)
    out = []
    starts = rng.uniform([60, 60], [SIZE[0] - 160, SIZE[1] - 160], size=(len(patches), 2))
    speeds = rng.uniform(70, 130, size=len(patches)) * rng.choice([-1, 1], size=(len(patches), 2)).T
    for i in range(frames):
        frame = table.copy()
        for j, patch in enumerate(patches):
            turned = np.rot90(patch, (i + j) % 4)
            x, y = (starts[j] + speeds[:, j] * i) % [SIZE[0] - 120, SIZE[1] - 120] + 20
            h, w = turned.shape[:2]
            frame[int(y):int(y) + h, int(x):int(x) + w] = turned[:SIZE[1] - int(y), :SIZE[0] - int(x)]
        out.append(cv2.GaussianBlur(frame, (5, 5), 0))  # rolling dice are a little blurred
    return out


def _with_hand(frame: np.ndarray, t: float) -> np.ndarray:
    """A hand (palm and fingers, skin tones, shaded) at `t` of its way across the view."""
    out = frame.copy()
    w, h = SIZE
    cx, cy = int(-0.1 * w + t * 1.1 * w), int(0.45 * h + 0.15 * h * np.sin(3 * t))
    layer = np.zeros_like(out)
    mask = np.zeros(out.shape[:2], np.uint8)
    skin = (120, 160, 215)  # BGR
    cv2.ellipse(layer, (cx, cy), (150, 120), 15, 0, 360, skin, -1)
    cv2.ellipse(mask, (cx, cy), (150, 120), 15, 0, 360, 255, -1)
    for n, (dx, dy, length) in enumerate([(-90, -150, 120), (-30, -175, 135), (30, -170, 130), (85, -145, 110)]):
        end = (cx + dx + 10 * n, cy + dy - length // 2)
        cv2.line(layer, (cx + dx // 2, cy + dy // 3), end, skin, 44)
        cv2.line(mask, (cx + dx // 2, cy + dy // 3), end, 255, 44)
    cv2.line(layer, (cx + 120, cy + 40), (cx + 230, cy - 40), skin, 50)
    cv2.line(mask, (cx + 120, cy + 40), (cx + 230, cy - 40), 255, 50)
    return _laid_over(out, layer, mask)


def hand_resting_in(frame: np.ndarray) -> np.ndarray:
    """A hand resting in the view's free left part, its arm reaching in from the left edge."""
    layer = np.zeros_like(frame)
    mask = np.zeros(frame.shape[:2], np.uint8)
    skin = (110, 150, 205)  # BGR

    def stroke(a, b, width):
        cv2.line(layer, a, b, skin, width)
        cv2.line(mask, a, b, 255, width)

    stroke((-40, 480), (90, 420), 90)  # the forearm
    cv2.ellipse(layer, (120, 400), (80, 65), -10, 0, 360, skin, -1)
    cv2.ellipse(mask, (120, 400), (80, 65), -10, 0, 360, 255, -1)
    for n in range(4):  # fingers, relaxed towards the dice
        stroke((165, 360 + 22 * n), (230 - 10 * abs(2 * n - 3), 350 + 26 * n), 26)
    stroke((120, 340), (170, 300), 30)  # the thumb
    return _laid_over(frame, layer, mask)


def _laid_over(frame: np.ndarray, layer: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """`layer` over `frame` where `mask` is, shaded across the view and with soft edges."""
    shade = np.linspace(0.8, 1.1, SIZE[0], dtype=np.float32)[None, :, None]
    layer = np.clip(layer.astype(np.float32) * shade, 0, 255).astype(np.uint8)
    soft = cv2.GaussianBlur(mask, (9, 9), 0).astype(np.float32)[..., None] / 255
    return (frame * (1 - soft) + layer * soft).astype(np.uint8)


def _cut_view(photo: np.ndarray, dice: list[np.ndarray]) -> np.ndarray:
    """The view moved right until the rightmost die is cut in half by the frame's edge."""
    h, w = photo.shape[:2]
    rightmost = max(dice, key=lambda p: p[:, 0].max())
    middle = float(rightmost[:, 0].mean())
    view_w, view_h = int(w * 0.85), int(h * 0.85)
    x0 = int(middle - view_w)
    y0 = (h - view_h) // 2
    return _fit(photo[y0:y0 + view_h, max(0, x0):max(0, x0) + view_w])
