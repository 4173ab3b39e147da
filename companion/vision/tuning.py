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
from companion.vision.decoder import DecodeSettings
from companion.vision.joint_colour import InkLevels

TUNING_FILE = "tuning.json"
VERSION = 3  # 3: with the live view's hand levels; 2: every other group below; 1: the doubts' and the search's


class TuningError(ValueError):
    """A tuning file that is not this version's, or lacks a level."""


@dataclass(frozen=True, slots=True)
class DoubtLevels:
    """The levels the doubts' scores and margins are measured at (companion/vision/doubts.py: doubt_margins)."""

    turns_sure: float
    doubtful_face_sure: float
    ink_doubt_temperature: float
    colour_margin_share: float
    value_margin_share: float
    face_share_below: float
    tilted_view: float
    oversized: float
    flat_ring: float
    flat_body_tolerance: float
    flat_print_lead: float
    cut_area: float
    faint_warm_share: float
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
class PipelineLevels:
    """The run-time levels ReadSettings may override (settings.py: each field's meaning)."""

    reader_sure: float
    reader_sure_one: float
    reader_cascade: float
    mirror_band: tuple[float, float] | None
    zoomed_views: int | None
    faint_heat: float
    dark_face_threshold: float | None
    faint_face_threshold: float | None
    missed_top_bands: tuple[tuple[float, float], ...]
    decoding: DecodeSettings


@dataclass(frozen=True, slots=True)
class ReadLevels:
    """How many boxes are read and how close two peaks may be (stage2_read.py, detector.py)."""

    extra_candidates: int  # boxes read beyond the set's 10 dice: the face head may turn some down
    peak_overlap: float  # a weaker peak whose box overlaps a stronger one's beyond this (IoU) is that face


@dataclass(frozen=True, slots=True)
class RegionLevels:
    """Where the second search looks (regions.py)."""

    region_margin: float  # the ground searched reaches this many faces beyond each faint cell
    whole_share: float  # regions adding up to more of the photo than this: the photo is searched whole


@dataclass(frozen=True, slots=True)
class CubeLevels:
    """The levels of cubes.py's rules (what each means: the rule's docstring there)."""

    cube_near: float
    side_sure: float
    sure_tie: float
    same_cube_reach: float
    same_die: float
    ten_covered: float
    same_face_reach: float
    lowered_side: float
    lowered_same_die: float
    faint_side: float
    faint_pair: float
    unsure_face: float
    unsure_side: float
    unsure_pair: float
    unsure_same_die: float
    doubt_side: float
    doubt_pair: float
    doubt_same_die: float


@dataclass(frozen=True, slots=True)
class MissedTopLevels:
    """Where a missed top face is looked for beyond a kept box (top_faces.py)."""

    missed_heat: float  # the weakest heat of a peak looked at again
    missed_reach: tuple[float, float]  # how far (in the kept box's size) the peak's centre lies from the box's
    missed_away: float  # how nearly away from the camera (a cosine) it lies
    missed_same_box: float  # a peak this close (in a read box's size) to a read box's centre is that box
    missed_candidates: int  # the most peaks looked at


@dataclass(frozen=True, slots=True)
class HandLevels:
    """What the live view takes for a hand in a frame (hand.py)."""

    skin_cr: tuple[float, float]  # the YCrCb chroma band of skin: Cr
    skin_cb: tuple[float, float]  # ... and Cb
    skin_luma: float  # darker than this the chroma says nothing
    table_distance: float  # a skin pixel this far (CrCb) from each of the table's colours is not the table
    table_colours: int  # the table's chroma around the dice is split into this many clusters (k-means) ...
    table_colour_share: float  # ... and each holding at least this share of it is one of the table's colours
    hand_least_share: float  # of the view: a region smaller than this is a fingertip or a stain, not a hand


@dataclass(frozen=True, slots=True)
class Tuning:
    """The levels the pipeline decides with (pipeline.py) and those its doubts flag from."""

    detection_sure: float  # a box the detector scores lower is flagged
    face_sure: float  # a box the face head rates lower is flagged
    unusual_light_sure: float  # under an unusual or untold light: the confidence the doubt model's light_margin is told from
    doubt_flag_from: float  # the doubt model's operating point: a die this likely wrong or more is flagged (doubt_model.py)
    doubt_die_drop: float  # a flagged die is asked whether it is a die where its box's scores weigh this much (log-odds)
    pipeline: PipelineLevels
    read: ReadLevels
    search: SearchLevels
    regions: RegionLevels
    cubes: CubeLevels
    missed_tops: MissedTopLevels
    doubts: DoubtLevels
    hand: HandLevels
    inks: InkLevels

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str) -> Tuning:
        if data.get("version") != VERSION:
            raise TuningError(f"{source} is tuning version {data.get('version')!r}, this reader reads {VERSION}")
        levels = data.get("levels", {})

        def value(name: str, kind: str) -> Any:
            try:
                return _LEVEL_KINDS[kind](levels[name]["value"])
            except (KeyError, TypeError, ValueError):
                raise TuningError(f"{source} has no level {name} ({kind} under levels.{name}.value)") from None

        def group(kind: type) -> Any:
            return kind(**{f.name: value(f.name, str(f.type)) for f in fields(kind)})

        own = {f.name: value(f.name, str(f.type)) for f in fields(cls) if f.name not in _GROUPS}
        pipeline = {f.name: value(f.name, str(f.type)) for f in fields(PipelineLevels) if f.name != "decoding"}
        return cls(**own, pipeline=PipelineLevels(**pipeline, decoding=group(DecodeSettings)),
                   **{name: group(kind) for name, kind in _GROUPS.items() if name != "pipeline"})

    @classmethod
    def load(cls, folder: Path) -> Tuning:
        """The folder's tuning.json; the shipped levels when it has none."""
        path = folder / TUNING_FILE
        if not path.is_file():
            return shipped_tuning()
        return cls.from_json(json.loads(path.read_text("utf-8")), str(path))


_GROUPS: dict[str, type] = {"pipeline": PipelineLevels, "read": ReadLevels, "search": SearchLevels,
                            "regions": RegionLevels, "cubes": CubeLevels, "missed_tops": MissedTopLevels,
                            "doubts": DoubtLevels, "hand": HandLevels, "inks": InkLevels}


def _band(v: Any) -> tuple[float, float]:
    low, high = (float(x) for x in v)
    return (low, high)


def _optional(read: Any) -> Any:
    return lambda v: None if v is None else read(v)


def _whole(v: Any) -> int:
    if float(v) != int(v):
        raise ValueError(v)
    return int(v)


# How a level of each type is read from the file (the dataclasses' field types, as written there).
_LEVEL_KINDS: dict[str, Any] = {
    "float": float, "int": _whole, "float | None": _optional(float), "int | None": _optional(_whole),
    "tuple[float, float]": _band, "tuple[float, float] | None": _optional(_band),
    "tuple[tuple[float, float], ...]": lambda v: tuple(_band(b) for b in v),
}


@functools.cache
def shipped_tuning() -> Tuning:
    """The levels the package ships (models/tuning.json), read once when first asked."""
    path = assets.models_dir() / TUNING_FILE
    return Tuning.from_json(json.loads(path.read_text("utf-8")), str(path))
