"""Stage 1 of reading a photo (pipeline.py): find the top faces of the dice in the loaded photo.

The detector (detector.py) searches the working image; a photo whose faces are small is searched
again in its sharper copy, only around what the first search saw (regions.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from companion.dice import MAX_DICE
from companion.vision.detector import Detection, DetectorModel, Heatmap, box_ious
from companion.vision.image_io import MAX_DETAIL, WorkImage, load_detail
from companion.vision.models import Models
from companion.vision.regions import Box, faint_regions, input_windows
from companion.vision.settings import ReadSettings
from companion.vision.tuning import SearchLevels

DEFAULT_SETTINGS = ReadSettings()

# The sharpest copy load_work_image keeps: a second search zooms by at most this.
MAX_ZOOM = MAX_DETAIL


@dataclass(frozen=True)
class FoundFaces:
    """What the search found: the boxes, surest first, in the pixels of `image` (the working image,
    or its sharper copy where small faces were searched again there)."""

    image: WorkImage
    boxes: list[Detection]
    seen: WorkImage  # the working image, whose upright view `upright` is
    upright: Heatmap  # the upright view's heatmap of `seen` (for the missed top faces: top_faces.py)
    faint: list[Detection]  # faces only the upright view finds (faint_faces; none after a second search)


def find_faces(work: WorkImage, models: Models, settings: ReadSettings = DEFAULT_SETTINGS) -> FoundFaces:
    """The photo's top faces, surest first, and the image they were found in (box pixels).

    A phone photo taken from sitting height shows a die's face at 60-140 of its 4000 pixels:
    15-35 px in the 960-px working image and 7-16 px in the detector's input, smaller than
    almost all it learnt from, so it misses many and the reader cannot make out the numerals.
    When the smaller faces found are that small (or none are found) and the photo has the pixels,
    it is searched again in the sharper copy kept at loading (up to MAX_ZOOM times the working
    size) with a proportionally larger detector input: the faces then have their usual size
    in both models. A photo with no sharper copy (a small file) is searched again in the working
    image itself, which holds up to twice the detector input's pixels. The size is told from the
    upright view alone, so a photo searched again does not pay for the mirror views of the first
    search, and the second search covers only the ground around what the first saw
    (companion/vision/regions.py).
    """
    detector = models.detector
    upright = detector.heatmap(work.rgb)  # one view tells the faces' size; the others may not be needed
    first = detector.detections(upright)
    levels, run = models.tuning.search, settings.levels(models.tuning)
    zoom = _zoom(first, levels) if settings.zoom_small_faces else 1.0
    if zoom > 1.0:
        zoomed_side = round(work.long_side * zoom)
        sharper = load_detail(work, zoomed_side)
        # without a sharper copy, the working image's own pixels: more than the detector's input
        within = 1.0 if sharper is not work else min(zoom, work.long_side / detector.input_long_side)
        if sharper is not work or (settings.zoom_within_work and within > levels.min_work_zoom):
            regions = faint_regions(upright, detector.stride, _typical_face(first), run.faint_heat, models.tuning.regions)
            views = (run.zoomed_views if sharper is not work else None) or settings.detector_views
            found = _search_regions(detector, sharper, work, regions, views, zoomed_side, within)
            return FoundFaces(sharper, _surest(found), work, upright, [])
    if run.mirror_band is None:
        heatmap = detector.all_views(upright, settings.detector_views)
    else:
        heatmap = detector.views_near_peaks(upright, settings.detector_views, run.mirror_band)
    found = _surest(detector.detections(heatmap))
    return FoundFaces(work, found, work, upright, faint_faces(first, found, levels))


def faint_faces(upright: list[Detection], found: list[Detection], levels: SearchLevels) -> list[Detection]:
    """The boxes the upright view alone finds over the detector's threshold (`upright`, with its
    heat) that no box of the views averaged (`found`) marks: the mirror views took them under it.

    Seen from well off vertical, a dark cube's top face is a thin band over the larger side face
    turned to the camera; the mirror views, which see the cube upside down, lower its heat. Only a
    box beside a box found (levels.faint_reach) is looked at: elsewhere such boxes are prints and bare ground. Scored by the upright view's heat: the cube
    model, which weighs a box's detector score, takes the averaged one for a side face's."""
    boxes = np.array([f.box for f in found]).reshape(-1, 4)
    return [d for d in upright if not (box_ious(np.array(d.box), boxes) > levels.faint_same_face).any()
            and any(math.dist(d.centre, f.centre) <= levels.faint_reach * f.side for f in found)][:MAX_DICE]


def _search_regions(
    detector: DetectorModel, sharper: WorkImage, work: WorkImage, regions: list[Box], views: int | None,
    zoomed_side: int, within: float = 1.0,
) -> list[Detection]:
    """Detect in the regions (working-image pixels) of the sharper copy, whose pixels go in at
    the working image's input scale: its faces, larger by the zoom, are then as large in the
    input as the models are used to. Boxes in the sharper copy's pixels. `zoomed_side`: the long
    side the sharper copy was asked for; load_detail may give one a little larger, and the input
    is scaled to the smaller. With `sharper` the working image itself (smaller than asked for),
    its input is `within` times the usual one instead."""
    long_side = round(detector.input_long_side * min(sharper.long_side, zoomed_side) / work.long_side * within)
    windows = input_windows(regions, long_side / work.long_side)  # input pixels per working pixel
    return detector.detect_in_windows(sharper.rgb, windows, long_side, views)


def _surest(detections: list[Detection]) -> list[Detection]:
    return sorted(detections, key=lambda d: -d.score)


def _zoom(detections: list[Detection], levels: SearchLevels) -> float:
    """How much sharper the image should be for faces of the size the models know (1: as it is)."""
    return zoom_for_faces([_face_size(d) for d in detections], levels)


def zoom_for_faces(sides: list[float], levels: SearchLevels) -> float:
    """The zoom for faces whose longer sides (working-image pixels) are `sides`: when the
    smaller of them (levels.small_face_share) are small, what brings the median to about levels.usual_face_px
    (1, no second search, when the median is already that large); none: MAX_ZOOM."""
    if not sides:
        return MAX_ZOOM
    if float(np.quantile(sides, levels.small_face_share)) >= levels.small_face_px:
        return 1.0
    return min(MAX_ZOOM, max(1.0, levels.usual_face_px / max(float(np.median(sides)), 1.0)))


def _face_size(d: Detection) -> float:
    return max(d.box[2] - d.box[0], d.box[3] - d.box[1])


def _typical_face(detections: list[Detection]) -> float | None:
    """The median face's longer side, in the pixels of the image searched (None: no faces)."""
    if not detections:
        return None
    return float(np.median([_face_size(d) for d in detections]))
