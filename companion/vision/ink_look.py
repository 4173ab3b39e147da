"""How a face's ink looks against its own body: the evidence a dice-set profile learns each ink's
look under one table's light from (profile.py).

Under a hot lamp a red ink and an orange one may take nearly the same hue, but the orange one is
still the lighter (training/ink_separation.py: on the far look's photos the hue alone orders a
photo's red and orange dice apart on 69 of 86, hue or darkness on 82). A face's ink is measured
as inks.py measures it (its face centre's mean offset from its body, per channel, on a light
body; on a dark body the offset of its pixels farthest from the body), and kept as the direction
of that offset: its hue and how much darker (or brighter) than the body it is, per unit of
colour. The numeral's ink coverage (a 1 against an 8) scales the offset and drops out of its
direction. Directions of one set under one light are comparable between photos; nothing here
compares them with another set's.
"""

from __future__ import annotations

import numpy as np

from companion.vision.inks import BODY_SHARE, INK_SHARE, SRGB_TO_LINEAR, body_chroma_of, face_centre, ink_offset

LOOK_DIMS = 3
_TINY = 1e-6


def ink_looks(rgb: np.ndarray, boxes: list[tuple[float, float, float, float]], light: bool) -> np.ndarray:
    """(n, LOOK_DIMS): each face's ink offset from its body as a direction (a row of length 1),
    on light bodies (`light`: the bodies are a white reference) or dark ones; a row of NaN where
    the face is too small to measure or its ink does not stand out from its body."""
    out = np.full((len(boxes), LOOK_DIMS), np.nan, np.float32)
    patches = [face_centre(rgb, box) for box in boxes]
    body = body_chroma_of(patches) if light else None
    if light and body is None:
        return out
    for i, patch in enumerate(patches):
        if patch is None:
            continue
        offset = ink_offset(patch, body) if body is not None else _dark_offset(patch)
        size = float(np.linalg.norm(offset))
        if size > _TINY:
            out[i] = offset / size
    return out


def _dark_offset(patch: np.ndarray) -> np.ndarray:
    """A dark body's ink (as inks.py measures it): the mean linear offset of the pixels farthest
    from the body, the face's darkest part."""
    px = SRGB_TO_LINEAR[patch].reshape(-1, 3).astype(np.float64)
    near = np.argsort(px.mean(axis=1))
    body = np.median(px[near[: int(BODY_SHARE * len(px))]], axis=0)
    offset = px - body
    k = max(6, int(INK_SHARE * len(px)))
    return offset[np.argsort(-np.linalg.norm(offset, axis=1))[:k]].mean(axis=0)
