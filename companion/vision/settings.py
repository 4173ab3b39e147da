"""How photos are read: one frozen settings object, made once and passed down.

    from companion.vision import ReadSettings, read_image
    reading = read_image("photo.jpg", settings=ReadSettings(reader_turns=1))

The defaults are the shipped pipeline. The CLI and the server make theirs once with
`ReadSettings.from_env()`, from these environment variables (for experiments and deployments):

    COMPANION_MODELS          the models folder (default: the package's models/)
    COMPANION_READER_TURNS    quarter turns of each crop the reader votes over, 1..4 (4)
    COMPANION_READER_SURE     a crop this sure after the first two turns skips the others (0.99; 1: never)
    COMPANION_READER_SURE_ONE a crop this sure after the first turn skips the second (0.999; 1: never)
    COMPANION_READER_CASCADE  a crop the reader's first part reads this sure upright is read by it alone (0.999; 1: never)
    COMPANION_DETECTOR_VIEWS  mirror views of the detector's heatmap, 1..4 (default: the calibration's)
    COMPANION_MIRROR_BAND     "low,high": the mirror views only around the upright view's peaks of
                              heat in [low, high] (0.1,0.9; "all": the whole image)
    COMPANION_ZOOM            0 turns off the second search of small dice in a sharper copy
    COMPANION_ZOOMED_VIEWS    mirror views of that second search in a sharper copy, 1..4 (2; 0: as the first)
    COMPANION_FAINT_HEAT      heat that marks ground for the second search (0.05; 0: the whole photo)
    COMPANION_BALANCE_LIGHT   0 reads the crops as they are under a light beyond the training's (on by default)
    COMPANION_JOINT_COLOUR    0 judges each die's ink colour alone (on by default: a photo's dice together)
    COMPANION_USUAL_LIGHT_JOINT 0 leaves every colour to the reader under the usual light (on by default:
                              the photo's inks decide the dice the reader is unsure of)
    COMPANION_LIGHT_COLOUR    0 reads the colour of crops corrected from an unusual light with the reader's
                              colour head (on by default: models/light_colour.json's head)
    COMPANION_DARK_FACE       the face probability a box needs on a photo of dark dice bodies (0.3; "none":
                              the calibration's, as on every other photo)
    COMPANION_ONE_PER_CUBE    0 flags, instead of dropping, a box the cube model calls a second one on a cube
    COMPANION_MISSED_TOP_BANDS "low,high;low,high": a weak peak beyond a kept box whose face probability
                              the reader's vote leaves outside the first band upright, or the second after
                              two turns, is read no further (0.02,0.98;0.1,0.9; "all": every peak at every
                              turn the vote gives it)

Nothing reads the environment at import.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from companion.vision.decoder import DecodeSettings

CPU_PROVIDERS = ("CPUExecutionProvider",)
MAX_VIEWS = 4  # the detector's mirror views: none, left-right, up-down, both
MAX_TURNS = 4  # the reader's quarter turns


@dataclass(frozen=True, slots=True)
class ReadSettings:
    """Where the models are and the pipeline's run-time choices (see the module docstring)."""

    models_dir: Path | None = None  # None: the package's own models
    providers: tuple[str, ...] = CPU_PROVIDERS  # onnxruntime execution providers, in order
    reader_turns: int = 4
    # the vote starts with two turns of every crop; only a crop they leave unsure (its most
    # likely value, colour or face/not-face not above this) is read at the other turns too
    reader_sure: float = 0.99
    # ... and before that, every crop is read upright alone: only one it leaves at or under this
    # is read at the second turn (1.0: every crop gets two turns). Chosen on data/calib and its
    # stress sets, where it reads as two turns for all do; 0.99 lets one more silent error through
    # under a warm lamp, where the reader is trusted only from 0.99 (pipeline.UNUSUAL_LIGHT_SURE)
    reader_sure_one: float = 0.999
    # a joined reader with its parts beside it (reader.load_parts): a crop whose every head the
    # first part alone reads above this, upright, is read by that part alone, the others by all
    # parts (1.0: every crop by all). Where a crop's embedding is needed (a colour head for the
    # photo's light, a table's profile) every crop is read by all parts (pipeline.kept_boxes).
    reader_cascade: float = 0.999
    detector_views: int | None = None  # None: the views the calibration's thresholds were chosen with
    # the mirror views are taken only around the upright view's peaks whose heat is in this band
    # (detector.views_near_peaks): above it a peak is a face and under it none, whatever the
    # views add; None: the whole image gets every view. On data/calib and its stress sets the
    # views move a peak's heat by 0.1 typically; with this band they read as with every view
    # (one die fewer right, flagged, under dim light) at two thirds of the views' work, and
    # with (0.2, 0.8) at a third, one die fewer right (flagged) in three of the five sets
    mirror_band: tuple[float, float] | None = (0.1, 0.9)
    zoom_small_faces: bool = True
    # the mirror views of the second search in a sharper copy (None: as many as the first search; a photo
    # searched again in its own pixels always takes as many). On the choosing sets with a sharper copy (far
    # calib, page calib, page far calib: 550 photos) two views against four: one silent photo fewer (far calib
    # 0.67% -> 0), 4 fewer wrong dice, 7 more (photo, phase) pairs scored as the true dice would be, one
    # photo fewer all right and one die more read twice (flagged), 0.2-0.5 point more dice flagged; and
    # a fifth less time for a far photo. One view: as many wrong dice, more colour swaps on far calib
    zoomed_views: int | None = 2
    # a photo without a sharper copy searched again in the working image at a larger input
    # (pipeline.MIN_WORK_ZOOM): on the choosing sets (6,280 photos) 52 more dice found, 36 more
    # (photo, phase) pairs scored as the true dice would be, 127 fewer dice flagged, 4 fewer read
    # twice, and one silent photo more (a cold-light 2o read 2r at 0.994, flagged at 0.98 without)
    zoom_within_work: bool = True
    faint_heat: float = 0.05
    balance_light: bool = True  # under a light beyond the training look's, correct the crops (white_balance.py)
    # the colour of crops so corrected from the head learnt for them (light_colour.py), when the models have one
    light_colour_head: bool = True
    # decide the ink colours of a photo's dice together (joint_colour.py), under an unusual light or on dark bodies
    # (under the usual light only for the dice the reader is unsure of: usual_light_joint)
    joint_colour: bool = True
    # with joint_colour, under the usual light too, for the dice the reader is unsure of (joint_colour.usual_light_colours)
    usual_light_joint: bool = True
    # on a photo whose dice have dark bodies (no white reference: inks.light_reference), a box the detector
    # is sure of (pipeline.DETECTION_SURE) is read as a die from this face probability (None: the
    # calibration's face_threshold, 0.5, everywhere); such a box is flagged (pipeline.FACE_SURE). The face
    # head is less sure of dark faces: on the first halves of the two dark calib sets (210 photos, 182
    # without a white reference) the boxes it rates 0.3-0.5 there are 7 dice and 2 boxes on none (0.2: 8
    # and 5; 0.4: 4 and 1); 0.25 and 0.35 find as many dice or one fewer, with more dice flagged
    dark_face_threshold: float | None = 0.3
    # a face the upright view alone finds (over the detector's threshold there) and the mirror views, averaged
    # in, take under it, is read as a die from this face probability (None: never); such a box is flagged
    # (pipeline.DETECTION_SURE). Seen from well off vertical, a dark die's small top face beside its larger
    # side face is often such a face (pipeline.faint_faces). On the first halves of the dark calib sets the
    # faint boxes kept from 0.5 are 3 dice (face head 0.88-0.99) and 3 boxes on no top face (0.58, 0.87, 0.91);
    # 0.6-0.87 keep the same 3 dice and 2 of those boxes, both flagged
    faint_face_threshold: float | None = 0.7
    # drop a box the cube model calls a second one on a cube (cubes.py; False: flag it instead)
    one_per_cube: bool = True
    # the doubts that flag no die (companion/vision/doubts.py: SWITCHABLE names them), for comparing
    # what each adds; every doubt is on in the shipped pipeline
    disabled_doubts: frozenset[str] = frozenset()
    # a peak beyond a kept box (the doubt "missed_tops": top_faces.py) whose face probability lies outside the first band upright, or the second after
    # two turns of the reader's vote, is read no further: only the face head is asked of it (empty:
    # every peak at every turn the vote gives a box). On the choosing sets' 893 peaks these decide
    # every peak as every turn does, with 52% of the reads; read at every turn, the surest of the peaks
    # they stop low ends up at 0.22, the least sure they stop high at 0.87 (the face level is 0.5;
    # upright 0.05 would stop one at 0.04 that ends up at 0.46; from two turns on, the face probability
    # moves less: 1.7 in log-odds at most, against 3.5 from upright)
    missed_top_bands: tuple[tuple[float, float], ...] = ((0.02, 0.98), (0.1, 0.9))
    decoding: DecodeSettings = field(default_factory=DecodeSettings)

    def __post_init__(self) -> None:
        if not 1 <= self.reader_turns <= MAX_TURNS:
            raise ValueError(f"The reader votes over 1 to {MAX_TURNS} turns, not {self.reader_turns}.")
        for name in ("detector_views", "zoomed_views"):
            views = getattr(self, name)
            if views is not None and not 1 <= views <= MAX_VIEWS:
                raise ValueError(f"The detector takes 1 to {MAX_VIEWS} mirror views, not {views} ({name}).")
        for name in ("reader_sure", "reader_sure_one", "reader_cascade"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} is a probability (0..1), not {getattr(self, name)}.")
        for name, band in [("mirror_band", self.mirror_band), *(("missed_top_bands", b) for b in self.missed_top_bands)]:
            if band is not None and not 0.0 <= band[0] <= band[1] <= 1.0:
                raise ValueError(f"{name} holds (low, high) with 0 <= low <= high <= 1, not {band}.")
        if self.faint_face_threshold is not None and not 0.0 <= self.faint_face_threshold <= 1.0:
            raise ValueError(f"faint_face_threshold is a probability (0..1), not {self.faint_face_threshold}.")
        if self.dark_face_threshold is not None and not 0.0 <= self.dark_face_threshold <= 1.0:
            raise ValueError(f"dark_face_threshold is a probability (0..1), not {self.dark_face_threshold}.")
        if not 0.0 <= self.faint_heat <= 1.0:
            raise ValueError(f"faint_heat is a heatmap level (0..1), not {self.faint_heat}.")
        if not self.providers:
            raise ValueError("At least one onnxruntime execution provider is needed.")
        unknown = sorted(set(self.disabled_doubts) - _switchable()) if self.disabled_doubts else []
        if unknown:
            raise ValueError(f"No doubt is named {', '.join(unknown)} (the doubts: {', '.join(sorted(_switchable()))}).")

    def without_doubts(self, *names: str) -> ReadSettings:
        """These settings with the doubts `names` off too."""
        return replace(self, disabled_doubts=self.disabled_doubts | frozenset(names))

    def with_doubts(self, *names: str) -> ReadSettings:
        """These settings with the doubts `names` on again."""
        return replace(self, disabled_doubts=self.disabled_doubts - frozenset(names))

    def without_scene_flags(self) -> ReadSettings:
        """These settings with every doubt that may be off, off, for comparing what the doubts add.
        A die is then still flagged for the decoder's confidence, a weak box or face
        (pipeline.DETECTION_SURE, FACE_SURE), a colour the joint decision moved, and a box
        kept beside a dropped second one."""
        return replace(self, disabled_doubts=_switchable())

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ReadSettings:
        """The settings the environment asks for (unset variables keep the defaults).

        Raises ValueError, naming the variable, for a value that is not understood.
        """
        env = os.environ if environ is None else environ
        kw: dict[str, object] = {}
        if env.get("COMPANION_MODELS"):
            kw["models_dir"] = Path(env["COMPANION_MODELS"])
        if env.get("COMPANION_READER_TURNS"):
            kw["reader_turns"] = _number(env, "COMPANION_READER_TURNS", int)
        if env.get("COMPANION_READER_SURE"):
            kw["reader_sure"] = _number(env, "COMPANION_READER_SURE", float)
        if env.get("COMPANION_READER_SURE_ONE"):
            kw["reader_sure_one"] = _number(env, "COMPANION_READER_SURE_ONE", float)
        if env.get("COMPANION_READER_CASCADE"):
            kw["reader_cascade"] = _number(env, "COMPANION_READER_CASCADE", float)
        if env.get("COMPANION_DETECTOR_VIEWS"):
            kw["detector_views"] = _number(env, "COMPANION_DETECTOR_VIEWS", int)
        if env.get("COMPANION_MIRROR_BAND"):
            kw["mirror_band"] = _band(env, "COMPANION_MIRROR_BAND")
        if env.get("COMPANION_ZOOM"):
            kw["zoom_small_faces"] = env["COMPANION_ZOOM"].strip() != "0"
        if env.get("COMPANION_ZOOM_WORK"):
            kw["zoom_within_work"] = env["COMPANION_ZOOM_WORK"].strip() != "0"
        if env.get("COMPANION_ZOOMED_VIEWS"):
            kw["zoomed_views"] = _number(env, "COMPANION_ZOOMED_VIEWS", int) or None
        if env.get("COMPANION_BALANCE_LIGHT"):
            kw["balance_light"] = env["COMPANION_BALANCE_LIGHT"].strip() != "0"
        if env.get("COMPANION_JOINT_COLOUR"):
            kw["joint_colour"] = env["COMPANION_JOINT_COLOUR"].strip() != "0"
        if env.get("COMPANION_USUAL_LIGHT_JOINT"):
            kw["usual_light_joint"] = env["COMPANION_USUAL_LIGHT_JOINT"].strip() != "0"
        if env.get("COMPANION_LIGHT_COLOUR"):
            kw["light_colour_head"] = env["COMPANION_LIGHT_COLOUR"].strip() != "0"
        if env.get("COMPANION_ONE_PER_CUBE"):
            kw["one_per_cube"] = env["COMPANION_ONE_PER_CUBE"].strip() != "0"
        if env.get("COMPANION_MISSED_TOP_BANDS"):
            kw["missed_top_bands"] = _bands(env, "COMPANION_MISSED_TOP_BANDS")
        if env.get("COMPANION_DARK_FACE"):
            text = env["COMPANION_DARK_FACE"].strip()
            kw["dark_face_threshold"] = None if text.lower() == "none" else _number(env, "COMPANION_DARK_FACE", float)
        if env.get("COMPANION_FAINT_FACE"):
            text = env["COMPANION_FAINT_FACE"].strip()
            kw["faint_face_threshold"] = None if text.lower() == "none" else _number(env, "COMPANION_FAINT_FACE", float)
        if env.get("COMPANION_FAINT_HEAT"):
            kw["faint_heat"] = _number(env, "COMPANION_FAINT_HEAT", float)
        try:
            return cls(**kw)  # type: ignore[arg-type]
        except ValueError as exc:
            raise ValueError(f"The COMPANION_* environment is not usable: {exc}") from None


def _switchable() -> frozenset[str]:
    from companion.vision.doubts import SWITCHABLE  # doubts.py imports what imports this module

    return SWITCHABLE


def _number(env: Mapping[str, str], name: str, kind: type[int] | type[float]) -> int | float:
    text = env[name].strip()
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise ValueError(f"{name} must be {what}, not {text!r}.") from None


def _bands(env: Mapping[str, str], name: str) -> tuple[tuple[float, float], ...]:
    """Bands "low,high;low,high;...", one per stage; "all": none."""
    text = env[name].strip()
    if text.lower() == "all":
        return ()
    return tuple(_parse_band(part, name) for part in text.split(";"))


def _band(env: Mapping[str, str], name: str) -> tuple[float, float] | None:
    text = env[name].strip()
    return None if text.lower() == "all" else _parse_band(text, name)


def _parse_band(text: str, name: str) -> tuple[float, float]:
    text = text.strip()
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"{name} must be two numbers, low,high (as 0.3,0.7), not {text!r}.") from None
    return (low, high)
