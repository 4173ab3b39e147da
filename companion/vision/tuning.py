"""The tuned levels of the reading: numbers chosen on the choosing sets, not constants of nature.

They live in one versioned file beside calibration.json (models/tuning.json), loaded with the
models: each with its value and the command that chooses it. A models folder without the file
reads with the shipped one's. Changing a level changes readings: the snapshot
(training/readings_snapshot.py) is written again in the same commit, which says why.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from companion import assets

TUNING_FILE = "tuning.json"
VERSION = 1


class TuningError(ValueError):
    """A tuning file that is not this version's, or lacks a level."""


@dataclass(frozen=True, slots=True)
class DoubtLevels:
    """The levels of companion/vision/doubts.py's tests (what each means: the test's docstring)."""

    turns_sure: float
    doubtful_face_sure: float
    ink_doubt_temperature: float
    colour_margin_share: float
    value_margin_share: float
    face_share: float
    face_share_below: float
    tilted_view: float
    oversized: float
    flat_ring: float
    flat_body_tolerance: float
    flat_print_lead: float
    cut_area: float
    faint_warm_share: float
    doubted_share: float
    doubted_sure: float
    doubted_all_share: float
    small_face: float
    small_face_lead: float


@dataclass(frozen=True, slots=True)
class SearchLevels:
    """The levels of the search for faces (stage1_find_faces.py)."""

    small_face_px: float  # faces this small (working-image pixels) are searched again in a sharper copy
    small_face_share: float  # ... told by this quantile of the faces found
    usual_face_px: float  # ... zoomed so that the median face is about this large
    min_work_zoom: float  # a photo without a sharper copy is searched again in its own pixels from this zoom
    faint_same_face: float  # an upright view's box overlapping a found box beyond this is that box
    faint_reach: float  # ... and one is read only within this many of a found box's sides from it


@dataclass(frozen=True, slots=True)
class Tuning:
    """The levels the pipeline decides with (pipeline.py) and those its doubts flag from."""

    detection_sure: float  # a box the detector scores lower is flagged
    face_sure: float  # a box the face head rates lower is flagged
    unusual_light_sure: float  # under an unusual or untold light a die is flagged under this confidence
    search: SearchLevels
    doubts: DoubtLevels

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str) -> Tuning:
        if data.get("version") != VERSION:
            raise TuningError(f"{source} is tuning version {data.get('version')!r}, this reader reads {VERSION}")
        levels = data.get("levels", {})

        def value(name: str) -> float:
            try:
                return float(levels[name]["value"])
            except (KeyError, TypeError, ValueError):
                raise TuningError(f"{source} has no level {name} (a number under levels.{name}.value)") from None

        own = {f.name: value(f.name) for f in fields(cls) if f.name not in ("search", "doubts")}
        search = SearchLevels(**{f.name: value(f.name) for f in fields(SearchLevels)})
        doubts = DoubtLevels(**{f.name: value(f.name) for f in fields(DoubtLevels)})
        return cls(**own, search=search, doubts=doubts)

    @classmethod
    def load(cls, folder: Path) -> Tuning:
        """The folder's tuning.json; the shipped levels when it has none."""
        path = folder / TUNING_FILE
        if not path.is_file():
            return shipped_tuning()
        return cls.from_json(json.loads(path.read_text("utf-8")), str(path))


@functools.cache
def shipped_tuning() -> Tuning:
    """The levels the package ships (models/tuning.json), read once when first asked."""
    path = assets.models_dir() / TUNING_FILE
    return Tuning.from_json(json.loads(path.read_text("utf-8")), str(path))
