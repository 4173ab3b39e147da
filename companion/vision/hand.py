"""A hand in the view: a skin-toned region beside the dice, unlike the table around them, that
reaches in from the frame's edge.

The live view takes no photo while a hand is in view, still or not (a hand held still over the
table is about to move a die). Skin tones sit in a band of the YCrCb chroma plane whatever the
light and the skin, but so do wooden tables, warm light and one colour of a patterned cloth: a
region counts only where its chroma is also away from each of the table's own colours (the main
clusters of the chroma just around the dice: a checked or striped cloth has two), and a region
that fills most of the view is the table. On a table of the hand's own colour the view cannot tell a hand, and
takes the photo only at a tap. The levels chosen on the choosing sets are the models' tuning
(models/tuning.json, tuning.HandLevels).
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from companion.vision.tuning import HandLevels, shipped_tuning

WORK_SIDE = 160  # the long side (px) the frame is looked at: a hand is large
DIE_MARGIN = 0.25  # each die's box grown by this share of its size: its own coloured ink and shadow
RING = 0.8  # the table around a die: its box grown by this share, less the grown box
CLUSTER_STEPS = 10  # k-means steps for the table's colours: a few hundred pixels settle in fewer
MOST_SHARE = 0.5  # of the view: a skin-toned region larger than this is the table


def hand_in_view(image: np.ndarray, dice_boxes: Sequence[Sequence[float]], scale: float = 1.0,
                 levels: HandLevels | None = None) -> bool:
    """Whether a hand is in this frame (BGR). `dice_boxes`: the dice read in it, [x0, y0, x1, y1]
    in pixels of an image `scale` times the frame's size (the reading's own); `levels`: the
    models' (the shipped ones' when not given)."""
    lv = levels or shipped_tuning().hand
    h, w = image.shape[:2]
    k = WORK_SIDE / max(h, w)
    small = cv2.resize(image, (max(1, round(w * k)), max(1, round(h * k))), interpolation=cv2.INTER_AREA)
    y, cr, cb = cv2.split(cv2.cvtColor(small, cv2.COLOR_BGR2YCrCb))
    skin = ((cr >= lv.skin_cr[0]) & (cr <= lv.skin_cr[1]) & (cb >= lv.skin_cb[0]) & (cb <= lv.skin_cb[1])
            & (y >= lv.skin_luma))
    dice = _boxes_mask(skin.shape, dice_boxes, k / scale, DIE_MARGIN)
    ring = _boxes_mask(skin.shape, dice_boxes, k / scale, RING) & ~dice
    if ring.any():
        chroma = np.stack([cr, cb], axis=-1).astype(np.float32)
        for colour in table_colours(chroma[ring], lv.table_colours, lv.table_colour_share):
            skin &= np.linalg.norm(chroma - colour, axis=-1) > lv.table_distance
    skin &= ~dice
    mask = cv2.morphologyEx(skin.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))  # speckle: no hand
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    sh, sw = mask.shape
    for x, y0, bw, bh, area in stats[1:count]:
        at_edge = x == 0 or y0 == 0 or x + bw == sw or y0 + bh == sh
        if at_edge and lv.hand_least_share <= area / (sh * sw) <= MOST_SHARE:
            return True
    return False


def table_colours(chroma: np.ndarray, k: int, least_share: float) -> list[np.ndarray]:
    """The table's own colours: the centres of the `k` clusters (k-means) of its pixels' chroma
    (N x 2) that hold at least `least_share` of them. Starts from points spread along the chroma's
    main axis, so the same pixels give the same colours."""
    k = max(1, min(k, len(chroma)))
    spread = chroma - chroma.mean(axis=0)
    order = np.argsort(spread @ np.linalg.svd(spread, full_matrices=False)[2][0])
    centres = chroma[order[((np.arange(k) + 0.5) * len(chroma) / k).astype(int)]]
    for _ in range(CLUSTER_STEPS):
        nearest = _nearest(chroma, centres)
        centres = np.array([chroma[nearest == i].mean(axis=0) if (nearest == i).any() else centres[i]
                            for i in range(k)], np.float32)
    shares = np.bincount(_nearest(chroma, centres), minlength=k) / len(chroma)
    return [c for c, share in zip(centres, shares) if share >= least_share]


def _nearest(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    return np.argmin(np.linalg.norm(points[:, None, :] - centres[None], axis=-1), axis=1)


def _boxes_mask(shape: tuple[int, ...], boxes: Sequence[Sequence[float]], k: float, grow: float) -> np.ndarray:
    mask = np.zeros(shape[:2], bool)
    for x0, y0, x1, y1 in boxes:
        mx, my = grow * (x1 - x0), grow * (y1 - y0)
        mask[max(0, int((y0 - my) * k)):int((y1 + my) * k) + 1, max(0, int((x0 - mx) * k)):int((x1 + mx) * k) + 1] = True
    return mask
